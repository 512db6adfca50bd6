//! What an e-board reports, whatever its family speaks on the wire: a board dump, a field's
//! change, the clock. Each family's `wire` decodes its bytes into a [`Message`].

use protocol::Piece;

/// A square in the board's own numbering: 0 = a8 … 63 = h1, as seen from the side where the
/// board's a1 corner is (which is White's only when the board is set up the right way round).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field(u8);

impl Field {
    pub fn new(index: u8) -> Option<Field> {
        (index < 64).then_some(Field(index))
    }

    /// 0 = a8 … 63 = h1.
    pub fn index(self) -> u8 {
        self.0
    }

    /// The field under `square` on a board set up the right way round.
    pub fn of(square: protocol::Square) -> Field {
        Field((7 - square.rank()) * 8 + square.file())
    }

    /// 0 = file a … 7 = file h, in the board's own orientation.
    pub fn file(self) -> u8 {
        self.0 % 8
    }

    /// 0 = rank 1 … 7 = rank 8, in the board's own orientation.
    pub fn rank(self) -> u8 {
        7 - self.0 / 8
    }
}

/// The 64 fields of a board dump, in the board's numbering.
pub type Fields = [Option<Piece>; 64];

/// One clock face: what one player's side of the clock shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Face {
    /// The time shown, in ms (the clock shows whole seconds).
    pub ms: u32,
    /// The time ran out and the clock is blocked at zero.
    pub final_flag: bool,
    /// The flag symbol: this side's time of a period ran out.
    pub flag: bool,
    /// The time-per-move symbol (increment or delay mode).
    pub time_per_move: bool,
}

/// A clock message (`BWTIME`). The clock knows left and right, not White and Black.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockStatus {
    pub left: Face,
    pub right: Face,
    pub running: bool,
    /// The lever is up on the right: the right player pressed last.
    pub right_high: bool,
    pub battery_low: bool,
    pub left_to_move: bool,
    pub right_to_move: bool,
    /// The board reports that no clock is connected to it.
    pub no_clock: bool,
}

impl ClockStatus {
    /// The clock after a press recorded as the halted side's time (a DGT board's EEPROM
    /// record): the side that pressed (`left` or not) shows `ms`, the lever turns, and the
    /// other side runs.
    pub fn pressed(self, left: bool, ms: u32) -> ClockStatus {
        let mut status = self;
        if left {
            status.left.ms = ms;
        } else {
            status.right.ms = ms;
        }
        status.running = true;
        status.left_to_move = !left;
        status.right_to_move = left;
        status.right_high = !left;
        status
    }
}

/// One message from the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    BoardDump(Box<Fields>),
    FieldUpdate {
        field: Field,
        piece: Option<Piece>,
    },
    Clock(ClockStatus),
    /// The clock acknowledged a command sent to it; carries no reading.
    ClockAck,
    /// A message a node does not need (serial number, version, …).
    Other {
        id: u8,
    },
}
