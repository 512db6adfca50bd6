//! The HTTP API: boards and alerts as JSON, health and metrics; [`super::page`] adds the
//! supervision page, [`super::access`] keeps the arbiters' part behind their token. Each
//! handler asks the loop that owns the hall through [`super::api`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use protocol::BoardNo;
use tokio::sync::mpsc;

use super::access::{self, Access};
use super::api::{
    optional_body, AlertChange, AlertRead, Api, ApiError, ArbiterChange, ArbiterRead, BoardChange,
    BoardRead, HallRead, NodeChange, NodeRead, Query, RoundRead, SectionQuery, StandingsRead,
};
use super::credential::Login;
use super::path::{BoardPath, PgnPath};
use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{Alert, AlertState, Language};
use crate::core::alerts::{AlertAction, AlertCommand};
use crate::core::arbiter::{ArbiterAction, AuditEntry};
use crate::core::board::{BoardDetail, BoardSummary, Urgency};
use crate::core::claim::{ClaimCheck, ClaimRequest};
use crate::core::ids::{AlertId, HardwareId};
use crate::core::relay::slices::BoardRanges;
use crate::core::setup::NodesReport;
use crate::edge::http::page;
use crate::edge::outlets::OutletStatus;
use crate::metrics::Metrics;
use crate::view::tiles::SpectatorBoard;

/// The connections' caps and timeouts: [`super::connections`].
pub use super::connections::{MAX_BODY_BYTES, MAX_CONNECTIONS};

/// Serves on `listener` (bound before: a cluster's lease names its address); returns the
/// bound address and the server future. With `tls` it is HTTPS, and the page's cookie is `Secure`. Enrolments hand out
/// `hall_ca`, the certificate nodes and pagers pin.
pub async fn bind(
    listener: tokio::net::TcpListener,
    queries: mpsc::Sender<Query>,
    metrics: Arc<Metrics>,
    access: Access,
    tls: Option<Arc<rustls::ServerConfig>>,
    hall_ca: Arc<str>,
    standby: super::standby_door::Standby,
) -> anyhow::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let access = access.with_secure_cookies(tls.is_some());
    let places = super::places::Places::new(metrics.clone());
    // The hall's keys: the chief arbiter's token only, never an arbiter's own login.
    let keys = Router::new()
        .route("/api/nodes/bind", post(bind_node))
        .route("/api/nodes/enrol", post(enrol_node))
        .route("/api/nodes/revoke", post(revoke_node))
        .route("/api/arbiters", get(arbiters))
        .route("/api/arbiters/enrol", post(enrol_arbiter))
        .route("/api/arbiters/revoke", post(revoke_arbiter))
        .route("/api/arbiters/renew", post(renew_links))
        .route("/api/broker/users", get(broker_users))
        .merge(super::phone_page::chief())
        .route_layer(axum::middleware::from_fn(access::chief_only));
    // The live game, everything about the arbiters' work and the keys: behind the token.
    let arbiters = Router::new()
        .route("/api/live", get(page::arbiters_live))
        .route("/api/boards", get(boards))
        .route("/api/boards/{n}", get(board))
        .route("/api/boards/{n}/claims", post(check_claim))
        .route("/api/boards/{n}/decisions", post(decide))
        .route("/api/time-trouble", get(time_trouble))
        .route("/api/results.trf", get(results_trf))
        .route("/api/nodes", get(nodes))
        .route("/api/broadcast/outlets", get(outlets))
        .route("/metrics", get(metrics_text))
        .route("/api/alerts", get(alerts))
        .route("/api/alerts/{id}", get(alert))
        .route("/api/alerts/{id}/ack", post(acknowledge))
        .route("/api/alerts/{id}/resolve", post(resolve))
        .merge(super::rounds::arbiters())
        .merge(super::phone_page::arbiters())
        .merge(keys)
        // Inside the token's check: a stranger learns nothing from a standby either.
        .route_layer(axum::middleware::from_fn_with_state(
            standby,
            super::standby_door::refuse_changes,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            access.clone(),
            access::arbiters_only,
        ));
    // What the public may see: the delayed feed, the pairings, the page itself.
    let public = Router::new()
        .merge(super::rounds::public())
        .merge(super::standings::public())
        .route("/broadcast/round/{r}/{file}", get(broadcast_pgn))
        .route("/api/public/boards/{n}", get(spectator_board))
        .route("/healthz", get(healthz))
        .route("/api/cluster", get(cluster))
        .merge(super::ntfy::routes())
        .merge(super::phone_page::routes())
        .merge(page::routes());
    let router = arbiters
        .merge(public)
        // Every path not served answers as ntfy does, so a phone's app says why.
        .fallback(super::ntfy::not_found)
        .method_not_allowed_fallback(super::ntfy::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            (access.clone(), metrics.clone()),
            access::guessers_slowed,
        ))
        .layer(axum::middleware::from_fn_with_state(
            (places.clone(), access.clone()),
            super::places::budgeted,
        ))
        .layer(axum::middleware::from_fn_with_state(
            metrics.clone(),
            access::same_origin_changes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            (access.clone(), metrics.clone()),
            access::own_host_only,
        ))
        .layer(axum::middleware::from_fn_with_state(
            access.clone(),
            access::security_headers,
        ))
        // Bodies arrive whole and bounded (`connections::MAX_BODY_BYTES`); axum's own
        // limit is the same.
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(Api {
            queries,
            metrics: metrics.clone(),
            access,
            slots: crate::edge::http::slots::StreamSlots::default(),
            hall_ca,
        });
    let local = listener.local_addr()?;
    Ok((
        local,
        super::connections::serve(listener, router, places, metrics, tls),
    ))
}

