//! Arbiter alerts: what an arbiter must handle at a board, with the article that applies.
//!
//! - [`catalogue`]: the kinds of alert, their severity and article per edition.
//! - [`texts`]: what happened and what to do, in the languages of our Laws texts.
//! - [`routing`]: zones of boards, their arbiters, when an alert escalates.
//! - [`desk`]: the state machine: board events and the time in, alert changes out.
//!
//! One incident is one alert: it is raised once and updated as the incident develops,
//! acknowledged by an arbiter, and resolved (with the decision) or expired (the condition
//! cleared by itself). Alerts go to arbiters only (12.6): nothing here reaches a clock or the
//! public feed.

pub mod catalogue;
pub mod desk;
pub mod detail;
pub mod routing;
pub mod texts;

use serde::{Deserialize, Serialize};

pub use catalogue::{AlertKind, Severity};
pub use desk::{AlertDesk, AlertSettings};
pub use detail::Detail;
pub use routing::Routing;
pub use texts::Language;

use super::arbiter::GameResult;
use super::ids::{AlertId, BoardNo, DecisionId, RoundNo};
use super::side::Side;
use super::time::HubMs;

/// Where an alert is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertState {
    Raised,
    Acknowledged,
    Resolved,
    Expired,
}

impl AlertState {
    /// Raised or acknowledged: someone still has to act.
    pub fn is_open(self) -> bool {
        matches!(self, AlertState::Raised | AlertState::Acknowledged)
    }
}

/// Until when the arbiter can act.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deadline {
    /// Before the opponent completes his next move (2023 A.5.2: after that the move stands).
    OpponentsNextMove,
    /// The hub's time (Unix ms) the incident is forecast for: a flag falls.
    At(u64),
}

/// What the alert is about, for its texts: each kind uses the facts it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    /// The player concerned: the flagged one, the one who moved illegally, the late one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// The result the Laws give, for the arbiter to confirm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    /// A time in seconds: a penalty, time left, a silence, a pause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    /// The move number (1, 2, …) where it happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_number: Option<u32>,
    /// How the game ended, or what differs (`checkmate`, `increment_missing`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Detail>,
    /// A clock's difference from the time it should show, in seconds (what it shows minus
    /// what the time control and the moves give: positive, the player has more time).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub difference_s: Option<i64>,
    /// Zone alerts: the boards concerned.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub boards: Vec<BoardNo>,
}

/// Who did something to an alert, and when (hub time, Unix ms).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub by: String,
    pub at: u64,
}

/// One step of an alert's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub at: u64,
    /// The step's place in the hall's order of alert changes, from 1: what a phone that
    /// reconnects resumes after (0 in journals older than phones, numbered at a start).
    #[serde(default)]
    pub seq: u64,
    pub change: Change,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What changed in an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Raised,
    /// The incident developed (a second flag, a clock resumed, the node back).
    Updated,
    Acknowledged,
    /// Not acknowledged in time: the chief arbiter is called.
    Escalated,
    Resolved,
    Expired,
    /// The result that resolved it was withdrawn: it waits for a decision again.
    Reopened,
}

/// Which incident an alert is about: one incident, one alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Incident {
    /// The board; `None` for an incident of a whole zone (stored as board 0).
    #[serde(with = "zone_is_board_zero")]
    pub board: Option<BoardNo>,
    pub kind: AlertKind,
    pub occurrence: Occurrence,
    /// The round of the game (or for a zone, the round in play) it happened in; 0 in alerts
    /// kept from before rounds were.
    #[serde(default)]
    pub round: RoundNo,
}

/// Tells incidents of one kind at one board apart: the ply of an illegal move, the time a
/// pause began, the moves after which a clock deviated; 0 where a board has one at a time.
/// One number on the wire and in the journal; made and read only here.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Occurrence(pub u64);

