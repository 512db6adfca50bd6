//! The cost of the public feed: 1,000 boards, each with a whole real rapid game played
//! through the hub's core, rendered as `GET /broadcast/round/1/games.pgn` renders
//! them (tags, every move with `%clk` and `%emt`), and the supervision page's tick (every
//! board's tile rebuilt and compared with what the pages were sent, for arbiters and for
//! spectators), against serializing the same boards' summaries as JSON (`GET /api/boards`)
//! in the same run.
//!
//! `cargo bench -p zeitnot-hub --bench broadcast`

mod common;

use std::time::Instant;

use hub::core::ids::RoundNo;
use hub::core::pairings::Rounds;
use hub::core::relay::public::BroadcastSettings;
use hub::view::feed::{self, FeedCache};
use hub::view::tiles::{self, Audience, SentTiles};

const BOARDS: u16 = 1_000;

fn main() {
    let (hub, now) = common::played_hub(BOARDS);
    let (hall, relay, archive) = (hub.hall(), hub.relay(), hub.archive());
    let settings = BroadcastSettings::default();
    let rounds = Rounds::default();
    let runs = 20;
    let source = feed::FeedSource {
        hall,
        relay,
        archive,
        rounds: &rounds,
        settings: &settings,
        event_id: "bench",
    };
    let poll = |cache: &mut FeedCache| {
        let feed = feed::games(&source, now, RoundNo::FIRST, None, cache).unwrap();
        std::hint::black_box(feed::fingerprint(&feed));
        feed.iter().map(|g| g.pgn.len()).sum::<usize>()
    };
    // Cold: every board rendered (a fresh cache each time).
    let started = Instant::now();
    let mut bytes = 0;
    for _ in 0..runs {
        bytes = poll(&mut FeedCache::default());
    }
    let feed_ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
    // Warm: nothing changed since the last poll.
    let mut cache = FeedCache::default();
    poll(&mut cache);
    let started = Instant::now();
    for _ in 0..runs {
        poll(&mut cache);
    }
    let warm_ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
    let started = Instant::now();
    let mut json = 0;
    for _ in 0..runs {
        json = serde_json::to_vec(&hall.summaries(now)).unwrap().len();
    }
    let summary_ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(runs);
    // The page's tick: every tile rebuilt, compared with the last sent (nothing changed).
    let mut tick_ms = Vec::new();
    for audience in [Audience::Arbiters, Audience::Spectators] {
        let badges = Default::default();
        let tiles = || tiles::tiles(audience, hall, relay, &rounds, &badges, &settings, now);
        let mut sent = SentTiles::default();
        let first = sent.changed(tiles()).len();
        assert_eq!(first, usize::from(BOARDS));
        let started = Instant::now();
        for _ in 0..runs {
            assert!(sent.changed(tiles()).is_empty());
        }
        tick_ms.push(started.elapsed().as_secs_f64() * 1e3 / f64::from(runs));
    }
    let moves: usize = hall
        .boards()
        .iter()
        .filter_map(|b| hall.board(*b))
        .map(|s| s.game().moves().len())
        .sum();
    println!(
        "broadcast: {BOARDS} boards, {moves} moves, games.pgn {:.1} MB: rendered cold {feed_ms:.1} ms ({:.1} µs a board), unchanged (cached) {warm_ms:.2} ms; /api/boards JSON ({:.0} KB) {summary_ms:.2} ms in the same run (cold {:.0}x, cached {:.1}x)",
        bytes as f64 / 1e6,
        feed_ms * 1e3 / f64::from(BOARDS),
        json as f64 / 1e3,
        feed_ms / summary_ms,
        warm_ms / summary_ms
    );
    println!(
        "live tiles: the page's tick over {BOARDS} boards (rebuild and compare, nothing changed): arbiters {:.2} ms, spectators {:.2} ms ({:.1}x and {:.1}x the /api/boards JSON); at 4 ticks a second {:.1}% of one core",
        tick_ms[0],
        tick_ms[1],
        tick_ms[0] / summary_ms,
        tick_ms[1] / summary_ms,
        (tick_ms[0] + tick_ms[1]) * 4.0 / 10.0
    );
}
