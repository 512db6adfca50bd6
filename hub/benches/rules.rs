//! The cost of the rules: every real game of `../shared/data/real/` fed as board events
//! (placements and presses, as a replaying node reports them) through `Hall::admit` and
//! `Hall::apply`, in memory. Prints ns per board event and per completed move.
//!
//! `cargo bench -p zeitnot-hub --bench rules`

use std::path::Path;
use std::time::Instant;

use board_node::{pgn, replay};
use hub::core::hall::Hall;
use hub::core::record::Record;
use hub::core::time::HubMs;
use protocol::{BoardNo, NodeMs, Seq, Uplink};

fn main() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/real");
    let mut events: Vec<Vec<Uplink>> = Vec::new();
    let mut plies = 0;
    for dir in ["pgn-clocks", "pgn-endings"] {
        for entry in std::fs::read_dir(real.join(dir)).expect("shared/data/real") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "pgn") {
                continue;
            }
            let text = std::fs::read(&path).expect("PGN");
            for game in pgn::read_games(&text).expect("games") {
                plies += game.plies.len();
                // One board per game: 3,397 boards, each playing its game from the start.
                let board = BoardNo(events.len() as u16 + 1);
                events.push(
                    replay::script(&game, None)
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let body = t.reading.body();
                            Uplink::new(board, Seq(i as u64 + 1), NodeMs(t.game_ms), body)
                        })
                        .collect(),
                );
            }
        }
    }
    let total: usize = events.iter().map(Vec::len).sum();
    let games = events.len();

    let mut best = f64::MAX;
    for _ in 0..3 {
        let mut hall = Hall::default();
        let started = Instant::now();
        for game in &events {
            for event in game {
                let at = HubMs(event.node_ms.0);
                let _ = hall.admit(at, event);
                let _ = hall.apply(&Record {
                    at,
                    event: event.clone(),
                });
            }
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!(
        "rules: {games} real games, {plies} completed moves, {total} board events (best of 3)"
    );
    println!("  {:>8.0} ns per board event", best * 1e9 / total as f64);
    println!(
        "  {:>8.0} ns per completed move (all its events)",
        best * 1e9 / plies as f64
    );
    println!(
        "  {:>8.0} board events per second on one core",
        total as f64 / best
    );
}
