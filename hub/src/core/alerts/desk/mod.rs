//! The alert desk: board events, arbiters' decisions and the passing of time in; alert
//! changes out, for the hub to store and publish.
//!
//! - [`ledger`]: the alerts themselves: raised once per incident, updated, acknowledged,
//!   escalated, resolved or expired.
//! - [`from_events`]: what a board event or an arbiter's decision means for the arbiters
//!   (a flag fall, an illegal move, a paused clock: at once).
//! - [`watchers`]: what builds up over time at a board (time trouble, a flag about to fall,
//!   a silent node, a late player) and in the hall (the round's start and end), looked at
//!   when a board's events arrive and when its own deadline comes
//!   ([`AlertDesk::board_deadline`]), never by a scan of every board.
//!
//! Each incident has one alert, found again by its [`Incident`] key: a development updates
//! it, and an incident already handled is never raised again, so feeding the same events
//! twice (a restart) adds nothing.

mod from_events;
mod ledger;
mod open;
mod watchers;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use shakmaty::Board;

use super::catalogue::{AlertKind, Severity};
use super::routing::Routing;
use super::{Alert, AlertChange, AlertState, Deadline, Facts, Incident};
use crate::core::arbiter::Decision;
use crate::core::ids::{AlertId, BoardNo, IdMap, RoundNo};
use crate::core::laws::{Article, Rules};
use crate::core::time::HubMs;

/// When alerts are raised and escalated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    /// An alert nobody acknowledged goes to the chief arbiter after this long (ms), by
    /// severity; info alerts never escalate.
    pub escalate_urgent_ms: u64,
    pub escalate_high_ms: u64,
    pub escalate_normal_ms: u64,
    /// A flag forecast when the running side's flag falls within this (ms).
    pub flag_forecast_ms: u64,
    /// Time trouble below this much time (ms); `None`: the Laws' 8.4 (under five minutes
    /// without a 30-second increment), which in rapid is most of the game.
    pub time_trouble_ms: Option<u64>,
    /// Zone alert (12.4) when this many of its boards are in time trouble.
    pub zone_time_trouble_boards: usize,
    /// 6.7.1: the player whose clock ran this long without a move is late; `None` raises
    /// no late-arrival alerts (the hub sees the clock, not the player).
    pub allowed_lateness_ms: Option<u64>,
    /// A node not heard from for this long during a game is offline.
    pub node_silent_ms: u64,
    /// A running clock that has not reported for this long is silent.
    pub clock_silent_ms: u64,
    /// A paired board whose clock has not started this long after the round's scheduled
    /// start is for the arbiter (6.5).
    pub clock_start_ms: u64,
    /// A clock that changed by something no rule explains, or was set to other times before
    /// the first move, is for the arbiter once the difference reaches this plus the
    /// increment of the player's period (ms); smaller ones stay in the board's
    /// `deviations`. A clock set without its increment or its next period is for the
    /// arbiter whatever the size.
    pub clock_tolerance_ms: u64,
}

/// [`AlertSettings::clock_tolerance_ms`] by default. The real broadcasts, replayed as a
/// node reports them (`hub alert-report`), show the noise of clocks and their relays: whole
/// seconds, a reading taken before the press added the increment (one increment off),
/// think times stamped a few seconds late; most unexplained changes under a minute are
/// within one increment and ten seconds. An arbiter's own corrections are a minute or more
/// (a penalty, 7.5.5), and those the arbiter enters as decisions are expected, not raised.
pub const CLOCK_TOLERANCE_MS: u64 = 10_000;

impl Default for AlertSettings {
    fn default() -> AlertSettings {
        AlertSettings {
            escalate_urgent_ms: 30_000,
            escalate_high_ms: 60_000,
            escalate_normal_ms: 180_000,
            flag_forecast_ms: 15_000,
            time_trouble_ms: None,
            zone_time_trouble_boards: 3,
            allowed_lateness_ms: None,
            node_silent_ms: crate::core::board::NODE_SILENT_MS,
            clock_silent_ms: 15_000,
            clock_start_ms: 60_000,
            clock_tolerance_ms: CLOCK_TOLERANCE_MS,
        }
    }
}

impl AlertSettings {
    fn escalate_after(&self, severity: Severity) -> Option<u64> {
        match severity {
            Severity::Urgent => Some(self.escalate_urgent_ms),
            Severity::High => Some(self.escalate_high_ms),
            Severity::Normal => Some(self.escalate_normal_ms),
            Severity::Info => None,
        }
    }
}

