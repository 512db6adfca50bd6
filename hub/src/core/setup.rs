//! The hall's nodes as the technician sees them the night before round 1: which node
//! reports for which board, and what is wrong: a node nobody bound, a node publishing as
//! another board than it is bound to, one board's hardware on two boards, a board of the
//! round without a node.

use std::collections::BTreeMap;

use serde::Serialize;

use super::hall::Hall;
use super::ids::{BoardNo, HardwareId};
use super::time::HubMs;
use super::timebase::Step;

/// One board's node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeView {
    pub board: BoardNo,
    /// The e-board's hardware id the node announced; empty when none is connected.
    pub board_hw: String,
    pub clock_hw: String,
    pub software: String,
    pub connected: bool,
    /// ms since the node was last heard.
    pub silent_ms: Option<u64>,
    /// The board the configuration binds this hardware to, if any.
    pub bound_to: Option<BoardNo>,
    /// Clock readings taken back at the next press (a stale or misread display): off the
    /// arbiters' pagers, for the technician to check the clock and its cable when they
    /// repeat.
    pub clock_glitches: usize,
    /// As the node last reported them (`null` from a node that reports no health, such as a
    /// replay): whether the e-board answers on its serial line, whether it has a clock
    /// attached, the serial errors since the node started, and ms since the board's or the
    /// clock's connection last changed.
    pub board_connected: Option<bool>,
    pub clock_connected: Option<bool>,
    pub serial_errors: Option<u32>,
    pub connection_changed_ago_ms: Option<u64>,
    /// The clock's battery: low, or not; `null` where the node never reported it (a board
    /// without a clock, a replay).
    pub battery_low: Option<bool>,
}

/// Something the technician should fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Warning {
    /// Bindings are configured, but this node's hardware is not among them.
    UnboundNode {
        board: BoardNo,
        hardware: HardwareId,
    },
    /// The node publishes as `board` but its hardware is bound to `bound_to`.
    BoundElsewhere {
        board: BoardNo,
        hardware: HardwareId,
        bound_to: BoardNo,
    },
    /// The same e-board hardware reports for several boards.
    DuplicateHardware {
        hardware: HardwareId,
        boards: Vec<BoardNo>,
    },
    /// A board that should be played (bound, or paired in the round) has no node heard.
    BoardWithoutNode { board: BoardNo },
    /// The node is heard but its e-board does not answer (a pulled cable, a board without
    /// power), for `ago_ms`.
    BoardDisconnected { board: BoardNo, ago_ms: u64 },
    /// The e-board answers but reports no clock attached, for `ago_ms`.
    ClockDisconnected { board: BoardNo, ago_ms: u64 },
    /// Messages for this board were refused, not sealed by its enrolled node: a node that
    /// was never enrolled (or enrolled for another board, or revoked), or someone forging.
    RefusedMessages {
        board: BoardNo,
        refused: u64,
        /// ms since the last one.
        last_ago_ms: u64,
    },
    /// An e-board answers on the chain of `board`'s node that no node was told to read:
    /// its bus address (a DGT serial number, or its low 14 bits). Enrol it with its serial
    /// number and give it to the node, or take it off the chain.
    StrangerOnChain { board: BoardNo, address: u16 },
    /// The node's clock stepped (set by NTP after the node started, a faulty clock): the
    /// hub took the step out of its times, but a node whose clock steps again and again
    /// should be looked at. `ms` the last step, `ahead` its direction.
    NodeClockStepped {
        board: BoardNo,
        steps: u32,
        ms: u64,
        ahead: bool,
        ago_ms: u64,
    },
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
    bindings: &BTreeMap<HardwareId, BoardNo>,
    expected: &[BoardNo],
    now: HubMs,
) -> NodesReport {
    let mut nodes = Vec::new();
    let mut warnings = Vec::new();
    let mut by_hardware: BTreeMap<HardwareId, Vec<BoardNo>> = BTreeMap::new();
    for n in hall.boards() {
        let Some(state) = hall.board(n) else { continue };
        let Some(hello) = state.hello() else { continue };
        let hardware = HardwareId(hello.board_hw.clone());
        let bound_to = bindings.get(&hardware).copied();
        if !hello.board_hw.is_empty() {
            by_hardware.entry(hardware.clone()).or_default().push(n);
            match bound_to {
                None if !bindings.is_empty() => warnings.push(Warning::UnboundNode {
                    board: n,
                    hardware: hardware.clone(),
                }),
                Some(bound) if bound != n => warnings.push(Warning::BoundElsewhere {
                    board: n,
                    hardware: hardware.clone(),
                    bound_to: bound,
                }),
                _ => {}
            }
        }
        let health = state.health(now);
        match health {
            Some((h, ago_ms)) if !h.board_connected => {
                warnings.push(Warning::BoardDisconnected { board: n, ago_ms })
            }
            Some((h, ago_ms)) if !h.clock_connected && !hello.clock_hw.is_empty() => {
                warnings.push(Warning::ClockDisconnected { board: n, ago_ms })
            }
            _ => {}
        }
        for address in state.strangers() {
            warnings.push(Warning::StrangerOnChain {
                board: n,
                address: *address,
            });
        }
        if let (steps, Some((step, at))) = state.node_time_steps() {
            let (ms, ahead) = match step {
                Step::Ahead(ms) => (ms, true),
                Step::Behind(ms) => (ms, false),
            };
            warnings.push(Warning::NodeClockStepped {
                board: n,
                steps,
                ms,
                ahead,
                ago_ms: now.since(at),
            });
        }
        nodes.push(NodeView {
            board: n,
            board_hw: hello.board_hw.clone(),
            clock_hw: hello.clock_hw.clone(),
            software: hello.software.clone(),
            connected: state.node_connected(now),
            silent_ms: state.last_heard().map(|t| now.since(t)),
            bound_to,
            clock_glitches: state.clock().glitches(),
            board_connected: health.map(|(h, _)| h.board_connected),
            clock_connected: health.map(|(h, _)| h.clock_connected),
            serial_errors: health.map(|(h, _)| h.serial_errors),
            connection_changed_ago_ms: health.map(|(_, ago)| ago),
            battery_low: state.battery_low(),
        });
    }
    for (hardware, boards) in by_hardware {
        if boards.len() > 1 {
            warnings.push(Warning::DuplicateHardware { hardware, boards });
        }
    }
    let mut wanted: Vec<BoardNo> = expected.iter().chain(bindings.values()).copied().collect();
    wanted.sort_unstable();
    wanted.dedup();
    for board in wanted {
        if !nodes.iter().any(|n| n.board == board) {
            warnings.push(Warning::BoardWithoutNode { board });
        }
    }
    NodesReport { nodes, warnings }
}
