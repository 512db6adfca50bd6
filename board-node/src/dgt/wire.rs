//! The DGT e-board serial protocol, as the board sends it (9600 baud, 8N1).
//!
//! Every message starts with its id with bit 7 set, then a 14-bit length in two 7-bit bytes
//! (most significant first) that counts the 3 header bytes too. The messages a node reads:
//!
//! | id     | message      | data                                                          |
//! |--------|--------------|---------------------------------------------------------------|
//! | `0x86` | board dump   | 64 piece codes, square 0 = a8 … 63 = h1                        |
//! | `0x8E` | field update | the square and its new piece code                             |
//! | `0x8D` | clock        | right face (3 bytes), left face (3 bytes), status byte        |
//!
//! Piece codes: 0 empty, 1–6 white pawn, rook, knight, bishop, king, queen, 7–12 the same in
//! black. A clock face is a flags nibble over the hours nibble, then minutes and seconds in
//! BCD. Reads off a serial port split messages anywhere, and a line glitch can put garbage
//! between them: the [`Decoder`] buffers partial messages and skips to the next id byte.

use protocol::{Color, Piece, Role};

use crate::eboard::message::{ClockStatus, Face, Field, Fields, Message};
use thiserror::Error;

const BOARD_DUMP: u8 = 0x86;
const CLOCK: u8 = 0x8D;
const FIELD_UPDATE: u8 = 0x8E;
const SERIAL_NUMBER: u8 = 0x91;
const HEADER_LEN: usize = 3;

/// The one-byte commands a node sends the board (the names are the DGT protocol's).
pub mod command {
    /// Back to idle: the board sends nothing until asked.
    pub const RESET: u8 = 0x40;
    /// Send the clock's state once.
    pub const SEND_CLK: u8 = 0x41;
    /// Send a board dump once.
    pub const SEND_BRD: u8 = 0x42;
    /// Send every field change and every clock change from now on.
    pub const SEND_UPDATE: u8 = 0x43;
    /// Send every field change (not the clock) from now on.
    pub const SEND_UPDATE_BRD: u8 = 0x44;
    /// Send the board's serial number once.
    pub const RETURN_SERIALNR: u8 = 0x45;
    /// As [`SEND_UPDATE`], but a clock message only when the clock's display changes.
    pub const SEND_UPDATE_NICE: u8 = 0x4b;
}

/// What a node sends a board after opening its line: idle first, then the board and the
/// clock as they stand, then every change.
pub const START_COMMANDS: [u8; 4] = [
    command::RESET,
    command::SEND_BRD,
    command::SEND_CLK,
    command::SEND_UPDATE_NICE,
];

/// What a node sends a board that has been silent a while: the board and the clock again,
/// and update mode again, which a board that lost power and came back has forgotten.
pub const PROBE_COMMANDS: [u8; 3] = [
    command::SEND_BRD,
    command::SEND_CLK,
    command::SEND_UPDATE_NICE,
];

/// Why a complete message could not be read. The bytes are consumed either way: the next
/// message decodes normally.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// A message's length disagrees with what its id requires.
    #[error("message {id:#04x} carries {len} data bytes, expected {expected}")]
    Length { id: u8, len: usize, expected: usize },
    /// A piece code outside 0–12 (the board's special pieces included).
    #[error("piece code {code} on field {field}")]
    PieceCode { field: u8, code: u8 },
    /// A field update for a square number over 63.
    #[error("field number {0} is not a square")]
    Field(u8),
    /// A clock time that is not binary-coded decimal.
    #[error("clock time byte {0:#04x} is not BCD")]
    Bcd(u8),
}

/// Turns the bytes read off the serial line into messages.
///
/// ```
/// use board_node::dgt::wire::Decoder;
/// use board_node::eboard::message::Message;
///
/// let mut decoder = Decoder::default();
/// decoder.push(&[0x8e, 0x00]); // half a field update
/// assert_eq!(decoder.next_message(), None);
/// decoder.push(&[0x05, 0x34, 0x00]); // the rest: field 52 (e2 seen from White) emptied
/// assert!(matches!(decoder.next_message(), Some(Ok(Message::FieldUpdate { piece: None, .. }))));
/// ```
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    skipped_bytes: u64,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes thrown away because they could not start a message (line noise).
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped_bytes
    }

    /// The next complete message, `None` until more bytes arrive.
    pub fn next_message(&mut self) -> Option<Result<Message, WireError>> {
        loop {
            self.skip_to_id();
            if self.buffer.len() < HEADER_LEN {
                return None;
            }
            let (msb, lsb) = (self.buffer[1], self.buffer[2]);
            if msb & 0x80 != 0
                || lsb & 0x80 != 0
                || (usize::from(msb) << 7 | usize::from(lsb)) < HEADER_LEN
            {
                // Not a header after all: drop the id byte and look again.
                self.buffer.remove(0);
                self.skipped_bytes += 1;
                continue;
            }
            let len = usize::from(msb) << 7 | usize::from(lsb);
            if self.buffer.len() < len {
                return None;
            }
            let message: Vec<u8> = self.buffer.drain(..len).collect();
            return Some(parse(message[0], &message[HEADER_LEN..]));
        }
    }

    fn skip_to_id(&mut self) {
        let start = self
            .buffer
            .iter()
            .position(|b| b & 0x80 != 0)
            .unwrap_or(self.buffer.len());
        self.buffer.drain(..start);
        self.skipped_bytes += start as u64;
    }
}

