//! The shell: wires the core to the edges and runs the loop that owns the hall. [`alerts`]
//! holds its alert work (journal, pagers, acknowledgements), [`feed`] its broadcast work.
//!
//! ```text
//! MQTT ──uplink──► decode ──► Hall::admit ──Accept──► Journal::append ──► Hall::apply
//!                                  │                        │
//!                                  ├─Duplicate──► Ack (durable point)
//!                                  └─Gap────────► ResendFrom
//!                                                 Flusher ──flush()──► Hall::flushed ──► Ack
//! ```
//! Startup is the same fold: every journaled record goes through `Hall::apply` again.

mod alerts;
mod feed;
mod live;

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use board_node::link::{BrokerAddr, LinkEvent};
use protocol::{codec, topic, BoardNo, DecodeError, DownlinkBody};
use tokio::sync::{mpsc, oneshot};

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{Alert, AlertChange, AlertDesk, AlertSettings, Routing};
use crate::core::arbiter::{ArbiterAction, AuditEntry, DecisionError, DecisionRecord};
use crate::core::hall::{Effect, Hall};
use crate::core::intake::Admission;
use crate::core::laws::Rules;
use crate::core::record::Record;
use crate::core::relay::Relay;
use crate::core::time::HubMs;
use crate::edge::broker;
use crate::edge::flusher::{Durable, Flusher};
use crate::edge::http::{self, Query};
use crate::edge::mqtt::{self, HubLink};
use crate::edge::store::Journal;
use crate::metrics::{BadPayload, Metrics};
use crate::pairings::{Pairing, Rounds};
use crate::view::feed::BroadcastSettings;
use protocol::time_control::TimeControl;

/// Which broker the hub uses.
#[derive(Debug, Clone)]
pub enum BrokerChoice {
    /// Start rumqttd inside the hub, listening here.
    Embedded(SocketAddr),
    /// Connect to a broker that runs elsewhere (Mosquitto, a cluster).
    External(BrokerAddr),
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The sled journal's directory.
    pub data: PathBuf,
    pub broker: BrokerChoice,
    pub http: SocketAddr,
    /// The event id in MQTT topics.
    pub event: String,
    /// The Laws the games follow.
    pub rules: Rules,
    /// Every board's time control, until the event's configuration says otherwise; without
    /// one the hub shows the clocks' readings but cannot check them.
    pub time_control: Option<TimeControl>,
    /// Boards whose node reports no clock: how long a move must stand to count (`None`:
    /// never inferred).
    pub debounce_ms: Option<u64>,
    /// Zones and arbiters: who gets which alert.
    pub routing: Routing,
    /// When alerts are raised and escalated.
    pub alerts: AlertSettings,
    /// The rounds' pairings and the round in play.
    pub rounds: Rounds,
    /// The public feed: event name, site, delay.
    pub broadcast: BroadcastSettings,
    /// The technician's bindings of nodes (e-board hardware ids) to boards.
    pub bindings: BTreeMap<String, u16>,
    /// The arbiters' view answers only to this token; `None`: open to everyone.
    pub arbiter_token: Option<String>,
}

/// How often the desk looks at what builds up over time (time trouble, silent nodes,
/// escalation): well under the second an alert may take to reach a pager.
const ALERT_TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// How often a zone's retained list of open alerts is republished at most.
const OPEN_LIST_EVERY_MS: u64 = 1_000;

/// Where a started hub can be reached.
#[derive(Debug, Clone)]
pub struct Running {
    pub http: SocketAddr,
    pub broker: BrokerAddr,
}

/// The hub's clock: the Unix time in ms, never going backwards.
#[derive(Debug, Default)]
struct HubClock {
    last: HubMs,
}

impl HubClock {
    fn now(&mut self) -> HubMs {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.last = self.last.max(HubMs(wall));
        self.last
    }

    fn not_before(&mut self, at: HubMs) {
        self.last = self.last.max(at);
    }
}

