//! The handlers' one way to the hall: a [`Query`] sent to the loop that owns the core, and
//! its answer awaited, so the core keeps one owner and no handler touches it.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use protocol::BoardNo;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{Alert, AlertCommand};
use crate::core::arbiter::{ArbiterAction, AuditEntry, DecisionError};
use crate::core::board::{BoardDetail, BoardSummary, Urgency};
use crate::core::claim::{ClaimCheck, ClaimRequest};
use crate::core::hub::{ArbiterEnrolment, Enrolled, EnrolmentRefusal, StartRequest, UndoRequest};
use crate::core::ids::{AlertId, HardwareId, RoundNo};
use crate::core::pairings::{Bye, Pairing, RoundState};
use crate::core::relay::slices::BoardRanges;
use crate::core::rounds::StartError;
use crate::core::setup::NodesReport;
use crate::edge::http::access::Access;
use crate::edge::outlets::OutletStatus;
use crate::metrics::Metrics;
use crate::view::feed::FeedGame;
use crate::view::tiles::{Audience, SpectatorBoard};

/// A page's start: the whole hall as of now (JSON), and the changes from then on.
pub struct LiveStart {
    pub hall: String,
    pub updates: broadcast::Receiver<Arc<str>>,
}

/// What an arbiter's phone stream starts from: what the phone watches, the key its
/// buttons are sealed with, the steps it missed and the alert changes to come.
pub struct PhoneFeed {
    pub watch: crate::core::phone::PhoneWatch,
    pub key: protocol::seal::NodeKey,
    /// The phone's topic and token as they are now.
    pub credentials: crate::core::phone::PhoneCredentials,
    /// The alerts' steps after the one asked for, oldest first.
    pub backlog: Vec<(crate::core::alerts::Alert, crate::core::alerts::Step)>,
    pub live: broadcast::Receiver<Arc<crate::core::alerts::AlertChange>>,
}

/// An arbiter to enrol: their name, the zones they watch (none: as configured, or the
/// whole hall) and their language.
#[derive(Debug)]
pub struct ArbiterEnrolRequest {
    pub name: String,
    pub zones: Vec<String>,
    pub language: Option<crate::core::alerts::Language>,
}

