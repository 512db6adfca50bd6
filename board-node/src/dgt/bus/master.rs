//! The bus master of one DGT chain: the node's side of a line that reaches a dozen boards.
//! Pure: bytes and times in, bytes to send and each board's readings out; the serial edge
//! ([`crate::line::serial`]) drives it.
//!
//! - **Discovery.** Enrolled boards are pinged by address. Then every known board is told
//!   to ignore the next ping to all, a ping to all is sent, and whoever answers within
//!   1.1 s (each board at a random moment) is new: an enrolled board found, or a stranger
//!   reported to the technician. Repeated until a round finds nobody new, and again when a
//!   board reports a power-up.
//! - **Polling.** One request on the line at a time. Each board in turn is asked for its
//!   clock, then for its changes (EEPROM records since the last read), the boards whose
//!   clock runs first. The clock is read before the changes, so a press seen has its move
//!   in the changes that follow; each board's placement is passed on before its clock.
//! - **Errors.** A garbled changes reply is asked again with `REPEAT_CHANGES` (a second
//!   `SEND_CHANGES` would lose it). A changes reply lost, a power-up, or changes that
//!   cannot be trusted: the board is read whole again (`SEND_BRD`), told to the hub as a
//!   reconnection, and nothing is passed on until the dump is in. A board silent for
//!   [`MISSES_GONE`] requests in a row is disconnected, pinged until it answers, and read
//!   whole when it does.

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use protocol::NodeMs;

use self::board::ChainBoard;
use super::wire::{command, frame, Address, BusError, Decoder, Record, Reply};
use crate::eboard::message::Message;
use crate::eboard::{Adapter, Orientation};
use crate::line::health::HealthWatch;
use crate::line::{Line, LineSettings};
use crate::source::Reading;

/// How long a board has to begin its answer. The header allows 80 ms, a board storing a
/// change in its EEPROM 20 ms of it; a USB adapter adds its own latency.
pub const REPLY_TIMEOUT_MS: u64 = 120;
/// How long a reply that has begun may pause between bytes.
pub const BYTE_GAP_MS: u64 = 60;
/// Requests in a row a board leaves unanswered before it is taken for gone (pulled from
/// the chain, its power cut).
pub const MISSES_GONE: u32 = 3;
/// How often a board that is gone is pinged.
pub const PING_GONE_EVERY_MS: u64 = 500;
/// How long every board has to answer a ping to all (the header's 1.1 s and a margin).
pub const DISCOVERY_LISTEN_MS: u64 = 1_300;
/// Discovery rounds at most before polling resumes (collisions can go on a while).
pub const DISCOVERY_ROUNDS: u32 = 6;
/// A chain is searched for boards that joined it this often, besides at start and after a
/// power-up.
pub const DISCOVERY_EVERY_MS: u64 = 300_000;
/// Times a garbled reply is asked again before the board is read whole.
const REPEATS: u32 = 2;

/// What the chain reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainOut {
    /// A reading of the board in this slot (the order boards were configured in).
    Board(usize, Reading),
    /// A board answered that nobody enrolled on this chain: for the technician.
    Stranger(Address),
}

/// Readings of the board in `slot`.
fn on(slot: usize, readings: Vec<Reading>) -> impl Iterator<Item = ChainOut> {
    readings.into_iter().map(move |r| ChainOut::Board(slot, r))
}

/// The one request on the line.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Who was asked (a slot), or `None` for a stranger or everyone.
    slot: Option<usize>,
    to: Address,
    code: u8,
    sent: NodeMs,
    repeats: u32,
}

/// The search for boards: who is still to be told to ignore the next ping, then the
/// listening after a ping to all.
#[derive(Debug)]
struct Discovery {
    round: u32,
    to_ignore: VecDeque<Address>,
    listening_until: Option<NodeMs>,
    /// Someone new answered (or answers collided) this round: go again.
    news: bool,
}

