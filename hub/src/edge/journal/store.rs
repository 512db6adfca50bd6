//! The journal: every accepted board event, durable in sled 0.34.
//!
//! The events go to tree `batches`, one record for the events appended between two flushes
//! (or a few, each at most [`batch::SEAL_BYTES`]), in the order accepted: each
//! board's in sequence ([`super::batch`] has the format). Before batches each event
//! was a record of its own in tree `journal`, still read first: key = board number (2
//! bytes, big-endian) then sequence number (8 bytes, big-endian), value = a format byte, the
//! hub's receive time (8 bytes, big-endian), then the event in its wire encoding (the
//! postcard layout frozen by the protocol's golden tests). A round's archive keeps that
//! layout, one entry per event.
//!
//! The arbiter's decisions go to a second tree, `decisions`: key = the decision's id (8
//! bytes, big-endian), value = a format byte and the [`DecisionRecord`] as JSON (a record an
//! auditor may read with any tool; decisions are rare). Each names the board event it
//! follows, so replay folds it in at the same place.
//!
//! Arbiter alerts go to a third tree, `alerts`: key = the alert's id (8 bytes, big-endian),
//! value = a format byte and the [`Alert`] as JSON, its latest state with its history.
//! Replay restores them as stored; the board events replayed after them raise only
//! incidents that have no alert (a crash between an event and its alert's write).
//!
//! The technician's bindings of nodes to boards made over the API go to a fourth tree,
//! `bindings`: key = the e-board's hardware id, value = the board (2 bytes, big-endian).
//!
//! The keys of the enrolled nodes go to a fifth tree, `enrolments`: key = the hardware id,
//! value = the node's key (32 bytes); a revoked key is removed. The data directory is as
//! secret as the keys it holds.
//!
//! Rounds go to a sixth tree, `rounds`: key = the start's ordinal (8 bytes, big-endian),
//! value = a format byte and the [`RoundStart`] as JSON, with every board's last event at
//! the start. The games of rounds that are over go to a seventh, `games`: key = round
//! (2 bytes) then board (2 bytes), big-endian, value = a format byte and the [`PlayedGame`]
//! as JSON, its latest state (a result declared after the round replaces it).
//!
//! The enrolled arbiters go to an eighth, `arbiters`: key = the arbiter's name (UTF-8),
//! value = their key (32 bytes), then, when the enrolment named them, their zones and
//! language as JSON (`{"zones": ["C"], "language": "nb"}`); a revoked arbiter is removed.
//!
//! Events beyond each board's first [`STREAM_HEAD`] go to the events database of the rounds
//! in play ([`super::hot_events`]), one per round start, in the same two trees; the main
//! database's keep each board's head (and every event written before that layout). When
//! an events database holds finished rounds only, [`Journal::archive_finished`] turns it
//! into a compressed file ([`super::round_archive`]) and removes it.
//!
//! Appends only reach the batch being filled and sled's buffers; [`Journal::flush`] writes
//! the batches and makes them durable. Nothing is acknowledged to a node before that (see
//! [`super::flusher`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use protocol::seal::{NodeKey, KEY_LEN as KEY_LEN_NODE};
use protocol::{codec, BoardNo, Seq};

use crate::core::alerts::Alert;
use crate::core::arbiter::DecisionRecord;
use crate::core::archive::PlayedGame;
use crate::core::hub::{Hub, Write, STREAM_HEAD};
use crate::core::ids::HardwareId;
use crate::core::record::Record;
use crate::core::roster::Member;
use crate::core::rounds::RoundStart;

use super::batch::Batch;
use super::error::StoreError;
use super::hot_events::HotEvents;
use super::round_archive::{Archived, RoundArchive};
use super::trees::{
    self, after_marks, all_before_marks, batched, batches_before_marks, decoded, json_entries,
    last_batch, one_per_event,
};
use super::write_codec::{
    board_of, decode, kept, key, node_key_of, parse_key, read_member, Kept, Tree, ALERT_FORMAT,
    DECISION_FORMAT, GAME_FORMAT, ROUND_FORMAT,
};

