//! The rounds over HTTP: which rounds there are and how far each is, starting the next,
//! and any round's games.
//!
//! - `GET /api/rounds`: every round with pairings or started (`round`, `in_play`, `games`,
//!   `finished`, `complete`). To anyone but an arbiter, a game's result (and so `finished`
//!   and `complete`) shows only once the broadcast delay has released the game's end.
//! - `GET /api/rounds/{r}`: one of them.
//! - `GET /api/rounds/{r}/pairings`: its games with the hub's results (forfeits `+-`, `-+`,
//!   `--`), boards numbered as the pairing program publishes them.
//! - `GET /api/rounds/{r}/byes`: its players without a board (`player`, `bye`: one of
//!   `half_point_bye`, `full_point_bye`, `pairing_allocated_bye`, `zero_point_bye`,
//!   `not_paired`; `points`, `section`).
//! - `POST /api/rounds/{r}/start` (the chief arbiter: the hall's token, or an arbiter
//!   configured `chief`): `{"force": false, "section": null, "by": "…"}`, all optional;
//!   idempotent; 403 for another arbiter's login; 409 while the round in play is still
//!   being played (unless forced), for a round started before, or for one that is not next.
//! - `POST /api/rounds/{r}/undo-start` (the chief arbiter): `{"by": "…"}`, optional; takes
//!   back round `r`'s start if it is the last start and was forced, while no move was made
//!   in a game it began and no arbiter decided at one of its boards: every game it ended is
//!   given back as its board went on. The start stays listed with `undone: {at, by}`. 403 for
//!   another arbiter's login; 409 with the reason when it cannot be undone.
//! - `GET /api/rounds/{r}/boards/{n}` (arbiters): the board's game of that round, the fields
//!   of `GET /api/boards/{n}`.
//! - `POST /api/rounds/{r}/boards/{n}/decisions` (arbiters): a decision for that game; a
//!   round that is over takes only a result.
//! - `GET /api/rounds/{r}/results.csv` (arbiters): its games with the hub's results, in the
//!   columns a CSV round is read in.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};

use super::api::{
    optional_body, Api, ApiError, BoardChange, BoardRead, RoundChange, RoundRead, SectionQuery,
};
use super::credential::Login;
use super::path::{RoundBoardPath, RoundPath};
use crate::core::arbiter::{ArbiterAction, AuditEntry};
use crate::core::board::BoardDetail;
use crate::core::hub::{StartRequest, UndoRequest};
use crate::core::pairings::{Bye, Pairing, RoundState};
use crate::view::tiles::Audience;

/// What anyone may read.
pub(super) fn public() -> Router<Api> {
    Router::new()
        .route("/api/rounds", get(rounds))
        .route("/api/rounds/{r}", get(round_state))
        .route("/api/rounds/{r}/pairings", get(pairings))
        .route("/api/rounds/{r}/byes", get(byes))
}

/// What only the arbiters may read or do.
pub(super) fn arbiters() -> Router<Api> {
    Router::new()
        .route("/api/rounds/{r}/start", post(start))
        .route("/api/rounds/{r}/undo-start", post(undo_start))
        .route("/api/rounds/{r}/boards/{n}", get(board))
        .route("/api/rounds/{r}/boards/{n}/decisions", post(decide))
        .route("/api/rounds/{r}/results.csv", get(results_csv))
}

/// Whom a public route answers: an arbiter sees the hub's results, anyone else what the
/// broadcast delay has released.
pub(super) fn audience(api: &Api, headers: &HeaderMap) -> Audience {
    if api.access.is_arbiter(headers) {
        Audience::Arbiters
    } else {
        Audience::Spectators
    }
}

async fn rounds(
    State(api): State<Api>,
    headers: HeaderMap,
) -> Result<Json<Vec<RoundState>>, ApiError> {
    let audience = audience(&api, &headers);
    api.ask(|reply| RoundRead::All { audience, reply })
        .await
        .map(Json)
}

async fn round_state(
    State(api): State<Api>,
    RoundPath(round): RoundPath,
    headers: HeaderMap,
) -> Result<Json<RoundState>, ApiError> {
    let audience = audience(&api, &headers);
    api.ask(|reply| RoundRead::All { audience, reply })
        .await?
        .into_iter()
        .find(|s| s.round == round)
        .map(Json)
        .ok_or(ApiError::UnknownRound(round))
}

