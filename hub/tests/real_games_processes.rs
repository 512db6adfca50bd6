//! Real games through real processes read as python-chess reads them: 100 real games replayed by real `board-node`
//! processes through the embedded broker into a real hub; what `GET /api/boards/{n}` says of
//! each game (moves, FEN, status, claimable) is checked by python-chess 1.11.2.

use crate::support;

use std::time::Duration;

use serde_json::json;
use shakmaty::uci::UciMove;
use shakmaty::CastlingMode;
use support::oracle::OracleReport;
use support::{http_json, http_post, Hub, Node, Replay};

/// 100 games spread over every clocked file, each replayed in about 3 s.
fn hundred_games() -> Vec<(String, Replay)> {
    let files = [
        ("fide_world_cup_2025_classical.pgn", 396),
        ("fide_world_cup_2025_rapid_15+10.pgn", 92),
        ("fide_world_cup_2025_rapid_10+10.pgn", 30),
        ("fide_world_cup_2025_blitz_5+3.pgn", 18),
        ("fide_womens_world_rapid_2024.pgn", 605),
        ("fide_grand_swiss_2025_open.pgn", 638),
        ("fide_candidates_2022.pgn", 56),
        ("lichess_db_online_sample_1000k.pgn", 438),
    ];
    let per_file = 100 / files.len() + 1;
    let mut games = Vec::new();
    for (file, count) in files {
        for i in 0..per_file {
            if games.len() == 100 {
                break;
            }
            let game = 1 + i * (count / per_file);
            let board = games.len() as u16 + 1;
            games.push((file.to_owned(), Replay::new(board, file, game, 3.0)));
        }
    }
    games
}

#[test]
fn a_hundred_real_games_through_real_nodes_agree_with_python_chess() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let games = hundred_games();
    assert_eq!(games.len(), 100);
    // 25 processes at a time: a 2-core machine, and a realistic reconnect wave.
    for batch in games.chunks(25) {
        let nodes: Vec<Node> = batch
            .iter()
            .map(|(_, g)| Node::start(g, &hub, dir.path()))
            .collect();
        for node in nodes {
            let report = node.finish(Duration::from_secs(120));
            assert_eq!(report["acked"], report["events"], "{report}");
        }
    }

    let report = dir.path().join("hub-games.jsonl");
    let mut oracle = OracleReport::create(&report);
    for (file, game) in &games {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", game.board));
        let text = std::fs::read(&game.pgn).unwrap();
        let parsed = board_node::pgn::read_game(&text, game.game).unwrap();
        let uci: Vec<String> = parsed
            .plies
            .iter()
            .map(|p| UciMove::from_move(p.m, CastlingMode::Standard).to_string())
            .collect();
        oracle.game(
            file,
            game.game,
            &uci,
            json!({
                "plies": detail["moves"].as_array().unwrap().len(),
                "fen": detail["fen"],
                "status": detail["status"],
                "claimable": detail["claimable"],
            }),
        );
    }
    let stdout = oracle.check(&report);
    assert!(stdout.contains(": 100 games, 0 mismatches"), "{stdout}");

    // The arbiter's claim check over HTTP (9.3): the half-moves it counts are the FEN's,
    // which python-chess has just confirmed.
    let fifty = r#"{"claim": "fifty_moves"}"#;
    for (_, game) in &games {
        let path = format!("/api/boards/{}/claims", game.board);
        let (status, body) = http_post(&hub.web, &path, fifty).unwrap();
        assert_eq!(status, 200, "{body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let fen = http_json(&hub.web, &format!("/api/boards/{}", game.board))["fen"].clone();
        let halfmoves: u64 = fen
            .as_str()
            .unwrap()
            .split(' ')
            .nth(4)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            answer["halfmoves"], halfmoves,
            "board {}: {body}",
            game.board
        );
        assert_eq!(
            answer["valid"],
            halfmoves >= 100,
            "board {}: {body}",
            game.board
        );
        assert_eq!(answer["penalty_if_incorrect"], 120, "2023 standard: 9.5.3");
    }
    assert_eq!(
        http_post(&hub.web, "/api/boards/999/claims", fifty)
            .unwrap()
            .0,
        404
    );
    assert_eq!(
        http_post(&hub.web, "/api/boards/1/claims", "{\"claim\": \"resign\"}")
            .unwrap()
            .0,
        422
    );
}