impl Occurrence {
    /// Incidents of which a board has one at a time.
    pub const ONLY: Occurrence = Occurrence(0);

    /// The `nth` illegal move (7.5.5), completed after `ply` moves.
    pub fn illegal_move(ply: usize, nth: u32) -> Occurrence {
        Occurrence((ply as u64) << 8 | u64::from(nth & 0xff))
    }

    /// The ply of an [`Occurrence::illegal_move`].
    pub fn ply(self) -> u64 {
        self.0 >> 8
    }

    /// A clock deviation of `kind` (its number) seen after `moves` of `side`'s moves.
    pub fn deviation(moves: u32, kind: u8, black: bool) -> Occurrence {
        Occurrence(u64::from(moves) << 8 | u64::from(kind & 0x7f) << 1 | u64::from(black))
    }

    /// A watched condition that began at `at`; `sub` tells conditions of one kind at a board
    /// apart (White's flag, Black's).
    pub fn watched(at: HubMs, sub: u8) -> Occurrence {
        Occurrence(at.0 << 1 | u64::from(sub & 1))
    }

    /// The `sub` of an [`Occurrence::watched`].
    pub fn sub(self) -> u8 {
        (self.0 & 1) as u8
    }

    /// An incident told apart by one number: a time, a ply, a sequence number.
    pub fn at(n: u64) -> Occurrence {
        Occurrence(n)
    }
}

/// An incident's board as the journal and the API have always held it: 0 for a zone.
mod zone_is_board_zero {
    use protocol::BoardNo;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(board: &Option<BoardNo>, s: S) -> Result<S::Ok, S::Error> {
        board.map_or(0, |b| b.0).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BoardNo>, D::Error> {
        let n = u16::deserialize(d)?;
        Ok((n != 0).then_some(BoardNo(n)))
    }
}

/// An alert as it is stored, published and shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    pub id: AlertId,
    /// The board; `null` for an alert about a whole zone.
    pub board: Option<BoardNo>,
    /// "White – Black" once pairings are known.
    pub players: Option<String>,
    pub zone: String,
    pub kind: AlertKind,
    pub severity: Severity,
    /// The article of the tournament's edition that applies; `null` for technical alerts
    /// (a node offline), where no Law does.
    pub article: Option<String>,
    pub facts: Facts,
    /// What happened and what to do, in English; [`texts`] renders the other languages.
    pub text: String,
    pub action: String,
    pub deadline: Option<Deadline>,
    pub state: AlertState,
    pub raised_at: u64,
    pub updated_at: u64,
    /// The arbiters of the zone who should act; the chief arbiter once escalated.
    pub to: Vec<String>,
    pub escalated_at: Option<u64>,
    pub acknowledged: Option<Stamp>,
    pub resolved: Option<Stamp>,
    /// The decision that resolved it, or why it expired.
    pub outcome: Option<String>,
    pub incident: Incident,
    /// The same fault again at the board while this alert was open (one fault, one page):
    /// the later incidents, folded into this alert; the facts are the latest one's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<Incident>,
    /// The decision declaring a result that resolved it: withdrawing that result (`*`)
    /// opens the alert again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_decision: Option<DecisionId>,
    /// The withdrawal that opened it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reopened_by: Option<DecisionId>,
    pub history: Vec<Step>,
}

impl Alert {
    /// Renders `text` and `action` again from the facts, in English (as kept).
    pub(crate) fn render_again(&mut self) {
        self.render_in(Language::English);
    }

    /// Renders `text` and `action` in `language`.
    pub fn in_language(&self, language: Language) -> Alert {
        let mut alert = self.clone();
        alert.render_in(language);
        alert
    }

    fn render_in(&mut self, language: Language) {
        let (text, action) = texts::render(
            self.kind,
            &self.facts,
            self.board,
            &self.zone,
            self.deadline,
            language,
        );
        self.text = text;
        self.action = action;
    }
}

