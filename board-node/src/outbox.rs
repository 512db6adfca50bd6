//! The durable outbox: every event is stored with its sequence number before it is
//! published, and kept until the hub acknowledges that its journal holds it.
//!
//! MQTT's QoS cannot promise that nothing is lost (a PUBACK means "in the broker's memory",
//! and rumqttc drops its pending queue on a clean reconnect), so the node resends from here
//! until the hub's application-level `Ack` arrives; events go at QoS 0, as that `Ack` is the
//! only acknowledgement that means anything.
//!
//! Layout in one sled tree: `e` + seq (8 bytes, big-endian) → the encoded wire message;
//! `m:…` → counters. An event and the counters that move with it are written in one atomic
//! batch and flushed before the event may be published.

use std::path::Path;

use protocol::{codec, BoardNo, NodeMs, Seq, Uplink, UplinkBody};

const EVENT_PREFIX: &[u8] = b"e";
const NEXT_SEQ: &[u8] = b"m:next_seq";
const ACKED: &[u8] = b"m:acked";
const CURSOR: &[u8] = b"m:cursor";
const EPOCH: &[u8] = b"m:epoch_ms";
const BOARD: &[u8] = b"m:board";
const SCRIPT: &[u8] = b"m:script";
const LAST_MS: &[u8] = b"m:last_ms";

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("outbox database: {0}")]
    Sled(#[from] sled::Error),
    /// The outbox directory was used by a node of another board.
    #[error("this outbox belongs to board {stored}, not board {wanted}")]
    OtherBoard { stored: u16, wanted: u16 },
    /// A stored event does not decode.
    #[error("outbox event {0} is damaged")]
    DamagedEvent(u64),
    /// A stored counter does not have 8 bytes.
    #[error("outbox counter {0} is damaged")]
    DamagedCounter(&'static str),
}

/// What an acknowledgement did to the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acked {
    /// This many events were forgotten.
    Trimmed(usize),
    /// Nothing new: they were forgotten already.
    Stale,
    /// It names events beyond the highest ever assigned: refused, nothing forgotten.
    NeverSent { highest: Seq },
}

pub struct Outbox {
    db: sled::Db,
    tree: sled::Tree,
    board: BoardNo,
}

impl Outbox {
    /// Opens (or creates) the outbox of `board` in `dir`.
    pub fn open(dir: &Path, board: BoardNo) -> Result<Outbox, OutboxError> {
        let db = sled::open(dir)?;
        let tree = db.open_tree("outbox")?;
        match tree.get(BOARD)? {
            Some(stored) => {
                let stored = u16::from_be_bytes(
                    stored
                        .as_ref()
                        .try_into()
                        .map_err(|_| OutboxError::DamagedCounter("board"))?,
                );
                if stored != board.0 {
                    return Err(OutboxError::OtherBoard {
                        stored,
                        wanted: board.0,
                    });
                }
            }
            None => {
                tree.insert(BOARD, &board.0.to_be_bytes())?;
                db.flush()?;
            }
        }
        Ok(Outbox { db, tree, board })
    }

    /// Assigns the next sequence number to `body`, stores it durably together with the
    /// source position `cursor` it leaves the node at, and returns the message to publish.
    pub fn push(
        &self,
        node_ms: NodeMs,
        body: UplinkBody,
        cursor: Option<u64>,
    ) -> Result<Uplink, OutboxError> {
        let seq = Seq(self.counter(NEXT_SEQ, "next_seq")?.max(1));
        let event = Uplink::new(self.board, seq, node_ms, body);
        let mut batch = sled::Batch::default();
        batch.insert(event_key(seq).to_vec(), codec::encode_uplink(&event));
        batch.insert(NEXT_SEQ, &(seq.0 + 1).to_be_bytes());
        batch.insert(LAST_MS, &node_ms.0.to_be_bytes());
        if let Some(cursor) = cursor {
            batch.insert(CURSOR, &cursor.to_be_bytes());
        }
        self.tree.apply_batch(batch)?;
        self.db.flush()?;
        Ok(event)
    }

