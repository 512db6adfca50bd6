//! Can a side still checkmate "by any legal series of moves"?
//!
//! The Laws ask this in several places: a dead position ends the game (5.2.2); a flag fall
//! (6.9) or a second illegal move (7.5.5) is a draw, not a loss, when the opponent cannot
//! checkmate. Static material rules miss blocked pawn walls and forced lines; chasolver (a
//! port of Ambrona's Chess Unwinnability Analyzer) decides them.
//!
//! Both analyses are bounded by node counts, not by time, so the same position always gets
//! the same answer: a replayed journal reaches the same conclusions.

use crate::core::game::fen_of;
use shakmaty::{Chess, Color, EnPassantMode};

/// The answer of the full analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatingChances {
    /// A legal sequence of moves ends in checkmate by this side.
    CanMate,
    /// No legal sequence of moves lets this side checkmate.
    CannotMate,
    /// The analysis hit its node limit: treat as "can mate" (the Laws' default) and say so.
    Undetermined,
}

fn to_chess_board(position: &Chess) -> Option<chess::Board> {
    // The two libraries meet in FEN; a legal shakmaty position is always a valid one there.
    fen_of(position).parse().ok()
}

fn to_chess_color(color: Color) -> chess::Color {
    match color {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    }
}

/// Cheap and sound, but incomplete: `true` only when `color` provably cannot checkmate.
/// Fast enough (microseconds) to run after every move.
pub fn surely_cannot_mate(position: &Chess, color: Color) -> bool {
    to_chess_board(position)
        .is_some_and(|board| chasolver::is_unwinnable_fast(&board, to_chess_color(color)))
}

/// Art. 5.2.2 as far as the fast analysis proves it: neither side can checkmate.
pub fn is_dead_position(position: &Chess) -> bool {
    surely_cannot_mate(position, Color::White) && surely_cannot_mate(position, Color::Black)
}

/// Whether playing `m` from `before` can make a position dead that `before` was not: a
/// capture, a pawn move, castling, castling rights lost or an en-passant capture given up.
/// Any other move is reversible: the positions before and after it reach each other, so
/// one is dead exactly when the other is, and the search after it is skipped (a
/// middlegame's piece moves are most moves; `tests/dead_positions.rs` holds the skipped
/// ones to the search over every real game).
pub fn may_become_dead(before: &Chess, m: &shakmaty::Move) -> bool {
    use shakmaty::Position;
    let rights_after = {
        let mut after = before.clone();
        after.play_unchecked(*m);
        after.castles().castling_rights()
    };
    m.is_zeroing()
        || m.is_castle()
        || before.ep_square(EnPassantMode::Legal).is_some()
        || rights_after != before.castles().castling_rights()
}

/// The full analysis: usually tens of microseconds, in rare positions up to seconds. For
/// decisions (6.9, 7.5.5), not for every move.
pub fn mating_chances(position: &Chess, color: Color) -> MatingChances {
    let Some(board) = to_chess_board(position) else {
        return MatingChances::Undetermined;
    };
    match chasolver::winnability(&board, to_chess_color(color)) {
        Some(chasolver::Winnability::Winnable { .. }) => MatingChances::CanMate,
        Some(chasolver::Winnability::Unwinnable) => MatingChances::CannotMate,
        None => MatingChances::Undetermined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::position;
    use shakmaty::Position;

    #[test]
    fn a_blocked_pawn_wall_is_dead_though_material_is_not_insufficient() {
        // Art. 5.2.2: kings cannot cross the locked chain, no piece can move but the kings.
        let wall = position("8/8/1k6/p1p1p1p1/P1P1P1P1/8/4K3/8 w - - 0 50");
        assert!(!wall.is_insufficient_material());
        assert!(is_dead_position(&wall));
        assert_eq!(
            mating_chances(&wall, Color::White),
            MatingChances::CannotMate
        );
    }

    #[test]
    fn a_queen_can_mate_a_bare_king_but_the_bare_king_cannot() {
        let kq = position("8/8/4k3/8/8/3KQ3/8/8 b - - 0 60");
        assert_eq!(mating_chances(&kq, Color::White), MatingChances::CanMate);
        assert_eq!(mating_chances(&kq, Color::Black), MatingChances::CannotMate);
        assert!(!is_dead_position(&kq));
    }
}
