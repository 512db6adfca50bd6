//! A hall of two sections in one run: a classical section on boards 1–10 (90
//! minutes for 40 moves, 30 minutes, +30 s; standard) and a rapid one on boards 11–20 (15
//! minutes + 10 s; rapid, partly supervised), each with its own pairing file. Each board's
//! clock is checked against its section's time control, and an illegal move costs what its
//! section's rules say: 2 minutes to the opponent in standard (7.5.5), 1 minute in rapid
//! under partial supervision, claimable only until the opponent's next move (A.5.2).

use crate::support;

use std::time::Duration;

use serde_json::Value;
use shakmaty::{Position, Square};
use support::board::TestBoard;
use support::{http_get, http_json, Hub, Node, Replay};

const CONFIG: &str = r#"
[event]
name = "Two sections"

[[sections]]
name = "classical"
boards = ["1-10"]
time_control = "90 minutes for the first 40 moves, followed by 30 minutes for the rest of the game with an increment of 30 seconds per move starting from move 1"

[[sections]]
name = "rapid"
boards = ["11-20"]
time_control = "15 min + 10 sec"
game_type = "rapid"
supervision = "partial"
pairings = "rapid.trf"
"#;

/// The rapid section's pairing file: round 1, one game (its board 1 is the hall's 11).
fn rapid_trf() -> String {
    let line = |rank: u32, name: &str, opponent: u32, colour: char| {
        format!(
            "001 {rank:>4}  GM  {name:<33} {:>4} FID {:>11} {:>10} {:>4} {rank:>4}  {opponent:>4} {colour}",
            2700 - rank,
            70_000_000 + rank,
            "2000/01/01",
            "0.0"
        )
    };
    [
        "012 Rapid section".to_owned(),
        "XXR 9".to_owned(),
        line(1, "Nepomniachtchi, Ian", 2, 'w'),
        line(2, "Ding, Liren", 1, 'b'),
    ]
    .join("\n")
        + "\n"
}

