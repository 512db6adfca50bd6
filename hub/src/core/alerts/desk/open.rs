//! The desk's open alerts, and the same by board: a board's alerts are looked up at every
//! incident raised for it (is one of its kind open already?), and a scan of the whole hall's
//! open alerts for each took a tenth of the hub's time in a saturated hall.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::ids::{AlertId, BoardNo};

#[derive(Debug, Clone, Default)]
pub(super) struct OpenAlerts {
    ids: BTreeSet<AlertId>,
    by_board: BTreeMap<BoardNo, BTreeSet<AlertId>>,
}

impl OpenAlerts {
    /// Alert `id`, at `board` if it is a board's, is open.
    pub fn insert(&mut self, id: AlertId, board: Option<BoardNo>) {
        self.ids.insert(id);
        if let Some(board) = board {
            self.by_board.entry(board).or_default().insert(id);
        }
    }

    /// Alert `id`, at `board` if it is a board's, is no longer open.
    pub fn remove(&mut self, id: AlertId, board: Option<BoardNo>) {
        self.ids.remove(&id);
        if let Some(board) = board {
            if let Some(ids) = self.by_board.get_mut(&board) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.by_board.remove(&board);
                }
            }
        }
    }

    /// Every open alert, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &AlertId> {
        self.ids.iter()
    }

    /// The open alerts at `board`, oldest first.
    pub fn at(&self, board: BoardNo) -> impl Iterator<Item = &AlertId> {
        self.by_board.get(&board).into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boards_open_alerts_are_those_opened_there_and_not_closed() {
        let mut open = OpenAlerts::default();
        open.insert(AlertId(1), Some(BoardNo(7)));
        open.insert(AlertId(2), None);
        open.insert(AlertId(3), Some(BoardNo(7)));
        open.insert(AlertId(4), Some(BoardNo(8)));
        open.remove(AlertId(1), Some(BoardNo(7)));
        let at = |open: &OpenAlerts, board| open.at(BoardNo(board)).copied().collect::<Vec<_>>();
        assert_eq!(at(&open, 7), [AlertId(3)]);
        assert_eq!(at(&open, 8), [AlertId(4)]);
        assert_eq!(at(&open, 9), []);
        let all: Vec<_> = open.iter().copied().collect();
        assert_eq!(all, [AlertId(2), AlertId(3), AlertId(4)]);
        open.remove(AlertId(3), Some(BoardNo(7)));
        assert_eq!(at(&open, 7), []);
    }
}
