//! The shell's loop: it owns the core and the edges, feeds the core what arrives (messages,
//! the API's queries, the journal's durable points, the cluster's news, the time), and after
//! each turn carries out what the core asked, in order: journal writes, downlinks,
//! publications, answers. It decides nothing. Every `impl Shell` is here; the work is its
//! members': [`Intake`], [`Requests`], the pages, the phones, the cluster's role.

mod alerts;
mod arbiters;
mod boards;
mod hall;
mod nodes;
mod rounds;
mod standings;

use std::sync::Arc;
use std::time::{Duration, Instant};

use link::LinkEvent;
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
use crate::core::rounds::StartError;
use crate::edge::cluster::role::ClusterNews;
use crate::edge::http::access::Access;
use crate::edge::http::api::{Change, Query, Read};
use crate::edge::journal::flusher::Flushed;
use crate::edge::mqtt::client::{HubLink, Incoming};
use crate::metrics::Metrics;
use crate::pairings::Trfs;
use crate::view::feed::FeedCache;
use crate::view::pager;

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
        match query {
            Query::Read(read) => match read {
                Read::Boards(read) => read.answer(self, now),
                Read::Rounds(read) => read.answer(self, now),
                Read::Standings(read) => read.answer(self, now),
                Read::Nodes(read) => read.answer(self, now),
                Read::Arbiters(read) => read.answer(self),
                Read::Alerts(read) => read.answer(self),
                Read::Hall(read) => read.answer(self, now),
            },
            Query::Change(change) => {
                if let Some(reason) = self.journal.takes_nothing() {
                    // A change cannot be made durable: its answer is dropped (503 to the
                    // client).
                    tracing::warn!(%reason, "a change refused: the journal takes nothing");
                    return;
                }
                match change {
                    Change::Boards(change) => change.apply(self, now),
                    Change::Rounds(change) => change.apply(self, now),
                    Change::Nodes(change) => change.apply(self, now),
                    Change::Arbiters(change) => change.apply(self, now),
                    Change::Alerts(change) => change.apply(self, now),
                }
            }
        }
    }
}
