//! What builds up over time: at a board (a silent node or clock, a flag about to fall, time
//! trouble, a late player) and in the hall (several boards of a zone short of time, the
//! round's start and end).
//!
//! A board is looked at when its events arrive and when its own deadline comes
//! ([`AlertDesk::board_deadline`]: the moment one of its conditions can change without an
//! event, the clock running down or the node staying silent); the hub keeps the deadlines
//! and gives the time to the boards due, so a hall of 10,000 boards costs what its events
//! cost, not a scan of every board four times a second.

use std::collections::BTreeSet;

use protocol::time_control::Bonus;
use protocol::BoardNo;
use shakmaty::Color;

use super::{AlertDesk, Draft, Watch, Watched};
use crate::core::alerts::catalogue::{AlertKind, Severity};
use crate::core::alerts::{AlertChange, AlertState, Deadline, Facts, Incident, Occurrence};
use crate::core::board::BoardState;
use crate::core::clock::{READING_TOLERANCE_MS, TIME_TROUBLE_MS};
use crate::core::ending::Status;
use crate::core::hall::Hall;
use crate::core::ids::AlertId;
use crate::core::laws::GameType;
use crate::core::side::Side;
use crate::core::time::HubMs;

/// Whether `side`'s period gives nothing with the press: no increment, no delay.
fn bonus_free(state: &BoardState, side: Color) -> bool {
    state
        .clock()
        .model()
        .is_none_or(|m| m.bonus(side) == Bonus::None)
}

