//! The cost of the clocks:
//!
//! 1. The clock update (`BoardClock::report`): every game of the World Cup rapid (15+10) as
//!    its clock reports it, a press per move and, between presses, a reading each second
//!    while a clock runs (as a DGT clock in update mode does). Baseline in the same run:
//!    decoding the same reports off the wire (postcard), the least a hub must do per report.
//! 2. The hall-wide time-trouble ranking (`Hall::time_trouble`, what `GET /api/time-trouble`
//!    serves) over 10,000 boards with running clocks. Baseline: sorting 10,000 keys.
//!
//! `cargo bench -p zeitnot-hub --bench clocks`

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use board_node::source::Reading;
use board_node::{pgn, replay};
use hub::core::clock::BoardClock;
use hub::core::hall::Hall;
use hub::core::record::Record;
use hub::core::time::HubMs;
use protocol::seal::{self, NodeKey};
use protocol::time_control::TimeControl;
use protocol::{codec, BoardNo, ClockReport, NodeMs, Seq, Uplink, UplinkBody};

const BOARDS: u16 = 10_000;

/// One clock report and the side whose move its press completed.
type Report = (NodeMs, ClockReport, Option<shakmaty::Color>);

fn main() {
    let tc: TimeControl = "900+10".parse().unwrap();
    let games = clock_streams(&tc, true);
    let presses_only = clock_streams(&tc, false);
    clock_update(&tc, &games, &presses_only);
    ranking(&tc);
}

/// Each game's clock reports; with `ticks`, also one each second while a clock runs.
fn clock_streams(tc: &TimeControl, ticks: bool) -> Vec<Vec<Report>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/real/pgn-clocks/fide_world_cup_2025_rapid_15+10.pgn");
    let text = std::fs::read(path).expect("shared/data/real");
    pgn::read_games(&text)
        .expect("games")
        .iter()
        .map(|game| {
            let mut stream: Vec<Report> = Vec::new();
            for timed in replay::script(game, Some(tc)) {
                let Reading::Clock(report) = timed.reading else {
                    continue;
                };
                if let (true, Some(&(last_at, last, _))) = (ticks, stream.last()) {
                    stream.extend(ticks_between(last_at, &last, timed.game_ms));
                }
                let completed = report.pressed_by.map(|side| match side {
                    protocol::Color::White => shakmaty::Color::White,
                    protocol::Color::Black => shakmaty::Color::Black,
                });
                stream.push((NodeMs(timed.game_ms), report, completed));
            }
            stream
        })
        .collect()
}

/// A running clock's readings each whole second after `last` until `until`.
fn ticks_between(at: NodeMs, last: &ClockReport, until: u64) -> Vec<Report> {
    let Some(running) = last.running else {
        return Vec::new();
    };
    (1..)
        .map(|s| at.0 + s * 1000)
        .take_while(|t| *t < until)
        .map(|t| {
            let mut tick = *last;
            tick.pressed_by = None;
            let elapsed = (t - at.0) as u32;
            match running {
                protocol::Color::White => tick.white_ms = tick.white_ms.saturating_sub(elapsed),
                protocol::Color::Black => tick.black_ms = tick.black_ms.saturating_sub(elapsed),
            }
            (NodeMs(t), tick, None)
        })
        .collect()
}

