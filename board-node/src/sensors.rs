//! What an e-board's sensors would report for a shakmaty board.

use protocol::{Color as Side, Piece, Placement, Role, Square};
use shakmaty::{Board, Color};

/// The placement a board reports when `board`'s pieces stand on it.
pub fn placement(board: &Board) -> Placement {
    let mut placement = Placement::EMPTY;
    for (square, piece) in board.clone() {
        let color = match piece.color {
            Color::White => Side::White,
            Color::Black => Side::Black,
        };
        let role = match piece.role {
            shakmaty::Role::Pawn => Role::Pawn,
            shakmaty::Role::Knight => Role::Knight,
            shakmaty::Role::Bishop => Role::Bishop,
            shakmaty::Role::Rook => Role::Rook,
            shakmaty::Role::Queen => Role::Queen,
            shakmaty::Role::King => Role::King,
        };
        let square = Square::new(u8::from(square)).expect("shakmaty squares are 0..64");
        placement.set(square, Some(Piece { color, role }));
    }
    placement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_reads_as_its_fen() {
        assert_eq!(
            placement(&Board::new()).board_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
    }
}
