//! DGT boards wired as tournament halls wire them: chains of a dozen boards on one line, in
//! bus mode.
//!
//! - Twelve real rapid games on a chain at the pace they were played, the node's bus
//!   master and the emulated boards in simulated time, fed to the hub's core: every move
//!   and the final clocks through a board pulled out, a stalled line and a power cut.
//! - Real processes: `board-node emulate-dgt --bus` (a chain of emulated boards with their
//!   clocks on one pseudo-terminal, answering at 9,600 baud), one `board-node dgt --bus`
//!   reading two chains of twelve, and the hub with its embedded broker. The games run
//!   faster than real time, except while a fault lasts (then at real pace, as a hall's
//!   games go through a 10 s power cut) and with at least 0.8 s a move.

use crate::support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use protocol::time_control::TimeControl;
use support::live::{wait_board, ChainFault, Emulator, LiveNode};
use support::{http_json, Hub};

const PGN: &str = "fide_world_cup_2025_rapid_15+10.pgn";
const TIME_CONTROL: &str = "900+10";

/// A game one board of a chain plays: its source's moves and clocks, and when its presses
/// come (game ms).
struct ChainGame {
    board: u16,
    serial: String,
    game: usize,
    sans: Vec<String>,
    clk_ms: Vec<Option<u64>>,
    presses: Vec<u64>,
}

impl ChainGame {
    fn new(board: u16, serial: String, game: usize) -> ChainGame {
        let path = support::real_data().join("pgn-clocks").join(PGN);
        let parsed = board_node::pgn::read_game(&std::fs::read(&path).unwrap(), game).unwrap();
        let tc: TimeControl = TIME_CONTROL.parse().unwrap();
        let script = board_node::replay::script(&parsed, Some(&tc));
        ChainGame {
            board,
            serial,
            game,
            sans: support::canonical_sans(&parsed),
            clk_ms: parsed.plies.iter().map(|p| p.clk_ms).collect(),
            presses: board_node::replay::press_times(&script),
        }
    }

    /// The clock's display is definitive (6.10.1): the last move of each side shows the
    /// source's `%clk`.
    fn assert_final_clocks(&self, shown: &[Option<u64>]) {
        support::live::assert_final_clocks(self.board, &self.clk_ms, shown);
    }

    /// A ply after which exactly one more press comes within `made_ms` of game time and
    /// then none until `quiet_ms`: a fault there lasts while one move is made.
    fn one_move_within(&self, from_ply: usize, made_ms: u64, quiet_ms: u64) -> Option<usize> {
        (from_ply..self.presses.len().saturating_sub(3)).find(|p| {
            let at = self.presses[p - 1];
            let next = self.presses[*p] - at;
            let after = self.presses[p + 1] - at;
            (1_000..made_ms).contains(&next) && after > quiet_ms
        })
    }
}

