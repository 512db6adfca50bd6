//! A chain of DGT boards with their clocks, emulated as DGT's protocol header describes bus
//! mode: every board hears every command and answers those addressed to it; a ping to all
//! is answered by each board at a random moment within 1.1 s (two at once collide); a board
//! told to ignore the next ping to all does; changes are the EEPROM records written since
//! the last read; a board that loses power forgets all that and, powered again, boots for a
//! while and then records a power-up and every piece it finds. Pure: times in ms since the
//! emulation began; [`pty`] drives it on a pseudo-terminal at 9,600 baud, [`simulation`]
//! with its master in simulated time.

pub mod pty;
pub mod simulation;

use crate::dgt::bus::wire::{self, command, Address, Record, Reply};
use crate::eboard::message::{ClockStatus, Fields, Message};

/// How long a board takes to boot after power comes back (the header: "some seconds").
pub const BOOT_MS: u64 = 1_500;
/// The spread of the answers to a ping to all.
pub const PING_SPREAD_MS: u64 = 1_100;

/// One board on the chain.
#[derive(Debug, Clone)]
pub struct BusBoard {
    address: Address,
    fields: Box<Fields>,
    clock: Option<ClockStatus>,
    /// EEPROM bytes written since the last `SEND_CHANGES`, and the packet last sent.
    unread: Vec<u8>,
    last_sent: Vec<u8>,
    /// Everything since the start tag.
    since_start: Vec<u8>,
    last_field_ms: Option<u64>,
    ignore_next_ping: bool,
    /// Not in bus mode: a single-board command knocked it out.
    single: bool,
    powered: bool,
    /// Answers nothing until then (booting, or its line stalled).
    deaf_until: u64,
    /// A node has read its changes: its game may start.
    polled: bool,
}

impl BusBoard {
    /// A board just powered up, with an empty board and no clock seen.
    pub fn new(address: Address) -> BusBoard {
        let mut board = BusBoard {
            address,
            fields: Box::new([None; 64]),
            clock: None,
            unread: Vec::new(),
            last_sent: Vec::new(),
            since_start: Vec::new(),
            last_field_ms: None,
            ignore_next_ping: false,
            single: false,
            powered: true,
            deaf_until: 0,
            polled: false,
        };
        board.power_up(0);
        board.deaf_until = 0;
        board
    }

    /// A node has asked for its changes.
    pub fn polled(&self) -> bool {
        self.polled
    }

    fn write(&mut self, record: &Record, now: u64) {
        let quick = matches!(record, Record::Field { .. })
            && self
                .last_field_ms
                .is_some_and(|at| now.saturating_sub(at) < 250);
        if matches!(record, Record::Field { .. }) {
            self.last_field_ms = Some(now);
        }
        let bytes = wire::record_bytes(record, quick);
        self.unread.extend_from_slice(&bytes);
        self.since_start.extend_from_slice(&bytes);
    }

