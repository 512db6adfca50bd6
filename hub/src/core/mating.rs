//! Can a side still checkmate "by any legal series of moves"?
//!
//! The Laws ask this in several places: a dead position ends the game (5.2.2); a flag fall
//! (6.9) or a second illegal move (7.5.5) is a draw, not a loss, when the opponent cannot
//! checkmate. Static material rules miss blocked pawn walls and forced lines; chasolver (a
//! port of Ambrona's Chess Unwinnability Analyzer) decides them.
//!
//! Both analyses are bounded by node counts, not by time, so the same position always gets
//! the same answer: a replayed journal reaches the same conclusions.

use shakmaty::{Chess, Color, EnPassantMode, Position, Role, Square};

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

/// The position as the `chess` crate has it, as its FEN parser would read shakmaty's X-FEN
/// of it (`None` where it refuses it: in Chess960, castling rights it cannot represent).
/// Built square by square: writing and parsing the FEN took a twentieth of the hub's loop's
/// instructions, for the dead-position check after every capture and pawn move.
fn to_chess_board(position: &Chess) -> Option<chess::Board> {
    let board = position.board();
    let mut builder = chess::BoardBuilder::new();
    for (square, piece) in board {
        builder.piece(
            chess_square(square),
            chess_piece(piece.role),
            to_chess_color(piece.color),
        );
    }
    builder.side_to_move(to_chess_color(position.turn()));
    for color in Color::ALL {
        builder.castle_rights(to_chess_color(color), castle_rights(position, color));
    }
    builder.en_passant(
        position
            .ep_square(EnPassantMode::Legal)
            .map(|square| chess::File::from_index(square.file() as usize)),
    );
    chess::Board::try_from(&builder).ok()
}

fn chess_square(square: Square) -> chess::Square {
    chess::Square::make_square(
        chess::Rank::from_index(square.rank() as usize),
        chess::File::from_index(square.file() as usize),
    )
}

fn chess_piece(role: Role) -> chess::Piece {
    match role {
        Role::Pawn => chess::Piece::Pawn,
        Role::Knight => chess::Piece::Knight,
        Role::Bishop => chess::Piece::Bishop,
        Role::Rook => chess::Piece::Rook,
        Role::Queen => chess::Piece::Queen,
        Role::King => chess::Piece::King,
    }
}

/// `color`'s castling rights as X-FEN writes them `K` and `Q` (the outermost rook beside
/// the king on its back rank): the only ones the `chess` crate reads.
fn castle_rights(position: &Chess, color: Color) -> chess::CastleRights {
    let board = position.board();
    let king = board
        .king_of(color)
        .filter(|king| king.rank() == color.backrank());
    let rooks = board.by_piece(color.rook()) & color.backrank();
    let rights = position.castles().castling_rights() & color.backrank();
    let king_side = rights
        .into_iter()
        .any(|rook| Some(rook) == rooks.last() && king.is_some_and(|king| king < rook));
    let queen_side = rights
        .into_iter()
        .any(|rook| Some(rook) == rooks.first() && king.is_some_and(|king| rook < king));
    match (king_side, queen_side) {
        (true, true) => chess::CastleRights::Both,
        (true, false) => chess::CastleRights::KingSide,
        (false, true) => chess::CastleRights::QueenSide,
        (false, false) => chess::CastleRights::NoRights,
    }
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

    #[test]
    fn the_board_handed_to_the_analysis_is_the_one_its_fen_parser_reads() {
        // `to_chess_board` builds the position square by square; the `chess` crate's own
        // FEN parser on shakmaty's X-FEN is the reference. Random games from standard and
        // Chess960 starts (castling rights on outer and inner rooks, en passant, promotions).
        let starts = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                false,
            ),
            (
                "r3k2r/pPp2ppp/8/3pP3/8/8/P1P2PPP/R3K2R w KQkq d6 0 1",
                false,
            ),
            (
                "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w BGbg - 0 1",
                true,
            ),
            (
                "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w FHfh - 0 1",
                true,
            ),
        ];
        let (mut compared, mut refused) = (0, 0);
        crate::core::random_games(&starts, 20, 120, |position, _| {
            let fen = shakmaty::fen::Fen::from_position(position, EnPassantMode::Legal).to_string();
            let parsed: Option<chess::Board> = fen.parse().ok();
            assert_eq!(to_chess_board(position), parsed, "{fen}");
            compared += 1;
            refused += usize::from(parsed.is_none());
        });
        assert!(compared > 5_000, "{compared} positions");
        assert!(
            refused > 0,
            "some Chess960 castling rights the crate cannot take"
        );
    }

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
