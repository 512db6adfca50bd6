//! How often each position has occurred in a game.
//!
//! Art. 9.2.2 counts positions as the same when the same player is to move, the same pieces
//! stand on the same squares and the possible moves are the same (castling rights, a *legal*
//! en passant capture); the move counters do not count. shakmaty's Zobrist hash with
//! `EnPassantMode::Legal` covers exactly these, so the table keeps a 64-bit hash for each
//! position rather than the position: a position is some 130 bytes, and a long game's 160
//! of them held 32 KiB a board. Two positions of one game share a hash with a chance of
//! about 10^-15; a repetition found is a claim the arbiter decides, never a result.

use std::collections::HashMap;

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Position};

#[derive(Debug, Clone, Default)]
pub struct Repetitions {
    counts: HashMap<Zobrist64, u8>,
}

impl Repetitions {
    /// Notes one more occurrence of `position`; returns how often it has now occurred.
    pub fn record(&mut self, position: &Chess) -> u8 {
        let count = self.counts.entry(key(position)).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// How often `position` has occurred so far.
    pub fn count(&self, position: &Chess) -> u8 {
        self.counts.get(&key(position)).copied().unwrap_or(0)
    }
}

/// The position as Art. 9.2.2 compares positions.
fn key(position: &Chess) -> Zobrist64 {
    position.zobrist_hash(EnPassantMode::Legal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// Art. 9.2.2: the move counters do not count; who is to move does.
    #[test]
    fn the_same_position_with_other_counters_is_a_repetition() {
        let mut table = Repetitions::default();
        table.record(&position("4k3/8/8/8/8/8/8/4K2R w K - 0 1"));
        assert_eq!(table.record(&position("4k3/8/8/8/8/8/8/4K2R w K - 6 4")), 2);
        assert_eq!(table.count(&position("4k3/8/8/8/8/8/8/4K2R b K - 6 4")), 0);
    }

    /// Art. 9.2.2: a lost castling right, or an en passant capture that is possible, makes
    /// another position; an en passant square with no legal capture does not.
    #[test]
    fn castling_rights_and_legal_en_passant_make_another_position() {
        let mut table = Repetitions::default();
        table.record(&position("4k3/8/8/8/8/8/8/4K2R w K - 0 1"));
        assert_eq!(table.count(&position("4k3/8/8/8/8/8/8/4K2R w - - 0 1")), 0);

        // White's d-pawn two squares on, no black pawn beside it: no capture, the same.
        table.record(&position("4k3/8/8/8/3P4/8/8/4K3 b - - 0 1"));
        assert_eq!(
            table.count(&position("4k3/8/8/8/3P4/8/8/4K3 b - d3 0 1")),
            1
        );
        // A black pawn on e4 beside it: the capture is possible, another position.
        table.record(&position("4k3/8/8/8/3Pp3/8/8/4K3 b - - 0 1"));
        assert_eq!(
            table.count(&position("4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1")),
            0
        );
    }
}