/// A question for the loop that owns the hall.
pub enum Query {
    Boards(oneshot::Sender<Vec<BoardSummary>>),
    /// A board's game in a round (`None`: the one it plays), as `GET /api/boards/{n}`
    /// shows it.
    Board(
        BoardNo,
        Option<RoundNo>,
        oneshot::Sender<Option<BoardDetail>>,
    ),
    TimeTrouble(oneshot::Sender<Vec<Urgency>>),
    ConnectedNodes(oneshot::Sender<usize>),
    /// Whether the hub can make events durable; the reason when not.
    Health(oneshot::Sender<Result<(), String>>),
    CheckClaim(BoardNo, ClaimRequest, oneshot::Sender<Option<ClaimCheck>>),
    /// An arbiter's decision for a board's game (of a round; `None`: the one in play);
    /// answered once it is durable.
    /// A decision at a board (of a round), by an arbiter's own login held to their zones
    /// (`Some(name)`) or the chief's token (`None`).
    Decide(
        BoardNo,
        Option<RoundNo>,
        ArbiterAction,
        Option<String>,
        oneshot::Sender<Result<AuditEntry, DecisionError>>,
    ),
    /// Every alert.
    Alerts(oneshot::Sender<Vec<Alert>>),
    /// A round's pairings (of one section, or the whole hall), with the hub's results (for
    /// the spectators, as the broadcast delay releases them).
    Pairings(
        RoundNo,
        Option<String>,
        Audience,
        oneshot::Sender<Option<Vec<Pairing>>>,
    ),
    /// A section's standings after a round (by default the round in play), as the audience
    /// sees the results.
    Standings(
        Option<RoundNo>,
        Option<String>,
        Audience,
        oneshot::Sender<Option<crate::view::standings::Standings>>,
    ),
    /// A team event's standings, as [`Query::Standings`] has the players'.
    TeamStandings(
        Option<RoundNo>,
        Option<String>,
        Audience,
        oneshot::Sender<Option<crate::view::standings::TeamStandings>>,
    ),
    /// A round's players without a board (of one section, or the whole hall).
    Byes(RoundNo, Option<String>, oneshot::Sender<Vec<Bye>>),
    /// The pairing program's TRF with the hub's results of every round.
    /// (Of a section, or the hall's own.)
    ResultsTrf(Option<String>, oneshot::Sender<Option<String>>),
    /// The hall's nodes and the technician's warnings.
    Nodes(oneshot::Sender<NodesReport>),
    /// How each of the broadcast's outlets is doing.
    Outlets(oneshot::Sender<Vec<OutletStatus>>),
    /// Every round with pairings or started, and how far each is (for the spectators, as
    /// the broadcast delay releases the results).
    Rounds(Audience, oneshot::Sender<Vec<RoundState>>),
    /// An arbiter starts a round; answered with the rounds once durable.
    StartRound(
        StartRequest,
        oneshot::Sender<Result<Vec<RoundState>, StartError>>,
    ),
    /// The chief arbiter takes back a forced start; answered with the rounds once durable.
    UndoStart(
        UndoRequest,
        oneshot::Sender<Result<Vec<RoundState>, StartError>>,
    ),
    /// The technician binds a node's e-board hardware to a board (`None`: unbinds it);
    /// answered with the nodes' report once the binding is durable.
    Bind(HardwareId, Option<BoardNo>, oneshot::Sender<NodesReport>),
    /// The technician enrols a node's hardware for a board: its key and its binding in one
    /// step; answered with the key once durable.
    Enrol(HardwareId, BoardNo, oneshot::Sender<Enrolled>),
    /// The technician revokes a node's key; answered with the nodes' report once durable.
    Revoke(HardwareId, oneshot::Sender<NodesReport>),
    /// Who an external broker must let in: `username:password` lines.
    BrokerUsers(oneshot::Sender<Option<String>>),
    /// The chief arbiter enrols an arbiter (a new key); answered with their pager's
    /// credentials once durable, or why not.
    EnrolArbiter(
        ArbiterEnrolRequest,
        oneshot::Sender<Result<ArbiterEnrolment, EnrolmentRefusal>>,
    ),
    /// The chief arbiter revokes an arbiter; answered with the roster once durable.
    RevokeArbiter(String, oneshot::Sender<Vec<String>>),
    /// Renew an arbiter's links (page login, phone); the enrolled arbiters, once durable.
    RenewLinks(String, oneshot::Sender<Vec<String>>),
    /// The enrolled arbiters' names.
    Arbiters(oneshot::Sender<Vec<String>>),
    /// The public feed's games of a round (one board, or all; of a section, of a slice's
    /// boards); `None` for a round not in play.
    Broadcast(
        RoundNo,
        Option<BoardNo>,
        (Option<String>, Option<BoardRanges>),
        oneshot::Sender<Option<Vec<FeedGame>>>,
    ),
    /// An arbiter acknowledges or resolves an alert (their own login held to their zones:
    /// `Some(name)`); answered once it is durable.
    AlertCommand(
        AlertId,
        AlertCommand,
        Option<String>,
        oneshot::Sender<Result<Alert, AlertError>>,
    ),
    /// A supervision page connects.
    Live(Audience, oneshot::Sender<LiveStart>),
    /// What an arbiter's phone watches, and its subscription (`None`: not enrolled).
    PhoneWatch(
        String,
        oneshot::Sender<
            Option<(
                crate::core::phone::PhoneWatch,
                crate::core::phone::PhoneCredentials,
            )>,
        >,
    ),
    /// An arbiter's own page login (`None`: not enrolled).
    ArbiterLogin(String, oneshot::Sender<Option<String>>),
    /// An arbiter's phone stream, from after step `u64` (`None`: not enrolled).
    PhoneFeed(String, u64, oneshot::Sender<Option<PhoneFeed>>),
    /// An arbiter's tap on a phone's button: (arbiter, alert, act, MAC).
    PhoneCommand(
        String,
        AlertId,
        crate::core::phone::PhoneAct,
        String,
        oneshot::Sender<Result<Alert, AlertError>>,
    ),
    /// A board as spectators see it.
    SpectatorBoard(BoardNo, oneshot::Sender<Option<SpectatorBoard>>),
    /// The hub's role in a cluster (`None`: a hall of one hub).
    Cluster(oneshot::Sender<Option<serde_json::Value>>),
}

/// What a question does to the hall: reads it, or changes it (journaled, so refused while the
/// journal takes nothing: failed, or a cluster's standby).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Reads,
    Changes,
}