/// `[{"board", "white": {"name", "fide_id", "rating", "title", "federation",
/// "start_rank"}, "black": {…}, "result", "white_team", "black_team"}]`.
async fn pairings(
    State(api): State<Api>,
    RoundPath(round): RoundPath,
    axum::extract::Query(query): axum::extract::Query<SectionQuery>,
    headers: HeaderMap,
) -> Result<Json<Vec<Pairing>>, ApiError> {
    let audience = audience(&api, &headers);
    api.ask(|reply| RoundRead::Pairings {
        round,
        section: query.section,
        audience,
        reply,
    })
    .await?
    .map(Json)
    .ok_or(ApiError::UnknownRound(round))
}

/// `[{"player": {…}, "bye", "points", "section"}]`.
async fn byes(
    State(api): State<Api>,
    RoundPath(round): RoundPath,
    axum::extract::Query(query): axum::extract::Query<SectionQuery>,
) -> Result<Json<Vec<Bye>>, ApiError> {
    api.ask(|reply| RoundRead::Byes {
        round,
        section: query.section,
        reply,
    })
    .await
    .map(Json)
}

/// The round's games with the hub's results as CSV, in the columns a CSV round is read in
/// (`?section=NAME` for one section's): for pairing programs that take results per board.
async fn results_csv(
    State(api): State<Api>,
    RoundPath(round): RoundPath,
    axum::extract::Query(query): axum::extract::Query<SectionQuery>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let games = api
        .ask(|reply| RoundRead::Pairings {
            round,
            section: query.section,
            audience: Audience::Arbiters,
            reply,
        })
        .await?
        .ok_or(ApiError::UnknownRound(round))?;
    let csv = crate::pairings::csv::write(&games);
    Ok((
        [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8")],
        csv,
    )
        .into_response())
}

/// Body of `POST /api/rounds/{r}/start`; every field optional.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    #[serde(default)]
    force: bool,
    section: Option<String>,
    by: Option<String>,
}

async fn start(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    RoundPath(round): RoundPath,
    body: axum::body::Bytes,
) -> Result<Json<Vec<RoundState>>, ApiError> {
    let body: StartBody = optional_body(&body)?;
    let by = signature(login.signs(body.by))?;
    let request = StartRequest {
        round,
        section: body.section,
        force: body.force,
        by,
        login: login.held_to_zones(),
    };
    api.ask(|reply| RoundChange::Start { request, reply })
        .await?
        .map(Json)
        .map_err(ApiError::NotStarted)
}

/// Body of `POST /api/rounds/{r}/undo-start`; optional.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoBody {
    by: Option<String>,
}

async fn undo_start(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    RoundPath(round): RoundPath,
    body: axum::body::Bytes,
) -> Result<Json<Vec<RoundState>>, ApiError> {
    let body: UndoBody = optional_body(&body)?;
    let by = signature(login.signs(body.by))?;
    let request = UndoRequest {
        round,
        by,
        login: login.held_to_zones(),
    };
    api.ask(|reply| RoundChange::UndoStart { request, reply })
        .await?
        .map(Json)
        .map_err(ApiError::NotStarted)
}

/// The name a start or an undo is signed with, as a person's name: bounded, no control
/// characters.
fn signature(by: String) -> Result<String, ApiError> {
    if by.chars().count() > crate::core::arbiter::MAX_NAME_CHARS || by.chars().any(char::is_control)
    {
        return Err(ApiError::BadQuery(format!(
            "\"by\": an arbiter's name of at most {} characters",
            crate::core::arbiter::MAX_NAME_CHARS
        )));
    }
    Ok(by)
}

async fn board(
    State(api): State<Api>,
    RoundBoardPath(round, n): RoundBoardPath,
) -> Result<Json<BoardDetail>, ApiError> {
    api.ask(|reply| BoardRead::One {
        board: n,
        round: Some(round),
        reply,
    })
    .await?
    .map(Json)
    .ok_or(ApiError::UnknownBoard(n))
}

async fn decide(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    RoundBoardPath(round, n): RoundBoardPath,
    Json(mut action): Json<ArbiterAction>,
) -> Result<Json<AuditEntry>, ApiError> {
    action.arbiter = login.signs(Some(action.arbiter));
    let held_to = login.held_to_zones();
    api.ask(|reply| BoardChange::Decide {
        board: n,
        round: Some(round),
        action,
        held_to,
        reply,
    })
    .await?
    .map(Json)
    .map_err(ApiError::Refused)
}
