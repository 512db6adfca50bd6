//! The alert desk: board events, arbiters' decisions and the passing of time in; alert
//! changes out, for the shell to store and publish.
//!
//! Events raise alerts at once (a flag fall, an illegal move, a paused clock). Conditions
//! that build up over time (time trouble, a flag about to fall, a silent node, a late
//! player) and escalation are looked at by [`AlertDesk::tick`]. Each incident has one
//! alert, found again by its [`Incident`] key: a development updates it, and an incident
//! already handled is never raised again, so feeding the same events twice (a restart) adds
//! nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use shakmaty::{Board, Color};

use super::catalogue::{AlertKind, Severity};
use super::routing::{Routing, HALL_ZONE};
use super::texts::{self, Language};
use super::{Alert, AlertChange, AlertState, Change, Deadline, Facts, Incident, Stamp, Step};
use crate::core::arbiter::{Decision, DecisionRecord, GameResult, Side, TimeReason};
use crate::core::board::BoardState;
use crate::core::clock::{ClockEvent, DeviationKind};
use crate::core::ending::Status;
use crate::core::game::{GameEvent, IllegalKind};
use crate::core::hall::{Effect, Hall};
use crate::core::laws::{GameType, Penalty, Rules};
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
    Unknown(u64),
}

/// What a new alert is about, before it has an id.
struct Draft {
    incident: Incident,
    board: Option<u16>,
    zone: String,
    severity: Severity,
    article: Option<&'static str>,
    facts: Facts,
    deadline: Option<Deadline>,
}

/// The condition an alert raised by [`AlertDesk::tick`] watches: one open alert each.
type Watched = (Option<u16>, String, AlertKind, u8);

#[derive(Debug, Clone)]
pub struct AlertDesk {
    settings: AlertSettings,
    routing: Routing,
    rules: Rules,
    alerts: BTreeMap<u64, Alert>,
    /// Every incident that has had an alert.
    incidents: HashMap<Incident, u64>,
    open: BTreeSet<u64>,
    /// The open alert of each watched condition.
    watched: HashMap<Watched, u64>,
    next_id: u64,
    /// "White – Black" by board, for the round in play.
    players: BTreeMap<u16, String>,
    /// When the round in play is scheduled to start.
    round_start: Option<HubMs>,
    /// The boards of the round in play whose game is to be played (not a forfeit or a bye
    /// the pairing file already scored).
    round_boards: Vec<u16>,
}

