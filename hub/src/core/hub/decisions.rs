//! What arbiters do: decisions at a board (in play, or a game of a round that is over),
//! acknowledging and resolving alerts, from the API or a sealed pager.

use protocol::BoardNo;

use super::durable::Deferred;
use super::output::{Count, PagerRefusal, Reply, RequestId, Write};
use super::{Hub, PAGER_COMMAND_FRESH_MS};
use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{AlertAction, AlertCommand};
use crate::core::arbiter::{self, ArbiterAction, Decision, DecisionError, DecisionRecord};
use crate::core::ids::{AlertId, RoundNo, Seq};
use crate::core::names;
use crate::core::pager_seal;
use crate::core::phone::PhoneAct;
use crate::core::time::HubMs;

impl Hub {
    /// An arbiter's decision at `board`: carried out and journaled; the answer waits for
    /// the flush.
    ///
    /// `round` names the game: the board's in play (`None`, or its round), or one of a round
    /// that is over, which takes only a result. `held_to`: an arbiter's own login, held to
    /// the zones they watch (`None`: the chief's token).
    pub fn handle_decision(
        &mut self,
        now: HubMs,
        request: RequestId,
        board: BoardNo,
        round: Option<RoundNo>,
        action: ArbiterAction,
        held_to: Option<&str>,
    ) {
        self.now = self.now.max(now);
        if let Some(refusal) = held_to.and_then(|name| self.out_of_zone(name, board)) {
            self.reply(request, Reply::Decision(Err(refusal)));
            return;
        }
        match self.decide(now, board, round, action) {
            Ok((at, entry)) => self.pending.wait(at, Deferred::Decision(request, entry)),
            Err(e) => self.reply(request, Reply::Decision(Err(e))),
        }
    }

    /// Carries out and journals a decision (see [`Hub::handle_decision`]): where it is in
    /// the journal, and its audit entry.
    pub(super) fn decide(
        &mut self,
        now: HubMs,
        board: BoardNo,
        round: Option<RoundNo>,
        action: ArbiterAction,
    ) -> Result<(super::Position, arbiter::AuditEntry), DecisionError> {
        arbiter::check_signature(&action.arbiter, action.note.as_deref())?;
        // Kept without invisible format characters: a note read backwards (U+202E) or two
        // signatures that read alike.
        let action = ArbiterAction {
            arbiter: names::without_format(&action.arbiter),
            note: action.note.as_deref().map(names::without_format),
            ..action
        };
        if let Some(reason) = &action.override_reason {
            arbiter::check_text("the override's reason", reason, arbiter::MAX_NOTE_CHARS)?;
        }
        let decision = action.decision.clone().normalized()?;
        let action = ArbiterAction { decision, ..action };
        self.ruling_kept(board, round, &action)?;
        let paired = self.unheard_but_paired(board, round);
        let made = paired.is_some() && self.hall.board(board).is_none();
        let in_play = self.hall.round_of(board);
        if let Some(round) = paired {
            // A board without an e-board: its game is the arbiter's to score.
            self.hall.ensure(board, round);
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
                return self.decide_for_archive(round, record);
            }
            (Some(round), playing) if Some(round) != playing => {
                return Err(DecisionError::NoGame(board, round));
            }
            _ => {}
        }
        let effects = match self.hall.decide(&record, paired.is_some()) {
            Ok(effects) => effects,
            Err(e) => {
                if made {
                    self.hall.forget_unplayed(board);
                }
                return Err(e);
            }
        };
        let at = self.write(Write::Decision(record.clone()));
        self.next_decision = self.next_decision.next();
        tracing::info!(board = board.0, id = record.id.0, arbiter = %record.action.arbiter, decision = ?record.action.decision, "arbiter's decision");
        for effect in effects {
            self.carry_out(record.at, effect);
        }

