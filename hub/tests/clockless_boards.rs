//! Boards without a clock: the hub infers a move when the board has shown a legal successor
//! for the debounce interval. Every real game without clocks (`pgn-endings/`) replayed as a
//! clockless board through the core, and a few through real `board-node replay --no-clock`
//! processes and the broker, give the games' moves.

use crate::support;

use std::time::Duration;

use board_node::{pgn, replay};
use hub::core::hall::{Hall, DEFAULT_DEBOUNCE_MS};
use hub::core::time::HubMs;
use protocol::{BoardNo, Hello, Seq, UplinkBody};
use support::{http_json, Hub, Node, Replay};

/// How long the replayed board leaves each move standing: the node's default.
const STAND_MS: u64 = 2_500;
const _: () = assert!(STAND_MS > DEFAULT_DEBOUNCE_MS);

/// The node says it has no clock, then reports the game as a board alone.
fn play_clockless(hall: &mut Hall, board: BoardNo, game: &pgn::PgnGame) {
    let hello = UplinkBody::Hello(Hello {
        software: "test".into(),
        board_hw: "eboard".into(),
        clock_hw: String::new(),
        highest_seq: Seq(0),
    });
    let readings = replay::without_clock(replay::script(game, None), STAND_MS);
    let bodies = readings.iter().map(|t| (t.game_ms, t.reading.body()));
    let _ = support::events::feed_bodies(hall, board, std::iter::once((0, hello)).chain(bodies));
}

#[test]
fn every_real_game_without_a_clock_is_read_move_for_move() {
    let dir = support::real_data().join("pgn-endings");
    let mut games = 0;
    let mut plies = 0;
    let mut ended_by_the_laws = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pgn") {
            continue;
        }
        let text = std::fs::read(&path).unwrap();
        for (index, game) in pgn::read_games(&text).unwrap().iter().enumerate() {
            let mut hall = Hall::default();
            let board = BoardNo(1);
            play_clockless(&mut hall, board, game);
            let detail = serde_json::to_value(hall.detail(board, HubMs(0)).unwrap()).unwrap();
            let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
            let want = support::canonical_sans(game);
            let what = format!("{} game {}", path.display(), index + 1);
            if detail["status"] == "playing" {
                assert_eq!(moves, want, "{what}");
            } else {
                // The Laws ended the game (5.2.2, 9.6) at or before the PGN's last move.
                assert_eq!(moves[..], want[..moves.len()], "{what}");
                ended_by_the_laws += usize::from(moves.len() < want.len());
            }
            assert_eq!(detail["illegal_moves"], serde_json::json!([]), "{what}");
            games += 1;
            plies += moves.len();
        }
    }
    eprintln!(
        "{games} games, {plies} moves inferred from the board alone; \
         {ended_by_the_laws} ended by the Laws before the PGN's last move"
    );
    assert!(games > 1_000, "{games}");
}

#[test]
fn a_board_with_a_clock_waits_for_the_press() {
    // The same readings from a node that has a clock: a stable board is not a move (6.2.1).
    let text =
        std::fs::read(support::real_data().join("pgn-endings/molinari-bordais-1979.pgn")).unwrap();
    let game = pgn::read_game(&text, 1).unwrap();
    let mut hall = Hall::default();
    let readings = replay::without_clock(replay::script(&game, None), STAND_MS);
    let _ = support::events::feed(&mut hall, BoardNo(1), readings);
    let detail = serde_json::to_value(hall.detail(BoardNo(1), HubMs(0)).unwrap()).unwrap();
    // Only the mate, which ends the game when set down (6.2.1), could count; it never
    // comes because the first move is never completed.
    assert_eq!(detail["moves"], serde_json::json!([]));
}

#[test]
fn clockless_nodes_through_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let mut games = vec![
        Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 3, 3.0),
        Replay::new(2, "fide_world_cup_2025_rapid_10+10.pgn", 4, 3.0),
        Replay::new(3, "fide_candidates_2022.pgn", 5, 3.0),
    ];
    // Every move stands 2.5 s of game time: slow enough for the debounce at any speed.
    for game in &mut games {
        game.no_clock = true;
    }
    let nodes: Vec<Node> = games
        .iter()
        .map(|g| Node::start(g, &hub, dir.path()))
        .collect();
    for node in nodes {
        let report = node.finish(Duration::from_secs(120));
        assert_eq!(report["acked"], report["events"], "{report}");
    }
    for game in &games {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", game.board));
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, game.sans, "board {}", game.board);
        assert_eq!(
            detail["clock"],
            serde_json::Value::Null,
            "no clock reported"
        );
    }
}
