//! A node leaves out the clock readings the hub can compute (`board_node::clock_news`): this
//! proves that nothing is lost by it. Every real game with clocks
//! (`../shared/data/real/pgn-clocks/`) and every recorded DGT stream (`dgt/dgtdriver/`) is
//! read as a node reads a DGT clock (the display each second while a clock runs, its change
//! at the clock's own fraction of a second after the press, stamped when it arrives), and
//! played twice through the hub's core: with every reading, and with what the node sends.
//! The two hubs are looked at the same moments, and must give:
//! - the same broadcast feed, its `[%clk]` and `[%emt]` (6.10.1) and result;
//! - the same alerts, raised and cleared in the same order, each within the display's
//!   resolution of the other's time (time trouble, 8.4, and a flag's forecast are counted
//!   down from the last reading either hub has);
//! - the same flag falls, which fell first, and what the hub proposes for them (6.1, 6.9);
//! - `GET /api/boards/{n}`'s `clock_ms` alike, and its `clock` alike but for the running
//!   side's time, which may differ by the display's resolution and the line's delay.
//!
//! The figures (how many readings a node sends, per file) are printed with `--nocapture`.

use crate::support;

use board_node::clock_news::{self, RESOLUTION_MS};
use board_node::dgt::recording;
use board_node::replay;
use board_node::source::{Reading, Timed};
use hub::core::alerts::AlertChange;
use hub::core::hub::HubConfig;
use hub::core::ids::RoundNo;
use hub::core::time::HubMs;
use hub::view::feed::{self, FeedCache, FeedSource};
use protocol::time_control::TimeControl;
use protocol::{BoardNo, ClockReport, NodeMs, Seq, Uplink};
use support::hub::TestHub;

/// `board-node`'s heartbeat after silence.
const HEARTBEAT_MS: u64 = 5_000;
/// The most a reading waits on the serial line and in the node before it is stamped.
const LINE_DELAY_MS: u64 = 80;
/// How far the two hubs' view of a running clock may part: the display's resolution and
/// the line's delay of the two readings each counts down from.
const CLOCK_TOLERANCE_MS: u64 = RESOLUTION_MS + 2 * LINE_DELAY_MS;

const BOARD: BoardNo = BoardNo(1);

/// A deterministic spread of numbers in `0..n` (a node's line delay, a clock's fraction of
/// a second), from `seed`.
fn spread(seed: u64, n: u64) -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (x ^ (x >> 32)) % n
}

/// The readings a node makes of `script` (a replay's placements and presses): while a
/// clock runs its display changes every second, the first change the clock's fraction of a
/// second after the press; each reading is stamped when it arrives, up to
/// [`LINE_DELAY_MS`] late.
fn as_a_node_reads(script: &[Timed], seed: u64) -> Vec<Timed> {
    let mut out: Vec<Timed> = Vec::with_capacity(script.len() * 30);
    let mut n = seed << 20;
    // Stamped on arrival, in the order read.
    let stamp = |game_ms: u64, n: u64, out: &Vec<Timed>| {
        let at = game_ms + spread(n, LINE_DELAY_MS);
        at.max(out.last().map_or(0, |t| t.game_ms))
    };
    // The clock as last reported, when, and the display's next change (ms after it).
    let mut last: Option<(u64, ClockReport, u64)> = None;
    for timed in script {
        if let Some((since, report, next)) = &mut last {
            if let Some(side) = report.running {
                while *since + *next < timed.game_ms {
                    let mut shown = *report;
                    shown.pressed_by = None;
                    // The display a whole second under the press's at its first change.
                    let lost = u32::try_from(*next / 1_000 * 1_000 + 1_000).unwrap_or(u32::MAX);
                    match side {
                        protocol::Color::White => {
                            shown.white_ms = shown.white_ms.saturating_sub(lost)
                        }
                        protocol::Color::Black => {
                            shown.black_ms = shown.black_ms.saturating_sub(lost)
                        }
                    }
                    n += 1;
                    let at = stamp(*since + *next, n, &out);
                    out.push(Timed::at(at, Reading::Clock(shown)));
                    *next += 1_000;
                    if shown.white_ms == 0 || shown.black_ms == 0 {
                        *next = u64::MAX / 2; // the display stays at zero
                    }
                }
            }
        }
        if let Reading::Clock(report) = &timed.reading {
            n += 1;
            last = Some((timed.game_ms, *report, spread(n, 1_000)));
        }
        n += 1;
        let at = stamp(timed.game_ms, n, &out);
        out.push(Timed::at(at, timed.reading.clone()));
    }
    out
}

