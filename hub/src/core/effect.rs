//! What the hall's fold makes happen, for what follows it: the node's acknowledgement,
//! what happened in a game and on a clock, a node's time stepping, a skipped record.

use protocol::{BoardNo, Seq};

use super::clock::ClockEvent;
use super::game::GameEvent;
use super::timebase::Step;

/// What the shell must carry out after [`super::hall::Hall::apply`] or
/// [`super::hall::Hall::flushed`].
/// What the shell must carry out after [`Hall::apply`] or [`Hall::flushed`].
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Tell the node that its events up to `up_to` are durable.
    Ack { board: BoardNo, up_to: Seq },
    /// Something happened in a game (for logs now; alerts and the relay later).
    Game { board: BoardNo, event: GameEvent },
    /// Something happened on a board's clock.
    Clock { board: BoardNo, event: ClockEvent },
    /// The board's node's clock stepped; the step was taken out of its times.
    NodeTimeStep { board: BoardNo, step: Step },
    /// A journaled record was out of sequence and was skipped. Only a damaged journal does
    /// this; the shell counts and logs it.
    OutOfSequence { board: BoardNo, seq: Seq },
}
