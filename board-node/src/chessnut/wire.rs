//! Chessnut boards' Bluetooth LE protocol, as chessnutech publishes it (`Chessnut_eBoards`)
//! and as real boards speak it (`../shared/NOTES.md`): the GATT characteristics, the
//! commands, and the frames decoded.
//!
//! A position frame is `01 LEN`, then 32 bytes of 64 nibbles (h8, g8, … a8, h7, … a1; the
//! low nibble first), then what the length declares besides (real boards add a 4-byte
//! counter: 38 bytes where the document says 36). A battery answer is `2A 02 B …`: bit 7
//! charging, bits 0–6 the percent.

use protocol::{Color, Piece, Role};

use crate::eboard::message::Fields;

/// The service that notifies positions, and its characteristic.
pub const FEN_SERVICE: &str = "1b7e8261-2877-41c3-b46e-cf057c562023";
pub const FEN_NOTIFY: &str = "1b7e8262-2877-41c3-b46e-cf057c562023";
/// The commands' service: written to `…8272`, answered on `…8273`.
pub const COMMAND_SERVICE: &str = "1b7e8271-2877-41c3-b46e-cf057c562023";
pub const COMMAND_WRITE: &str = "1b7e8272-2877-41c3-b46e-cf057c562023";
pub const COMMAND_ANSWER: &str = "1b7e8273-2877-41c3-b46e-cf057c562023";

/// Start reporting the position on every change (and, on real boards, ten times a second).
pub const START_REPORTING: [u8; 3] = [0x21, 0x01, 0x00];
/// Ask for the battery.
pub const ASK_BATTERY: [u8; 3] = [0x29, 0x01, 0x00];

/// The bytes of a position frame's squares.
const SQUARES_BYTES: usize = 32;

/// Why a frame was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("not a position frame (starts {0:#04x})")]
    NotPosition(u8),
    #[error("{got} bytes where the frame declares {declared} after its header")]
    Length { got: usize, declared: usize },
    #[error("a square holds {0}, no piece's code")]
    Piece(u8),
}

/// A piece's code in a frame: 0 empty, then q k b p n R P r B N Q K.
fn piece(code: u8) -> Result<Option<Piece>, FrameError> {
    use Color::{Black, White};
    use Role::{Bishop, King, Knight, Pawn, Queen, Rook};
    let (color, role) = match code {
        0 => return Ok(None),
        1 => (Black, Queen),
        2 => (Black, King),
        3 => (Black, Bishop),
        4 => (Black, Pawn),
        5 => (Black, Knight),
        6 => (White, Rook),
        7 => (White, Pawn),
        8 => (Black, Rook),
        9 => (White, Bishop),
        10 => (White, Knight),
        11 => (White, Queen),
        12 => (White, King),
        other => return Err(FrameError::Piece(other)),
    };
    Ok(Some(Piece { color, role }))
}

/// A position frame's squares in the DGT board's numbering (a8 first, as
/// [`crate::eboard::Adapter`] reads a board dump), read by the frame's declared length: 36
/// bytes as documented, 38 as real boards send them.
pub fn position(frame: &[u8]) -> Result<Box<Fields>, FrameError> {
    let (&kind, rest) = frame.split_first().ok_or(FrameError::NotPosition(0))?;
    if kind != 0x01 {
        return Err(FrameError::NotPosition(kind));
    }
    let (&declared, body) = rest.split_first().ok_or(FrameError::Length {
        got: 0,
        declared: 0,
    })?;
    let declared = usize::from(declared);
    if body.len() != declared || declared < SQUARES_BYTES {
        return Err(FrameError::Length {
            got: body.len(),
            declared,
        });
    }
    let mut fields: Box<Fields> = Box::new([None; 64]);
    for (i, byte) in body[..SQUARES_BYTES].iter().enumerate() {
        // Byte i holds two squares of a rank, h-file side first: the low nibble the first.
        for (half, code) in [(0, byte & 0x0f), (1, byte >> 4)] {
            let from_h8 = i * 2 + half; // 0 = h8, 7 = a8, 8 = h7, …
            let (rank_from_top, from_h) = (from_h8 / 8, from_h8 % 8);
            let field = rank_from_top * 8 + (7 - from_h); // a8 = 0, h8 = 7, … h1 = 63
            fields[field] = piece(code)?;
        }
    }
    Ok(fields)
}