#[derive(Debug)]
pub struct Chain {
    boards: Vec<ChainBoard>,
    decoder: Decoder,
    pending: Option<Pending>,
    /// The board being read this pass, and what is still to ask it.
    pass: Option<(usize, VecDeque<u8>)>,
    /// The boards still to be read this cycle.
    cycle: VecDeque<usize>,
    discovery: Option<Discovery>,
    next_discovery: NodeMs,
    strangers: BTreeSet<Address>,
    last_byte: NodeMs,
    to_send: Vec<u8>,
    /// Errors of the line itself (noise, collisions, replies nobody asked for): counted on
    /// every board's health, since the line is theirs.
    skipped_bytes: u64,
}

impl Chain {
    /// The chain's enrolled boards: each one's address (from its serial number) and the
    /// orientation kept from an earlier run.
    pub fn new(boards: Vec<(Address, Orientation)>) -> Chain {
        Chain {
            boards: boards
                .into_iter()
                .map(|(address, orientation)| ChainBoard {
                    address,
                    adapter: Adapter::oriented(orientation),
                    watch: HealthWatch::default(),
                    present: false,
                    misses: 0,
                    resyncing: true,
                    unsure: false,
                    last_packet: Vec::new(),
                    held_clock: None,
                    carried_clock: None,
                    clock_connected: false,
                    clock_running: false,
                    last_placement: None,
                    last_status: None,
                    next_ping: NodeMs(0),
                    version_asked: false,
                })
                .collect(),
            decoder: Decoder::default(),
            pending: None,
            pass: None,
            cycle: VecDeque::new(),
            discovery: None,
            next_discovery: NodeMs(0),
            strangers: BTreeSet::new(),
            last_byte: NodeMs(0),
            to_send: Vec::new(),
            skipped_bytes: 0,
        }
    }

    /// How each board and its clock stand, as far as decided, slot by slot.
    pub fn orientations(&self) -> Vec<Orientation> {
        self.boards
            .iter()
            .map(|b| b.adapter.orientation())
            .collect()
    }

    /// The line opened: every board is to be found again and read whole.
    pub fn opened(&mut self, now: NodeMs) -> Vec<ChainOut> {
        self.decoder = Decoder::default();
        self.skipped_bytes = 0;
        self.pending = None;
        self.pass = None;
        self.cycle.clear();
        self.discovery = None;
        // The enrolled boards are pinged by address first (the cycle), then the chain is
        // searched for the others.
        self.cycle = (0..self.boards.len()).collect();
        self.next_discovery = now;
        let mut out = Vec::new();
        for (slot, board) in self.boards.iter_mut().enumerate() {
            board.present = false;
            board.misses = 0;
            board.next_ping = now;
            board.version_asked = false;
            board.resync();
            out.extend(on(slot, board.watch.opened(now)));
        }
        out
    }

    /// The line failed or closed: every board on it is disconnected.
    pub fn closed(&mut self, now: NodeMs) -> Vec<ChainOut> {
        self.pending = None;
        self.pass = None;
        let mut out = Vec::new();
        for (slot, board) in self.boards.iter_mut().enumerate() {
            board.present = false;
            out.extend(on(slot, board.watch.closed(now)));
        }
        out
    }

    /// The line could not be opened.
    pub fn open_failed(&mut self, now: NodeMs) -> Vec<ChainOut> {
        let mut out = Vec::new();
        for (slot, board) in self.boards.iter_mut().enumerate() {
            out.extend(on(slot, board.watch.open_failed(now)));
        }
        out
    }

    /// Bytes read off the line.
    pub fn read(&mut self, bytes: &[u8], now: NodeMs) -> Vec<ChainOut> {
        let mut out = Vec::new();
        if bytes.is_empty() {
            return out;
        }
        self.last_byte = now;
        self.decoder.push(bytes);
        while let Some(reply) = self.decoder.next_reply() {
            if self.decoder.skipped_bytes() > self.skipped_bytes {
                self.skipped_bytes = self.decoder.skipped_bytes();
                tracing::debug!("noise on the chain's line");
                self.line_error();
            }
            match reply {
                Ok((from, reply)) => self.reply(from, reply, now, &mut out),
                Err(error) => self.garbled(&error, now, &mut out),
            }
        }
        out
    }

