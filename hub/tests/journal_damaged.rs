//! One damaged record in the journal of a playing board. Before, the restarted
//! hub skipped it and then every later record of that board as out of sequence, and the
//! board stalled for good (its node had forgotten those events once acknowledged). Now the
//! board goes on after the lost event, and the arbiter's alert names it.

use crate::support;

use std::time::{Duration, Instant};

use hub::edge::journal::batch;
use hub::edge::journal::Journal;
use protocol::{BoardNo, Seq, UplinkBody};
use serde_json::Value;
use support::{http_get, http_json, Hub, Node, Replay};

fn ply(hub: &Hub) -> u64 {
    match http_get(&hub.web, "/api/boards/1") {
        Ok((200, body)) => serde_json::from_str::<Value>(&body).unwrap()["ply"]
            .as_u64()
            .unwrap(),
        _ => 0,
    }
}

/// A board's event that is a placement superseded by the next one (a piece lifted, then set
/// down): losing it loses no move, so the game can end exact.
fn superseded_placement(journal: &Journal) -> Seq {
    let seqs = journal.seqs(BoardNo(1)).unwrap();
    let is_placement = |seq: Seq| {
        matches!(
            journal.record(BoardNo(1), seq).unwrap().unwrap().event.body,
            UplinkBody::Placement(_)
        )
    };
    seqs[seqs.len() / 2..]
        .windows(2)
        .find(|pair| is_placement(pair[0]) && is_placement(pair[1]))
        .map(|pair| pair[0])
        .expect("a lifted piece's placement in the journal")
}

#[test]
fn a_damaged_record_is_named_to_the_arbiter_and_the_board_goes_on_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, _) = Hub::embedded(dir.path());
    let game = Replay::new(1, "fide_world_cup_2025_rapid_15+10.pgn", 3, 14.0);
    let node = Node::start(&game, &hub, dir.path());
    let deadline = Instant::now() + Duration::from_secs(30);
    while ply(&hub) < 24 {
        assert!(Instant::now() < deadline, "the game did not get going");
        std::thread::sleep(Duration::from_millis(50));
    }

    // The hub dies; one of board 1's records is damaged on disk.
    hub.kill();
    let lost = {
        let journal = Journal::open(&hub.data).unwrap();
        superseded_placement(&journal)
    };
    let db = (0..100)
        .find_map(|_| {
            sled::open(&hub.data)
                .map_err(|_| std::thread::sleep(Duration::from_millis(20)))
                .ok()
        })
        .expect("the journal's database opens");
    // The event's bytes in its batch record are garbage; the batch's framing holds.
    let batches = db.open_tree("batches").unwrap();
    let (key, value) = batches
        .iter()
        .map(Result::unwrap)
        .find(|(_, value)| {
            batch::entries(value)
                .unwrap()
                .iter()
                .any(|e| e.board == BoardNo(1) && e.seq == lost)
        })
        .expect("the record is there");
    let entries = batch::entries(&value).unwrap();
    let damaged = batch::rewritten(&entries, |e| {
        if e.board == BoardNo(1) && e.seq == lost {
            vec![0xff, 0xde, 0xad]
        } else {
            e.wire.to_vec()
        }
    });
    batches.insert(key, damaged).unwrap();
    db.flush().unwrap();
    drop(batches);
    drop(db);
    std::thread::sleep(Duration::from_millis(200));

    hub.restart();
    let report = node.finish(Duration::from_secs(90));
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans, "the board went on after the lost event");
    assert_eq!(detail["last_seq"], report["events"]);

    let alerts = http_json(&hub.web, "/api/alerts?board=1");
    let damaged: Vec<&Value> = alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "journal_damaged")
        .collect();
    assert_eq!(damaged.len(), 1, "{alerts:#}");
    assert_eq!(damaged[0]["facts"]["detail"], lost.0.to_string());
    assert!(
        damaged[0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("event {}", lost.0)),
        "{}",
        damaged[0]["text"]
    );
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    assert!(
        metrics.contains("zeitnot_journal_records_skipped_total 1"),
        "{metrics}"
    );

    // A second restart reads the same journal: the same hall, no second alert.
    hub.restart();
    let again = http_json(&hub.web, "/api/alerts?board=1");
    let count = again
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "journal_damaged")
        .count();
    assert_eq!(count, 1);
    let detail = http_json(&hub.web, "/api/boards/1");
    assert_eq!(detail["moves"].as_array().unwrap().len(), game.sans.len());
}