fn best_of<F: FnMut()>(runs: usize, mut f: F) -> f64 {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn clock_update(tc: &TimeControl, games: &[Vec<Report>], presses_only: &[Vec<Report>]) {
    let run = |streams: &[Vec<Report>]| {
        for stream in streams {
            let mut clock = BoardClock::new(Some(tc.clone()));
            for (at, report, completed) in stream {
                black_box(clock.report(*at, report, *completed, true));
            }
        }
    };
    let reports: usize = games.iter().map(Vec::len).sum();
    let presses: usize = presses_only.iter().map(Vec::len).sum();
    let mixed = best_of(5, || run(games));
    let pressed = best_of(5, || run(presses_only));

    let wire: Vec<Vec<u8>> = games
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, (at, report, _))| {
            let event = Uplink::new(
                BoardNo(1),
                Seq(i as u64 + 1),
                *at,
                UplinkBody::Clock(*report),
            );
            codec::encode_uplink(&event)
        })
        .collect();
    let decode = best_of(5, || {
        for bytes in &wire {
            black_box(codec::decode_uplink(bytes).expect("decodes"));
        }
    });
    // The seal on the same events: the node's tag, the hub's check (issue 15).
    let key = NodeKey::from_bytes([0x5a; 32]);
    let frames: Vec<Vec<u8>> = wire
        .iter()
        .map(|bytes| seal::seal_uplink_bytes(Some(&key), "bench", seal::Boot(1), bytes.clone()))
        .collect();
    let sealing = best_of(5, || {
        for bytes in &wire {
            black_box(seal::seal_uplink_bytes(
                Some(&key),
                "bench",
                seal::Boot(1),
                bytes.clone(),
            ));
        }
    });
    let opening = best_of(5, || {
        for frame in &frames {
            let sealed = seal::open_uplink(frame).expect("opens");
            assert!(black_box(sealed.verify(&key, "bench")));
        }
    });

    let per = |seconds: f64, n: usize| seconds * 1e9 / n as f64;
    println!(
        "clock update: {} games of 15+10, {reports} clock reports ({presses} presses), best of 5",
        games.len()
    );
    println!(
        "  {:>8.0} ns per clock report (readings each second and presses)",
        per(mixed, reports)
    );
    println!(
        "  {:>8.0} ns per press (reconciliation with the time control)",
        per(pressed, presses)
    );
    println!(
        "  {:>8.0} ns per report to decode off the wire (baseline); the clock costs {:.1}x that",
        per(decode, reports),
        mixed / decode
    );
    println!(
        "  {:>8.0} ns per report to seal at the node (HMAC-SHA-256 tag, copy of the bytes)",
        per(sealing, reports)
    );
    println!(
        "  {:>8.0} ns per report to open and verify at the hub; the seal adds {:.0} ns ({:.1}x the decode)",
        per(opening, reports),
        per(opening - decode, reports),
        opening / decode
    );
}

fn ranking(tc: &TimeControl) {
    // 10,000 boards in play, every clock running, times spread over the whole control; a
    // few flags already down.
    let mut hall = Hall::default().with_time_control(Some(tc.clone()));
    for n in 1..=BOARDS {
        let spread = u32::from(n).wrapping_mul(2_654_435_761) % 900_000;
        let report = ClockReport {
            white_ms: spread,
            black_ms: 900_000 - spread,
            running: Some(if n % 2 == 0 {
                protocol::Color::White
            } else {
                protocol::Color::Black
            }),
            white_flag: n % 997 == 0,
            black_flag: false,
            pressed_by: None,
        };
        let event = Uplink::new(BoardNo(n), Seq(1), NodeMs(0), UplinkBody::Clock(report));
        let at = HubMs(0);
        let _ = hall.admit(at, &event);
        let _ = hall.apply(&Record { at, event });
    }
    let now = HubMs(5_000);
    let ranked = hall.time_trouble(now);
    assert_eq!(ranked.len(), usize::from(BOARDS));
    let runs = 50;
    let ranking = best_of(runs, || {
        black_box(hall.time_trouble(now));
    });
    let keys: Vec<(Option<u64>, BoardNo)> = ranked
        .iter()
        .rev()
        .map(|u| (u.time_to_flag_ms, u.board))
        .collect();
    let sort = best_of(runs, || {
        let mut k = keys.clone();
        k.sort_unstable();
        black_box(k);
    });
    println!("time-trouble ranking: {BOARDS} boards with running clocks, best of {runs}");
    println!(
        "  {:>8.0} µs per ranking of the hall ({:.0} ns per board)",
        ranking * 1e6,
        ranking * 1e9 / f64::from(BOARDS)
    );
    println!(
        "  {:>8.0} µs to sort 10,000 keys (baseline); the ranking costs {:.1}x that",
        sort * 1e6,
        ranking / sort
    );
}