/// The pages sled keeps in memory for the main database: its trees are read once, at a
/// start, and written an alert or a head at a time (the round's events have their own).
const CACHE_BYTES: u64 = 16 * 1024 * 1024;
/// A probe's size: room for a few hundred events at least before the hall is rebuilt.
const PROBE_BYTES: usize = 256 * 1024;
/// The meta tree's key of the stream's sequence number on a cluster.
const STREAM_SEQ: &[u8] = b"stream_seq";

/// The events appended and not in a batch record yet: the heads (for the main database)
/// and the others (for the round's events database).
#[derive(Debug, Default)]
struct Pending {
    head: Batch,
    hot: Batch,
}

/// The trees of one sled database that hold events.
struct EventTrees {
    /// One record per event, as written before batches.
    single: sled::Tree,
    batches: sled::Tree,
}

/// The sled-backed journal. Cheap to clone: the flusher holds a clone.
#[derive(Clone)]
pub struct Journal {
    db: sled::Db,
    /// Each board's head as one record per event, as written before batches.
    events: sled::Tree,
    /// Each board's head, in batches.
    batches: sled::Tree,
    /// The events appended since the last batch was written.
    pending: Arc<Mutex<Pending>>,
    /// The next batch's key, in whichever database it goes.
    next_batch: Arc<AtomicU64>,
    decisions: sled::Tree,
    alerts: sled::Tree,
    bindings: sled::Tree,
    enrolments: sled::Tree,
    arbiters: sled::Tree,
    rounds: sled::Tree,
    games: sled::Tree,
    hot: HotEvents,
    archive: RoundArchive,
}

impl Journal {
    pub fn open(dir: &Path) -> Result<Journal, StoreError> {
        let db = sled::Config::new()
            .path(dir)
            // The flusher thread decides when to flush (group commit); sled's own timer
            // only adds a second, uncoordinated flusher (see NOTES: concurrent flushes).
            .flush_every_ms(None)
            // sled caches up to 1 GiB of pages by default, growing with every page written:
            // an append-mostly journal reads its pages once, at a start.
            .cache_capacity(CACHE_BYTES)
            .open()?;
        let events = db.open_tree("journal")?;
        let batches = db.open_tree("batches")?;
        let decisions = db.open_tree("decisions")?;
        let alerts = db.open_tree("alerts")?;
        let bindings = db.open_tree("bindings")?;
        let enrolments = db.open_tree("enrolments")?;
        let arbiters = db.open_tree("arbiters")?;
        let rounds = db.open_tree("rounds")?;
        let games = db.open_tree("games")?;
        let archive = RoundArchive::open(&dir.join("archive"))?;
        let hot = HotEvents::open(&dir.join("events"), |ordinal| archive.holds(ordinal))?;
        let mut last_batch = last_batch(&batches)?;
        for events_db in hot.all() {
            last_batch = last_batch.max(trees::last_batch(&events_db.batches)?);
        }
        Ok(Journal {
            db,
            events,
            batches,
            pending: Arc::default(),
            next_batch: Arc::new(AtomicU64::new(last_batch + 1)),
            decisions,
            alerts,
            bindings,
            enrolments,
            arbiters,
            rounds,
            games,
            hot,
            archive,
        })
    }

    /// The secret part of the hub's MQTT client id: random, made on the first start and kept
    /// with the journal, so a restarted hub resumes its persistent session while nobody on
    /// the network can guess the id and take the session (and the hall's uplinks) over.
    pub fn session_secret(&self) -> Result<String, StoreError> {
        const KEY: &[u8] = b"mqtt_session_secret";
        let meta = self.db.open_tree("meta")?;
        if let Some(secret) = meta.get(KEY)? {
            return Ok(String::from_utf8_lossy(&secret).into_owned());
        }
        let secret = format!("{:016x}", rand::random::<u64>());
        meta.insert(KEY, secret.as_bytes())?;
        self.db.flush()?;
        Ok(secret)
    }

