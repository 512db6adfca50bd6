//! The chief arbiter takes back a forced round start: every game it ended is given back as
//! the board went on with it, while no move was made in a game it began (see
//! [`crate::core::parked`]). The undo is journaled beside the starts, so a restart folds the
//! boards' events as if the start had never been made.
//!
//! ```text
//!  POST /api/rounds/{r}/undo-start ─► undo_start ─► Write(RoundStart { undoes }) ─► each board:
//!      the chief, the last start, forced,              its shadow back (Hall::round_undone),
//!      its window open                                 archive out, relay and desk told
//! ```

use super::durable::Deferred;
use super::output::{Reply, RequestId, Write};
use super::Hub;
use crate::core::effect::Effect;
use crate::core::game::GameEvent;
use crate::core::ids::RoundNo;
use crate::core::rounds::{RoundStart, StartError};
use crate::core::time::HubMs;

/// The chief's undo of a forced start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRequest {
    /// The round the start began: it must be the last start, and forced.
    pub round: RoundNo,
    /// Who undoes it.
    pub by: String,
    /// The arbiter whose own login asks; `None` for the hall's token.
    pub login: Option<String>,
}

impl Hub {
    /// A forced start is taken back on the chief's request: answered with the rounds once
    /// durable, or at once with why not.
    pub fn handle_start_undo(&mut self, now: HubMs, request: RequestId, undo: UndoRequest) {
        self.now = self.now.max(now);
        match self.undo_start(now, undo) {
            Ok(at) => self.pending.wait(at, Deferred::RoundStarted(request)),
            Err(e) => self.reply(request, Reply::RoundStarted(Err(e))),
        }
    }

    fn undo_start(&mut self, now: HubMs, undo: UndoRequest) -> Result<super::Position, StartError> {
        self.chief_only(undo.login.as_deref())?;
        let book = self.hall.rounds();
        let start = book
            .last()
            .filter(|s| s.round == undo.round && s.forced)
            .cloned()
            .ok_or(StartError::NotUndoable(undo.round))?;
        if let Some(why) = self.hall.undo_closed(start.ordinal) {
            return Err(StartError::UndoClosed {
                round: start.round,
                why,
            });
        }
        let record = RoundStart {
            ordinal: book.next_ordinal(),
            round: start.round,
            section: start.section.clone(),
            at: now,
            by: undo.by,
            forced: false,
            after: Default::default(),
            nodes: Default::default(),
            undoes: Some(start.ordinal),
        };
        tracing::warn!(round = start.round.0, section = ?start.section, by = %record.by, "forced round start undone");
        let at = self.write(Write::RoundStart(record.clone()));
        for given in self.hall.round_undone(record) {
            let board = given.board;
            if let Some(game) = self.archive.remove(given.round, board) {
                self.relay.put_back(board, game.timeline);
                self.archive_changes += 1;
            }
            for (at, effect) in &given.effects {
                self.relay.on_effect(*at, effect);
            }
            let last_move = given.effects.iter().rev().find(|(_, e)| {
                matches!(
                    e,
                    Effect::Game {
                        event: GameEvent::MoveCompleted { .. },
                        ..
                    }
                )
            });
            if let Some((_, effect)) = last_move.cloned() {
                self.feed_move(now, &effect);
            }
            let changes = self.desk.start_undone(now, board, start.round, given.round);
            self.record_alerts(changes, None);
            self.watch(now, board);
        }
        self.round_changed();
        Ok(at)
    }
}
