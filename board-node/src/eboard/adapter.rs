//! The board numbers its squares from its own a8 and the clock knows only left and right. The
//! [`Adapter`] turns both into the hall's terms: a board set up the wrong way round (White on
//! the board's ranks 7 and 8) is read rotated, and White's clock is the one that was to move
//! when the clock was first seen (6.5: White's clock is started), unless configured.

use protocol::{ClockReport, Color, Placement, Square};

use super::message::{ClockStatus, Face, Field, Fields, Message};
use crate::source::Reading;

/// A side of the clock.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ClockSide {
    Left,
    Right,
}

/// How a board and its clock stand towards the players, once the adapter has seen it: a
/// node that restarts mid-game must not decide again from a position or a clock in play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Orientation {
    /// Which side of the clock is White's.
    pub white_clock: Option<ClockSide>,
    /// The board stands the wrong way round.
    pub reversed: Option<bool>,
}

/// Turns a DGT board's messages into placements and clock reports.
///
/// ```
/// use board_node::eboard::{message::Message, Adapter};
/// use board_node::source::Reading;
///
/// let mut adapter = Adapter::new(None);
/// let start = board_node::sensors::placement(&shakmaty::Board::new());
/// // A board dump in the board's own numbering (a8 first) of the start position.
/// let mut fields = Box::new([None; 64]);
/// for (square, piece) in start.pieces() {
///     fields[usize::from(7 - square.rank()) * 8 + usize::from(square.file())] = Some(piece);
/// }
/// assert_eq!(adapter.message(&Message::BoardDump(fields)), Some(Reading::Placement(start)));
/// ```
#[derive(Debug, Clone)]
pub struct Adapter {
    placement: Placement,
    /// Whether the board stands the wrong way round; decided by the first full board dump.
    reversed: Option<bool>,
    white_clock: Option<ClockSide>,
    last_clock: Option<ClockStatus>,
    /// Report the next clock message even if it repeats the last one.
    report_next_clock: bool,
    /// The clock's battery as last reported.
    battery_low: Option<bool>,
}

impl Adapter {
    /// `white_clock`: which side of the clock is White's; `None` decides it from the clock.
    pub fn new(white_clock: Option<ClockSide>) -> Adapter {
        Adapter::oriented(Orientation {
            white_clock,
            reversed: None,
        })
    }

    /// An adapter that knows what it decided before (see [`Adapter::orientation`]).
    pub fn oriented(orientation: Orientation) -> Adapter {
        let Orientation {
            white_clock,
            reversed,
        } = orientation;
        Adapter {
            placement: Placement::EMPTY,
            reversed,
            white_clock,
            last_clock: None,
            report_next_clock: false,
            battery_low: None,
        }
    }

    /// What the adapter knows of the board's and the clock's orientation.
    pub fn orientation(&self) -> Orientation {
        Orientation {
            white_clock: self.white_clock,
            reversed: self.reversed,
        }
    }

    /// The line to the board was reopened: the next clock message is reported even if the
    /// clock shows what it showed before, so the hub hears how the clock stands now (a press
    /// it missed shows in it).
    pub fn reopened(&mut self) {
        self.report_next_clock = true;
    }

    /// The reading a message gives, if any: every change of the board is a placement; a clock
    /// message is a report unless it repeats the last one.
    pub fn message(&mut self, message: &Message) -> Option<Reading> {
        match message {
            Message::BoardDump(fields) => {
                if self.reversed.is_none() {
                    self.reversed = orientation(fields);
                }
                self.placement = Placement::EMPTY;
                for (index, piece) in fields.iter().enumerate() {
                    let field = Field::new(index as u8).expect("64 fields");
                    self.placement.set(self.square(field), *piece);
                }
                Some(Reading::Placement(self.placement))
            }
            Message::FieldUpdate { field, piece } => {
                self.placement.set(self.square(*field), *piece);
                Some(Reading::Placement(self.placement))
            }
            Message::Clock(status) => self.clock(status).map(Reading::Clock),
            Message::ClockAck | Message::Other { .. } => None,
        }
    }

    /// The clock's battery, when a clock message first tells it or tells a change (a DGT
    /// clock sets a bit of every time message while its battery is low).
    pub fn battery(&mut self, message: &Message) -> Option<Reading> {
        let Message::Clock(status) = message else {
            return None;
        };
        if status.no_clock || self.battery_low == Some(status.battery_low) {
            return None;
        }
        self.battery_low = Some(status.battery_low);
        Some(Reading::Battery(status.battery_low))
    }

    fn square(&self, field: Field) -> Square {
        let (file, rank) = match self.reversed {
            Some(true) => (7 - field.file(), 7 - field.rank()),
            _ => (field.file(), field.rank()),
        };
        Square::from_coords(file, rank).expect("a field is a square")
    }

    fn clock(&mut self, status: &ClockStatus) -> Option<ClockReport> {
        if status.no_clock {
            return None;
        }
        if self.last_clock.as_ref() == Some(status) && !std::mem::take(&mut self.report_next_clock)
        {
            return None;
        }
        self.report_next_clock = false;
        let to_move = side_to_move(status);
        if self.white_clock.is_none() {
            self.white_clock = to_move;
        }
        let white = self.white_clock?;
        let color = |side: ClockSide| {
            if side == white {
                Color::White
            } else {
                Color::Black
            }
        };
        // A press hands the move to the other side: the player whose turn it was pressed.
        let pressed_by = self
            .last_clock
            .and_then(|last| side_to_move(&last))
            .filter(|before| to_move.is_some_and(|now| now != *before))
            .map(color);
        self.last_clock = Some(*status);
        let face = |side: ClockSide| match side {
            ClockSide::Left => status.left,
            ClockSide::Right => status.right,
        };
        let other = match white {
            ClockSide::Left => ClockSide::Right,
            ClockSide::Right => ClockSide::Left,
        };
        let fallen = |face: Face| face.final_flag || face.flag;
        Some(ClockReport {
            white_ms: face(white).ms,
            black_ms: face(other).ms,
            running: to_move.filter(|_| status.running).map(color),
            white_flag: fallen(face(white)),
            black_flag: fallen(face(other)),
            pressed_by,
        })
    }
}

fn side_to_move(status: &ClockStatus) -> Option<ClockSide> {
    match (status.left_to_move, status.right_to_move) {
        (true, false) => Some(ClockSide::Left),
        (false, true) => Some(ClockSide::Right),
        _ => None,
    }
}

/// `Some(true)` when the white pieces stand on the board's ranks 7 and 8: the board was set up
/// the wrong way round. `None` while the dump does not tell (too few pieces on either side).
fn orientation(fields: &Fields) -> Option<bool> {
    let white_on = |range: std::ops::Range<usize>| {
        fields[range]
            .iter()
            .filter(|p| p.is_some_and(|p| p.color == Color::White))
            .count()
    };
    let (top, bottom) = (white_on(0..16), white_on(48..64));
    match top.abs_diff(bottom) {
        0..=3 => None,
        _ => Some(top > bottom),
    }
}
