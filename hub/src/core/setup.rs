//! The hall's nodes as the technician sees them the night before round 1: which node
//! reports for which board, and what is wrong: a node nobody bound, a node publishing as
//! another board than it is bound to, one board's hardware on two boards, a board of the
//! round without a node.

use std::collections::BTreeMap;

use serde::Serialize;

use super::hall::Hall;
use super::time::HubMs;

/// One board's node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeView {
    pub board: u16,
    /// The e-board's hardware id the node announced; empty when none is connected.
    pub board_hw: String,
    pub clock_hw: String,
    pub software: String,
    pub connected: bool,
    /// ms since the node was last heard.
    pub silent_ms: Option<u64>,
    /// The board the configuration binds this hardware to, if any.
    pub bound_to: Option<u16>,
    /// Clock readings taken back at the next press (a stale or misread display): off the
    /// arbiters' pagers, for the technician to check the clock and its cable when they
    /// repeat.
    pub clock_glitches: usize,
}

/// Something the technician should fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Warning {
    /// Bindings are configured, but this node's hardware is not among them.
    UnboundNode { board: u16, hardware: String },
    /// The node publishes as `board` but its hardware is bound to `bound_to`.
    BoundElsewhere {
        board: u16,
        hardware: String,
        bound_to: u16,
    },
    /// The same e-board hardware reports for several boards.
    DuplicateHardware { hardware: String, boards: Vec<u16> },
    /// A board that should be played (bound, or paired in the round) has no node heard.
    BoardWithoutNode { board: u16 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodesReport {
    pub nodes: Vec<NodeView>,
    pub warnings: Vec<Warning>,
}

/// The report at `now`: `bindings` maps hardware ids to boards; `expected` are the boards
/// that should have a node (the round's pairings).
pub fn nodes(
    hall: &Hall,
    bindings: &BTreeMap<String, u16>,
    expected: &[u16],
    now: HubMs,
) -> NodesReport {
    let mut nodes = Vec::new();
    let mut warnings = Vec::new();
    let mut by_hardware: BTreeMap<&str, Vec<u16>> = BTreeMap::new();
    for n in hall.boards() {
        let Some(state) = hall.board(n) else { continue };
        let Some(hello) = state.hello() else { continue };
        let bound_to = bindings.get(&hello.board_hw).copied();
        if !hello.board_hw.is_empty() {
            by_hardware
                .entry(hello.board_hw.as_str())
                .or_default()
                .push(n.0);
            match bound_to {
                None if !bindings.is_empty() => warnings.push(Warning::UnboundNode {
                    board: n.0,
                    hardware: hello.board_hw.clone(),
                }),
                Some(bound) if bound != n.0 => warnings.push(Warning::BoundElsewhere {
                    board: n.0,
                    hardware: hello.board_hw.clone(),
                    bound_to: bound,
                }),
                _ => {}
            }
        }
        nodes.push(NodeView {
            board: n.0,
            board_hw: hello.board_hw.clone(),
            clock_hw: hello.clock_hw.clone(),
            software: hello.software.clone(),
            connected: state.node_connected(now),
            silent_ms: state.last_heard().map(|t| now.since(t)),
            bound_to,
            clock_glitches: state.clock().glitches(),
        });
    }
    for (hardware, boards) in by_hardware {
        if boards.len() > 1 {
            warnings.push(Warning::DuplicateHardware {
                hardware: hardware.to_owned(),
                boards,
            });
        }
    }
    let mut wanted: Vec<u16> = expected.iter().chain(bindings.values()).copied().collect();
    wanted.sort_unstable();
    wanted.dedup();
    for board in wanted {
        if !nodes.iter().any(|n| n.board == board) {
            warnings.push(Warning::BoardWithoutNode { board });
        }
    }
    NodesReport { nodes, warnings }
}