fn side(color: Color) -> Side {
    match color {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
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
            open: BTreeSet::new(),
            watched: HashMap::new(),
            next_id: 1,
            players: BTreeMap::new(),
            round_start: None,
            round_boards: Vec::new(),
        }
    }

    /// Who plays at each board: new alerts name the players.
    pub fn set_players(&mut self, players: BTreeMap<u16, String>) {
        self.players = players;
    }

    /// The round in play: its scheduled start and the boards whose games are to be played.
    pub fn set_round(&mut self, start: Option<HubMs>, boards: Vec<u16>) {
        self.round_start = start;
        self.round_boards = boards;
    }

    /// Takes back the alerts stored before a restart, exactly as they were.
    pub fn restore(&mut self, alerts: impl IntoIterator<Item = Alert>) {
        for alert in alerts {
            self.next_id = self.next_id.max(alert.id + 1);
            self.incidents.insert(alert.incident, alert.id);
            if alert.state.is_open() {
                self.open.insert(alert.id);
                if let Some(key) = watched_key(&alert) {
                    self.watched.insert(key, alert.id);
                }
            }
            self.alerts.insert(alert.id, alert);
        }
    }

    pub fn routing(&self) -> &Routing {
        &self.routing
    }

    pub fn get(&self, id: u64) -> Option<&Alert> {
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

    /// What a board event means for the arbiters.
    pub fn on_effect(&mut self, now: HubMs, hall: &Hall, effect: &Effect) -> Vec<AlertChange> {
        let (board_no, state) = match effect {
            Effect::Game { board, .. } | Effect::Clock { board, .. } => match hall.board(*board) {
                Some(state) => (board.0, state),
                None => return Vec::new(),
            },
            Effect::Ack { .. } | Effect::OutOfSequence { .. } => return Vec::new(),
        };
        let mut changes = Vec::new();
        match effect {
            Effect::Game { event, .. } => self.on_game(now, board_no, state, event, &mut changes),
            Effect::Clock { event, .. } => {
                self.on_clock(now, board_no, state, event, &mut changes);
            }
            _ => {}
        }
        changes
    }

    fn on_game(
        &mut self,
        now: HubMs,
        board: u16,
        state: &BoardState,
        event: &GameEvent,
        changes: &mut Vec<AlertChange>,
    ) {
        let edition = self.rules.edition;
        match event {
            GameEvent::IllegalMove(illegal) => {
                let lost = illegal.ruling.penalty == Penalty::GameLost;
                let kind = match illegal.kind {
                    _ if lost => AlertKind::SecondIllegalMove,
                    IllegalKind::IllegalMove => AlertKind::IllegalMove,
                    IllegalKind::PromotionWithoutPiece => AlertKind::PromotionWithoutPiece,
                    IllegalKind::PressWithoutMove => AlertKind::PressWithoutMove,
                };
                let seconds = match illegal.ruling.penalty {
                    Penalty::TimeToOpponent { seconds } => Some(u64::from(seconds)),
                    _ => None,
                };
                let facts = Facts {
                    side: Some(side(illegal.by)),
                    result: illegal.result_if_applied.map(str::to_owned),
                    seconds,
                    move_number: Some(move_number(illegal.ply)),
                    ..Facts::default()
                };
                let deadline = illegal
                    .ruling
                    .until_opponents_next_move
                    .then_some(Deadline::OpponentsNextMove);
                let occurrence = (illegal.ply as u64) << 8 | u64::from(illegal.nth);
                let draft = self.draft(board, kind, occurrence, Some(illegal.ruling.article));
                changes.extend(self.raise(
                    now,
                    Draft {
                        facts,
                        deadline,
                        ..draft
                    },
                ));
            }
            GameEvent::IllegalMoveStood { ply } => {
                let stood = |a: &Alert| {
                    a.deadline == Some(Deadline::OpponentsNextMove)
                        && a.incident.occurrence >> 8 == *ply as u64
                };
                let note = "the opponent moved: the illegal move stands";
                changes.extend(self.close_where(
                    now,
                    board,
                    AlertState::Expired,
                    None,
                    note,
                    stood,
                ));
            }
            GameEvent::GameOver { status } => {
                if matches!(status, Status::Declared(_)) {
                    return;
                }
                let facts = Facts {
                    result: Some(state.game().result().to_owned()),
                    detail: Some(status.name().to_owned()),
                    ..Facts::default()
                };
                let ply = state.game().moves().len() as u64;
                let draft = self.draft(board, AlertKind::GameOver, ply, status.article(edition));
                changes.extend(self.raise(now, Draft { facts, ..draft }));
                changes.extend(self.game_ended(now, board));
            }
            GameEvent::ResultSignal { result } => {
                let hub_result = if state.game().status() == Status::Playing {
                    state.flag_ruling().and_then(|r| r.result)
                } else {
                    Some(state.game().result())
                };
                let ply = state.game().moves().len() as u64;
                let (kind, facts) = match hub_result {
                    None => (
                        AlertKind::ResultSignalled,
                        Facts {
                            result: Some((*result).to_owned()),
                            ..Facts::default()
                        },
                    ),
                    Some(hub) if hub != *result => (
                        AlertKind::ResultSignalMismatch,
                        Facts {
                            result: Some(hub.to_owned()),
                            detail: Some((*result).to_owned()),
                            ..Facts::default()
                        },
                    ),
                    Some(_) => return,
                };
                let draft = self.draft(board, kind, ply, None);
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
            GameEvent::OutOfSync { since } => {
                let (kind, facts) = if state.game().moves().is_empty() {
                    let turned = state.game().sensed().is_some_and(is_start_turned);
                    let detail = if turned {
                        "orientation"
                    } else {
                        "initial_position"
                    };
                    let facts = Facts {
                        detail: Some(detail.to_owned()),
                        ..Facts::default()
                    };
                    (AlertKind::WrongSetup, facts)
                } else {
                    let facts = Facts {
                        seconds: Some(crate::core::game::OUT_OF_SYNC_MS / 1000),
                        ..Facts::default()
                    };
                    (AlertKind::OutOfSync, facts)
                };
                let mut draft = self.draft(board, kind, *since, kind.article(edition));
                if kind == AlertKind::WrongSetup && facts.detail.as_deref() == Some("orientation") {
                    draft.article = Some(match edition {
                        crate::core::laws::Edition::Laws2009 => "7.1b",
                        crate::core::laws::Edition::Laws2014 => "7.2b",
                        _ => "7.2.2",
                    });
                }
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
            GameEvent::BackInSync => {
                let note = "the board shows the game again";
                let synced =
                    |a: &Alert| matches!(a.kind, AlertKind::OutOfSync | AlertKind::WrongSetup);
                changes.extend(self.close_where(
                    now,
                    board,
                    AlertState::Expired,
                    None,
                    note,
                    synced,
                ));
            }
            GameEvent::MoveCompleted { .. } | GameEvent::Reinstated { .. } => {}
        }
    }

    fn on_clock(
        &mut self,
        now: HubMs,
        board: u16,
        state: &BoardState,
        event: &ClockEvent,
        changes: &mut Vec<AlertChange>,
    ) {
        let edition = self.rules.edition;
        match event {
            ClockEvent::FlagFall { .. } => {
                let Some(ruling) = state.flag_ruling() else {
                    return;
                };
                let kind = if ruling.flagged.is_none() {
                    AlertKind::BothFlags
                } else {
                    AlertKind::FlagFall
                };
                let facts = Facts {
                    side: ruling.flagged.map(side),
                    result: ruling.result.map(str::to_owned),
                    ..Facts::default()
                };
                let mut draft = self.draft(board, kind, 0, Some(ruling.article));
                if !ruling.arbiter_calls {
                    // 2009/2014 unsupervised rapid: only a player's claim counts.
                    draft.severity = Severity::Info;
                    draft.article = Some(ruling.arbiter_article);
                }
                changes.extend(self.raise(now, Draft { facts, ..draft }));
                let forecast = |a: &Alert| a.kind == AlertKind::FlagForecast;
                changes.extend(self.close_where(
                    now,
                    board,
                    AlertState::Expired,
                    None,
                    "the flag fell",
                    forecast,
                ));
            }
            ClockEvent::Paused { since } => {
                let draft = self.draft(
                    board,
                    AlertKind::ClockPaused,
                    since.0,
                    AlertKind::ClockPaused.article(edition),
                );
                changes.extend(self.raise(now, draft));
            }
            ClockEvent::Resumed { paused_ms } => {
                let paused = self
                    .open_at(board)
                    .filter(|a| a.kind == AlertKind::ClockPaused)
                    .map(|a| a.id)
                    .collect::<Vec<_>>();
                for id in paused {
                    let seconds = paused_ms / 1000;
                    let note = format!("the clock runs again after {seconds} s");
                    changes.extend(self.update(now, id, Some(note), |facts| {
                        facts.seconds = Some(seconds);
                    }));
                }
            }
            ClockEvent::Deviation(deviation) => {
                let difference_ms = deviation.difference_ms();
                let (detail, any_size) = match deviation.kind {
                    DeviationKind::WrongBase => ("wrong_base", false),
                    DeviationKind::IncrementMissing => ("increment_missing", true),
                    DeviationKind::PeriodNotAdded => ("period_not_added", true),
                    DeviationKind::ClockAdjusted => ("clock_adjusted", false),
                    // The arbiter's own time shows: nothing to handle.
                    DeviationKind::PenaltyApplied | DeviationKind::CorrectionApplied => return,
                };
                // Below the tolerance it stays in the board's record, off the pager: a
                // reading one increment off is the commonest noise of real clocks.
                let increment = state
                    .clock()
                    .model()
                    .map_or(0, |m| m.bonus(deviation.side).increment_ms());
                let tolerance = self.settings.clock_tolerance_ms + increment;
                if !any_size && difference_ms.unsigned_abs() < tolerance {
                    return;
                }
                let facts = Facts {
                    side: Some(side(deviation.side)),
                    seconds: Some(deviation.shown_ms / 1000),
                    move_number: (deviation.moves > 0).then_some(deviation.moves),
                    detail: Some(detail.to_owned()),
                    difference_s: Some(rounded_seconds(difference_ms)),
                    ..Facts::default()
                };
                // One alert per deviation: a later one at the same clock is news again.
                let occurrence = u64::from(deviation.moves) << 8
                    | (deviation.kind as u64) << 1
                    | u64::from(deviation.side == Color::Black);
                let draft = self.draft(
                    board,
                    AlertKind::ClockSetWrong,
                    occurrence,
                    Some(deviation.article),
                );
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
        }
    }

    /// A node announced fewer events than the hub has from it: it lost its memory.
    pub fn on_node_replaced(
        &mut self,
        now: HubMs,
        board: u16,
        node_highest: u64,
    ) -> Vec<AlertChange> {
        let draft = self.draft(board, AlertKind::NodeGap, node_highest, None);
        self.raise(now, draft).into_iter().collect()
    }

    /// An arbiter decided at `record.board`: the alerts the decision answers are resolved.
    pub fn on_decision(&mut self, now: HubMs, record: &DecisionRecord) -> Vec<AlertChange> {
        use AlertKind::*;
        let answers: &[AlertKind] = match &record.action.decision {
            Decision::Result {
                result: GameResult::Ongoing,
                ..
            } => &[],
            Decision::Result { .. } => &[
                FlagFall,
                BothFlags,
                GameOver,
                IllegalMove,
                SecondIllegalMove,
                PromotionWithoutPiece,
                PressWithoutMove,
                LateArrival,
                ResultSignalMismatch,
                ResultSignalled,
            ],
            Decision::Reinstate { .. } => &[
                IllegalMove,
                PromotionWithoutPiece,
                PressWithoutMove,
                OutOfSync,
            ],
            Decision::AdjustTime {
                reason: TimeReason::ClockCorrection,
                ..
            } => &[ClockSetWrong],
            Decision::AdjustTime { .. } | Decision::ClaimRejected { .. } => &[],
        };
        let note = format!(
            "decision {}: {}",
            record.id,
            describe(&record.action.decision)
        );
        let by = record.action.arbiter.clone();
        let mut changes = self.close_where(
            now,
            record.board,
            AlertState::Resolved,
            Some(by),
            &note,
            |a| answers.contains(&a.kind),
        );
        if matches!(record.action.decision, Decision::Result { result, .. } if result != GameResult::Ongoing)
        {
            changes.extend(self.game_ended(now, record.board));
        }
        changes
    }

    /// An arbiter has seen the alert. Acknowledging twice, or a closed alert, changes
    /// nothing (`Ok(None)`).
    pub fn acknowledge(
        &mut self,
        now: HubMs,
        id: u64,
        by: &str,
    ) -> Result<Option<AlertChange>, AlertError> {
        let alert = self.alerts.get_mut(&id).ok_or(AlertError::Unknown(id))?;
        if alert.state != AlertState::Raised {
            return Ok(None);
        }
        alert.state = AlertState::Acknowledged;
        alert.acknowledged = Some(Stamp {
            by: by.to_owned(),
            at: now.0,
        });
        Ok(Some(self.changed(
            id,
            now,
            Change::Acknowledged,
            Some(by.to_owned()),
            None,
        )))
    }

    /// An arbiter handled the alert; `note` says how. A closed alert stays as it was.
    pub fn resolve(
        &mut self,
        now: HubMs,
        id: u64,
        by: &str,
        note: Option<String>,
    ) -> Result<Option<AlertChange>, AlertError> {
        let alert = self.alerts.get(&id).ok_or(AlertError::Unknown(id))?;
        if !alert.state.is_open() {
            return Ok(None);
        }
        Ok(self.close(now, id, AlertState::Resolved, Some(by.to_owned()), note))
    }

    /// Looks at what builds up over time and escalates what nobody acknowledged.
    pub fn tick(&mut self, now: HubMs, hall: &Hall) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        let mut short_of_time: BTreeMap<String, Vec<u16>> = BTreeMap::new();
        for n in hall.boards() {
            let Some(state) = hall.board(n) else { continue };
            let board = n.0;
            if state.game().status() != Status::Playing || state.last_seq().0 == 0 {
                continue;
            }
            let node_now = state.node_now(now);
            // A silent node.
            let silent_ms = state.last_heard().map_or(0, |t| now.since(t));
            let offline = silent_ms >= self.settings.node_silent_ms;
            let facts = Facts {
                seconds: Some(silent_ms / 1000),
                ..Facts::default()
            };
            changes.extend(self.watch(
                now,
                board,
                AlertKind::NodeOffline,
                0,
                offline,
                facts,
                None,
                "the node is heard again",
            ));
            // A running clock that reports as it runs, and stopped reporting.
            let clock = state.clock();
            let unreported = clock
                .reading()
                .filter(|r| r.running.is_some() && clock.paused_since().is_none())
                .map_or(0, |r| node_now.0.saturating_sub(r.at.0));
            let silent = !offline && clock.streams() && unreported >= self.settings.clock_silent_ms;
            let facts = Facts {
                seconds: Some(unreported / 1000),
                ..Facts::default()
            };
            changes.extend(self.watch(
                now,
                board,
                AlertKind::ClockSilent,
                0,
                silent,
                facts,
                None,
                "the clock reports again",
            ));
            let Some(shown) = clock.shown_at(node_now) else {
                continue;
            };
            // Flags about to fall, per side: only where no increment or delay comes with
            // the press. With one, players live on it, and the flag fall, which the clock
            // reports, is the alert (in the real broadcasts under 6% of forecasts in
            // increment games came true; `hub alert-report`).
            let bonus_free = |color: Color| {
                clock
                    .model()
                    .is_none_or(|m| m.bonus(color) == protocol::time_control::Bonus::None)
            };
            let to_flag = clock
                .time_to_flag(node_now)
                .filter(|(color, _)| bonus_free(*color));
            for color in Color::ALL {
                let forecast = self.settings.flag_forecast_ms;
                let is_open = self.watched.contains_key(&(
                    Some(board),
                    self.routing.zone_of(board).to_owned(),
                    AlertKind::FlagForecast,
                    color as u8,
                ));
                let soon = match to_flag {
                    Some((running, ms)) if running == color => ms <= forecast,
                    _ => false,
                };
                // Hysteresis: once raised it stays until the player has three times the
                // margin again, so a scramble is one alert, not one per move.
                let on = soon
                    || (is_open
                        && bonus_free(color)
                        && shown[color] <= 3 * forecast
                        && clock.flag(color).is_none());
                let ms = to_flag
                    .filter(|(c, _)| *c == color)
                    .map_or(shown[color], |(_, ms)| ms);
                let facts = Facts {
                    side: Some(side(color)),
                    seconds: Some(ms / 1000),
                    ..Facts::default()
                };
                let deadline = Some(Deadline::At(now.0 + ms));
                changes.extend(self.watch(
                    now,
                    board,
                    AlertKind::FlagForecast,
                    color as u8,
                    on,
                    facts,
                    deadline,
                    "the player has time again",
                ));
            }
            // Time trouble (8.4, 12.3): in standard games only. In rapid and blitz the
            // players need not record the moves at all (A.2, B.2), so 8.4 says nothing, and
            // the arbiter's business at the end is the flag, which the clock reports.
            let standard = self.rules.game_type == GameType::Standard;
            let trouble = Color::ALL.into_iter().filter(|_| standard).find(|c| {
                match self.settings.time_trouble_ms {
                    Some(limit) => shown[*c] < limit,
                    None => clock.time_trouble(*c, node_now),
                }
            });
            let facts = Facts {
                side: trouble.map(side),
                seconds: trouble.map(|c| shown[c] / 1000),
                ..Facts::default()
            };
            changes.extend(self.watch(
                now,
                board,
                AlertKind::TimeTrouble,
                0,
                trouble.is_some(),
                facts,
                None,
                "both players have time again",
            ));
            if trouble.is_some() {
                short_of_time
                    .entry(self.routing.zone_of(board).to_owned())
                    .or_default()
                    .push(board);
            }
            // Late arrival (6.7.1): a clock that ran past the allowed lateness before the
            // player's first move.
            if let (Some(lateness), Some(model)) =
                (self.settings.allowed_lateness_ms, clock.model())
            {
                let moves = state.game().moves_by_side();
                for color in Color::ALL {
                    // Before the player's first move the model holds the initial time.
                    let used = model.remaining(color).saturating_sub(shown[color]);
                    if moves[color] == 0 && clock.running() == Some(color) && used > lateness {
                        let facts = Facts {
                            side: Some(side(color)),
                            seconds: Some(used / 1000),
                            ..Facts::default()
                        };
                        let draft = self.draft(
                            board,
                            AlertKind::LateArrival,
                            color as u64,
                            AlertKind::LateArrival.article(self.rules.edition),
                        );
                        changes.extend(self.raise(now, Draft { facts, ..draft }));
                    }
                }
            }
        }
        // The round's start (6.5): White's clock is started at the scheduled time. A paired
        // board whose clock has not run by then (no clock, a node not set up, nobody there)
        // is for the arbiter; the alert expires once the clock runs or a move is made.
        if let Some(start) = self.round_start {
            let due = now.0 >= start.0 + self.settings.clock_start_ms;
            for board in self.round_boards.clone() {
                let started = hall.board(protocol::BoardNo(board)).is_some_and(|state| {
                    !state.game().moves().is_empty()
                        || state.game().status() != Status::Playing
                        || state.clock().paused_since().is_some()
                        || state.clock().reading().is_some_and(|r| r.running.is_some())
                });
                let facts = Facts {
                    seconds: Some(now.since(start) / 1000),
                    ..Facts::default()
                };
                changes.extend(self.watch(
                    now,
                    board,
                    AlertKind::ClockNotStarted,
                    0,
                    due && !started,
                    facts,
                    None,
                    "the clock runs",
                ));
            }
        }
        // The round is finished once every game of it has a result: the chief arbiter
        // checks them and sends them to the pairing program (once per round).
        let finished = !self.round_boards.is_empty()
            && self.round_boards.iter().all(|b| {
                hall.board(protocol::BoardNo(*b))
                    .is_some_and(|s| s.game().result() != "*")
            });
        if finished {
            let kind = AlertKind::RoundFinished;
            let draft = Draft {
                incident: Incident {
                    board: 0,
                    kind,
                    occurrence: 0,
                },
                board: None,
                zone: HALL_ZONE.to_owned(),
                severity: kind.severity(),
                article: None,
                facts: Facts {
                    boards: self.round_boards.clone(),
                    ..Facts::default()
                },
                deadline: None,
            };
            changes.extend(self.raise(now, draft));
        }
        // Several boards of a zone short of time (12.4).
        for zone in self.routing.zone_names() {
            let boards = short_of_time.remove(&zone).unwrap_or_default();
            let on = boards.len() >= self.settings.zone_time_trouble_boards;
            let facts = Facts {
                boards,
                ..Facts::default()
            };
            changes.extend(self.watch_zone(now, &zone, on, facts));
        }
        // Watched alerts of boards whose game ended meanwhile.
        let ended: Vec<u16> = self
            .watched
            .keys()
            .filter_map(|(board, ..)| *board)
            .filter(|b| {
                hall.board(protocol::BoardNo(*b))
                    .is_some_and(|s| s.game().status() != Status::Playing)
            })
            .collect();
        for board in ended {
            changes.extend(self.game_ended(now, board));
        }
        changes.extend(self.escalate(now));
        changes
    }

    fn escalate(&mut self, now: HubMs) -> Vec<AlertChange> {
        let due: Vec<u64> = self
            .open
            .iter()
            .filter_map(|id| self.alerts.get(id))
            .filter(|a| a.state == AlertState::Raised && a.escalated_at.is_none())
            .filter(|a| {
                self.settings
                    .escalate_after(a.severity)
                    .is_some_and(|after| now.0.saturating_sub(a.raised_at) >= after)
            })
            .map(|a| a.id)
            .collect();
        let chiefs = self.routing.chiefs();
        due.into_iter()
            .map(|id| {
                let alert = self.alerts.get_mut(&id).expect("open alerts exist");
                alert.escalated_at = Some(now.0);
                for chief in &chiefs {
                    if !alert.to.contains(chief) {
                        alert.to.push(chief.clone());
                    }
                }
                self.changed(id, now, Change::Escalated, None, None)
            })
            .collect()
    }

    /// Raises, updates or expires the alert watching a condition at `board`.
    #[allow(clippy::too_many_arguments)]
    fn watch(
        &mut self,
        now: HubMs,
        board: u16,
        kind: AlertKind,
        sub: u8,
        on: bool,
        facts: Facts,
        deadline: Option<Deadline>,
        cleared: &str,
    ) -> Option<AlertChange> {
        let zone = self.routing.zone_of(board).to_owned();
        let key = (Some(board), zone, kind, sub);
        match (self.watched.get(&key).copied(), on) {
            (None, false) => None,
            // Still on: the alert says how it started; no update per tick.
            (Some(_), true) => None,
            (Some(id), false) => {
                self.close(now, id, AlertState::Expired, None, Some(cleared.to_owned()))
            }
            (None, true) => {
                let occurrence = now.0 << 1 | u64::from(sub);
                let draft = self.draft(board, kind, occurrence, kind.article(self.rules.edition));
                let change = self.raise(
                    now,
                    Draft {
                        facts,
                        deadline,
                        ..draft
                    },
                )?;
                self.watched.insert(key, change.alert.id);
                Some(change)
            }
        }
    }

    fn watch_zone(
        &mut self,
        now: HubMs,
        zone: &str,
        on: bool,
        facts: Facts,
    ) -> Option<AlertChange> {
        let kind = AlertKind::ZoneTimeTrouble;
        let key = (None, zone.to_owned(), kind, 0);
        match (self.watched.get(&key).copied(), on) {
            (None, false) => None,
            (Some(id), true) => {
                // Twice as many boards as the alert says: say so (a few updates even in a
                // hall of a thousand boards); fewer is not news until it clears.
                let grew = self
                    .alerts
                    .get(&id)
                    .is_some_and(|a| facts.boards.len() >= 2 * a.facts.boards.len());
                if grew {
                    self.update(now, id, None, |f| *f = facts)
                } else {
                    None
                }
            }
            (Some(id), false) => self.close(
                now,
                id,
                AlertState::Expired,
                None,
                Some("fewer boards short of time".to_owned()),
            ),
            (None, true) => {
                let draft = Draft {
                    incident: Incident {
                        board: 0,
                        kind,
                        occurrence: now.0,
                    },
                    board: None,
                    zone: zone.to_owned(),
                    severity: kind.severity(),
                    article: kind.article(self.rules.edition),
                    facts,
                    deadline: None,
                };
                let change = self.raise(now, draft)?;
                self.watched.insert(key, change.alert.id);
                Some(change)
            }
        }
    }

    /// The game at `board` ended: what only matters while it is played expires.
    fn game_ended(&mut self, now: HubMs, board: u16) -> Vec<AlertChange> {
        use AlertKind::*;
        self.close_where(
            now,
            board,
            AlertState::Expired,
            None,
            "the game is over",
            |a| {
                matches!(
                    a.kind,
                    TimeTrouble | FlagForecast | NodeOffline | ClockSilent | OutOfSync
                )
            },
        )
    }

    fn draft(
        &self,
        board: u16,
        kind: AlertKind,
        occurrence: u64,
        article: Option<&'static str>,
    ) -> Draft {
        Draft {
            incident: Incident {
                board,
                kind,
                occurrence,
            },
            board: Some(board),
            zone: self.routing.zone_of(board).to_owned(),
            severity: kind.severity(),
            article,
            facts: Facts::default(),
            deadline: None,
        }
    }

    /// A new alert for `draft`; nothing for an incident that already has one, so the same
    /// events fed twice (a duplicate, a replay) change nothing. Developments of an incident
    /// are updates, made where they are seen.
    fn raise(&mut self, now: HubMs, draft: Draft) -> Option<AlertChange> {
        if self.incidents.contains_key(&draft.incident) {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let (text, action) = texts::render(
            draft.incident.kind,
            &draft.facts,
            draft.board,
            &draft.zone,
            draft.deadline,
            Language::English,
        );
        let alert = Alert {
            id,
            board: draft.board,
            players: draft.board.and_then(|b| self.players.get(&b).cloned()),
            to: self.routing.arbiters_of(&draft.zone),
            zone: draft.zone,
            kind: draft.incident.kind,
            severity: draft.severity,
            article: draft.article.map(str::to_owned),
            facts: draft.facts,
            text,
            action,
            deadline: draft.deadline,
            state: AlertState::Raised,
            raised_at: now.0,
            updated_at: now.0,
            escalated_at: None,
            acknowledged: None,
            resolved: None,
            outcome: None,
            incident: draft.incident,
            history: vec![Step {
                at: now.0,
                change: Change::Raised,
                by: None,
                note: None,
            }],
        };
        self.incidents.insert(alert.incident, id);
        self.open.insert(id);
        self.alerts.insert(id, alert.clone());
        Some(AlertChange {
            change: Change::Raised,
            alert,
        })
    }

    fn update(
        &mut self,
        now: HubMs,
        id: u64,
        note: Option<String>,
        change: impl FnOnce(&mut Facts),
    ) -> Option<AlertChange> {
        let alert = self.alerts.get_mut(&id)?;
        let before = alert.facts.clone();
        change(&mut alert.facts);
        if alert.facts == before {
            // Seen before (the same events fed again): nothing developed.
            return None;
        }
        let (text, action) = texts::render(
            alert.kind,
            &alert.facts,
            alert.board,
            &alert.zone,
            alert.deadline,
            Language::English,
        );
        alert.text = text;
        alert.action = action;
        Some(self.changed(id, now, Change::Updated, None, note))
    }

    fn close(
        &mut self,
        now: HubMs,
        id: u64,
        state: AlertState,
        by: Option<String>,
        note: Option<String>,
    ) -> Option<AlertChange> {
        let alert = self.alerts.get_mut(&id)?;
        alert.state = state;
        alert.outcome = note.clone();
        if state == AlertState::Resolved {
            alert.resolved = Some(Stamp {
                by: by.clone().unwrap_or_default(),
                at: now.0,
            });
        }
        self.open.remove(&id);
        self.watched.retain(|_, v| *v != id);
        let change = if state == AlertState::Resolved {
            Change::Resolved
        } else {
            Change::Expired
        };
        Some(self.changed(id, now, change, by, note))
    }

    /// Closes the open alerts at `board` that `which` picks.
    fn close_where(
        &mut self,
        now: HubMs,
        board: u16,
        state: AlertState,
        by: Option<String>,
        note: &str,
        which: impl Fn(&Alert) -> bool,
    ) -> Vec<AlertChange> {
        let ids: Vec<u64> = self
            .open_at(board)
            .filter(|a| which(a))
            .map(|a| a.id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.close(now, id, state, by.clone(), Some(note.to_owned())))
            .collect()
    }

    fn open_at(&self, board: u16) -> impl Iterator<Item = &Alert> {
        self.open
            .iter()
            .filter_map(|id| self.alerts.get(id))
            .filter(move |a| a.board == Some(board))
    }

    /// Records `change` in the alert's history and hands out the new state.
    fn changed(
        &mut self,
        id: u64,
        now: HubMs,
        change: Change,
        by: Option<String>,
        note: Option<String>,
    ) -> AlertChange {
        let alert = self.alerts.get_mut(&id).expect("a known alert");
        alert.updated_at = now.0;
        alert.history.push(Step {
            at: now.0,
            change,
            by,
            note,
        });
        AlertChange {
            change,
            alert: alert.clone(),
        }
    }
}

/// The key of the condition a restored alert watches, for the kinds [`AlertDesk::tick`]
/// raises.
fn watched_key(alert: &Alert) -> Option<Watched> {
    use AlertKind::*;
    let sub = match alert.kind {
        FlagForecast => (alert.incident.occurrence & 1) as u8,
        TimeTrouble | NodeOffline | ClockSilent | ZoneTimeTrouble => 0,
        _ => return None,
    };
    Some((alert.board, alert.zone.clone(), alert.kind, sub))
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
            Some(cause) => format!("result {} ({})", result.pgn(), cause.name()),
            None => format!("result {}", result.pgn()),
        },
        Decision::ClaimRejected { by } => format!("claim by {by:?} rejected"),
        Decision::AdjustTime { side, ms, .. } => format!("{side:?}'s clock {ms:+} ms"),
    }
}
