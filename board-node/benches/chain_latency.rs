//! How soon a piece set down on a board of a DGT chain reaches the node: the chain's master
//! and its emulated boards in simulated time (the line at 9,600 baud, a byte a ms; each
//! board answering `--turnaround-ms` after a command, DGT's header allows up to 20), every
//! board playing a real rapid game at the pace it was played. For each move, from the
//! moment its last piece is set down to the node's first reading that shows it. The
//! baseline in the same run: one board alone on the line.
//!
//! `cargo bench -p zeitnot-board-node --bench chain_latency -- [--boards 1,6,12]
//! [--turnaround-ms 5]`

use board_node::dgt::bus::emulator::simulation::simulate;
use board_node::dgt::bus::wire::Address;
use board_node::eboard::emulator::timeline::{self, Moment};
use board_node::eboard::message::Message;
use board_node::source::Reading;
use protocol::Square;

struct Args {
    boards: Vec<usize>,
    turnaround_ms: u64,
}

fn args() -> Args {
    let mut args = Args {
        boards: vec![1, 6, 12],
        turnaround_ms: 5,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--boards" => {
                if let Some(list) = it.next() {
                    args.boards = list.split(',').filter_map(|n| n.parse().ok()).collect();
                }
            }
            "--turnaround-ms" => {
                args.turnaround_ms = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.turnaround_ms)
            }
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// The 12 World Cup rapid games of the demo, as an emulated board plays them.
fn games() -> Vec<Vec<Moment>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hub/demo/world-cup-2025-rapid.pgn"
    );
    let text = std::fs::read(path).expect("the demo's games");
    (1..=12)
        .map(|g| {
            let game = board_node::pgn::read_game(&text, g).expect("a game");
            timeline::from_script(&board_node::replay::script(&game, None))
        })
        .collect()
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Each move's latency (ms): its last piece set down to the first reading showing it.
fn latencies(happened: &[(u64, Message)], readings: &[board_node::source::Timed]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut last_set_down = None;
    let mut to_move = None;
    for (at, message) in happened {
        match message {
            Message::FieldUpdate {
                field,
                piece: Some(piece),
            } => last_set_down = Some((*at, *field, *piece)),
            Message::Clock(status) => {
                let now = (status.left_to_move, status.right_to_move);
                let pressed = to_move.is_some_and(|before| before != now);
                to_move = Some(now);
                if !pressed {
                    continue;
                }
                let Some((set_at, field, piece)) = last_set_down.take() else {
                    continue;
                };
                let square = Square::from_coords(field.file(), field.rank()).expect("a square");
                if let Some(seen) = readings.iter().find(|r| {
                    r.game_ms >= set_at
                        && matches!(&r.reading, Reading::Placement(p) if p.piece_at(square) == Some(piece))
                }) {
                    out.push(seen.game_ms - set_at);
                }
            }
            _ => {}
        }
    }
    out
}

fn main() {
    let args = args();
    let games = games();
    println!(
        "a piece set down to the node's reading, DGT bus mode at 9,600 baud, boards answering {} ms after a command (simulated time, the games at their real pace)",
        args.turnaround_ms
    );
    println!("boards on the chain | moves | p50 ms | p95 ms | p99 ms | max ms | p50 / 1 board");
    let mut baseline = None;
    for &n in &args.boards {
        let chain: Vec<(Address, Vec<Moment>)> = games
            .iter()
            .cycle()
            .take(n)
            .enumerate()
            .map(|(i, moments)| {
                (
                    Address::new(1001 + i as u16).expect("an address"),
                    moments.clone(),
                )
            })
            .collect();
        let simulated = simulate(&chain, args.turnaround_ms, |_, _| {});
        let mut all: Vec<u64> = simulated
            .happened
            .iter()
            .zip(&simulated.readings)
            .flat_map(|(happened, readings)| latencies(happened, readings))
            .collect();
        all.sort_unstable();
        let p50 = percentile(&all, 0.5);
        let base = *baseline.get_or_insert(p50.max(1));
        println!(
            "{n:>19} | {:>5} | {p50:>6} | {:>6} | {:>6} | {:>6} | {:>.1}",
            all.len(),
            percentile(&all, 0.95),
            percentile(&all, 0.99),
            all.last().copied().unwrap_or(0),
            p50 as f64 / base as f64,
        );
    }
}
