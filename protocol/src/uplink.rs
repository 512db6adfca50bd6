//! What a board node reports.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Color, Piece, Seq};

/// The body of a [`crate::Uplink`]. Variants are only ever appended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UplinkBody {
    /// The node (re)started or (re)connected.
    Hello(Hello),
    /// The pieces on the board, as the sensors see them now.
    Placement(Placement),
    /// What the clock shows now.
    Clock(ClockReport),
    /// Nothing changed; the node is alive.
    Heartbeat,
    /// The node's own view of its e-board and clock: connected or not, and the serial line's
    /// errors. Sent when either connection changes (and now and then while errors grow).
    Health(NodeHealth),
    /// How fast the node's time runs, in ms of node time per second of real time: 1000 for a
    /// board in the hall (the node's wall clock; a node that never says is taken at that),
    /// 200,000 for a replay at 200×. Sent after `Hello` by nodes whose time runs otherwise;
    /// the hub bounds how far a node's time may jump by it.
    Pace { node_ms_per_s: u32 },
    /// E-boards answering on this board's chain (DGT bus mode) that the node was not told
    /// to read: their bus addresses (a DGT board's serial number, or its low 14 bits),
    /// every one found so far. For the technician: enrol them, or take them off the chain.
    Strangers(Vec<u16>),
    /// The clock's battery: `low` as the clock itself warns (a DGT clock's status bit), sent
    /// when it is first known and whenever it changes. Boards without a clock never send it.
    Battery { low: bool },
}

impl UplinkBody {
    /// The fastest pace a node may announce ([`UplinkBody::Pace`]): a replay at 10,000×.
    pub const MAX_PACE: u32 = 10_000_000;
    /// The most strangers a node reports ([`UplinkBody::Strangers`]): a chain holds a dozen
    /// or two boards.
    pub const MAX_STRANGERS: usize = 64;
}

/// What a node reports of its connections to the e-board and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeHealth {
    /// The e-board answers on its serial line.
    pub board_connected: bool,
    /// The e-board reports a clock attached to it.
    pub clock_connected: bool,
    /// Serial errors since the node started: failed opens and reads, undecodable messages
    /// and bursts of line noise.
    pub serial_errors: u32,
    /// Node time at which the board's and the clock's connections last changed.
    pub since: crate::NodeMs,
}

/// Sent by a node when it starts and after each reconnect.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hello {
    /// The node's software version, e.g. `"board-node 0.1.0"`. Each of the three texts is at
    /// most [`Hello::MAX_TEXT`] bytes.
    pub software: String,
    /// The e-board's hardware id (a DGT serial number, say); empty when none is connected.
    pub board_hw: String,
    /// The clock's hardware id; empty when none is connected.
    pub clock_hw: String,
    /// The highest sequence number the node has assigned so far.
    pub highest_seq: Seq,
}

impl Hello {
    /// The longest software version or hardware id a `Hello` may carry, in bytes: a DGT
    /// serial number has 8 characters, a version string a few dozen. The hub keeps them per
    /// board and journals them, so a stranger's 256 KiB must not fit.
    pub const MAX_TEXT: usize = 64;
}

/// What a clock shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ClockReport {
    /// White's remaining time as displayed, in milliseconds.
    pub white_ms: u32,
    /// Black's remaining time as displayed, in milliseconds.
    pub black_ms: u32,
    /// Whose clock runs; `None` when the clock is paused or stopped.
    pub running: Option<Color>,
    /// White's flag indicator is shown.
    pub white_flag: bool,
    /// Black's flag indicator is shown.
    pub black_flag: bool,
    /// Set when this report was caused by a player pressing the clock: who pressed.
    pub pressed_by: Option<Color>,
}