/// Why an arbiter's acknowledgement or resolution got no alert.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlertError {
    #[error("no alert {0}")]
    Unknown(AlertId),
    /// The arbiter's name or note is too long to keep.
    #[error(transparent)]
    TooLong(#[from] crate::core::arbiter::TextTooLong),
    /// A phone's button that is not this arbiter's for this alert (or a revoked one's).
    #[error("this button is not the arbiter's for alert {0}")]
    NotTheirs(AlertId),
    /// An arbiter's own login acts on the alerts of the zones they watch only.
    #[error("alert {id} is in zone {zone}, not one of {arbiter}'s: an arbiter of that zone, or the chief arbiter, answers it")]
    OutOfZone {
        id: AlertId,
        zone: String,
        arbiter: String,
    },
}

/// What a new alert is about, before it has an id.
struct Draft {
    incident: Incident,
    board: Option<BoardNo>,
    zone: String,
    severity: Severity,
    article: Option<Article>,
    facts: Facts,
    deadline: Option<Deadline>,
}

/// The condition a watcher's alert is about: one open alert each.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Watched {
    /// `None`: the zone's own (zone time trouble).
    board: Option<BoardNo>,
    zone: String,
    kind: AlertKind,
    /// Which of the kind's conditions at the board (a flag forecast's side).
    sub: u8,
}

/// A condition at a board as a watcher sees it now: on or off, and what its alert says.
struct Watch {
    kind: AlertKind,
    sub: u8,
    on: bool,
    facts: Facts,
    deadline: Option<Deadline>,
    /// What the alert says when the condition clears by itself.
    cleared: &'static str,
    /// The kind's own severity unless given.
    severity: Option<Severity>,
}

/// The open alert of each watched condition, found by condition, by alert and by board in
/// constant time: a hall of 10,000 boards is watched board by board, and closing an alert
/// or asking whether a board has one must not look at every other board's. A condition is
/// found among its board's few (the zones' own among the zones'), compared where it lies:
/// each event asks about five conditions at its board, and without making each one's key
/// (its zone's name) to hash it the watchers took half the time in a saturated hall.
#[derive(Debug, Clone, Default)]
struct WatchedAlerts {
    by_alert: IdMap<AlertId, Watched>,
    /// Each board's open watched conditions (`None`: the zones' own), never empty.
    by_board: IdMap<Option<BoardNo>, Vec<(Watched, AlertId)>>,
}

impl WatchedAlerts {
    fn get(&self, condition: &Watched) -> Option<AlertId> {
        self.find(condition.board, |c| c == condition)
    }

    /// The open alert of the condition at `board` that `is` picks.
    fn find(&self, board: Option<BoardNo>, is: impl Fn(&Watched) -> bool) -> Option<AlertId> {
        let watched = self.by_board.get(&board)?;
        watched.iter().find(|(c, _)| is(c)).map(|(_, id)| *id)
    }

    fn insert(&mut self, condition: Watched, id: AlertId) {
        self.by_alert.insert(id, condition.clone());
        let watched = self.by_board.entry(condition.board).or_default();
        match watched.iter_mut().find(|(c, _)| *c == condition) {
            Some((_, replaced)) => {
                self.by_alert.remove(replaced);
                *replaced = id;
            }
            None => watched.push((condition, id)),
        }
    }

    /// Alert `id` closed: its condition is no longer watched.
    fn remove(&mut self, id: AlertId) {
        let Some(condition) = self.by_alert.remove(&id) else {
            return;
        };
        if let Some(watched) = self.by_board.get_mut(&condition.board) {
            watched.retain(|(c, _)| *c != condition);
            if watched.is_empty() {
                self.by_board.remove(&condition.board);
            }
        }
    }

    /// Whether `board` has an open watched alert.
    fn any_at(&self, board: Option<BoardNo>) -> bool {
        self.by_board.contains_key(&board)
    }
}

#[derive(Debug, Clone)]
pub struct AlertDesk {
    settings: AlertSettings,
    routing: Routing,
    rules: Rules,
    alerts: BTreeMap<AlertId, Alert>,
    /// Every incident that has had an alert.
    incidents: HashMap<Incident, AlertId>,
    open: open::OpenAlerts,
    /// The open alert of each watched condition.
    watched: WatchedAlerts,
    next_id: AlertId,
    /// "White – Black" by board, for the round in play.
    players: BTreeMap<BoardNo, String>,
    /// The round in play, and when it is scheduled to start.
    round: RoundNo,
    round_start: Option<HubMs>,
    /// The round each board plays and its rules (its section's), as last seen: its
    /// incidents are that game's.
    board_rounds: BTreeMap<BoardNo, (RoundNo, Rules)>,
    /// The boards of the round in play whose game is to be played (not a forfeit or a bye
    /// the pairing file already scored).
    round_boards: Vec<BoardNo>,
    /// Per zone, its boards in time trouble (12.4 counts them).
    in_trouble: BTreeMap<String, BTreeSet<BoardNo>>,
    /// Alerts nobody acknowledged yet, by when they escalate: (hub ms, id).
    escalations: BTreeSet<(u64, AlertId)>,
    /// The last step's [`super::Step::seq`].
    last_step: u64,
}

