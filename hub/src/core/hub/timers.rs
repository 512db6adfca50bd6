//! Each board's next deadline: when the desk must look at it though nothing happened there
//! (its node falls silent, its clock runs down). The hub gives the time to the boards due,
//! not to every board. [`Timer`] names everything else the hub waits for.

use std::collections::hash_map::Entry;
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

/// Where a board's deadline is queued, and the deadline itself, never earlier.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    queued: HubMs,
    at: HubMs,
}

/// The boards' deadlines in time order. A deadline that moves later (a node's silence is
/// counted from its last event, so at every event of the hall) keeps its place in the queue
/// and moves when it comes first: one move per deadline that comes, not one per event.
/// The first in the queue is always in its place, so [`Timers::next`] is exact.
#[derive(Debug, Default)]
pub struct Timers {
    by_time: BTreeSet<(HubMs, BoardNo)>,
    of_board: IdMap<BoardNo, Deadline>,
}

impl Timers {
    /// `board` is next due at `at` (`None`: not until an event).
    pub fn set(&mut self, board: BoardNo, at: Option<HubMs>) {
        match (at, self.of_board.entry(board)) {
            (Some(at), Entry::Occupied(mut entry)) => {
                let deadline = entry.get_mut();
                if at < deadline.queued {
                    self.by_time.remove(&(deadline.queued, board));
                    self.by_time.insert((at, board));
                    deadline.queued = at;
                }
                deadline.at = at;
            }
            (Some(at), Entry::Vacant(entry)) => {
                entry.insert(Deadline { queued: at, at });
                self.by_time.insert((at, board));
            }
            (None, Entry::Occupied(entry)) => {
                self.by_time.remove(&(entry.remove().queued, board));
            }
            (None, Entry::Vacant(_)) => {}
        }
        self.settle_first();
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
            self.settle_first();
        }
        due
    }

    /// Moves the first deadlines that moved later to their places until the first is in
    /// its own: it is then the earliest of all, as every deadline is at or after its place.
    fn settle_first(&mut self) {
        while let Some(&(queued, board)) = self.by_time.first() {
            let Some(deadline) = self.of_board.get_mut(&board) else {
                unreachable!("board {board:?} is queued without a deadline");
            };
            if deadline.at == queued {
                return;
            }
            self.by_time.pop_first();
            self.by_time.insert((deadline.at, board));
            deadline.queued = deadline.at;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

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

    #[derive(Debug, Clone)]
    enum Step {
        Set(u16, Option<u64>),
        Due(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0u16..12, proptest::option::weighted(0.9, 0u64..200))
                .prop_map(|(b, at)| Step::Set(b, at)),
            1 => (0u64..200).prop_map(Step::Due),
        ]
    }

    proptest! {
        /// The queue that moves a later deadline only when it comes first answers as one
        /// that moves it at once: the same earliest deadline, the same boards due in the
        /// same order.
        #[test]
        fn deadlines_moved_late_answer_as_moved_at_once(steps in proptest::collection::vec(step(), 1..120)) {
            let mut timers = Timers::default();
            let mut model: BTreeMap<u16, u64> = BTreeMap::new();
            for step in steps {
                match step {
                    Step::Set(board, at) => {
                        timers.set(BoardNo(board), at.map(HubMs));
                        match at {
                            Some(at) => model.insert(board, at),
                            None => model.remove(&board),
                        };
                    }
                    Step::Due(now) => {
                        let mut expected: Vec<(u64, u16)> = model
                            .iter()
                            .filter(|(_, at)| **at <= now)
                            .map(|(board, at)| (*at, *board))
                            .collect();
                        expected.sort();
                        for (_, board) in &expected {
                            model.remove(board);
                        }
                        let expected: Vec<BoardNo> =
                            expected.into_iter().map(|(_, b)| BoardNo(b)).collect();
                        prop_assert_eq!(timers.due(HubMs(now)), expected);
                    }
                }
                prop_assert_eq!(timers.next(), model.values().min().copied().map(HubMs));
            }
        }
    }
}
