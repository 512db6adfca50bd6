//! The restore fold: the journal's records, decisions, alerts and rounds through the same
//! code the live hub runs ([`Hub::fan_out`]), so a restart comes back to the same state.
//! What the replayed events make happen already happened once; only the alert desk sees
//! them again, and raises only the incidents whose alert a crash kept from being written.

use std::collections::BTreeMap;

use protocol::seal::NodeKey;
use protocol::BoardNo;

use super::output::Count;
use super::Hub;
use crate::core::alerts::{Alert, AlertChange};
use crate::core::arbiter::DecisionRecord;
use crate::core::archive::PlayedGame;
use crate::core::effect::Effect;
use crate::core::ids::{DecisionId, HardwareId, Seq};
use crate::core::record::Record;
use crate::core::roster::Roster;
use crate::core::rounds::RoundStart;

/// What the journal holds, for [`Hub::restore`].
pub struct Journaled<R> {
    /// The rounds started, in order.
    pub rounds: Vec<RoundStart>,
    /// The games of finished rounds as the journal keeps them (tree `games`).
    pub games: Vec<PlayedGame>,
    /// Every board's events, each board's in sequence; a record that cannot be read is
    /// [`Replayed::Damaged`] in its place. Those of finished rounds may be left out where a
    /// round's start kept the board's node ([`Hub::resume_points`]): the archive has their
    /// games.
    pub records: R,
    /// Each board's first events (up to [`STREAM_HEAD`]) where `records` leaves them out:
    /// a node that starts again from 1 is still told apart from a resend.
    pub heads: Vec<Record>,
    pub decisions: Vec<DecisionRecord>,
    /// Every alert's latest state.
    pub alerts: Vec<Alert>,
    /// The technician's bindings over the API.
    pub bindings: BTreeMap<HardwareId, BoardNo>,
    /// Every enrolled node's key.
    pub enrolments: BTreeMap<HardwareId, NodeKey>,
    /// Every enrolled arbiter, by name.
    pub arbiters: BTreeMap<String, crate::core::roster::Member>,
    /// The hall's secret, from which the hub's signing key derives; `None`: pager commands
    /// are taken unsealed (a hub without a journal: the alert report, tests).
    pub hall_secret: Option<NodeKey>,
}

/// One place in the journal's sequence of a board's events, as a restart reads it.
#[derive(Debug, Clone)]
pub enum Replayed {
    Record(Record),
    /// The record of this event cannot be read (a damaged disk).
    Damaged {
        board: BoardNo,
        seq: Seq,
    },
}

impl From<Record> for Replayed {
    fn from(record: Record) -> Replayed {
        Replayed::Record(record)
    }
}

/// What a restart found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// Records replayed.
    pub records: u64,
    pub boards: usize,
    /// Boards resumed where a round's start kept their node, their finished rounds' events
    /// not read.
    pub resumed: usize,
    pub alerts: usize,
    /// Alerts a crash had kept from being written, raised again.
    pub healed: usize,
}

