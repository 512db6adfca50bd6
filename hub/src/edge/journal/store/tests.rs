use super::super::batch;
use super::super::write_codec::{member_value, single_value, write_of, JOURNAL_FORMAT};
use super::*;
use crate::core::alerts::Language;
use crate::core::time::HubMs;
use protocol::{NodeMs, Uplink, UplinkBody};

#[test]
fn an_arbiter_is_kept_with_zones_and_language_and_a_key_alone_still_reads() {
    let key = NodeKey::from_bytes([4; 32]);
    let plain = Member::with_key(key.clone());
    assert_eq!(
        member_value(&plain),
        key.bytes().to_vec(),
        "as before phones"
    );
    assert_eq!(read_member(&member_value(&plain)).unwrap(), plain);
    let berg = Member {
        key,
        zones: vec!["B".into(), "C".into()],
        language: Some(Language::Norwegian),
        renewed: 2,
    };
    assert_eq!(read_member(&member_value(&berg)).unwrap(), berg);
    let mut damaged = member_value(&berg);
    damaged.truncate(40);
    assert!(read_member(&damaged).is_err());
    assert!(read_member(&[1, 2, 3]).is_err());
}

#[test]
fn the_session_secret_is_kept_and_differs_between_halls() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = Journal::open(a.path()).unwrap().session_secret().unwrap();
    assert_eq!(first.len(), 16);
    let other = Journal::open(b.path()).unwrap().session_secret().unwrap();
    assert_ne!(first, other);
    // The first opening is dropped; sled may take a moment to release the directory.
    let reopened = (0..50)
        .find_map(|_| {
            Journal::open(a.path())
                .map_err(|_| std::thread::sleep(std::time::Duration::from_millis(20)))
                .ok()
        })
        .expect("the journal opens again");
    let again = reopened.session_secret().unwrap();
    assert_eq!(again, first, "a restarted hub resumes its session");
}

fn record(board: u16, seq: u64) -> Record {
    Record {
        at: HubMs(1000 + seq),
        event: Uplink::new(BoardNo(board), Seq(seq), NodeMs(seq), UplinkBody::Heartbeat),
    }
}

#[test]
fn replay_returns_the_events_as_accepted_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = [(2, 1), (1, 1), (1, 2), (2, 2), (1, 10), (300, 1)];
    {
        let journal = Journal::open(dir.path()).unwrap();
        for (board, seq) in accepted {
            journal.append(&record(board, seq)).unwrap();
        }
        journal.flush().unwrap();
    }
    let journal = Journal::open(dir.path()).unwrap();
    let replayed: Vec<_> = journal
        .replay()
        .map(|r| {
            let r = r.unwrap();
            (r.event.board.0, r.event.seq.0, r.at.0)
        })
        .collect();
    let expected: Vec<_> = accepted.iter().map(|(b, s)| (*b, *s, 1000 + *s)).collect();
    assert_eq!(replayed, expected);
    assert_eq!(journal.seqs(BoardNo(1)).unwrap(), [Seq(1), Seq(2), Seq(10)]);
    assert_eq!(journal.batches.len(), 1, "one record for the flush");
}

#[test]
fn a_batch_is_written_when_full_and_batches_go_on_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let events = STREAM_HEAD - 1;
    {
        let journal = Journal::open(dir.path()).unwrap();
        for seq in 1..=events {
            journal.append(&record(4, seq)).unwrap();
        }
        assert!(
            journal.batches.len() >= 2,
            "full batches written before the flush"
        );
        journal.flush().unwrap();
    }
    let first = Journal::open(dir.path()).unwrap();
    let batches = first.batches.len();
    first.append(&record(4, events + 1)).unwrap();
    first.flush().unwrap();
    assert_eq!(
        first.batches.len(),
        batches + 1,
        "a new key, after the last"
    );
    let seqs: Vec<u64> = first
        .seqs(BoardNo(4))
        .unwrap()
        .iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(seqs, (1..=events + 1).collect::<Vec<_>>());
    let replayed: Vec<u64> = first.replay().map(|r| r.unwrap().event.seq.0).collect();
    assert_eq!(replayed, seqs, "in the order written");
}