async fn boards(State(api): State<Api>) -> Result<Json<Vec<BoardSummary>>, ApiError> {
    api.ask(|reply| BoardRead::All { reply }).await.map(Json)
}

async fn board(
    State(api): State<Api>,
    BoardPath(n): BoardPath,
) -> Result<Json<BoardDetail>, ApiError> {
    api.ask(|reply| BoardRead::One {
        board: n,
        round: None,
        reply,
    })
    .await?
    .map(Json)
    .ok_or(ApiError::UnknownBoard(n))
}

/// `GET /api/public/boards/{n}`: the board view as spectators see it: the moves, clocks
/// and position the broadcast delay has released.
async fn spectator_board(
    State(api): State<Api>,
    BoardPath(n): BoardPath,
) -> Result<Json<SpectatorBoard>, ApiError> {
    api.ask(|reply| BoardRead::Spectators { board: n, reply })
        .await?
        .map(Json)
        .ok_or(ApiError::UnknownBoard(n))
}

/// The arbiter checks a draw claim: `{"claim": "threefold_repetition" | "fifty_moves",
/// "move": "e2e4"}` (the move is optional: the one the player wrote down, 9.2.1 / 9.3.1).
async fn check_claim(
    State(api): State<Api>,
    BoardPath(n): BoardPath,
    Json(request): Json<ClaimRequest>,
) -> Result<Json<ClaimCheck>, ApiError> {
    api.ask(|reply| BoardRead::CheckClaim {
        board: n,
        request,
        reply,
    })
    .await?
    .map(Json)
    .ok_or(ApiError::UnknownBoard(n))
}

/// The arbiter decides at a board: `{"arbiter": "…", "decision": "reinstate", "ply": 31}`,
/// `{"decision": "result", "result": "1-0", "cause": "flag_fall"}`, `{"decision":
/// "claim_rejected", "by": "white"}` or `{"decision": "adjust_time", "side": "black", "ms":
/// 120000, "reason": "penalty"}`, with an optional `note`. Answers with the audit entry once
/// the decision is durable; 409 when it does not fit the game.
async fn decide(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    BoardPath(n): BoardPath,
    Json(mut action): Json<ArbiterAction>,
) -> Result<Json<AuditEntry>, ApiError> {
    action.arbiter = login.signs(Some(action.arbiter));
    api.ask(|reply| BoardChange::Decide {
        board: n,
        round: None,
        action,
        held_to: login.held_to_zones(),
        reply,
    })
    .await?
    .map(Json)
    .map_err(ApiError::Refused)
}