/// One of the two hubs and what it said.
struct Played {
    hub: TestHub,
    changes: Vec<(u64, AlertChange)>,
    sent: usize,
    next: usize,
    events: Vec<Timed>,
}

impl Played {
    fn new(tc: &TimeControl, events: Vec<Timed>) -> Played {
        Played {
            hub: TestHub::new(HubConfig {
                event: "t".into(),
                time_control: Some(tc.clone()),
                ..HubConfig::default()
            }),
            changes: Vec::new(),
            sent: events.len(),
            next: 0,
            events,
        }
    }

    /// The hub at `now`: the events up to it, or a look at its timers.
    fn until(&mut self, now: u64) {
        while let Some(timed) = self.events.get(self.next).filter(|t| t.game_ms <= now) {
            let event = Uplink::new(
                BOARD,
                Seq(self.next as u64 + 1),
                NodeMs(timed.game_ms),
                timed.reading.body(),
            );
            let at = timed.game_ms;
            self.next += 1;
            let changes = self.hub.uplink(HubMs(at), event);
            self.changes.extend(changes.into_iter().map(|c| (at, c)));
        }
        // The shell's timers look at the hall whether events came or not.
        let changes = self.hub.tick(HubMs(now));
        self.changes.extend(changes.into_iter().map(|c| (now, c)));
    }

    fn next_event(&self) -> Option<u64> {
        self.events.get(self.next).map(|t| t.game_ms)
    }

    /// The hub's next deadline, while it has events to come.
    fn deadline(&self) -> Option<u64> {
        self.hub
            .hub()
            .poll_timeout()
            .map(|t| t.0)
            .filter(|_| !self.done())
    }

    fn done(&self) -> bool {
        self.next >= self.events.len()
    }

    fn clock(&self, now: u64) -> serde_json::Value {
        let state = self.hub.hall().board(BOARD).expect("the board");
        serde_json::to_value(state.clock_view(HubMs(now))).expect("JSON")
    }

    fn detail(&self, now: u64) -> serde_json::Value {
        let state = self.hub.hall().board(BOARD).expect("the board");
        serde_json::to_value(state.detail(HubMs(now))).expect("JSON")
    }

    fn feed(&mut self, now: u64) -> String {
        feed::games(
            &FeedSource::of(self.hub.hub_mut()),
            HubMs(now),
            RoundNo::FIRST,
            Some(BOARD),
            &mut FeedCache::default(),
        )
        .expect("round 1 is in play")
        .remove(0)
        .pgn
    }
}

/// Where the hub's clock views with and without the left-out readings part (empty: alike
/// within [`CLOCK_TOLERANCE_MS`] for the running side's time).
fn clock_differences(every: &serde_json::Value, sent: &serde_json::Value) -> Vec<String> {
    let (Some(every), Some(sent)) = (every.as_object(), sent.as_object()) else {
        return (every != sent)
            .then(|| format!("{every} / {sent}"))
            .into_iter()
            .collect();
    };
    let near = |key: &str| {
        let (a, b) = (every[key].as_u64(), sent[key].as_u64());
        match (a, b) {
            (Some(a), Some(b)) => a.abs_diff(b) <= CLOCK_TOLERANCE_MS,
            _ => a == b,
        }
    };
    let threshold = |key: &str| {
        // Time trouble begins (8.4), a quickplay finish (Guidelines III.4) and a flag is
        // probable within the tolerance of the running side's time reaching 5 minutes, 2
        // minutes or zero.
        let side = every["running"].as_str().map(|s| format!("{s}_ms"));
        let ms = side
            .and_then(|s| every[s.as_str()].as_u64())
            .unwrap_or(u64::MAX);
        match key {
            "time_trouble" => ms.abs_diff(5 * 60 * 1_000) <= CLOCK_TOLERANCE_MS,
            "quickplay_finish" => ms.abs_diff(2 * 60 * 1_000) <= CLOCK_TOLERANCE_MS,
            "flag_probable" => ms <= CLOCK_TOLERANCE_MS,
            _ => false,
        }
    };
    let mut differences = Vec::new();
    for (key, value) in every {
        let alike = match key.as_str() {
            "last_reading_at" => true,
            "white_ms" | "black_ms" | "time_to_flag_ms" => near(key),
            "time_trouble" | "quickplay_finish" | "flag_probable" => {
                value == &sent[key] || threshold(key)
            }
            _ => value == &sent[key],
        };
        if !alike {
            differences.push(format!("{key}: {value} / {}", sent[key]));
        }
    }
    differences
}

