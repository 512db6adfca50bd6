//! The Millennium ChessLink protocol ("Magic Chessboard Communications Protocol", Dave
//! Woodfield, 2017, as published with python-mchess): 38400 baud, 7 data bits, odd parity,
//! 1 stop bit, printable ASCII only.
//!
//! A message is a command letter (upper case from the host, its lower-case letter in the
//! board's reply), its data, then a block parity check: the XOR of every character before
//! it, as two upper-case hex digits. The serial driver adds and checks the odd parity bit; a
//! line without one (a pseudo-terminal, a driver set to 8 bits) may hand it up, so bit 7 is
//! cleared on reading.
//!
//! | reply | data                                                        |
//! |-------|-------------------------------------------------------------|
//! | `s`   | 64 piece codes, A8 … H8, A7 … H1; `KQRBNP` white, `kqrbnp` black, `.` empty |
//! | `v`   | firmware version, 4 hex digits                              |
//! | `w`   | E2ROM address and value written, 4 hex digits               |
//! | `r`   | E2ROM address and value read, 4 hex digits                  |
//! | `l`   | LEDs set                                                    |
//! | `x`   | LEDs off                                                    |

use protocol::{Color, Piece, Role};
use thiserror::Error;

use crate::eboard::message::Fields;

/// A reply from the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The board's status: what stands on each square, a8 first (the DGT board's order).
    Status(Box<Fields>),
    /// Any other reply: its letter.
    Ack(u8),
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// The block parity check does not match the message.
    #[error("reply {letter:?}: check {got:?}, computed {want:02X}")]
    Check { letter: char, got: String, want: u8 },
    /// A status with a character that is no piece code.
    #[error("status: {0:?} is not a piece code")]
    PieceCode(char),
}

/// The E2ROM address of the automatic status reports, and the value for "on any change".
const AUTO_REPORTS: &str = "W0203";

/// What a node sends a board after opening its line: status reports on every change, then the
/// status now.
pub fn start_commands() -> Vec<u8> {
    let mut bytes = command(AUTO_REPORTS);
    bytes.extend(command("S"));
    bytes
}

/// What a node sends a board that has been silent a while: the status, which a board there
/// answers.
pub fn probe_commands() -> Vec<u8> {
    command("S")
}

/// `text` (a command letter and its data) with its block parity check and, on each byte,
/// the odd parity bit the board expects on its line.
pub fn command(text: &str) -> Vec<u8> {
    let mut message = text.as_bytes().to_vec();
    message.extend(format!("{:02X}", check(text.as_bytes())).into_bytes());
    message.into_iter().map(odd_parity).collect()
}

/// A reply as the board sends it (without parity bits: the emulator's line has none).
pub fn reply(letter: u8, data: &str) -> Vec<u8> {
    let mut message = vec![letter];
    message.extend(data.as_bytes());
    let sum = check(&message);
    message.extend(format!("{sum:02X}").into_bytes());
    message
}

/// The status reply for `fields`.
pub fn status(fields: &Fields) -> Vec<u8> {
    let data: String = fields.iter().map(|p| code(*p)).collect();
    reply(b's', &data)
}

/// The command letters of `bytes` as the host sent them, each with its data, for an
/// emulated board: complete commands only, checked; the rest waits in `pending`.
pub fn commands(pending: &mut Vec<u8>, bytes: &[u8]) -> Vec<String> {
    pending.extend(bytes.iter().map(|b| b & 0x7f));
    let mut out = Vec::new();
    loop {
        let Some(start) = pending.iter().position(u8::is_ascii_uppercase) else {
            pending.clear();
            return out;
        };
        pending.drain(..start);
        let data_len = match pending[0] {
            b'W' => 4,
            b'R' => 2,
            b'L' => 2 + 81 * 2,
            _ => 0,
        };
        let len = 1 + data_len + 2;
        if pending.len() < len {
            return out;
        }
        let message: Vec<u8> = pending.drain(..len).collect();
        let (text, sum) = message.split_at(1 + data_len);
        if sum == format!("{:02X}", check(text)).as_bytes() {
            out.push(String::from_utf8_lossy(text).into_owned());
        }
    }
}

fn check(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0, |sum, b| sum ^ (b & 0x7f))
}

fn odd_parity(byte: u8) -> u8 {
    let byte = byte & 0x7f;
    if byte.count_ones().is_multiple_of(2) {
        byte | 0x80
    } else {
        byte
    }
}

fn code(piece: Option<Piece>) -> char {
    let Some(piece) = piece else { return '.' };
    let letter = match piece.role {
        Role::King => 'k',
        Role::Queen => 'q',
        Role::Rook => 'r',
        Role::Bishop => 'b',
        Role::Knight => 'n',
        Role::Pawn => 'p',
    };
    match piece.color {
        Color::White => letter.to_ascii_uppercase(),
        Color::Black => letter,
    }
}

