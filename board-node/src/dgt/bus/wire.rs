//! DGT's bus mode on the wire (DGT's protocol header, "Bus communication protocol"): the
//! line reaches every board of a chain, so every command names a board and every reply
//! says which board sent it.
//!
//! A command is 4 bytes: its code (bit 7 set), the 14-bit bus address as two 7-bit bytes
//! (most significant first), and a checksum, the sum of the three & 0x7F. A reply is its
//! id (bit 7 set), its length (counting every byte, checksum included) as two 7-bit bytes,
//! the sender's address as two 7-bit bytes, the data, and a checksum over all before it.
//! Reply ids overlap the single-board protocol's: a reader must know the line is a bus.
//!
//! The data of a board dump and a clock reply are the single-board messages' data
//! ([`crate::dgt::wire`]); changes come as the board's EEPROM records ([`Record`]).

use protocol::Piece;
use thiserror::Error;

use crate::dgt::wire::{self as single, WireError};
use crate::eboard::message::{Field, Fields, Message};

/// The commands of bus mode (the names are DGT's).
pub mod command {
    /// The clock as it stands: a [`super::Reply::Clock`].
    pub const SEND_CLK: u8 = 0x81;
    /// The board as it stands: a [`super::Reply::BoardDump`].
    pub const SEND_BRD: u8 = 0x82;
    /// Everything recorded since the last `SEND_CHANGES`: [`super::Reply::Changes`].
    pub const SEND_CHANGES: u8 = 0x83;
    /// The last changes again (after a checksum error: a second `SEND_CHANGES` would
    /// lose them).
    pub const REPEAT_CHANGES: u8 = 0x84;
    /// Write a start tag: `SEND_FROM_START` reads from it.
    pub const SET_START_GAME: u8 = 0x85;
    /// Everything recorded since the start tag.
    pub const SEND_FROM_START: u8 = 0x86;
    /// Answer with a ping; to address 0 every board answers, at a random time within
    /// 1.1 s.
    pub const PING: u8 = 0x87;
    /// Leave bus mode: never on a shared line.
    pub const END_BUSMODE: u8 = 0x88;
    /// A power-up reset (some seconds).
    pub const RESET: u8 = 0x89;
    /// Do not answer the next ping to address 0 (answered with a ping at once).
    pub const IGNORE_NEXT_PING: u8 = 0x8a;
    /// The board's firmware version.
    pub const SEND_VERSION: u8 = 0x8b;
}

mod id {
    pub const BOARD_DUMP: u8 = 0x83;
    pub const CLOCK: u8 = 0x84;
    pub const CHANGES: u8 = 0x85;
    pub const FROM_START: u8 = 0x86;
    pub const PING: u8 = 0x87;
    pub const START_GAME_WRITTEN: u8 = 0x88;
    pub const VERSION: u8 = 0x89;
}

/// Id, two length bytes, two address bytes, checksum.
const FRAME_OVERHEAD: usize = 6;
/// The longest reply a board sends: its whole EEPROM (0x1F00 bytes) and the frame.
pub const MAX_REPLY: usize = 0x1f00 + FRAME_OVERHEAD;

/// A board's 14-bit bus address. DGT derives it from the serial number (serial 01025 has
/// address 1025); a serial number above 16,383 keeps its low 14 bits, so the node learns
/// the addresses on a chain by discovery and checks them against the enrolled serials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address(u16);

impl Address {
    /// Every board on the line (pings, resets).
    pub const ALL: Address = Address(0);

    pub fn new(address: u16) -> Option<Address> {
        (address < 1 << 14).then_some(Address(address))
    }

    /// The address of the board with this serial number (its digits, as printed on the
    /// board and enrolled: "01025"); `None` if it is not a number or its address would be
    /// 0, which means every board.
    pub fn of_serial(serial: &str) -> Option<Address> {
        let digits = serial.trim();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let serial: u64 = digits.parse().ok()?;
        let address = (serial % (1 << 14)) as u16;
        (address != 0).then_some(Address(address))
    }

