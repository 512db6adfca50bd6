//! A piece as an e-board senses it.
//!
//! These mirror shakmaty's `Color`, `Role` and `Piece`, but the protocol does not depend on a
//! chess library: a microcontroller node only reports what its sensors see.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Color {
    White,
    Black,
}

impl Color {
    /// The other side.
    #[must_use]
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    Pawn,
    Knight,
    Bishop,
    Rook,
    Queen,
    King,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// The square code used in a packed [`crate::Placement`]: 1–6 white pawn, knight, bishop,
    /// rook, queen, king; 7–12 the same in black. 0 is an empty square.
    pub(crate) fn code(self) -> u8 {
        let role = Role::ALL.iter().position(|r| *r == self.role).unwrap_or(0) as u8 + 1;
        match self.color {
            Color::White => role,
            Color::Black => role + 6,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Piece> {
        let (color, index) = match code {
            1..=6 => (Color::White, code - 1),
            7..=12 => (Color::Black, code - 7),
            _ => return None,
        };
        Some(Piece {
            color,
            role: Role::ALL[usize::from(index)],
        })
    }
}
