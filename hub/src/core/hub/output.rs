//! What the hub's core asks the shell to do: [`Output`], polled with
//! [`super::Hub::poll_output`], carried out in order and never decided on.

use protocol::seal::NodeKey;
use protocol::{BoardNo, DownlinkBody};

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{Alert, AlertChange};
use crate::core::arbiter::{AuditEntry, DecisionError, DecisionRecord};
use crate::core::archive::PlayedGame;
use crate::core::ids::HardwareId;
use crate::core::pairings::RoundState;
use crate::core::record::Record;
use crate::core::relay::public::LiveMove;
use crate::core::rounds::{RoundStart, StartError};
use crate::core::setup::NodesReport;
use crate::core::time::HubMs;

/// Where a write stands in the journal's order: the shell reports back, through
/// [`super::Hub::handle_durable`], the position up to which everything is flushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position(pub u64);

/// The shell's number for a request whose answer may wait for the journal (an arbiter's
/// decision, an acknowledgement, a binding); the answer comes as [`Output::Reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId(pub u64);

/// What goes into the journal. A failed write stops the hub: nothing is acknowledged that
/// is not written.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Event(Record),
    Decision(DecisionRecord),
    /// An alert's latest state, replacing the stored one.
    Alert(Box<Alert>),
    /// The technician bound a node's e-board hardware to a board (`None`: unbound).
    Binding {
        hardware: HardwareId,
        board: Option<BoardNo>,
    },
    /// The technician enrolled a node's hardware with this key (`None`: revoked it).
    Enrolment {
        hardware: HardwareId,
        key: Option<NodeKey>,
    },
    /// The chief arbiter enrolled an arbiter (`None`: revoked them).
    Arbiter {
        name: String,
        member: Option<crate::core::roster::Member>,
    },
    /// A round started.
    RoundStart(RoundStart),
    /// A game of a round that is over, as the archive now holds it (replacing the stored
    /// one).
    Game(Box<PlayedGame>),
}

/// A node enrolled: what the technician writes into its key file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrolled {
    pub hardware: HardwareId,
    pub board: BoardNo,
    pub key: NodeKey,
}

/// The answer to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Decision(Result<AuditEntry, DecisionError>),
    Alert(Result<Box<Alert>, AlertError>),
    /// A binding is durable: the nodes as the technician now sees them.
    Nodes(NodesReport),
    /// An enrolment is durable.
    Enrolled(Enrolled),
    /// An arbiter's enrolment is durable: their pager's credentials, or why they were not
    /// enrolled.
    ArbiterEnrolled(Result<super::ArbiterEnrolment, super::EnrolmentRefusal>),
    /// An arbiter's revocation is durable: the arbiters still enrolled.
    Arbiters(Vec<String>),
    /// A round started (or was in play already): every round as it stands; or why not.
    RoundStarted(Result<Vec<RoundState>, StartError>),
}

/// Why a pager's command was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagerRefusal {
    /// It names no alert, or its name or note is past the bounds.
    Malformed,
    /// Not sealed with the key of the enrolled arbiter it names, or not sent lately.
    NotSealed,
    /// Sealed by its arbiter, on an alert of a zone they do not watch.
    OutOfZone,
}

/// Something the metrics count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    EventAccepted,
    DuplicateDropped,
    GapEvent,
    ResendRequested,
    AlertRaised,
    /// A journal record that no longer fits (damaged, out of sequence): skipped.
    JournalRecordSkipped,
    /// A pager's command that the hub refused.
    PagerRefused(PagerRefusal),
    /// A board's event refused: not sealed with the key of the board's node.
    Unauthenticated(BoardNo, crate::core::trust::Refusal),
    /// A board's node's clock stepped; the step was taken out of its times.
    NodeTimeStep(BoardNo, crate::core::timebase::Step),
}

/// One thing for the shell to carry out.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Output {
    /// Append to the journal now, at this position; [`super::Hub::handle_durable`] once
    /// flushed.
    Write(Position, Write),
    /// A message to a board's node, and its frame, sealed with the node's key.
    Downlink(BoardNo, DownlinkBody, Vec<u8>),
    /// A durable alert change: to the pagers of its zone and the supervision pages.
    AlertChanged(Box<AlertChange>),
    /// A zone's open alerts at `at`, for the pagers' retained list at `topic` (written as
    /// `view::pager` writes it, and signed with [`super::Hub::signed`], by the shell): how
    /// many are open, and the most urgent of them in order.
    OpenList {
        topic: String,
        zone: String,
        at: HubMs,
        open: usize,
        alerts: Vec<Alert>,
    },
    /// The live feed's move after the broadcast delay, retained at `topic`.
    LiveMove {
        topic: String,
        message: LiveMove,
    },
    /// The answer to a request, once what it changed is durable.
    Reply(RequestId, Reply),
    /// The node keys of these boards changed (a node enrolled, moved or revoked): whatever
    /// lets nodes in by their keys (the embedded broker's logins) follows them. Only these:
    /// a hall of thousands is enrolled one node at a time.
    NodeKeys(Vec<BoardNo>),
    Count(Count),
}