    /// On a cluster: the journal stream's sequence number up to which this journal holds
    /// its records (0: none).
    pub fn stream_seq(&self) -> Result<u64, StoreError> {
        let meta = self.db.open_tree("meta")?;
        Ok(meta
            .get(STREAM_SEQ)?
            .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
            .map_or(0, u64::from_be_bytes))
    }

    /// Keeps the stream's sequence number the journal holds up to; durable with the
    /// records at the next flush.
    pub fn set_stream_seq(&self, seq: u64) -> Result<(), StoreError> {
        let meta = self.db.open_tree("meta")?;
        meta.insert(STREAM_SEQ, &seq.to_be_bytes())?;
        Ok(())
    }

    /// Whether the journal holds any of a hall's records (a board's event, a decision, a
    /// record of a cluster's stream): then its hall secret is no longer to be replaced.
    pub fn holds_records(&self) -> Result<bool, StoreError> {
        Ok(self.stream_seq()? > 0
            || self.replay().next().is_some()
            || self.decisions().next().is_some())
    }

    /// On a cluster: the hall's secrets as `hub cluster-join` brought them, in place of
    /// this journal's own, flushed.
    pub fn adopt_secrets(&self, hall: &NodeKey, session: &str) -> Result<(), StoreError> {
        let meta = self.db.open_tree("meta")?;
        meta.insert(b"hall_secret", hall.bytes().as_slice())?;
        meta.insert(b"mqtt_session_secret", session.as_bytes())?;
        self.db.flush()?;
        Ok(())
    }

    /// Buffers what the hub's core asked to write, as [`kept`] keeps it; durable after the
    /// next [`Journal::flush`].
    pub fn write(&self, write: &Write) -> Result<(), StoreError> {
        let (tree, key, value) = match kept(write) {
            Kept::Event(record) => return self.append(record),
            Kept::Entry { tree, key, value } => (tree, key, value),
        };
        if tree == Tree::Rounds {
            // The events before the start stay in the database of the rounds before.
            self.seal()?;
        }
        let tree = self.tree(tree);
        match value {
            Some(value) => tree.insert(key, value)?,
            None => tree.remove(key)?,
        };
        if let Write::RoundStart(start) = write {
            // The events after the start go to a database of their own, so that the
            // finished rounds' can leave sled whole.
            self.hot.switch(start.ordinal)?;
        }
        Ok(())
    }

    fn tree(&self, tree: Tree) -> &sled::Tree {
        match tree {
            Tree::Decisions => &self.decisions,
            Tree::Alerts => &self.alerts,
            Tree::Bindings => &self.bindings,
            Tree::Enrolments => &self.enrolments,
            Tree::Arbiters => &self.arbiters,
            Tree::Rounds => &self.rounds,
            Tree::Games => &self.games,
        }
    }

