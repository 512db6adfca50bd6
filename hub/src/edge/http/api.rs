//! The handlers' one way to the hall: a [`Query`] sent to the loop that owns the core, and
//! its answer awaited, so the core keeps one owner and no handler touches it.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use protocol::BoardNo;
use tokio::sync::{broadcast, mpsc, oneshot};

mod alerts;
mod arbiters;
mod boards;
mod hall;
mod nodes;
mod rounds;
mod standings;

pub use alerts::{AlertChange, AlertRead};
pub use arbiters::{ArbiterChange, ArbiterRead};
pub use boards::{BoardChange, BoardRead};
pub use hall::HallRead;
pub use nodes::{NodeChange, NodeRead};
pub use rounds::{RoundChange, RoundRead};
pub use standings::StandingsRead;

use crate::core::arbiter::DecisionError;
use crate::core::ids::{AlertId, RoundNo};
use crate::core::rounds::StartError;
use crate::edge::http::access::Access;
use crate::metrics::Metrics;

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

/// A question for the loop that owns the hall: a read, answered from the hall as it is on
/// any hub, or a change, journaled, which a hub whose journal takes nothing (failed, or a
/// cluster's standby) refuses by its type. Each subject's questions are in a file of their
/// own, answered by the shell's file of the same name (`run/shell/`).
pub enum Query {
    Read(Read),
    Change(Change),
}

/// The questions that read the hall.
pub enum Read {
    Boards(BoardRead),
    Rounds(RoundRead),
    Standings(StandingsRead),
    Nodes(NodeRead),
    Arbiters(ArbiterRead),
    Alerts(AlertRead),
    Hall(HallRead),
}

/// The questions that change the hall.
pub enum Change {
    Boards(BoardChange),
    Rounds(RoundChange),
    Nodes(NodeChange),
    Arbiters(ArbiterChange),
    Alerts(AlertChange),
}

/// Each subject's questions are a [`Query`] of their kind.
macro_rules! questions {
    ($($kind:ident :: $subject:ident ($question:ty)),* $(,)?) => {
        $(impl From<$question> for Query {
            fn from(question: $question) -> Query {
                Query::$kind($kind::$subject(question))
            }
        })*
    };
}

questions!(
    Read::Boards(BoardRead),
    Read::Rounds(RoundRead),
    Read::Standings(StandingsRead),
    Read::Nodes(NodeRead),
    Read::Arbiters(ArbiterRead),
    Read::Alerts(AlertRead),
    Read::Hall(HallRead),
    Change::Boards(BoardChange),
    Change::Rounds(RoundChange),
    Change::Nodes(NodeChange),
    Change::Arbiters(ArbiterChange),
    Change::Alerts(AlertChange),
);

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
    pub(super) async fn ask<T, Q: Into<Query>>(
        &self,
        query: impl FnOnce(oneshot::Sender<T>) -> Q,
    ) -> Result<T, ApiError> {
        let (reply, answer) = oneshot::channel();
        let asked = async {
            self.queries
                .send(query(reply).into())
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
        let answer = api.ask(|reply| HallRead::Health { reply }).await;
        assert!(matches!(answer, Err(ApiError::NoAnswer)), "{answer:?}");
        assert_eq!(started.elapsed(), ANSWER_WITHIN);
        let response = ApiError::NoAnswer.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        kept.abort();
    }

    #[test]
    fn the_journaled_questions_are_the_changes_a_standby_refuses() {
        let (reply, _) = oneshot::channel();
        assert!(matches!(
            Query::from(BoardRead::All { reply }),
            Query::Read(Read::Boards(_))
        ));
        let (reply, _) = oneshot::channel();
        let revoke = ArbiterChange::Revoke {
            arbiter: "IA Berg".into(),
            reply,
        };
        assert!(matches!(
            Query::from(revoke),
            Query::Change(Change::Arbiters(_))
        ));
    }
}
