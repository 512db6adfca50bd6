//! The hub's core as one object the shell drives, as quinn-proto's `Connection` is driven:
//! events in through `handle_*`, the time through [`Hub::handle_timeout`] when
//! [`Hub::poll_timeout`] says, and what to do out through [`Hub::poll_output`]. The shell
//! reads no state to decide anything; it carries the outputs out in order.
//!
//! ```text
//!  uplink ──► handle_uplink ──► Hall::admit ──Accept──► Write(Event) ──► Hall::apply ──► effects
//!                                  ├─Duplicate: the same ──► Ack (the durable point)
//!                                  ├─Duplicate: another node's ──► ContinueAt, node_gap
//!                                  └─Gap ──► ResendFrom
//!  effects ──► fan_out: Relay (the feed), AlertDesk (alerts: Write(Alert)); the live feed
//!  handle_durable(position) ──► Ack, AlertChanged, Reply: what waited for the journal
//! ```
//!
//! Startup is the same fold ([`Hub::restore`]): the journal's records and decisions through
//! the same code ([`Hub::fan_out`]); what they make happen again is not sent a second time,
//! except alerts a crash kept from being written.
//!
//! The `Hub`'s members, each in its file, as quinn's `connection/` has them:
//! - [`restore`]: the fold over the journal.
//! - [`decisions`]: what arbiters do (decisions, acknowledgements, pagers' commands).
//! - [`access`]: the nodes' keys and bindings, the arbiters' roster, the hall's secret.
//! - [`publishing`]: alert changes, the pagers' open lists, the delayed live feed.
//! - [`rounds`]: round starts, archiving, the schedule.
//! - [`streams`], [`durable`], [`timers`], [`output`]: a node's stream of events, what
//!   waits for the journal, what the hub waits for, what it asks the shell to do.

mod access;
mod corrections;
mod decisions;
mod durable;
mod output;
mod publishing;
mod restore;
mod rounds;
mod streams;
#[cfg(test)]
mod tests;
mod timers;
mod undo;

use std::collections::{BTreeMap, VecDeque};

use protocol::seal::{self, Boot, Sealed};
use protocol::time_control::TimeControl;
use protocol::{BoardNo, Downlink, DownlinkBody, Uplink};

use self::access::Access;
pub use self::access::{ArbiterEnrolment, EnrolmentRefusal};
use self::durable::{Deferred, Pending};
pub use self::output::{Count, Enrolled, Output, PagerRefusal, Position, Reply, RequestId, Write};
use self::publishing::Publishing;
pub use self::restore::{Journaled, Replayed, Restored};
pub use self::rounds::StartRequest;
use self::streams::Streams;
pub use self::streams::HEAD as STREAM_HEAD;
use self::timers::{Timer, Timers};
pub use self::undo::UndoRequest;
use super::alerts::Routing;
use super::alerts::{AlertChange, AlertDesk, AlertSettings};
use super::arbiter::DecisionRecord;
use super::archive::Archive;
use super::effect::Effect;
use super::hall::Hall;
use super::ids::{DecisionId, HardwareId};
use super::intake::Admission;
use super::laws::Rules;
use super::record::Record;
use super::relay::Relay;
use super::sections::{Section, Sections};
use super::setup::NodesReport;
use super::time::HubMs;
use super::trust::ForgeryPage;
use crate::core::pairings::Rounds;
use crate::core::relay::public::BroadcastSettings;

/// How often a zone's retained list of open alerts is republished at most: the changes
/// themselves go out at once; the lists are for pagers that connect, and a hall in time
/// trouble changes hundreds of alerts a second.
pub const OPEN_LIST_EVERY_MS: u64 = 1_000;

/// How old a pager's command may be when it arrives: a pager's clock is the hall's within
/// seconds, and a command recorded off the network cannot be played back later.
pub const PAGER_COMMAND_FRESH_MS: u64 = 120_000;

/// What the hub is configured with.
#[derive(Debug, Clone, Default)]
pub struct HubConfig {
    /// The event id in MQTT topics.
    pub event: String,
    /// The rules of boards in no section (every board's, in a hall without sections).
    pub rules: Rules,
    /// The time control of boards in no section; without one the hub shows the clocks'
    /// readings but cannot check them.
    pub time_control: Option<TimeControl>,
    /// The hall's sections, each with its boards, rules and time control.
    pub sections: Vec<Section>,
    /// Boards whose node reports no clock: how long a move must stand to count.
    pub debounce_ms: Option<u64>,
    pub routing: Routing,
    pub alerts: AlertSettings,
    pub rounds: Rounds,
    pub broadcast: BroadcastSettings,
    /// The configuration's bindings of e-board hardware to boards.
    pub bindings: BTreeMap<HardwareId, BoardNo>,
    /// Take unsealed events for boards whose node was never enrolled (`[access]
    /// open_hall`): a lab, never a hall with strangers on its network.
    pub open_hall: bool,
}