/// Query of `GET /api/time-trouble`.
#[derive(Debug, serde::Deserialize)]
struct TimeTroubleQuery {
    /// Only boards whose flag falls within this many ms (the arbiter's attention threshold).
    within_ms: Option<u64>,
}

/// The hall's boards by urgency: fallen flags first, then the shortest time to a flag.
async fn time_trouble(
    State(api): State<Api>,
    axum::extract::Query(query): axum::extract::Query<TimeTroubleQuery>,
) -> Result<Json<Vec<Urgency>>, ApiError> {
    let mut ranking = api.ask(|reply| BoardRead::TimeTrouble { reply }).await?;
    if let Some(within) = query.within_ms {
        ranking.retain(|u| u.time_to_flag_ms.is_some_and(|ms| ms <= within));
    }
    Ok(Json(ranking))
}

/// Which games of a round the feed answers with: `?section=NAME`, `?boards=1-100,201-250`
/// (a slice: each lichess round or chess.com source polls its own).
#[derive(Debug, Default, serde::Deserialize)]
struct FeedQuery {
    section: Option<String>,
    boards: Option<String>,
}

/// `GET /broadcast/round/{r}/games.pgn` (every board of the round, or of `?section=` and
/// `?boards=`) and `/broadcast/round/{r}/game-{board}.pgn`: the public feed, delayed as
/// configured, in board order. Cheap to poll: `ETag` and `Last-Modified`, `304 Not
/// Modified` when nothing changed.
async fn broadcast_pgn(
    State(api): State<Api>,
    PgnPath(round, board): PgnPath,
    axum::extract::Query(query): axum::extract::Query<FeedQuery>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let boards = query
        .boards
        .as_deref()
        .map(str::parse::<BoardRanges>)
        .transpose()
        .map_err(|e| ApiError::BadQuery(format!("boards: {e}")))?;
    let games = api
        .ask(|reply| RoundRead::Broadcast {
            round,
            board,
            section: query.section,
            boards,
            reply,
        })
        .await?
        .ok_or(ApiError::UnknownRound(round))?;
    if board.is_some() && games.is_empty() {
        return Err(ApiError::UnknownBoard(board.unwrap_or(BoardNo(0))));
    }
    let body: String = games.iter().map(|g| g.pgn.as_str()).collect();
    let etag = format!("\"{:016x}\"", crate::view::feed::fingerprint(&games));
    let modified = games.iter().map(|g| g.as_of.0).max().unwrap_or(0);
    let last_modified =
        httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_millis(modified));
    let matches_etag = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let not_modified_since = headers.get(header::IF_NONE_MATCH).is_none()
        && headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
            .is_some_and(|since| {
                since
                    >= std::time::UNIX_EPOCH
                        + std::time::Duration::from_millis(modified / 1000 * 1000)
            });
    let cache = [
        (header::ETAG, etag),
        (header::LAST_MODIFIED, last_modified),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    if matches_etag || not_modified_since {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    Ok((
        cache,
        [(
            header::CONTENT_TYPE,
            "application/x-chess-pgn; charset=utf-8",
        )],
        body,
    )
        .into_response())
}

/// `GET /api/broadcast/outlets`: each outlet of the broadcast (the LiveChess folder,
/// lichess, FTP), what each destination last got and, while it fails, why.
async fn outlets(State(api): State<Api>) -> Result<Json<Vec<OutletStatus>>, ApiError> {
    api.ask(|reply| HallRead::Outlets { reply }).await.map(Json)
}

/// `GET /api/nodes`: every board's node (hardware ids, software, connected, bound board)
/// and the warnings for the technician.
async fn nodes(State(api): State<Api>) -> Result<Json<NodesReport>, ApiError> {
    api.ask(|reply| NodeRead::Report { reply }).await.map(Json)
}

/// Body of `POST /api/nodes/bind`: `{"hardware": "DGT-3000-17", "board": 12}`; `"board":
/// null` unbinds.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BindBody {
    hardware: HardwareId,
    board: Option<BoardNo>,
}