#[test]
fn replay_after_leaves_out_each_boards_events_up_to_its_mark() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    for board in [1, 2, 3] {
        for seq in 1..=5 {
            journal.append(&record(board, seq)).unwrap();
        }
    }
    journal.flush().unwrap();
    let after = [(BoardNo(1), Seq(3)), (BoardNo(3), Seq(5))].into();
    let replayed: Vec<(u16, u64)> = journal
        .replay_after(after)
        .map(|r| {
            let r = r.unwrap();
            (r.event.board.0, r.event.seq.0)
        })
        .collect();
    assert_eq!(
        replayed,
        [(1, 4), (1, 5), (2, 1), (2, 2), (2, 3), (2, 4), (2, 5)]
    );
    let heads: Vec<(u16, u64)> = journal
        .heads(&[(BoardNo(3), Seq(2)), (BoardNo(9), Seq(4))].into())
        .map(|r| {
            let r = r.unwrap();
            (r.event.board.0, r.event.seq.0)
        })
        .collect();
    assert_eq!(heads, [(3, 1), (3, 2)]);
}

#[test]
fn a_damaged_record_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    journal
        .events
        .insert(key(BoardNo(1), Seq(1)), single_value(1001, &wire(1, 1)))
        .unwrap();
    journal
        .events
        .insert(key(BoardNo(1), Seq(2)), &[JOURNAL_FORMAT, 0, 0][..])
        .unwrap();
    let results: Vec<_> = journal.replay().collect();
    assert!(results[0].is_ok());
    assert!(matches!(
        results[1],
        Err(StoreError::Unreadable {
            board: BoardNo(1),
            seq: Seq(2),
            ..
        })
    ));
}

fn wire(board: u16, seq: u64) -> Vec<u8> {
    codec::encode_uplink(&record(board, seq).event)
}

#[test]
fn a_damaged_event_in_a_batch_is_an_error_in_its_place_and_a_broken_batch_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    let mut batch = Batch::default();
    batch.push(BoardNo(1), Seq(1), 1001, &wire(1, 1));
    batch.push(BoardNo(1), Seq(2), 1002, &[0xff, 0xde, 0xad]);
    batch.push(BoardNo(1), Seq(3), 1003, &wire(1, 3));
    journal
        .batches
        .insert(1u64.to_be_bytes(), batch.take())
        .unwrap();
    journal
        .batches
        .insert(2u64.to_be_bytes(), &[batch::FORMAT, 0, 1][..])
        .unwrap();
    let results: Vec<_> = journal.replay().collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(results[0].as_ref().unwrap(), &record(1, 1));
    assert!(matches!(
        results[1],
        Err(StoreError::Unreadable {
            board: BoardNo(1),
            seq: Seq(2),
            ..
        })
    ));
    assert_eq!(results[2].as_ref().unwrap(), &record(1, 3));
    assert!(matches!(
        results[3],
        Err(StoreError::UnreadableBatch { batch: 2, .. })
    ));
}

/// Round start `ordinal` of every board in `after`, keeping their nodes.
fn round_start(ordinal: u32, after: &[(u16, u64)]) -> RoundStart {
    RoundStart {
        ordinal,
        round: crate::core::ids::RoundNo(ordinal as u16),
        section: None,
        at: HubMs(1),
        by: "IA Berg".into(),
        forced: false,
        after: after.iter().map(|(b, s)| (BoardNo(*b), Seq(*s))).collect(),
        nodes: after
            .iter()
            .map(|(b, _)| (BoardNo(*b), Default::default()))
            .collect(),
        undoes: None,
    }
}

fn by_board(records: impl Iterator<Item = Result<Record, StoreError>>) -> BTreeMap<u16, Vec<u64>> {
    let mut boards: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for record in records {
        let record = record.unwrap();
        boards
            .entry(record.event.board.0)
            .or_default()
            .push(record.event.seq.0);
    }
    boards
}

