//! The hub's core driven as the shell drives it, with a journal that flushes at once: what
//! the tests of alerts, decisions and the feed feed events to and read from.

use std::collections::BTreeMap;

use hub::core::alerts::desk::AlertError;
use hub::core::alerts::{AlertAction, AlertChange, AlertCommand};
use hub::core::arbiter::{ArbiterAction, AuditEntry, DecisionError, DecisionRecord};
use hub::core::hub::{Hub, HubConfig, Journaled, Output, Reply, RequestId, Write};
use hub::core::ids::{AlertId, RoundNo};
use hub::core::pairings::RoundState;
use hub::core::record::Record;
use hub::core::rounds::StartError;
use hub::core::time::HubMs;
use protocol::{BoardNo, DownlinkBody, Uplink};

/// A [`Hub`] whose writes are durable as soon as they are made.
pub struct TestHub {
    hub: Hub,
    config: HubConfig,
    /// Everything written, in order: what a restart restores from.
    journal: Vec<Write>,
    next_request: u64,
    /// What the last call sent to nodes.
    pub downlinks: Vec<(BoardNo, DownlinkBody)>,
    /// What the last call published (topic, JSON).
    pub published: Vec<(String, Vec<u8>)>,
}

impl TestHub {
    /// A new hub on an empty journal, which it begins as `hub serve` does (the round it
    /// begins in journaled).
    pub fn new(config: HubConfig) -> TestHub {
        let mut hub = TestHub::unrestored(config);
        let _ = hub.hub.restore(Journaled {
            rounds: Vec::new(),
            games: Vec::new(),
            heads: Vec::new(),
            records: Vec::<Record>::new(),
            decisions: Vec::new(),
            alerts: Vec::new(),
            bindings: BTreeMap::new(),
            enrolments: BTreeMap::new(),
            arbiters: BTreeMap::new(),
            hall_secret: None,
        });
        hub.settle(HubMs(0));
        hub
    }

    fn unrestored(config: HubConfig) -> TestHub {
        TestHub {
            hub: Hub::new(config.clone()),
            config,
            journal: Vec::new(),
            next_request: 0,
            downlinks: Vec::new(),
            published: Vec::new(),
        }
    }

    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    pub fn hub_mut(&mut self) -> &mut Hub {
        &mut self.hub
    }

    pub fn hall(&self) -> &hub::core::hall::Hall {
        self.hub.hall()
    }

    pub fn desk(&self) -> &hub::core::alerts::AlertDesk {
        self.hub.desk()
    }

    /// A node's event arrives at `now`; the alert changes it made.
    pub fn uplink(&mut self, now: HubMs, event: Uplink) -> Vec<AlertChange> {
        self.hub.handle_uplink(now, event);
        self.settle(now).0
    }

    /// A frame off the wire arrives at `now`, to be taken only if its seal holds; the alert
    /// changes it made.
    pub fn sealed_uplink(&mut self, now: HubMs, frame: &[u8]) -> Vec<AlertChange> {
        let sealed = protocol::seal::open_uplink(frame).expect("a frame of our protocol");
        self.hub.handle_sealed_uplink(now, sealed);
        self.settle(now).0
    }

    /// The technician enrols `hardware` for `board` with `key` at `now`.
    pub fn enrol(
        &mut self,
        now: HubMs,
        hardware: &str,
        board: BoardNo,
        key: protocol::seal::NodeKey,
    ) {
        let request = self.request();
        let hardware = hub::core::ids::HardwareId::from(hardware);
        self.hub
            .handle_enrolment(now, request, &hardware, board, key);
        self.settle(now);
    }

    /// The time passes to `now`; the alert changes it made.
    pub fn tick(&mut self, now: HubMs) -> Vec<AlertChange> {
        self.hub.handle_timeout(now);
        self.settle(now).0
    }

    /// An arbiter decides at `board`; the answer and the alert changes.
    pub fn decide(
        &mut self,
        now: HubMs,
        board: BoardNo,
        action: ArbiterAction,
    ) -> (Result<AuditEntry, DecisionError>, Vec<AlertChange>) {
        self.decide_in(now, board, None, action)
    }

    /// An arbiter decides at `board` for its game of `round` (`None`: the one it plays).
    pub fn decide_in(
        &mut self,
        now: HubMs,
        board: BoardNo,
        round: Option<RoundNo>,
        action: ArbiterAction,
    ) -> (Result<AuditEntry, DecisionError>, Vec<AlertChange>) {
        let request = self.request();
        self.hub
            .handle_decision(now, request, board, round, action, None);
        let (changes, replies) = self.settle(now);
        match replies.into_iter().find(|(r, _)| *r == request) {
            Some((_, Reply::Decision(answer))) => (answer, changes),
            other => panic!("a decision's answer, not {other:?}"),
        }
    }

    /// A round starts on `start`; the answer (the rounds, or why not).
    pub fn start_round(
        &mut self,
        now: HubMs,
        start: hub::core::hub::StartRequest,
    ) -> Result<Vec<RoundState>, StartError> {
        let request = self.request();
        self.hub.handle_round_start(now, request, start);
        self.rounds_answer(now, request)
    }

    /// The chief's undo of a forced start; the answer.
    pub fn undo_start(
        &mut self,
        now: HubMs,
        undo: hub::core::hub::UndoRequest,
    ) -> Result<Vec<RoundState>, StartError> {
        let request = self.request();
        self.hub.handle_start_undo(now, request, undo);
        self.rounds_answer(now, request)
    }

