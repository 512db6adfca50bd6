//! The alerts themselves: raised once per incident, updated as it develops, acknowledged,
//! escalated to the chief arbiter when nobody did, resolved or expired.

use super::{AlertDesk, AlertError, Draft};
use crate::core::alerts::catalogue::AlertKind;
use crate::core::alerts::routing::HALL_ZONE;
use crate::core::alerts::texts::{self, Language};
use crate::core::alerts::{
    Alert, AlertChange, AlertState, Change, Facts, Incident, Occurrence, Stamp, Step,
};
use crate::core::ids::{AlertId, BoardNo, DecisionId};
use crate::core::laws::Article;
use crate::core::time::HubMs;

impl AlertDesk {
    /// An arbiter has seen the alert. Acknowledging twice, or a closed alert, changes
    /// nothing (`Ok(None)`).
    pub fn acknowledge(
        &mut self,
        now: HubMs,
        id: AlertId,
        by: &str,
    ) -> Result<Option<AlertChange>, AlertError> {
        let state = self.alerts.get(&id).ok_or(AlertError::Unknown(id))?.state;
        if state != AlertState::Raised {
            return Ok(None);
        }
        self.unschedule_escalation(id);
        let alert = self.alerts.get_mut(&id).expect("known");
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
        id: AlertId,
        by: &str,
        note: Option<String>,
    ) -> Result<Option<AlertChange>, AlertError> {
        let alert = self.alerts.get(&id).ok_or(AlertError::Unknown(id))?;
        if !alert.state.is_open() {
            return Ok(None);
        }
        Ok(self.close(now, id, AlertState::Resolved, Some(by.to_owned()), note))
    }

    /// Escalates the alerts nobody acknowledged in time: the chief arbiter is called.
    pub fn escalate(&mut self, now: HubMs) -> Vec<AlertChange> {
        let chiefs = self.routing.chiefs();
        let mut changes = Vec::new();
        while let Some(&(due, id)) = self.escalations.first() {
            if due > now.0 {
                break;
            }
            self.escalations.pop_first();
            let Some(alert) = self.alerts.get_mut(&id) else {
                continue;
            };
            if alert.state != AlertState::Raised || alert.escalated_at.is_some() {
                continue;
            }
            alert.escalated_at = Some(now.0);
            for chief in &chiefs {
                if !alert.to.contains(chief) {
                    alert.to.push(chief.clone());
                }
            }
            changes.push(self.changed(id, now, Change::Escalated, None, None));
        }
        changes
    }

    /// When the next alert escalates, if one is waiting.
    pub fn escalation_deadline(&self) -> Option<HubMs> {
        self.escalations.first().map(|(due, _)| HubMs(*due))
    }

    /// Notes when `alert` escalates, if nobody acknowledges it (info alerts never do).
    pub(super) fn schedule_escalation(&mut self, alert: &Alert) {
        if alert.state != AlertState::Raised || alert.escalated_at.is_some() {
            return;
        }
        if let Some(after) = self.settings.escalate_after(alert.severity) {
            self.escalations
                .insert((alert.raised_at.saturating_add(after), alert.id));
        }
    }

    /// `alert` will not escalate: acknowledged or closed.
    fn unschedule_escalation(&mut self, id: AlertId) {
        let Some(alert) = self.alerts.get(&id) else {
            return;
        };
        if let Some(after) = self.settings.escalate_after(alert.severity) {
            self.escalations
                .remove(&(alert.raised_at.saturating_add(after), id));
        }
    }

    /// The game at `board` ended: what only matters while it is played expires.
    pub(super) fn game_ended(&mut self, now: HubMs, board: BoardNo) -> Vec<AlertChange> {
        self.close_where(
            now,
            board,
            AlertState::Expired,
            None,
            "the game is over",
            |a| a.kind.lifetime().game_over,
        )
    }

    pub(super) fn draft(
        &self,
        board: BoardNo,
        kind: AlertKind,
        occurrence: Occurrence,
        article: Option<Article>,
    ) -> Draft {
        Draft {
            incident: Incident {
                board: Some(board),
                kind,
                occurrence,
                round: self.round_of(board),
            },
            board: Some(board),
            zone: self.routing.zone_of(board).to_owned(),
            severity: kind.severity(),
            article,
            facts: Facts::default(),
            deadline: None,
        }
    }

    /// A draft of the hall's own alert of `kind` (no board, the hall's zone), about
    /// `boards`: a round finished, a flood of forgeries.
    pub(super) fn hall_draft(
        &self,
        kind: AlertKind,
        occurrence: Occurrence,
        boards: Vec<BoardNo>,
    ) -> Draft {
        Draft {
            incident: Incident {
                board: None,
                kind,
                occurrence,
                round: self.round,
            },
            board: None,
            zone: HALL_ZONE.to_owned(),
            severity: kind.severity(),
            article: None,
            facts: Facts {
                boards,
                ..Facts::default()
            },
            deadline: None,
        }
    }