#[test]
fn a_finished_rounds_events_leave_sled_for_the_archive_and_still_replay_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let round_one = STREAM_HEAD + 300;
    {
        let journal = Journal::open(dir.path()).unwrap();
        for seq in 1..=round_one {
            for board in [1, 2] {
                journal.append(&record(board, seq)).unwrap();
            }
        }
        // Board 3 joined late: its events of round 1 are all its head.
        journal.append(&record(3, 1)).unwrap();
        let start = round_start(2, &[(1, round_one), (2, round_one), (3, 1)]);
        journal.write(&Write::RoundStart(start)).unwrap();
        for seq in round_one + 1..=round_one + 50 {
            journal.append(&record(1, seq)).unwrap();
        }
        journal.flush().unwrap();
        assert!(dir.path().join("events/00000000").is_dir());
        let archived = journal.archive_finished().unwrap();
        assert_eq!(archived.len(), 1);
        assert_eq!(archived[0].ordinal, 0);
        assert_eq!(archived[0].events, 2 * 300, "beyond the heads, which stay");
        assert!(!dir.path().join("events/00000000").exists(), "out of sled");
        assert!(
            journal.archive_finished().unwrap().is_empty(),
            "the round in play stays"
        );
    }
    let journal = Journal::open(dir.path()).unwrap();
    let all = by_board(journal.replay());
    assert_eq!(all[&1], (1..=round_one + 50).collect::<Vec<_>>());
    assert_eq!(all[&2], (1..=round_one).collect::<Vec<_>>());
    assert_eq!(all[&3], [1]);
    let marks = [
        (BoardNo(1), Seq(round_one)),
        (BoardNo(2), Seq(round_one)),
        (BoardNo(3), Seq(1)),
    ];
    let resumed = by_board(journal.replay_after(marks.into()));
    assert_eq!(resumed.len(), 1);
    assert_eq!(
        resumed[&1],
        (round_one + 1..=round_one + 50).collect::<Vec<_>>()
    );
    let marks = marks.into();
    assert_eq!(journal.heads(&marks).count() as u64, 2 * STREAM_HEAD + 1);
    assert_eq!(journal.seqs(BoardNo(2)).unwrap().len() as u64, round_one);
    let archived = journal.record(BoardNo(2), Seq(round_one)).unwrap().unwrap();
    assert_eq!(archived, record(2, round_one));
}

#[test]
fn a_round_not_finished_on_every_board_stays_in_sled() {
    // A section started its next round; the other still plays on board 2.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    for seq in 1..=STREAM_HEAD + 10 {
        for board in [1, 2] {
            journal.append(&record(board, seq)).unwrap();
        }
    }
    let start = round_start(1, &[(1, STREAM_HEAD + 10)]);
    journal.write(&Write::RoundStart(start)).unwrap();
    journal.flush().unwrap();
    assert!(journal.archive_finished().unwrap().is_empty());
    assert!(dir.path().join("events/00000000").is_dir());
    assert_eq!(
        journal.seqs(BoardNo(2)).unwrap().len() as u64,
        STREAM_HEAD + 10
    );
}

/// Board `board`'s events `seqs` as the journal stored them one per record, in `tree`.
fn write_single(tree: &sled::Tree, board: u16, seqs: std::ops::RangeInclusive<u64>) {
    for seq in seqs {
        let record = record(board, seq);
        let value = single_value(record.at.0, &codec::encode_uplink(&record.event));
        tree.insert(key(BoardNo(board), Seq(seq)), value).unwrap();
    }
}

#[test]
fn a_journal_written_before_the_round_databases_still_reads_in_order() {
    // Before, every event went to the main database's `journal` tree, one record each; a
    // hub upgraded mid-event goes on after them.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    let old = STREAM_HEAD + 100;
    write_single(&journal.events, 7, 1..=old);
    for seq in old + 1..=old + 20 {
        journal.append(&record(7, seq)).unwrap();
    }
    journal.flush().unwrap();
    let all = by_board(journal.replay());
    assert_eq!(all[&7], (1..=old + 20).collect::<Vec<_>>());
    let resumed = by_board(journal.replay_after([(BoardNo(7), Seq(old - 5))].into()));
    assert_eq!(resumed[&7], (old - 4..=old + 20).collect::<Vec<_>>());
}