/// `ms` in whole seconds, rounded half away from zero.
fn rounded_seconds(ms: i64) -> i64 {
    (ms + ms.signum() * 500) / 1000
}

/// The move number (1, 2, …) of the move after `ply` completed half-moves.
fn move_number(ply: usize) -> u32 {
    u32::try_from(ply / 2 + 1).unwrap_or(u32::MAX)
}

impl AlertDesk {
    pub fn new(settings: AlertSettings, routing: Routing, rules: Rules) -> AlertDesk {
        AlertDesk {
            settings,
            routing,
            rules,
            alerts: BTreeMap::new(),
            incidents: HashMap::new(),
            open: open::OpenAlerts::default(),
            watched: WatchedAlerts::default(),
            next_id: AlertId(1),
            players: BTreeMap::new(),
            round: RoundNo::FIRST,
            round_start: None,
            board_rounds: BTreeMap::new(),
            round_boards: Vec::new(),
            in_trouble: BTreeMap::new(),
            escalations: BTreeSet::new(),
            last_step: 0,
        }
    }

    /// The number of the next step of any alert's history.
    pub(super) fn next_step(&mut self) -> u64 {
        self.last_step += 1;
        self.last_step
    }

    /// Who plays at each board: new alerts name the players.
    pub fn set_players(&mut self, players: BTreeMap<BoardNo, String>) {
        self.players = players;
    }

    /// The round in play: its number, its scheduled start and the boards whose games are
    /// to be played.
    pub fn set_round(&mut self, round: RoundNo, start: Option<HubMs>, boards: Vec<BoardNo>) {
        self.round = round;
        self.round_start = start;
        self.round_boards = boards;
    }

    /// `board` begins its game of `round`: what was watched in the old game ends with it.
    /// The old game's incidents keep their alerts, which an arbiter may still resolve.
    pub fn new_game(&mut self, now: HubMs, board: BoardNo, round: RoundNo) -> Vec<AlertChange> {
        let mut changes = self.close_where(
            now,
            board,
            AlertState::Expired,
            None,
            "the board's next round began",
            |a| a.incident.round != round && a.kind.lifetime().next_game,
        );
        let rules = self.rules_of(board);
        self.board_rounds.insert(board, (round, rules));
        changes.extend(self.count_trouble(now, board, false));
        changes
    }

    /// The forced start of `undone` is taken back: `board` plays its game of `round` again.
    /// What was raised in the game the start began ends with it; what was watched in the
    /// game given back is watched again.
    pub fn start_undone(
        &mut self,
        now: HubMs,
        board: BoardNo,
        undone: RoundNo,
        round: RoundNo,
    ) -> Vec<AlertChange> {
        let mut changes = self.close_where(
            now,
            board,
            AlertState::Expired,
            None,
            "the round's forced start was undone",
            |a| a.incident.round == undone,
        );
        changes.extend(self.new_game(now, board, round));
        changes
    }

    /// The round `board`'s incidents are of.
    pub(super) fn round_of(&self, board: BoardNo) -> RoundNo {
        self.board_rounds
            .get(&board)
            .map_or(self.round, |(round, _)| *round)
    }

    /// The rules `board` plays under: its section's.
    pub(super) fn rules_of(&self, board: BoardNo) -> Rules {
        self.board_rounds
            .get(&board)
            .map_or(self.rules, |(_, rules)| *rules)
    }

    /// Notes the round and the rules of `state`'s board.
    pub(super) fn seen(&mut self, state: &crate::core::board::BoardState) {
        let board = state.number();
        self.board_rounds
            .insert(board, (state.round(), state.rules()));
    }

