//! A DGT e-board with a DGT clock attached, emulated for tests, the demo and a technician
//! checking a node before a round: what the board answers to a node's commands and what it
//! sends when a piece moves or the clock changes, in update mode only, as a real board does.
//! [`crate::eboard::emulator`] drives it on a pseudo-terminal.

use super::wire::{self, command};
use crate::eboard::emulator::EmulatedDevice;
use crate::eboard::message::{ClockStatus, Fields, Message};

/// The board's state and mode.
#[derive(Debug, Clone)]
pub struct EmulatedBoard {
    fields: Box<Fields>,
    clock: Option<ClockStatus>,
    clock_on: bool,
    /// In update mode the board sends every change; otherwise only what it is asked.
    updating: bool,
    serial: String,
}

impl EmulatedBoard {
    /// An empty board in idle mode, as one is after power-up; `serial` is its 5-digit
    /// serial number.
    pub fn new(serial: &str) -> EmulatedBoard {
        EmulatedBoard {
            fields: Box::new([None; 64]),
            clock: None,
            clock_on: true,
            updating: false,
            serial: serial.to_owned(),
        }
    }

    fn command(&mut self, byte: u8) -> Vec<u8> {
        match byte {
            command::RESET => {
                self.updating = false;
                Vec::new()
            }
            command::SEND_BRD => wire::encode(&Message::BoardDump(self.fields.clone())),
            command::SEND_CLK => wire::encode(&Message::Clock(self.clock_shown())),
            command::SEND_UPDATE | command::SEND_UPDATE_BRD | command::SEND_UPDATE_NICE => {
                self.updating = true;
                Vec::new()
            }
            command::RETURN_SERIALNR => wire::encode_serial_number(&self.serial),
            // Commands a node of ours never sends: a real board ignores what it does not
            // know, and so does this one.
            _ => Vec::new(),
        }
    }

    fn clock_shown(&self) -> ClockStatus {
        match self.clock {
            Some(status) if self.clock_on => status,
            _ => ClockStatus {
                no_clock: true,
                ..ClockStatus::default()
            },
        }
    }
}

impl EmulatedDevice for EmulatedBoard {
    fn commands(&mut self, bytes: &[u8]) -> Vec<u8> {
        bytes.iter().flat_map(|b| self.command(*b)).collect()
    }

    /// Something happens on the board or the clock: the bytes the board sends for it.
    fn happen(&mut self, message: &Message) -> Vec<u8> {
        match message {
            Message::BoardDump(fields) => self.fields = fields.clone(),
            Message::FieldUpdate { field, piece } => {
                self.fields[usize::from(field.index())] = *piece;
            }
            Message::Clock(status) => {
                self.clock = Some(*status);
                if !self.clock_on {
                    return Vec::new();
                }
            }
            Message::ClockAck | Message::Other { .. } => return Vec::new(),
        }
        if self.updating {
            wire::encode(message)
        } else {
            Vec::new()
        }
    }

    /// The clock is switched off (or its cable pulled), or on again: what the board sends.
    fn switch_clock(&mut self, on: bool) -> Vec<u8> {
        self.clock_on = on;
        if self.updating {
            wire::encode(&Message::Clock(self.clock_shown()))
        } else {
            Vec::new()
        }
    }

    fn reporting(&self) -> bool {
        self.updating
    }

    /// The board lost its line (and its power, as a USB-powered board does): it comes back
    /// idle. Its pieces stand where they stood.
    fn unplugged(&mut self) {
        self.updating = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::wire::Decoder;
    use crate::eboard::message::Field;

    fn decode(bytes: &[u8]) -> Vec<Message> {
        let mut decoder = Decoder::default();
        decoder.push(bytes);
        std::iter::from_fn(|| decoder.next_message())
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn an_idle_board_sends_only_what_it_is_asked_and_an_updating_one_every_change() {
        let mut board = EmulatedBoard::new("12345");
        let lift = Message::FieldUpdate {
            field: Field::new(52).unwrap(),
            piece: None,
        };
        assert!(board.happen(&lift).is_empty(), "idle after power-up");
        let Message::BoardDump(fields) = &decode(&board.command(command::SEND_BRD))[0] else {
            panic!("a dump")
        };
        assert!(fields.iter().all(Option::is_none));
        assert_eq!(
            decode(&board.command(command::SEND_CLK)),
            vec![Message::Clock(ClockStatus {
                no_clock: true,
                ..ClockStatus::default()
            })],
            "no clock seen yet"
        );
        board.command(command::SEND_UPDATE_NICE);
        assert_eq!(decode(&board.happen(&lift)), vec![lift.clone()]);
        board.unplugged();
        assert!(board.happen(&lift).is_empty(), "idle again after a replug");
    }

    #[test]
    fn a_clock_switched_off_reports_no_clock_and_keeps_its_time_for_when_it_is_back() {
        let mut board = EmulatedBoard::new("12345");
        board.command(command::SEND_UPDATE_NICE);
        let running = ClockStatus {
            running: true,
            left_to_move: true,
            ..ClockStatus::default()
        };
        board.happen(&Message::Clock(running));
        let Message::Clock(off) = decode(&board.switch_clock(false))[0] else {
            panic!()
        };
        assert!(off.no_clock);
        assert!(board.happen(&Message::Clock(running)).is_empty());
        assert_eq!(
            decode(&board.switch_clock(true)),
            vec![Message::Clock(running)]
        );
    }
}