    /// Forgets every event up to `up_to`, unless `up_to` names events this outbox never
    /// assigned: only a stranger sends that (the hub acknowledges what it journaled), and
    /// taking it would make the node forget events the hub does not have.
    pub fn ack(&self, up_to: Seq) -> Result<Acked, OutboxError> {
        if up_to.0 <= self.acked()?.0 {
            return Ok(Acked::Stale);
        }
        let highest = self.highest_seq()?;
        if up_to > highest {
            return Ok(Acked::NeverSent { highest });
        }
        let mut batch = sled::Batch::default();
        let mut removed = 0;
        for key in self.tree.range(event_key(Seq(0))..=event_key(up_to)).keys() {
            batch.remove(key?);
            removed += 1;
        }
        batch.insert(ACKED, &up_to.0.to_be_bytes());
        self.tree.apply_batch(batch)?;
        self.db.flush()?;
        Ok(Acked::Trimmed(removed))
    }

    /// The hub holds the board's events up to `seq - 1` from another node: renumbers every
    /// unacknowledged event from `seq` on, in one atomic batch. Returns how many moved;
    /// nothing moves when `seq` is not beyond what the hub acknowledged (a stale request).
    pub fn continue_at(&self, seq: Seq) -> Result<usize, OutboxError> {
        let acked = self.acked()?;
        if seq.0 <= acked.0 + 1 {
            return Ok(0);
        }
        let events = self.unacked_from(Seq(0), usize::MAX)?;
        let mut batch = sled::Batch::default();
        let mut next = seq.0;
        for (old, bytes) in &events {
            batch.remove(event_key(*old).to_vec());
            let mut event =
                codec::decode_uplink(bytes).map_err(|_| OutboxError::DamagedEvent(old.0))?;
            event.seq = Seq(next);
            batch.insert(event_key(Seq(next)).to_vec(), codec::encode_uplink(&event));
            next += 1;
        }
        batch.insert(NEXT_SEQ, &next.to_be_bytes());
        batch.insert(ACKED, &(seq.0 - 1).to_be_bytes());
        self.tree.apply_batch(batch)?;
        self.db.flush()?;
        Ok(events.len())
    }

    /// Up to `limit` unacknowledged encoded events from `from` on, in order.
    pub fn unacked_from(
        &self,
        from: Seq,
        limit: usize,
    ) -> Result<Vec<(Seq, Vec<u8>)>, OutboxError> {
        let mut out = Vec::new();
        for entry in self
            .tree
            .range(event_key(from)..=event_key(Seq(u64::MAX)))
            .take(limit)
        {
            let (key, value) = entry?;
            let seq = u64::from_be_bytes(key[1..].try_into().expect("9-byte event key"));
            out.push((Seq(seq), value.to_vec()));
        }
        Ok(out)
    }

    /// The lowest sequence number not yet acknowledged, if any event waits.
    pub fn oldest_unacked(&self) -> Result<Option<Seq>, OutboxError> {
        Ok(self.unacked_from(Seq(0), 1)?.first().map(|(seq, _)| *seq))
    }

    /// The highest sequence number assigned so far (0 if none).
    pub fn highest_seq(&self) -> Result<Seq, OutboxError> {
        Ok(Seq(self.counter(NEXT_SEQ, "next_seq")?.saturating_sub(1)))
    }

    /// The highest sequence number the hub acknowledged (0 if none).
    pub fn acked(&self) -> Result<Seq, OutboxError> {
        Ok(Seq(self.counter(ACKED, "acked")?))
    }

    /// How many readings of the source were turned into events so far.
    pub fn cursor(&self) -> Result<u64, OutboxError> {
        self.counter(CURSOR, "cursor")
    }