/// The battery as a board reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Battery {
    pub percent: u8,
    pub charging: bool,
}

/// A battery answer (`2A 02 B …`); `None` for any other answer.
pub fn battery(answer: &[u8]) -> Option<Battery> {
    match answer {
        [0x2a, 0x02, level, ..] => Some(Battery {
            percent: (level & 0x7f).min(100),
            charging: level & 0x80 != 0,
        }),
        _ => None,
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A frame of `fields` (a8 first) as a board sends it, `extra` bytes after the squares.
    pub fn frame(fields: &Fields, extra: usize) -> Vec<u8> {
        let code = |p: Option<Piece>| -> u8 {
            let Some(p) = p else { return 0 };
            let order = [
                (Color::Black, Role::Queen),
                (Color::Black, Role::King),
                (Color::Black, Role::Bishop),
                (Color::Black, Role::Pawn),
                (Color::Black, Role::Knight),
                (Color::White, Role::Rook),
                (Color::White, Role::Pawn),
                (Color::Black, Role::Rook),
                (Color::White, Role::Bishop),
                (Color::White, Role::Knight),
                (Color::White, Role::Queen),
                (Color::White, Role::King),
            ];
            order
                .iter()
                .position(|(c, r)| *c == p.color && *r == p.role)
                .unwrap() as u8
                + 1
        };
        let mut out = vec![0x01, (SQUARES_BYTES + extra) as u8];
        for i in 0..SQUARES_BYTES {
            let at = |from_h8: usize| fields[(from_h8 / 8) * 8 + (7 - from_h8 % 8)];
            out.push(code(at(i * 2)) | code(at(i * 2 + 1)) << 4);
        }
        out.extend(std::iter::repeat_n(0xee, extra));
        out
    }

    /// The start position's fields (a8 first).
    pub fn start() -> Box<Fields> {
        let placement = crate::sensors::placement(&shakmaty::Board::new());
        let mut fields: Box<Fields> = Box::new([None; 64]);
        for (square, piece) in placement.pieces() {
            fields[usize::from(7 - square.rank()) * 8 + usize::from(square.file())] = Some(piece);
        }
        fields
    }

    #[test]
    fn the_documented_example_reads_as_the_start_position() {
        // The start position as chessnutech's README encodes it: h8 (a black rook) in byte
        // 2's low nibble, a8 in byte 5's high nibble; White's pieces on the last bytes.
        let mut documented = vec![0x01, 0x24];
        documented.extend([0x58, 0x23, 0x31, 0x85]); // r n b k q b n r from h8
        documented.extend([0x44; 4]);
        documented.extend([0x00; 16]);
        documented.extend([0x77; 4]);
        documented.extend([0xa6, 0xc9, 0x9b, 0x6a]);
        documented.extend([0x00; 4]);
        assert_eq!(position(&documented).unwrap(), start());
    }

    #[test]
    fn frames_are_read_by_their_declared_length() {
        let start = start();
        assert_eq!(
            position(&frame(&start, 2)).unwrap(),
            start,
            "36 bytes, as documented"
        );
        assert_eq!(
            position(&frame(&start, 4)).unwrap(),
            start,
            "38 bytes, as real boards send"
        );
        let mut short = frame(&start, 4);
        short.pop();
        assert_eq!(
            position(&short),
            Err(FrameError::Length {
                got: 35,
                declared: 36
            })
        );
        assert_eq!(
            position(&[0x2a, 0x02, 0x0f]),
            Err(FrameError::NotPosition(0x2a))
        );
        let mut bad = frame(&start, 4);
        bad[10] = 0xff;
        assert_eq!(position(&bad), Err(FrameError::Piece(15)));
    }

    #[test]
    fn the_battery_is_a_percent_and_whether_it_charges() {
        assert_eq!(
            battery(&[0x2a, 0x02, 0x8f, 0x00]),
            Some(Battery {
                percent: 15,
                charging: true
            })
        );
        assert_eq!(
            battery(&[0x2a, 0x02, 0x0f]),
            Some(Battery {
                percent: 15,
                charging: false
            })
        );
        assert_eq!(battery(&[0x01, 0x24]), None);
    }
}