/// The technician binds a node to a board (it replaces whatever hardware that board was
/// bound to: a swapped node); answers with the nodes' report once the binding is durable.
/// Binding decides whose key speaks for a board, so it is checked as enrolment is.
async fn bind_node(
    State(api): State<Api>,
    Json(body): Json<BindBody>,
) -> Result<Json<NodesReport>, ApiError> {
    check_hardware(&body.hardware)?;
    if let Some(board) = body.board {
        check_board(board)?;
    }
    api.ask(|reply| NodeChange::Bind {
        hardware: body.hardware,
        board: body.board,
        reply,
    })
    .await
    .map(Json)
}

/// Body of `POST /api/nodes/enrol`: `{"hardware": "DGT-3000-17", "board": 12}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EnrolBody {
    hardware: HardwareId,
    board: BoardNo,
}

/// The answer: `{"hardware": "DGT-3000-17", "board": 12, "key": "64 hex digits", "ca":
/// "-----BEGIN CERTIFICATE-----…"}`, the `key` being what the node's `--key-file` holds and
/// `ca` what its `--ca-file` holds (the hall CA it pins for TLS).
#[derive(Debug, serde::Serialize)]
struct EnrolAnswer {
    hardware: HardwareId,
    board: BoardNo,
    key: String,
    ca: String,
}

/// The technician enrols a node for a board in one step: its key (the same one again for
/// hardware already enrolled) and its binding, which replaces the board's earlier node.
async fn enrol_node(
    State(api): State<Api>,
    Json(body): Json<EnrolBody>,
) -> Result<Json<EnrolAnswer>, ApiError> {
    check_hardware(&body.hardware)?;
    check_board(body.board)?;
    let enrolled = api
        .ask(|reply| NodeChange::Enrol {
            hardware: body.hardware,
            board: body.board,
            reply,
        })
        .await?;
    Ok(Json(EnrolAnswer {
        hardware: enrolled.hardware,
        board: enrolled.board,
        key: enrolled.key.to_text(),
        ca: api.hall_ca.to_string(),
    }))
}

/// `GET /api/broker/users`: everyone an external broker must let in, as `username:password`
/// lines for `mosquitto_passwd -U` (`deploy/README.md`).
async fn broker_users(State(api): State<Api>) -> Result<Response, ApiError> {
    let users = api
        .ask(|reply| NodeRead::BrokerUsers { reply })
        .await?
        .ok_or(ApiError::Stopping)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], users).into_response())
}

/// Body of `POST /api/arbiters/revoke`: `{"arbiter": "IA Berg"}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ArbiterBody {
    arbiter: String,
}

/// Body of `POST /api/arbiters/enrol`: `{"arbiter": "IA Berg", "zones": ["C"],
/// "language": "nb"}`; zones and language may be left out (the configuration's
/// `[[arbiters]]`, else the whole hall in English).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ArbiterEnrolBody {
    arbiter: String,
    #[serde(default)]
    zones: Vec<String>,
    #[serde(default)]
    language: Option<Language>,
}

/// The most zones one arbiter is enrolled for.
const MAX_ZONES: usize = 64;

/// The chief arbiter enrols an arbiter: a new key (an earlier one of the name stops
/// working), answered once durable with `{"arbiter", "key", "mqtt_user", "mqtt_password",
/// "hub_key", "ca"}` (what `hub pager --key-file` reads), `"login"`, the arbiter's own
/// login for the page and the API, and `"phone"`: the phone view's login link and the
/// ntfy subscription (server, topic, token) at the address the request came to.
async fn enrol_arbiter(
    State(api): State<Api>,
    headers: axum::http::HeaderMap,
    Json(body): Json<ArbiterEnrolBody>,
) -> Result<Response, ApiError> {
    check_arbiter_name(&body.arbiter)?;
    if body.zones.len() > MAX_ZONES {
        return Err(ApiError::BadQuery(format!("at most {MAX_ZONES} zones")));
    }
    let request = crate::edge::http::api::ArbiterEnrolRequest {
        name: body.arbiter,
        zones: body.zones,
        language: body.language,
    };
    let enrolment = api
        .ask(|reply| ArbiterChange::Enrol { request, reply })
        .await?
        .map_err(|e| ApiError::BadQuery(e.to_string()))?;
    let mut json = super::login::arbiter_credentials(&enrolment, &api.hall_ca);
    let base = super::ntfy::base_url(&api, &headers);
    let member = crate::core::roster::Member::with_key(enrolment.key.clone());
    let login = super::login::arbiter_login(&member);
    let phone = crate::core::phone::PhoneCredentials::of(&member);
    json["phone"] = super::ntfy::subscription(&base, &login, &phone);
    Ok(Json(json).into_response())
}

