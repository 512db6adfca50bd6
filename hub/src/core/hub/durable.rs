//! What waits for the journal: one queue, in journal order. Nothing leaves the hub before
//! the write that makes it true is flushed: a node's acknowledgement, an alert on a pager,
//! an arbiter's answer.

use std::collections::VecDeque;

use protocol::{BoardNo, Seq};

use super::output::{Enrolled, Position, RequestId};
use crate::core::alerts::AlertChange;
use crate::core::arbiter::AuditEntry;

/// What is done once its write is durable.
#[derive(Debug, Clone, PartialEq)]
pub enum Deferred {
    /// The board's events up to `seq` may be acknowledged.
    Ack(BoardNo, Seq),
    /// An alert change may be published; `reply` waits for it (an acknowledgement).
    Alert(Box<AlertChange>, Option<RequestId>),
    /// An arbiter's decision may be confirmed.
    Decision(RequestId, AuditEntry),
    /// A binding may be confirmed with the nodes' report.
    Binding(RequestId),
    /// An enrolment may be confirmed with the key.
    Enrolment(RequestId, Enrolled),
    /// An arbiter's enrolment may be confirmed with their credentials.
    ArbiterEnrolled(RequestId, Box<super::ArbiterEnrolment>),
    /// An arbiter's revocation may be confirmed with the roster.
    Arbiters(RequestId),
    /// A round's start may be confirmed with the rounds.
    RoundStarted(RequestId),
}

/// Writes not yet durable, with what waits on each.
#[derive(Debug, Default)]
pub struct Pending {
    next: Position,
    waiting: VecDeque<(Position, Deferred)>,
}

impl Pending {
    /// The position of the next write.
    pub fn next_position(&mut self) -> Position {
        self.next = Position(self.next.0 + 1);
        self.next
    }

    /// `deferred` waits for the write at `at`.
    pub fn wait(&mut self, at: Position, deferred: Deferred) {
        self.waiting.push_back((at, deferred));
    }

    /// Everything whose write is durable by `up_to`, in journal order.
    pub fn durable(&mut self, up_to: Position) -> Vec<Deferred> {
        // Counted first, so that a saturated hall's flush of hundreds is one allocation.
        let durable = self.waiting.partition_point(|(at, _)| *at <= up_to);
        self.waiting
            .drain(..durable)
            .map(|(_, deferred)| deferred)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_waits_leaves_in_journal_order_once_durable() {
        let mut pending = Pending::default();
        let a = pending.next_position();
        let b = pending.next_position();
        pending.wait(a, Deferred::Ack(BoardNo(1), Seq(1)));
        pending.wait(b, Deferred::Ack(BoardNo(2), Seq(7)));
        assert!(pending.durable(Position(0)).is_empty());
        assert_eq!(
            pending.durable(a),
            [Deferred::Ack(BoardNo(1), Seq(1))],
            "b is not durable yet"
        );
        assert_eq!(pending.durable(b), [Deferred::Ack(BoardNo(2), Seq(7))]);
        assert!(pending.durable(Position(99)).is_empty());
    }
}