    /// Power comes back: it boots, forgets bus state, and records what it finds.
    fn power_up(&mut self, now: u64) {
        self.powered = true;
        self.single = false;
        self.ignore_next_ping = false;
        self.deaf_until = now + BOOT_MS;
        for _ in 0..3 {
            self.write(&Record::Tag(0x7f), now);
        }
        self.write(&Record::PowerUp, now);
        let pieces: Vec<_> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| (i, p)))
            .collect();
        for (i, piece) in pieces {
            let field = crate::eboard::message::Field::new(i as u8).expect("64 fields");
            self.write(
                &Record::Field {
                    field,
                    piece: Some(piece),
                },
                now,
            );
        }
    }

    /// Something happens on the board or its clock.
    pub fn happen(&mut self, message: &Message, now: u64) {
        match message {
            Message::BoardDump(fields) => {
                for (i, piece) in fields.iter().enumerate() {
                    if self.fields[i] != *piece {
                        let field = crate::eboard::message::Field::new(i as u8).expect("64");
                        self.happen(
                            &Message::FieldUpdate {
                                field,
                                piece: *piece,
                            },
                            now,
                        );
                    }
                }
            }
            Message::FieldUpdate { field, piece } => {
                self.fields[usize::from(field.index())] = *piece;
                if self.powered {
                    self.write(
                        &Record::Field {
                            field: *field,
                            piece: *piece,
                        },
                        now,
                    );
                }
            }
            Message::Clock(status) => {
                let pressed = self.clock.is_some_and(|before| {
                    before.left_to_move != status.left_to_move && status.left_to_move
                        || before.right_to_move != status.right_to_move && status.right_to_move
                });
                if pressed && self.powered {
                    // The halted clock's time: the side that just pressed.
                    let left = status.right_to_move;
                    let face = if left { status.left } else { status.right };
                    self.write(&Record::Time { left, ms: face.ms }, now);
                }
                self.clock = Some(*status);
            }
            Message::ClockAck | Message::Other { .. } => {}
        }
    }

    /// The power (and the line) goes, or comes back.
    pub fn power(&mut self, on: bool, now: u64) {
        if on && !self.powered {
            self.power_up(now);
        } else if !on {
            self.powered = false;
        }
    }

    /// Its line passes nothing until `until`.
    pub fn stall(&mut self, until: u64) {
        self.deaf_until = self.deaf_until.max(until);
    }

    fn hears(&self, now: u64) -> bool {
        self.powered && now >= self.deaf_until
    }

    fn clock_shown(&self) -> Message {
        Message::Clock(self.clock.unwrap_or(ClockStatus {
            no_clock: true,
            ..ClockStatus::default()
        }))
    }

    /// A command on the line: the answer to send now, and whether it answers a ping to all
    /// (sent later, at a random moment).
    fn command(&mut self, code: u8, to: Option<Address>, now: u64) -> (Vec<u8>, bool) {
        let Some(to) = to else {
            // A single-board command: every board on the line leaves bus mode.
            self.single = true;
            return (Vec::new(), false);
        };
        if self.single {
            // The bus command that brings it back is not processed.
            self.single = false;
            return (Vec::new(), false);
        }
        if to == Address::ALL {
            return match code {
                command::PING if self.ignore_next_ping => {
                    self.ignore_next_ping = false;
                    (Vec::new(), false)
                }
                command::PING => (Vec::new(), true),
                command::RESET => {
                    self.powered = false;
                    self.power_up(now);
                    (Vec::new(), false)
                }
                command::END_BUSMODE => {
                    self.single = true;
                    (Vec::new(), false)
                }
                _ => (Vec::new(), false),
            };
        }
        if to != self.address {
            return (Vec::new(), false);
        }
        let reply = match code {
            command::SEND_CLK => Reply::Clock(self.clock_shown()),
            command::SEND_BRD => Reply::BoardDump(self.fields.clone()),
            command::SEND_CHANGES => {
                self.polled = true;
                self.last_sent = std::mem::take(&mut self.unread);
                return (
                    wire::encode_raw(wire::CHANGES_REPLY, self.address, &self.last_sent),
                    false,
                );
            }
            command::REPEAT_CHANGES => {
                return (
                    wire::encode_raw(wire::CHANGES_REPLY, self.address, &self.last_sent),
                    false,
                )
            }
            command::SET_START_GAME => {
                self.since_start.clear();
                self.write(&Record::StartTag, now);
                Reply::StartGameWritten
            }
            command::SEND_FROM_START => {
                // Up to what `SEND_CHANGES` has not yet sent.
                let upto = self.since_start.len() - self.unread.len().min(self.since_start.len());
                return (
                    wire::encode_raw(0x86, self.address, &self.since_start[..upto]),
                    false,
                );
            }
            command::PING => Reply::Ping,
            command::IGNORE_NEXT_PING => {
                self.ignore_next_ping = true;
                Reply::Ping
            }
            command::SEND_VERSION => Reply::Version { major: 1, minor: 3 },
            command::RESET => {
                self.powered = false;
                self.power_up(now);
                return (Vec::new(), false);
            }
            command::END_BUSMODE => {
                self.single = true;
                return (Vec::new(), false);
            }
            _ => return (Vec::new(), false),
        };
        (wire::encode(self.address, &reply), false)
    }
}

/// The boards of one chain on one line.
#[derive(Debug)]
pub struct Chain {
    boards: Vec<BusBoard>,
    reader: wire::CommandReader,
    /// Answers to a ping to all, each at its moment.
    scheduled: Vec<(u64, Vec<u8>)>,
    seed: u64,
    /// When the master last pinged every board.
    pinged_all: Option<u64>,
}

impl Chain {
    pub fn new(boards: Vec<BusBoard>, seed: u64) -> Chain {
        Chain {
            boards,
            reader: wire::CommandReader::default(),
            scheduled: Vec::new(),
            seed: seed | 1,
            pinged_all: None,
        }
    }

    pub fn board(&mut self, index: usize) -> &mut BusBoard {
        &mut self.boards[index]
    }

    pub fn boards(&self) -> &[BusBoard] {
        &self.boards
    }

    fn random_below(&mut self, bound: u64) -> u64 {
        // xorshift64: the spread of ping answers needs no better.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed % bound.max(1)
    }

