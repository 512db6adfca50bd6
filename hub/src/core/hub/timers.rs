//! Each board's next deadline: when the desk must look at it though nothing happened there
//! (its node falls silent, its clock runs down). The hub gives the time to the boards due,
//! not to every board.

use std::collections::{BTreeSet, HashMap};

use crate::core::time::HubMs;

#[derive(Debug, Default)]
pub struct Timers {
    by_time: BTreeSet<(HubMs, u16)>,
    of_board: HashMap<u16, HubMs>,
}

impl Timers {
    /// `board` is next due at `at` (`None`: not until an event).
    pub fn set(&mut self, board: u16, at: Option<HubMs>) {
        if let Some(old) = self.of_board.remove(&board) {
            self.by_time.remove(&(old, board));
        }
        if let Some(at) = at {
            self.by_time.insert((at, board));
            self.of_board.insert(board, at);
        }
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<HubMs> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// The boards due by `now`, earliest first; their deadlines are taken off.
    pub fn due(&mut self, now: HubMs) -> Vec<u16> {
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
        timers.set(7, Some(HubMs(500)));
        timers.set(3, Some(HubMs(200)));
        timers.set(7, Some(HubMs(100)));
        assert_eq!(timers.next(), Some(HubMs(100)));
        assert_eq!(timers.due(HubMs(150)), [7]);
        assert_eq!(timers.due(HubMs(150)), Vec::<u16>::new());
        timers.set(3, None);
        assert_eq!(timers.next(), None);
    }
}