impl Query {
    /// Every question names its effect here, without a catch-all: a question added to the
    /// API does not compile until it says whether a standby may take it.
    pub fn effect(&self) -> Effect {
        use Query::*;
        match self {
            Decide(..) | StartRound(..) | UndoStart(..) | Bind(..) | Enrol(..) | Revoke(..)
            | EnrolArbiter(..) | RevokeArbiter(..) | RenewLinks(..) | AlertCommand(..)
            | PhoneCommand(..) => Effect::Changes,
            Boards(..) | Board(..) | TimeTrouble(..) | ConnectedNodes(..) | Health(..)
            | CheckClaim(..) | Alerts(..) | Pairings(..) | Standings(..) | TeamStandings(..)
            | Byes(..) | ResultsTrf(..) | Nodes(..) | Outlets(..) | Rounds(..)
            | BrokerUsers(..) | Arbiters(..) | Broadcast(..) | Live(..) | PhoneWatch(..)
            | ArbiterLogin(..) | PhoneFeed(..) | SpectatorBoard(..) | Cluster(..) => Effect::Reads,
        }
    }
}

/// How long a request waits for the loop that owns the hall: an answer that waits for the
/// journal comes within a flush (milliseconds); a client never hangs on a hub that cannot.
pub const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Clone)]
pub(super) struct Api {
    pub(super) queries: mpsc::Sender<Query>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) access: Access,
    /// The live streams open, per client.
    pub(super) slots: crate::edge::http::slots::StreamSlots,
    /// The hall CA's certificate (PEM), handed out with enrolments.
    pub(super) hall_ca: Arc<str>,
}

/// Why a request gets no answer.
#[derive(Debug)]
pub(super) enum ApiError {
    /// The path's board number is not a number.
    BadBoard(String),
    /// No node ever reported this board.
    UnknownBoard(BoardNo),
    /// The loop that owns the hall is stopping.
    Stopping,
    /// The loop did not answer within [`ANSWER_WITHIN`].
    NoAnswer,
    /// The arbiter's decision does not fit the game; nothing changed.
    Refused(DecisionError),
    /// No alert has this id.
    UnknownAlert(AlertId),
    /// No pairings for this round, or it never started.
    UnknownRound(RoundNo),
    /// No standings: the round (or the section) has no pairings.
    NoStandings,
    NoTeamStandings,
    /// The path's round number is not one.
    BadRound(String),
    /// A round cannot start.
    NotStarted(StartError),
    /// The configuration names no TRF file.
    NoTrf,
    /// A query parameter the API does not know how to read.
    BadQuery(String),
    /// The client, or the hub, holds as many live streams as allowed.
    TooManyStreams(crate::edge::http::slots::Full),
    /// The login may not do this (an arbiter's outside their zones).
    Forbidden(String),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::BadBoard(n) => (
                StatusCode::BAD_REQUEST,
                format!("{n:?} is not a board number"),
            )
                .into_response(),
            ApiError::UnknownBoard(n) => (
                StatusCode::NOT_FOUND,
                format!("board {n} has reported nothing"),
            )
                .into_response(),
            ApiError::NoAnswer => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the hub did not answer within 10 s (see /healthz)\n",
            )
                .into_response(),
            ApiError::Forbidden(why) => (StatusCode::FORBIDDEN, format!("{why}\n")).into_response(),
            ApiError::TooManyStreams(full) => (
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many live streams open: {full}; close a page\n"),
            )
                .into_response(),
            ApiError::Stopping => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the hub cannot answer: it is stopping, or its journal cannot write (see /healthz)\n",
            )
                .into_response(),
            ApiError::Refused(DecisionError::UnknownBoard(n)) => {
                ApiError::UnknownBoard(n).into_response()
            }
            ApiError::Refused(ref e @ DecisionError::ContradictsRuling { ruling, ref article }) => {
                let body = serde_json::json!({
                    "error": e.to_string(),
                    "ruling": {"result": ruling.code(), "article": article},
                });
                (StatusCode::CONFLICT, axum::Json(body)).into_response()
            }
            ApiError::Refused(e @ DecisionError::OutOfZone { .. }) => {
                (StatusCode::FORBIDDEN, format!("{e}\n")).into_response()
            }
            ApiError::Refused(e @ DecisionError::TooLong(_)) => {
                (StatusCode::UNPROCESSABLE_ENTITY, format!("{e}\n")).into_response()
            }
            ApiError::Refused(e) => (StatusCode::CONFLICT, format!("{e}\n")).into_response(),
            ApiError::UnknownAlert(id) => {
                (StatusCode::NOT_FOUND, format!("no alert {id}\n")).into_response()
            }
            ApiError::NoTeamStandings => (
                StatusCode::NOT_FOUND,
                "no team standings: the event's pairing file has no teams (TRF-2026's 310 \
                 records), or that round has no pairings (?round=R, ?section=NAME)\n",
            )
                .into_response(),
            ApiError::NoStandings => (
                StatusCode::NOT_FOUND,
                "no standings: that round has no pairings here (?round=R, ?section=NAME)\n",
            )
                .into_response(),
            ApiError::UnknownRound(r) => (
                StatusCode::NOT_FOUND,
                format!("round {r} has no pairings and never started\n"),
            )
                .into_response(),
            ApiError::BadRound(r) => (
                StatusCode::BAD_REQUEST,
                format!("{r:?} is not a round number (1 to 999)\n"),
            )
                .into_response(),
            ApiError::NotStarted(e @ StartError::UnknownSection(_)) => {
                (StatusCode::NOT_FOUND, format!("{e}\n")).into_response()
            }
            ApiError::NotStarted(e @ StartError::Pairings(_)) => {
                (StatusCode::UNPROCESSABLE_ENTITY, format!("{e}\n")).into_response()
            }
            ApiError::NotStarted(e @ StartError::NotARound(_)) => {
                (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response()
            }
            ApiError::NotStarted(e @ StartError::NotChief(_)) => {
                (StatusCode::FORBIDDEN, format!("{e}\n")).into_response()
            }
            ApiError::NotStarted(e) => (StatusCode::CONFLICT, format!("{e}\n")).into_response(),
            ApiError::NoTrf => (
                StatusCode::NOT_FOUND,
                "no TRF file configured for that ([pairings] trf, or a section's pairings; ?section=NAME)\n",
            )
                .into_response(),
            ApiError::BadQuery(why) => {
                (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response()
            }
        }
    }
}

