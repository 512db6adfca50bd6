//! A ChessLink board on a pseudo-terminal ([`crate::eboard::emulator::pty`] drives it): it
//! answers the host's commands and, once asked for reports on every change, sends its status
//! at each change of a square. It has no clock; the clock's messages of a timeline pass it by.

use super::wire::{self, commands};
use crate::eboard::emulator::EmulatedDevice;
use crate::eboard::message::{Fields, Message};

#[derive(Debug, Clone)]
pub struct EmulatedChessLink {
    fields: Box<Fields>,
    /// Status reports on every change (E2ROM address 02 set to 03).
    reporting: bool,
    /// A command's first bytes, until the rest arrives.
    pending: Vec<u8>,
}

impl Default for EmulatedChessLink {
    fn default() -> EmulatedChessLink {
        EmulatedChessLink {
            fields: Box::new([None; 64]),
            reporting: false,
            pending: Vec::new(),
        }
    }
}

impl EmulatedDevice for EmulatedChessLink {
    fn commands(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut answer = Vec::new();
        for command in commands(&mut self.pending, bytes) {
            let (letter, data) = command.split_at(1);
            answer.extend(match letter {
                "S" => wire::status(&self.fields),
                "V" => wire::reply(b'v', "0103"),
                "W" => {
                    if let Some(mode) = data.strip_prefix("02") {
                        // 001 is "disabled, use S"; every other mode reports by itself.
                        self.reporting = mode != "01";
                    }
                    wire::reply(b'w', data)
                }
                "R" => wire::reply(b'r', &format!("{data}00")),
                "L" => wire::reply(b'l', ""),
                "X" => wire::reply(b'x', ""),
                // `T` resets the board: no reply. Anything else: ignored, as a board does.
                _ => Vec::new(),
            });
        }
        answer
    }

    fn happen(&mut self, message: &Message) -> Vec<u8> {
        match message {
            Message::BoardDump(fields) => self.fields = fields.clone(),
            Message::FieldUpdate { field, piece } => {
                self.fields[usize::from(field.index())] = *piece;
            }
            Message::Clock(_) | Message::ClockAck | Message::Other { .. } => return Vec::new(),
        }
        if self.reporting {
            wire::status(&self.fields)
        } else {
            Vec::new()
        }
    }

    fn switch_clock(&mut self, _on: bool) -> Vec<u8> {
        Vec::new()
    }

    fn unplugged(&mut self) {}

    fn reporting(&self) -> bool {
        self.reporting
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chesslink::wire::{Decoder, Reply};
    use crate::eboard::message::Field;

    #[test]
    fn once_asked_for_reports_the_board_sends_its_status_at_each_change() {
        let mut board = EmulatedChessLink::default();
        let lift = Message::FieldUpdate {
            field: Field::new(52).unwrap(),
            piece: None,
        };
        assert!(board.happen(&lift).is_empty(), "not asked yet");
        let start = wire::start_commands();
        // Split anywhere, as a line splits it.
        let mut answer = board.commands(&start[..3]);
        answer.extend(board.commands(&start[3..]));
        let mut decoder = Decoder::default();
        decoder.push(&answer);
        assert_eq!(decoder.next_reply(), Some(Ok(Reply::Ack(b'w'))));
        assert!(matches!(decoder.next_reply(), Some(Ok(Reply::Status(_)))));
        assert!(board.reporting());
        decoder.push(&board.happen(&lift));
        assert!(matches!(decoder.next_reply(), Some(Ok(Reply::Status(_)))));
    }
}