    /// Takes back the alerts stored before a restart, exactly as they were; steps of
    /// journals older than phones are numbered after the others, in the order they were
    /// taken.
    pub fn restore(&mut self, alerts: impl IntoIterator<Item = Alert>) {
        let mut alerts: Vec<Alert> = alerts.into_iter().collect();
        self.last_step = alerts
            .iter()
            .flat_map(|a| a.history.iter().map(|s| s.seq))
            .max()
            .unwrap_or(0);
        let mut unnumbered: Vec<(u64, AlertId, usize)> = alerts
            .iter()
            .flat_map(|a| {
                a.history
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.seq == 0)
                    .map(move |(i, s)| (s.at, a.id, i))
            })
            .collect();
        unnumbered.sort_unstable();
        let index: HashMap<AlertId, usize> =
            alerts.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
        for (_, id, step) in unnumbered {
            let seq = self.next_step();
            alerts[index[&id]].history[step].seq = seq;
        }
        for alert in alerts {
            self.next_id = self.next_id.max(alert.id.next());
            self.incidents.insert(alert.incident, alert.id);
            for repeat in &alert.repeats {
                self.incidents.insert(*repeat, alert.id);
            }
            if alert.state.is_open() {
                self.open.insert(alert.id, alert.board);
                if let Some(key) = watched_key(&alert) {
                    self.watched.insert(key, alert.id);
                }
                if let (AlertKind::TimeTrouble, Some(board)) = (alert.kind, alert.board) {
                    self.in_trouble
                        .entry(alert.zone.clone())
                        .or_default()
                        .insert(board);
                }
                self.schedule_escalation(&alert);
            }
            self.alerts.insert(alert.id, alert);
        }
    }

    pub fn routing(&self) -> &Routing {
        &self.routing
    }

    pub fn get(&self, id: AlertId) -> Option<&Alert> {
        self.alerts.get(&id)
    }

    /// Every alert, oldest first.
    pub fn alerts(&self) -> impl Iterator<Item = &Alert> {
        self.alerts.values()
    }

    /// The open alerts of `zone`: what a pager that connects must see at once.
    pub fn open_in_zone<'a>(&'a self, zone: &'a str) -> impl Iterator<Item = &'a Alert> + 'a {
        self.open
            .iter()
            .filter_map(|id| self.alerts.get(id))
            .filter(move |a| a.zone == zone)
    }
}

/// The key of the condition a restored alert watches, for the kinds the watchers raise.
fn watched_key(alert: &Alert) -> Option<Watched> {
    if !alert.kind.lifetime().watched {
        return None;
    }
    let sub = match alert.kind {
        AlertKind::FlagForecast => alert.incident.occurrence.sub(),
        _ => 0,
    };
    Some(Watched {
        board: alert.board,
        zone: alert.zone.clone(),
        kind: alert.kind,
        sub,
    })
}

/// Whether the board shows the start position turned round (7.2.2, the board placed
/// contrary to 2.1).
fn is_start_turned(sensed: &Board) -> bool {
    let mut turned = Board::default();
    turned.rotate_180();
    *sensed == turned
}

fn describe(decision: &Decision) -> String {
    match decision {
        Decision::Reinstate { ply } => format!("position after {ply} half-moves reinstated"),
        Decision::Result { result, cause } => match cause {
            Some(cause) => format!("result {} ({})", result.code(), cause.name()),
            None => format!("result {}", result.code()),
        },
        Decision::ClaimRejected { by } => format!("claim by {by:?} rejected"),
        Decision::AdjustTime { side, ms, .. } => format!("{side:?}'s clock {ms:+} ms"),
        Decision::Order { from_ply, moves } => {
            let sans: Vec<String> = moves.iter().map(ToString::to_string).collect();
            format!("order from ply {from_ply}: {}", sans.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alerts::{sample, Change, Step};

    fn step(at: u64, seq: u64) -> Step {
        Step {
            at,
            seq,
            change: Change::Raised,
            by: None,
            note: None,
        }
    }

    #[test]
    fn steps_of_a_journal_older_than_phones_are_numbered_after_the_others_in_time_order() {
        let mut desk = AlertDesk::new(
            AlertSettings::default(),
            Routing::default(),
            Rules::default(),
        );
        let mut old = sample(1);
        old.history = vec![step(5, 0), step(9, 0)];
        let mut numbered = sample(2);
        numbered.history = vec![step(7, 3)];
        let mut older = sample(3);
        older.history = vec![step(1, 0)];
        desk.restore([old, numbered, older]);
        let seqs = |id: u64| -> Vec<u64> {
            desk.get(AlertId(id))
                .unwrap()
                .history
                .iter()
                .map(|s| s.seq)
                .collect()
        };
        assert_eq!((seqs(1), seqs(2), seqs(3)), (vec![5, 6], vec![3], vec![4]));
        assert_eq!(desk.next_step(), 7, "the next change follows them");
    }
}
