//! The standings over HTTP.
//!
//! - `GET /api/standings?section=S&round=R&format=csv&audience=spectators` (each optional:
//!   the hall's players, after the round in play, as JSON, as the caller may see them): `{"section", "round", "provisional", "rules",
//!   "tiebreaks": ["BH-C1", …], "rows": [{"rank", "start_rank", "name", "points",
//!   "tiebreaks": [values in the list's order], "running"}]}`, best first. To anyone but an
//!   arbiter, a result counts only once the broadcast delay has released it;
//!   `audience=spectators` asks for that view whoever asks (the spectators' page on a
//!   logged-in screen). 404 for a round without pairings.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::api::{Api, ApiError, Query};
use crate::core::ids::RoundNo;
use crate::view::tiles::Audience;

pub(super) fn public() -> Router<Api> {
    Router::new().route("/api/standings", get(standings))
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StandingsQuery {
    section: Option<String>,
    round: Option<u64>,
    /// `json` (the default) or `csv`.
    format: Option<String>,
    /// `spectators`: the public view even for an arbiter (it can only narrow).
    audience: Option<String>,
}

async fn standings(
    State(api): State<Api>,
    headers: HeaderMap,
    query: Result<axum::extract::Query<StandingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let axum::extract::Query(query) = query.map_err(|e| ApiError::BadQuery(e.body_text()))?;
    let round =
        match query.round {
            Some(n) => Some(RoundNo::new(n).ok_or_else(|| {
                ApiError::BadQuery(format!("round {n}: rounds are numbered from 1"))
            })?),
            None => None,
        };
    let csv = match query.format.as_deref() {
        None | Some("json") => false,
        Some("csv") => true,
        Some(other) => return Err(ApiError::BadQuery(format!("format {other:?}: json or csv"))),
    };
    let audience = match query.audience.as_deref() {
        None => super::rounds::audience(&api, &headers),
        Some("spectators") => Audience::Spectators,
        Some(other) => {
            return Err(ApiError::BadQuery(format!(
                "audience {other:?}: only \"spectators\" (the public view) can be asked for"
            )))
        }
    };
    let table = api
        .ask(|reply| Query::Standings(round, query.section, audience, reply))
        .await?
        .ok_or(ApiError::NoStandings)?;
    Ok(if csv {
        (
            [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8")],
            crate::view::standings::csv(&table),
        )
            .into_response()
    } else {
        Json(table).into_response()
    })
}