pub struct Hub {
    event: String,
    hall: Hall,
    desk: AlertDesk,
    relay: Relay,
    /// The games of rounds that are over, and how often it changed.
    archive: Archive,
    archive_changes: u64,
    /// On a restart, each board's round starts still to fold in.
    marks: rounds::Marks,
    rounds: Rounds,
    broadcast: BroadcastSettings,
    /// Who may do what: the nodes' keys and bindings, the arbiters, the hall's secret.
    access: Access,
    streams: Streams,
    pending: Pending,
    outputs: VecDeque<Output>,
    next_decision: DecisionId,
    /// What goes out on a schedule: the delayed live feed, the pagers' open lists.
    publishing: Publishing,
    /// Each board's next deadline for the desk.
    timers: Timers,
    /// Whether the round's scheduled start has been looked at for clocks not started.
    round_start_watched: bool,
    /// Up to when the rounds' scheduled starts have been looked at.
    schedule_checked: HubMs,
    /// The latest time the hub was given.
    now: HubMs,
    /// Each board's node's boot, from its latest event taken (`seal::Boot`): downlinks are
    /// sealed for it, so one recorded in an earlier boot fails at the node. Not journaled:
    /// the node's next frame tells it again (a link's state, not the hall's).
    boots: BTreeMap<BoardNo, Boot>,
    /// The boot of the frame being answered: a duplicate or a gap is answered for the boot
    /// that sent it (a node resending after a reboot, before any of its events is new).
    answering: Option<Boot>,
}

impl Hub {
    pub fn new(config: HubConfig) -> Hub {
        let sections = Sections::new(config.sections, config.rules, config.time_control);
        let mut hall = Hall::new(config.rules)
            .with_sections(sections)
            .with_debounce(config.debounce_ms);
        hall.round_started(Hub::first_start(&config.rounds));
        let desk = AlertDesk::new(config.alerts, config.routing, config.rules);
        let mut hub = Hub {
            event: config.event,
            hall,
            desk,
            relay: Relay::default(),
            archive: Archive::default(),
            archive_changes: 0,
            marks: rounds::Marks::default(),
            rounds: config.rounds,
            broadcast: config.broadcast,
            access: Access::new(config.bindings, config.open_hall),
            streams: Streams::default(),
            pending: Pending::default(),
            outputs: VecDeque::new(),
            next_decision: DecisionId(1),
            publishing: Publishing::default(),
            timers: Timers::default(),
            round_start_watched: false,
            schedule_checked: HubMs(0),
            now: HubMs(0),
            boots: BTreeMap::new(),
            answering: None,
        };
        hub.round_changed();
        hub
    }

    /// An effect of the hall reaches what follows it: the relay and the desk. The one way,
    /// live ([`Hub::carry_out`]) and on replay, so a restarted hub shows the same feed and
    /// alerts.
    fn fan_out(&mut self, at: HubMs, effect: &Effect) -> Vec<AlertChange> {
        self.relay.on_effect(at, effect);
        self.desk.on_effect(at, &self.hall, effect)
    }

    /// A decision the hall took reaches what follows it, after its effects: live and on
    /// replay alike.
    fn fan_out_decision(&mut self, record: &DecisionRecord) -> Vec<AlertChange> {
        self.relay.on_decision(record);
        self.desk.on_decision(record.at, record)
    }

    /// A board's event off the wire, its topic already checked against its board: taken
    /// only when sealed with the key of the board's node (see [`Trust`]); a refusal changes
    /// nothing but the counts, and a run of them alerts the technician.
    pub fn handle_sealed_uplink(&mut self, now: HubMs, sealed: Sealed<Uplink>) {
        self.now = self.now.max(now);
        let board = sealed.message.board;
        if let Err(refusal) = self.access.trust.check(&self.event, &sealed) {
            self.count(Count::Unauthenticated(board, refusal));
            // Only a board of the hall (a node enrolled for it, or a game on it) is worth a
            // technician's walk: forgeries in the name of any number a client can type are
            // counted, not paged.
            let of_the_hall =
                self.access.trust.board_key(board).is_some() || self.hall.board(board).is_some();
            // A flood (many boards' names at once) is one alert for the hall.
            let page = self
                .access
                .trust
                .refused(now, board)
                .filter(|_| of_the_hall)
                .and_then(|(since, refused)| {
                    self.access.trust.forgery_page(now, board, since, refused)
                });
            let changes = match page {
                Some(ForgeryPage::Board { since, refused }) => {
                    self.desk.on_forged_messages(now, board, since, refused)
                }
                Some(ForgeryPage::Hall { since, boards }) => {
                    self.desk.on_forged_flood(now, since, boards)
                }
                None => Vec::new(),
            };
            self.record_alerts(changes, None);
            return;
        }
        self.answering = Some(sealed.boot);
        self.handle_uplink(now, sealed.message);
        self.answering = None;
    }

