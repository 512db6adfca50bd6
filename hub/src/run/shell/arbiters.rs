//! The shell's answers about the arbiters, and the chief arbiter's enrolments.

use protocol::seal::NodeKey;

use super::Shell;
use crate::core::phone::PhoneCredentials;
use crate::core::time::HubMs;
use crate::edge::http::api::{ArbiterChange, ArbiterRead};
use crate::run::requests::Waiting;

impl ArbiterRead {
    pub(super) fn answer(self, shell: &mut Shell) {
        let hub = &shell.hub;
        match self {
            ArbiterRead::Names { reply } => {
                drop(reply.send(hub.arbiters().map(|(n, _)| n.to_owned()).collect()))
            }
            ArbiterRead::Login { arbiter, reply } => {
                let login = hub
                    .arbiter_members()
                    .find(|(name, _)| *name == arbiter)
                    .map(|(_, member)| crate::edge::http::login::arbiter_login(member));
                drop(reply.send(login));
            }
            ArbiterRead::PhoneWatch { arbiter, reply } => {
                let watch = hub
                    .phone(&arbiter)
                    .map(|(watch, member)| (watch, PhoneCredentials::of(member)));
                drop(reply.send(watch));
            }
            ArbiterRead::PhoneFeed {
                arbiter,
                after,
                reply,
            } => drop(reply.send(shell.phones.feed(hub, &arbiter, after))),
        }
    }
}

impl ArbiterChange {
    pub(super) fn apply(self, shell: &mut Shell, now: HubMs) {
        match self {
            ArbiterChange::Enrol { request, reply } => {
                let waiting = shell.requests.request(Waiting::ArbiterEnrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                shell.hub.handle_arbiter_enrolment(
                    now,
                    waiting,
                    &request.name,
                    fresh,
                    request.zones,
                    request.language,
                );
            }
            ArbiterChange::Revoke { arbiter, reply } => {
                let request = shell.requests.request(Waiting::Arbiters(reply));
                shell.hub.handle_arbiter_revocation(now, request, &arbiter);
            }
            ArbiterChange::RenewLinks { arbiter, reply } => {
                let request = shell.requests.request(Waiting::Arbiters(reply));
                shell.hub.handle_links_renewal(now, request, &arbiter);
            }
        }
    }
}