    pub fn get(self) -> u16 {
        self.0
    }

    fn bytes(self) -> [u8; 2] {
        [(self.0 >> 7) as u8 & 0x7f, self.0 as u8 & 0x7f]
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn checksum(bytes: &[u8]) -> u8 {
    (bytes.iter().map(|b| u32::from(*b)).sum::<u32>() & 0x7f) as u8
}

/// The 4 bytes of `code` sent to `to`.
///
/// ```
/// use board_node::dgt::bus::wire::{command, frame, Address};
/// // The header's example: 0x81 0x10 0x06 carries checksum 0x17.
/// assert_eq!(frame(command::SEND_CLK, Address::new(0x10 << 7 | 0x06).unwrap()), [0x81, 0x10, 0x06, 0x17]);
/// ```
pub fn frame(code: u8, to: Address) -> [u8; 4] {
    let [msb, lsb] = to.bytes();
    [code, msb, lsb, checksum(&[code, msb, lsb])]
}

/// One record of a board's EEPROM, as changes carry them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A field's new content (as a single board's field update).
    Field { field: Field, piece: Option<Piece> },
    /// The clock was pressed: the halted side's time (`left` seen from the front).
    Time { left: bool, ms: u32 },
    /// The board was powered up (or reset): the pieces it found follow as field records.
    PowerUp,
    /// The start tag (`SET_START_GAME`).
    StartTag,
    /// A tag with no reading for a node (begin position, empty board, end of file …).
    Tag(u8),
}

/// A reply's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    BoardDump(Box<Fields>),
    /// A clock reading, or the clock's acknowledgement ([`Message::ClockAck`]).
    Clock(Message),
    Changes(Vec<Record>),
    FromStart(Vec<Record>),
    Ping,
    StartGameWritten,
    Version {
        major: u8,
        minor: u8,
    },
}

impl Reply {
    /// The command whose answer this is (a ping answers both `PING` and
    /// `IGNORE_NEXT_PING`).
    pub fn answers(&self, code: u8) -> bool {
        use command::*;
        matches!(
            (self, code),
            (Reply::BoardDump(_), SEND_BRD)
                | (Reply::Clock(_), SEND_CLK)
                | (Reply::Changes(_), SEND_CHANGES | REPEAT_CHANGES)
                | (Reply::FromStart(_), SEND_FROM_START)
                | (Reply::Ping, PING | IGNORE_NEXT_PING)
                | (Reply::StartGameWritten, SET_START_GAME)
                | (Reply::Version { .. }, SEND_VERSION)
        )
    }
}

/// Why a reply could not be read. The frame's bytes are consumed; the next reply reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BusError {
    /// Bytes garbled on the line (or two boards answering at once).
    #[error("reply {id:#04x} from board {from}: checksum {got:#04x}, expected {expected:#04x}")]
    Checksum {
        id: u8,
        from: Address,
        got: u8,
        expected: u8,
    },
    #[error("reply from board {from}: {error}")]
    Data { from: Address, error: WireError },
    #[error("reply from board {from}: EEPROM record {byte:#04x} is not one DGT defines")]
    Record { from: Address, byte: u8 },
    #[error("reply {id:#04x} from board {from} carries {len} bytes, expected {expected}")]
    Length {
        id: u8,
        from: Address,
        len: usize,
        expected: usize,
    },
}