/// Runs the hub until `shutdown` resolves. `ready` learns the bound addresses.
pub async fn serve(
    config: ServeConfig,
    ready: Option<oneshot::Sender<Running>>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        topic::is_valid_event(&config.event),
        "event id {:?}: use letters, digits, '-', '_' or '.'",
        config.event
    );
    let metrics = Arc::new(Metrics::default());
    let journal = Journal::open(&config.data)
        .with_context(|| format!("opening the journal in {}", config.data.display()))?;
    let mut clock = HubClock::default();
    let mut hall = Hall::new(config.rules)
        .with_time_control(config.time_control.clone())
        .with_debounce(config.debounce_ms);
    let mut desk = AlertDesk::new(config.alerts.clone(), config.routing.clone(), config.rules);
    desk.set_players(config.rounds.seating());
    desk.set_round(
        config.rounds.start_in_play().map(HubMs),
        config.rounds.boards_to_play(),
    );
    desk.restore(journal.alerts().filter_map(|alert| match alert {
        Ok(alert) => Some(alert),
        Err(e) => {
            tracing::error!(error = %e, "alert skipped");
            metrics.journal_records_skipped();
            None
        }
    }));
    let mut healed = Vec::new();
    let mut relay = Relay::default();
    let replayed = replay(
        &journal,
        &mut hall,
        &mut Followers {
            desk: &mut desk,
            relay: &mut relay,
            healed: &mut healed,
        },
        &mut clock,
        &metrics,
    );
    tracing::info!(
        records = replayed,
        boards = hall.len(),
        alerts = desk.alerts().count(),
        healed = healed.len(),
        "journal replayed"
    );

    let broker_addr = match &config.broker {
        BrokerChoice::Embedded(listen) => {
            broker::start(*listen)?;
            let host = match listen.ip() {
                ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                ip => ip,
            };
            tracing::info!(%listen, "embedded MQTT broker listening");
            BrokerAddr {
                host: host.to_string(),
                port: listen.port(),
            }
        }
        BrokerChoice::External(addr) => addr.clone(),
    };

    let (durable_tx, mut durable) = mpsc::unbounded_channel();
    let flusher = Flusher::start(journal.clone(), metrics.clone(), durable_tx)
        .context("starting the journal flusher")?;
    let (link, mut incoming) = mqtt::connect(&broker_addr, &config.event, metrics.clone());
    let (queries_tx, mut queries) = mpsc::channel(256);
    let access = crate::edge::access::Access::new(config.arbiter_token.clone());
    if !access.login_required() {
        tracing::warn!(
            "no arbiter token ([access] arbiter_token): anyone who reaches the HTTP port sees the live games and the alerts"
        );
    }
    let (http_addr, server) = http::bind(config.http, queries_tx, metrics.clone(), access).await?;
    let server = tokio::spawn(server);
    tracing::info!(http = %http_addr, broker = %broker_addr, event = %config.event, "hub ready");
    if let Some(ready) = ready {
        let _ = ready.send(Running {
            http: http_addr,
            broker: broker_addr,
        });
    }

    let next_decision = journal
        .next_decision_id()
        .context("reading the decisions journal")?;
    // The technician's bindings over the API take precedence over the configuration's.
    let mut bindings = config.bindings.clone();
    for (hardware, board) in journal.bindings().context("reading the bindings")? {
        bindings.retain(|_, b| *b != board);
        bindings.insert(hardware, board);
    }
    let lichess = config.broadcast.lichess.clone().map(|target| {
        let (tx, rx) = tokio::sync::watch::channel(Vec::new());
        tokio::spawn(crate::edge::lichess::run(target, rx));
        tx
    });
    let mut shell = Shell {
        event: config.event,
        hall,
        desk,
        relay,
        broadcast: config.broadcast,
        feed_queue: std::collections::VecDeque::new(),
        feed_cache: crate::view::feed::FeedCache::default(),
        folder_written: HashMap::new(),
        feed_followed: (None, HubMs(0)),
        lichess,
        rounds: config.rounds,
        bindings,
        binding_changes: 0,
        awaiting_binding: Vec::new(),
        alert_changes: 0,
        live: live::LivePages::default(),
        unpublished: std::collections::VecDeque::new(),
        continued: HashMap::new(),
        stale_lists: std::collections::BTreeSet::new(),
        lists_published_at: HubMs(0),
        next_decision,
        awaiting_flush: HashMap::new(),
        journal,
        flusher,
        link,
        metrics,
        clock,
    };
    // Alerts the replay raised again, and every zone's open list for pagers that connect.
    shell.record_alerts(healed, None)?;
    shell.publish_open_lists(shell.desk.routing().zone_names());
    let mut tick = tokio::time::interval(ALERT_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    let result = loop {
        tokio::select! {
            Some(event) = incoming.recv() => match event {
                LinkEvent::Message { topic, payload } => {
                    if let Err(e) = shell.on_message(&topic, &payload) {
                        break Err(e);
                    }
                }
                LinkEvent::Connected => tracing::info!("connected to the broker, subscribed"),
                LinkEvent::Disconnected => tracing::warn!("lost the broker; reconnecting"),
            },
            Some(flushed) = durable.recv() => {
                if let Err(e) = shell.on_durable(flushed) {
                    break Err(e);
                }
            }
            _ = tick.tick() => {
                if let Err(e) = shell.on_tick() {
                    break Err(e);
                }
            }
            Some(query) = queries.recv() => {
                if let Err(e) = shell.answer(query) {
                    break Err(e);
                }
            }
            () = &mut shutdown => break Ok(()),
        }
    };
    server.abort();
    shell.flusher.stop().context("final journal flush")?;
    result
}

