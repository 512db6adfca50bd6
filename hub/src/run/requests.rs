//! The API's requests waiting for the core: each change is handed to the core with a
//! number, and its answer goes back to the HTTP handler once the core replies (after the
//! change is durable). A dropped receiver means the HTTP client went away.

use std::collections::HashMap;

use tokio::sync::oneshot;

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::Alert;
use crate::core::arbiter::{AuditEntry, DecisionError};
use crate::core::hub::{ArbiterEnrolment, Enrolled, EnrolmentRefusal, Reply, RequestId};
use crate::core::pairings::RoundState;
use crate::core::rounds::StartError;
use crate::core::setup::NodesReport;

/// An answer the API waits for.
pub(super) enum Waiting {
    Decision(oneshot::Sender<Result<AuditEntry, DecisionError>>),
    Alert(oneshot::Sender<Result<Alert, AlertError>>),
    Nodes(oneshot::Sender<NodesReport>),
    Enrolled(oneshot::Sender<Enrolled>),
    Rounds(oneshot::Sender<Result<Vec<RoundState>, StartError>>),
    ArbiterEnrolled(oneshot::Sender<Result<ArbiterEnrolment, EnrolmentRefusal>>),
    Arbiters(oneshot::Sender<Vec<String>>),
}

/// The requests the core has not answered yet.
#[derive(Default)]
pub(super) struct Requests {
    waiting: HashMap<RequestId, Waiting>,
    last: u64,
}

impl Requests {
    /// A request to the core whose answer waits: its number.
    pub(super) fn request(&mut self, waiting: Waiting) -> RequestId {
        self.last += 1;
        let request = RequestId(self.last);
        self.waiting.insert(request, waiting);
        request
    }

    /// The core's reply to the request waiting for it; `roster_changed` runs before an
    /// answer about the arbiters goes out, so the broker and the page let them in as they
    /// now are.
    pub(super) fn reply(
        &mut self,
        request: RequestId,
        reply: Reply,
        roster_changed: impl FnOnce(),
    ) {
        match (self.waiting.remove(&request), reply) {
            (Some(Waiting::Decision(tx)), Reply::Decision(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Alert(tx)), Reply::Alert(answer)) => drop(tx.send(answer.map(|a| *a))),
            (Some(Waiting::Nodes(tx)), Reply::Nodes(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Enrolled(tx)), Reply::Enrolled(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Rounds(tx)), Reply::RoundStarted(answer)) => drop(tx.send(answer)),
            (Some(Waiting::ArbiterEnrolled(tx)), Reply::ArbiterEnrolled(answer)) => {
                roster_changed();
                drop(tx.send(answer));
            }
            (Some(Waiting::Arbiters(tx)), Reply::Arbiters(answer)) => {
                roster_changed();
                drop(tx.send(answer));
            }
            (_, reply) => tracing::error!(?request, ?reply, "an answer nobody waits for"),
        }
    }

    /// Every waiting request dropped: the change was never made (the journal rebuilt, the
    /// hub stepped down), and its client gets 503.
    pub(super) fn drop_all(&mut self) {
        self.waiting.clear();
    }
}