/// The chief arbiter revokes an arbiter: their pager's login, page login, sessions and
/// seal stop working. Answers with the arbiters still enrolled, once durable.
async fn revoke_arbiter(
    State(api): State<Api>,
    Json(body): Json<ArbiterBody>,
) -> Result<Json<serde_json::Value>, ApiError> {
    check_arbiter_name(&body.arbiter)?;
    let names = api
        .ask(|reply| ArbiterChange::Revoke {
            arbiter: body.arbiter,
            reply,
        })
        .await?;
    Ok(Json(serde_json::json!({ "arbiters": names })))
}

/// The chief arbiter renews an arbiter's links (`{"arbiter"}`: a phone lost, a QR code
/// shown too widely): their page login, their phone's link and its ntfy subscription shown
/// or sent before stop working (their sessions end, an open phone stream at its next
/// keepalive); their key, pager and signature stay. Answers, once durable, `{"arbiter",
/// "login", "phone": {"url", "ntfy"}}` as an enrolment does; 404 for an arbiter not enrolled.
async fn renew_links(
    State(api): State<Api>,
    headers: axum::http::HeaderMap,
    Json(body): Json<ArbiterBody>,
) -> Result<Response, ApiError> {
    check_arbiter_name(&body.arbiter)?;
    let name = body.arbiter;
    let names = api
        .ask(|reply| ArbiterChange::RenewLinks {
            arbiter: name.clone(),
            reply,
        })
        .await?;
    let not_enrolled = || {
        (
            axum::http::StatusCode::NOT_FOUND,
            format!("{name:?} is not an enrolled arbiter\n"),
        )
            .into_response()
    };
    if !names.contains(&name) {
        return Ok(not_enrolled());
    }
    let watch = api
        .ask(|reply| ArbiterRead::PhoneWatch {
            arbiter: name.clone(),
            reply,
        })
        .await?;
    let login = api
        .ask(|reply| ArbiterRead::Login {
            arbiter: name.clone(),
            reply,
        })
        .await?;
    let (Some((_, phone)), Some(login)) = (watch, login) else {
        return Ok(not_enrolled());
    };
    let base = super::ntfy::base_url(&api, &headers);
    let json = serde_json::json!({
        "arbiter": name,
        "phone": super::ntfy::subscription(&base, &login, &phone),
        "login": login,
    });
    Ok(Json(json).into_response())
}

/// `GET /api/arbiters`: the enrolled arbiters' names.
async fn arbiters(State(api): State<Api>) -> Result<Json<serde_json::Value>, ApiError> {
    let names = api.ask(|reply| ArbiterRead::Names { reply }).await?;
    Ok(Json(serde_json::json!({ "arbiters": names })))
}

/// An arbiter's name as the audit trail keeps it.
fn check_arbiter_name(name: &str) -> Result<(), ApiError> {
    crate::core::arbiter::check_signature(name, None)
        .map_err(|e| ApiError::BadQuery(e.to_string()))?;
    if name.trim().is_empty() {
        return Err(ApiError::BadQuery("an arbiter's name".into()));
    }
    if name.chars().any(crate::core::names::is_unsafe) {
        return Err(ApiError::BadQuery(
            "an arbiter's name holds no control character (a newline, an escape) and no bidirectional override".into(),
        ));
    }
    if name.chars().any(crate::core::names::is_format) {
        return Err(ApiError::BadQuery(
            "an arbiter's name holds no invisible format character (a zero-width space, a direction mark): two names that read alike must be one".into(),
        ));
    }
    // The chief arbiter's own place in the alerts' routing and on the pagers, and the names
    // the hub signs with itself, however written (Unicode TR 39's confusables).
    if let Some(reserved) = crate::core::names::reserved(name) {
        return Err(ApiError::BadQuery(format!(
            "{name:?} reads as {reserved:?}, a name the hub signs with itself: enrol the arbiter by their own name"
        )));
    }
    Ok(())
}

