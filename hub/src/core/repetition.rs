//! How often each position has occurred in a game.
//!
//! shakmaty's `Chess` compares positions as Art. 9.2.2 does: the same player to move, the
//! same pieces on the same squares, the same castling rights and the same *legal* en passant
//! captures; the move counters do not count. So a map from position to count is a correct
//! repetition table.

use std::collections::HashMap;

use shakmaty::Chess;

#[derive(Debug, Clone, Default)]
pub struct Repetitions {
    counts: HashMap<Chess, u8>,
}

impl Repetitions {
    /// Notes one more occurrence of `position`; returns how often it has now occurred.
    pub fn record(&mut self, position: &Chess) -> u8 {
        let count = self.counts.entry(position.clone()).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// How often `position` has occurred so far.
    pub fn count(&self, position: &Chess) -> u8 {
        self.counts.get(position).copied().unwrap_or(0)
    }
}
