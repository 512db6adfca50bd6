//! The standings over HTTP.
//!
//! - `GET /api/standings?section=S&round=R&format=csv&audience=spectators` (each optional:
//!   the hall's players, after the round in play, as JSON, as the caller may see them): `{"section", "round", "provisional", "rules",
//!   "tiebreaks": ["BH-C1", …], "rows": [{"rank", "start_rank", "name", "points",
//!   "tiebreaks": [values in the list's order], "running"}]}`, best first. To anyone but an
//!   arbiter, a result counts only once the broadcast delay has released it;
//!   `audience=spectators` asks for that view whoever asks (the spectators' page on a
//!   logged-in screen). 404 for a round without pairings.
//! - `GET /api/standings/teams?…` (the same parameters), a team event's: `{"section",
//!   "round", "provisional", "rules", "tiebreaks", "rows": [{"rank", "number", "team",
//!   "match_points", "game_points", "tiebreaks", "running"}]}`; CSV the same. 404 for an
//!   event without teams.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::api::{Api, ApiError, StandingsRead};
use crate::core::ids::RoundNo;
use crate::view::tiles::Audience;

pub(super) fn public() -> Router<Api> {
    Router::new()
        .route("/api/standings", get(standings))
        .route("/api/standings/teams", get(team_standings))
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

/// What a standings request asks for.
struct Asked {
    round: Option<RoundNo>,
    section: Option<String>,
    csv: bool,
    audience: Audience,
}

fn asked(
    api: &Api,
    headers: &HeaderMap,
    query: Result<axum::extract::Query<StandingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Asked, ApiError> {
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
        None => super::rounds::audience(api, headers),
        Some("spectators") => Audience::Spectators,
        Some(other) => {
            return Err(ApiError::BadQuery(format!(
                "audience {other:?}: only \"spectators\" (the public view) can be asked for"
            )))
        }
    };
    Ok(Asked {
        round,
        section: query.section,
        csv,
        audience,
    })
}

fn csv_response(text: String) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8")],
        text,
    )
        .into_response()
}

async fn standings(
    State(api): State<Api>,
    headers: HeaderMap,
    query: Result<axum::extract::Query<StandingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let asked = asked(&api, &headers, query)?;
    let table = api
        .ask(|reply| StandingsRead::Players {
            round: asked.round,
            section: asked.section,
            audience: asked.audience,
            reply,
        })
        .await?
        .ok_or(ApiError::NoStandings)?;
    Ok(if asked.csv {
        csv_response(crate::view::standings::csv(&table))
    } else {
        Json(table).into_response()
    })
}

async fn team_standings(
    State(api): State<Api>,
    headers: HeaderMap,
    query: Result<axum::extract::Query<StandingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let asked = asked(&api, &headers, query)?;
    let table = api
        .ask(|reply| StandingsRead::Teams {
            round: asked.round,
            section: asked.section,
            audience: asked.audience,
            reply,
        })
        .await?
        .ok_or(ApiError::NoTeamStandings)?;
    Ok(if asked.csv {
        csv_response(crate::view::standings::team_csv(&table))
    } else {
        Json(table).into_response()
    })
}