impl AlertDesk {
    /// Looks at `board` at `now`: what builds up over time there.
    pub fn watch_board(&mut self, now: HubMs, hall: &Hall, board: BoardNo) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        let Some(state) = hall.board(board) else {
            return changes;
        };
        self.seen(state);
        self.watch_clock_start(now, hall, board, &mut changes);
        self.watch_battery(now, board, state, &mut changes);
        if state.game().status() != Status::Playing || state.last_seq().0 == 0 {
            // What only matters while the game is played: expired with the game.
            if self.watched.any_at(Some(board)) {
                changes.extend(self.game_ended(now, board));
            }
            changes.extend(self.count_trouble(now, board, false));
            return changes;
        }
        let node_now = state.node_now(now);
        // A silent node.
        let silent_ms = state.last_heard().map_or(0, |t| now.since(t));
        let offline = silent_ms >= self.settings.node_silent_ms;
        let facts = Facts {
            seconds: Some(silent_ms / 1000),
            ..Facts::default()
        };
        self.watch(
            now,
            board,
            Watch {
                kind: AlertKind::NodeOffline,
                sub: 0,
                on: offline,
                facts,
                deadline: None,
                cleared: "the node is heard again",
                severity: None,
            },
            &mut changes,
        );
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
        self.watch(
            now,
            board,
            Watch {
                kind: AlertKind::ClockSilent,
                sub: 0,
                on: silent,
                facts,
                deadline: None,
                cleared: "the clock reports again",
                severity: None,
            },
            &mut changes,
        );
        let Some(shown) = clock.shown_at(node_now) else {
            return changes;
        };
        // Flags about to fall, per side: only where no increment or delay comes with the
        // press. With one, players live on it, and the flag fall, which the clock reports,
        // is the alert (in the real broadcasts under 6% of forecasts in increment games came
        // true; `hub alert-report`).
        let to_flag = clock
            .time_to_flag(node_now)
            .filter(|(color, _)| bonus_free(state, *color));
        for color in Color::ALL {
            let forecast = self.settings.flag_forecast_ms;
            let is_open = self.is_watched(board, AlertKind::FlagForecast, color as u8);
            let soon = match to_flag {
                Some((running, ms)) if running == color => ms <= forecast,
                _ => false,
            };
            // Hysteresis: once raised it stays until the player has three times the margin
            // again, so a scramble is one alert, not one per move.
            let on = soon
                || (is_open
                    && bonus_free(state, color)
                    && shown[color] <= 3 * forecast
                    && clock.flag(color).is_none());
            let ms = to_flag
                .filter(|(c, _)| *c == color)
                .map_or(shown[color], |(_, ms)| ms);
            let facts = Facts {
                side: Some(Side::from(color)),
                seconds: Some(ms / 1000),
                ..Facts::default()
            };
            let deadline = Some(Deadline::At(now.0 + ms));
            self.watch(
                now,
                board,
                Watch {
                    kind: AlertKind::FlagForecast,
                    sub: color as u8,
                    on,
                    facts,
                    deadline,
                    cleared: "the player has time again",
                    severity: None,
                },
                &mut changes,
            );
        }
        // Time trouble (8.4, 12.3): in standard games only. In rapid and blitz the players
        // need not record the moves at all (A.2, B.2), so 8.4 says nothing, and the
        // arbiter's business at the end is the flag, which the clock reports.
        let in_trouble = self.is_watched(board, AlertKind::TimeTrouble, 0);
        let trouble = self.short_of_time(state, node_now, in_trouble);
        let facts = Facts {
            side: trouble.map(Side::from),
            seconds: trouble.map(|c| shown[c] / 1000),
            ..Facts::default()
        };
        self.watch(
            now,
            board,
            Watch {
                kind: AlertKind::TimeTrouble,
                sub: 0,
                on: trouble.is_some(),
                facts,
                deadline: None,
                cleared: "both players have time again",
                severity: None,
            },
            &mut changes,
        );
        changes.extend(self.count_trouble(now, board, trouble.is_some()));
        // Late arrival (6.7.1): a clock that ran past the allowed lateness before the
        // player's first move.
        if let Some((color, used)) = self.late(state, node_now) {
            let facts = Facts {
                side: Some(Side::from(color)),
                seconds: Some(used / 1000),
                ..Facts::default()
            };
            let draft = self.draft(
                board,
                AlertKind::LateArrival,
                Occurrence::at(color as u64),
                AlertKind::LateArrival
                    .article(state.rules().edition)
                    .map(Into::into),
            );
            changes.extend(self.raise(now, Draft { facts, ..draft }));
        }
        changes
    }

    /// A clock whose battery is low, one alert for it until the battery is changed: paged
    /// while its game is played (high; a clock that dies stops the game, 6.11), recorded
    /// between games (info) and paged once a game starts on it.
    fn watch_battery(
        &mut self,
        now: HubMs,
        board: BoardNo,
        state: &BoardState,
        changes: &mut Vec<AlertChange>,
    ) {
        let low = state.battery_low() == Some(true);
        let playing = state.played() && state.game().status() == Status::Playing;
        let kind = AlertKind::BatteryLow;
        let cleared = "the clock's battery is no longer low";
        let paged = self.is_watched(board, kind, 1);
        let watch = |sub: u8, on: bool, severity: Severity| Watch {
            kind,
            sub,
            on,
            facts: Facts::default(),
            deadline: None,
            cleared,
            severity: Some(severity),
        };
        self.watch(
            now,
            board,
            watch(1, low && (playing || paged), Severity::High),
            changes,
        );
        let paged = self.is_watched(board, kind, 1);
        self.watch(now, board, watch(0, low && !paged, Severity::Info), changes);
    }

    /// Whether an alert of `kind` (`sub`: its side, or 0) is open at `board`.
    fn is_watched(&self, board: BoardNo, kind: AlertKind, sub: u8) -> bool {
        self.open_watch(board, kind, sub).is_some()
    }

    /// The open alert of `kind` (`sub`: its side, or 0) at `board`, found without making
    /// the condition's key.
    fn open_watch(&self, board: BoardNo, kind: AlertKind, sub: u8) -> Option<AlertId> {
        let zone = self.routing.zone_of(board);
        self.watched.find(Some(board), |c| {
            c.kind == kind && c.sub == sub && c.zone == zone
        })
    }

    /// The key of a watched condition at `board`.
    fn board_condition(&self, board: BoardNo, kind: AlertKind, sub: u8) -> Watched {
        Watched {
            board: Some(board),
            zone: self.routing.zone_of(board).to_owned(),
            kind,
            sub,
        }
    }

    /// The player short of time at `node_now` (8.4); `in_trouble`: one already was. Out of
    /// trouble takes more than the limit by what two readings may differ
    /// ([`READING_TOLERANCE_MS`]): the hub counts a clock down between readings, and a
    /// reading a few ms behind that count must not expire the alert and raise it again.
    fn short_of_time(
        &self,
        state: &BoardState,
        node_now: protocol::NodeMs,
        in_trouble: bool,
    ) -> Option<Color> {
        if state.rules().game_type != GameType::Standard {
            return None;
        }
        let shown = state.clock().shown_at(node_now)?;
        let margin = if in_trouble { READING_TOLERANCE_MS } else { 0 };
        Color::ALL
            .into_iter()
            .find(|c| match self.settings.time_trouble_ms {
                Some(limit) => shown[*c] < limit + margin,
                None => state
                    .clock()
                    .under_limit(*c, node_now, TIME_TROUBLE_MS + margin),
            })
    }

    /// The player whose clock ran past the allowed lateness before the first move, and how
    /// long it ran; `None` when lateness is not watched.
    fn late(&self, state: &BoardState, node_now: protocol::NodeMs) -> Option<(Color, u64)> {
        let lateness = self.settings.allowed_lateness_ms?;
        let (used, color) = self.before_first_move(state, node_now)?;
        (used > lateness).then_some((color, used))
    }

    /// How long the running side's clock has run before that player's first move.
    fn before_first_move(
        &self,
        state: &BoardState,
        node_now: protocol::NodeMs,
    ) -> Option<(u64, Color)> {
        let clock = state.clock();
        let model = clock.model()?;
        let color = clock.running()?;
        if state.game().moves_by_side()[color] > 0 {
            return None;
        }
        let shown = clock.shown_at(node_now)?;
        // Before the player's first move the model holds the initial time.
        Some((model.remaining(color).saturating_sub(shown[color]), color))
    }

    /// When `board` next needs looking at if nothing happens there: its node falls silent,
    /// its clock stops reporting, a flag comes within the forecast, a player runs into time
    /// trouble or past the lateness. `None` when nothing can change without an event.
    pub fn board_deadline(&self, now: HubMs, hall: &Hall, board: BoardNo) -> Option<HubMs> {
        let state = hall.board(board)?;
        if state.game().status() != Status::Playing || state.last_seq().0 == 0 {
            return None;
        }
        let node_now = state.node_now(now);
        let clock = state.clock();
        // The earliest still to come (no list: this runs at every event of the hall).
        let mut earliest: Option<HubMs> = None;
        let mut due = |at: HubMs| {
            if at > now {
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
        };
        if let Some(heard) = state.last_heard() {
            due(heard.plus_ms(self.settings.node_silent_ms));
        }
        if let Some(reading) = clock.reading().filter(|r| r.running.is_some()) {
            if clock.streams() && clock.paused_since().is_none() {
                let unreported = node_now.0.saturating_sub(reading.at.0);
                let left = self.settings.clock_silent_ms.saturating_sub(unreported);
                due(now.plus_ms(left));
            }
        }
        if let Some((color, ms)) = clock.time_to_flag(node_now) {
            if bonus_free(state, color) {
                let left = ms.saturating_sub(self.settings.flag_forecast_ms);
                due(now.plus_ms(left));
            }
        }
        // Time trouble begins when the running side's time goes under the limit; after a
        // flag fell too, for a game played on (a flag nobody claimed, 6.9 in rapid, A.4.3).
        let running = clock.running().filter(|_| clock.paused_since().is_none());
        if let (Some(color), Some(shown), GameType::Standard) =
            (running, clock.shown_at(node_now), state.rules().game_type)
        {
            let limit = self.settings.time_trouble_ms.unwrap_or(TIME_TROUBLE_MS);
            if shown[color] >= limit {
                due(now.plus_ms(shown[color] - limit + 1));
            }
        }
        if let (Some(lateness), Some((used, _))) = (
            self.settings.allowed_lateness_ms,
            self.before_first_move(state, node_now),
        ) {
            due(now.plus_ms(lateness.saturating_sub(used) + 1));
        }
        earliest
    }

    /// The round's scheduled start (6.5): a board of the round whose clock has not run
    /// `clock_start_ms` after it (no clock, a node not set up, nobody there) is for the
    /// arbiter; the alert expires once the clock runs or a move is made. Looks at every
    /// board of the round; [`AlertDesk::watch_board`] looks at one as its events come.
    pub fn watch_round_start(&mut self, now: HubMs, hall: &Hall) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        for board in self.round_boards.clone() {
            self.watch_clock_start(now, hall, board, &mut changes);
        }
        changes
    }

    /// When the round's start is next looked at for clocks not started.
    pub fn round_start_deadline(&self) -> Option<HubMs> {
        self.round_start
            .map(|start| start.plus_ms(self.settings.clock_start_ms))
    }

    fn watch_clock_start(
        &mut self,
        now: HubMs,
        hall: &Hall,
        board: BoardNo,
        changes: &mut Vec<AlertChange>,
    ) {
        let Some(start) = self.round_start else {
            return;
        };
        if !self.round_boards.contains(&board) {
            return;
        }
        let due = now.0 >= start.0 + self.settings.clock_start_ms;
        let started = hall.board(board).is_some_and(|state| {
            !state.game().moves().is_empty()
                || state.game().status() != Status::Playing
                || state.clock().paused_since().is_some()
                || state.clock().reading().is_some_and(|r| r.running.is_some())
        });
        let facts = Facts {
            seconds: Some(now.since(start) / 1000),
            ..Facts::default()
        };
        self.watch(
            now,
            board,
            Watch {
                kind: AlertKind::ClockNotStarted,
                sub: 0,
                on: due && !started,
                facts,
                deadline: None,
                cleared: "the clock runs",
                severity: None,
            },
            changes,
        );
    }

    /// The round is finished once every game of it has a result: the chief arbiter checks
    /// them and sends them to the pairing program (once per round).
    pub fn watch_round_end(&mut self, now: HubMs, hall: &Hall) -> Option<AlertChange> {
        let finished = !self.round_boards.is_empty()
            && self.round_boards.iter().all(|b| {
                hall.board(*b)
                    .is_some_and(|s| s.game().result().is_decided())
            });
        if !finished {
            return None;
        }
        let draft = self.hall_draft(
            AlertKind::RoundFinished,
            Occurrence::ONLY,
            self.round_boards.clone(),
        );
        self.raise(now, draft)
    }

    /// Counts `board` in or out of its zone's boards in time trouble: several of them call
    /// for assistants (12.4).
    pub(super) fn count_trouble(
        &mut self,
        now: HubMs,
        board: BoardNo,
        in_trouble: bool,
    ) -> Option<AlertChange> {
        // Looked up by name before a key is made: this runs at every event of the hall.
        let zone = self.routing.zone_of(board);
        let changed = match self.in_trouble.get_mut(zone) {
            Some(boards) if in_trouble => boards.insert(board),
            Some(boards) => boards.remove(&board),
            None if in_trouble => {
                self.in_trouble
                    .insert(zone.to_owned(), BTreeSet::from([board]));
                true
            }
            None => false,
        };
        if !changed {
            return None;
        }
        let zone = zone.to_owned();
        let boards: Vec<BoardNo> = self.in_trouble[&zone].iter().copied().collect();
        let on = boards.len() >= self.settings.zone_time_trouble_boards;
        let facts = Facts {
            boards,
            ..Facts::default()
        };
        self.watch_zone(now, &zone, on, facts)
    }

    /// Raises, updates or expires the alert watching a condition at `board`, into `changes`
    /// (pushed there, not returned: a change is large, and this runs several times at every
    /// event of the hall, nearly always with nothing to say).
    fn watch(&mut self, now: HubMs, board: BoardNo, watch: Watch, changes: &mut Vec<AlertChange>) {
        let Watch {
            kind,
            sub,
            on,
            facts,
            deadline,
            cleared,
            severity,
        } = watch;
        match (self.open_watch(board, kind, sub), on) {
            // Still on: the alert says how it started; no update per tick.
            (None, false) | (Some(_), true) => {}
            (Some(id), false) => changes.extend(self.close(
                now,
                id,
                AlertState::Expired,
                None,
                Some(cleared.to_owned()),
            )),
            (None, true) => {
                let occurrence = Occurrence::watched(now, sub);
                let edition = self.rules_of(board).edition;
                let draft = self.draft(
                    board,
                    kind,
                    occurrence,
                    kind.article(edition).map(Into::into),
                );
                let draft = Draft {
                    facts,
                    deadline,
                    severity: severity.unwrap_or(draft.severity),
                    ..draft
                };
                if let Some(change) = self.raise(now, draft) {
                    self.watched
                        .insert(self.board_condition(board, kind, sub), change.alert.id);
                    changes.push(change);
                }
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
        let key = Watched {
            board: None,
            zone: zone.to_owned(),
            kind,
            sub: 0,
        };
        match (self.watched.get(&key), on) {
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
                        board: None,
                        kind,
                        occurrence: Occurrence::at(now.0),
                        round: self.round,
                    },
                    board: None,
                    zone: zone.to_owned(),
                    severity: kind.severity(),
                    article: kind.article(self.rules.edition).map(Into::into),
                    facts,
                    deadline: None,
                };
                let change = self.raise(now, draft)?;
                self.watched.insert(key, change.alert.id);
                Some(change)
            }
        }
    }
}