/// What an alert change is, but for when: its change, kind, board, article and state (an
/// incident of time trouble is known by the moment it began).
fn what(change: &AlertChange) -> String {
    let alert = &change.alert;
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        change.change, alert.kind, alert.board, alert.article, alert.state
    )
}

/// Whether `changes[i]` raises an alert that expires within [`CLOCK_TOLERANCE_MS`] (a clock
/// counted down past a limit just before the press that took it back over it): one hub may
/// raise it where the other, counting from another reading, does not.
fn blip(changes: &[(u64, AlertChange)], i: usize) -> bool {
    use hub::core::alerts::Change;
    let (t, raised) = &changes[i];
    raised.change == Change::Raised
        && changes[i + 1..]
            .iter()
            .find(|(_, c)| c.alert.id == raised.alert.id)
            .is_some_and(|(te, c)| c.change == Change::Expired && te - t <= CLOCK_TOLERANCE_MS)
}

/// Walks the two hubs' alert changes side by side: each must be the other's, within
/// [`CLOCK_TOLERANCE_MS`], but for a [`blip`] in one of them. The blips passed over, or
/// where the two part.
fn align(a: &[(u64, AlertChange)], b: &[(u64, AlertChange)]) -> Result<usize, String> {
    let (mut i, mut j, mut blips) = (0, 0, 0);
    let mut passed = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    loop {
        while a
            .get(i)
            .is_some_and(|(_, c)| passed.0.contains(&c.alert.id))
        {
            i += 1;
        }
        while b
            .get(j)
            .is_some_and(|(_, c)| passed.1.contains(&c.alert.id))
        {
            j += 1;
        }
        match (a.get(i), b.get(j)) {
            (None, None) => return Ok(blips),
            (Some((ta, x)), Some((tb, y)))
                if what(x) == what(y) && ta.abs_diff(*tb) <= CLOCK_TOLERANCE_MS =>
            {
                i += 1;
                j += 1;
            }
            (Some((_, x)), _) if blip(a, i) => {
                passed.0.insert(x.alert.id);
                blips += 1;
            }
            (_, Some((_, y))) if blip(b, j) => {
                passed.1.insert(y.alert.id);
                blips += 1;
            }
            (x, y) => {
                let show = |c: Option<&(u64, AlertChange)>| {
                    c.map(|(t, c)| format!("{} at {t} ms", what(c)))
                };
                return Err(format!("the alerts part: {:?} / {:?}", show(x), show(y)));
            }
        }
    }
}

#[derive(Default)]
struct Tally {
    /// Alerts raised and expired within the tolerance, in either hub.
    blips: usize,
    games: usize,
    readings: usize,
    sent: usize,
    alerts: usize,
    flag_falls: usize,
}