fn piece(c: u8) -> Result<Option<Piece>, WireError> {
    let role = match c.to_ascii_lowercase() {
        b'.' => return Ok(None),
        b'k' => Role::King,
        b'q' => Role::Queen,
        b'r' => Role::Rook,
        b'b' => Role::Bishop,
        b'n' => Role::Knight,
        b'p' => Role::Pawn,
        _ => return Err(WireError::PieceCode(char::from(c))),
    };
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    Ok(Some(Piece { color, role }))
}

/// Turns the bytes read off the line into replies; skips what cannot start one and counts it.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    skipped_bytes: u64,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend(bytes.iter().map(|b| b & 0x7f));
    }

    /// Bytes thrown away because they could not start a reply (line noise).
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped_bytes
    }

    /// The next complete reply, `None` until more bytes arrive.
    pub fn next_reply(&mut self) -> Option<Result<Reply, WireError>> {
        loop {
            let start = self
                .buffer
                .iter()
                .position(|b| b"svwrlx".contains(b))
                .unwrap_or(self.buffer.len());
            self.buffer.drain(..start);
            self.skipped_bytes += start as u64;
            let letter = *self.buffer.first()?;
            let data_len = match letter {
                b's' => 64,
                b'v' | b'w' | b'r' => 4,
                _ => 0,
            };
            let len = 1 + data_len + 2;
            if self.buffer.len() < len {
                return None;
            }
            let message: Vec<u8> = self.buffer[..len].to_vec();
            let (text, sum) = message.split_at(1 + data_len);
            let want = check(text);
            if sum != format!("{want:02X}").as_bytes() {
                // Not a reply after all (a letter in noise), or a damaged one: skip the letter
                // and look again, so a reply right behind is not lost.
                self.buffer.remove(0);
                self.skipped_bytes += 1;
                if letter == b's' {
                    return Some(Err(WireError::Check {
                        letter: 's',
                        got: String::from_utf8_lossy(sum).into_owned(),
                        want,
                    }));
                }
                continue;
            }
            self.buffer.drain(..len);
            if letter != b's' {
                return Some(Ok(Reply::Ack(letter)));
            }
            let mut fields: Box<Fields> = Box::new([None; 64]);
            for (i, c) in text[1..].iter().enumerate() {
                match piece(*c) {
                    Ok(p) => fields[i] = p,
                    Err(e) => return Some(Err(e)),
                }
            }
            return Some(Ok(Reply::Status(fields)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR";

    #[test]
    fn a_real_version_reply_checks_as_the_board_computed_it() {
        // python-mchess's log of a real ChessLink board: `v010374` (firmware 01.03, check 74).
        assert_eq!(reply(b'v', "0103"), b"v010374");
        let mut decoder = Decoder::default();
        // The bytes as that log shows them, parity bits included (`b'v\xb01\xb0\xb374'`).
        decoder.push(&[0x76, 0xb0, 0x31, 0xb0, 0xb3, 0x37, 0x34]);
        assert_eq!(decoder.next_reply(), Some(Ok(Reply::Ack(b'v'))));
    }

    #[test]
    fn commands_carry_their_check_and_odd_parity() {
        // The same log: the host's `V` went out as d6 b5 b6.
        assert_eq!(command("V"), [0xd6, 0xb5, 0xb6]);
        for byte in start_commands() {
            assert_eq!(byte.count_ones() % 2, 1, "{byte:#04x}");
        }
        let mut pending = Vec::new();
        assert_eq!(commands(&mut pending, &start_commands()), ["W0203", "S"]);
    }

    #[test]
    fn a_status_reads_a8_first_and_noise_around_it_is_skipped() {
        let mut decoder = Decoder::default();
        decoder.push(b"\x01#");
        decoder.push(&reply(b's', START)[..30]);
        assert_eq!(decoder.next_reply(), None, "half a status waits");
        decoder.push(&reply(b's', START)[30..]);
        let Some(Ok(Reply::Status(fields))) = decoder.next_reply() else {
            panic!("a status")
        };
        let rook = Piece {
            color: Color::Black,
            role: Role::Rook,
        };
        assert_eq!(fields[0], Some(rook), "a8");
        assert_eq!(fields[63].map(|p| p.color), Some(Color::White), "h1");
        assert_eq!(decoder.skipped_bytes(), 2);
        assert_eq!(status(&fields), reply(b's', START));
    }

    #[test]
    fn a_damaged_status_is_an_error_and_the_next_one_reads() {
        let mut damaged = reply(b's', START);
        damaged[10] = b'q';
        let mut decoder = Decoder::default();
        decoder.push(&damaged);
        decoder.push(&reply(b's', START));
        assert!(matches!(
            decoder.next_reply(),
            Some(Err(WireError::Check { .. }))
        ));
        assert!(matches!(decoder.next_reply(), Some(Ok(Reply::Status(_)))));
    }
}
