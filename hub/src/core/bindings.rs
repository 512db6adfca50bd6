//! Which node reports for which board: the technician binds each e-board's hardware id to
//! a board, one hardware per board. Bound over the API, a board's earlier hardware is
//! unbound, so a node swapped in takes the board over.

use std::collections::BTreeMap;

/// Hardware id → board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bindings(BTreeMap<String, u16>);

impl Bindings {
    /// The configuration's bindings (checked there: no board or hardware twice).
    pub fn new(configured: BTreeMap<String, u16>) -> Bindings {
        Bindings(configured)
    }

    /// Binds `hardware` to `board` (`None`: unbinds it); the board's earlier hardware is
    /// unbound. What changed, for the journal: every (hardware, board) written, in order.
    pub fn bind(&mut self, hardware: &str, board: Option<u16>) -> Vec<(String, Option<u16>)> {
        let mut changes = vec![(hardware.to_owned(), board)];
        match board {
            Some(board) => {
                let replaced: Vec<String> = self
                    .0
                    .iter()
                    .filter(|(hw, b)| **b == board && *hw != hardware)
                    .map(|(hw, _)| hw.clone())
                    .collect();
                for hw in replaced {
                    self.0.remove(&hw);
                    changes.push((hw, None));
                }
                self.0.insert(hardware.to_owned(), board);
            }
            None => {
                self.0.remove(hardware);
            }
        }
        changes
    }

    pub fn map(&self) -> &BTreeMap<String, u16> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_node_takes_the_board_over() {
        let mut bindings = Bindings::new([("DGT-A".to_owned(), 7)].into());
        let changes = bindings.bind("DGT-B", Some(7));
        assert_eq!(
            changes,
            [("DGT-B".to_owned(), Some(7)), ("DGT-A".to_owned(), None)]
        );
        assert_eq!(bindings.map().len(), 1);
        assert_eq!(bindings.map()["DGT-B"], 7);
        assert_eq!(bindings.bind("DGT-B", None), [("DGT-B".to_owned(), None)]);
        assert!(bindings.map().is_empty());
    }
}
