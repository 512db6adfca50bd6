//! The shell's answers about the board nodes, and the technician's bindings and keys.

use protocol::seal::NodeKey;

use super::Shell;
use crate::core::time::HubMs;
use crate::edge::http::api::{NodeChange, NodeRead};
use crate::run::requests::Waiting;

impl NodeRead {
    pub(super) fn answer(self, shell: &mut Shell, now: HubMs) {
        let hub = &shell.hub;
        match self {
            NodeRead::Report { reply } => drop(reply.send(hub.nodes_report(now))),
            NodeRead::Connected { reply } => drop(reply.send(hub.hall().connected_nodes(now))),
            NodeRead::BrokerUsers { reply } => {
                let lines = hub
                    .broker_users()
                    .map(|l| crate::edge::mqtt::broker::passwd_lines(&l));
                drop(reply.send(lines));
            }
        }
    }
}

impl NodeChange {
    pub(super) fn apply(self, shell: &mut Shell, now: HubMs) {
        match self {
            NodeChange::Bind {
                hardware,
                board,
                reply,
            } => {
                let request = shell.requests.request(Waiting::Nodes(reply));
                shell.hub.handle_binding(now, request, &hardware, board);
            }
            NodeChange::Enrol {
                hardware,
                board,
                reply,
            } => {
                let request = shell.requests.request(Waiting::Enrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                shell
                    .hub
                    .handle_enrolment(now, request, &hardware, board, fresh);
            }
            NodeChange::Revoke { hardware, reply } => {
                let request = shell.requests.request(Waiting::Nodes(reply));
                shell.hub.handle_revocation(now, request, &hardware);
            }
        }
    }
}
