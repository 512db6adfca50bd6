//! Who may start a round: a start ends every game it covers, so only the chief arbiter
//! (the hall's token, or an arbiter the configuration makes `chief`) starts one, and only
//! the round after the round in play. The security review forced round 2 mid-play with a
//! zone arbiter's login (every board's game archived) and round 40 was accepted too.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{as_login, http_json, Hub, Node, Replay};

const CONFIG: &str = r#"
[[zones]]
name = "A"
boards = ["1-4"]

[[zones]]
name = "B"
boards = ["5-8"]

[[arbiters]]
name = "IA Eva"
chief = true
"#;

fn board(hub: &Hub, n: u16) -> Value {
    http_json(&hub.web, &format!("/api/boards/{n}"))
}

#[test]
fn only_the_chief_starts_a_round_and_only_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), CONFIG);
    let enrol = |name: &str, zones: &[&str]| -> String {
        hub.enrol_arbiter_in(name, zones)["login"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let ola = enrol("IA Ola", &["B"]);
    let eva = enrol("IA Eva", &[]);
    // Board 5 (zone B) plays round 1, slowly enough to be mid-game throughout.
    let game = Replay::new(5, "fide_world_cup_2025_rapid_15+10.pgn", 17, 120.0);
    let node = Node::start(&game, &hub, dir.path());
    let deadline = Instant::now() + Duration::from_secs(60);
    let ply = || match support::http_get(&hub.web, "/api/boards/5") {
        Ok((200, body)) => serde_json::from_str::<Value>(&body).unwrap()["ply"]
            .as_u64()
            .unwrap_or(0),
        _ => 0,
    };
    while ply() < 1 {
        assert!(
            Instant::now() < deadline,
            "board 5 began its game: {:?}\nthe node's log: {}\nthe hub's log: {}",
            support::http_get(&hub.web, "/api/boards/5"),
            support::tail(
                &dir.path()
                    .join(format!("node-{}-outbox-{}.log", node.board, node.board))
            ),
            support::tail(&hub.log)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(board(&hub, 5)["round"], 1);

    // A zone arbiter's own login: 403, forced or not, and nothing changes.
    for body in [r#"{"force": true}"#, "{}"] {
        let (status, why) = as_login(&hub.web, &ola, "POST", "/api/rounds/2/start", body);
        assert_eq!(status, 403, "a zone arbiter starts round 2 ({body}): {why}");
        assert!(why.contains("chief"), "{why}");
    }
    let five = board(&hub, 5);
    assert_eq!(five["round"], 1, "{five}");
    assert_eq!(five["result"], "*", "the game goes on: {five}");

    // A round that is not next: 409 even from the hall's token, forced.
    let (status, why) =
        support::http_post(&hub.web, "/api/rounds/40/start", r#"{"force": true}"#).unwrap();
    assert_eq!(status, 409, "round 40 while round 1 is in play: {why}");
    assert!(why.contains("round 2 starts next"), "{why}");
    assert_eq!(board(&hub, 5)["round"], 1);

    // The chief arbiter of the configuration, with their own login: the next round starts.
    let (status, why) = as_login(
        &hub.web,
        &eva,
        "POST",
        "/api/rounds/2/start",
        r#"{"force": true}"#,
    );
    assert_eq!(status, 200, "the chief forces round 2: {why}");
    assert_eq!(board(&hub, 5)["round"], 2);
    let started = &http_json(&hub.web, "/api/rounds/2")["started"][0];
    assert_eq!(started["by"], "IA Eva", "{started}");
    assert_eq!(started["forced"], true, "{started}");
    let archived = http_json(&hub.web, "/api/rounds/1/boards/5");
    let plies_then = archived["moves"].as_array().unwrap().len();
    assert!(
        plies_then >= 1,
        "round 1's game archived with its moves: {archived}"
    );

    // The zone arbiter cannot take the start back; the chief can, while no move was made
    // in round 2: board 5's game of round 1 is given back as the board went on with it.
    let (status, why) = as_login(&hub.web, &ola, "POST", "/api/rounds/2/undo-start", "{}");
    assert_eq!(status, 403, "a zone arbiter undoes round 2's start: {why}");
    let (status, why) = as_login(&hub.web, &eva, "POST", "/api/rounds/2/undo-start", "{}");
    assert_eq!(status, 200, "the chief undoes round 2's start: {why}");
    let given = board(&hub, 5);
    assert_eq!(given["round"], 1, "{given}");
    assert_eq!(given["result"], "*", "{given}");
    let plies = given["moves"].as_array().unwrap().len();
    assert!(
        plies >= plies_then,
        "{plies} plies, {plies_then} when archived: {given}"
    );
    let undone = &http_json(&hub.web, "/api/rounds/2")["started"][0]["undone"];
    assert_eq!(undone["by"], "IA Eva", "{undone}");
    let (status, why) = as_login(&hub.web, &eva, "POST", "/api/rounds/2/undo-start", "{}");
    assert_eq!(status, 409, "nothing left to undo: {why}");
    assert!(why.contains("only that start can be undone"), "{why}");

    // A restart folds the journal to the same: round 1 in play, the game with its moves.
    let mut hub = hub;
    hub.restart();
    let after = board(&hub, 5);
    assert_eq!(after["round"], 1, "{after}");
    let moves = |b: &Value| b["moves"].as_array().unwrap()[..plies].to_vec();
    assert_eq!(moves(&after), moves(&given), "the moves after a restart");
}