/// Body of `POST /api/nodes/revoke`: `{"hardware": "DGT-3000-17"}`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RevokeBody {
    hardware: HardwareId,
}

/// The technician revokes a node's key (a node lost or stolen): its hardware is unbound and
/// nothing sealed with the key is taken again. Answers with the nodes' report.
async fn revoke_node(
    State(api): State<Api>,
    Json(body): Json<RevokeBody>,
) -> Result<Json<NodesReport>, ApiError> {
    check_hardware(&body.hardware)?;
    api.ask(|reply| NodeChange::Revoke {
        hardware: body.hardware,
        reply,
    })
    .await
    .map(Json)
}

/// A hardware id as a node can announce it: not empty, at most `Hello::MAX_TEXT` bytes, no
/// control characters.
fn check_hardware(hardware: &HardwareId) -> Result<(), ApiError> {
    let id = hardware.as_str();
    if id.is_empty() || id.len() > protocol::Hello::MAX_TEXT || id.chars().any(char::is_control) {
        return Err(ApiError::BadQuery(format!(
            "a hardware id of 1 to {} bytes without control characters",
            protocol::Hello::MAX_TEXT
        )));
    }
    Ok(())
}

/// A board of the hall: from 1 to [`BoardNo::MAX`].
fn check_board(board: BoardNo) -> Result<(), ApiError> {
    if board.0 == 0 || board > BoardNo::MAX {
        return Err(ApiError::BadQuery(format!(
            "a board from 1 to {}",
            BoardNo::MAX
        )));
    }
    Ok(())
}

/// The pairing program's TRF (the hall's, or `?section=NAME`'s) with the hub's results of
/// every round entered.
async fn results_trf(
    State(api): State<Api>,
    axum::extract::Query(query): axum::extract::Query<SectionQuery>,
) -> Result<Response, ApiError> {
    let trf = api
        .ask(|reply| StandingsRead::ResultsTrf {
            section: query.section,
            reply,
        })
        .await?
        .ok_or(ApiError::NoTrf)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], trf).into_response())
}

/// Query of `GET /api/alerts`.
#[derive(Debug, serde::Deserialize)]
struct AlertsQuery {
    /// `open` (raised or acknowledged), or one state: `raised`, `acknowledged`, `resolved`,
    /// `expired`. All by default.
    state: Option<String>,
    zone: Option<String>,
    board: Option<BoardNo>,
    /// The round of the game (or the round in play, for a zone) it happened in.
    round: Option<u16>,
    /// The language of `text` and `action`: en (default), nb, sv, da, fi, hu.
    lang: Option<String>,
}

/// The alerts, the most urgent first: severity, then unacknowledged, then newest.
async fn alerts(
    State(api): State<Api>,
    axum::extract::Query(query): axum::extract::Query<AlertsQuery>,
) -> Result<Json<Vec<Alert>>, ApiError> {
    let language = language(query.lang.as_deref())?;
    let state: Option<Vec<AlertState>> = match query.state.as_deref() {
        None => None,
        Some("open") => Some(vec![AlertState::Raised, AlertState::Acknowledged]),
        Some(one) => Some(vec![serde_json::from_value(serde_json::Value::from(one))
            .map_err(|_| {
            ApiError::BadQuery(format!(
                "state {one:?}: use open, raised, acknowledged, resolved or expired"
            ))
        })?]),
    };
    let mut alerts: Vec<Alert> = api
        .ask(|reply| AlertRead::All { reply })
        .await?
        .into_iter()
        .filter(|a| state.as_ref().is_none_or(|s| s.contains(&a.state)))
        .filter(|a| query.zone.as_ref().is_none_or(|z| &a.zone == z))
        .filter(|a| query.board.is_none_or(|b| a.board == Some(b)))
        .filter(|a| query.round.is_none_or(|r| a.incident.round.0 == r))
        .map(|a| a.in_language(language))
        .collect();
    alerts.sort_by(crate::core::alerts::by_urgency);
    Ok(Json(alerts))
}

