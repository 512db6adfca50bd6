//! The shell's answers about the hub itself: its health, its role, its outlets, and a
//! supervision page's start.

use super::Shell;
use crate::core::time::HubMs;
use crate::edge::http::api::HallRead;
use crate::run::cluster::ClusterRole;

impl HallRead {
    pub(super) fn answer(self, shell: &mut Shell, now: HubMs) {
        match self {
            HallRead::Health { reply } => drop(reply.send(shell.health())),
            HallRead::Cluster { reply } => {
                drop(reply.send(shell.cluster.as_ref().map(ClusterRole::view)))
            }
            HallRead::Outlets { reply } => drop(reply.send(shell.follower.statuses())),
            HallRead::Live { audience, reply } => {
                let start = shell.live.start(&shell.hub, &shell.metrics, audience, now);
                drop(reply.send(start));
            }
        }
    }
}

impl Shell {
    /// Whether the hub can make events durable; the reason when not: the journal failed,
    /// this is a cluster's standby, or the broker is out of reach.
    fn health(&self) -> Result<(), String> {
        match self.journal.failure() {
            None => match self.journal.takes_nothing() {
                Some(standby) => Err(standby.to_owned()),
                None => self.link.broker_trouble().map_or(Ok(()), Err),
            },
            Some(f) => Err(format!(
                "the journal cannot write since {} s ago: {}",
                f.since.elapsed().as_secs(),
                f.reason
            )),
        }
    }
}
