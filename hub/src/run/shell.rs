//! The shell's loop: it owns the core and the edges, feeds the core what arrives, and after
//! each turn carries out what the core asked, in order: journal writes, downlinks,
//! publications, answers. It decides nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use protocol::topic;
use tokio::sync::{mpsc, oneshot};

use super::admit::Admission;
use super::clock::HubClock;
use super::journal::{self, JournalLink};
use super::restore::restored_hub;
use super::{feed, live, pairings, phones, refusals};
use super::{ServeConfig, BATCH, PAGES_EVERY, PAIRINGS_EVERY, REPUBLISH_EVERY};
use crate::core::alerts::desk::AlertError;
use crate::core::alerts::Alert;
use crate::core::arbiter::{AuditEntry, DecisionError};
use crate::core::hub::{
    ArbiterEnrolment, Count, Enrolled, EnrolmentRefusal, Hub, HubConfig, Output, PagerRefusal,
    Reply, RequestId,
};
use crate::core::pairings::RoundState;
use crate::core::rounds::StartError;
use crate::core::setup::NodesReport;
use crate::core::timebase::Step;
use crate::core::trust::Refusal;
use crate::edge::http::access::Access;
use crate::edge::http::api::Query;
use crate::edge::journal::flusher::Flushed;
use crate::edge::mqtt::client::{HubLink, Incoming};
use crate::metrics::{BadPayload, Metrics};
use crate::pairings::Trfs;
use crate::view::feed::FeedCache;
use crate::view::pager;

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
    pub(super) waiting: HashMap<RequestId, Waiting>,
    pub(super) next_request: u64,
    /// The supervision pages.
    pub(super) live: live::LivePages,
    /// The arbiters' phones' streams.
    pub(super) phones: phones::Phones,
    /// The LiveChess folder and the lichess pusher.
    pub(super) follower: feed::Follower,
    /// The feed's rendered games, for the API and the follower.
    pub(super) feed_cache: FeedCache,
    /// The TRFs the results go back into.
    pub(super) trfs: Trfs,
    /// Whether the journal works, as last told to the pagers (`None`: not yet told).
    pub(super) told_journal_works: Option<bool>,
    /// What was refused, logged once per source and reason.
    pub(super) refusals: refusals::RefusalLog,
    /// The pairing files, followed for the next round's pairings.
    pub(super) pairing_files: Option<pairings::PairingFiles>,
    /// Who the embedded broker lets in, as the keys and the roster have them.
    pub(super) admission: Admission,
    /// Who the page and the API let in: the arbiters' logins follow the roster.
    pub(super) access: crate::edge::http::access::Access,
    /// The pagers' commands' topic, made once: every message from the broker is compared
    /// with it.
    pub(super) pager_commands: String,
    /// On a cluster: the role it gives this hub (`None`: the hall's one hub).
    pub(super) cluster: Option<super::cluster::ClusterRole>,
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
    pub(super) cluster: Option<super::cluster::ClusterRole>,
}

