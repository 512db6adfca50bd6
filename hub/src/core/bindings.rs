//! Which node reports for which board: the technician binds each e-board's hardware id to
//! a board, one hardware per board. Bound over the API, a board's earlier hardware is
//! unbound, so a node swapped in takes the board over.

use std::collections::BTreeMap;

use super::ids::{BoardNo, HardwareId};

/// Hardware id → board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bindings(BTreeMap<HardwareId, BoardNo>);

impl Bindings {
    /// The configuration's bindings (checked there: no board or hardware twice).
    pub fn new(configured: BTreeMap<HardwareId, BoardNo>) -> Bindings {
        Bindings(configured)
    }

    /// Binds `hardware` to `board` (`None`: unbinds it); the board's earlier hardware is
    /// unbound. What changed, for the journal: every (hardware, board) written, in order.
    pub fn bind(
        &mut self,
        hardware: &HardwareId,
        board: Option<BoardNo>,
    ) -> Vec<(HardwareId, Option<BoardNo>)> {
        let mut changes = vec![(hardware.clone(), board)];
        match board {
            Some(board) => {
                let replaced: Vec<HardwareId> = self
                    .0
                    .iter()
                    .filter(|(hw, b)| **b == board && *hw != hardware)
                    .map(|(hw, _)| hw.clone())
                    .collect();
                for hw in replaced {
                    self.0.remove(&hw);
                    changes.push((hw, None));
                }
                self.0.insert(hardware.clone(), board);
            }
            None => {
                self.0.remove(hardware);
            }
        }
        changes
    }

    pub fn map(&self) -> &BTreeMap<HardwareId, BoardNo> {
        &self.0
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
    }
}