/// Turns the bytes off a bus line into replies, whatever board sent them.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    skipped_bytes: u64,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes thrown away because they could not start a reply (line noise, collisions).
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped_bytes
    }

    /// Drops a reply cut off (counted as skipped).
    pub fn clear(&mut self) {
        self.skipped_bytes += self.buffer.len() as u64;
        self.buffer.clear();
    }

    /// Whether a reply has begun and not ended.
    pub fn midway(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// The next complete reply and its sender, `None` until more bytes arrive.
    pub fn next_reply(&mut self) -> Option<Result<(Address, Reply), BusError>> {
        loop {
            let start = self
                .buffer
                .iter()
                .position(|b| (id::BOARD_DUMP..=id::VERSION).contains(b))
                .unwrap_or(self.buffer.len());
            self.buffer.drain(..start);
            self.skipped_bytes += start as u64;
            if self.buffer.len() < 5 {
                return None;
            }
            let header = &self.buffer[1..5];
            let len = usize::from(header[0]) << 7 | usize::from(header[1]);
            if header.iter().any(|b| b & 0x80 != 0)
                || !(FRAME_OVERHEAD..=MAX_REPLY).contains(&len)
                || !plausible_length(self.buffer[0], len)
            {
                // Not a header after all.
                self.buffer.remove(0);
                self.skipped_bytes += 1;
                continue;
            }
            if self.buffer.len() < len {
                return None;
            }
            let frame: Vec<u8> = self.buffer.drain(..len).collect();
            let from = Address(u16::from(frame[3]) << 7 | u16::from(frame[4]));
            let expected = checksum(&frame[..len - 1]);
            if frame[len - 1] != expected {
                return Some(Err(BusError::Checksum {
                    id: frame[0],
                    from,
                    got: frame[len - 1],
                    expected,
                }));
            }
            return Some(parse(frame[0], from, &frame[5..len - 1]).map(|reply| (from, reply)));
        }
    }
}

/// Whether a reply `id` can be `len` bytes long: fixed for all but the changes.
fn plausible_length(id: u8, len: usize) -> bool {
    match fixed_length(id) {
        Some(fixed) => len == fixed,
        None => true,
    }
}

fn fixed_length(reply: u8) -> Option<usize> {
    match reply {
        id::BOARD_DUMP => Some(FRAME_OVERHEAD + 64),
        id::CLOCK => Some(FRAME_OVERHEAD + 7),
        id::PING | id::START_GAME_WRITTEN => Some(FRAME_OVERHEAD),
        id::VERSION => Some(FRAME_OVERHEAD + 2),
        _ => None,
    }
}

fn parse(reply: u8, from: Address, data: &[u8]) -> Result<Reply, BusError> {
    let wire = |error| BusError::Data { from, error };
    match reply {
        id::BOARD_DUMP => match single::board_dump(data).map_err(wire)? {
            Message::BoardDump(fields) => Ok(Reply::BoardDump(fields)),
            _ => unreachable!("a board dump's data is a board dump"),
        },
        id::CLOCK => Ok(Reply::Clock(single::clock(data).map_err(wire)?)),
        id::CHANGES => Ok(Reply::Changes(records(from, data)?)),
        id::FROM_START => Ok(Reply::FromStart(records(from, data)?)),
        id::PING => Ok(Reply::Ping),
        id::START_GAME_WRITTEN => Ok(Reply::StartGameWritten),
        id::VERSION => Ok(Reply::Version {
            major: data[0],
            minor: data[1],
        }),
        _ => Err(BusError::Length {
            id: reply,
            from,
            len: data.len(),
            expected: 0,
        }),
    }
}

const EE_POWERUP: u8 = 0x6a;
const EE_START_TAG: u8 = 0x7b;

/// The EEPROM records in a changes reply's data.
fn records(from: Address, data: &[u8]) -> Result<Vec<Record>, BusError> {
    let bad = |byte| BusError::Record { from, byte };
    let mut records = Vec::new();
    let mut rest = data;
    while let Some(&first) = rest.first() {
        let (record, len) = match first {
            // 0t0r nnnn, then the field: t is always 1, r marks a quick change.
            0x40..=0x5f => {
                let &[_, field, ..] = rest else {
                    return Err(bad(first));
                };
                let field = Field::new(field).ok_or(bad(field))?;
                let piece = single::piece(field.index(), first & 0x0f)
                    .map_err(|error| BusError::Data { from, error })?;
                (Record::Field { field, piece }, 2)
            }
            // 0uuf hhhh, BCD minutes, BCD seconds: the halted clock's time.
            0x60..=0x69 | 0x70..=0x79 => {
                let &[_, minutes, seconds, ..] = rest else {
                    return Err(bad(first));
                };
                let wire = |error| BusError::Data { from, error };
                let hours = u32::from(first & 0x0f);
                let s = hours * 3600
                    + single::bcd(minutes).map_err(wire)? * 60
                    + single::bcd(seconds).map_err(wire)?;
                (
                    Record::Time {
                        left: first & 0x10 != 0,
                        ms: s * 1000,
                    },
                    3,
                )
            }
            EE_POWERUP => (Record::PowerUp, 1),
            EE_START_TAG => (Record::StartTag, 1),
            0x6b..=0x6f | 0x7a | 0x7c..=0x7f | 0x00 => (Record::Tag(first), 1),
            _ => return Err(bad(first)),
        };
        records.push(record);
        rest = &rest[len..];
    }
    Ok(records)
}

