//! The API's queries: what the core knows, answered at once; what it must change, handed
//! to the core, its answer waiting until the change is durable.

use protocol::seal::NodeKey;

use super::shell::{Shell, Waiting};
use crate::core::phone::PhoneCredentials;
use crate::core::rounds::StartError;
use crate::edge::http::api::Query;
use crate::pairings as tournament;
use crate::view::feed::{section_games, FeedSource};
use crate::view::public_rounds;
use crate::view::tiles::Audience;

impl Shell {
    pub(super) fn answer(&mut self, query: Query) {
        let now = self.clock.now();
        if let Some(failure) = self.journal.failure() {
            // A change cannot be made durable: its answer is dropped (503 to the client).
            if let Query::Decide(..)
            | Query::StartRound(..)
            | Query::Bind(..)
            | Query::AlertCommand(..)
            | Query::PhoneCommand(..)
            | Query::Enrol(..)
            | Query::Revoke(..)
            | Query::EnrolArbiter(..)
            | Query::RevokeArbiter(..)
            | Query::RenewLinks(..) = query
            {
                tracing::warn!(reason = %failure.reason, "a change refused: the journal fails");
                return;
            }
        }
        let hub = &mut self.hub;
        // A dropped receiver means the HTTP client went away; nothing to do.
        match query {
            Query::Boards(reply) => drop(reply.send(hub.hall().summaries(now))),
            Query::Board(board, round, reply) => {
                let round = round.unwrap_or_else(|| hub.hall().round_of(board));
                drop(reply.send(hub.board_detail(now, round, board)));
            }
            Query::TimeTrouble(reply) => drop(reply.send(hub.hall().time_trouble(now))),
            Query::ConnectedNodes(reply) => drop(reply.send(hub.hall().connected_nodes(now))),
            Query::Health(reply) => drop(reply.send(match self.journal.failure() {
                None => self.link.broker_trouble().map_or(Ok(()), Err),
                Some(f) if f.standby => Err(f.reason.clone()),
                Some(f) => Err(format!(
                    "the journal cannot write since {} s ago: {}",
                    f.since.elapsed().as_secs(),
                    f.reason
                )),
            })),
            Query::CheckClaim(board, request, reply) => {
                drop(reply.send(hub.hall().check_claim(board, &request)));
            }
            Query::Decide(board, round, action, held_to, reply) => {
                if let Some(refusal) = held_to.and_then(|name| hub.out_of_zone(&name, board)) {
                    drop(reply.send(Err(refusal)));
                    return;
                }
                let request = self.request(Waiting::Decision(reply));
                self.hub.handle_decision(now, request, board, round, action);
            }
            Query::Alerts(reply) => drop(reply.send(hub.desk().alerts().cloned().collect())),
            Query::Pairings(round, section, audience, reply) => {
                let pairings = match audience {
                    Audience::Arbiters => hub.section_pairings(round, section.as_deref()),
                    Audience::Spectators => {
                        public_rounds::pairings(hub, now, round, section.as_deref())
                    }
                };
                drop(reply.send(pairings));
            }
            Query::Byes(round, section, reply) => {
                let byes = hub.rounds().byes(round).iter();
                let byes = byes.filter(|b| section.is_none() || b.section == section);
                drop(reply.send(byes.cloned().collect()));
            }
            Query::Broadcast(round, board, section, reply) => {
                let source = FeedSource::of(hub);
                let section = section.as_deref();
                let games =
                    section_games(&source, now, round, board, section, &mut self.feed_cache);
                drop(reply.send(games));
            }
            Query::Rounds(audience, reply) => drop(reply.send(match audience {
                Audience::Arbiters => hub.round_states(),
                Audience::Spectators => public_rounds::round_states(hub, now),
            })),
            Query::StartRound(start, reply) => {
                // The pairing program exported the round's pairings just before, perhaps.
                if let Err(e) = self.reload_pairings() {
                    return drop(reply.send(Err(StartError::Pairings(e.to_string()))));
                }
                let request = self.request(Waiting::Rounds(reply));
                self.hub.handle_round_start(now, request, start);
            }
            Query::Nodes(reply) => drop(reply.send(hub.nodes_report(now))),
            Query::Bind(hardware, board, reply) => {
                let request = self.request(Waiting::Nodes(reply));
                self.hub.handle_binding(now, request, &hardware, board);
            }
            Query::Enrol(hardware, board, reply) => {
                let request = self.request(Waiting::Enrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                self.hub
                    .handle_enrolment(now, request, &hardware, board, fresh);
            }
            Query::Revoke(hardware, reply) => {
                let request = self.request(Waiting::Nodes(reply));
                self.hub.handle_revocation(now, request, &hardware);
            }
            Query::EnrolArbiter(arbiter, reply) => {
                let request = self.request(Waiting::ArbiterEnrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                self.hub.handle_arbiter_enrolment(
                    now,
                    request,
                    &arbiter.name,
                    fresh,
                    arbiter.zones,
                    arbiter.language,
                );
            }
            Query::RenewLinks(name, reply) => {
                let request = self.request(Waiting::Arbiters(reply));
                self.hub.handle_links_renewal(now, request, &name);
            }
            Query::RevokeArbiter(name, reply) => {
                let request = self.request(Waiting::Arbiters(reply));
                self.hub.handle_arbiter_revocation(now, request, &name);
            }
            Query::Arbiters(reply) => {
                drop(reply.send(hub.arbiters().map(|(n, _)| n.to_owned()).collect()))
            }
            Query::BrokerUsers(reply) => {
                let lines = hub
                    .broker_users()
                    .map(|l| crate::edge::mqtt::broker::passwd_lines(&l));
                drop(reply.send(lines));
            }
            Query::ResultsTrf(section, reply) => {
                let trf = tournament::results_trf(&self.trfs, hub, section.as_deref());
                drop(reply.send(trf));
            }
            Query::AlertCommand(id, command, held_to, reply) => {
                if let Some(refusal) = held_to.and_then(|name| hub.alert_out_of_zone(&name, id)) {
                    drop(reply.send(Err(refusal)));
                    return;
                }
                let request = self.request(Waiting::Alert(reply));
                self.hub
                    .handle_alert_command(now, Some(request), id, command);
            }
            Query::Live(audience, reply) => drop(reply.send(self.live_start(audience))),
            Query::PhoneWatch(arbiter, reply) => {
                let watch = hub
                    .phone(&arbiter)
                    .map(|(watch, member)| (watch, PhoneCredentials::of(member)));
                drop(reply.send(watch));
            }
            Query::ArbiterLogin(arbiter, reply) => {
                let login = hub
                    .arbiter_members()
                    .find(|(name, _)| *name == arbiter)
                    .map(|(_, member)| crate::edge::http::login::arbiter_login(member));
                drop(reply.send(login));
            }
            Query::PhoneFeed(arbiter, after, reply) => {
                drop(reply.send(self.phone_feed(&arbiter, after)));
            }
            Query::PhoneCommand(arbiter, id, act, mac, reply) => {
                let request = self.request(Waiting::Alert(reply));
                self.hub
                    .handle_phone_command(now, request, &arbiter, id, act, &mac);
            }
            Query::Cluster(reply) => drop(reply.send(self.cluster_view())),
            Query::SpectatorBoard(board, reply) => {
                drop(reply.send(self.spectator_board(board, now)));
            }
        }
    }
}