/// Watches `GET /api/nodes` on a thread until `stop`: for each board, whether it was ever
/// seen disconnected. Joined, it gives what it saw, or fails the test with its cause.
fn watch_nodes(hub: &Hub, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<BTreeMap<u64, bool>> {
    let http = hub.web.clone();
    std::thread::spawn(move || {
        let mut seen = BTreeMap::new();
        while !stop.load(Ordering::Relaxed) {
            let nodes = http_json(&http, "/api/nodes");
            for view in nodes["nodes"].as_array().into_iter().flatten() {
                let board = view["board"].as_u64().unwrap_or(0);
                let down = view["board_connected"] == false;
                *seen.entry(board).or_insert(false) |= down;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
        seen
    })
}

/// The first `n` games of 40 to 100 plies of the World Cup's 15+10 rapid.
fn rapid_games(n: usize) -> Vec<usize> {
    let games: Vec<usize> = (1..=92)
        .filter(|g| (40..=100).contains(&ChainGame::new(0, String::new(), *g).sans.len()))
        .take(n)
        .collect();
    assert_eq!(games.len(), n);
    games
}

#[test]
fn a_chain_of_twelve_boards_at_real_pace_gives_every_move_through_a_pull_a_stall_and_a_power_cut() {
    use board_node::dgt::bus::wire::Address;
    use hub::core::hall::Hall;
    use protocol::BoardNo;
    // Simulated time: the games at the pace they were played, the line at 9,600 baud. Board
    // 3 is pulled out of the chain for 5 s twenty minutes in, board 7's line stalls for 4 s
    // at 30 minutes, and the chain's power is cut for 10 s at 40 minutes.
    let tc: TimeControl = TIME_CONTROL.parse().unwrap();
    let path = support::real_data().join("pgn-clocks").join(PGN);
    let text = std::fs::read(&path).unwrap();
    let games: Vec<ChainGame> = rapid_games(12)
        .into_iter()
        .enumerate()
        .map(|(i, g)| ChainGame::new(i as u16 + 1, format!("{}", 1001 + i), g))
        .collect();
    let chain: Vec<_> = games
        .iter()
        .map(|g| {
            let parsed = board_node::pgn::read_game(&text, g.game).unwrap();
            let script = board_node::replay::script(&parsed, Some(&tc));
            (
                Address::of_serial(&g.serial).unwrap(),
                board_node::eboard::emulator::timeline::from_script(&script),
            )
        })
        .collect();
    const MINUTE: u64 = 60_000;
    let simulated =
        board_node::dgt::bus::emulator::simulation::simulate(&chain, 5, |now, boards| match now {
            t if t == 20 * MINUTE => boards.board(2).power(false, now),
            t if t == 20 * MINUTE + 5_000 => boards.board(2).power(true, now),
            t if t == 30 * MINUTE => boards.board(6).stall(now + 4_000),
            t if t == 40 * MINUTE => (0..12).for_each(|b| boards.board(b).power(false, now)),
            t if t == 40 * MINUTE + 10_000 => {
                (0..12).for_each(|b| boards.board(b).power(true, now))
            }
            _ => {}
        });
    for (game, readings) in games.iter().zip(simulated.readings) {
        let mut hall = Hall::default().with_time_control(Some(tc.clone()));
        support::events::feed(&mut hall, BoardNo(game.board), readings.clone());
        let now = hub::core::time::HubMs(readings.last().unwrap().game_ms);
        let detail = serde_json::to_value(hall.detail(BoardNo(game.board), now).unwrap()).unwrap();
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        if moves != game.sans {
            let from = readings
                .iter()
                .enumerate()
                .filter(|(_, r)| matches!(&r.reading, board_node::source::Reading::Clock(c) if c.pressed_by.is_some()))
                .map(|(i, _)| i)
                .nth(moves.len().saturating_sub(1))
                .unwrap_or(0);
            // What the node said after the last move the hub took.
            for r in readings.iter().skip(from).take(30) {
                eprintln!("{r:?}");
            }
            eprintln!("{}", detail["illegal_moves"]);
        }
        assert_eq!(
            moves, game.sans,
            "board {}: every move, once (6.2.1)",
            game.board
        );
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "board {}",
            game.board
        );
        let shown: Vec<Option<u64>> = serde_json::from_value(detail["clock_ms"].clone()).unwrap();
        game.assert_final_clocks(&shown);
        let disconnected = readings.iter().any(|r| matches!(r.reading, board_node::source::Reading::Health(h) if !h.board_connected && r.game_ms > 1_000));
        assert!(disconnected, "board {}: the power cut told", game.board);
    }
}

#[test]
fn two_chains_of_twelve_boards_read_by_one_node_lose_no_move_through_faults() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        &format!("[event]\ntime_control = \"{TIME_CONTROL}\"\n"),
    );
    // The first 24 games of 40 to 100 plies of the World Cup's 15+10 rapid: chain A
    // (boards 1-12) has serial numbers as DGT prints them (their bus addresses); chain B
    // (boards 13-24) serials above 16,383, whose addresses are their low 14 bits.
    let games = rapid_games(24);
    let chain_a: Vec<ChainGame> = (1..=12)
        .map(|b| ChainGame::new(b, format!("{:05}", 1000 + b), games[usize::from(b) - 1]))
        .collect();
    let chain_b: Vec<ChainGame> = (13..=24)
        .map(|b| ChainGame::new(b, format!("{}", 20_000 + b), games[usize::from(b) - 1]))
        .collect();
    let speed = |games: &[ChainGame]| {
        let longest = games
            .iter()
            .map(|g| *g.presses.last().unwrap())
            .max()
            .unwrap();
        // Each chain's longest game in about 100 s, besides its quick moves (which the
        // emulator lets take 0.8 s at least) and its faults (at real pace).
        (longest as f64 / 100_000.0).max(1.0)
    };

    // On chain A, board 3 is pulled out for 5 s while its player moves and presses, and
    // board 7's line stalls for 4 s while a move is made; every 40th answer on the line is
    // garbled. On chain B the power is cut for 10 s.
    let pulled = &chain_a[2];
    let pulled_ply = pulled
        .one_move_within(10, 4_000, 9_000)
        .expect("a spell for the pull");
    let stalled = &chain_a[6];
    let stalled_ply = stalled
        .one_move_within(10, 3_000, 6_500)
        .expect("a spell for the stall");
    let cut_on = &chain_b[0];
    // Out of the openings (on every board: the chain's games started together), where
    // players make five moves in the 12 s a power cut and the boots after it take, and the
    // hub cannot tell their order from the board.
    let cut_ply = cut_on
        .one_move_within(36, 8_000, 14_000)
        .expect("a spell for the power cut");
    eprintln!("pulled at ply {pulled_ply}, stalled at {stalled_ply}, power cut at {cut_ply}");
    let faults_a = [
        ChainFault::Unplug {
            serial: pulled.serial.clone(),
            ply: pulled_ply,
            ms: 5_000,
        },
        ChainFault::Stall {
            serial: stalled.serial.clone(),
            ply: stalled_ply,
            ms: 4_000,
        },
        ChainFault::NoiseEvery(40),
    ];
    let faults_b = [ChainFault::PowerCut {
        serial: cut_on.serial.clone(),
        ply: cut_ply,
        ms: 10_000,
    }];
    let pgn = support::real_data().join("pgn-clocks").join(PGN);
    let boards = |games: &[ChainGame]| -> Vec<(String, usize)> {
        games.iter().map(|g| (g.serial.clone(), g.game)).collect()
    };
    // Chain A also carries a board nobody enrolled (serial 00099, playing nothing): the
    // technician is to see it, not have it guessed onto a board.
    let mut with_stranger = boards(&chain_a);
    with_stranger.insert(5, ("00099".into(), 0));
    let emulator_a = Emulator::start_chain(
        dir.path(),
        "a",
        &pgn,
        TIME_CONTROL,
        &with_stranger,
        speed(&chain_a),
        &faults_a,
    );
    let emulator_b = Emulator::start_chain(
        dir.path(),
        "b",
        &pgn,
        TIME_CONTROL,
        &boards(&chain_b),
        speed(&chain_b),
        &faults_b,
    );
    let enrol = |games: &[ChainGame]| -> Vec<_> {
        games
            .iter()
            .map(|g| hub.enrol(&g.serial, g.board, dir.path()))
            .collect()
    };
    let (enrolled_a, enrolled_b) = (enrol(&chain_a), enrol(&chain_b));
    let stop_watching = Arc::new(AtomicBool::new(false));
    let seen_down = watch_nodes(&hub, stop_watching.clone());
    let node = LiveNode::start_chains(
        &hub,
        dir.path(),
        "node",
        &[
            (&emulator_a, enrolled_a.iter().collect()),
            (&emulator_b, enrolled_b.iter().collect()),
        ],
    );

    let played_a = emulator_a.wait_played(Duration::from_secs(400));
    let played_b = emulator_b.wait_played(Duration::from_secs(400));
    eprintln!("chain a: {played_a}\nchain b: {played_b}");
    assert_eq!(played_a["unplugged"], 1, "{played_a}");
    assert_eq!(played_a["stalls"], 1, "{played_a}");
    assert!(played_a["garbled"].as_u64().unwrap() > 0, "{played_a}");
    assert_eq!(played_b["power_cuts"], 1, "{played_b}");

    for g in chain_a.iter().chain(&chain_b) {
        let detail = wait_board(&hub, g.board, Duration::from_secs(30), |d| {
            d["moves"]
                .as_array()
                .is_some_and(|m| m.len() >= g.sans.len())
        });
        // Plies a starved bus master saw as one jump were filled in; the arbiter orders them.
        let (moves, ordered) = support::live::moves_ordered_as(&hub, g.board, &g.sans);
        if ordered > 0 {
            eprintln!(
                "board {}: {ordered} stretch(es) filled in, ordered",
                g.board
            );
        }
        if moves != g.sans {
            let log = node.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("the node's log, last lines first:\n{}", tail.join("\n"));
            eprintln!(
                "board: {detail}\nnodes: {}",
                http_json(&hub.web, "/api/nodes")
            );
        }
        assert_eq!(moves, g.sans, "board {}: every move, once (6.2.1)", g.board);
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "board {}",
            g.board
        );
        let shown: Vec<Option<u64>> = serde_json::from_value(detail["clock_ms"].clone()).unwrap();
        g.assert_final_clocks(&shown);
    }
    stop_watching.store(true, Ordering::Relaxed);
    let seen_down = seen_down
        .join()
        .unwrap_or_else(|cause| std::panic::resume_unwind(cause));
    assert_eq!(
        seen_down.get(&u64::from(pulled.board)),
        Some(&true),
        "the technician saw the pulled board: {seen_down:?}"
    );
    for g in &chain_b {
        assert_eq!(
            seen_down.get(&u64::from(g.board)),
            Some(&true),
            "the technician saw board {} lose its power: {seen_down:?}",
            g.board
        );
    }
    let nodes = http_json(&hub.web, "/api/nodes");
    for view in nodes["nodes"].as_array().unwrap() {
        assert_eq!(view["board_connected"], true, "{view}");
    }
    let strangers: Vec<&serde_json::Value> = nodes["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "stranger_on_chain")
        .collect();
    assert_eq!(
        strangers,
        vec![&serde_json::json!({"kind": "stranger_on_chain", "board": 1, "address": 99})],
        "the board nobody enrolled, shown once: {nodes}"
    );
    for report in node.stop(Duration::from_secs(10)) {
        assert_eq!(report["acked"], report["events"], "{report}");
    }
}
