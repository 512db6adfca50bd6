//! The pairing program's word on a result stands: a result corrected in its file (an
//! appeal, a forfeit entered late, a typo put right) and exported again replaces the hub's,
//! which stays in the board's audit trail, and the arbiters are told.
//!
//! ```text
//!  the TRF read again ─► set_rounds ─► take_corrections: for every game whose file result
//!                                      differs from the hub's decided one
//!                                        ─► a decision in the pairing program's name
//!                                        ─► an info alert naming both results
//! ```
//!
//! A result the hub does not have yet (a board without an e-board) is simply the file's;
//! only a contradiction needs a decision, so reading the same file again changes nothing.

use super::Hub;
use crate::core::arbiter::{ArbiterAction, Cause, Decision, GameResult};
use crate::core::time::HubMs;

/// Who decides when the file's result replaces the hub's.
pub const PAIRING_PROGRAM: &str = "pairing program";

impl Hub {
    /// Takes every result the pairing files give that contradicts the hub's (see the
    /// module's text).
    pub fn take_corrections(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        let rounds: Vec<_> = self.rounds.pairings.keys().copied().collect();
        for round in rounds {
            let results = self.results_of(round);
            let games = self.rounds.games(round).to_vec();
            for game in games {
                let Some(file) = GameResult::from_code(&game.result).filter(|r| r.is_decided())
                else {
                    continue;
                };
                let Some(&hub) = results.get(&game.board).filter(|r| r.is_decided()) else {
                    continue;
                };
                if hub == file {
                    continue;
                }
                let cause = if file.is_forfeit() {
                    Cause::Forfeit
                } else {
                    Cause::Correction
                };
                let action = ArbiterAction {
                    arbiter: PAIRING_PROGRAM.to_owned(),
                    decision: Decision::Result {
                        result: file,
                        cause: Some(cause),
                    },
                    note: Some(format!(
                        "the pairing program's file gives {file}; the hub had {hub}"
                    )),
                    // The pairing program's word stands over the hub's own ruling.
                    override_reason: Some("the pairing program's file".to_owned()),
                };
                let id = self.next_decision;
                match self.decide(now, game.board, Some(round), action) {
                    Ok(_) => {
                        tracing::warn!(round = round.0, board = game.board.0, %hub, %file, "a result corrected in the pairing program's file: the file's stands");
                        let changes =
                            self.desk
                                .on_result_corrected(now, game.board, round, id, (hub, file));
                        self.record_alerts(changes, None);
                    }
                    Err(e) => {
                        tracing::warn!(round = round.0, board = game.board.0, error = %e, "a result corrected in the pairing program's file could not be taken")
                    }
                }
            }
        }
    }
}