/// Plays `readings` with every reading and with those a node sends; what differs.
fn compare(readings: &[Timed], tc: &TimeControl, tally: &mut Tally) -> Vec<String> {
    let every = clock_news::published(readings, HEARTBEAT_MS, false);
    let sent = clock_news::published(readings, HEARTBEAT_MS, true);
    let (mut a, mut b) = (Played::new(tc, every), Played::new(tc, sent));
    tally.games += 1;
    tally.readings += a.sent;
    tally.sent += b.sent;
    let mut failures = Vec::new();
    // As the shell runs it: each hub at its events and at its own deadlines; both are looked
    // at then.
    let mut end = 0;
    loop {
        let next = [a.next_event(), b.next_event(), a.deadline(), b.deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(now) = next.filter(|_| !(a.done() && b.done())) else {
            break;
        };
        end = end.max(now);
        a.until(now);
        b.until(now);
        let differences = clock_differences(&a.clock(now), &b.clock(now));
        if !differences.is_empty() && failures.len() < 3 {
            failures.push(format!("at {now} ms the clock: {differences:?}"));
        }
    }
    let (da, db) = (a.detail(end), b.detail(end));
    for key in ["clock_ms", "moves", "summary"] {
        let (x, y) = (&da[key], &db[key]);
        let alike = match key {
            // The number of events differs, by design.
            "summary" => ["status", "result", "article", "fen", "ply"]
                .iter()
                .all(|k| x[k] == y[k]),
            _ => x == y,
        };
        if !alike {
            failures.push(format!("{key}: {x} / {y}"));
        }
    }
    for key in ["flag", "flag_fall", "deviations", "paused_ms"] {
        if da["clock"][key] != db["clock"][key] {
            failures.push(format!(
                "clock {key} (6.1, 6.9, 6.10.2): {} / {}",
                da["clock"][key], db["clock"][key]
            ));
        }
    }
    tally.flag_falls += usize::from(!da["clock"]["flag"].is_null());
    let (fa, fb) = (a.feed(end), b.feed(end));
    if fa != fb {
        failures.push(format!("the feed:\n{fa}\n/\n{fb}"));
    }
    tally.alerts += a.changes.len();
    match align(&a.changes, &b.changes) {
        Ok(blips) => tally.blips += blips,
        Err(parting) => failures.push(parting),
    }
    failures
}

#[test]
fn what_a_node_leaves_out_of_every_real_clock_changes_nothing_at_the_hub() {
    let results: Vec<(String, Tally, Vec<String>)> = std::thread::scope(|scope| {
        let runs: Vec<_> = support::clocked::FILES
            .iter()
            .map(|(file, control)| {
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    let mut failures = Vec::new();
                    for (game_no, game, tc) in support::clocked::games(file, *control) {
                        let own = game
                            .tag("TimeControl")
                            .and_then(|t| TimeControl::parse_any(t).ok());
                        let told = (own.as_ref() != Some(&tc)).then_some(&tc);
                        let script =
                            replay::script_with(&game, told, replay::ThinkTimes::Broadcast);
                        let readings = as_a_node_reads(&script, game_no as u64);
                        for failure in compare(&readings, &tc, &mut tally) {
                            failures.push(format!("{file} game {game_no}: {failure}"));
                        }
                    }
                    (file.to_string(), tally, failures)
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("a file's run"))
            .collect()
    });
    let mut failures = Vec::new();
    let (mut readings, mut sent) = (0, 0);
    for (file, tally, file_failures) in results {
        println!(
            "{file}: {} games, {} readings, {} sent ({:.1}% left out), {} alert changes, {} flag falls, {} alerts raised and expired within {CLOCK_TOLERANCE_MS} ms",
            tally.games,
            tally.readings,
            tally.sent,
            100.0 * (1.0 - tally.sent as f64 / tally.readings.max(1) as f64),
            tally.alerts,
            tally.flag_falls,
            tally.blips,
        );
        assert!(tally.games > 0, "{file}: no games");
        assert!(tally.sent < tally.readings, "{file}: nothing left out");
        readings += tally.readings;
        sent += tally.sent;
        failures.extend(file_failures);
    }
    println!(
        "every real game: {readings} events with every reading, {sent} without those that tell nothing ({:.1}% left out)",
        100.0 * (1.0 - sent as f64 / readings as f64)
    );
    assert!(
        failures.is_empty(),
        "{} differences: {failures:#?}",
        failures.len()
    );
}

#[test]
fn what_a_node_leaves_out_of_the_recorded_dgt_streams_changes_nothing_at_the_hub() {
    // The recordings' controls as `dgt_streams.rs` plays them.
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for (name, control) in [("1", "180+2"), ("2", "180+2"), ("johan", "300+5")] {
        let path = support::real_data().join(format!("dgt/dgtdriver/{name}.inbytes"));
        let text = std::fs::read_to_string(&path).expect("recorded stream");
        let messages = recording::messages(&text).expect("Base64 lines");
        let readings = recording::readings(&messages, None);
        let tc: TimeControl = control.parse().expect("a time control");
        let before = tally.sent;
        failures.extend(
            compare(&readings, &tc, &mut tally)
                .into_iter()
                .map(|f| format!("{name}: {f}")),
        );
        assert!(tally.sent > before, "{name}: readings sent");
    }
    println!(
        "the recorded DGT streams: {} events with every reading, {} sent, {} flag falls",
        tally.readings, tally.sent, tally.flag_falls
    );
    assert_eq!(tally.flag_falls, 1, "johan's flag fall, in both");
    assert!(failures.is_empty(), "{failures:#?}");
}