    /// The node time at which the source started; set once, kept across restarts so that
    /// timestamps stay in one timeline.
    pub fn epoch(&self, now: NodeMs) -> Result<NodeMs, OutboxError> {
        match self.tree.get(EPOCH)? {
            Some(_) => Ok(NodeMs(self.counter(EPOCH, "epoch")?)),
            None => {
                self.tree.insert(EPOCH, &now.0.to_be_bytes())?;
                self.db.flush()?;
                Ok(now)
            }
        }
    }

    /// The node plays the script `id` (a replay's file and game): another than the one it
    /// played starts from its first reading on a new timeline from `now`; the same one
    /// resumes. The sequence numbers go on either way: a board's node plays every round's
    /// game through one outbox.
    pub fn begin_script(&self, id: &str, now: NodeMs) -> Result<(), OutboxError> {
        if self.tree.get(SCRIPT)?.as_deref() == Some(id.as_bytes()) {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        batch.insert(SCRIPT, id.as_bytes());
        batch.insert(CURSOR, &0u64.to_be_bytes());
        // A new timeline, after the last one's times (a replay's game time runs ahead of
        // the wall clock): the node's clock never steps back.
        let last = self.counter(LAST_MS, "last_ms")?;
        batch.insert(EPOCH, &now.0.max(last + 1).to_be_bytes());
        self.tree.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    fn counter(&self, key: &[u8], name: &'static str) -> Result<u64, OutboxError> {
        match self.tree.get(key)? {
            None => Ok(0),
            Some(bytes) => Ok(u64::from_be_bytes(
                bytes
                    .as_ref()
                    .try_into()
                    .map_err(|_| OutboxError::DamagedCounter(name))?,
            )),
        }
    }
}

fn event_key(seq: Seq) -> [u8; 9] {
    let mut key = [0; 9];
    key[0] = EVENT_PREFIX[0];
    key[1..].copy_from_slice(&seq.0.to_be_bytes());
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens the outbox again in the same process: sled releases the directory's lock a
    /// little after the last handle is dropped (its flusher thread ends), so a reopen may
    /// have to wait for it.
    fn reopen(dir: &Path, board: BoardNo) -> Result<Outbox, OutboxError> {
        for _ in 0..100 {
            match Outbox::open(dir, board) {
                Err(OutboxError::Sled(_)) => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                other => return other,
            }
        }
        Outbox::open(dir, board)
    }

    #[test]
    fn a_new_script_starts_over_on_a_later_timeline_and_numbers_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::open(dir.path(), BoardNo(3)).unwrap();
        outbox.begin_script("round-1.pgn#1", NodeMs(1_000)).unwrap();
        assert_eq!(outbox.epoch(NodeMs(5)).unwrap(), NodeMs(1_000));
        // A replay's game time runs ahead of the wall clock.
        outbox
            .push(NodeMs(9_000_000), UplinkBody::Heartbeat, Some(40))
            .unwrap();
        // The same script resumes where it was.
        outbox.begin_script("round-1.pgn#1", NodeMs(2_000)).unwrap();
        assert_eq!(outbox.cursor().unwrap(), 40);
        // The next round's game starts from its first reading, after the last time sent.
        outbox.begin_script("round-2.pgn#4", NodeMs(3_000)).unwrap();
        assert_eq!(outbox.cursor().unwrap(), 0);
        assert_eq!(outbox.epoch(NodeMs(5)).unwrap(), NodeMs(9_000_001));
        let next = outbox
            .push(NodeMs(9_000_001), UplinkBody::Heartbeat, Some(1))
            .unwrap();
        assert_eq!(next.seq, Seq(2), "the sequence goes on");
    }

    #[test]
    fn sequence_numbers_survive_a_restart_and_acks_trim() {
        let dir = tempfile::tempdir().unwrap();
        {
            let outbox = Outbox::open(dir.path(), BoardNo(3)).unwrap();
            for i in 0..5 {
                let e = outbox
                    .push(NodeMs(i), UplinkBody::Heartbeat, Some(i + 1))
                    .unwrap();
                assert_eq!(e.seq, Seq(i + 1));
            }
            assert_eq!(outbox.ack(Seq(2)).unwrap(), Acked::Trimmed(2));
        }
        let outbox = reopen(dir.path(), BoardNo(3)).unwrap();
        assert_eq!(outbox.highest_seq().unwrap(), Seq(5));
        assert_eq!(outbox.acked().unwrap(), Seq(2));
        assert_eq!(outbox.cursor().unwrap(), 5);
        assert_eq!(outbox.oldest_unacked().unwrap(), Some(Seq(3)));
        let pending: Vec<_> = outbox
            .unacked_from(Seq(1), 10)
            .unwrap()
            .into_iter()
            .map(|(s, bytes)| (s, codec::decode_uplink(&bytes).unwrap().seq))
            .collect();
        assert_eq!(
            pending,
            [(Seq(3), Seq(3)), (Seq(4), Seq(4)), (Seq(5), Seq(5))]
        );
        assert_eq!(
            outbox
                .push(NodeMs(9), UplinkBody::Heartbeat, None)
                .unwrap()
                .seq,
            Seq(6)
        );
        assert_eq!(
            outbox.ack(Seq(1)).unwrap(),
            Acked::Stale,
            "an old ack changes nothing"
        );
    }

    /// A forged `Ack { up_to_seq: 1000000 }` made a node forget every event it held and
    /// never send another; the outbox now refuses an acknowledgement of what it never sent.
    #[test]
    fn an_ack_beyond_what_was_ever_sent_forgets_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::open(dir.path(), BoardNo(2)).unwrap();
        for i in 0..4 {
            outbox.push(NodeMs(i), UplinkBody::Heartbeat, None).unwrap();
        }
        assert_eq!(
            outbox.ack(Seq(1_000_000)).unwrap(),
            Acked::NeverSent { highest: Seq(4) }
        );
        assert_eq!(outbox.acked().unwrap(), Seq(0));
        assert_eq!(outbox.oldest_unacked().unwrap(), Some(Seq(1)));
        assert_eq!(outbox.ack(Seq(4)).unwrap(), Acked::Trimmed(4));
        let next = outbox.push(NodeMs(9), UplinkBody::Heartbeat, None).unwrap();
        assert_eq!(next.seq, Seq(5), "numbering goes on after the refused ack");
    }