/// Rebuilds the hall from the journal: each board's events in sequence, each arbiter's
/// decision right after the board event it followed. Effects of replayed events already
/// happened once; only the alert desk sees them again, and raises (into `healed`) only the
/// incidents whose alert a crash kept from being written.
fn replay(
    journal: &Journal,
    hall: &mut Hall,
    followers: &mut Followers<'_>,
    clock: &mut HubClock,
    metrics: &Metrics,
) -> u64 {
    let mut decisions: BTreeMap<(u16, u64), Vec<DecisionRecord>> = BTreeMap::new();
    for decision in journal.decisions() {
        match decision {
            Ok(d) => decisions.entry((d.board, d.after_seq)).or_default().push(d),
            Err(e) => {
                tracing::error!(error = %e, "decision skipped");
                metrics.journal_records_skipped();
            }
        }
    }
    let fold_decisions = |hall: &mut Hall,
                          followers: &mut Followers<'_>,
                          due: Vec<DecisionRecord>| {
        for decision in due {
            match hall.decide(&decision) {
                Ok(effects) => {
                    for effect in &effects {
                        followers.follow(decision.at, hall, effect);
                    }
                    followers.relay.on_decision(&decision);
                    followers
                        .healed
                        .extend(followers.desk.on_decision(decision.at, &decision));
                }
                Err(e) => {
                    tracing::error!(id = decision.id, error = %e, "journaled decision no longer fits");
                    metrics.journal_records_skipped();
                }
            }
        }
    };
    let mut applied = 0;
    for record in journal.replay() {
        match record {
            Ok(record) => {
                clock.not_before(record.at);
                let (board, seq) = (record.event.board.0, record.event.seq.0);
                for effect in hall.apply(&record) {
                    if let Effect::OutOfSequence { board, seq } = effect {
                        tracing::error!(
                            board = board.0,
                            seq = seq.0,
                            "journal record out of sequence, skipped"
                        );
                        metrics.journal_records_skipped();
                    } else {
                        followers.follow(record.at, hall, &effect);
                    }
                }
                applied += 1;
                if let Some(due) = decisions.remove(&(board, seq)) {
                    fold_decisions(hall, followers, due);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "journal record skipped");
                metrics.journal_records_skipped();
            }
        }
    }
    // Decisions after events the journal lost (damaged records): in the order taken.
    let mut rest: Vec<DecisionRecord> = decisions.into_values().flatten().collect();
    rest.sort_by_key(|d| d.id);
    fold_decisions(hall, followers, rest);
    hall.replayed();
    applied
}

/// What follows the replayed board events besides the hall: the alert desk (raising only
/// what a crash lost, into `healed`) and the broadcast relay.
struct Followers<'a> {
    desk: &'a mut AlertDesk,
    relay: &'a mut Relay,
    healed: &'a mut Vec<AlertChange>,
}

impl Followers<'_> {
    fn follow(&mut self, at: HubMs, hall: &Hall, effect: &Effect) {
        self.healed.extend(self.desk.on_effect(at, hall, effect));
        self.relay.on_effect(at, effect);
    }
}

/// Where the answer to an acknowledgement or resolution goes.
type AlertReply = oneshot::Sender<Result<Alert, AlertError>>;