/// An alert that changed, for the shell to store and publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertChange {
    pub change: Change,
    pub alert: Alert,
}

/// At most this many alerts in a zone's retained open list: a pager's screen shows fewer,
/// and an MQTT message must stay well under the packet size limit (256 KiB) whatever the hall
/// does.
pub const OPEN_LIST_LIMIT: usize = 100;

/// The order pagers and screens show alerts in: the most urgent first, then those nobody
/// acknowledged, then the newest.
pub fn by_urgency(a: &Alert, b: &Alert) -> std::cmp::Ordering {
    let key = |x: &Alert| {
        (
            x.severity,
            x.state != AlertState::Raised,
            std::cmp::Reverse(x.raised_at),
        )
    };
    key(a).cmp(&key(b))
}

/// How many of `alerts` there are, and the [`OPEN_LIST_LIMIT`] most urgent of them in
/// [`by_urgency`] order: what a zone's open list holds. Only those are cloned: a hall in
/// time trouble has hundreds open, and cloning every one each second held the hub's loop up
/// for milliseconds.
pub fn most_urgent<'a>(alerts: impl Iterator<Item = &'a Alert>) -> (usize, Vec<Alert>) {
    let mut alerts: Vec<&Alert> = alerts.collect();
    alerts.sort_by(|a, b| by_urgency(a, b));
    let listed = alerts.iter().take(OPEN_LIST_LIMIT).copied().cloned();
    (alerts.len(), listed.collect())
}

/// What an arbiter does to an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertAction {
    #[serde(alias = "acknowledge")]
    Ack,
    Resolve,
}

/// A pager's command, or the body of `POST /api/alerts/{id}/ack|resolve` (without `id`
/// and `action`, which the path gives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertCommand {
    pub action: AlertAction,
    /// The arbiter's name; `"pager"` or `"http"` when not given.
    pub by: String,
    /// How the alert was resolved.
    pub note: Option<String>,
}

/// An alert for the tests of what shows alerts: time trouble at board `id`, raised at `id`
/// ms, with no history.
#[cfg(test)]
pub(crate) fn sample(id: u64) -> Alert {
    let board = BoardNo(id as u16);
    let kind = AlertKind::TimeTrouble;
    Alert {
        id: AlertId(id),
        board: Some(board),
        players: Some("Carlsen, Magnus – Nakamura, Hikaru".into()),
        zone: "hall".into(),
        kind,
        severity: Severity::Normal,
        article: Some("12.3".into()),
        facts: Facts::default(),
        text: "Board 1: White is short of time: 12 s left.".into(),
        action: "Be present at the board.".into(),
        deadline: None,
        state: AlertState::Raised,
        raised_at: id,
        updated_at: id,
        to: vec!["chief".into()],
        escalated_at: None,
        acknowledged: None,
        resolved: None,
        outcome: None,
        incident: Incident {
            board: Some(board),
            kind,
            occurrence: Occurrence::ONLY,
            round: Default::default(),
        },
        repeats: Vec::new(),
        result_decision: None,
        reopened_by: None,
        history: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_lists_its_most_urgent_alerts_and_counts_them_all() {
        let mut alerts: Vec<Alert> = (1..=1_000).map(sample).collect();
        alerts[499].severity = Severity::Urgent;
        alerts[9].state = AlertState::Acknowledged;
        let (open, listed) = most_urgent(alerts.iter());
        assert_eq!(open, 1_000);
        assert_eq!(listed.len(), OPEN_LIST_LIMIT);
        // The urgent one first, then the newest of those nobody acknowledged.
        let ids: Vec<u64> = listed.iter().take(3).map(|a| a.id.0).collect();
        assert_eq!(ids, [500, 1_000, 999]);
        assert!(listed.iter().all(|a| a.id != AlertId(10)));
        let (open, listed) = most_urgent(alerts[..3].iter());
        assert_eq!((open, listed.len()), (3, 3));
    }
}
