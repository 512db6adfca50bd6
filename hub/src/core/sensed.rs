//! The e-board's view of the pieces, converted to shakmaty's types.
//!
//! A [`protocol::Placement`] is what the sensors saw; it may be anything a player can put on a
//! board. Here it becomes a shakmaty [`Board`] (still unchecked) so it can be compared with the
//! positions the Laws allow.

use shakmaty::{Board, Color, Piece, Role, Square};

pub fn color(color: protocol::Color) -> Color {
    match color {
        protocol::Color::White => Color::White,
        protocol::Color::Black => Color::Black,
    }
}

pub fn role(role: protocol::Role) -> Role {
    match role {
        protocol::Role::Pawn => Role::Pawn,
        protocol::Role::Knight => Role::Knight,
        protocol::Role::Bishop => Role::Bishop,
        protocol::Role::Rook => Role::Rook,
        protocol::Role::Queen => Role::Queen,
        protocol::Role::King => Role::King,
    }
}

pub fn piece(piece: protocol::Piece) -> Piece {
    Piece {
        color: color(piece.color),
        role: role(piece.role),
    }
}

/// The board the sensors report. Both numberings run a1 = 0 … h8 = 63.
pub fn board(placement: &protocol::Placement) -> Board {
    let mut board = Board::empty();
    for (square, p) in placement.pieces() {
        board.set_piece_at(Square::new(square.index() as u32), piece(p));
    }
    board
}
