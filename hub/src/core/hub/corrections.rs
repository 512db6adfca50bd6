//! A result the pairing program's file gives that contradicts the hub's waits for an
//! arbiter: whoever can write the pairing files must not overturn a result decided in the
//! hall (the security review's edited file overturned the chief's declared result in 7 s).
//! The arbiters get a high alert with both results; declaring the file's result at the
//! board takes it (an appeal, a forfeit entered late, a typo put right), resolving the
//! alert keeps the hall's. Until then the hub's result stands in every output.
//!
//! ```text
//!  the TRF read again ─► set_rounds ─► take_corrections: for every game whose file result
//!                                      differs from the hub's decided one
//!                                        ─► a high alert naming both results (once)
//!  an arbiter declares a result at that game ─► the alert is resolved by the decision
//! ```
//!
//! A result the hub does not have yet (a board without an e-board) is simply the file's;
//! only a contradiction waits, so reading the same file again changes nothing.

use super::Hub;
use crate::core::arbiter::GameResult;
use crate::core::time::HubMs;

impl Hub {
    /// Raises an alert for every result the pairing files give that contradicts the hub's
    /// (see the module's text).
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
                let changes = self
                    .desk
                    .on_result_contradicted(now, game.board, round, (hub, file));
                if !changes.is_empty() {
                    tracing::warn!(round = round.0, board = game.board.0, %hub, %file, "the pairing program's file contradicts a result decided in the hall: it waits for an arbiter");
                }
                self.record_alerts(changes, None);
            }
        }
    }
}