/// A board dump's or a clock message's data (bus mode carries the same data under its own
/// header): the message it is.
pub(crate) fn board_dump(data: &[u8]) -> Result<Message, WireError> {
    parse(BOARD_DUMP, data)
}

/// See [`board_dump`].
pub(crate) fn clock(data: &[u8]) -> Result<Message, WireError> {
    parse(CLOCK, data)
}

/// The data of `message` without its header (bus mode's replies carry it under theirs).
pub(crate) fn data(message: &Message) -> Vec<u8> {
    encode(message).split_off(HEADER_LEN)
}

fn parse(id: u8, data: &[u8]) -> Result<Message, WireError> {
    let expect = |expected: usize| {
        if data.len() == expected {
            Ok(())
        } else {
            Err(WireError::Length {
                id,
                len: data.len(),
                expected,
            })
        }
    };
    match id {
        BOARD_DUMP => {
            expect(64)?;
            let mut fields: Box<Fields> = Box::new([None; 64]);
            for (i, code) in data.iter().enumerate() {
                fields[i] = piece(i as u8, *code)?;
            }
            Ok(Message::BoardDump(fields))
        }
        FIELD_UPDATE => {
            expect(2)?;
            let field = Field::new(data[0]).ok_or(WireError::Field(data[0]))?;
            Ok(Message::FieldUpdate {
                field,
                piece: piece(data[0], data[1])?,
            })
        }
        CLOCK => {
            expect(7)?;
            // An hours nibble of 0xA marks the clock's acknowledgement of a command; Bluetooth
            // boards answer a command with an all-zero message. Neither is a reading.
            if data[0] & 0x0f == 0x0a || data[3] & 0x0f == 0x0a || data.iter().all(|b| *b == 0) {
                return Ok(Message::ClockAck);
            }
            let status = data[6];
            Ok(Message::Clock(ClockStatus {
                right: face(&data[0..3])?,
                left: face(&data[3..6])?,
                running: status & 0x01 != 0,
                right_high: status & 0x02 != 0,
                battery_low: status & 0x04 != 0,
                left_to_move: status & 0x08 != 0,
                right_to_move: status & 0x10 != 0,
                no_clock: status & 0x20 != 0,
            }))
        }
        _ => Ok(Message::Other { id }),
    }
}

/// The bytes a board sends for `message`: the inverse of the [`Decoder`], for the emulator
/// and for tests. `Other` messages encode as a serial-number message with `id`'s data empty.
pub fn encode(message: &Message) -> Vec<u8> {
    let (id, data): (u8, Vec<u8>) = match message {
        Message::BoardDump(fields) => (BOARD_DUMP, fields.iter().map(|p| code(*p)).collect()),
        Message::FieldUpdate { field, piece } => (FIELD_UPDATE, vec![field.index(), code(*piece)]),
        Message::Clock(status) => {
            let mut data = Vec::with_capacity(7);
            data.extend(face_bytes(&status.right));
            data.extend(face_bytes(&status.left));
            let bit = |on: bool, bit: u8| if on { bit } else { 0 };
            data.push(
                bit(status.running, 0x01)
                    | bit(status.right_high, 0x02)
                    | bit(status.battery_low, 0x04)
                    | bit(status.left_to_move, 0x08)
                    | bit(status.right_to_move, 0x10)
                    | bit(status.no_clock, 0x20),
            );
            (CLOCK, data)
        }
        // The clock's acknowledgement of a command: hours nibble 0xA.
        Message::ClockAck => (CLOCK, vec![0x0a, 0, 0, 0x0a, 0, 0, 0]),
        Message::Other { id } => (*id, Vec::new()),
    };
    let len = HEADER_LEN + data.len();
    let mut bytes = vec![id, (len >> 7) as u8 & 0x7f, len as u8 & 0x7f];
    bytes.extend(data);
    bytes
}

/// A serial-number message (`0x91`) carrying `serial` (the board's 5 ASCII digits).
pub fn encode_serial_number(serial: &str) -> Vec<u8> {
    let data: Vec<u8> = serial.bytes().map(|b| b & 0x7f).collect();
    let len = HEADER_LEN + data.len();
    let mut bytes = vec![SERIAL_NUMBER, (len >> 7) as u8 & 0x7f, len as u8 & 0x7f];
    bytes.extend(data);
    bytes
}

pub(crate) fn code(piece: Option<Piece>) -> u8 {
    use Role::*;
    let Some(piece) = piece else { return 0 };
    let index = match piece.role {
        Pawn => 1,
        Rook => 2,
        Knight => 3,
        Bishop => 4,
        King => 5,
        Queen => 6,
    };
    match piece.color {
        Color::White => index,
        Color::Black => index + 6,
    }
}

