//! What a board event or an arbiter's decision means for the arbiters, at once: a flag
//! fall, an illegal move, a paused clock, a clock set wrong, a game over.

use super::{describe, is_start_turned, move_number, rounded_seconds, AlertDesk, Draft};
use crate::core::alerts::catalogue::{AlertKind, Severity};
use crate::core::alerts::detail::{ClockFault, Detail, Ending, Setup};
use crate::core::alerts::{Alert, AlertChange, AlertState, Deadline, Facts, Occurrence};
use crate::core::arbiter::{Decision, DecisionRecord, GameResult, TimeReason};
use crate::core::board::BoardState;
use crate::core::clock::{ClockEvent, DeviationKind};
use crate::core::effect::Effect;
use crate::core::ending::Status;
use crate::core::game::{GameEvent, IllegalKind};
use crate::core::hall::Hall;
use crate::core::ids::{AlertId, BoardNo, RoundNo, Seq};
use crate::core::laws::Penalty;
use crate::core::side::Side;
use crate::core::time::HubMs;

/// The most orders of moves filled in an alert names; the board's page lists them all.
const MAX_ORDERS_SHOWN: usize = 6;

impl AlertDesk {
    /// What a board event means for the arbiters.
    pub fn on_effect(&mut self, now: HubMs, hall: &Hall, effect: &Effect) -> Vec<AlertChange> {
        let (board_no, state) = match effect {
            Effect::Game { board, .. } | Effect::Clock { board, .. } => match hall.board(*board) {
                Some(state) => {
                    self.seen(state);
                    (*board, state)
                }
                None => return Vec::new(),
            },
            Effect::Ack { .. } | Effect::OutOfSequence { .. } | Effect::NodeTimeStep { .. } => {
                return Vec::new()
            }
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
        board: BoardNo,
        state: &BoardState,
        event: &GameEvent,
        changes: &mut Vec<AlertChange>,
    ) {
        let edition = state.rules().edition;
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
                    side: Some(illegal.by),
                    result: illegal.result_if_applied,
                    seconds,
                    move_number: Some(move_number(illegal.ply)),
                    ..Facts::default()
                };
                let deadline = illegal
                    .ruling
                    .until_opponents_next_move
                    .then_some(Deadline::OpponentsNextMove);
                let occurrence = Occurrence::illegal_move(illegal.ply, illegal.nth);
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
                        && a.incident.occurrence.ply() == *ply as u64
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
                let facts =
                    Facts {
                        result: Some(state.game().result()),
                        detail: Some(Ending::of(*status).map_or_else(
                            || Detail::Other(status.name().to_owned()),
                            Detail::Ending,
                        )),
                        ..Facts::default()
                    };
                let ply = state.game().moves().len() as u64;
                let draft = self.draft(
                    board,
                    AlertKind::GameOver,
                    Occurrence::at(ply),
                    status.article(edition).map(Into::into),
                );
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
                            result: Some(*result),
                            ..Facts::default()
                        },
                    ),
                    Some(hub) if hub != *result => (
                        AlertKind::ResultSignalMismatch,
                        Facts {
                            result: Some(hub.to_owned()),
                            detail: Some(Detail::Signal(*result)),
                            ..Facts::default()
                        },
                    ),
                    Some(_) => return,
                };
                let draft = self.draft(board, kind, Occurrence::at(ply), None);
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
            GameEvent::OutOfSync { since } => {
                let (kind, facts) = if state.game().moves().is_empty() {
                    let turned = state.game().sensed().is_some_and(is_start_turned);
                    let setup = if turned {
                        Setup::Orientation
                    } else {
                        Setup::InitialPosition
                    };
                    let facts = Facts {
                        detail: Some(Detail::Setup(setup)),
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
                let mut draft = self.draft(
                    board,
                    kind,
                    Occurrence::at(*since),
                    kind.article(edition).map(Into::into),
                );
                if kind == AlertKind::WrongSetup
                    && facts.detail == Some(Detail::Setup(Setup::Orientation))
                {
                    draft.article = Some(
                        match edition {
                            crate::core::laws::Edition::Laws2009 => "7.1b",
                            crate::core::laws::Edition::Laws2014 => "7.2b",
                            _ => "7.2.2",
                        }
                        .into(),
                    );
                }
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
            GameEvent::BackInSync => {
                let note = "the board shows the game again";
                let synced = |a: &Alert| a.kind.lifetime().back_in_sync;
                changes.extend(self.close_where(
                    now,
                    board,
                    AlertState::Expired,
                    None,
                    note,
                    synced,
                ));
            }
            GameEvent::MoveCompleted { .. } => {
                let first = state.game().moves().len() == 1;
                if first && self.unpaired(board) {
                    let draft = self.draft(board, AlertKind::UnpairedBoard, Occurrence::ONLY, None);
                    changes.extend(self.raise(now, draft));
                }
            }
            GameEvent::MovesFilledIn { from_ply, .. } => {
                let game = state.game();
                let Some(filled) = game.filled_in().iter().find(|f| f.from_ply == *from_ply) else {
                    return;
                };
                let orders = game
                    .orders_in_san(filled)
                    .iter()
                    .take(MAX_ORDERS_SHOWN)
                    .map(|order| {
                        let sans: Vec<String> = order.iter().map(ToString::to_string).collect();
                        sans.join(" ")
                    })
                    .collect();
                let facts = Facts {
                    move_number: Some(move_number(from_ply - 1)),
                    detail: Some(Detail::Orders(orders)),
                    ..Facts::default()
                };
                let kind = AlertKind::MovesFilledIn;
                let draft = self.draft(
                    board,
                    kind,
                    Occurrence::at(*from_ply as u64),
                    kind.article(edition).map(Into::into),
                );
                changes.extend(self.raise(now, Draft { facts, ..draft }));
            }
            GameEvent::Reinstated { .. } | GameEvent::OrderChosen { .. } => {}
        }
    }

    /// `board` plays the round in play, which has pairings, but they give it no game to
    /// play (none on that board, or one the list scored already: a forfeit, a bye).
    fn unpaired(&self, board: BoardNo) -> bool {
        let paired_round = !self.players.is_empty() && self.round_of(board) == self.round;
        paired_round && !self.round_boards.contains(&board)
    }

    fn on_clock(
        &mut self,
        now: HubMs,
        board: BoardNo,
        state: &BoardState,
        event: &ClockEvent,
        changes: &mut Vec<AlertChange>,
    ) {
        let edition = state.rules().edition;
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
                    side: ruling.flagged,
                    result: ruling.result,
                    ..Facts::default()
                };
                let mut draft = self.draft(board, kind, Occurrence::ONLY, Some(ruling.article));
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
                    Occurrence::at(since.0),
                    AlertKind::ClockPaused.article(edition).map(Into::into),
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
                let (fault, any_size) = match deviation.kind {
                    DeviationKind::WrongBase => (ClockFault::WrongBase, false),
                    DeviationKind::IncrementMissing => (ClockFault::IncrementMissing, true),
                    DeviationKind::PeriodNotAdded => (ClockFault::PeriodNotAdded, true),
                    DeviationKind::ClockAdjusted => (ClockFault::ClockAdjusted, false),
                    // The arbiter's own time shows: nothing to handle.
                    DeviationKind::PenaltyApplied | DeviationKind::CorrectionApplied => return,
                };
                // Below the tolerance it stays in the board's record, off the pager: a
                // reading one increment off is the commonest noise of real clocks.
                let increment = state
                    .clock()
                    .model()
                    .map_or(0, |m| m.bonus(deviation.side.into()).increment_ms());
                let tolerance = self.settings.clock_tolerance_ms + increment;
                if !any_size && difference_ms.unsigned_abs() < tolerance {
                    return;
                }
                let facts = Facts {
                    side: Some(deviation.side),
                    seconds: Some(deviation.shown_ms / 1000),
                    move_number: (deviation.moves > 0).then_some(deviation.moves),
                    detail: Some(Detail::Clock(fault)),
                    difference_s: Some(rounded_seconds(difference_ms)),
                    ..Facts::default()
                };
                // One alert per deviation: a later one at the same clock is news again.
                let occurrence = Occurrence::deviation(
                    deviation.moves,
                    deviation.kind as u8,
                    deviation.side == Side::Black,
                );
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

    /// The pairing program's file gives `board`'s game of `round` the result `file` where
    /// the hub decided `hub`: the hub's stands until an arbiter declares a result there.
    /// Once for each result a file gives: the same file read again raises nothing.
    pub fn on_result_contradicted(
        &mut self,
        now: HubMs,
        board: BoardNo,
        round: RoundNo,
        (hub, file): (GameResult, GameResult),
    ) -> Vec<AlertChange> {
        let mut draft = self.draft(
            board,
            AlertKind::ResultCorrected,
            Occurrence(file as u64),
            None,
        );
        draft.incident.round = round;
        draft.facts = Facts {
            result: Some(hub),
            detail: Some(Detail::Signal(file)),
            ..Facts::default()
        };
        self.raise(now, draft).into_iter().collect()
    }

    /// Strangers' records in the cluster's journal stream, from record `first`: one alert
    /// for the hall per hour of the hub's time at most (a stranger who keeps appending is one
    /// call to the technician, every record still counted).
    pub fn on_strangers_records(&mut self, now: HubMs, first: u64) -> Vec<AlertChange> {
        const HOUR_MS: u64 = 3_600_000;
        let mut draft = self.hall_draft(
            AlertKind::StrangersRecords,
            Occurrence(now.0 / HOUR_MS),
            Vec::new(),
        );
        draft.facts.detail = Some(Detail::Number(first));
        self.raise(now, draft).into_iter().collect()
    }

    /// The journal's record of `board`'s event `seq` cannot be read: the board goes on from
    /// the events after it, and the arbiter is told which one was lost and where the game
    /// stood (`move_number`: the moves completed before it).
    pub fn on_journal_damaged(
        &mut self,
        now: HubMs,
        board: BoardNo,
        seq: Seq,
        moves_before: u32,
    ) -> Vec<AlertChange> {
        let mut draft = self.draft(
            board,
            AlertKind::JournalDamaged,
            Occurrence::at(seq.0),
            None,
        );
        draft.facts = Facts {
            detail: Some(Detail::Number(seq.0)),
            move_number: Some(moves_before),
            ..Facts::default()
        };
        self.raise(now, draft).into_iter().collect()
    }

    /// `refused` messages in `board`'s name failed its node's key in the window that began
    /// `since` (see `core::trust`): the technician is told once per window.
    pub fn on_forged_messages(
        &mut self,
        now: HubMs,
        board: BoardNo,
        since: HubMs,
        refused: u32,
    ) -> Vec<AlertChange> {
        let mut draft = self.draft(
            board,
            AlertKind::ForgedMessage,
            Occurrence::at(since.0),
            None,
        );
        draft.facts = Facts {
            detail: Some(Detail::Number(u64::from(refused))),
            ..Facts::default()
        };
        self.raise(now, draft).into_iter().collect()
    }

    /// Forged messages in the names of `boards` (many at once, since `since`): one alert for
    /// the hall, once per window (see `core::trust`), in the hall's zone.
    pub fn on_forged_flood(
        &mut self,
        now: HubMs,
        since: HubMs,
        boards: Vec<BoardNo>,
    ) -> Vec<AlertChange> {
        let draft = self.hall_draft(AlertKind::ForgedFlood, Occurrence::at(since.0), boards);
        self.raise(now, draft).into_iter().collect()
    }

    /// A node announced fewer events than the hub has from it: it lost its memory.
    pub fn on_node_replaced(
        &mut self,
        now: HubMs,
        board: BoardNo,
        node_highest: u64,
    ) -> Vec<AlertChange> {
        let draft = self.draft(
            board,
            AlertKind::NodeGap,
            Occurrence::at(node_highest),
            None,
        );
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
                ResultCorrected,
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
            Decision::Order { .. } => &[MovesFilledIn],
        };
        // An order answers the alert of its own stretch of moves, not another's.
        let stretch = match &record.action.decision {
            Decision::Order { from_ply, .. } => Some(*from_ply as u64),
            _ => None,
        };
        let mut note = format!(
            "decision {}: {}",
            record.id,
            describe(&record.action.decision)
        );
        // The outcome says when the arbiter departed from the hub's ruling, and why.
        if let Some(reason) = &record.action.override_reason {
            note.push_str(&format!(", overriding the hub's ruling: {reason}"));
        }
        let by = record.action.arbiter.clone();
        let of_the_game = |a: &Alert| record.round.is_none_or(|round| a.incident.round == round);
        let declared = matches!(record.action.decision, Decision::Result { result, .. } if result != GameResult::Ongoing);
        if let Decision::Result {
            result: GameResult::Ongoing,
            ..
        } = record.action.decision
        {
            let resolved: Vec<AlertId> = self
                .alerts
                .values()
                .filter(|a| a.board == Some(record.board) && a.result_decision.is_some())
                .filter(|a| of_the_game(a))
                .map(|a| a.id)
                .collect();
            return self.reopen(now, resolved, record.id, &by);
        }
        let mut changes = self.close_where(
            now,
            record.board,
            AlertState::Resolved,
            Some(by),
            &note,
            |a| {
                answers.contains(&a.kind)
                    && of_the_game(a)
                    && stretch.is_none_or(|ply| a.incident.occurrence == Occurrence::at(ply))
                    // A replay: this alert was opened again after this decision.
                    && a.reopened_by.is_none_or(|w| w < record.id)
            },
        );
        if declared {
            for change in &mut changes {
                let id = change.alert.id;
                change.alert.result_decision = Some(record.id);
                if let Some(alert) = self.alerts.get_mut(&id) {
                    alert.result_decision = Some(record.id);
                }
            }
            changes.extend(self.game_ended(now, record.board));
        }
        changes
    }
}