/// The bytes of `record` in a board's EEPROM; `quick`: a field changed within 250 ms of
/// the last.
pub fn record_bytes(record: &Record, quick: bool) -> Vec<u8> {
    match record {
        Record::Field { field, piece } => {
            vec![
                0x40 | u8::from(quick) << 4 | single::code(*piece),
                field.index(),
            ]
        }
        Record::Time { left, ms } => {
            let s = ms / 1000;
            let bcd = |n: u32| (((n / 10) << 4) | (n % 10)) as u8;
            vec![
                0x60 | u8::from(*left) << 4 | (s / 3600).min(9) as u8,
                bcd(s / 60 % 60),
                bcd(s % 60),
            ]
        }
        Record::PowerUp => vec![EE_POWERUP],
        Record::StartTag => vec![EE_START_TAG],
        Record::Tag(byte) => vec![*byte],
    }
}

/// The bytes a board at `from` sends for `reply` (for the emulator and tests).
pub fn encode(from: Address, reply: &Reply) -> Vec<u8> {
    let (reply_id, data): (u8, Vec<u8>) = match reply {
        Reply::BoardDump(fields) => (
            id::BOARD_DUMP,
            single::data(&Message::BoardDump(fields.clone())),
        ),
        Reply::Clock(message) => (id::CLOCK, single::data(message)),
        Reply::Changes(records) => (
            id::CHANGES,
            records
                .iter()
                .flat_map(|r| record_bytes(r, false))
                .collect(),
        ),
        Reply::FromStart(records) => (
            id::FROM_START,
            records
                .iter()
                .flat_map(|r| record_bytes(r, false))
                .collect(),
        ),
        Reply::Ping => (id::PING, Vec::new()),
        Reply::StartGameWritten => (id::START_GAME_WRITTEN, Vec::new()),
        Reply::Version { major, minor } => (id::VERSION, vec![*major & 0x7f, *minor & 0x7f]),
    };
    encode_raw(reply_id, from, &data)
}

/// A reply frame around `data` as it stands (a changes reply carries the EEPROM's bytes).
pub fn encode_raw(reply_id: u8, from: Address, data: &[u8]) -> Vec<u8> {
    let len = FRAME_OVERHEAD + data.len();
    let mut bytes = vec![reply_id, (len >> 7) as u8 & 0x7f, len as u8 & 0x7f];
    bytes.extend(from.bytes());
    bytes.extend_from_slice(data);
    bytes.push(checksum(&bytes));
    bytes
}

/// A changes reply's id, for [`encode_raw`].
pub const CHANGES_REPLY: u8 = id::CHANGES;

/// Reads the commands a master sends (for the emulator): each valid 4-byte frame, noise
/// skipped.
#[derive(Debug, Default)]
pub struct CommandReader {
    buffer: Vec<u8>,
}

