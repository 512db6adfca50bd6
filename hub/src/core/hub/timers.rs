//! Each board's next deadline: when the desk must look at it though nothing happened there
//! (its node falls silent, its clock runs down). The hub gives the time to the boards due,
//! not to every board. [`Timer`] names everything else the hub waits for.

use std::collections::BTreeSet;

use crate::core::ids::{BoardNo, IdMap};
use crate::core::time::HubMs;

/// What the hub waits for without an event: [`super::Hub::poll_timeout`] is the earliest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// A board's deadline: its node falls silent, its clock runs down.
    Boards,
    /// The round's scheduled start: the desk looks for clocks not started.
    RoundStart,
    /// An alert nobody acknowledged escalates.
    Escalation,
    /// The next round's scheduled start comes.
    ScheduledRound,
    /// Zones' open lists that changed go out again.
    OpenLists,
    /// The live feed's moves come out of the broadcast delay.
    LiveFeed,
}

impl Timer {
    /// Every timer, in the order the due ones are handled.
    pub const ALL: [Timer; 6] = [
        Timer::Boards,
        Timer::RoundStart,
        Timer::Escalation,
        Timer::ScheduledRound,
        Timer::OpenLists,
        Timer::LiveFeed,
    ];
}

#[derive(Debug, Default)]
pub struct Timers {
    by_time: BTreeSet<(HubMs, BoardNo)>,
    of_board: IdMap<BoardNo, HubMs>,
}

impl Timers {
    /// `board` is next due at `at` (`None`: not until an event).
    pub fn set(&mut self, board: BoardNo, at: Option<HubMs>) {
        // One lookup of the board: this runs at every event of the hall.
        let old = match at {
            Some(at) => self.of_board.insert(board, at),
            None => self.of_board.remove(&board),
        };
        if old == at {
            return;
        }
        if let Some(old) = old {
            self.by_time.remove(&(old, board));
        }
        if let Some(at) = at {
            self.by_time.insert((at, board));
        }
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<HubMs> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// The boards due by `now`, earliest first; their deadlines are taken off.
    pub fn due(&mut self, now: HubMs) -> Vec<BoardNo> {
        let mut due = Vec::new();
        while let Some(&(at, board)) = self.by_time.first() {
            if at > now {
                break;
            }
            self.by_time.pop_first();
            self.of_board.remove(&board);
            due.push(board);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_has_one_deadline_the_latest_set() {
        let mut timers = Timers::default();
        timers.set(BoardNo(7), Some(HubMs(500)));
        timers.set(BoardNo(3), Some(HubMs(200)));
        timers.set(BoardNo(7), Some(HubMs(100)));
        assert_eq!(timers.next(), Some(HubMs(100)));
        assert_eq!(timers.due(HubMs(150)), [BoardNo(7)]);
        assert_eq!(timers.due(HubMs(150)), Vec::<BoardNo>::new());
        timers.set(BoardNo(3), None);
        assert_eq!(timers.next(), None);
    }
}