/// A square, 0 = a1, 1 = b1, … 7 = h1, 8 = a2, … 63 = h8 (shakmaty's numbering).
///
/// An e-board that numbers its squares otherwise (DGT: 0 = a8) converts in its adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// `None` unless `index < 64`.
    pub fn new(index: u8) -> Option<Square> {
        (index < 64).then_some(Square(index))
    }

    pub fn from_coords(file: u8, rank: u8) -> Option<Square> {
        (file < 8 && rank < 8).then_some(Square(rank * 8 + file))
    }

    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// 0 = file a … 7 = file h.
    pub fn file(self) -> u8 {
        self.0 % 8
    }

    /// 0 = rank 1 … 7 = rank 8.
    pub fn rank(self) -> u8 {
        self.0 / 8
    }

    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", char::from(b'a' + self.file()), self.rank() + 1)
    }
}

/// The whole board as the sensors see it: every square empty or holding a piece.
///
/// This is the unchecked view (like shakmaty's `Setup`): two white kings or a pawn on the
/// first rank are representable, because a player can put them there. Encoded as 32 bytes,
/// two squares per byte (low nibble first), each nibble a piece code (0 = empty).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    squares: [Option<Piece>; 64],
}

impl Placement {
    /// A board with no pieces on it.
    pub const EMPTY: Placement = Placement {
        squares: [None; 64],
    };

    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        self.squares[square.index()]
    }

    pub fn set(&mut self, square: Square, piece: Option<Piece>) {
        self.squares[square.index()] = piece;
    }

    /// Every occupied square with its piece, a1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        Square::all().filter_map(|sq| self.piece_at(sq).map(|p| (sq, p)))
    }

    /// The placement part of a FEN, rank 8 first, for logs and error messages.
    pub fn board_fen(&self) -> String {
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                let sq = Square(rank * 8 + file);
                match self.piece_at(sq) {
                    None => empty += 1,
                    Some(piece) => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        fen.push(fen_char(piece));
                    }
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        fen
    }
}

fn fen_char(piece: Piece) -> char {
    let c = match piece.role {
        crate::Role::Pawn => 'p',
        crate::Role::Knight => 'n',
        crate::Role::Bishop => 'b',
        crate::Role::Rook => 'r',
        crate::Role::Queen => 'q',
        crate::Role::King => 'k',
    };
    match piece.color {
        Color::White => c.to_ascii_uppercase(),
        Color::Black => c,
    }
}

impl fmt::Debug for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Placement({})", self.board_fen())
    }
}

impl Default for Placement {
    fn default() -> Placement {
        Placement::EMPTY
    }
}

const PACKED_LEN: usize = 32;

impl Placement {
    /// The 32 bytes it is encoded as, two squares a byte (low nibble first).
    fn packed(&self) -> [u8; PACKED_LEN] {
        let mut packed = [0; PACKED_LEN];
        for (byte, pair) in packed.iter_mut().zip(self.squares.chunks_exact(2)) {
            let low = pair[0].map_or(0, Piece::code);
            let high = pair[1].map_or(0, Piece::code);
            *byte = low | (high << 4);
        }
        packed
    }
}

/// Hashed as its 32 packed bytes in one write, not square by square: the hub fingerprints
/// every event it journals.
impl core::hash::Hash for Placement {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        state.write(&self.packed());
    }
}

impl Serialize for Placement {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(PACKED_LEN)?;
        for byte in self.packed() {
            tuple.serialize_element(&byte)?;
        }
        tuple.end()
    }
}

impl<'de> Deserialize<'de> for Placement {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Placement, D::Error> {
        struct PackedVisitor;

        impl<'de> Visitor<'de> for PackedVisitor {
            type Value = Placement;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("32 bytes of packed piece codes")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Placement, A::Error> {
                let mut placement = Placement::EMPTY;
                for i in 0..PACKED_LEN {
                    let byte: u8 = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::invalid_length(i, &self))?;
                    for (half, code) in [(0, byte & 0x0f), (1, byte >> 4)] {
                        placement.squares[2 * i + half] = match code {
                            0 => None,
                            code => Some(Piece::from_code(code).ok_or_else(|| {
                                de::Error::invalid_value(
                                    de::Unexpected::Unsigned(u64::from(code)),
                                    &"a piece code 0-12",
                                )
                            })?),
                        };
                    }
                }
                Ok(placement)
            }
        }

        deserializer.deserialize_tuple(PACKED_LEN, PackedVisitor)
    }
}
