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
//!  effects ──► Relay (the feed), AlertDesk (alerts: Write(Alert)), the live feed's queue
//!  handle_durable(position) ──► Ack, AlertChanged, Reply: what waited for the journal
//! ```
//!
//! Startup is the same fold ([`Hub::restore`]): the journal's records and decisions through
//! the same code; what they make happen again is not sent a second time, except alerts a
//! crash kept from being written.

mod durable;
mod output;
mod rounds;
mod streams;
mod timers;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use protocol::seal::{self, NodeKey, Sealed};
use protocol::time_control::TimeControl;
use protocol::{topic, BoardNo, Downlink, DownlinkBody, Uplink};

use self::durable::{Deferred, Pending};
pub use self::output::{Count, Enrolled, Output, PagerRefusal, Position, Reply, RequestId, Write};
pub use self::rounds::StartRequest;
use self::streams::Streams;
pub use self::streams::HEAD as STREAM_HEAD;
use self::timers::Timers;
use super::alerts::desk::AlertError;
use super::alerts::{Alert, AlertAction, AlertChange, AlertCommand, AlertDesk, AlertSettings};
use super::alerts::{Change, Routing};
use super::arbiter::{self, ArbiterAction, DecisionError, DecisionRecord};
use super::archive::{Archive, PlayedGame};
use super::bindings::Bindings;
use super::hall::{Effect, Hall};
use super::ids::{AlertId, DecisionId, HardwareId, RoundNo, Seq};
use super::intake::Admission;
use super::laws::Rules;
use super::pager_seal;
use super::record::Record;
use super::relay::Relay;
use super::roster::Roster;
use super::rounds::RoundStart;
use super::sections::{Section, Sections};
use super::setup::NodesReport;
use super::time::HubMs;
use super::trust::{ForgeryPage, Trust};
use crate::core::pairings::Rounds;
use crate::core::relay::public::{BroadcastSettings, LiveMove};

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

/// What an arbiter's pager needs (`hub pager --key-file`): the arbiter's name and own key
/// (their commands are sealed with it, their logins derive from it), the pager's MQTT login,
/// and the hub's public key its messages are signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArbiterEnrolment {
    pub arbiter: String,
    pub key: NodeKey,
    pub mqtt_user: String,
    pub mqtt_password: String,
    pub hub_key: String,
}

impl ArbiterEnrolment {
    /// Arbiter `name`'s, enrolled with `key` in the hall with secret `hall`.
    pub fn new(hall: &NodeKey, name: &str, key: NodeKey) -> ArbiterEnrolment {
        ArbiterEnrolment {
            arbiter: name.to_owned(),
            mqtt_user: protocol::identity::pager_user(&key),
            mqtt_password: protocol::identity::pager_password(&key),
            key,
            hub_key: pager_seal::HubSigner::from_hall(hall).public_hex(),
        }
    }

    /// As `POST /api/arbiters/enrol` answers and `hub pager --key-file` reads it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "arbiter": self.arbiter,
            "key": self.key.to_text(),
            "mqtt_user": self.mqtt_user,
            "mqtt_password": self.mqtt_password,
            "hub_key": self.hub_key,
        })
    }
}

/// What the journal holds, for [`Hub::restore`].
pub struct Journaled<R> {
    /// The rounds started, in order.
    pub rounds: Vec<RoundStart>,
    /// The games of finished rounds as the journal keeps them (tree `games`).
    pub games: Vec<PlayedGame>,
    /// Every board's events, each board's in sequence; a record that cannot be read is
    /// [`Replayed::Damaged`] in its place. Those of finished rounds may be left out where a
    /// round's start kept the board's node ([`Hub::resume_points`]): the archive has their
    /// games.
    pub records: R,
    /// Each board's first events (up to [`STREAM_HEAD`]) where `records` leaves them out:
    /// a node that starts again from 1 is still told apart from a resend.
    pub heads: Vec<Record>,
    pub decisions: Vec<DecisionRecord>,
    /// Every alert's latest state.
    pub alerts: Vec<Alert>,
    /// The technician's bindings over the API.
    pub bindings: BTreeMap<HardwareId, BoardNo>,
    /// Every enrolled node's key.
    pub enrolments: BTreeMap<HardwareId, NodeKey>,
    /// Every enrolled arbiter's key, by name.
    pub arbiters: BTreeMap<String, NodeKey>,
    /// The hall's secret, from which the hub's signing key derives; `None`: pager commands
    /// are taken unsealed (a hub without a journal: the alert report, tests).
    pub hall_secret: Option<NodeKey>,
}

