//! Which node reports for which board: the technician binds each e-board's hardware id to
//! a board, one hardware per board. Bound over the API, a board's earlier hardware is
//! unbound, so a node swapped in takes the board over.

use std::collections::BTreeMap;

use super::ids::{BoardNo, HardwareId};

/// Hardware id → board, and board → hardware id (one each way, so that binding one node in
/// a hall of thousands looks up two entries instead of scanning every binding).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bindings {
    by_hardware: BTreeMap<HardwareId, BoardNo>,
    by_board: BTreeMap<BoardNo, HardwareId>,
}

impl Bindings {
    /// The configuration's bindings (checked there: no board or hardware twice).
    pub fn new(configured: BTreeMap<HardwareId, BoardNo>) -> Bindings {
        let by_board = configured
            .iter()
            .map(|(hardware, board)| (*board, hardware.clone()))
            .collect();
        Bindings {
            by_hardware: configured,
            by_board,
        }
    }

    /// Binds `hardware` to `board` (`None`: unbinds it); the board's earlier hardware is
    /// unbound. What changed, for the journal: every (hardware, board) written, in order.
    pub fn bind(
        &mut self,
        hardware: &HardwareId,
        board: Option<BoardNo>,
    ) -> Vec<(HardwareId, Option<BoardNo>)> {
        let mut changes = vec![(hardware.clone(), board)];
        if let Some(left) = self.by_hardware.remove(hardware) {
            self.by_board.remove(&left);
        }
        if let Some(board) = board {
            if let Some(replaced) = self.by_board.insert(board, hardware.clone()) {
                self.by_hardware.remove(&replaced);
                changes.push((replaced, None));
            }
            self.by_hardware.insert(hardware.clone(), board);
        }
        changes
    }

    /// The board `hardware` is bound to.
    pub fn board_of(&self, hardware: &HardwareId) -> Option<BoardNo> {
        self.by_hardware.get(hardware).copied()
    }

    /// The hardware bound to `board`.
    pub fn hardware_on(&self, board: BoardNo) -> Option<&HardwareId> {
        self.by_board.get(&board)
    }

    pub fn map(&self) -> &BTreeMap<HardwareId, BoardNo> {
        &self.by_hardware
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_node_takes_the_board_over() {
        let (a, b) = (HardwareId::from("DGT-A"), HardwareId::from("DGT-B"));
        let mut bindings = Bindings::new([(a.clone(), BoardNo(7))].into());
        let changes = bindings.bind(&b, Some(BoardNo(7)));
        assert_eq!(changes, [(b.clone(), Some(BoardNo(7))), (a, None)]);
        assert_eq!(bindings.map().len(), 1);
        assert_eq!(bindings.map()[&b], BoardNo(7));
        assert_eq!(bindings.bind(&b, None), [(b, None)]);
        assert!(bindings.map().is_empty());
        assert_eq!(bindings.hardware_on(BoardNo(7)), None);
    }
}