impl Hub {
    /// Rebuilds the hall from the journal: each board's events in sequence, each arbiter's
    /// decision right after the board event it followed, then every zone's open list for
    /// the pagers that connect. What the replayed events make happen already happened
    /// once; only the alert desk sees them again, and raises only the incidents whose
    /// alert a crash kept from being written.
    pub fn restore<R>(&mut self, journaled: Journaled<R>) -> Restored
    where
        R: IntoIterator,
        R::Item: Into<Replayed>,
    {
        let alerts = journaled.alerts.len();
        self.desk.restore(journaled.alerts);
        for (hardware, board) in journaled.bindings {
            let _ = self.access.bindings.bind(&hardware, Some(board));
        }
        self.access.set_hall_secret(journaled.hall_secret);
        for (hardware, key) in journaled.enrolments {
            self.access.trust.restore(hardware, Some(key));
        }
        self.access.roster = Roster::restore(journaled.arbiters);
        self.access.trust.rebind_all(&self.access.bindings);
        self.next_decision = journaled
            .decisions
            .iter()
            .map(|d| d.id.next())
            .max()
            .unwrap_or(DecisionId(1));
        let mut decisions: BTreeMap<(BoardNo, Seq), Vec<DecisionRecord>> = BTreeMap::new();
        for decision in journaled.decisions {
            decisions
                .entry((decision.board, decision.after_seq))
                .or_default()
                .push(decision);
        }
        self.restore_rounds(journaled.rounds);
        // Boards resumed where a round started: their finished games from the archive,
        // their events before not read again.
        let resumed = self.resume_boards(journaled.games, journaled.heads);
        let before_resume =
            |board: BoardNo, seq: Seq| resumed.get(&board).is_some_and(|r| seq <= r.mark);
        decisions.retain(|(board, after), due| {
            due.retain(|d| {
                let taken_before = match (d.round, resumed.get(board)) {
                    (Some(round), Some(resume)) => round < resume.round,
                    (None, Some(resume)) => *after < resume.mark,
                    (_, None) => false,
                };
                !taken_before
            });
            !due.is_empty()
        });
        let mut healed = Vec::new();
        // Decisions taken before a board's first event (a board without an e-board, scored
        // by the arbiter): before any event, in the order taken.
        let mut unheard: Vec<DecisionRecord> = Vec::new();
        decisions.retain(|(_, after), due| {
            if after.0 == 0 {
                unheard.append(due);
            }
            !due.is_empty()
        });
        unheard.sort_by_key(|d| d.id);
        healed.extend(self.fold_decisions(unheard));
        let mut records = 0;
        for replayed in journaled.records {
            let replayed = replayed.into();
            let (board, seq) = match &replayed {
                Replayed::Record(record) => (record.event.board, record.event.seq),
                Replayed::Damaged { board, seq } => (*board, *seq),
            };
            if before_resume(board, seq) {
                continue;
            }
            let record = match replayed {
                Replayed::Record(record) => record,
                Replayed::Damaged { board, seq } => {
                    self.catch_up_rounds(self.now, board, Some(seq));
                    healed.extend(self.damaged(board, seq));
                    continue;
                }
            };
            self.now = self.now.max(record.at);
            let (board, seq) = (record.event.board, record.event.seq);
            self.catch_up_rounds(record.at, board, Some(seq));
            self.streams.journaled(&record.event);
            for effect in self.hall.apply(&record) {
                if let Effect::OutOfSequence { board, seq } = effect {
                    tracing::error!(
                        board = board.0,
                        seq = seq.0,
                        "journal record out of sequence, skipped"
                    );
                    self.count(Count::JournalRecordSkipped);
                } else {
                    healed.extend(self.fan_out(record.at, &effect));
                }
            }
            records += 1;
            if let Some(due) = decisions.remove(&(board, seq)) {
                healed.extend(self.fold_decisions(due));
            }
        }
        // Decisions after events the journal lost (damaged records): in the order taken.
        let mut rest: Vec<DecisionRecord> = decisions.into_values().flatten().collect();
        rest.sort_by_key(|d| d.id);
        healed.extend(self.fold_decisions(rest));
        // Rounds that started after a board's last event.
        for board in self.hall.boards() {
            self.catch_up_rounds(self.now, board, None);
        }
        self.round_changed();
        self.hall.replayed();
        // The desk looks at each board when its deadline comes; nothing is looked at in
        // the past.
        for board in self.hall.boards() {
            let due = self.desk.board_deadline(self.now, &self.hall, board);
            self.timers.set(board, due);
        }
        let restored = Restored {
            records,
            boards: self.hall.len(),
            resumed: resumed.len(),
            alerts,
            healed: healed.len(),
        };
        self.record_alerts(healed, None);
        self.publish_open_lists(self.desk.routing().zone_names());
        restored
    }

    /// Journaled decisions through the hall, the relay and the desk.
    /// A board's event the journal cannot read: the board goes on after it (the node forgot
    /// it once acknowledged, so nobody can send it again), and the arbiter learns which event
    /// was lost and where the game stood.
    pub(super) fn damaged(&mut self, board: BoardNo, seq: Seq) -> Vec<AlertChange> {
        tracing::error!(
            board = board.0,
            seq = seq.0,
            "journal record unreadable: the board goes on after it"
        );
        self.count(Count::JournalRecordSkipped);
        if !self.hall.skip_damaged(board, seq) {
            return Vec::new();
        }
        let plies = self.hall.board(board).map_or(0, |b| b.game().moves().len());
        let moves = u32::try_from(plies.div_ceil(2)).unwrap_or(u32::MAX);
        self.desk.on_journal_damaged(self.now, board, seq, moves)
    }

    pub(super) fn fold_decisions(&mut self, due: Vec<DecisionRecord>) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        for decision in due {
            let unheard = self
                .hall
                .board(decision.board)
                .is_none_or(|b| b.last_seq().0 == 0);
            if let (true, Some(round)) = (unheard, decision.round) {
                self.catch_up_unheard(decision.at, decision.board, round);
            }
            let board_round = self.hall.board(decision.board).map(|b| b.round());
            match (decision.round, board_round) {
                // Taken in a round that started right before it: the board goes on first.
                (Some(round), Some(now_playing)) if round > now_playing => {
                    let next = Seq(decision.after_seq.0 + 1);
                    self.catch_up_rounds(decision.at, decision.board, Some(next));
                }
                // Taken for a game of a round that is over.
                (Some(round), Some(now_playing)) if round < now_playing => {
                    if let Err(e) = self.decide_archived(round, &decision) {
                        tracing::error!(id = decision.id.0, error = %e, "journaled decision no longer fits");
                        self.count(Count::JournalRecordSkipped);
                    }
                    continue;
                }
                _ => {}
            }
            match self.hall.decide(&decision, unheard) {
                Ok(effects) => {
                    for effect in &effects {
                        changes.extend(self.fan_out(decision.at, effect));
                    }
                    changes.extend(self.fan_out_decision(&decision));
                }
                Err(e) => {
                    tracing::error!(id = decision.id.0, error = %e, "journaled decision no longer fits");
                    self.count(Count::JournalRecordSkipped);
                }
            }
        }
        changes
    }
}
