//! Per-board sequencing of a node's events.
//!
//! A node numbers its events 1, 2, 3, … and resends until the hub acknowledges them, so the
//! hub sees duplicates (after a reconnect) and gaps (after the broker lost messages, or the
//! hub restarted before a flush). Events are applied strictly in sequence order.

use protocol::Seq;

use super::time::HubMs;

/// How long the hub waits before asking the same node again to resend from the same point.
/// A node that streams a backlog after a gap would otherwise get one request per message.
pub const RESEND_RETRY_MS: u64 = 1_000;

/// What to do with an event off the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The next event in sequence: journal it, then apply it.
    Accept,
    /// Already accepted. `ack` is the highest sequence number already durable, to re-send in
    /// case the node missed the acknowledgement.
    Duplicate { ack: Option<Seq> },
    /// An event is missing before this one. `resend_from` is set when the node should be
    /// asked to resend (not again if it was asked within [`RESEND_RETRY_MS`]).
    Gap { resend_from: Option<Seq> },
}

/// The sequencing state of one board.
#[derive(Debug, Clone, Default)]
pub struct Intake {
    /// The last accepted (journaled) sequence number.
    accepted: Option<Seq>,
    /// The last sequence number known to be flushed to disk. Live only: after a replay
    /// everything replayed is durable.
    durable: Option<Seq>,
    /// The last resend request: from where, and when.
    resend_asked: Option<(Seq, HubMs)>,
}

impl Intake {
    /// A board whose events up to `accepted` are journaled and durable (a restart that
    /// resumes it where a round started, without reading them again).
    pub fn resumed(accepted: Seq) -> Intake {
        let accepted = (accepted.0 > 0).then_some(accepted);
        Intake {
            accepted,
            durable: accepted,
            resend_asked: None,
        }
    }

    pub fn expected(&self) -> Seq {
        self.accepted.map_or(Seq::FIRST, Seq::next)
    }

    pub fn accepted(&self) -> Option<Seq> {
        self.accepted
    }

    /// Classifies `seq`; notes a resend request when one is due.
    pub fn admit(&mut self, now: HubMs, seq: Seq) -> Admission {
        let expected = self.expected();
        if seq == expected {
            Admission::Accept
        } else if seq < expected {
            Admission::Duplicate { ack: self.durable }
        } else {
            let due = match self.resend_asked {
                Some((from, at)) => from != expected || now.since(at) >= RESEND_RETRY_MS,
                None => true,
            };
            if due {
                self.resend_asked = Some((expected, now));
            }
            Admission::Gap {
                resend_from: due.then_some(expected),
            }
        }
    }

    /// Records an accepted event. Returns `false` (and changes nothing) if it is out of
    /// sequence, which only a damaged journal can cause.
    pub fn accept(&mut self, seq: Seq) -> bool {
        if seq != self.expected() {
            return false;
        }
        self.accepted = Some(seq);
        self.resend_asked = None;
        true
    }

    /// The journal flushed everything up to `seq`. Returns the new acknowledgement point if
    /// it moved forward.
    pub fn flushed(&mut self, seq: Seq) -> Option<Seq> {
        if self.durable.is_some_and(|d| d >= seq) {
            return None;
        }
        self.durable = Some(seq);
        Some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_events_are_accepted_and_repeats_are_duplicates() {
        let mut intake = Intake::default();
        assert_eq!(intake.admit(HubMs(0), Seq(1)), Admission::Accept);
        assert!(intake.accept(Seq(1)));
        assert_eq!(
            intake.admit(HubMs(0), Seq(1)),
            Admission::Duplicate { ack: None }
        );
        assert_eq!(intake.flushed(Seq(1)), Some(Seq(1)));
        assert_eq!(
            intake.admit(HubMs(0), Seq(1)),
            Admission::Duplicate { ack: Some(Seq(1)) }
        );
        assert_eq!(
            intake.flushed(Seq(1)),
            None,
            "no second ack for the same point"
        );
    }

    #[test]
    fn a_gap_asks_for_a_resend_once_per_retry_interval() {
        let mut intake = Intake::default();
        let gap = |from| Admission::Gap { resend_from: from };
        assert_eq!(intake.admit(HubMs(0), Seq(3)), gap(Some(Seq(1))));
        assert_eq!(intake.admit(HubMs(10), Seq(4)), gap(None));
        assert_eq!(
            intake.admit(HubMs(RESEND_RETRY_MS), Seq(5)),
            gap(Some(Seq(1)))
        );
        assert!(intake.accept(Seq(1)));
        assert_eq!(
            intake.admit(HubMs(RESEND_RETRY_MS + 1), Seq(5)),
            gap(Some(Seq(2))),
            "progress resets the throttle"
        );
    }

    #[test]
    fn out_of_sequence_accepts_are_refused() {
        let mut intake = Intake::default();
        assert!(!intake.accept(Seq(2)));
        assert_eq!(intake.accepted(), None);
    }
}
