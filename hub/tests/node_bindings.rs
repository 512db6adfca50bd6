//! The night before round 1: the technician binds nodes (by their e-board's hardware id) to
//! boards in the configuration, the nodes start, and `GET /api/nodes` says what is wrong.
//! The nodes here are not enrolled (no keys), so the hall is opened to them
//! (`[access] open_hall`): the mistakes to find are in the bindings, which in a closed hall
//! enrolment makes in the same step (`tests/trust.rs`).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{http_json, http_post, Hub, Node, Replay};

#[test]
fn the_technician_sees_every_node_and_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("round-1.csv"),
        "board,white,black\n1,A,B\n2,C,D\n3,E,F\n4,G,H\n5,I,J\n",
    )
    .unwrap();
    let (mut hub, port) = Hub::configured(
        dir.path(),
        "[access]\nopen_hall = true\n\n\
         [[rounds]]\nnumber = 1\npairings = \"round-1.csv\"\n\n\
         [[nodes]]\nhardware = \"DGT-A\"\nboard = 1\n\n\
         [[nodes]]\nhardware = \"DGT-B\"\nboard = 3\n",
    );
    // Board 1: DGT-A, as bound. Board 2: DGT-B, bound to 3. Board 4: DGT-C, unbound.
    // Board 5: DGT-A again (a cable in the wrong node). Board 3: nobody.
    let _nodes: Vec<Node> = [(1, "DGT-A"), (2, "DGT-B"), (4, "DGT-C"), (5, "DGT-A")]
        .into_iter()
        .map(|(board, hw)| {
            let replay = Replay {
                hardware_id: Some(hw.into()),
                ..Replay::new(board, "fide_world_cup_2025_rapid_15+10.pgn", 1, 20.0)
            };
            Node::unenrolled(&replay, port, dir.path())
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    let report = loop {
        let report = http_json(&hub.web, "/api/nodes");
        if report["nodes"].as_array().unwrap().len() == 4 {
            break report;
        }
        assert!(Instant::now() < deadline, "{report:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let node = |board: u64| -> &Value {
        report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["board"] == board)
            .unwrap()
    };
    assert_eq!(node(1)["board_hw"], "DGT-A");
    assert_eq!(node(1)["bound_to"], 1);
    assert_eq!(node(1)["connected"], true);
    assert_eq!(node(4)["bound_to"], Value::Null);
    let mut warnings: Vec<Value> = report["warnings"].as_array().unwrap().clone();
    warnings.sort_by_key(|w| w.to_string());
    let mut expected = vec![
        json!({"kind": "bound_elsewhere", "board": 2, "hardware": "DGT-B", "bound_to": 3}),
        json!({"kind": "unbound_node", "board": 4, "hardware": "DGT-C"}),
        json!({"kind": "bound_elsewhere", "board": 5, "hardware": "DGT-A", "bound_to": 1}),
        json!({"kind": "duplicate_hardware", "hardware": "DGT-A", "boards": [1, 5]}),
        json!({"kind": "board_without_node", "board": 3}),
    ];
    expected.sort_by_key(|w| w.to_string());
    assert_eq!(warnings, expected);

    // The technician fixes it over the API: DGT-C is board 4's, DGT-B is board 2's.
    for (hardware, board) in [("DGT-C", 4), ("DGT-B", 2)] {
        let body = json!({"hardware": hardware, "board": board}).to_string();
        let (status, answer) = http_post(&hub.web, "/api/nodes/bind", &body).unwrap();
        assert_eq!(status, 200, "{answer}");
    }
    let fixed = |report: &Value| -> Vec<Value> {
        let mut warnings = report["warnings"].as_array().unwrap().clone();
        warnings.sort_by_key(|w| w.to_string());
        warnings
    };
    let mut left = vec![
        json!({"kind": "bound_elsewhere", "board": 5, "hardware": "DGT-A", "bound_to": 1}),
        json!({"kind": "duplicate_hardware", "hardware": "DGT-A", "boards": [1, 5]}),
        json!({"kind": "board_without_node", "board": 3}),
    ];
    left.sort_by_key(|w| w.to_string());
    assert_eq!(fixed(&http_json(&hub.web, "/api/nodes")), left);
    let (status, _) = http_post(
        &hub.web,
        "/api/nodes/bind",
        r#"{"hardware": "X", "board": 0}"#,
    )
    .unwrap();
    assert_eq!(status, 400);

    // The bindings are in the journal: a restarted hub has them.
    hub.restart();
    let report = http_json(&hub.web, "/api/nodes");
    assert_eq!(fixed(&report), left);
}
