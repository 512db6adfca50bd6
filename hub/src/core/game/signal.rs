//! DGT's result signal: the players put both kings on the centre squares to say how the
//! game ended. It is never a move.

use shakmaty::{Bitboard, Board, Color, Square};

use crate::core::arbiter::GameResult;

/// DGT's result signal: both kings on the centre squares, everything else as in the game,
/// except that pieces on the centre squares may have been taken off to make room (the real
/// recording `johan` clears a pawn from d4 first). Both kings on light squares (d5, e4) =
/// 1-0, both on dark squares (d4, e5) = 0-1, one of each = draw.
pub(super) fn result_signal(game: &Board, sensed: &Board) -> Option<GameResult> {
    let centre = Bitboard::from(Square::D4) | Square::D5 | Square::E4 | Square::E5;
    let kings = sensed.kings();
    let white = sensed.king_of(Color::White)?;
    let black = sensed.king_of(Color::Black)?;
    if kings.count() != 2 || !centre.contains(white) || !centre.contains(black) {
        return None;
    }
    if game.king_of(Color::White) == Some(white) && game.king_of(Color::Black) == Some(black) {
        return None; // the kings stand there in the game itself
    }
    // Apart from the kings and the centre, nothing moved.
    let untouched = !(game.kings() | centre);
    let same = Square::ALL
        .into_iter()
        .filter(|sq| untouched.contains(*sq))
        .all(|sq| game.piece_at(sq) == sensed.piece_at(sq));
    if !same {
        return None;
    }
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => GameResult::WhiteWins,
        (false, false) => GameResult::BlackWins,
        _ => GameResult::Draw,
    })
}

/// Whether going from `before` to `after` took a pawn move or a capture (9.3): fewer pieces,
/// or pawns elsewhere.
pub(super) fn board_zeroes(before: &Board, after: &Board) -> bool {
    after.occupied().count() < before.occupied().count() || after.pawns() != before.pawns()
}