impl Shell {
    pub(super) fn new(config: ServeConfig, parts: Parts) -> Shell {
        let pager_commands = topic::pager_command(&config.hub.event);
        Shell {
            hub: parts.hub,
            hub_config: config.hub,
            journal: parts.journal,
            link: parts.link,
            metrics: parts.metrics,
            clock: parts.clock,
            waiting: HashMap::new(),
            next_request: 0,
            live: live::LivePages::default(),
            phones: phones::Phones::default(),
            follower: feed::Follower::new(config.outlets),
            feed_cache: FeedCache::default(),
            trfs: config.trfs,
            told_journal_works: None,
            refusals: refusals::RefusalLog::default(),
            admission: parts.admission,
            access: parts.access,
            pager_commands,
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
                () = timeout, if self.journal.failure().is_none() => {
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
                Some(news) = super::cluster::next_news(&mut self.cluster) => {
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
                Some(query) = queries.recv() => self.answer(query),
                () = &mut shutdown => break Ok(()),
            }
            self.carry_out();
            if let Some(f) = self.journal.failure().filter(|f| !f.standby) {
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
}

impl Shell {
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
        let failure = self.journal.failure();
        let works = failure.is_none();
        if self.told_journal_works == Some(works) {
            return;
        }
        let status = match failure {
            None => serde_json::json!({"journal": "ok"}),
            Some(f) => serde_json::json!({"journal": "failing", "reason": f.reason}),
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
                    alerts,
                } => {
                    let list = pager::open_list(&zone, at.0, alerts.iter().collect());
                    let payload = self.hub.signed(&topic, at, list);
                    self.link.publish_json(topic, payload, true);
                }
                Output::LiveMove { topic, message } => match serde_json::to_vec(&message) {
                    Ok(payload) => self.link.publish_json(topic, payload, true),
                    Err(e) => tracing::error!(error = %e, "a live move not written"),
                },
                Output::Reply(request, reply) => self.reply(request, reply),
                Output::Count(count) => self.count(count),
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
        self.waiting.clear();
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

    pub(super) fn reply(&mut self, request: RequestId, reply: Reply) {
        // A dropped receiver means the HTTP client went away; nothing to do.
        match (self.waiting.remove(&request), reply) {
            (Some(Waiting::Decision(tx)), Reply::Decision(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Alert(tx)), Reply::Alert(answer)) => drop(tx.send(answer.map(|a| *a))),
            (Some(Waiting::Nodes(tx)), Reply::Nodes(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Enrolled(tx)), Reply::Enrolled(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Rounds(tx)), Reply::RoundStarted(answer)) => drop(tx.send(answer)),
            // The roster changed and is durable: the broker and the page let in the
            // arbiters as they now are, before the answer goes out.
            (Some(Waiting::ArbiterEnrolled(tx)), Reply::ArbiterEnrolled(answer)) => {
                self.admission.arbiters(&self.access, &self.hub);
                drop(tx.send(answer));
            }
            (Some(Waiting::Arbiters(tx)), Reply::Arbiters(answer)) => {
                self.admission.arbiters(&self.access, &self.hub);
                drop(tx.send(answer));
            }
            (_, reply) => tracing::error!(?request, ?reply, "an answer nobody waits for"),
        }
    }

    pub(super) fn count(&mut self, count: Count) {
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
                let source = topic::uplink(self.hub.event(), board);
                self.refuse(BadPayload::Unauthenticated, &source, why);
            }
            Count::NodeTimeStep(board, step) => {
                let why = match step {
                    Step::Ahead(ms) => format!("the node's time ran {ms} ms ahead"),
                    Step::Behind(ms) => format!("the node's time went {ms} ms back"),
                };
                // Counted with the refusals (`bad_payload{why="node_time"}`), but taken.
                let source = topic::uplink(self.hub.event(), board);
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

    /// A request to the core whose answer waits: its number.
    pub(super) fn request(&mut self, waiting: Waiting) -> RequestId {
        self.next_request += 1;
        let request = RequestId(self.next_request);
        self.waiting.insert(request, waiting);
        request
    }

    /// The pairings as their files give them now; the hub keeps what it had if they cannot
    /// be read.
    pub(super) fn reload_pairings(&mut self) -> Result<(), crate::config::ConfigError> {
        let Some(files) = &mut self.pairing_files else {
            return Ok(());
        };
        let tournament = files.read()?;
        self.hub_config.rounds = tournament.rounds.clone();
        let now = self.clock.now();
        self.hub.set_rounds(now, tournament.rounds);
        self.trfs = tournament.trfs;
        // The players' names are in every rendered game.
        self.feed_cache = FeedCache::default();
        Ok(())
    }

    /// The pairing files changed: read again.
    pub(super) fn follow_pairings(&mut self) {
        if self.pairing_files.as_ref().is_some_and(|f| f.changed()) {
            match self.reload_pairings() {
                Ok(()) => tracing::info!("pairings read again: their files changed"),
                Err(e) => {
                    tracing::warn!(error = %e, "the pairing files changed but cannot be read; the pairings stay as they were")
                }
            }
        }
    }

    /// The pages, the LiveChess folder and lichess get what changed.
    pub(super) fn present(&mut self) {
        let now = self.clock.now();
        self.follower.follow(&self.hub, &mut self.feed_cache, now);
        self.publish_live(now);
    }
}