    /// Every round start, in order.
    pub fn rounds(&self) -> impl Iterator<Item = Result<RoundStart, StoreError>> + '_ {
        json_entries(&self.rounds, ROUND_FORMAT, |id, why| {
            StoreError::UnreadableRound { id, why }
        })
    }

    /// Every archived game, by round and board.
    pub fn games(&self) -> impl Iterator<Item = Result<PlayedGame, StoreError>> + '_ {
        json_entries(&self.games, GAME_FORMAT, |id, why| {
            StoreError::UnreadableGame { id, why }
        })
    }

    /// Whether the journal can take writes again: a probe of [`PROBE_BYTES`] written and
    /// flushed, then removed and flushed.
    pub fn probe(&self) -> Result<(), StoreError> {
        const KEY: &[u8] = b"write_probe";
        let meta = self.db.open_tree("meta")?;
        meta.insert(KEY, vec![0u8; PROBE_BYTES])?;
        self.db.flush()?;
        meta.remove(KEY)?;
        self.db.flush()?;
        Ok(())
    }

    /// Every enrolled node's key: hardware id → key.
    pub fn enrolments(&self) -> Result<BTreeMap<HardwareId, NodeKey>, StoreError> {
        self.enrolments
            .iter()
            .map(|entry| {
                let (id, value) = entry?;
                let key = node_key_of(&value).map_err(|_| StoreError::BadKey(value.len()))?;
                Ok((HardwareId(String::from_utf8_lossy(&id).into_owned()), key))
            })
            .collect()
    }

    /// Every enrolled arbiter: name → their enrolment.
    pub fn arbiters(&self) -> Result<BTreeMap<String, Member>, StoreError> {
        self.arbiters
            .iter()
            .map(|entry| {
                let (name, value) = entry?;
                let name = String::from_utf8_lossy(&name).into_owned();
                let member = read_member(&value).map_err(|why| StoreError::UnreadableArbiter {
                    name: name.clone(),
                    why,
                })?;
                Ok((name, member))
            })
            .collect()
    }

    /// The hall's own secret: random, made on the first start and kept with the journal.
    /// The hub's MQTT password and its signing key derive from it (docs/security.md, *In short*), so
    /// they survive restarts and are known to nobody else.
    pub fn hall_secret(&self) -> Result<NodeKey, StoreError> {
        const KEY: &[u8] = b"hall_secret";
        let meta = self.db.open_tree("meta")?;
        if let Some(secret) = meta.get(KEY)? {
            let bytes = <[u8; KEY_LEN_NODE]>::try_from(secret.as_ref())
                .map_err(|_| StoreError::BadKey(secret.len()))?;
            return Ok(NodeKey::from_bytes(bytes));
        }
        let bytes: [u8; KEY_LEN_NODE] = rand::random();
        meta.insert(KEY, bytes.as_slice())?;
        self.db.flush()?;
        Ok(NodeKey::from_bytes(bytes))
    }

    /// A new hall secret in place of the old one (`hub rotate-hall-secret`), flushed: the
    /// hub's signing key and its broker password change with it.
    pub fn rotate_hall_secret(&self) -> Result<NodeKey, StoreError> {
        let meta = self.db.open_tree("meta")?;
        let bytes: [u8; KEY_LEN_NODE] = rand::random();
        meta.insert(b"hall_secret", bytes.as_slice())?;
        self.db.flush()?;
        Ok(NodeKey::from_bytes(bytes))
    }

    /// Buffers a record in the batch being filled; read back and durable after the next
    /// [`Journal::flush`].
    pub fn append(&self, record: &Record) -> Result<(), StoreError> {
        let wire = codec::encode_uplink(&record.event);
        let in_head = record.event.seq.0 <= STREAM_HEAD;
        let full = {
            let mut pending = self.pending.lock().expect("not poisoned");
            let batch = if in_head {
                &mut pending.head
            } else {
                &mut pending.hot
            };
            batch.push(record.event.board, record.event.seq, record.at.0, &wire);
            batch.is_full().then(|| batch.take())
        };
        match full {
            Some(value) => self.insert_batch(in_head, value),
            None => Ok(()),
        }
    }

    /// Writes the batches being filled to sled's buffers.
    fn seal(&self) -> Result<(), StoreError> {
        let (head, hot) = {
            let mut pending = self.pending.lock().expect("not poisoned");
            (pending.head.take(), pending.hot.take())
        };
        if !head.is_empty() {
            self.insert_batch(true, head)?;
        }
        if !hot.is_empty() {
            self.insert_batch(false, hot)?;
        }
        Ok(())
    }

    /// Writes one batch record: the heads' to the main database, the others' to the
    /// round's events database.
    fn insert_batch(&self, head: bool, value: Vec<u8>) -> Result<(), StoreError> {
        let key = self
            .next_batch
            .fetch_add(1, Ordering::Relaxed)
            .to_be_bytes();
        if head {
            self.batches.insert(key, value)?;
        } else {
            self.hot.current().batches.insert(key, value)?;
        }
        Ok(())
    }

    /// Every decision, in the order taken.
    pub fn decisions(&self) -> impl Iterator<Item = Result<DecisionRecord, StoreError>> + '_ {
        json_entries(&self.decisions, DECISION_FORMAT, |id, why| {
            StoreError::UnreadableDecision { id, why }
        })
    }

    /// Every alert, by id.
    pub fn alerts(&self) -> impl Iterator<Item = Result<Alert, StoreError>> + '_ {
        json_entries(&self.alerts, ALERT_FORMAT, |id, why| {
            StoreError::UnreadableAlert { id, why }
        })
    }

    /// The technician's bindings made over the API: hardware id → board.
    pub fn bindings(&self) -> Result<std::collections::BTreeMap<HardwareId, BoardNo>, StoreError> {
        self.bindings
            .iter()
            .map(|entry| {
                let (key, value) = entry?;
                let board = board_of(&value).map_err(|_| StoreError::BadKey(value.len()))?;
                Ok((
                    HardwareId(String::from_utf8_lossy(&key).into_owned()),
                    board,
                ))
            })
            .collect()
    }

    /// The id the next decision takes: one more than the last stored.
    pub fn next_decision_id(&self) -> Result<u64, StoreError> {
        let last = self.decisions.last()?.and_then(|(key, _)| {
            <[u8; 8]>::try_from(key.as_ref())
                .ok()
                .map(u64::from_be_bytes)
        });
        Ok(last.map_or(1, |id| id + 1))
    }

    /// Makes every record appended before this call durable. Returns the bytes written.
    pub fn flush(&self) -> Result<usize, StoreError> {
        self.seal()?;
        Ok(self.hot.flush()? + self.db.flush()?)
    }

    /// Every record, each board's in sequence order (the boards interleave): the heads and
    /// the events from before the per-round layout, the archived rounds, then the rounds in
    /// play. Reads the archive: to rebuild or audit, not for a start.
    pub fn replay(&self) -> impl Iterator<Item = Result<Record, StoreError>> + '_ {
        let every = |_: BoardNo, _: Seq| true;
        let main = self
            .events
            .iter()
            .map(decoded)
            .chain(batched(&self.batches, every));
        let archived = self
            .archive
            .ordinals()
            .into_iter()
            .flatten()
            .flat_map(move |ordinal| match self.archive.entries(ordinal) {
                Ok(entries) => Box::new(entries.map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })) as Box<dyn Iterator<Item = _>>,
                Err(e) => Box::new(std::iter::once(Err(e))),
            });
        let hot = self.hot.all().into_iter().flat_map(move |db| {
            db.tree
                .iter()
                .map(decoded)
                .chain(batched(&db.batches, every))
        });
        main.chain(archived).chain(hot)
    }

    /// Every record, each board's in sequence order (the boards interleave), but those of a
    /// board up to its mark in `after` (where a restart resumes it): key ranges not read at
    /// all, and no archive. The rounds' archive holds only events up to the marks.
    pub fn replay_after(
        &self,
        after: BTreeMap<BoardNo, Seq>,
    ) -> impl Iterator<Item = Result<Record, StoreError>> + '_ {
        let after = Arc::new(after);
        self.sled_trees().into_iter().flat_map(move |trees| {
            let marks = Arc::clone(&after);
            let beyond = move |board, seq| marks.get(&board).is_none_or(|mark| seq > *mark);
            after_marks(&trees.single, &after).chain(batched(&trees.batches, beyond))
        })
    }

    /// The first events of each board in `marks`, up to its mark and at most
    /// [`STREAM_HEAD`] (a board's head, for telling another node's stream from a resend).
    pub fn heads(
        &self,
        marks: &BTreeMap<BoardNo, Seq>,
    ) -> impl Iterator<Item = Result<Record, StoreError>> + '_ {
        let up_to: BTreeMap<BoardNo, Seq> = marks
            .iter()
            .map(|(board, mark)| (*board, Seq(mark.0.min(STREAM_HEAD))))
            .collect();
        let single: Vec<_> = up_to
            .iter()
            .map(|(board, up_to)| key(*board, Seq(1))..=key(*board, *up_to))
            .collect();
        let single = single
            .into_iter()
            .flat_map(|range| self.events.range(range).map(decoded));
        let in_head = move |board, seq| up_to.get(&board).is_some_and(|up_to| seq <= *up_to);
        single.chain(batched(&self.batches, in_head))
    }

    /// The record journaled as `board`'s event `seq`, if any (the archive read too).
    pub fn record(&self, board: BoardNo, seq: Seq) -> Result<Option<Record>, StoreError> {
        let key = key(board, seq);
        for trees in self.sled_trees() {
            if let Some(value) = trees.single.get(key)? {
                return decode(&key, &value).map(Some);
            }
            let this = move |b, s| b == board && s == seq;
            if let Some(record) = batched(&trees.batches, this).next() {
                return record.map(Some);
            }
        }
        for record in self.archived_of(board) {
            let record = record?;
            if record.event.seq == seq {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// The sequence numbers journaled for one board, in order (the archive read too).
    pub fn seqs(&self, board: BoardNo) -> Result<Vec<Seq>, StoreError> {
        let mut seqs = Vec::new();
        for trees in self.sled_trees() {
            for key in trees.single.scan_prefix(board.0.to_be_bytes()).keys() {
                seqs.push(parse_key(&key?)?.1);
            }
            for record in batched(&trees.batches, move |b, _| b == board) {
                seqs.push(record?.event.seq);
            }
        }
        for record in self.archived_of(board) {
            seqs.push(record?.event.seq);
        }
        seqs.sort_unstable();
        Ok(seqs)
    }

    /// The trees in sled that hold events, oldest first: the main database's (each board's
    /// head, and every event written before the round databases), then the open events
    /// databases'.
    fn sled_trees(&self) -> Vec<EventTrees> {
        let main = EventTrees {
            single: self.events.clone(),
            batches: self.batches.clone(),
        };
        let hot = self.hot.all().into_iter().map(|db| EventTrees {
            single: db.tree,
            batches: db.batches,
        });
        std::iter::once(main).chain(hot).collect()
    }

    /// `board`'s archived records.
    fn archived_of(&self, board: BoardNo) -> impl Iterator<Item = Result<Record, StoreError>> + '_ {
        self.archive
            .ordinals()
            .into_iter()
            .flatten()
            .filter_map(|ordinal| self.archive.entries(ordinal).ok())
            .flatten()
            .filter(move |entry| {
                entry
                    .as_ref()
                    .map_or(true, |(key, _)| key[..2] == board.0.to_be_bytes())
            })
            .map(|entry| {
                let (key, value) = entry?;
                decode(&key, &value)
            })
    }

    /// Archives the events databases that hold finished rounds only (every board's events
    /// in them up to the mark where a restart resumes it), oldest first, and removes them
    /// from sled. Stops at the first that does not: the archive keeps the journal's order.
    pub fn archive_finished(&self) -> Result<Vec<Archived>, StoreError> {
        let rounds: Vec<RoundStart> = self.rounds().collect::<Result<_, _>>()?;
        let marks: BTreeMap<BoardNo, Seq> = Hub::resume_points(&rounds)
            .into_iter()
            .map(|(board, resume)| (board, resume.mark))
            .collect();
        let hot = self.hot.all();
        let mut archived = Vec::new();
        for db in &hot[..hot.len() - 1] {
            if !all_before_marks(&db.tree, &marks)? || !batches_before_marks(&db.batches, &marks)? {
                break;
            }
            let single = db.tree.iter().map(|entry| {
                let (key, value) = entry?;
                Ok((key.to_vec(), value.to_vec()))
            });
            let done = self
                .archive
                .write(db.ordinal, single.chain(one_per_event(&db.batches)))?;
            self.hot.remove(db.ordinal)?;
            tracing::info!(
                ordinal = done.ordinal,
                events = done.events,
                bytes = done.bytes,
                "finished rounds' events archived"
            );
            archived.push(done);
        }
        Ok(archived)
    }
}

#[cfg(test)]
mod tests;