    /// A clustered hall's active hub refused strangers' records of the journal stream (its
    /// numbers `seqs`): nothing in them was taken; the technician is called.
    pub fn handle_strangers_records(&mut self, now: HubMs, seqs: &[u64]) {
        self.now = self.now.max(now);
        let Some(&first) = seqs.first() else {
            return;
        };
        let changes = self.desk.on_strangers_records(now, first);
        self.record_alerts(changes, None);
    }

    /// The hub's broker session is up (at a start, a reconnect, a takeover): events the
    /// nodes sent meanwhile went nowhere (uplinks travel at QoS 0; the hub's Ack is their
    /// only acknowledgement), so every board's node is asked at once for what follows the
    /// hub's last event of it, instead of after its resend timer. A node with nothing
    /// unacknowledged sends nothing.
    pub fn handle_session_up(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        let heard = self.hall.boards();
        let enrolled = self.access.trust.boards().map(|(board, _)| board);
        let boards: std::collections::BTreeSet<BoardNo> =
            heard.into_iter().chain(enrolled).collect();
        for board in boards {
            let accepted = self.hall.board(board).map_or(0, |b| b.last_seq().0);
            self.downlink(
                board,
                DownlinkBody::ResendFrom {
                    seq: protocol::Seq(accepted + 1),
                },
            );
        }
    }

    /// A board's event to be taken as it is: from the wire once its seal held, or from a
    /// source the hub trusts (the alert report, benchmarks, tests).
    pub fn handle_uplink(&mut self, now: HubMs, event: Uplink) {
        self.now = self.now.max(now);
        let board = event.board;
        self.admit(now, event);
        // The node was heard and its board may have changed: the desk looks at it.
        self.watch(now, board);
    }

    fn admit(&mut self, now: HubMs, event: Uplink) {
        let board = event.board;
        match self.hall.admit(now, &event) {
            Admission::Accept => {
                // A new event: its boot is the node's now.
                if let Some(boot) = self.answering {
                    self.boots.insert(board, boot);
                }
                let record = Record { at: now, event };
                let at = self.write(Write::Event(record.clone()));
                self.pending
                    .wait(at, Deferred::Ack(board, record.event.seq));
                self.streams.journaled(&record.event);
                self.count(Count::EventAccepted);
                for effect in self.hall.apply(&record) {
                    self.carry_out(now, effect);
                }
            }
            Admission::Duplicate { ack } => {
                self.count(Count::DuplicateDropped);
                if self.streams.diverges(&event) {
                    self.continue_elsewhere(now, board);
                } else if let Some(up_to_seq) = ack {
                    self.downlink(board, DownlinkBody::Ack { up_to_seq });
                }
            }
            Admission::Gap { resend_from } => {
                self.count(Count::GapEvent);
                if let Some(seq) = resend_from {
                    tracing::debug!(
                        board = board.0,
                        from = seq.0,
                        got = event.seq.0,
                        "gap; asking for a resend"
                    );
                    self.count(Count::ResendRequested);
                    self.downlink(board, DownlinkBody::ResendFrom { seq });
                }
            }
        }
    }

    /// Another node's events for `board` (see [`streams`]): it continues after the journal,
    /// and the arbiter learns that the board's node changed.
    fn continue_elsewhere(&mut self, now: HubMs, board: BoardNo) {
        let accepted = self
            .hall
            .board(board)
            .map_or(protocol::Seq(0), |b| b.last_seq());
        let Some(seq) = self.streams.continue_at(now, board, accepted) else {
            return;
        };
        tracing::warn!(
            board = board.0,
            continue_at = seq.0,
            "another node's events for this board: it continues after the journal's"
        );
        self.downlink(board, DownlinkBody::ContinueAt { seq });
        let changes = self.desk.on_node_replaced(now, board, accepted.0);
        self.record_alerts(changes, None);
    }