    /// Called after every read and whenever the line is quiet: the bytes to send now (the
    /// next request, or one that timed out asked again), and what to report.
    pub fn turn(&mut self, now: NodeMs) -> (Vec<u8>, Vec<ChainOut>) {
        let mut out = Vec::new();
        if let Some(pending) = self.pending {
            let waited_from = if self.decoder.midway() {
                self.last_byte.0.max(pending.sent.0) + BYTE_GAP_MS
            } else {
                pending.sent.0 + REPLY_TIMEOUT_MS
            };
            if now.0 >= waited_from {
                self.pending = None;
                // What came of a reply cut off is no reply.
                self.decoder.clear();
                self.unanswered(pending, now, &mut out);
            }
        }
        if self.pending.is_none() {
            self.next_request(now, &mut out);
        }
        (std::mem::take(&mut self.to_send), out)
    }

    fn send(&mut self, slot: Option<usize>, to: Address, code: u8, now: NodeMs, repeats: u32) {
        self.to_send.extend(frame(code, to));
        self.pending = Some(Pending {
            slot,
            to,
            code,
            sent: now,
            repeats,
        });
    }

    /// A line error: noise or collisions are the line's, and every board on it hears of
    /// them in its health.
    fn line_error(&mut self) {
        for board in &mut self.boards {
            board.watch.error();
        }
    }

    fn slot_of(&self, address: Address) -> Option<usize> {
        self.boards.iter().position(|b| b.address == address)
    }

    fn reply(&mut self, from: Address, reply: Reply, now: NodeMs, out: &mut Vec<ChainOut>) {
        let slot = self.slot_of(from);
        if let Some(slot) = slot {
            let board = &mut self.boards[slot];
            if let Reply::Clock(Message::Clock(status)) = &reply {
                board.clock_connected = !status.no_clock;
                board.clock_running = status.running && !status.no_clock;
            }
            out.extend(board.heard(slot, now));
        }
        // Pings to all come whenever each board chooses.
        if matches!(reply, Reply::Ping)
            && self
                .discovery
                .as_ref()
                .is_some_and(|d| d.listening_until.is_some())
        {
            self.found(from, now, out);
            return;
        }
        let Some(pending) = self
            .pending
            .filter(|p| p.to == from && reply.answers(p.code))
        else {
            // A late answer to a request given up on: its changes were taken for lost and
            // the board is read whole; nothing in it is trusted.
            tracing::debug!(board = %from, ?reply, "a reply nobody waits for");
            return;
        };
        self.pending = None;
        let Some(slot) = slot else {
            // A stranger told to ignore the next ping.
            return;
        };
        let board = &mut self.boards[slot];
        board.misses = 0;
        if !board.present {
            board.present = true;
            board.returned();
            tracing::info!(board = %from, "a board on the chain answers");
        }
        match reply {
            Reply::Clock(message) => board.held_clock = Some(message),
            Reply::BoardDump(fields) => {
                board.resyncing = false;
                board.pass_on(slot, &Message::BoardDump(fields), out);
            }
            Reply::Changes(records) if pending.code == command::REPEAT_CHANGES && board.unsure => {
                // Asked again after a reply was lost: the same packet as the last one read
                // means the board never had the request, and nothing was lost.
                board.unsure = false;
                if records != board.last_packet {
                    self.changes(slot, &records, now, out);
                }
            }
            Reply::Changes(records) => self.changes(slot, &records, now, out),
            Reply::Version { major, minor } => {
                tracing::info!(board = %from, version = %format!("{major}.{minor}"), "a board's firmware");
            }
            Reply::Ping | Reply::FromStart(_) | Reply::StartGameWritten => {}
        }
        self.step_done(out);
    }