    fn rounds_answer(
        &mut self,
        now: HubMs,
        request: RequestId,
    ) -> Result<Vec<RoundState>, StartError> {
        match self.settle(now).1.into_iter().find(|(r, _)| *r == request) {
            Some((_, Reply::RoundStarted(answer))) => answer,
            other => panic!("a round start's answer, not {other:?}"),
        }
    }

    /// An arbiter acknowledges alert `id`: the change, `None` when there was nothing to
    /// change, as the desk answers.
    pub fn acknowledge(
        &mut self,
        now: HubMs,
        id: AlertId,
        by: &str,
    ) -> Result<Option<AlertChange>, AlertError> {
        self.alert_command(now, id, AlertAction::Ack, by, None)
    }

    /// An arbiter resolves alert `id`, as [`TestHub::acknowledge`].
    pub fn resolve(
        &mut self,
        now: HubMs,
        id: AlertId,
        by: &str,
        note: Option<String>,
    ) -> Result<Option<AlertChange>, AlertError> {
        self.alert_command(now, id, AlertAction::Resolve, by, note)
    }

    fn alert_command(
        &mut self,
        now: HubMs,
        id: AlertId,
        action: AlertAction,
        by: &str,
        note: Option<String>,
    ) -> Result<Option<AlertChange>, AlertError> {
        let request = self.request();
        let command = AlertCommand {
            action,
            by: by.to_owned(),
            note,
        };
        self.hub
            .handle_alert_command(now, Some(request), id, command, None);
        let (mut changes, replies) = self.settle(now);
        match replies.into_iter().find(|(r, _)| *r == request) {
            Some((_, Reply::Alert(answer))) => answer.map(|_| changes.pop()),
            other => panic!("an alert's answer, not {other:?}"),
        }
    }

    /// A hub restarted from this one's journal, as `hub serve` restarts; the alert
    /// changes the restore made (alerts a crash had kept from being written).
    pub fn restarted(&self) -> (TestHub, Vec<AlertChange>) {
        let mut records: Vec<Record> = Vec::new();
        let mut decisions: Vec<DecisionRecord> = Vec::new();
        let mut alerts = BTreeMap::new();
        let mut bindings = BTreeMap::new();
        let mut enrolments = BTreeMap::new();
        let mut arbiters = BTreeMap::new();
        let mut rounds = Vec::new();
        let mut games = BTreeMap::new();
        for write in &self.journal {
            match write {
                Write::Event(record) => records.push(record.clone()),
                Write::Decision(decision) => decisions.push(decision.clone()),
                Write::Alert(alert) => {
                    alerts.insert(alert.id, (**alert).clone());
                }
                Write::Binding { hardware, board } => match board {
                    Some(board) => drop(bindings.insert(hardware.clone(), *board)),
                    None => drop(bindings.remove(hardware)),
                },
                Write::Enrolment { hardware, key } => match key {
                    Some(key) => drop(enrolments.insert(hardware.clone(), key.clone())),
                    None => drop(enrolments.remove(hardware)),
                },
                Write::Arbiter { name, member } => match member {
                    Some(member) => drop(arbiters.insert(name.clone(), member.clone())),
                    None => drop(arbiters.remove(name)),
                },
                Write::RoundStart(start) => rounds.push(start.clone()),
                Write::Game(game) => drop(games.insert((game.round, game.board), (**game).clone())),
            }
        }
        // The journal holds each board's events together, in sequence.
        records.sort_by_key(|r| (r.event.board, r.event.seq));
        let mut restarted = TestHub::unrestored(self.config.clone());
        let now = self.hub.latest();
        let heads = records
            .iter()
            .filter(|r| r.event.seq.0 <= hub::core::hub::STREAM_HEAD)
            .cloned()
            .collect();
        let _ = restarted.hub.restore(Journaled {
            rounds,
            games: games.into_values().collect(),
            heads,
            records,
            decisions,
            alerts: alerts.into_values().collect(),
            bindings,
            enrolments,
            arbiters,
            hall_secret: None,
        });
        let changes = restarted.settle(now).0;
        (restarted, changes)
    }

    fn request(&mut self) -> RequestId {
        self.next_request += 1;
        RequestId(self.next_request)
    }

    /// Carries out the outputs, the journal flushing each write at once: the alert changes
    /// published, and the answers.
    fn settle(&mut self, now: HubMs) -> (Vec<AlertChange>, Vec<(RequestId, Reply)>) {
        self.downlinks.clear();
        self.published.clear();
        let mut changes = Vec::new();
        let mut replies = Vec::new();
        for output in self.hub.poll_all_durable(now) {
            match output {
                Output::Write(_, write) => self.journal.push(write),
                Output::AlertChanged(change) => changes.push(*change),
                Output::Reply(request, reply) => replies.push((request, reply)),
                Output::Downlink(board, body, _) => self.downlinks.push((board, body)),
                Output::LiveMove { topic, message } => {
                    let json = serde_json::to_vec(&message).expect("a live move as JSON");
                    self.published.push((topic, json));
                }
                Output::OpenList { .. } => {}
                Output::Count(_) | Output::NodeKeys(_) => {}
            }
        }
        (changes, replies)
    }
}