fn language(code: Option<&str>) -> Result<Language, ApiError> {
    code.map_or(Ok(Language::English), |c| {
        c.parse()
            .map_err(|e: crate::core::alerts::texts::UnknownLanguage| {
                ApiError::BadQuery(e.to_string())
            })
    })
}

async fn alert(
    State(api): State<Api>,
    Path(id): Path<AlertId>,
    axum::extract::Query(query): axum::extract::Query<AlertsQuery>,
) -> Result<Json<Alert>, ApiError> {
    let language = language(query.lang.as_deref())?;
    api.ask(|reply| AlertRead::All { reply })
        .await?
        .into_iter()
        .find(|a| a.id == id)
        .map(|a| Json(a.in_language(language)))
        .ok_or(ApiError::UnknownAlert(id))
}

/// Body of `POST /api/alerts/{id}/ack` and `/resolve`, optional: `{"by": "ola", "note":
/// "flag confirmed, 0-1"}`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AlertBody {
    by: Option<String>,
    note: Option<String>,
}

async fn acknowledge(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    Path(id): Path<AlertId>,
    body: axum::body::Bytes,
) -> Result<Json<Alert>, ApiError> {
    alert_command(api, &login, id, AlertAction::Ack, &body).await
}

async fn resolve(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    Path(id): Path<AlertId>,
    body: axum::body::Bytes,
) -> Result<Json<Alert>, ApiError> {
    alert_command(api, &login, id, AlertAction::Resolve, &body).await
}

/// Acknowledges or resolves; idempotent: doing it again answers with the alert unchanged.
async fn alert_command(
    api: Api,
    login: &Login,
    id: AlertId,
    action: AlertAction,
    body: &[u8],
) -> Result<Json<Alert>, ApiError> {
    // The body is optional: a bare POST acknowledges in the login's name.
    let body: AlertBody = optional_body(body)?;
    let command = AlertCommand {
        action,
        by: login.signs(body.by),
        note: body.note,
    };
    api.ask(|reply| AlertChange::Command {
        id,
        command,
        held_to: login.held_to_zones(),
        reply,
    })
    .await?
    .map(Json)
    .map_err(|e| match e {
        AlertError::Unknown(id) => ApiError::UnknownAlert(id),
        AlertError::TooLong(e) => ApiError::BadQuery(format!("body: {e}")),
        AlertError::NotTheirs(id) => ApiError::UnknownAlert(id),
        e @ AlertError::OutOfZone { .. } => ApiError::Forbidden(e.to_string()),
    })
}

/// `ok` while the hub can make events durable; 503 with the reason otherwise. Answering
/// proves the core loop is alive, not only the HTTP server.
async fn healthz(State(api): State<Api>) -> Result<Response, ApiError> {
    Ok(match api.ask(|reply| HallRead::Health { reply }).await? {
        Ok(()) => "ok\n".into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response(),
    })
}

/// The hub's role in its cluster, open like `/healthz` (a load balancer or the other hub
/// asks it): no game state, no secret.
async fn cluster(
    State(api): State<Api>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    Ok(match api.ask(|reply| HallRead::Cluster { reply }).await? {
        Some(status) => {
            let mut json = serde_json::to_value(status).unwrap_or_default();
            if !api.access.is_arbiter(&headers) {
                // The journal's length grows with every move: open to all, it would tell the
                // moves' timing through the broadcast's delay. The arbiters see it.
                if let Some(fields) = json.as_object_mut() {
                    fields.remove("journal_seq");
                }
            }
            Json(json).into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            "this hub runs its hall alone (hub serve --cluster for a standby)\n",
        )
            .into_response(),
    })
}

async fn metrics_text(State(api): State<Api>) -> Result<Response, ApiError> {
    let connected = api.ask(|reply| NodeRead::Connected { reply }).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        api.metrics.render(connected),
    )
        .into_response())
}
