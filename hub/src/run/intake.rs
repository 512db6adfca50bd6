//! Messages off the wire: a board's sealed uplink or an arbiter's pager command, checked
//! against its topic before the core sees it, and the core's counts. Bad input is counted
//! and logged once per source, never fatal.

use std::sync::Arc;

use protocol::{seal, topic, DecodeError};

use super::refusals::RefusalLog;
use crate::core::hub::{Count, Hub, PagerRefusal};
use crate::core::time::HubMs;
use crate::core::timebase::Step;
use crate::core::trust::Refusal;
use crate::metrics::{BadPayload, Metrics};
use crate::view::pager;

/// What the shell takes in, and what it counts of it.
pub(super) struct Intake {
    /// The pagers' commands' topic, made once: every message is compared with it.
    pager_commands: String,
    refusals: RefusalLog,
    metrics: Arc<Metrics>,
}

impl Intake {
    pub(super) fn new(event: &str, metrics: Arc<Metrics>) -> Intake {
        Intake {
            pager_commands: topic::pager_command(event),
            refusals: RefusalLog::default(),
            metrics,
        }
    }

    /// One message off the wire, to the core if it is what its topic says.
    pub(super) fn message(&mut self, hub: &mut Hub, now: HubMs, topic: &str, payload: &[u8]) {
        if topic == self.pager_commands {
            return match pager::parse_command(payload) {
                Ok((id, command, seal)) => hub.handle_pager_command(now, id, command, seal),
                Err(e) => self.refuse(BadPayload::PagerCommand, topic, &e.to_string()),
            };
        }
        let Some(board) = topic::parse_uplink(hub.event(), topic) else {
            return self.refuse(BadPayload::ForeignTopic, topic, "not a board uplink topic");
        };
        let sealed = match seal::open_uplink(payload) {
            Ok(sealed) => sealed,
            Err(e @ DecodeError::UnknownVersion(_)) => {
                return self.refuse(BadPayload::UnknownVersion, topic, &e.to_string());
            }
            Err(e @ DecodeError::OutOfRange(_)) => {
                return self.refuse(BadPayload::OutOfRange, topic, &e.to_string());
            }
            Err(e) => return self.refuse(BadPayload::Undecodable, topic, &e.to_string()),
        };
        if sealed.message.board != board {
            let why = format!("message says board {}", sealed.message.board.0);
            return self.refuse(BadPayload::BoardMismatch, topic, &why);
        }
        hub.handle_sealed_uplink(now, sealed);
    }

    /// What the core counted: to the metrics, and its refusals to the log.
    pub(super) fn count(&mut self, event: &str, count: Count) {
        match count {
            Count::EventAccepted => self.metrics.event_accepted(),
            Count::DuplicateDropped => self.metrics.duplicate_dropped(),
            Count::GapEvent => self.metrics.gap_event(),
            Count::ResendRequested => self.metrics.resend_requested(),
            Count::AlertRaised => self.metrics.alert_raised(),
            Count::JournalRecordSkipped => self.metrics.journal_records_skipped(),
            Count::PagerRefused(why) => {
                let why = match why {
                    PagerRefusal::Malformed => BadPayload::PagerCommand,
                    PagerRefusal::NotSealed => BadPayload::Unauthenticated,
                    PagerRefusal::OutOfZone => BadPayload::OutOfZone,
                };
                let topic = self.pager_commands.clone();
                self.refuse(why, &topic, "refused by the hub");
            }
            Count::Unauthenticated(board, refusal) => {
                let why = match refusal {
                    Refusal::BadTag => "not sealed with the key of the board's node",
                    Refusal::NotEnrolled => {
                        "no enrolled node is bound to the board (hub enrol, POST /api/nodes/enrol)"
                    }
                };
                let source = topic::uplink(event, board);
                self.refuse(BadPayload::Unauthenticated, &source, why);
            }
            Count::NodeTimeStep(board, step) => {
                let why = match step {
                    Step::Ahead(ms) => format!("the node's time ran {ms} ms ahead"),
                    Step::Behind(ms) => format!("the node's time went {ms} ms back"),
                };
                // Counted with the refusals (`bad_payload{why="node_time"}`), but taken.
                let source = topic::uplink(event, board);
                self.metrics.bad_payload(BadPayload::NodeTime);
                if let Some(count) = self.refusals.note(BadPayload::NodeTime, &source) {
                    tracing::warn!(
                        source,
                        detail = why,
                        from_source = count,
                        "message taken, its node's clock step taken out of its time"
                    );
                }
            }
        }
    }

    /// Counts a refusal, and logs it the first time from its source (and the 2nd, 4th, …).
    fn refuse(&mut self, why: BadPayload, source: &str, detail: &str) {
        self.metrics.bad_payload(why);
        if let Some(count) = self.refusals.note(why, source) {
            tracing::warn!(source, ?why, detail, from_source = count, "message refused");
        }
    }
}