/// The state the loop owns.
struct Shell {
    event: String,
    hall: Hall,
    desk: AlertDesk,
    relay: Relay,
    bindings: BTreeMap<String, u16>,
    /// Bindings written so far (the running number the flusher reports back), and the
    /// technicians waiting for theirs to be durable.
    binding_changes: u64,
    awaiting_binding: Vec<(u64, oneshot::Sender<crate::core::setup::NodesReport>)>,
    broadcast: BroadcastSettings,
    /// The public feed's last fingerprint the folder and the pusher have, and when it was
    /// last looked at.
    feed_followed: (Option<u64>, HubMs),
    /// The lichess pusher's inbox: the round's games, newest only.
    lichess: Option<tokio::sync::watch::Sender<Vec<String>>>,
    /// The LiveChess folder's game files as last written, by board.
    folder_written: HashMap<u16, u64>,
    /// Rendered feed games, reused until they change.
    feed_cache: crate::view::feed::FeedCache,
    /// The MQTT live feed's messages waiting for the broadcast delay: due, topic, JSON.
    feed_queue: std::collections::VecDeque<(HubMs, String, Vec<u8>)>,
    rounds: Rounds,
    /// Alert changes written so far: the running number the flusher reports back.
    alert_changes: u64,
    /// The supervision pages.
    live: live::LivePages,
    /// Alert changes written but not yet durable, in order, with the arbiter waiting for
    /// one where an acknowledgement or resolution caused it.
    unpublished: std::collections::VecDeque<(u64, AlertChange, Option<AlertReply>)>,
    /// The last `ContinueAt` sent to each board whose node's stream diverged, and when.
    continued: HashMap<BoardNo, (protocol::Seq, HubMs)>,
    /// Zones whose open list changed since it was last published, and when that was.
    stale_lists: std::collections::BTreeSet<String>,
    lists_published_at: HubMs,
    /// The id the next arbiter's decision takes.
    next_decision: u64,
    /// Decisions taken but not yet durable: the arbiter's answer waits for the flush.
    awaiting_flush: HashMap<
        u64,
        (
            AuditEntry,
            oneshot::Sender<Result<AuditEntry, DecisionError>>,
        ),
    >,
    journal: Journal,
    flusher: Flusher,
    link: HubLink,
    metrics: Arc<Metrics>,
    clock: HubClock,
}

impl Shell {
    /// One message off the wire. Bad input is counted and logged, never fatal; only a
    /// failing journal is.
    fn on_message(&mut self, topic: &str, payload: &[u8]) -> anyhow::Result<()> {
        if topic == topic::pager_command(&self.event) {
            return self.on_pager_command(payload);
        }
        let Some(board) = topic::parse_uplink(&self.event, topic) else {
            return {
                self.refuse(BadPayload::ForeignTopic, topic, "not a board uplink topic");
                Ok(())
            };
        };
        let event = match codec::decode_uplink(payload) {
            Ok(event) => event,
            Err(e @ DecodeError::UnknownVersion(_)) => {
                return {
                    self.refuse(BadPayload::UnknownVersion, topic, &e.to_string());
                    Ok(())
                }
            }
            Err(e) => {
                return {
                    self.refuse(BadPayload::Undecodable, topic, &e.to_string());
                    Ok(())
                }
            }
        };
        if event.board != board {
            let why = format!("message says board {}", event.board.0);
            return {
                self.refuse(BadPayload::BoardMismatch, topic, &why);
                Ok(())
            };
        }
        let now = self.clock.now();
        match self.hall.admit(now, &event) {
            Admission::Accept => {
                let record = Record { at: now, event };
                self.journal
                    .append(&record)
                    .context("appending to the journal")?;
                self.flusher.appended(board, record.event.seq);
                self.metrics.event_accepted();
                for effect in self.hall.apply(&record) {
                    self.carry_out(now, effect)?;
                }
            }
            Admission::Duplicate { ack } => {
                self.metrics.duplicate_dropped();
                if self.diverges(&event)? {
                    return self.continue_elsewhere(now, board);
                }
                if let Some(up_to_seq) = ack {
                    self.link.send(board, DownlinkBody::Ack { up_to_seq });
                }
            }
            Admission::Gap { resend_from } => {
                self.metrics.gap_event();
                if let Some(seq) = resend_from {
                    tracing::debug!(
                        board = board.0,
                        from = seq.0,
                        got = event.seq.0,
                        "gap; asking for a resend"
                    );
                    self.metrics.resend_requested();
                    self.link.send(board, DownlinkBody::ResendFrom { seq });
                }
            }
        }
        Ok(())
    }

    /// Whether a duplicate differs from the event the journal holds under its number: not
    /// a resend but another node's stream (a node replaced mid-game, or one that lost its
    /// outbox), which starts again at 1.
    fn diverges(&self, event: &protocol::Uplink) -> anyhow::Result<bool> {
        let journaled = self
            .journal
            .record(event.board, event.seq)
            .context("reading the journal")?;
        Ok(journaled.is_some_and(|record| record.event != *event))
    }

