//! What the feed shows of a clock is what the clock showed (6.10.1): every clocked real game
//! (`../shared/data/real/pgn-clocks/`) replayed through the hub's core as a hall configured
//! with the game's real time control sees it, then the broadcast feed's PGN read back and
//! compared with the source PGN, not with the hub's own record.
//!
//! After every move the feed's `[%clk]` must equal the source's `[%clk]`, whatever the hub's
//! model of the clock expected: the sources' own oddities (a period's time shown a move
//! late, a clock an arbiter corrected) are shown as the clock showed them, and counted per
//! file. The feed's `[%emt]` is how long the mover's clock ran, by the readings; where the
//! source measured `%emt` (the World Cup files) the replay's presses follow it
//! (`ThinkTimes::Broadcast`), so the feed gives it back. `clock_ms` of the board's detail (`GET /api/boards/{n}`) is the same time.
//! Run with `--nocapture` for the figures per file (the table in `docs/laws-and-clocks.md`).

use crate::support;

use std::collections::BTreeMap;

use board_node::pgn;
use board_node::replay;
use hub::core::hub::HubConfig;
use hub::core::time::HubMs;
use protocol::time_control::TimeControl;
use protocol::BoardNo;
use support::hub::TestHub;

#[derive(Default, Debug)]
struct Tally {
    games: usize,
    /// Games whose replay read its own `TimeControl` tag (in PGN syntax or in words).
    own_tag: usize,
    moves: usize,
    /// Moves the source recorded a `%clk` for, and those the feed showed alike.
    with_clk: usize,
    clk_equal: usize,
    /// Moves without a `%clk` in the source (the replay's clock reports a time of its own
    /// there, which the feed shows).
    without_clk: usize,
    with_emt: usize,
    emt_equal: usize,
    /// Moves where the clock showed what the model did not expect, by the hub's verdict.
    oddities: BTreeMap<String, usize>,
    /// Games the Laws ended before the source's last move, by article.
    ended_early: BTreeMap<String, usize>,
    /// What the hub raised (6.10.2), by kind.
    deviations: BTreeMap<String, usize>,
}

#[test]
fn the_feed_shows_every_real_clock_as_it_showed_6_10_1() {
    let mut failures = Vec::new();
    for (file, control) in support::clocked::FILES {
        let mut tally = Tally::default();
        let mut examples = Vec::new();
        for (game_no, game, tc) in support::clocked::games(file, *control) {
            tally.games += 1;
            // The replay reads the game's own tag; only where the tag is wrong (the World
            // Cup's) is it told the real control, as a technician would.
            let own = game
                .tag("TimeControl")
                .and_then(|t| TimeControl::parse_any(t).ok());
            let told = (own.as_ref() != Some(&tc)).then_some(&tc);
            tally.own_tag += usize::from(told.is_none());

            let board = BoardNo(1);
            let mut hub = TestHub::new(HubConfig {
                event: "t".into(),
                time_control: Some(tc.clone()),
                ..HubConfig::default()
            });
            // Think times as the broadcast measured them, so the feed's `%emt` can be held to
            // the source's.
            let script = replay::script_with(&game, told, replay::ThinkTimes::Broadcast);
            let end = HubMs(script.last().map_or(0, |t| t.game_ms));
            support::events::feed(&mut hub, board, script);
            let feed = hub::view::feed::games(
                &hub::view::feed::FeedSource::of(hub.hub_mut()),
                end,
                hub::core::ids::RoundNo::FIRST,
                Some(board),
                &mut hub::view::feed::FeedCache::default(),
            )
            .expect("round 1 is in play");
            let shown = pgn::read_game(feed[0].pgn.as_bytes(), 1).expect("the feed reads");
            let state = hub.hall().board(board).unwrap();

            // The feed has the source's moves, up to where the Laws ended the game: moves
            // played on after a dead position (5.2.2) or a fivefold repetition (9.6.1)
            // are not part of the game.
            let moves = |plies: &[pgn::Ply]| plies.iter().map(|p| p.m).collect::<Vec<_>>();
            let (feed_moves, source_moves) = (moves(&shown.plies), moves(&game.plies));
            let ended_by = state.game().article();
            let prefix = source_moves.starts_with(&feed_moves);
            if feed_moves.len() < source_moves.len() && prefix && ended_by.is_some() {
                let article = ended_by.unwrap_or_default().to_owned();
                *tally.ended_early.entry(article).or_default() += 1;
            } else if feed_moves != source_moves {
                failures.push(format!(
                    "{file} game {game_no}: the feed has {} moves, the source {}",
                    feed_moves.len(),
                    source_moves.len()
                ));
                continue;
            }
            let detail = state.detail(end);
            for (i, (feed_ply, source)) in shown.plies.iter().zip(&game.plies).enumerate() {
                tally.moves += 1;
                let api = detail.clock_ms[i].map(|ms| ms / 1000 * 1000);
                if feed_ply.clk_ms != api {
                    failures.push(format!(
                        "{file} game {game_no} ply {}: feed {:?}, clock_ms {api:?}",
                        i + 1,
                        feed_ply.clk_ms
                    ));
                }
                match source.clk_ms {
                    Some(clk) => {
                        tally.with_clk += 1;
                        if feed_ply.clk_ms == Some(clk) {
                            tally.clk_equal += 1;
                        } else if examples.len() < 5 {
                            examples.push(format!(
                                "game {game_no} ply {}: source {clk}, feed {:?}",
                                i + 1,
                                feed_ply.clk_ms
                            ));
                        }
                    }
                    None => tally.without_clk += 1,
                }
                if let Some(emt) = source.emt_ms {
                    tally.with_emt += 1;
                    tally.emt_equal += usize::from(feed_ply.emt_ms == Some(emt));
                }
            }
            for check in state.clock().checks() {
                if check.verdict != hub::core::clock::Verdict::Agrees {
                    *tally
                        .oddities
                        .entry(support::serde_name(&check.verdict))
                        .or_default() += 1;
                }
            }
            for deviation in state.clock().deviations() {
                *tally
                    .deviations
                    .entry(support::serde_name(&deviation.kind))
                    .or_default() += 1;
            }
        }
        let share = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        println!(
            "{file}: {} games ({} read their own tag), {} moves; %clk in the source {}, \
             shown alike {} ({:.2}%); no %clk in the source {}; %emt alike {} of {} \
             ({:.2}%); ended by the Laws before the source's end {:?}; the clocks' oddities {:?}; \
             deviations raised {:?}",
            tally.games,
            tally.own_tag,
            tally.moves,
            tally.with_clk,
            tally.clk_equal,
            share(tally.clk_equal, tally.with_clk),
            tally.without_clk,
            tally.emt_equal,
            tally.with_emt,
            share(tally.emt_equal, tally.with_emt),
            tally.ended_early,
            tally.oddities,
            tally.deviations,
        );
        assert!(tally.games > 0, "{file}: no clocked games");
        if tally.clk_equal != tally.with_clk {
            failures.push(format!(
                "{file}: {} of {} clocks shown otherwise than the source: {examples:?}",
                tally.with_clk - tally.clk_equal,
                tally.with_clk
            ));
        }
        if tally.emt_equal != tally.with_emt {
            failures.push(format!(
                "{file}: %emt alike on {} of {}",
                tally.emt_equal, tally.with_emt
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