    /// Bytes from the master: what the boards answer at once.
    pub fn commands(&mut self, bytes: &[u8], now: u64) -> Vec<u8> {
        self.reader.push(bytes);
        let mut answer = Vec::new();
        while let Some((code, to)) = self.reader.next_command() {
            let mut pinged = Vec::new();
            for board in self.boards.iter_mut().filter(|b| b.hears(now)) {
                let (bytes, ping_all) = board.command(code, to, now);
                answer.extend(bytes);
                if ping_all {
                    pinged.push(board.address);
                }
            }
            if code == command::PING && to == Some(Address::ALL) {
                self.pinged_all = Some(now);
            }
            for address in pinged {
                let at = now + self.random_below(PING_SPREAD_MS);
                self.scheduled
                    .push((at, wire::encode(address, &Reply::Ping)));
            }
        }
        answer
    }

    /// When the master last pinged every board (ms).
    pub fn pinged_all(&self) -> Option<u64> {
        self.pinged_all
    }

    /// Answers to a ping to all that are due at `now`, in the order they come.
    pub fn due(&mut self, now: u64) -> Vec<(u64, Vec<u8>)> {
        let mut due: Vec<(u64, Vec<u8>)> = Vec::new();
        self.scheduled.retain(|(at, bytes)| {
            if *at <= now {
                due.push((*at, bytes.clone()));
                false
            } else {
                true
            }
        });
        due.sort_by_key(|(at, _)| *at);
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::bus::wire::{frame, Decoder};
    use crate::eboard::message::Field;
    use protocol::{Color, Piece, Role};

    fn replies(bytes: &[u8]) -> Vec<(Address, Reply)> {
        let mut decoder = Decoder::default();
        decoder.push(bytes);
        std::iter::from_fn(|| decoder.next_reply())
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn a_board_answers_only_what_is_addressed_to_it_and_its_changes_once() {
        let (one, two) = (Address::new(101).unwrap(), Address::new(202).unwrap());
        let mut chain = Chain::new(vec![BusBoard::new(one), BusBoard::new(two)], 7);
        chain.board(0).power(false, 0);
        chain.board(0).power(true, 10);
        assert!(
            chain.commands(&frame(command::PING, one), 20).is_empty(),
            "silent while it boots"
        );
        let t = 10 + BOOT_MS;
        assert_eq!(
            replies(&chain.commands(&frame(command::PING, one), t)),
            vec![(one, Reply::Ping)]
        );
        let pawn = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let e4 = Field::new(36).unwrap();
        chain.board(1).happen(
            &Message::FieldUpdate {
                field: e4,
                piece: Some(pawn),
            },
            t,
        );
        let got = replies(&chain.commands(&frame(command::SEND_CHANGES, two), t));
        let [(from, Reply::Changes(records))] = got.as_slice() else {
            panic!("{got:?}")
        };
        assert_eq!(*from, two);
        assert!(records.contains(&Record::PowerUp), "{records:?}");
        assert_eq!(
            records.last(),
            Some(&Record::Field {
                field: e4,
                piece: Some(pawn)
            })
        );
        let again = replies(&chain.commands(&frame(command::SEND_CHANGES, two), t));
        assert_eq!(again, vec![(two, Reply::Changes(Vec::new()))]);
        let repeated = replies(&chain.commands(&frame(command::REPEAT_CHANGES, two), t));
        assert_eq!(repeated, vec![(two, Reply::Changes(Vec::new()))]);
    }

    #[test]
    fn a_ping_to_all_is_answered_later_except_by_boards_told_to_ignore_it() {
        let addresses: Vec<Address> = (1..=3).map(|a| Address::new(a * 100).unwrap()).collect();
        let mut chain = Chain::new(addresses.iter().map(|a| BusBoard::new(*a)).collect(), 3);
        let t = BOOT_MS;
        let ack = replies(&chain.commands(&frame(command::IGNORE_NEXT_PING, addresses[0]), t));
        assert_eq!(ack, vec![(addresses[0], Reply::Ping)]);
        assert!(chain
            .commands(&frame(command::PING, Address::ALL), t)
            .is_empty());
        let answered: Vec<Address> = chain
            .due(t + PING_SPREAD_MS)
            .iter()
            .flat_map(|(_, bytes)| replies(bytes))
            .map(|(from, _)| from)
            .collect();
        let mut sorted = answered.clone();
        sorted.sort();
        assert_eq!(sorted, addresses[1..].to_vec());
        // Ignored once only.
        chain.commands(&frame(command::PING, Address::ALL), t + 2_000);
        assert_eq!(chain.due(t + 2_000 + PING_SPREAD_MS).len(), 3);
    }
}