    /// Tells a node whose stream diverged to continue after the board's last journaled
    /// event (at most once a second: its window of duplicates arrives in a burst), and the
    /// arbiter that the board's node changed. Its duplicates are not acknowledged: that
    /// would make it forget events the hub does not have.
    fn continue_elsewhere(&mut self, now: HubMs, board: BoardNo) -> anyhow::Result<()> {
        let accepted = self.hall.board(board).map_or(0, |b| b.last_seq().0);
        let seq = protocol::Seq(accepted + 1);
        let due = match self.continued.get(&board) {
            Some((asked, at)) => *asked != seq || now.since(*at) >= 1_000,
            None => true,
        };
        if due {
            tracing::warn!(
                board = board.0,
                continue_at = seq.0,
                "another node's events for this board: it continues after the journal's"
            );
            self.continued.insert(board, (seq, now));
            self.link.send(board, DownlinkBody::ContinueAt { seq });
            let changes = self.desk.on_node_replaced(now, board.0, accepted);
            self.record_alerts(changes, None)?;
        }
        Ok(())
    }

    fn refuse(&self, why: BadPayload, topic: &str, detail: &str) {
        self.metrics.bad_payload(why);
        // A misbehaving client may send thousands: log the 1st, 2nd, 4th, 8th, …
        let count = self.metrics.bad_payloads();
        if count.is_power_of_two() {
            tracing::warn!(topic, ?why, detail, total = count, "message refused");
        }
    }

    /// Carries out an effect of the core at `now`. Only a failing journal is an error.
    fn carry_out(&mut self, now: HubMs, effect: Effect) -> anyhow::Result<()> {
        self.relay.on_effect(now, &effect);
        self.feed_move(now, &effect);
        let changes = self.desk.on_effect(now, &self.hall, &effect);
        self.record_alerts(changes, None)?;
        match effect {
            Effect::Ack { board, up_to } => {
                self.link
                    .send(board, DownlinkBody::Ack { up_to_seq: up_to });
            }
            Effect::Game { board, event } => tracing::info!(board = board.0, ?event, "game"),
            Effect::Clock { board, event } => tracing::info!(board = board.0, ?event, "clock"),
            Effect::OutOfSequence { board, seq } => {
                tracing::error!(board = board.0, seq = seq.0, "out-of-sequence record");
                self.metrics.journal_records_skipped();
            }
        }
        Ok(())
    }

    fn on_tick(&mut self) -> anyhow::Result<()> {
        let now = self.clock.now();
        let changes = self.desk.tick(now, &self.hall);
        self.record_alerts(changes, None)?;
        self.publish_stale_lists(now);
        self.publish_feed(now);
        self.follow_feed(now);
        self.publish_live(now);
        Ok(())
    }