        let changes = self.fan_out_decision(&record);
        self.record_alerts(changes, None);
        self.watch(now, board);
        let change = self.desk.watch_round_end(now, &self.hall);
        self.record_alerts(change.into_iter().collect(), None);
        let entry = self
            .hall
            .board(board)
            .and_then(|b| b.decisions().last().cloned())
            .expect("the decision was just recorded");
        if paired.is_some_and(|round| round < in_play) {
            // A game of a round that is over, scored late: archived as it now stands.
            self.switch(now, board, in_play, true);
        }
        self.game_ended(now);
        Ok((at, entry))
    }

    /// The round of `board`'s game when the board is paired there but its node never
    /// reported (a board without an e-board): the round in play, or `round` if named, one
    /// in play or over whose game the archive does not have. `None` for a board heard from
    /// or not paired.
    pub(super) fn unheard_but_paired(
        &self,
        board: BoardNo,
        round: Option<RoundNo>,
    ) -> Option<RoundNo> {
        let state = self.hall.board(board);
        if state.is_some_and(|b| b.last_seq().0 > 0) {
            return None;
        }
        let in_play = self.hall.round_of(board);
        let round = round.unwrap_or(in_play);
        let fits = match state {
            Some(state) => state.round() == round,
            None => {
                round == in_play || (round < in_play && self.archive.get(round, board).is_none())
            }
        };
        let paired = self.rounds.games(round).iter().any(|p| p.board == board);
        (fits && paired).then_some(round)
    }

    /// An arbiter's decision for a game of a round that is over: only its result changes.
    /// A declared result on the game in play at `board` that departs from the hub's own
    /// ruling there is refused unless it states why (`override`): a wrong default one tap
    /// away must not stand.
    fn ruling_kept(
        &self,
        board: BoardNo,
        round: Option<RoundNo>,
        action: &ArbiterAction,
    ) -> Result<(), DecisionError> {
        let Decision::Result { result, .. } = &action.decision else {
            return Ok(());
        };
        if !result.is_decided() || action.override_reason.is_some() {
            return Ok(());
        }
        let ruling = self
            .hall
            .board(board)
            .filter(|b| round.is_none_or(|r| b.round() == r))
            .and_then(|b| b.ruling());
        match ruling {
            Some(ruling) if ruling.result != *result => Err(DecisionError::ContradictsRuling {
                ruling: ruling.result,
                article: ruling.article,
            }),
            _ => Ok(()),
        }
    }

    pub(super) fn decide_for_archive(
        &mut self,
        round: RoundNo,
        record: DecisionRecord,
    ) -> Result<(super::Position, arbiter::AuditEntry), DecisionError> {
        let entry = self.decide_archived(round, &record)?;
        let at = self.write(Write::Decision(record.clone()));
        self.next_decision = self.next_decision.next();
        tracing::info!(board = record.board.0, round = round.0, id = record.id.0, arbiter = %record.action.arbiter, decision = ?record.action.decision, "arbiter's decision for a round that is over");
        let changes = self.desk.on_decision(record.at, &record);
        self.record_alerts(changes, None);
        Ok((at, entry))
    }

    /// Carries out a decision on an archived game, and journals the game as it now is.
    pub(super) fn decide_archived(
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
        self.hall.decided_at(record.board);
        self.archive_changes += 1;
        let _ = self.write(Write::Game(game));
        Ok(entry)
    }

    /// An arbiter acknowledges or resolves an alert, from the API (`request`) or a pager
    /// (none: a refusal is counted). The answer waits until the change is durable; one that
    /// changes nothing (done before) is answered at once. `held_to`: an arbiter's own login
    /// or phone, held to the zones they watch (`None`: the chief's token, or a pager whose
    /// zone was checked).
    pub fn handle_alert_command(
        &mut self,
        now: HubMs,
        request: Option<RequestId>,
        id: AlertId,
        command: AlertCommand,
        held_to: Option<&str>,
    ) {
        self.now = self.now.max(now);
        if let Some(refusal) = held_to.and_then(|name| self.alert_out_of_zone(name, id)) {
            match request {
                Some(request) => self.reply(request, Reply::Alert(Err(refusal))),
                None => self.count(Count::PagerRefused(PagerRefusal::OutOfZone)),
            }
            return;
        }
        let command = AlertCommand {
            by: names::without_format(&command.by),
            note: command.note.as_deref().map(names::without_format),
            ..command
        };
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
        if self.access.hall_secret.is_some() && !self.access.trust.open_hall() {
            let key = self.access.roster.key(&command.by);
            let genuine = seal.as_ref().zip(key).is_some_and(|(seal, key)| {
                now.0.abs_diff(seal.sent_ms) <= PAGER_COMMAND_FRESH_MS
                    && pager_seal::verify_command(key, &self.event, id, &command, seal)
            });
            if !genuine {
                tracing::debug!(id = id.0, by = %command.by, "pager command refused: not sealed by its arbiter");
                self.count(Count::PagerRefused(PagerRefusal::NotSealed));
                return;
            }
            if self.alert_out_of_zone(&command.by, id).is_some() {
                tracing::debug!(id = id.0, by = %command.by, "pager command refused: not the arbiter's zone");
                self.count(Count::PagerRefused(PagerRefusal::OutOfZone));
                return;
            }
        }
        self.handle_alert_command(now, None, id, command, None);
    }

    /// An arbiter tapped `act` on alert `id` on their phone (the edge found them by their
    /// phone's token): taken when `mac` is that button's under their own key, in their
    /// name; answered with the alert, or [`AlertError::NotTheirs`].
    pub fn handle_phone_command(
        &mut self,
        now: HubMs,
        request: RequestId,
        arbiter: &str,
        id: AlertId,
        act: PhoneAct,
        mac: &str,
    ) {
        self.now = self.now.max(now);
        let genuine = self
            .access
            .roster
            .key(arbiter)
            .is_some_and(|key| act.checks(key, id, mac));
        if !genuine {
            tracing::debug!(id = id.0, arbiter = %arbiter.escape_debug(), "phone command refused: not the arbiter's button");
            self.reply(request, Reply::Alert(Err(AlertError::NotTheirs(id))));
            return;
        }
        let action = match act {
            PhoneAct::Acknowledge => AlertAction::Ack,
            PhoneAct::Resolve => AlertAction::Resolve,
        };
        let command = AlertCommand {
            action,
            by: arbiter.to_owned(),
            note: None,
        };
        self.handle_alert_command(now, Some(request), id, command, Some(arbiter));
    }
}
