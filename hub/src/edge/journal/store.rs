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

use super::batch::{self, Batch};
use super::error::StoreError;
use super::hot_events::HotEvents;
use super::round_archive::{Archived, Entry, RoundArchive};
use super::write_codec::{
    decode, decode_event, key, member_value, parse_key, read_member, single_value,
};

/// The pages sled keeps in memory for the main database: its trees are read once, at a
/// start, and written an alert or a head at a time (the round's events have their own).
const CACHE_BYTES: u64 = 16 * 1024 * 1024;
/// A probe's size: room for a few hundred events at least before the hall is rebuilt.
const PROBE_BYTES: usize = 256 * 1024;
const DECISION_FORMAT: u8 = 1;
const ALERT_FORMAT: u8 = 1;
const ROUND_FORMAT: u8 = 1;
const GAME_FORMAT: u8 = 1;
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
            last_batch = last_batch.max(self::last_batch(&events_db.batches)?);
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

    /// Buffers what the hub's core asked to write; durable after the next
    /// [`Journal::flush`].
    pub fn write(&self, write: &Write) -> Result<(), StoreError> {
        match write {
            Write::Event(record) => self.append(record),
            Write::Decision(decision) => self.append_decision(decision),
            Write::Alert(alert) => self.put_alert(alert),
            Write::Binding { hardware, board } => self.put_binding(hardware, *board),
            Write::Enrolment { hardware, key } => self.put_enrolment(hardware, key.as_ref()),
            Write::Arbiter { name, member } => {
                match member {
                    Some(member) => self
                        .arbiters
                        .insert(name.as_bytes(), member_value(member))?,
                    None => self.arbiters.remove(name.as_bytes())?,
                };
                Ok(())
            }
            Write::RoundStart(start) => {
                // The events before the start stay in the database of the rounds before.
                self.seal()?;
                put_json(&self.rounds, ROUND_FORMAT, u64::from(start.ordinal), start)?;
                // The events after the start go to a database of their own, so that the
                // finished rounds' can leave sled whole.
                self.hot.switch(start.ordinal)
            }
            Write::Game(game) => {
                let id = u64::from(game.round.0) << 16 | u64::from(game.board.0);
                put_json(&self.games, GAME_FORMAT, id, game)
            }
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

    /// Keeps `hardware`'s key (`None`: removes it, revoked); durable after the next flush.
    pub fn put_enrolment(
        &self,
        hardware: &HardwareId,
        key: Option<&NodeKey>,
    ) -> Result<(), StoreError> {
        let id = hardware.as_str().as_bytes();
        match key {
            Some(key) => self.enrolments.insert(id, key.bytes().as_slice())?,
            None => self.enrolments.remove(id)?,
        };
        Ok(())
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
                let bytes = <[u8; KEY_LEN_NODE]>::try_from(value.as_ref())
                    .map_err(|_| StoreError::BadKey(value.len()))?;
                Ok((
                    HardwareId(String::from_utf8_lossy(&id).into_owned()),
                    NodeKey::from_bytes(bytes),
                ))
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
    /// The hub's MQTT password and its signing key derive from it (README, *Security*), so
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

    /// Buffers an arbiter's decision; durable after the next [`Journal::flush`].
    pub fn append_decision(&self, record: &DecisionRecord) -> Result<(), StoreError> {
        put_json(&self.decisions, DECISION_FORMAT, record.id.0, record)
    }

    /// Every decision, in the order taken.
    pub fn decisions(&self) -> impl Iterator<Item = Result<DecisionRecord, StoreError>> + '_ {
        json_entries(&self.decisions, DECISION_FORMAT, |id, why| {
            StoreError::UnreadableDecision { id, why }
        })
    }

    /// Buffers an alert's latest state; durable after the next [`Journal::flush`].
    pub fn put_alert(&self, alert: &Alert) -> Result<(), StoreError> {
        put_json(&self.alerts, ALERT_FORMAT, alert.id.0, alert)
    }

    /// Every alert, by id.
    pub fn alerts(&self) -> impl Iterator<Item = Result<Alert, StoreError>> + '_ {
        json_entries(&self.alerts, ALERT_FORMAT, |id, why| {
            StoreError::UnreadableAlert { id, why }
        })
    }

    /// Binds the node with e-board hardware `hardware` to `board` (`None`: unbinds it), as
    /// the technician did over the API; durable after the next flush.
    pub fn put_binding(
        &self,
        hardware: &HardwareId,
        board: Option<BoardNo>,
    ) -> Result<(), StoreError> {
        let key = hardware.as_str().as_bytes();
        match board {
            Some(board) => self.bindings.insert(key, &board.0.to_be_bytes())?,
            None => self.bindings.remove(key)?,
        };
        Ok(())
    }

    /// The technician's bindings made over the API: hardware id → board.
    pub fn bindings(&self) -> Result<std::collections::BTreeMap<HardwareId, BoardNo>, StoreError> {
        self.bindings
            .iter()
            .map(|entry| {
                let (key, value) = entry?;
                let board = <[u8; 2]>::try_from(value.as_ref())
                    .map(|b| BoardNo(u16::from_be_bytes(b)))
                    .map_err(|_| StoreError::BadKey(value.len()))?;
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

/// The records of `tree` but each board's up to its mark in `after`.
fn after_marks(
    tree: &sled::Tree,
    after: &BTreeMap<BoardNo, Seq>,
) -> impl Iterator<Item = Result<Record, StoreError>> {
    let mut ranges = Vec::new();
    let mut from = key(BoardNo(0), Seq(0));
    for (board, mark) in after {
        ranges.push(from..key(*board, Seq(0)));
        from = key(*board, Seq(mark.0.saturating_add(1)));
    }
    let tree = tree.clone();
    let last = tree.range(from..);
    ranges
        .into_iter()
        .map(move |range| tree.range(range))
        .chain(std::iter::once(last))
        .flatten()
        .map(decoded)
}

/// Whether every board's events in `tree` are up to its mark.
fn all_before_marks(tree: &sled::Tree, marks: &BTreeMap<BoardNo, Seq>) -> Result<bool, StoreError> {
    let mut from = key(BoardNo(0), Seq(0));
    while let Some((first, _)) = tree.range(from..).next().transpose()? {
        let (board, _) = parse_key(&first)?;
        let last = tree
            .scan_prefix(board.0.to_be_bytes())
            .next_back()
            .transpose()?
            .map(|(key, _)| parse_key(&key))
            .transpose()?;
        let Some((_, last)) = last else { break };
        if marks.get(&board).is_none_or(|mark| last > *mark) {
            return Ok(false);
        }
        let Some(next) = board.0.checked_add(1) else {
            break;
        };
        from = key(BoardNo(next), Seq(0));
    }
    Ok(true)
}

/// Whether every event in `tree`'s batches is up to its board's mark.
fn batches_before_marks(
    tree: &sled::Tree,
    marks: &BTreeMap<BoardNo, Seq>,
) -> Result<bool, StoreError> {
    for batch in tree.iter() {
        let (key, value) = batch?;
        let entries = batch::entries(&value).map_err(|why| unreadable_batch(&key, why))?;
        if entries
            .iter()
            .any(|e| marks.get(&e.board).is_none_or(|mark| e.seq > *mark))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `tree`'s batched events as a round's archive keeps them: one entry (key, value) each,
/// as the journal stored an event before batches.
fn one_per_event(tree: &sled::Tree) -> impl Iterator<Item = Result<Entry, StoreError>> {
    tree.iter().flat_map(|batch| {
        let entries: Vec<Result<Entry, StoreError>> = match batch {
            Err(e) => vec![Err(e.into())],
            Ok((key, value)) => match batch::entries(&value) {
                Ok(entries) => entries
                    .iter()
                    .map(|e| {
                        Ok((
                            self::key(e.board, e.seq).to_vec(),
                            single_value(e.at, e.wire),
                        ))
                    })
                    .collect(),
                Err(why) => vec![Err(unreadable_batch(&key, why))],
            },
        };
        entries
    })
}

/// The records of `tree`'s batches that `keep` (board, seq) keeps, in the order written.
/// An event that cannot be read is an error in its place; a batch whose framing is broken,
/// one error for all of it.
fn batched(
    tree: &sled::Tree,
    keep: impl Fn(BoardNo, Seq) -> bool,
) -> impl Iterator<Item = Result<Record, StoreError>> {
    tree.iter().flat_map(move |batch| {
        let records: Vec<Result<Record, StoreError>> = match batch {
            Err(e) => vec![Err(e.into())],
            Ok((key, value)) => match batch::entries(&value) {
                Ok(entries) => entries
                    .iter()
                    .filter(|e| keep(e.board, e.seq))
                    .map(|e| decode_event(e.board, e.seq, e.at, e.wire))
                    .collect(),
                Err(why) => vec![Err(unreadable_batch(&key, why))],
            },
        };
        records
    })
}

fn unreadable_batch(key: &[u8], why: String) -> StoreError {
    let batch = <[u8; 8]>::try_from(key).map_or(0, u64::from_be_bytes);
    StoreError::UnreadableBatch { batch, why }
}

/// The last batch's key in `tree`, 0 when none.
fn last_batch(tree: &sled::Tree) -> Result<u64, StoreError> {
    tree.last()?.map_or(Ok(0), |(key, _)| {
        <[u8; 8]>::try_from(key.as_ref())
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::BadKey(key.len()))
    })
}

fn decoded(entry: Result<(sled::IVec, sled::IVec), sled::Error>) -> Result<Record, StoreError> {
    let (key, value) = entry?;
    decode(&key, &value)
}

/// Buffers `value` as JSON under `id` (8 bytes, big-endian) in a tree of id-keyed records
/// (decisions, alerts), after the tree's format byte.
fn put_json<T: serde::Serialize>(
    tree: &sled::Tree,
    format: u8,
    id: u64,
    value: &T,
) -> Result<(), StoreError> {
    let mut bytes = vec![format];
    serde_json::to_writer(&mut bytes, value).expect("a journal record serializes");
    tree.insert(id.to_be_bytes(), bytes)?;
    Ok(())
}

/// Every record of an id-keyed JSON tree, by id; `unreadable` names what is damaged.
fn json_entries<T: serde::de::DeserializeOwned>(
    tree: &sled::Tree,
    format: u8,
    unreadable: fn(u64, String) -> StoreError,
) -> impl Iterator<Item = Result<T, StoreError>> + '_ {
    tree.iter().map(move |entry| {
        let (key, value) = entry?;
        let id = key
            .as_ref()
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::BadKey(key.len()))?;
        match value.split_first() {
            Some((first, json)) if *first == format => {
                serde_json::from_slice(json).map_err(|e| unreadable(id, e.to_string()))
            }
            _ => Err(unreadable(id, "unknown format".into())),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::write_codec::JOURNAL_FORMAT;
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
        }
    }

    fn by_board(
        records: impl Iterator<Item = Result<Record, StoreError>>,
    ) -> BTreeMap<u16, Vec<u64>> {
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
}