fn face_bytes(face: &Face) -> [u8; 3] {
    let seconds = face.ms / 1000;
    let bcd = |n: u32| (((n / 10) << 4) | (n % 10)) as u8;
    let flags =
        u8::from(face.final_flag) | u8::from(face.time_per_move) << 1 | u8::from(face.flag) << 2;
    [
        flags << 4 | (seconds / 3600).min(9) as u8,
        bcd(seconds / 60 % 60),
        bcd(seconds % 60),
    ]
}

pub(crate) fn piece(field: u8, code: u8) -> Result<Option<Piece>, WireError> {
    use Role::*;
    const ROLES: [Role; 6] = [Pawn, Rook, Knight, Bishop, King, Queen];
    let (color, index) = match code {
        0 => return Ok(None),
        1..=6 => (Color::White, code - 1),
        7..=12 => (Color::Black, code - 7),
        _ => return Err(WireError::PieceCode { field, code }),
    };
    Ok(Some(Piece {
        color,
        role: ROLES[usize::from(index)],
    }))
}

fn face(bytes: &[u8]) -> Result<Face, WireError> {
    let flags = bytes[0] >> 4;
    let hours = u32::from(bytes[0] & 0x0f);
    let seconds = hours * 3600 + bcd(bytes[1])? * 60 + bcd(bytes[2])?;
    Ok(Face {
        ms: seconds * 1000,
        final_flag: flags & 0x01 != 0,
        time_per_move: flags & 0x02 != 0,
        flag: flags & 0x04 != 0,
    })
}

pub(crate) fn bcd(byte: u8) -> Result<u32, WireError> {
    let (tens, units) = (byte >> 4, byte & 0x0f);
    if tens > 9 || units > 9 {
        return Err(WireError::Bcd(byte));
    }
    Ok(u32::from(tens) * 10 + u32::from(units))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Vec<Result<Message, WireError>> {
        let mut decoder = Decoder::default();
        decoder.push(bytes);
        std::iter::from_fn(|| decoder.next_message()).collect()
    }

    #[test]
    fn a_clock_message_reads_both_faces_and_the_status() {
        // Right 0:05:05 with the time-per-move symbol, left 0:04:59 and final flag, left to
        // move, running.
        let got = decode_all(&[0x8d, 0x00, 0x0a, 0x20, 0x05, 0x05, 0x31, 0x04, 0x59, 0x09]);
        let Ok(Message::Clock(status)) = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(status.right.ms, 305_000);
        assert!(status.right.time_per_move && !status.right.final_flag);
        assert_eq!(status.left.ms, 3_899_000);
        assert!(status.left.final_flag);
        assert!(status.running && status.left_to_move && !status.right_to_move);
    }

    #[test]
    fn garbage_between_messages_is_skipped_and_counted() {
        let mut decoder = Decoder::default();
        decoder.push(&[0x01, 0x02, 0x8e, 0x00, 0x05, 0x0c, 0x05, 0x8e, 0x00]);
        assert!(matches!(
            decoder.next_message(),
            Some(Ok(Message::FieldUpdate { .. }))
        ));
        assert_eq!(decoder.skipped_bytes(), 2);
        assert_eq!(decoder.next_message(), None, "a partial message waits");
    }

    #[test]
    fn a_bad_message_is_an_error_and_the_next_one_reads() {
        let got = decode_all(&[0x8e, 0x00, 0x05, 0x0c, 0x0f, 0x8e, 0x00, 0x05, 0x0c, 0x01]);
        assert_eq!(
            got[0],
            Err(WireError::PieceCode {
                field: 12,
                code: 15
            })
        );
        assert!(matches!(got[1], Ok(Message::FieldUpdate { .. })));
    }

    #[test]
    fn what_is_encoded_decodes_to_itself() {
        let face = |ms, flag| Face {
            ms,
            flag,
            final_flag: flag,
            time_per_move: !flag,
        };
        let status = ClockStatus {
            left: face(5_400_000, false),
            right: face(0, true),
            running: true,
            right_high: true,
            left_to_move: true,
            ..ClockStatus::default()
        };
        let mut fields: Box<Fields> = Box::new([None; 64]);
        fields[3] = Some(Piece {
            color: Color::Black,
            role: Role::Queen,
        });
        let messages = [
            Message::Clock(status),
            Message::BoardDump(fields),
            Message::FieldUpdate {
                field: Field::new(60).expect("a field"),
                piece: None,
            },
            Message::ClockAck,
        ];
        let bytes: Vec<u8> = messages.iter().flat_map(encode).collect();
        let decoded: Vec<_> = decode_all(&bytes).into_iter().map(Result::unwrap).collect();
        assert_eq!(decoded, messages);
    }

    #[test]
    fn a_header_with_an_impossible_length_is_noise() {
        let got = decode_all(&[0x8e, 0x00, 0x01, 0x8e, 0x00, 0x05, 0x0c, 0x01]);
        assert_eq!(got.len(), 1);
        assert!(matches!(got[0], Ok(Message::FieldUpdate { .. })));
    }
}
