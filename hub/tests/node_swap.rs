//! A board's node replaced mid-game: node A replays a real game until it is killed; node B,
//! with an empty outbox of its own, starts from the board and clock as they stand. B's
//! events start again at sequence number 1, which the hub holds from A: the hub sees
//! they are not A's (not resends), tells B to continue after the journal (`ContinueAt`), and
//! the arbiter gets a `node_gap` alert. The game goes on with no move lost or duplicated.

use crate::support;

use std::time::{Duration, Instant};

use support::{http_get, http_json, Hub, Node, Replay};

/// Moves completed on `board` so far; 0 before its node reported.
fn ply(hub: &Hub, board: u16) -> usize {
    match http_get(&hub.web, &format!("/api/boards/{board}")) {
        Ok((200, body)) => serde_json::from_str::<serde_json::Value>(&body).unwrap()["ply"]
            .as_u64()
            .unwrap() as usize,
        _ => 0,
    }
}

#[test]
fn a_node_swapped_during_a_game_continues_it_without_losing_or_repeating_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let file = "fide_world_cup_2025_rapid_15+10.pgn";
    let game = Replay::new(7, file, 5, 16.0);
    let total = game.sans.len();
    assert!(total > 40, "a game long enough to swap in the middle");
    let mut a = Node::start(&game, &hub, dir.path());

    // Let A play about a third of the game, then pull its plug.
    let deadline = Instant::now() + Duration::from_secs(30);
    while ply(&hub, 7) < total / 3 {
        assert!(Instant::now() < deadline, "node A did not play");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = a.child.kill();
    let _ = a.child.wait();
    std::thread::sleep(Duration::from_millis(500));
    let before = http_json(&hub.web, "/api/boards/7");
    let played = before["ply"].as_u64().unwrap() as usize;
    let seq_before = before["last_seq"].as_u64().unwrap();

    // B reads the board as it stands and plays the rest.
    let b = Node::start_with_outbox(
        &Replay {
            from_ply: played,
            ..Replay::new(7, file, 5, 10.0)
        },
        &hub,
        dir.path(),
        "outbox-7-replacement",
    );
    let report = b.finish(Duration::from_secs(60));
    assert_eq!(
        report["acked"], report["events"],
        "B's events all acknowledged: {report}"
    );
    assert!(
        report["events"].as_u64().unwrap() > seq_before,
        "B continued after A's numbers: {report}"
    );

    let after = http_json(&hub.web, "/api/boards/7");
    let moves: Vec<String> = after["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        moves, game.sans,
        "every move once, in order (A played {played})"
    );
    let alerts = http_json(&hub.web, "/api/alerts?board=7");
    let gaps: Vec<_> = alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "node_gap")
        .collect();
    assert_eq!(gaps.len(), 1, "{alerts:#}");
}