    #[test]
    fn continuing_at_the_hubs_number_renumbers_what_waits_and_what_comes() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::open(dir.path(), BoardNo(3)).unwrap();
        for _ in 0..3 {
            outbox.push(NodeMs(1), UplinkBody::Heartbeat, None).unwrap();
        }
        outbox.ack(Seq(1)).unwrap();
        assert_eq!(outbox.continue_at(Seq(501)).unwrap(), 2);
        let waiting = outbox.unacked_from(Seq(0), 10).unwrap();
        let seqs: Vec<u64> = waiting.iter().map(|(s, _)| s.0).collect();
        assert_eq!(seqs, [501, 502]);
        let decoded = codec::decode_uplink(&waiting[1].1).unwrap();
        assert_eq!(
            decoded.seq,
            Seq(502),
            "the message itself carries the new number"
        );
        assert_eq!(outbox.acked().unwrap(), Seq(500));
        let next = outbox.push(NodeMs(2), UplinkBody::Heartbeat, None).unwrap();
        assert_eq!(next.seq, Seq(503));
        // A stale request (at or below what is acknowledged) moves nothing.
        assert_eq!(outbox.continue_at(Seq(400)).unwrap(), 0);
        assert_eq!(outbox.highest_seq().unwrap(), Seq(503));
    }

    #[test]
    fn an_outbox_refuses_another_board() {
        let dir = tempfile::tempdir().unwrap();
        drop(Outbox::open(dir.path(), BoardNo(3)).unwrap());
        assert!(matches!(
            reopen(dir.path(), BoardNo(4)),
            Err(OutboxError::OtherBoard {
                stored: 3,
                wanted: 4
            })
        ));
    }
}
