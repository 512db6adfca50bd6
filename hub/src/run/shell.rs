//! The shell's loop: it owns the core and the edges, feeds the core what arrives (messages,
//! the API's queries, the journal's durable points, the cluster's news, the time), and after
//! each turn carries out what the core asked, in order: journal writes, downlinks,
//! publications, answers. It decides nothing. Every `impl Shell` is here; the work is its
//! members': [`Intake`], [`Requests`], the pages, the phones, the cluster's role.

use std::sync::Arc;
use std::time::{Duration, Instant};

use link::LinkEvent;
use protocol::seal::NodeKey;
use protocol::topic;
use tokio::sync::mpsc;

use super::admit::Admission;
use super::clock::HubClock;
use super::cluster::{self, ClusterRole};
use super::cluster_news::Turn;
use super::intake::Intake;
use super::journal::{self, JournalLink};
use super::requests::{Requests, Waiting};
use super::restore::restored_hub;
use super::{feed, live, pairings, phones};
use super::{ServeConfig, BATCH, PAGES_EVERY, PAIRINGS_EVERY, REPUBLISH_EVERY};
use crate::core::hub::{Hub, HubConfig, Output, Reply, RequestId};
use crate::core::phone::PhoneCredentials;
use crate::core::rounds::StartError;
use crate::core::standings::Tiebreak;
use crate::edge::cluster::role::ClusterNews;
use crate::edge::http::access::Access;
use crate::edge::http::api::{Effect, Query};
use crate::edge::journal::flusher::Flushed;
use crate::edge::mqtt::client::{HubLink, Incoming};
use crate::metrics::Metrics;
use crate::pairings::{self as tournament, Trfs};
use crate::view::feed::{section_games, FeedCache, FeedSource};
use crate::view::pager;
use crate::view::public_rounds;
use crate::view::tiles::Audience;

/// What the loop owns: the core and the edges it carries out outputs on.
pub(super) struct Shell {
    pub(super) hub: Hub,
    /// What the core is built from again when the journal recovers.
    pub(super) hub_config: HubConfig,
    pub(super) journal: JournalLink,
    pub(super) link: HubLink,
    pub(super) metrics: Arc<Metrics>,
    pub(super) clock: HubClock,
    /// The API's requests waiting for the core's answer.
    pub(super) requests: Requests,
    /// Messages off the wire, and the core's counts.
    pub(super) intake: Intake,
    /// The supervision pages.
    pub(super) live: live::LivePages,
    /// The arbiters' phones' streams.
    pub(super) phones: phones::Phones,
    /// The LiveChess folder and the lichess pusher.
    pub(super) follower: feed::Follower,
    /// The feed's rendered games, for the API and the follower.
    pub(super) feed_cache: FeedCache,
    /// The pagers' open lists, each listed alert's entry kept until it changes.
    pub(super) open_lists: pager::OpenLists,
    /// The TRFs the results go back into.
    pub(super) trfs: Trfs,
    standings: crate::core::standings::Settings,
    /// Whether the journal works, as last told to the pagers (`None`: not yet told).
    pub(super) told_journal_works: Option<bool>,
    /// The pairing files, followed for the next round's pairings.
    pub(super) pairing_files: Option<pairings::PairingFiles>,
    /// Who the embedded broker lets in, as the keys and the roster have them.
    pub(super) admission: Admission,
    /// Who the page and the API let in: the arbiters' logins follow the roster.
    pub(super) access: crate::edge::http::access::Access,
    /// On a cluster: the role it gives this hub (`None`: the hall's one hub).
    pub(super) cluster: Option<ClusterRole>,
}

/// What `serve` started, for the shell to own.
pub(super) struct Parts {
    pub(super) hub: Hub,
    pub(super) journal: JournalLink,
    pub(super) link: HubLink,
    pub(super) metrics: Arc<Metrics>,
    pub(super) clock: HubClock,
    pub(super) admission: Admission,
    pub(super) access: Access,
    pub(super) cluster: Option<ClusterRole>,
}