    /// What the flusher made durable: acknowledge events, confirm decisions.
    fn on_durable(&mut self, flushed: Durable) -> anyhow::Result<()> {
        let now = self.clock.now();
        for (board, seq) in flushed.events {
            if let Some(effect) = self.hall.flushed(board, seq) {
                self.carry_out(now, effect)?;
            }
        }
        if let Some(up_to) = flushed.alerts_up_to {
            self.publish_alerts(up_to);
        }
        if let Some(up_to) = flushed.bindings_up_to {
            let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.awaiting_binding)
                .into_iter()
                .partition(|(n, _)| *n <= up_to);
            self.awaiting_binding = waiting;
            let report = self.nodes_report(now);
            for (_, reply) in done {
                let _ = reply.send(report.clone());
            }
        }
        for id in flushed.decisions {
            if let Some((entry, reply)) = self.awaiting_flush.remove(&id) {
                let _ = reply.send(Ok(entry));
            }
        }
        Ok(())
    }

    /// Carries out an arbiter's decision and journals it; the answer waits for the flush.
    /// Only a failing journal is an error.
    fn decide(
        &mut self,
        board: BoardNo,
        action: ArbiterAction,
        reply: oneshot::Sender<Result<AuditEntry, DecisionError>>,
    ) -> anyhow::Result<()> {
        let record = DecisionRecord {
            id: self.next_decision,
            board: board.0,
            at: self.clock.now(),
            after_seq: self.hall.board(board).map_or(0, |b| b.last_seq().0),
            action,
        };
        let effects = match self.hall.decide(&record) {
            Ok(effects) => effects,
            Err(e) => {
                let _ = reply.send(Err(e));
                return Ok(());
            }
        };
        self.journal
            .append_decision(&record)
            .context("appending a decision to the journal")?;
        self.flusher.appended_decision(record.id);
        self.next_decision += 1;
        tracing::info!(board = board.0, id = record.id, arbiter = %record.action.arbiter, decision = ?record.action.decision, "arbiter's decision");
        for effect in effects {
            self.carry_out(record.at, effect)?;
        }
        self.relay.on_decision(&record);
        let changes = self.desk.on_decision(record.at, &record);
        self.record_alerts(changes, None)?;
        let entry = self
            .hall
            .board(board)
            .and_then(|b| b.decisions().last().cloned())
            .expect("the decision was just recorded");
        self.awaiting_flush.insert(record.id, (entry, reply));
        Ok(())
    }

    /// The nodes and the technician's warnings: the round in play's boards should have one.
    fn nodes_report(&self, now: HubMs) -> crate::core::setup::NodesReport {
        let expected: Vec<u16> = self
            .rounds
            .games_in_play()
            .iter()
            .map(|p| p.board)
            .collect();
        crate::core::setup::nodes(&self.hall, &self.bindings, &expected, now)
    }

    /// The results the hub has at the boards: a game over by the rules, or declared.
    fn results(&self) -> BTreeMap<u16, String> {
        self.hall
            .boards()
            .into_iter()
            .filter_map(|n| {
                let result = self.hall.board(n)?.game().result();
                (result != "*").then(|| (n.0, result.to_owned()))
            })
            .collect()
    }

    /// A round's pairings; in the round in play, with the hub's results.
    fn pairings(&self, round: usize) -> Option<Vec<Pairing>> {
        let mut games = self.rounds.pairings.get(&round)?.clone();
        if self.rounds.in_play() == Some(round) {
            let results = self.results();
            for game in &mut games {
                if let Some(result) = results.get(&game.board) {
                    game.result.clone_from(result);
                }
            }
        }
        Some(games)
    }

    fn answer(&mut self, query: Query) -> anyhow::Result<()> {
        let now = self.clock.now();
        // A dropped receiver means the HTTP client went away; nothing to do.
        match query {
            Query::Boards(reply) => drop(reply.send(self.hall.summaries(now))),
            Query::Board(board, reply) => drop(reply.send(self.hall.detail(board, now))),
            Query::TimeTrouble(reply) => drop(reply.send(self.hall.time_trouble(now))),
            Query::ConnectedNodes(reply) => drop(reply.send(self.hall.connected_nodes(now))),
            Query::CheckClaim(board, request, reply) => {
                drop(reply.send(self.hall.check_claim(board, &request)));
            }
            Query::Decide(board, action, reply) => return self.decide(board, action, reply),
            Query::Alerts(reply) => drop(reply.send(self.desk.alerts().cloned().collect())),
            Query::Pairings(round, reply) => drop(reply.send(self.pairings(round))),
            Query::Broadcast(round, board, reply) => {
                drop(reply.send(self.feed(now, round, board)));
            }
            Query::RoundInPlay(reply) => drop(reply.send(self.rounds.in_play())),
            Query::Nodes(reply) => drop(reply.send(self.nodes_report(now))),
            Query::Bind(hardware, board, reply) => {
                self.journal
                    .put_binding(&hardware, board)
                    .context("writing a binding")?;
                if let Some(board) = board {
                    // The board's earlier hardware is replaced (a swapped node).
                    let replaced: Vec<String> = self
                        .bindings
                        .iter()
                        .filter(|(hw, b)| **b == board && **hw != hardware)
                        .map(|(hw, _)| hw.clone())
                        .collect();
                    for hw in replaced {
                        self.journal
                            .put_binding(&hw, None)
                            .context("writing a binding")?;
                        self.bindings.remove(&hw);
                    }
                    self.bindings.insert(hardware.clone(), board);
                } else {
                    self.bindings.remove(&hardware);
                }
                tracing::info!(%hardware, ?board, "node bound");
                self.binding_changes += 1;
                self.flusher.appended_binding(self.binding_changes);
                self.awaiting_binding.push((self.binding_changes, reply));
            }
            Query::ResultsTrf(reply) => {
                drop(reply.send(self.rounds.trf_with_results(&self.results())));
            }
            Query::AlertCommand(id, command, reply) => {
                return self.alert_command(id, command, reply)
            }
            Query::Live(audience, reply) => drop(reply.send(self.live_start(audience))),
            Query::SpectatorBoard(board, reply) => {
                drop(reply.send(self.spectator_board(board, now)));
            }
        }
        Ok(())
    }
}
