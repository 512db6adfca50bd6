//! One enrolled board on a chain, as the bus master keeps it: present or gone, trusted or
//! to be read whole, and what it last passed on to the hub.

use protocol::{NodeMs, Placement};

use super::super::wire::{Address, Record};
use super::{on, ChainOut};
use crate::eboard::message::{ClockStatus, Message};
use crate::eboard::Adapter;
use crate::line::health::HealthWatch;
use crate::source::Reading;

/// One enrolled board on the chain.
#[derive(Debug)]
pub(super) struct ChainBoard {
    pub(super) address: Address,
    pub(super) adapter: Adapter,
    pub(super) watch: HealthWatch,
    /// Answering requests.
    pub(super) present: bool,
    /// Requests in a row it did not answer.
    pub(super) misses: u32,
    /// Its copy of the board cannot be trusted: read it whole before passing anything on.
    pub(super) resyncing: bool,
    /// A changes reply may have been lost: ask for it again before anything new.
    pub(super) unsure: bool,
    /// The last changes read, to tell a repeat of them from the reply that was lost.
    pub(super) last_packet: Vec<Record>,
    /// The clock read this pass, passed on after the pass's placement.
    pub(super) held_clock: Option<Message>,
    /// The clock read in a pass whose changes were lost: passed on after the next changes
    /// read (the move a press on it completed is in them), unless they hold a press.
    pub(super) carried_clock: Option<Message>,
    pub(super) clock_connected: bool,
    pub(super) clock_running: bool,
    pub(super) last_placement: Option<Placement>,
    /// The clock as last passed on: a press recorded in the changes is this with the
    /// lever turned and the halted side's time.
    pub(super) last_status: Option<ClockStatus>,
    pub(super) next_ping: NodeMs,
    /// Its firmware version was asked for (once a line is open: a board that does not
    /// answer it is not asked again and again).
    pub(super) version_asked: bool,
}

impl ChainBoard {
    /// Its copy of the board is not trusted until it is read whole.
    pub(super) fn resync(&mut self) {
        self.resyncing = true;
        self.unsure = false;
        self.carried_clock = None;
        self.adapter.reopened();
    }

    /// It answers again after it was gone: the changes it kept meanwhile (all of them, or
    /// a power-up and all since) are read, the last packet asked for again first in case
    /// its reply was lost, and the clock reported as it stands.
    pub(super) fn returned(&mut self) {
        self.unsure = true;
        self.adapter.reopened();
    }

    /// As [`ChainBoard::resync`], and the hub hears of it as a reconnection (presses may
    /// have been missed).
    pub(super) fn lose_sight(&mut self, slot: usize, now: NodeMs) -> Vec<ChainOut> {
        if !self.resyncing {
            self.resync();
        }
        on(slot, self.watch.lost_sight(now)).collect()
    }

    /// It answered: connected, its clock as it last said.
    pub(super) fn heard(&mut self, slot: usize, now: NodeMs) -> Vec<ChainOut> {
        let clock = self.clock_connected;
        on(slot, self.watch.heard(now, clock)).collect()
    }

    /// The board's placement, if it changed, for the hub.
    pub(super) fn placement_on(
        &mut self,
        slot: usize,
        placement: Option<Placement>,
        out: &mut Vec<ChainOut>,
    ) {
        if let Some(p) = placement.filter(|p| self.last_placement != Some(*p)) {
            self.last_placement = Some(p);
            out.push(ChainOut::Board(slot, Reading::Placement(p)));
        }
    }

    /// A message read from the board, as readings for the hub.
    pub(super) fn pass_on(&mut self, slot: usize, message: &Message, out: &mut Vec<ChainOut>) {
        if let Message::Clock(status) = message {
            if !status.no_clock {
                self.last_status = Some(*status);
            }
        }
        match self.adapter.message(message) {
            Some(Reading::Placement(p)) if self.last_placement == Some(p) => {}
            Some(reading) => {
                if let Reading::Placement(p) = reading {
                    self.last_placement = Some(p);
                }
                out.push(ChainOut::Board(slot, reading));
            }
            None => {}
        }
        if let Some(battery) = self.adapter.battery(message) {
            out.push(ChainOut::Board(slot, battery));
        }
    }
}