    /// A board's changes, in the order the board recorded them: the pieces up to each
    /// press of the clock as one placement, then the press (the EEPROM records the halted
    /// side's time at every press), so that a reply and its answer made between two reads
    /// of the board are two moves, not one jump.
    fn changes(&mut self, slot: usize, records: &[Record], now: NodeMs, out: &mut Vec<ChainOut>) {
        let board = &mut self.boards[slot];
        board.last_packet = records.to_vec();
        let mut records = records;
        if let Some(at) = records.iter().rposition(|r| *r == Record::PowerUp) {
            // The board was reset or lost power: what it showed before is gone, and it
            // lists every piece it found at power-up, then what happened since. The hub
            // hears of a reconnection (moves made meanwhile are caught up from the board).
            tracing::info!(board = %board.address, "the board powered up");
            if !board.resyncing {
                // Boards that came back with it may be new on the chain.
                self.next_discovery = now;
                out.extend(board.lose_sight(slot, now));
                board.resyncing = false;
                out.extend(board.heard(slot, now));
                board
                    .adapter
                    .message(&Message::BoardDump(Box::new([None; 64])));
                records = &records[at + 1..];
            }
        }
        if board.resyncing {
            // Read before the dump that follows: what it says is in the dump.
            return;
        }
        let mut moved = None;
        let mut pressed = false;
        for record in records {
            match record {
                Record::Field { field, piece } => {
                    let update = Message::FieldUpdate {
                        field: *field,
                        piece: *piece,
                    };
                    if let Some(Reading::Placement(p)) = board.adapter.message(&update) {
                        moved = Some(p);
                    }
                }
                Record::Time { left, ms } => {
                    board.placement_on(slot, moved.take(), out);
                    if let Some(status) = board.last_status.map(|s| s.pressed(*left, *ms)) {
                        board.pass_on(slot, &Message::Clock(status), out);
                        pressed = true;
                    }
                }
                Record::PowerUp | Record::StartTag | Record::Tag(_) => {}
            }
        }
        board.placement_on(slot, moved, out);
        // The clock read before these changes may be older than their last press: it is
        // passed on only if it agrees with it.
        let last_status = board.last_status;
        let agrees = |held: &Message| match (held, last_status) {
            (Message::Clock(held), Some(last)) => {
                (held.left_to_move, held.right_to_move) == (last.left_to_move, last.right_to_move)
            }
            _ => true,
        };
        if let Some(carried) = board.carried_clock.take() {
            if !pressed || agrees(&carried) {
                board.pass_on(slot, &carried, out);
            }
        }
        if pressed && board.held_clock.as_ref().is_some_and(|held| !agrees(held)) {
            board.held_clock = None;
        }
    }

    fn garbled(&mut self, error: &BusError, now: NodeMs, out: &mut Vec<ChainOut>) {
        tracing::debug!(%error, "a garbled reply on the chain");
        if let Some(discovery) = self
            .discovery
            .as_mut()
            .filter(|d| d.listening_until.is_some())
        {
            // Two boards answered at once: there is someone to find in another round.
            discovery.news = true;
            self.line_error();
            return;
        }
        let Some(pending) = self.pending else {
            self.line_error();
            return;
        };
        self.pending = None;
        match pending.slot {
            Some(slot) => self.boards[slot].watch.error(),
            None => self.line_error(),
        }
        if pending.repeats >= REPEATS {
            self.unanswered(pending, now, out);
            return;
        }
        // Asked again; changes with REPEAT_CHANGES, so that none are lost.
        let code = match pending.code {
            command::SEND_CHANGES => command::REPEAT_CHANGES,
            code => code,
        };
        self.send(pending.slot, pending.to, code, now, pending.repeats + 1);
    }

    /// A request went unanswered (or garbled beyond repeating).
    fn unanswered(&mut self, pending: Pending, now: NodeMs, out: &mut Vec<ChainOut>) {
        let Some(slot) = pending.slot else {
            if let Some(discovery) = self.discovery.as_mut() {
                // A board told to ignore the next ping that did not acknowledge it will
                // answer the ping to all: another round finds it known.
                discovery.news |= pending.code == command::IGNORE_NEXT_PING;
            }
            return;
        };
        let board = &mut self.boards[slot];
        if !board.present {
            board.next_ping = NodeMs(now.0 + PING_GONE_EVERY_MS);
            if pending.code == command::IGNORE_NEXT_PING {
                if let Some(discovery) = self.discovery.as_mut() {
                    discovery.news = true;
                }
            }
            return;
        }
        board.misses += 1;
        if matches!(
            pending.code,
            command::SEND_CHANGES | command::REPEAT_CHANGES
        ) {
            if pending.repeats >= REPEATS {
                // Garbled again and again: what the board sent cannot be had.
                out.extend(board.lose_sight(slot, now));
            } else {
                // The board may have sent its changes and lost them on the line: asked
                // again (REPEAT_CHANGES) before anything new.
                board.unsure = true;
            }
        }
        if board.misses >= MISSES_GONE {
            tracing::warn!(board = %board.address, "a board on the chain no longer answers");
            board.present = false;
            board.next_ping = NodeMs(now.0 + PING_GONE_EVERY_MS);
            out.extend(on(slot, board.watch.closed(now)));
            self.pass = None;
            return;
        }
        if pending.code == command::IGNORE_NEXT_PING {
            if let Some(discovery) = self.discovery.as_mut() {
                discovery.news = true;
            }
        }
        self.step_done(out);
    }