impl Shell {
    pub(super) fn new(config: ServeConfig, parts: Parts) -> Shell {
        let intake = Intake::new(&config.hub.event, parts.metrics.clone());
        Shell {
            hub: parts.hub,
            hub_config: config.hub,
            journal: parts.journal,
            link: parts.link,
            metrics: parts.metrics,
            clock: parts.clock,
            requests: Requests::default(),
            intake,
            live: live::LivePages::default(),
            phones: phones::Phones::default(),
            follower: feed::Follower::new(config.outlets),
            feed_cache: FeedCache::default(),
            open_lists: pager::OpenLists::default(),
            trfs: config.trfs,
            standings: config.standings,
            told_journal_works: None,
            admission: parts.admission,
            access: parts.access,
            pairing_files: config.config_path.map(pairings::PairingFiles::new),
            cluster: parts.cluster,
        }
    }

    /// The loop: what arrives goes to the core, and after each turn what the core asked is
    /// carried out, until `shutdown` resolves or the journal cannot go on.
    pub(super) async fn run(
        mut self,
        mut incoming: Incoming,
        mut durable: mpsc::UnboundedReceiver<Flushed>,
        mut queries: mpsc::Receiver<Query>,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<()> {
        // What the restore asked for: alerts raised again, every zone's open list (signed
        // again at the hub's time now, newer than anything a pager holds from before).
        let now = self.clock.now();
        self.hub.republish_open_lists(now);
        self.carry_out();
        self.publish_status();
        self.link.flush();
        let mut retry = tokio::time::interval(journal::RETRY);
        let mut pairings_changed = tokio::time::interval(PAIRINGS_EVERY);
        let mut republish = tokio::time::interval(REPUBLISH_EVERY);
        let mut pages = tokio::time::interval(PAGES_EVERY);
        pages.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        let result = loop {
            let timeout = self.sleep_until_due();
            tokio::select! {
                Some(event) = incoming.recv() => {
                    self.on_link_event(event);
                    // What else the broker handed over meanwhile, before the outputs are
                    // carried out once for all of it: under load one wake-up takes a batch.
                    for _ in 1..BATCH {
                        match incoming.try_recv() {
                            Some(event) => self.on_link_event(event),
                            None => break,
                        }
                    }
                }
                Some(flushed) = durable.recv() => self.on_flushed(flushed),
                () = timeout, if self.journal.takes_nothing().is_none() => {
                    let now = self.clock.now();
                    self.hub.handle_timeout(now);
                }
                _ = retry.tick(), if self.journal.failure().is_some() => {
                    if self.journal.reopen() {
                        if let Err(e) = self.rebuild() {
                            break Err(e);
                        }
                    }
                }
                _ = pages.tick() => {
                    if let Err(e) = self.keep_warm() {
                        break Err(e);
                    }
                    self.present();
                }
                Some(news) = cluster::next_news(&mut self.cluster) => {
                    match self.on_news(news) {
                        Ok(Some(session)) => incoming = session,
                        Ok(None) => {}
                        Err(e) => break Err(e),
                    }
                }
                _ = republish.tick() => {
                    // What the pagers hold, signed afresh: the open lists and the status.
                    let now = self.clock.now();
                    self.hub.republish_open_lists(now);
                    self.told_journal_works = None;
                }
                _ = pairings_changed.tick() => self.follow_pairings(),
                done = pairings::next_read(&mut self.pairing_files) => self.on_pairings_read(done),
                Some(query) = queries.recv() => self.answer(query),
                () = &mut shutdown => break Ok(()),
            }
            self.carry_out();
            if let Some(f) = self.journal.failure() {
                if self.journal.is_clustered() {
                    break Err(anyhow::anyhow!(
                        "this hub's own journal failed ({}): it stops, and comes back as a standby",
                        f.reason
                    ));
                }
            }
            self.publish_status();
            self.link.flush();
        };
        self.journal.close()?;
        match &result {
            Ok(()) => tracing::info!("hub stopped: its journal flushed and closed"),
            Err(e) => {
                tracing::error!(error = %e, "hub stopped on an error, its journal flushed and closed")
            }
        }
        result
    }

    /// The flusher's report: what is durable goes to the core; a failure stops intake.
    fn on_flushed(&mut self, flushed: Flushed) {
        match flushed {
            Flushed::Durable { generation, up_to } if self.journal.is_current(generation) => {
                let now = self.clock.now();
                self.hub.handle_durable(now, up_to);
            }
            Flushed::Failed { generation, reason } if self.journal.is_current(generation) => {
                self.journal.fail(reason);
            }
            // A cluster's hub whose own disk fails stops: what it made durable is in the
            // stream, and it comes back (restarted) as a standby that catches up.
            Flushed::Failed { reason, .. } if self.journal.is_clustered() => {
                self.journal.fail(reason);
            }
            // An earlier opening's: its core is gone.
            Flushed::Durable { .. } | Flushed::Failed { .. } => {}
        }
    }

    /// Sleeps until the core's next timeout (a long while when it has none).
    pub(super) fn sleep_until_due(&mut self) -> tokio::time::Sleep {
        let now = self.clock.now();
        let wait = self
            .hub
            .poll_timeout()
            .map_or(Duration::from_secs(3600), |due| {
                Duration::from_millis(due.since(now))
            });
        tokio::time::sleep(wait)
    }

    /// Tells the pagers (retained, signed) whether the journal works, when that changed: while
    /// it fails nothing is acknowledged and no alert goes out, and the arbiters must know.
    pub(super) fn publish_status(&mut self) {
        let refusal = self.journal.takes_nothing();
        let works = refusal.is_none();
        if self.told_journal_works == Some(works) {
            return;
        }
        let status = match refusal {
            None => serde_json::json!({"journal": "ok"}),
            Some(reason) => serde_json::json!({"journal": "failing", "reason": reason}),
        };
        let payload = serde_json::to_vec(&status).expect("a status serializes");
        let topic = topic::hub_status(self.hub.event());
        let payload = self.hub.signed(&topic, self.clock.now(), payload);
        self.link.publish_json(topic, payload, true);
        self.told_journal_works = Some(works);
    }

    /// Carries out what the core asked, in order. Nothing here fails: a journal that cannot
    /// write says so through [`JournalLink::failure`](super::journal::JournalLink::failure),
    /// which the loop looks at after every turn.
    pub(super) fn carry_out(&mut self) {
        while let Some(output) = self.hub.poll_output() {
            match output {
                Output::Write(at, write) => self.journal.write(at, write),
                Output::NodeKeys(boards) => self.admission.boards(&self.hub, boards),
                Output::Downlink(board, body, frame) => self.link.send(board, body, frame),
                Output::AlertChanged(change) => {
                    let topic = topic::alerts(self.hub.event(), &change.alert.zone);
                    let now = self.clock.now();
                    let payload = self.hub.signed(&topic, now, pager::change_message(&change));
                    self.link.publish_json(topic, payload, false);
                    self.metrics.alert_change_published();
                    self.live.alert_changed(&change.alert);
                    self.phones.alert_changed(&change);
                }
                Output::OpenList {
                    topic,
                    zone,
                    at,
                    open,
                    alerts,
                } => {
                    let list = self.open_lists.write(&zone, at.0, open, &alerts);
                    let payload = self.hub.signed(&topic, at, list);
                    self.link.publish_json(topic, payload, true);
                }
                Output::LiveMove { topic, message } => match serde_json::to_vec(&message) {
                    Ok(payload) => self.link.publish_move(topic, payload),
                    Err(e) => tracing::error!(error = %e, "a live move not written"),
                },
                Output::Reply(request, reply) => self.reply(request, reply),
                Output::Count(count) => self.intake.count(self.hub.event(), count),
            }
        }
    }

    /// The journal works again: the core is built anew from what is durable, as at a start.
    /// What it had taken since the last flush is gone from it; the nodes resend it, since
    /// none of it was acknowledged, and the API's waiting requests get no answer (503).
    pub(super) fn rebuild(&mut self) -> anyhow::Result<()> {
        let journal = self
            .journal
            .journal()
            .expect("the journal was just reopened");
        let (hub, restored) =
            restored_hub(&self.hub_config, journal, &self.metrics, &mut self.clock)?;
        self.hub = hub;
        // The pagers' list entries were kept by the alerts' steps, and steps the journal
        // lost are numbered again: none is kept across a rebuild.
        self.open_lists = pager::OpenLists::default();
        // The feed's games were kept by their moves, results and clock checks as the old core
        // had them, some of which the journal lost: rendered again from the rebuilt core.
        self.feed_cache = FeedCache::default();
        self.requests.drop_all();
        self.admission.nodes(&self.hub);
        self.admission.arbiters(&self.access, &self.hub);
        // The lists the restore published are signed at the journal's last time, older than
        // what the pagers were told before: signed again now, so they are the latest.
        self.hub.republish_open_lists(self.clock.now());
        tracing::warn!(
            records = restored.records,
            boards = restored.boards,
            "the hall rebuilt from the journal"
        );
        self.carry_out();
        Ok(())
    }

    fn reply(&mut self, request: RequestId, reply: Reply) {
        let (admission, access, hub) = (&mut self.admission, &self.access, &self.hub);
        self.requests
            .reply(request, reply, || admission.arbiters(access, hub));
    }

    /// A read of the pairing files ended: the pairings as they give them now (the hub keeps
    /// what it had if they cannot be read), then the round starts that waited for it.
    fn on_pairings_read(&mut self, done: pairings::Done) {
        let now = self.clock.now();
        match &done.tournament {
            Ok(tournament) => {
                self.hub_config.rounds = tournament.rounds.clone();
                self.hub.set_rounds(now, tournament.rounds.clone());
                self.trfs = tournament.trfs.clone();
                // The players' names are in every rendered game.
                self.feed_cache = FeedCache::default();
                tracing::info!("pairings read again");
            }
            Err(why) => {
                tracing::warn!(error = %why, "the pairing files cannot be read; the pairings stay as they were");
            }
        }
        for (start, reply) in done.starts {
            match &done.tournament {
                Ok(_) => {
                    let request = self.requests.request(Waiting::Rounds(reply));
                    self.hub.handle_round_start(now, request, start);
                }
                Err(why) => drop(reply.send(Err(StartError::Pairings(why.clone())))),
            }
        }
        if let Some(files) = self.pairing_files.as_mut().filter(|f| f.has_waiting()) {
            files.begin();
        }
    }

    /// The pairing files changed: read again, off the loop.
    pub(super) fn follow_pairings(&mut self) {
        if let Some(files) = self.pairing_files.as_mut().filter(|f| f.changed()) {
            files.begin();
        }
    }

    /// The pages and the broadcast's outlets get what changed. The outlets are the active
    /// hub's alone: a standby pushing too would send lichess two requests at once and the
    /// FTP server two uploads; it hands them every round when it takes over.
    pub(super) fn present(&mut self) {
        let now = self.clock.now();
        if !self.journal.is_standby() {
            self.follower.follow(&self.hub, &mut self.feed_cache, now);
        }
        self.live.publish(&self.hub, &self.metrics, now);
    }

    /// One message off the wire. Bad input is counted and logged, never fatal.
    fn on_link_event(&mut self, event: LinkEvent) {
        self.link.on_reach(&event);
        match event {
            // Nothing is taken that cannot be made durable; the nodes resend it later.
            LinkEvent::Message { .. } if self.journal.takes_nothing().is_some() => {}
            LinkEvent::Message { topic, payload } => {
                let now = self.clock.now();
                self.intake.message(&mut self.hub, now, &topic, &payload);
            }
            LinkEvent::Connected => {
                tracing::info!("connected to the broker, subscribed");
                if self.journal.takes_nothing().is_none() {
                    let now = self.clock.now();
                    self.hub.handle_session_up(now);
                }
            }
            LinkEvent::Disconnected => tracing::warn!("lost the broker; reconnecting"),
            // The link warned (at a falling rate); `/healthz` says it after a moment.
            LinkEvent::Unreachable { .. } => {}
        }
    }

    /// The cluster's news, as the turn it gives this hub: the MQTT session to use from now
    /// on, if it changed.
    fn on_news(&mut self, news: ClusterNews) -> anyhow::Result<Option<Incoming>> {
        let Some(cluster) = &mut self.cluster else {
            return Ok(None);
        };
        match cluster.on_news(news)? {
            Turn::Nothing => Ok(None),
            Turn::StrangersRecords(seqs) => {
                let now = self.clock.now();
                self.hub.handle_strangers_records(now, &seqs);
                Ok(None)
            }
            Turn::TakeOver {
                epoch,
                link,
                incoming,
            } => {
                self.journal.activate();
                // The core as the whole stream has it, as at a start.
                self.rebuild()?;
                self.link = link;
                self.told_journal_works = None;
                tracing::warn!(epoch, "active: this hub serves the hall");
                Ok(Some(incoming))
            }
            Turn::StandBy(reason) => {
                let stepped_down = !self.journal.is_standby();
                self.journal.stand_by(reason);
                // The requests waiting for a write get no answer (503): it was never made.
                self.requests.drop_all();
                let (link, incoming) = HubLink::detached(self.hub.event(), self.metrics.clone());
                self.link = link;
                if stepped_down {
                    tracing::error!("stepped down: this hub is a standby now");
                }
                Ok(Some(incoming))
            }
        }
    }

    /// A standby keeps its core warm: rebuilt from its journal when the stream brought
    /// more (as its cluster role paces it); its door learns where the active hub is.
    fn keep_warm(&mut self) -> anyhow::Result<()> {
        // Not before the shell stood by on the cluster's news (the role may be ahead of it).
        if !self.journal.is_standby() {
            return Ok(());
        }
        let Some(warm) = self.cluster.as_mut().and_then(ClusterRole::warm_tick) else {
            return Ok(());
        };
        self.journal.stand_by(warm.reason);
        if warm.rebuild {
            let started = Instant::now();
            self.rebuild()?;
            if let Some(cluster) = &mut self.cluster {
                cluster.warmed(started);
            }
        }
        Ok(())
    }

    /// The API's queries: what the core knows, answered at once; what it must change, handed
    /// to the core, its answer waiting until the change is durable.
    fn answer(&mut self, query: Query) {
        let now = self.clock.now();
        if let Some(reason) = self.journal.takes_nothing() {
            // A change cannot be made durable: its answer is dropped (503 to the client).
            if query.effect() == Effect::Changes {
                tracing::warn!(%reason, "a change refused: the journal takes nothing");
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
                None => match self.journal.takes_nothing() {
                    Some(standby) => Err(standby.to_owned()),
                    None => self.link.broker_trouble().map_or(Ok(()), Err),
                },
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
                let request = self.requests.request(Waiting::Decision(reply));
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
            Query::Standings(round, section, audience, reply) => {
                let ranking = ranking(&self.trfs, &self.standings, section.as_deref());
                let table = crate::view::standings::standings(
                    hub,
                    now,
                    &ranking,
                    round,
                    section.as_deref(),
                    audience,
                );
                drop(reply.send(table));
            }
            Query::TeamStandings(round, section, audience, reply) => {
                let ranking = ranking(&self.trfs, &self.standings, section.as_deref());
                // Only a team event's file is read for its teams, and only when asked.
                let event = self
                    .trfs
                    .get(&section.clone())
                    .and_then(tournament::team_records::team_event);
                let table = event.and_then(|event| {
                    crate::view::standings::team_standings(
                        hub,
                        now,
                        &ranking,
                        &event,
                        round,
                        section.as_deref(),
                        audience,
                    )
                });
                drop(reply.send(table));
            }
            Query::Byes(round, section, reply) => {
                let byes = hub.rounds().byes(round).iter();
                let byes = byes.filter(|b| section.is_none() || b.section == section);
                drop(reply.send(byes.cloned().collect()));
            }
            Query::Broadcast(round, board, (section, boards), reply) => {
                let source = FeedSource::of(hub);
                let which = (section.as_deref(), boards.as_ref());
                let games = section_games(&source, now, round, board, which, &mut self.feed_cache);
                drop(reply.send(games));
            }
            Query::Rounds(audience, reply) => drop(reply.send(match audience {
                Audience::Arbiters => hub.round_states(),
                Audience::Spectators => public_rounds::round_states(hub, now),
            })),
            Query::StartRound(start, reply) => match &mut self.pairing_files {
                // The pairing program exported the round's pairings just before, perhaps.
                Some(files) => files.wait_for_read((start, reply)),
                None => {
                    let request = self.requests.request(Waiting::Rounds(reply));
                    self.hub.handle_round_start(now, request, start);
                }
            },
            Query::UndoStart(undo, reply) => {
                let request = self.requests.request(Waiting::Rounds(reply));
                self.hub.handle_start_undo(now, request, undo);
            }
            Query::Nodes(reply) => drop(reply.send(hub.nodes_report(now))),
            Query::Outlets(reply) => drop(reply.send(self.follower.statuses())),
            Query::Bind(hardware, board, reply) => {
                let request = self.requests.request(Waiting::Nodes(reply));
                self.hub.handle_binding(now, request, &hardware, board);
            }
            Query::Enrol(hardware, board, reply) => {
                let request = self.requests.request(Waiting::Enrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                self.hub
                    .handle_enrolment(now, request, &hardware, board, fresh);
            }
            Query::Revoke(hardware, reply) => {
                let request = self.requests.request(Waiting::Nodes(reply));
                self.hub.handle_revocation(now, request, &hardware);
            }
            Query::EnrolArbiter(arbiter, reply) => {
                let request = self.requests.request(Waiting::ArbiterEnrolled(reply));
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
                let request = self.requests.request(Waiting::Arbiters(reply));
                self.hub.handle_links_renewal(now, request, &name);
            }
            Query::RevokeArbiter(name, reply) => {
                let request = self.requests.request(Waiting::Arbiters(reply));
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
                let file = results_file(&self.trfs, &self.standings, hub, now, section.as_deref());
                drop(reply.send(file));
            }
            Query::AlertCommand(id, command, held_to, reply) => {
                if let Some(refusal) = held_to.and_then(|name| hub.alert_out_of_zone(&name, id)) {
                    drop(reply.send(Err(refusal)));
                    return;
                }
                let request = self.requests.request(Waiting::Alert(reply));
                self.hub
                    .handle_alert_command(now, Some(request), id, command);
            }
            Query::Live(audience, reply) => {
                let start = self.live.start(hub, &self.metrics, audience, now);
                drop(reply.send(start));
            }
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
                drop(reply.send(self.phones.feed(hub, &arbiter, after)));
            }
            Query::PhoneCommand(arbiter, id, act, mac, reply) => {
                let request = self.requests.request(Waiting::Alert(reply));
                self.hub
                    .handle_phone_command(now, request, &arbiter, id, act, &mac);
            }
            Query::Cluster(reply) => drop(reply.send(self.cluster.as_ref().map(ClusterRole::view))),
            Query::SpectatorBoard(board, reply) => {
                drop(reply.send(live::spectator_board(hub, board, now)));
            }
        }
    }
}

/// How `section` ranks: the event's settings and what its pairing file says.
fn ranking<'a>(
    trfs: &'a tournament::Trfs,
    settings: &'a crate::core::standings::Settings,
    section: Option<&str>,
) -> crate::view::standings::Ranking<'a> {
    let (scoring, file_list) = tournament::ranking_of(trfs, section);
    crate::view::standings::Ranking {
        settings,
        scoring,
        file_list,
    }
}

/// `GET /api/results.trf`: `section`'s file with the hub's results, its players placed as
/// the standings after the last complete round place them.
fn results_file(
    trfs: &tournament::Trfs,
    settings: &crate::core::standings::Settings,
    hub: &crate::core::hub::Hub,
    now: crate::core::time::HubMs,
    section: Option<&str>,
) -> Option<String> {
    let section = tournament::file_section(trfs, section);
    let ranking = ranking(trfs, settings, section);
    let table = crate::view::standings::after_last_complete_round(hub, now, &ranking, section);
    // The list is recorded where it is not the file's own already.
    let own_list = settings.tiebreaks.is_none() && ranking.file_list.is_some();
    let placings = table.map(|table| tournament::Placings {
        places: table.rows.iter().map(|r| (r.start_rank, r.rank)).collect(),
        tiebreaks: (!own_list).then(|| {
            let trf_spelling = |code: &String| match code.parse::<Tiebreak>() {
                Ok(tiebreak) => tiebreak.trf_spelling(),
                Err(_) => code.clone(),
            };
            table.tiebreaks.iter().map(trf_spelling).collect()
        }),
    });
    tournament::results_trf(trfs, hub, section, placings.as_ref())
}