impl CommandReader {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next command and its address; a single-board command (any byte 0x40–0x7F on
    /// its own) as `(byte, None)`.
    pub fn next_command(&mut self) -> Option<(u8, Option<Address>)> {
        loop {
            let start = self.buffer.iter().position(|b| *b >= 0x40)?;
            self.buffer.drain(..start);
            let code = self.buffer[0];
            if code < 0x80 {
                self.buffer.remove(0);
                return Some((code, None));
            }
            if self.buffer.len() < 4 {
                return None;
            }
            let frame = [
                self.buffer[0],
                self.buffer[1],
                self.buffer[2],
                self.buffer[3],
            ];
            if frame[1..].iter().all(|b| b & 0x80 == 0) && checksum(&frame[..3]) == frame[3] {
                self.buffer.drain(..4);
                let address = Address(u16::from(frame[1]) << 7 | u16::from(frame[2]));
                return Some((code, Some(address)));
            }
            self.buffer.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eboard::message::ClockStatus;
    use protocol::{Color, Role};

    fn decode_all(bytes: &[u8]) -> Vec<Result<(Address, Reply), BusError>> {
        let mut decoder = Decoder::default();
        decoder.push(bytes);
        std::iter::from_fn(|| decoder.next_reply()).collect()
    }

    #[test]
    fn a_serial_number_is_its_address_in_fourteen_bits() {
        // The header's example: serial "01025 1.0" has bus address 0x08 0x01.
        let address = Address::of_serial("01025").unwrap();
        assert_eq!(address.bytes(), [0x08, 0x01]);
        assert_eq!(Address::of_serial("20001").unwrap().get(), 20001 - 16384);
        assert_eq!(Address::of_serial("16384"), None, "would be every board");
        assert_eq!(Address::of_serial("DGT-7"), None);
    }

    #[test]
    fn replies_from_several_boards_decode_with_their_senders() {
        let one = Address::new(1025).unwrap();
        let two = Address::new(3000).unwrap();
        let mut fields: Box<Fields> = Box::new([None; 64]);
        fields[60] = Some(Piece {
            color: Color::White,
            role: Role::King,
        });
        let changes = vec![
            Record::PowerUp,
            Record::Field {
                field: Field::new(52).unwrap(),
                piece: None,
            },
            Record::Time {
                left: true,
                ms: 3_599_000,
            },
            Record::Tag(0x6f),
        ];
        let clock = Message::Clock(ClockStatus {
            running: true,
            left_to_move: true,
            ..ClockStatus::default()
        });
        let replies = [
            (one, Reply::Ping),
            (two, Reply::BoardDump(fields)),
            (one, Reply::Changes(changes)),
            (two, Reply::Clock(clock)),
            (one, Reply::Version { major: 1, minor: 3 }),
        ];
        let mut bytes = vec![0x13, 0x7f];
        for (from, reply) in &replies {
            bytes.extend(encode(*from, reply));
        }
        let got: Vec<_> = decode_all(&bytes).into_iter().map(Result::unwrap).collect();
        assert_eq!(got, replies);
    }

    #[test]
    fn a_garbled_reply_is_a_checksum_error_and_the_next_reads() {
        let from = Address::new(77).unwrap();
        let mut garbled = encode(from, &Reply::Changes(vec![Record::StartTag]));
        garbled[5] ^= 0x01;
        garbled.extend(encode(from, &Reply::Ping));
        let got = decode_all(&garbled);
        assert!(matches!(got[0], Err(BusError::Checksum { id: 0x85, .. })));
        assert_eq!(got[1], Ok((from, Reply::Ping)));
    }

    #[test]
    fn commands_are_read_back_whole_and_noise_between_them_skipped() {
        let to = Address::new(300).unwrap();
        let mut reader = CommandReader::default();
        let mut bytes = vec![0x81, 0x05];
        bytes.extend(frame(command::SEND_CHANGES, to));
        bytes.push(0x42);
        bytes.extend(frame(command::PING, Address::ALL));
        reader.push(&bytes);
        assert_eq!(
            reader.next_command(),
            Some((command::SEND_CHANGES, Some(to)))
        );
        assert_eq!(reader.next_command(), Some((0x42, None)));
        assert_eq!(
            reader.next_command(),
            Some((command::PING, Some(Address::ALL)))
        );
        assert_eq!(reader.next_command(), None);
    }
}