    /// A ping to all answered by `from`.
    fn found(&mut self, from: Address, now: NodeMs, out: &mut Vec<ChainOut>) {
        let Some(discovery) = self.discovery.as_mut() else {
            return;
        };
        match self.boards.iter().position(|b| b.address == from) {
            Some(slot) => {
                let board = &mut self.boards[slot];
                if !board.present {
                    tracing::info!(board = %from, "an enrolled board found on the chain");
                    board.present = true;
                    board.misses = 0;
                    board.returned();
                    discovery.news = true;
                }
                out.extend(board.heard(slot, now));
            }
            None => {
                if self.strangers.insert(from) {
                    tracing::warn!(board = %from, "a board on the chain that nobody enrolled");
                    out.push(ChainOut::Stranger(from));
                    discovery.news = true;
                }
            }
        }
    }

    /// The pass's step is done: the next, or the pass is over and what it read passed on.
    fn step_done(&mut self, out: &mut Vec<ChainOut>) {
        let Some((slot, steps)) = self.pass.as_mut() else {
            return;
        };
        if steps.is_empty() {
            let slot = *slot;
            self.pass = None;
            let board = &mut self.boards[slot];
            if let Some(clock) = board.held_clock.take() {
                if board.resyncing {
                    board.held_clock = Some(clock);
                } else if board.unsure {
                    // This pass's changes were lost (the board is asked again): a press
                    // passed on now would come before the move it completed, and held to
                    // the end of the next pass, after the opponent's reply.
                    board.carried_clock = Some(clock);
                } else {
                    board.pass_on(slot, &clock, out);
                }
            }
        }
    }

    fn next_request(&mut self, now: NodeMs, out: &mut Vec<ChainOut>) {
        if self.discovery.is_some() {
            self.discover(now);
            if self.discovery.is_some() {
                return;
            }
        }
        if let Some((slot, steps)) = self.pass.as_mut() {
            let slot = *slot;
            match steps.pop_front() {
                Some(code) => {
                    let to = self.boards[slot].address;
                    self.send(Some(slot), to, code, now, 0);
                    return;
                }
                None => {
                    self.pass = None;
                    self.step_done(out);
                }
            }
        }
        if self.pass.is_none() && self.cycle.is_empty() {
            if now.0 >= self.next_discovery.0 {
                self.next_discovery = NodeMs(now.0 + DISCOVERY_EVERY_MS);
                self.discovery = Some(Discovery {
                    round: 0,
                    to_ignore: VecDeque::new(),
                    listening_until: None,
                    news: true,
                });
                self.discover(now);
                return;
            }
            self.plan_cycle(now);
        }
        while let Some(slot) = self.cycle.pop_front() {
            let board = &self.boards[slot];
            if !board.present {
                if now.0 < board.next_ping.0 {
                    continue;
                }
                let to = board.address;
                self.send(Some(slot), to, command::PING, now, 0);
                return;
            }
            // The clock first: a press it shows has its move in the changes read after it.
            let mut steps: VecDeque<u8> = if board.resyncing {
                // Changes read and dropped, then the board whole: what follows is news.
                [command::SEND_CLK, command::SEND_CHANGES, command::SEND_BRD].into()
            } else if board.unsure {
                [
                    command::SEND_CLK,
                    command::REPEAT_CHANGES,
                    command::SEND_CHANGES,
                ]
                .into()
            } else {
                [command::SEND_CLK, command::SEND_CHANGES].into()
            };
            if !board.version_asked {
                steps.push_back(command::SEND_VERSION);
            }
            self.boards[slot].version_asked = true;
            let code = steps.pop_front().expect("a step");
            self.pass = Some((slot, steps));
            let to = self.boards[slot].address;
            self.send(Some(slot), to, code, now, 0);
            return;
        }
    }