impl Api {
    pub(super) async fn ask<T>(
        &self,
        query: impl FnOnce(oneshot::Sender<T>) -> Query,
    ) -> Result<T, ApiError> {
        let (reply, answer) = oneshot::channel();
        let asked = async {
            self.queries
                .send(query(reply))
                .await
                .map_err(|_| ApiError::Stopping)?;
            answer.await.map_err(|_| ApiError::Stopping)
        };
        tokio::time::timeout(ANSWER_WITHIN, asked)
            .await
            .map_err(|_| ApiError::NoAnswer)?
    }
}

/// Which section a request is about (`?section=NAME`); none: the whole hall.
#[derive(Debug, Default, serde::Deserialize)]
pub struct SectionQuery {
    pub section: Option<String>,
}

/// A JSON body that may be left out (a bare `POST`, `curl -X POST`): its defaults then.
pub(super) fn optional_body<T: Default + serde::de::DeserializeOwned>(
    body: &[u8],
) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::BadQuery(format!("body: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop that takes the question and never answers (a journal stuck in a flush, say):
    /// the request ends after [`ANSWER_WITHIN`] with a clear 503, never hangs.
    #[tokio::test(start_paused = true)]
    async fn a_request_the_loop_never_answers_ends_with_503() {
        let (queries, mut asked) = mpsc::channel(1);
        let api = Api {
            queries,
            metrics: Arc::default(),
            access: Access::new("a-token-of-the-hall".into()),
            slots: Default::default(),
            hall_ca: "".into(),
        };
        let kept = tokio::spawn(async move {
            let question = asked.recv().await;
            std::future::pending::<()>().await;
            drop(question);
        });
        let started = tokio::time::Instant::now();
        let answer = api.ask(Query::Health).await;
        assert!(matches!(answer, Err(ApiError::NoAnswer)), "{answer:?}");
        assert_eq!(started.elapsed(), ANSWER_WITHIN);
        let response = ApiError::NoAnswer.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        kept.abort();
    }

    #[test]
    fn the_journaled_questions_are_the_changes_a_standby_refuses() {
        let (reply, _) = oneshot::channel();
        assert_eq!(Query::Boards(reply).effect(), Effect::Reads);
        let (reply, _) = oneshot::channel();
        assert_eq!(
            Query::RevokeArbiter("IA Berg".into(), reply).effect(),
            Effect::Changes
        );
    }
}