    /// An effect of the hall at `now`: to the relay, the live feed and the desk.
    fn carry_out(&mut self, now: HubMs, effect: Effect) {
        let changes = self.fan_out(now, &effect);
        self.feed_move(now, &effect);
        self.record_alerts(changes, None);
        match effect {
            Effect::Ack { board, up_to } => {
                self.downlink(board, DownlinkBody::Ack { up_to_seq: up_to });
            }
            Effect::Game { board, event } => {
                tracing::debug!(board = board.0, ?event, "game");
                if matches!(event, super::game::GameEvent::GameOver { .. }) {
                    let change = self.desk.watch_round_end(now, &self.hall);
                    self.record_alerts(change.into_iter().collect(), None);
                    self.game_ended(now);
                }
            }
            Effect::Clock { board, event } => tracing::debug!(board = board.0, ?event, "clock"),
            Effect::NodeTimeStep { board, step } => self.count(Count::NodeTimeStep(board, step)),
            Effect::OutOfSequence { board, seq } => {
                tracing::error!(board = board.0, seq = seq.0, "out-of-sequence record");
                self.count(Count::JournalRecordSkipped);
            }
        }
    }

    /// The journal is flushed up to `up_to`: what waited for it goes out.
    pub fn handle_durable(&mut self, now: HubMs, up_to: Position) {
        self.now = self.now.max(now);
        let durable = self.pending.durable(up_to);
        // One acknowledgement per board for all its events made durable together.
        let mut acks: BTreeMap<BoardNo, protocol::Seq> = BTreeMap::new();
        for deferred in &durable {
            if let Deferred::Ack(board, seq) = deferred {
                let highest = acks.entry(*board).or_insert(*seq);
                *highest = (*highest).max(*seq);
            }
        }
        for (board, seq) in acks {
            if let Some(effect) = self.hall.flushed(board, seq) {
                self.carry_out(now, effect);
            }
        }
        for deferred in durable {
            match deferred {
                Deferred::Ack(..) => {}
                Deferred::Alert(change, request) => {
                    self.publishing
                        .stale_lists
                        .insert(change.alert.zone.clone());
                    if let Some(request) = request {
                        let alert = Box::new(change.alert.clone());
                        self.reply(request, Reply::Alert(Ok(alert)));
                    }
                    self.outputs.push_back(Output::AlertChanged(change));
                }
                Deferred::Decision(request, entry) => {
                    self.reply(request, Reply::Decision(Ok(entry)));
                }
                Deferred::Binding(request) => {
                    let report = self.nodes_report(now);
                    self.reply(request, Reply::Nodes(report));
                }
                Deferred::Enrolment(request, enrolled) => {
                    self.reply(request, Reply::Enrolled(enrolled));
                }
                Deferred::ArbiterEnrolled(request, enrolment) => {
                    self.reply(request, Reply::ArbiterEnrolled(Ok(*enrolment)));
                }
                Deferred::Arbiters(request) => {
                    self.reply(request, Reply::Arbiters(self.access.roster.names()));
                }
                Deferred::RoundStarted(request) => {
                    let rounds = self.round_states();
                    self.reply(request, Reply::RoundStarted(Ok(rounds)));
                }
            }
        }
        self.publish_stale_lists(now);
    }

    /// When [`Hub::handle_timeout`] is next due: a board's deadline, an escalation, the
    /// round's start, the delayed live feed, the open lists.
    pub fn poll_timeout(&self) -> Option<HubMs> {
        Timer::ALL
            .into_iter()
            .filter_map(|t| self.deadline(t))
            .min()
    }

    /// When `timer` is next due, if it is set.
    fn deadline(&self, timer: Timer) -> Option<HubMs> {
        match timer {
            Timer::Boards => self.timers.next(),
            Timer::Escalation => self.desk.escalation_deadline(),
            Timer::RoundStart => self
                .desk
                .round_start_deadline()
                .filter(|_| !self.round_start_watched),
            Timer::ScheduledRound => self.next_scheduled_start(),
            Timer::LiveFeed => self.publishing.feed_queue.front().map(|(due, ..)| *due),
            Timer::OpenLists => (!self.publishing.stale_lists.is_empty()).then(|| {
                self.publishing
                    .lists_published_at
                    .plus_ms(OPEN_LIST_EVERY_MS)
            }),
        }
    }