    /// The order of the next cycle: boards whose clock runs first (a move there is what
    /// the hall waits for), then the others, then those gone whose ping is due.
    fn plan_cycle(&mut self, now: NodeMs) {
        let mut running = Vec::new();
        let mut others = Vec::new();
        let mut gone = Vec::new();
        for (slot, board) in self.boards.iter().enumerate() {
            match (board.present, board.clock_running) {
                (true, true) => running.push(slot),
                (true, false) => others.push(slot),
                (false, _) if now.0 >= board.next_ping.0 => gone.push(slot),
                (false, _) => {}
            }
        }
        self.cycle = running.into_iter().chain(others).chain(gone).collect();
    }

    /// One step of discovery.
    fn discover(&mut self, now: NodeMs) {
        let known: Vec<Address> = self
            .boards
            .iter()
            .filter(|b| b.present)
            .map(|b| b.address)
            .chain(self.strangers.iter().copied())
            .collect();
        let Some(discovery) = self.discovery.as_mut() else {
            return;
        };
        if let Some(until) = discovery.listening_until {
            if now.0 < until.0 {
                return;
            }
            discovery.listening_until = None;
            if !discovery.news || discovery.round >= DISCOVERY_ROUNDS {
                tracing::info!(
                    rounds = discovery.round,
                    boards = self.boards.iter().filter(|b| b.present).count(),
                    strangers = self.strangers.len(),
                    "the chain's boards are found"
                );
                self.discovery = None;
                return;
            }
        }
        if discovery.to_ignore.is_empty() && discovery.listening_until.is_none() {
            if discovery.news {
                // A new round: every known board is to stay quiet.
                discovery.round += 1;
                discovery.news = false;
                discovery.to_ignore = known.into();
                if discovery.to_ignore.is_empty() {
                    discovery.to_ignore.push_back(Address::ALL);
                }
            } else {
                self.discovery = None;
                return;
            }
        }
        match discovery.to_ignore.pop_front() {
            Some(Address::ALL) | None => {
                discovery.to_ignore.clear();
                discovery.listening_until = Some(NodeMs(now.0 + DISCOVERY_LISTEN_MS));
                self.to_send.extend(frame(command::PING, Address::ALL));
            }
            Some(to) => {
                if discovery.to_ignore.is_empty() {
                    discovery.to_ignore.push_back(Address::ALL);
                }
                let slot = self.boards.iter().position(|b| b.address == to);
                self.send(slot, to, command::IGNORE_NEXT_PING, now, 0);
            }
        }
    }
}

/// A chain is read by polling: the line is looked at every few ms.
impl Line for Chain {
    type Out = ChainOut;

    /// 9600 baud, 8N1, as a single board.
    fn settings(&self) -> LineSettings {
        LineSettings {
            baud: 9_600,
            data_bits: serialport::DataBits::Eight,
            parity: serialport::Parity::None,
        }
    }

    fn read_timeout(&self) -> Duration {
        Duration::from_millis(2)
    }

    fn opened(&mut self, now: NodeMs) -> (Vec<u8>, Vec<ChainOut>) {
        let mut out = Chain::opened(self, now);
        let (bytes, more) = self.turn(now);
        out.extend(more);
        (bytes, out)
    }

    fn read(&mut self, bytes: &[u8], now: NodeMs) -> (Vec<u8>, Vec<ChainOut>) {
        let mut out = Chain::read(self, bytes, now);
        let (bytes, more) = self.turn(now);
        out.extend(more);
        (bytes, out)
    }

    fn quiet(&mut self, now: NodeMs) -> (Vec<u8>, Vec<ChainOut>) {
        self.turn(now)
    }

    fn closed(&mut self, now: NodeMs) -> Vec<ChainOut> {
        Chain::closed(self, now)
    }

    fn open_failed(&mut self, now: NodeMs) -> Vec<ChainOut> {
        Chain::open_failed(self, now)
    }
}

mod board;
#[cfg(test)]
mod tests;