/// One place in the journal's sequence of a board's events, as a restart reads it.
#[derive(Debug, Clone)]
pub enum Replayed {
    Record(Record),
    /// The record of this event cannot be read (a damaged disk).
    Damaged {
        board: BoardNo,
        seq: Seq,
    },
}

impl From<Record> for Replayed {
    fn from(record: Record) -> Replayed {
        Replayed::Record(record)
    }
}

/// What a restart found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// Records replayed.
    pub records: u64,
    pub boards: usize,
    /// Boards resumed where a round's start kept their node, their finished rounds' events
    /// not read.
    pub resumed: usize,
    pub alerts: usize,
    /// Alerts a crash had kept from being written, raised again.
    pub healed: usize,
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
    bindings: Bindings,
    trust: Trust,
    /// The arbiters enrolled, each with their own key.
    roster: Roster,
    /// The hall's secret: the hub's signing key derives from it.
    hall_secret: Option<NodeKey>,
    /// Signs what the pagers are told; from the hall's secret.
    signer: Option<pager_seal::HubSigner>,
    streams: Streams,
    pending: Pending,
    outputs: VecDeque<Output>,
    next_decision: DecisionId,
    /// The MQTT live feed's moves waiting for the broadcast delay: due, topic, move.
    feed_queue: VecDeque<(HubMs, String, LiveMove)>,
    /// Zones whose open list changed since it was last published, and when that was.
    stale_lists: BTreeSet<String>,
    lists_published_at: HubMs,
    /// Each board's next deadline for the desk.
    timers: Timers,
    /// Whether the round's scheduled start has been looked at for clocks not started.
    round_start_watched: bool,
    /// Up to when the rounds' scheduled starts have been looked at.
    schedule_checked: HubMs,
    /// The latest time the hub was given.
    now: HubMs,
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
            bindings: Bindings::new(config.bindings),
            trust: Trust::new(config.open_hall),
            roster: Roster::default(),
            hall_secret: None,
            signer: None,
            streams: Streams::default(),
            pending: Pending::default(),
            outputs: VecDeque::new(),
            next_decision: DecisionId(1),
            feed_queue: VecDeque::new(),
            stale_lists: BTreeSet::new(),
            lists_published_at: HubMs(0),
            timers: Timers::default(),
            round_start_watched: false,
            schedule_checked: HubMs(0),
            now: HubMs(0),
        };
        hub.round_changed();
        hub
    }

    /// Rebuilds the hall from the journal: each board's events in sequence, each arbiter's
    /// decision right after the board event it followed, then every zone's open list for
    /// the pagers that connect. What the replayed events make happen already happened
    /// once; only the alert desk sees them again, and raises only the incidents whose
    /// alert a crash kept from being written.
    pub fn restore<R>(&mut self, journaled: Journaled<R>) -> Restored
    where
        R: IntoIterator,
        R::Item: Into<Replayed>,
    {
        let alerts = journaled.alerts.len();
        self.desk.restore(journaled.alerts);
        for (hardware, board) in journaled.bindings {
            let _ = self.bindings.bind(&hardware, Some(board));
        }
        self.signer = journaled
            .hall_secret
            .as_ref()
            .map(pager_seal::HubSigner::from_hall);
        self.hall_secret = journaled.hall_secret;
        for (hardware, key) in journaled.enrolments {
            self.trust.restore(hardware, Some(key));
        }
        self.roster = Roster::restore(journaled.arbiters);
        self.trust.rebind_all(&self.bindings);
        self.next_decision = journaled
            .decisions
            .iter()
            .map(|d| d.id.next())
            .max()
            .unwrap_or(DecisionId(1));
        let mut decisions: BTreeMap<(BoardNo, Seq), Vec<DecisionRecord>> = BTreeMap::new();
        for decision in journaled.decisions {
            decisions
                .entry((decision.board, decision.after_seq))
                .or_default()
                .push(decision);
        }
        self.restore_rounds(journaled.rounds);
        // Boards resumed where a round started: their finished games from the archive,
        // their events before not read again.
        let resumed = self.resume_boards(journaled.games, journaled.heads);
        let before_resume =
            |board: BoardNo, seq: Seq| resumed.get(&board).is_some_and(|r| seq <= r.mark);
        decisions.retain(|(board, after), due| {
            due.retain(|d| {
                let taken_before = match (d.round, resumed.get(board)) {
                    (Some(round), Some(resume)) => round < resume.round,
                    (None, Some(resume)) => *after < resume.mark,
                    (_, None) => false,
                };
                !taken_before
            });
            !due.is_empty()
        });
        let mut healed = Vec::new();
        let mut records = 0;
        for replayed in journaled.records {
            let replayed = replayed.into();
            let (board, seq) = match &replayed {
                Replayed::Record(record) => (record.event.board, record.event.seq),
                Replayed::Damaged { board, seq } => (*board, *seq),
            };
            if before_resume(board, seq) {
                continue;
            }
            let record = match replayed {
                Replayed::Record(record) => record,
                Replayed::Damaged { board, seq } => {
                    self.catch_up_rounds(self.now, board, Some(seq));
                    healed.extend(self.damaged(board, seq));
                    continue;
                }
            };
            self.now = self.now.max(record.at);
            let (board, seq) = (record.event.board, record.event.seq);
            self.catch_up_rounds(record.at, board, Some(seq));
            self.streams.journaled(&record.event);
            for effect in self.hall.apply(&record) {
                if let Effect::OutOfSequence { board, seq } = effect {
                    tracing::error!(
                        board = board.0,
                        seq = seq.0,
                        "journal record out of sequence, skipped"
                    );
                    self.count(Count::JournalRecordSkipped);
                } else {
                    healed.extend(self.follow(record.at, &effect));
                }
            }
            records += 1;
            if let Some(due) = decisions.remove(&(board, seq)) {
                healed.extend(self.fold_decisions(due));
            }
        }
        // Decisions after events the journal lost (damaged records): in the order taken.
        let mut rest: Vec<DecisionRecord> = decisions.into_values().flatten().collect();
        rest.sort_by_key(|d| d.id);
        healed.extend(self.fold_decisions(rest));
        // Rounds that started after a board's last event.
        for board in self.hall.boards() {
            self.catch_up_rounds(self.now, board, None);
        }
        self.round_changed();
        self.hall.replayed();
        // The desk looks at each board when its deadline comes; nothing is looked at in
        // the past.
        for board in self.hall.boards() {
            let due = self.desk.board_deadline(self.now, &self.hall, board);
            self.timers.set(board, due);
        }
        let restored = Restored {
            records,
            boards: self.hall.len(),
            resumed: resumed.len(),
            alerts,
            healed: healed.len(),
        };
        self.record_alerts(healed, None);
        self.publish_open_lists(self.desk.routing().zone_names());
        restored
    }

    /// Journaled decisions through the hall, the relay and the desk.
    /// A board's event the journal cannot read: the board goes on after it (the node forgot
    /// it once acknowledged, so nobody can send it again), and the arbiter learns which event
    /// was lost and where the game stood.
    fn damaged(&mut self, board: BoardNo, seq: Seq) -> Vec<AlertChange> {
        tracing::error!(
            board = board.0,
            seq = seq.0,
            "journal record unreadable: the board goes on after it"
        );
        self.count(Count::JournalRecordSkipped);
        if !self.hall.skip_damaged(board, seq) {
            return Vec::new();
        }
        let plies = self.hall.board(board).map_or(0, |b| b.game().moves().len());
        let moves = u32::try_from(plies.div_ceil(2)).unwrap_or(u32::MAX);
        self.desk.on_journal_damaged(self.now, board, seq, moves)
    }

    fn fold_decisions(&mut self, due: Vec<DecisionRecord>) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        for decision in due {
            let board_round = self.hall.board(decision.board).map(|b| b.round());
            match (decision.round, board_round) {
                // Taken in a round that started right before it: the board goes on first.
                (Some(round), Some(now_playing)) if round > now_playing => {
                    let next = Seq(decision.after_seq.0 + 1);
                    self.catch_up_rounds(decision.at, decision.board, Some(next));
                }
                // Taken for a game of a round that is over.
                (Some(round), Some(now_playing)) if round < now_playing => {
                    if let Err(e) = self.decide_archived(round, &decision) {
                        tracing::error!(id = decision.id.0, error = %e, "journaled decision no longer fits");
                        self.count(Count::JournalRecordSkipped);
                    }
                    continue;
                }
                _ => {}
            }
            match self.hall.decide(&decision) {
                Ok(effects) => {
                    for effect in &effects {
                        changes.extend(self.follow(decision.at, effect));
                    }
                    self.relay.on_decision(&decision);
                    changes.extend(self.desk.on_decision(decision.at, &decision));
                }
                Err(e) => {
                    tracing::error!(id = decision.id.0, error = %e, "journaled decision no longer fits");
                    self.count(Count::JournalRecordSkipped);
                }
            }
        }
        changes
    }

    /// What follows the hall's effects on replay: the desk and the relay.
    fn follow(&mut self, at: HubMs, effect: &Effect) -> Vec<AlertChange> {
        self.relay.on_effect(at, effect);
        self.desk.on_effect(at, &self.hall, effect)
    }

    /// A board's event off the wire, its topic already checked against its board: taken
    /// only when sealed with the key of the board's node (see [`Trust`]); a refusal changes
    /// nothing but the counts, and a run of them alerts the technician.
    pub fn handle_sealed_uplink(&mut self, now: HubMs, sealed: Sealed<Uplink>) {
        self.now = self.now.max(now);
        let board = sealed.message.board;
        if let Err(refusal) = self.trust.check(&self.event, &sealed) {
            self.count(Count::Unauthenticated(board, refusal));
            // Only a board of the hall (a node enrolled for it, or a game on it) is worth a
            // technician's walk: forgeries in the name of any number a client can type are
            // counted, not paged.
            let of_the_hall =
                self.trust.board_key(board).is_some() || self.hall.board(board).is_some();
            // A flood (many boards' names at once) is one alert for the hall.
            let page = self
                .trust
                .refused(now, board)
                .filter(|_| of_the_hall)
                .and_then(|(since, refused)| self.trust.forgery_page(now, board, since, refused));
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
        self.handle_uplink(now, sealed.message);
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
        self.relay.on_effect(now, &effect);
        self.feed_move(now, &effect);
        let changes = self.desk.on_effect(now, &self.hall, &effect);
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

    /// An arbiter's decision at `board`: carried out and journaled; the answer waits for
    /// the flush.
    ///
    /// `round` names the game: the board's in play (`None`, or its round), or one of a round
    /// that is over, which takes only a result.
    pub fn handle_decision(
        &mut self,
        now: HubMs,
        request: RequestId,
        board: BoardNo,
        round: Option<RoundNo>,
        action: ArbiterAction,
    ) {
        self.now = self.now.max(now);
        let signed = arbiter::check_signature(&action.arbiter, action.note.as_deref());
        if let Err(e) = signed {
            self.reply(request, Reply::Decision(Err(e.into())));
            return;
        }
        let playing = self.hall.board(board).map(|b| b.round());
        let record = DecisionRecord {
            id: self.next_decision,
            board,
            at: now,
            after_seq: self.hall.board(board).map_or(Seq(0), |b| b.last_seq()),
            round: round.or(playing),
            action,
        };
        match (round, playing) {
            (Some(round), Some(playing)) if round < playing => {
                return self.decide_for_archive(request, round, record);
            }
            (Some(round), playing) if Some(round) != playing => {
                let refusal = DecisionError::NoGame(board, round);
                return self.reply(request, Reply::Decision(Err(refusal)));
            }
            _ => {}
        }
        let effects = match self.hall.decide(&record) {
            Ok(effects) => effects,
            Err(e) => {
                self.reply(request, Reply::Decision(Err(e)));
                return;
            }
        };
        let at = self.write(Write::Decision(record.clone()));
        self.next_decision = self.next_decision.next();
        tracing::info!(board = board.0, id = record.id.0, arbiter = %record.action.arbiter, decision = ?record.action.decision, "arbiter's decision");
        for effect in effects {
            self.carry_out(record.at, effect);
        }
        self.relay.on_decision(&record);
        let changes = self.desk.on_decision(record.at, &record);
        self.record_alerts(changes, None);
        self.watch(now, board);
        let change = self.desk.watch_round_end(now, &self.hall);
        self.record_alerts(change.into_iter().collect(), None);
        let entry = self
            .hall
            .board(board)
            .and_then(|b| b.decisions().last().cloned())
            .expect("the decision was just recorded");
        self.pending.wait(at, Deferred::Decision(request, entry));
        self.game_ended(now);
    }

    /// An arbiter's decision for a game of a round that is over: only its result changes.
    fn decide_for_archive(&mut self, request: RequestId, round: RoundNo, record: DecisionRecord) {
        let entry = match self.decide_archived(round, &record) {
            Ok(entry) => entry,
            Err(e) => return self.reply(request, Reply::Decision(Err(e))),
        };
        let at = self.write(Write::Decision(record.clone()));
        self.next_decision = self.next_decision.next();
        tracing::info!(board = record.board.0, round = round.0, id = record.id.0, arbiter = %record.action.arbiter, decision = ?record.action.decision, "arbiter's decision for a round that is over");
        let changes = self.desk.on_decision(record.at, &record);
        self.record_alerts(changes, None);
        self.pending.wait(at, Deferred::Decision(request, entry));
    }

    /// Carries out a decision on an archived game, and journals the game as it now is.
    fn decide_archived(
        &mut self,
        round: RoundNo,
        record: &DecisionRecord,
    ) -> Result<arbiter::AuditEntry, DecisionError> {
        let edition = self.hall.sections().of(record.board).rules.edition;
        let game = self
            .archive
            .get_mut(round, record.board)
            .ok_or(DecisionError::NoGame(record.board, round))?;
        let entry = game.decide(record, edition)?;
        let game = Box::new(game.clone());
        self.archive_changes += 1;
        let _ = self.write(Write::Game(game));
        Ok(entry)
    }

    /// An arbiter acknowledges or resolves an alert, from the API (`request`) or a pager
    /// (none: a refusal is counted). The answer waits until the change is durable; one that
    /// changes nothing (done before) is answered at once.
    pub fn handle_alert_command(
        &mut self,
        now: HubMs,
        request: Option<RequestId>,
        id: AlertId,
        command: AlertCommand,
    ) {
        self.now = self.now.max(now);
        let outcome = match arbiter::check_signature(&command.by, command.note.as_deref()) {
            Err(e) => Err(e.into()),
            Ok(()) => match command.action {
                AlertAction::Ack => self.desk.acknowledge(now, id, &command.by),
                AlertAction::Resolve => self.desk.resolve(now, id, &command.by, command.note),
            },
        };
        match (outcome, request) {
            (Ok(Some(change)), request) => self.record_alerts(vec![change], request),
            (Ok(None), Some(request)) => {
                let alert = self.desk.get(id).cloned().map(Box::new);
                self.reply(request, Reply::Alert(alert.ok_or(AlertError::Unknown(id))));
            }
            (Ok(None), None) => {}
            (Err(e), Some(request)) => self.reply(request, Reply::Alert(Err(e))),
            (Err(e), None) => {
                tracing::debug!(error = %e, "pager command refused");
                self.count(Count::PagerRefused(PagerRefusal::Malformed));
            }
        }
    }

    /// A command off the pagers' topic: taken only when sealed with the key of the enrolled
    /// arbiter it names and sent within [`PAGER_COMMAND_FRESH_MS`] (an open hall takes it
    /// unsealed). A refusal (a revoked arbiter's included) changes nothing and is counted.
    pub fn handle_pager_command(
        &mut self,
        now: HubMs,
        id: AlertId,
        command: AlertCommand,
        seal: Option<pager_seal::PagerSeal>,
    ) {
        self.now = self.now.max(now);
        if self.hall_secret.is_some() && !self.trust.open_hall() {
            let key = self.roster.key(&command.by);
            let genuine = seal.as_ref().zip(key).is_some_and(|(seal, key)| {
                now.0.abs_diff(seal.sent_ms) <= PAGER_COMMAND_FRESH_MS
                    && pager_seal::verify_command(key, &self.event, id, &command, seal)
            });
            if !genuine {
                tracing::debug!(id = id.0, by = %command.by, "pager command refused: not sealed by its arbiter");
                self.count(Count::PagerRefused(PagerRefusal::NotSealed));
                return;
            }
        }
        self.handle_alert_command(now, None, id, command);
    }

    /// The technician binds a node's e-board hardware to a board (`None`: unbinds it); the
    /// answer, the nodes' report, waits until it is durable.
    pub fn handle_binding(
        &mut self,
        now: HubMs,
        request: RequestId,
        hardware: &HardwareId,
        board: Option<BoardNo>,
    ) {
        self.now = self.now.max(now);
        let mut last = None;
        let left = self.bindings.board_of(hardware);
        for (hardware, board) in self.bindings.bind(hardware, board) {
            last = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left.into_iter().chain(board));
        tracing::info!(%hardware, ?board, "node bound");
        if let Some(at) = last {
            self.pending.wait(at, Deferred::Binding(request));
        }
    }

    /// The technician enrols a node's hardware for `board` in one step: a new key (`fresh`,
    /// which the shell drew at random; an earlier key of the hardware stops working) and the
    /// binding, so a node swapped in takes the board over. The answer, with the key, waits
    /// until both are durable.
    pub fn handle_enrolment(
        &mut self,
        now: HubMs,
        request: RequestId,
        hardware: &HardwareId,
        board: BoardNo,
        fresh: NodeKey,
    ) {
        self.now = self.now.max(now);
        let known = self.trust.key(hardware).is_some();
        self.trust.enrol(hardware, fresh.clone());
        let _ = self.write(Write::Enrolment {
            hardware: hardware.clone(),
            key: Some(fresh.clone()),
        });
        let key = fresh;
        let mut at = None;
        let left = self.bindings.board_of(hardware);
        for (hardware, board) in self.bindings.bind(hardware, Some(board)) {
            at = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left.into_iter().chain([board]));
        tracing::info!(%hardware, board = board.0, enrolled_before = known, "node enrolled");
        let enrolled = Enrolled {
            hardware: hardware.clone(),
            board,
            key,
        };
        let at = at.expect("binding writes at least the hardware's own");
        self.pending
            .wait(at, Deferred::Enrolment(request, enrolled));
    }

    /// The technician revokes a node's key: its hardware is unbound, and nothing sealed with
    /// the key is taken again. The answer, the nodes' report, waits until it is durable.
    pub fn handle_revocation(&mut self, now: HubMs, request: RequestId, hardware: &HardwareId) {
        self.now = self.now.max(now);
        self.trust.restore(hardware.clone(), None);
        let _ = self.write(Write::Enrolment {
            hardware: hardware.clone(),
            key: None,
        });
        let mut at = None;
        let left = self.bindings.board_of(hardware);
        for (hardware, board) in self.bindings.bind(hardware, None) {
            at = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left);
        tracing::warn!(%hardware, "node key revoked");
        let at = at.expect("unbinding writes the hardware's own");
        self.pending.wait(at, Deferred::Binding(request));
    }

    /// The key enrolled for `hardware`, for `hub enrol` on a hub that is not running.
    pub fn enrolled_key(&self, hardware: &HardwareId) -> Option<&NodeKey> {
        self.trust.key(hardware)
    }

    /// The chief arbiter enrols arbiter `name` with a new key (`fresh`, which the shell drew
    /// at random; an earlier key of the name stops working). The answer, the pager's
    /// credentials, waits until it is durable; `None` for a hub without a hall secret or a
    /// full roster.
    pub fn handle_arbiter_enrolment(
        &mut self,
        now: HubMs,
        request: RequestId,
        name: &str,
        fresh: NodeKey,
    ) {
        self.now = self.now.max(now);
        let Some(hall) = self
            .hall_secret
            .clone()
            .filter(|_| self.roster.has_room_for(name))
        else {
            self.reply(request, Reply::ArbiterEnrolled(None));
            return;
        };
        self.roster.enrol(name.to_owned(), fresh.clone());
        let at = self.write(Write::Arbiter {
            name: name.to_owned(),
            key: Some(fresh.clone()),
        });
        tracing::info!(arbiter = %name.escape_debug(), "arbiter enrolled");
        let enrolment = ArbiterEnrolment::new(&hall, name, fresh);
        self.pending
            .wait(at, Deferred::ArbiterEnrolled(request, Box::new(enrolment)));
    }

    /// The chief arbiter revokes arbiter `name`: their pager's login, page login and seal
    /// stop working. The answer, the arbiters still enrolled, waits until it is durable.
    pub fn handle_arbiter_revocation(&mut self, now: HubMs, request: RequestId, name: &str) {
        self.now = self.now.max(now);
        if !self.roster.revoke(name) {
            self.reply(request, Reply::Arbiters(self.roster.names()));
            return;
        }
        let at = self.write(Write::Arbiter {
            name: name.to_owned(),
            key: None,
        });
        tracing::info!(arbiter = %name.escape_debug(), "arbiter revoked");
        self.pending.wait(at, Deferred::Arbiters(request));
    }

    /// Every enrolled arbiter and their key: who the broker and the page let in.
    pub fn arbiters(&self) -> impl Iterator<Item = (&str, &NodeKey)> {
        self.roster.iter()
    }

    /// Everyone but the hub that an external broker must let in, as `username:password`
    /// lines for Mosquitto's `mosquitto_passwd -U` (README, *Security*): the pagers, the
    /// public reader and every enrolled node. The hub's own password is never among them:
    /// what the API serves must not let its reader log in as the hub (`hub broker-users` on
    /// the hub's machine adds it). `None` for a hub without a hall secret.
    pub fn broker_users(&self) -> Option<String> {
        use protocol::identity;
        let _ = self.hall_secret.as_ref()?;
        let mut lines = vec![format!(
            "{}:{}",
            identity::PUBLIC_USER,
            identity::PUBLIC_USER
        )];
        for (_, key) in self.roster.iter() {
            lines.push(format!(
                "{}:{}",
                identity::pager_user(key),
                identity::pager_password(key)
            ));
        }
        let mut nodes: Vec<_> = self.trust.boards().collect();
        nodes.sort_by_key(|(board, _)| *board);
        for (board, key) in nodes {
            lines.push(format!(
                "{}:{}",
                identity::node_user(board),
                identity::node_password(key)
            ));
        }
        Some(lines.join("\n") + "\n")
    }

    /// `json` with the hub's signature for the pagers, if the hub has a hall secret.
    /// `topic` is where it is published, `at` when it is signed.
    pub fn signed(&self, topic: &str, at: HubMs, json: Vec<u8>) -> Vec<u8> {
        match &self.signer {
            Some(signer) => signer.sign(topic, at.0, json),
            None => json,
        }
    }

    /// Every board with an enrolled node, and the node's key: who the broker lets in.
    pub fn enrolled_boards(&self) -> impl Iterator<Item = (BoardNo, &NodeKey)> {
        self.trust.boards()
    }

    /// The key of the node enrolled for `board`.
    pub fn board_key(&self, board: BoardNo) -> Option<&NodeKey> {
        self.trust.board_key(board)
    }

    /// The bindings or keys of `boards` changed: the keys their messages must carry, and
    /// the shell told.
    fn rebind(&mut self, boards: impl IntoIterator<Item = BoardNo>) {
        let boards: Vec<BoardNo> = boards.into_iter().collect();
        self.trust.rebind(&self.bindings, boards.iter().copied());
        self.outputs.push_back(Output::NodeKeys(boards));
    }

    /// Whether unsealed events are taken for boards nobody enrolled.
    pub fn open_hall(&self) -> bool {
        self.trust.open_hall()
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
                    self.stale_lists.insert(change.alert.zone.clone());
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
                    self.reply(request, Reply::ArbiterEnrolled(Some(*enrolment)));
                }
                Deferred::Arbiters(request) => {
                    self.reply(request, Reply::Arbiters(self.roster.names()));
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
        let feed = self.feed_queue.front().map(|(due, ..)| *due);
        let lists = (!self.stale_lists.is_empty())
            .then(|| self.lists_published_at.plus_ms(OPEN_LIST_EVERY_MS));
        let round = self
            .desk
            .round_start_deadline()
            .filter(|_| !self.round_start_watched);
        [
            self.timers.next(),
            self.desk.escalation_deadline(),
            round,
            self.next_scheduled_start(),
            feed,
            lists,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The time passes: the boards due are looked at, alerts nobody acknowledged escalate,
    /// the delayed live feed and the open lists go out. What is not due waits.
    pub fn handle_timeout(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        for board in self.timers.due(now) {
            self.watch(now, board);
        }
        let round_due = self.desk.round_start_deadline().is_some_and(|at| at <= now);
        if round_due && !self.round_start_watched {
            self.round_start_watched = true;
            let changes = self.desk.watch_round_start(now, &self.hall);
            self.record_alerts(changes, None);
        }
        let changes = self.desk.escalate(now);
        self.record_alerts(changes, None);
        if self.next_scheduled_start().is_some_and(|at| at <= now) {
            self.schedule_checked = now;
            self.start_when_due(now);
        }
        self.publish_stale_lists(now);
        self.publish_feed(now);
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

    /// Writes alert changes; each is published (and `request` answered with the last)
    /// once durable.
    fn record_alerts(&mut self, changes: Vec<AlertChange>, mut request: Option<RequestId>) {
        let last = changes.len().saturating_sub(1);
        for (i, change) in changes.into_iter().enumerate() {
            let at = self.write(Write::Alert(Box::new(change.alert.clone())));
            if change.change == Change::Raised {
                self.count(Count::AlertRaised);
                tracing::info!(id = change.alert.id.0, board = ?change.alert.board, kind = ?change.alert.kind, zone = %change.alert.zone, "alert raised");
            }
            let request = if i == last { request.take() } else { None };
            self.pending
                .wait(at, Deferred::Alert(Box::new(change), request));
        }
    }

    /// Every zone's open list again, signed at `now`: a pager that has seen no list for a
    /// while knows the one it shows may be stale, and a list recorded earlier is older than
    /// the one it holds.
    pub fn republish_open_lists(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        self.publish_open_lists(self.desk.routing().zone_names());
    }

    /// Republishes the open lists of the zones whose alerts changed, at most every
    /// [`OPEN_LIST_EVERY_MS`].
    fn publish_stale_lists(&mut self, now: HubMs) {
        if self.stale_lists.is_empty() || now.since(self.lists_published_at) < OPEN_LIST_EVERY_MS {
            return;
        }
        self.lists_published_at = now;
        let zones = std::mem::take(&mut self.stale_lists);
        self.publish_open_lists(zones);
    }

    fn publish_open_lists(&mut self, zones: impl IntoIterator<Item = String>) {
        for zone in zones {
            let alerts = self.desk.open_in_zone(&zone).cloned().collect();
            let topic = topic::open_alerts(&self.event, &zone);
            self.outputs.push_back(Output::OpenList {
                topic,
                zone,
                at: self.now,
                alerts,
            });
        }
    }

    /// Queues a move, or a game's end, for the MQTT live feed, due after the broadcast
    /// delay.
    fn feed_move(&mut self, now: HubMs, effect: &Effect) {
        use super::game::GameEvent;
        let Effect::Game { board, event } = effect else {
            return;
        };
        if !matches!(
            event,
            GameEvent::MoveCompleted { .. } | GameEvent::GameOver { .. }
        ) {
            return;
        }
        let round = self.hall.round_of(*board);
        if let Some(message) = LiveMove::of(&self.hall, *board, round) {
            let due = now.plus_ms(self.broadcast.delay_ms);
            let topic = topic::broadcast_move(&self.event, round.index(), *board);
            self.feed_queue.push_back((due, topic, message));
        }
        self.publish_feed(now);
    }

    /// Publishes the live feed's messages that are due.
    fn publish_feed(&mut self, now: HubMs) {
        while self.feed_queue.front().is_some_and(|(due, ..)| *due <= now) {
            let (_, topic, message) = self.feed_queue.pop_front().expect("a front");
            self.outputs.push_back(Output::LiveMove { topic, message });
        }
    }

    fn write(&mut self, write: Write) -> Position {
        let at = self.pending.next_position();
        self.outputs.push_back(Output::Write(at, write));
        at
    }

    /// A message to `board`'s node, sealed with its key (unsealed for a node never
    /// enrolled, which only an open hall has).
    fn downlink(&mut self, board: BoardNo, body: DownlinkBody) {
        let key = self.trust.board_key(board);
        let frame = seal::seal_downlink(key, &self.event, &Downlink::new(board, body));
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
        let mut report = super::setup::nodes(&self.hall, self.bindings.map(), &expected, now);
        report
            .warnings
            .extend(self.trust.refused_boards().map(|(board, refused, last)| {
                super::setup::Warning::RefusedMessages {
                    board,
                    refused,
                    last_ago_ms: now.since(last),
                }
            }));
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