    /// The time passes: each timer that is due, in [`Timer::ALL`]'s order. What is not due
    /// waits.
    pub fn handle_timeout(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        for timer in Timer::ALL {
            if self.deadline(timer).is_some_and(|at| at <= now) {
                self.on_timer(now, timer);
            }
        }
    }

    fn on_timer(&mut self, now: HubMs, timer: Timer) {
        match timer {
            Timer::Boards => {
                for board in self.timers.due(now) {
                    self.watch(now, board);
                }
            }
            Timer::Escalation => {
                let changes = self.desk.escalate(now);
                self.record_alerts(changes, None);
            }
            Timer::RoundStart => {
                self.round_start_watched = true;
                let changes = self.desk.watch_round_start(now, &self.hall);
                self.record_alerts(changes, None);
            }
            Timer::ScheduledRound => {
                self.schedule_checked = now;
                self.start_when_due(now);
            }
            Timer::OpenLists => self.publish_stale_lists(now),
            Timer::LiveFeed => self.publish_feed(now),
        }
    }

    /// The desk looks at `board` at `now`, and notes when it must look again.
    fn watch(&mut self, now: HubMs, board: BoardNo) {
        let changes = self.desk.watch_board(now, &self.hall, board);
        self.record_alerts(changes, None);
        let due = self.desk.board_deadline(now, &self.hall, board);
        self.timers.set(board, due);
    }

    /// The next thing for the shell to do.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// Every output, as if the journal flushed each write at once: for a hub without a
    /// journal (the alert report, tests, benchmarks). The writes are among the outputs.
    pub fn poll_all_durable(&mut self, now: HubMs) -> Vec<Output> {
        let mut all = Vec::new();
        loop {
            let mut written = None;
            while let Some(output) = self.poll_output() {
                if let Output::Write(at, _) = output {
                    written = Some(at);
                }
                all.push(output);
            }
            match written {
                Some(at) => self.handle_durable(now, at),
                None => return all,
            }
        }
    }

    fn write(&mut self, write: Write) -> Position {
        let at = self.pending.next_position();
        self.outputs.push_back(Output::Write(at, write));
        at
    }

    /// A message to `board`'s node, sealed with its key (unsealed for a node never
    /// enrolled, which only an open hall has) for its boot: the one of the frame being
    /// answered, else of its latest event taken.
    fn downlink(&mut self, board: BoardNo, body: DownlinkBody) {
        let key = self.access.trust.board_key(board);
        let boot = self
            .answering
            .or_else(|| self.boots.get(&board).copied())
            .unwrap_or(Boot::NONE);
        let message = Downlink::new(board, body);
        let frame = seal::seal_downlink(key, &self.event, boot, &message);
        self.outputs.push_back(Output::Downlink(board, body, frame));
    }

    fn reply(&mut self, request: RequestId, reply: Reply) {
        self.outputs.push_back(Output::Reply(request, reply));
    }

    fn count(&mut self, count: Count) {
        self.outputs.push_back(Output::Count(count));
    }

    // What the hub knows, for the API, the pages and the feed.

    /// The latest time the hub was given, or the journal's last record's after a restore:
    /// the shell's clock never goes back before it.
    pub fn latest(&self) -> HubMs {
        self.now
    }

    /// The event id in MQTT topics.
    pub fn event(&self) -> &str {
        &self.event
    }

    pub fn hall(&self) -> &Hall {
        &self.hall
    }

    pub fn desk(&self) -> &AlertDesk {
        &self.desk
    }

    pub fn relay(&self) -> &Relay {
        &self.relay
    }

    pub fn rounds(&self) -> &Rounds {
        &self.rounds
    }

    pub fn broadcast(&self) -> &BroadcastSettings {
        &self.broadcast
    }

    /// The nodes and the technician's warnings: the round in play's boards should have one.
    pub fn nodes_report(&self, now: HubMs) -> NodesReport {
        let expected: Vec<BoardNo> = self
            .rounds
            .games(self.round_in_play())
            .iter()
            .map(|p| p.board)
            .collect();
        let mut report =
            super::setup::nodes(&self.hall, self.access.bindings.map(), &expected, now);
        report.warnings.extend(
            self.access
                .trust
                .refused_boards()
                .map(
                    |(board, refused, last)| super::setup::Warning::RefusedMessages {
                        board,
                        refused,
                        last_ago_ms: now.since(last),
                    },
                ),
        );
        report
    }

    /// The games of rounds that are over.
    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// How often the archive changed (a game archived, a result entered for one): what
    /// follows it looks again when this moves.
    pub fn archive_changes(&self) -> u64 {
        self.archive_changes
    }
}