    /// A new alert for `draft`; nothing for an incident that already has one, so the same
    /// events fed twice (a duplicate, a replay) change nothing. Developments of an incident
    /// are updates, made where they are seen.
    ///
    /// One fault, one page: a new incident of a kind the board already has an open alert of
    /// (a clock set wrong again, another illegal move before the arbiter came) updates that
    /// alert instead, with its count and the latest facts; it escalates once, as raised.
    pub(super) fn raise(&mut self, now: HubMs, draft: Draft) -> Option<AlertChange> {
        if self.incidents.contains_key(&draft.incident) {
            return None;
        }
        if let Some(open) = self.open_alike(&draft.incident) {
            return Some(self.repeated(now, open, draft));
        }
        let id = self.next_id;
        self.next_id = id.next();
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
            article: draft.article.map(|a| a.to_string()),
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
            repeats: Vec::new(),
            result_decision: None,
            reopened_by: None,
            history: vec![Step {
                at: now.0,
                seq: self.next_step(),
                change: Change::Raised,
                by: None,
                note: None,
            }],
        };
        self.incidents.insert(alert.incident, id);
        self.open.insert(id, alert.board);
        self.schedule_escalation(&alert);
        self.alerts.insert(id, alert.clone());
        Some(AlertChange {
            change: Change::Raised,
            alert,
        })
    }

    /// The open alert of `incident`'s kind at its board, in its round, if the kind folds
    /// repeats (a watched condition has its own alert per condition).
    fn open_alike(&self, incident: &Incident) -> Option<AlertId> {
        let board = incident.board?;
        if incident.kind.lifetime().watched {
            return None;
        }
        self.open_at(board)
            .find(|a| a.kind == incident.kind && a.incident.round == incident.round)
            .map(|a| a.id)
    }

    /// `draft`'s incident folded into open alert `id`: counted, its facts the latest.
    fn repeated(&mut self, now: HubMs, id: AlertId, draft: Draft) -> AlertChange {
        self.incidents.insert(draft.incident, id);
        let alert = self.alerts.get_mut(&id).expect("an open alert");
        alert.repeats.push(draft.incident);
        alert.facts = draft.facts;
        alert.deadline = draft.deadline.or(alert.deadline);
        alert.render_again();
        let times = alert.repeats.len() + 1;
        let note = format!("the same again: {times} times in all");
        self.changed(id, now, Change::Updated, None, Some(note))
    }

    /// The result that resolved these alerts was withdrawn by decision `withdrawal`: each
    /// waits for a decision again, acknowledged if it was. A replay of the journal changes
    /// nothing it already did: an alert resolved by a later result, or opened again by this
    /// withdrawal or a later one, stays as it is.
    pub(super) fn reopen(
        &mut self,
        now: HubMs,
        ids: Vec<AlertId>,
        withdrawal: DecisionId,
        by: &str,
    ) -> Vec<AlertChange> {
        let mut changes = Vec::new();
        for id in ids {
            let Some(alert) = self.alerts.get_mut(&id) else {
                continue;
            };
            let resolved_before = alert.state == AlertState::Resolved
                && alert.result_decision.is_some_and(|d| d < withdrawal);
            if !resolved_before {
                continue;
            }
            alert.state = if alert.acknowledged.is_some() {
                AlertState::Acknowledged
            } else {
                AlertState::Raised
            };
            alert.resolved = None;
            alert.outcome = None;
            alert.reopened_by = Some(withdrawal);
            let alert = alert.clone();
            self.open.insert(id, alert.board);
            if alert.state == AlertState::Raised {
                self.schedule_escalation(&alert);
            }
            let note = format!("decision {withdrawal}: the result was withdrawn");
            changes.push(self.changed(id, now, Change::Reopened, Some(by.to_owned()), Some(note)));
        }
        changes
    }

    pub(super) fn update(
        &mut self,
        now: HubMs,
        id: AlertId,
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
        alert.render_again();
        Some(self.changed(id, now, Change::Updated, None, note))
    }

    pub(super) fn close(
        &mut self,
        now: HubMs,
        id: AlertId,
        state: AlertState,
        by: Option<String>,
        note: Option<String>,
    ) -> Option<AlertChange> {
        self.unschedule_escalation(id);
        let alert = self.alerts.get_mut(&id)?;
        alert.state = state;
        alert.outcome = note.clone();
        if state == AlertState::Resolved {
            alert.resolved = Some(Stamp {
                by: by.clone().unwrap_or_default(),
                at: now.0,
            });
        }
        let board = alert.board;
        self.open.remove(id, board);
        self.watched.remove(id);
        let change = if state == AlertState::Resolved {
            Change::Resolved
        } else {
            Change::Expired
        };
        Some(self.changed(id, now, change, by, note))
    }

    /// Closes the open alerts at `board` that `which` picks.
    pub(super) fn close_where(
        &mut self,
        now: HubMs,
        board: BoardNo,
        state: AlertState,
        by: Option<String>,
        note: &str,
        which: impl Fn(&Alert) -> bool,
    ) -> Vec<AlertChange> {
        let ids: Vec<AlertId> = self
            .open_at(board)
            .filter(|a| which(a))
            .map(|a| a.id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.close(now, id, state, by.clone(), Some(note.to_owned())))
            .collect()
    }

    pub(super) fn open_at(&self, board: BoardNo) -> impl Iterator<Item = &Alert> {
        self.open.at(board).filter_map(|id| self.alerts.get(id))
    }

    /// Records `change` in the alert's history and hands out the new state.
    pub(super) fn changed(
        &mut self,
        id: AlertId,
        now: HubMs,
        change: Change,
        by: Option<String>,
        note: Option<String>,
    ) -> AlertChange {
        let seq = self.next_step();
        let alert = self.alerts.get_mut(&id).expect("a known alert");
        alert.updated_at = now.0;
        alert.history.push(Step {
            at: now.0,
            seq,
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