fn ruling(detail: &Value) -> (Value, Value) {
    let illegal = &detail["illegal_moves"][0];
    (
        illegal["ruling"]["penalty"].clone(),
        illegal["ruling"]["article"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_section_plays_under_its_own_clock_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rapid.trf"), rapid_trf()).unwrap();
    let (hub, port) = Hub::configured(dir.path(), CONFIG);

    // Real games: a World Cup classical game on board 1, a rapid game on board 11.
    let classical = Replay::new(1, "fide_world_cup_2025_classical.pgn", 1, 6.0);
    let rapid = Replay {
        time_control: Some("900+10".into()),
        ..Replay::new(11, "fide_world_cup_2025_rapid_15+10.pgn", 19, 6.0)
    };
    let nodes: Vec<Node> = [&classical, &rapid]
        .iter()
        .map(|r| Node::start(r, &hub, dir.path()))
        .collect();

    // Boards 5 (classical) and 15 (rapid): Black moves the king two squares and presses.
    for board in [5, 15] {
        let enrolled = hub.enrol(&format!("board-{board}"), board, dir.path());
        let client = support::board::node_session(port, &enrolled).await;
        let mut test_board = TestBoard::start(board, client, &enrolled).await;
        test_board.play("e2e4").await;
        let mut illegal = test_board.position.board().clone();
        let king = illegal.remove_piece_at(Square::E8).unwrap();
        illegal.set_piece_at(Square::E6, king);
        test_board.press_with(&illegal).await;
    }
    let http = hub.web.clone();
    let wait_for_illegal = move |board: u16| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            // 404 until the board's first event arrived.
            let (status, body) = http_get(&http, &format!("/api/boards/{board}")).unwrap();
            let detail: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if status == 200
                && detail["illegal_moves"]
                    .as_array()
                    .is_some_and(|m| !m.is_empty())
            {
                return detail;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "board {board}: {status} {body}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let (five, fifteen) =
        tokio::task::spawn_blocking(move || (wait_for_illegal(5), wait_for_illegal(15)))
            .await
            .unwrap();
    // Standard: two minutes to the opponent (7.5.5); rapid under partial supervision: one
    // minute, and only until the opponent's next move (A.5.2).
    assert_eq!(
        ruling(&five),
        (
            serde_json::json!({"kind": "time_to_opponent", "seconds": 120}),
            "7.5.5".into()
        )
    );
    assert_eq!(
        five["illegal_moves"][0]["ruling"]["until_opponents_next_move"],
        false
    );
    assert_eq!(
        ruling(&fifteen),
        (
            serde_json::json!({"kind": "time_to_opponent", "seconds": 60}),
            "A.5.2".into()
        )
    );
    assert_eq!(
        fifteen["illegal_moves"][0]["ruling"]["until_opponents_next_move"],
        true
    );

    let reports = tokio::task::spawn_blocking(move || {
        nodes
            .into_iter()
            .map(|n| n.finish(Duration::from_secs(90)))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for report in reports {
        assert_eq!(report["acked"], report["events"], "{report}");
    }

    // Each board's clock is checked against its section's time control.
    let one = http_json(&hub.web, "/api/boards/1");
    let eleven = http_json(&hub.web, "/api/boards/11");
    assert_eq!(one["clock"]["time_control"], "40/5400+30:1800+30");
    assert_eq!(eleven["clock"]["time_control"], "900+10");
    assert_eq!(one["moves"].as_array().unwrap().len(), classical.sans.len());
    assert_eq!(eleven["moves"].as_array().unwrap().len(), rapid.sans.len());
    // Set-up claims are a rapid game's (A.5.1), not a standard one's.
    assert_eq!(one["setup_claims"], Value::Null);
    assert_eq!(eleven["setup_claims"]["article"], "A.5.1");
    // The clocks the feed shows agree with each section's period structure: the classical
    // game never reached move 40, so every move is in its first period.
    assert_eq!(one["clock"]["period"], 1);

    // The rapid section's pairings land on its boards; the feed and the pairings are served
    // per section and for the whole hall.
    let rapid_pairings = http_json(&hub.web, "/api/rounds/1/pairings?section=rapid");
    assert_eq!(rapid_pairings.as_array().unwrap().len(), 1);
    assert_eq!(rapid_pairings[0]["board"], 11);
    assert_eq!(rapid_pairings[0]["section"], "rapid");
    assert_eq!(rapid_pairings[0]["white"]["name"], "Nepomniachtchi, Ian");
    let (status, rapid_feed) =
        http_get(&hub.web, "/broadcast/round/1/games.pgn?section=rapid").unwrap();
    assert_eq!(status, 200);
    assert!(
        rapid_feed.contains("[Round \"1.11\"]")
            && rapid_feed.contains("[White \"Nepomniachtchi, Ian\"]")
    );
    assert!(rapid_feed.contains("[TimeControl \"900+10\"]"));
    assert!(!rapid_feed.contains("[Round \"1.1\"]"), "{rapid_feed}");
    let (_, classical_feed) =
        http_get(&hub.web, "/broadcast/round/1/games.pgn?section=classical").unwrap();
    assert!(
        classical_feed.contains("[Round \"1.1\"]") && !classical_feed.contains("[Round \"1.11\"]")
    );
    let (_, hall_feed) = http_get(&hub.web, "/broadcast/round/1/games.pgn").unwrap();
    assert!(hall_feed.contains("[Round \"1.1\"]") && hall_feed.contains("[Round \"1.11\"]"));
    assert_eq!(
        http_get(&hub.web, "/broadcast/round/1/games.pgn?section=blitz")
            .unwrap()
            .0,
        404
    );
    // The rapid section's TRF comes back with its results.
    let (status, _) = http_get(&hub.web, "/api/results.trf?section=rapid").unwrap();
    assert_eq!(status, 200);
}