#[test]
fn a_journal_of_one_record_per_event_goes_on_in_batches_and_archives_both() {
    // Before batches, each event was a record of its own: the heads in the main
    // database, the rest in the round's. A hub upgraded mid-round goes on in batches.
    let dir = tempfile::tempdir().unwrap();
    let last = STREAM_HEAD + 40;
    {
        let journal = Journal::open(dir.path()).unwrap();
        write_single(&journal.events, 5, 1..=STREAM_HEAD - 10);
        write_single(
            &journal.hot.current().tree,
            6,
            STREAM_HEAD + 1..=STREAM_HEAD + 20,
        );
        for seq in STREAM_HEAD - 9..=last {
            journal.append(&record(5, seq)).unwrap();
        }
        journal.flush().unwrap();
    }
    let journal = Journal::open(dir.path()).unwrap();
    let all = by_board(journal.replay());
    assert_eq!(all[&5], (1..=last).collect::<Vec<_>>());
    assert_eq!(all[&6].len(), 20);
    let marks = [(BoardNo(5), Seq(STREAM_HEAD - 12))].into();
    let heads: Vec<u64> = journal
        .heads(&marks)
        .map(|r| r.unwrap().event.seq.0)
        .collect();
    assert_eq!(heads, (1..=STREAM_HEAD - 12).collect::<Vec<_>>());
    let resumed = by_board(journal.replay_after(marks));
    assert_eq!(resumed[&5], (STREAM_HEAD - 11..=last).collect::<Vec<_>>());

    let start = round_start(1, &[(5, last), (6, STREAM_HEAD + 20)]);
    journal.write(&Write::RoundStart(start)).unwrap();
    journal.flush().unwrap();
    let archived = journal.archive_finished().unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!(
        archived[0].events,
        40 + 20,
        "one entry per event, both layouts"
    );
    let all = by_board(journal.replay());
    assert_eq!(all[&5], (1..=last).collect::<Vec<_>>());
    assert_eq!(
        journal.record(BoardNo(5), Seq(last)).unwrap().unwrap(),
        record(5, last)
    );
}

/// What this thread has handed to `write`/`pwrite` so far (Linux's per-thread I/O count).
#[cfg(target_os = "linux")]
fn bytes_written_by_this_thread() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("wchar: "))
        .and_then(|n| n.parse().ok())
        .unwrap()
}

/// The vendored sled's patch: a flush writes the log on the thread that flushes, not
/// through sled's IO pool (two thread wake-ups a flush, a thousand flushes a second).
#[cfg(target_os = "linux")]
#[test]
fn a_flush_writes_the_log_on_the_flushing_thread() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    journal.flush().unwrap();
    for seq in 1..=STREAM_HEAD + 200 {
        journal.append(&record(7, seq)).unwrap();
    }
    let before = bytes_written_by_this_thread();
    assert!(journal.flush().unwrap() > 0, "something to write");
    let written = bytes_written_by_this_thread() - before;
    // Each record is some twenty bytes in its batch.
    assert!(
        written >= 2_000,
        "the flushing thread wrote {written} bytes itself"
    );
}

/// What sled keeps of each write is what [`kept`] says (the bytes the cluster's stream
/// carries too), and reads back as the write.
#[test]
fn every_write_is_kept_as_its_one_format_says() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    let hardware = |id: &str| HardwareId(id.into());
    let writes = [
        Write::Binding {
            hardware: hardware("dgt-4411"),
            board: Some(BoardNo(3)),
        },
        Write::Enrolment {
            hardware: hardware("dgt-4411"),
            key: Some(NodeKey::from_bytes([7; 32])),
        },
        Write::Arbiter {
            name: "Åse Berg".into(),
            member: Some(Member {
                key: NodeKey::from_bytes([9; 32]),
                zones: vec!["B".into()],
                language: Some(Language::Norwegian),
                renewed: 1,
            }),
        },
        Write::RoundStart(round_start(1, &[(1, 4)])),
        Write::Binding {
            hardware: hardware("dgt-9"),
            board: None,
        },
    ];
    for write in &writes {
        journal.write(write).unwrap();
    }
    for write in &writes {
        let Kept::Entry { tree, key, value } = kept(write) else {
            panic!("no event here")
        };
        let stored = journal.tree(tree).get(&key).unwrap().map(|v| v.to_vec());
        assert_eq!(stored, value, "{}", tree.name());
        assert_eq!(&write_of(tree, &key, stored.as_deref()).unwrap(), write);
    }
    assert_eq!(journal.bindings().unwrap().len(), 1);
    assert_eq!(journal.arbiters().unwrap()["Åse Berg"].zones, ["B"]);
    assert_eq!(journal.rounds().count(), 1);
}
