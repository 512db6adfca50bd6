//! A node given several brokers (`--broker ADDR,ADDR`) moves on from one that does not
//! answer: the first address here is a port nobody listens on, the second the hub's
//! embedded broker, and the game arrives whole.

use crate::support;

use std::time::Duration;

use support::{free_port, http_json, Hub, Node, Replay};

#[test]
fn a_node_whose_first_broker_is_dead_plays_its_game_through_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let game = Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 4, 4.0);
    let enrolment = hub.enrol("replay-1", 1, dir.path());
    let brokers = format!("127.0.0.1:{},127.0.0.1:{port}", free_port());
    let node = Node::spawn_via(
        &game,
        &brokers,
        None,
        dir.path(),
        "outbox-1",
        Some(&enrolment),
    );
    let report = node.finish(Duration::from_secs(120));
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans);
}
