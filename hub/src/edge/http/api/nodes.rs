//! Questions about the board nodes: what the technician sees, and the bindings and keys
//! they give.

use protocol::BoardNo;
use tokio::sync::oneshot::Sender;

use crate::core::hub::Enrolled;
use crate::core::ids::HardwareId;
use crate::core::setup::NodesReport;

/// How the hall's nodes are.
pub enum NodeRead {
    /// The hall's nodes and the technician's warnings.
    Report { reply: Sender<NodesReport> },
    /// How many nodes are connected.
    Connected { reply: Sender<usize> },
    /// Who an external broker must let in: `username:password` lines.
    BrokerUsers { reply: Sender<Option<String>> },
}

/// The technician's changes.
pub enum NodeChange {
    /// Binds a node's e-board hardware to a board (`None`: unbinds it); answered with the
    /// nodes' report once the binding is durable.
    Bind {
        hardware: HardwareId,
        board: Option<BoardNo>,
        reply: Sender<NodesReport>,
    },
    /// Enrols a node's hardware for a board: its key and its binding in one step; answered
    /// with the key once durable.
    Enrol {
        hardware: HardwareId,
        board: BoardNo,
        reply: Sender<Enrolled>,
    },
    /// Revokes a node's key; answered with the nodes' report once durable.
    Revoke {
        hardware: HardwareId,
        reply: Sender<NodesReport>,
    },
}
