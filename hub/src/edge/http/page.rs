//! The supervision page: its files (embedded in the binary: no build step, nothing to
//! install), the arbiters' login, and the live streams of tiles and alerts (server-sent
//! events).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use futures_util::Stream;
use tokio::sync::broadcast;

use super::access::{session_cookie, COOKIE};
use super::api::{Api, ApiError, HallRead};
use super::sessions::LIFETIME;
use super::slots::{Slot, Viewer};
use crate::view::tiles::Audience;

const INDEX_HTML: &str = include_str!("../../../web/index.html");
const APP_JS: &str = include_str!("../../../web/app.js");
const APP_CSS: &str = include_str!("../../../web/app.css");
/// The standings table, shared by the supervision page and the phone.
const STANDINGS_JS: &str = include_str!("../../../web/standings.js");

/// The page's routes, open to everyone; the arbiters' stream is routed with the arbiters'.
pub(super) fn routes() -> Router<Api> {
    Router::new()
        .route("/", get(index))
        .route("/spectator", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/app.css", get(app_css))
        .route("/assets/standings.js", get(standings_js))
        .route("/api/session", get(session).post(log_in).delete(log_out))
        .route("/api/public/live", get(spectators_live))
}

/// A file of the pages, always revalidated.
pub(super) fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            // Small files: always revalidate, so a new hub is never shown an old page.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

async fn standings_js() -> Response {
    asset("text/javascript; charset=utf-8", STANDINGS_JS)
}

async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

/// `GET /api/session`: `{"arbiter": bool, "name": "IA Berg" | "chief" | null,
/// "login_required": true, "open_hall": bool}`.
#[derive(serde::Serialize)]
struct Session {
    arbiter: bool,
    /// Who is logged in: the name the page's actions are signed with.
    name: Option<String>,
    /// Always: kept for pages and scripts that read it.
    login_required: bool,
    /// Unsealed events are taken from boards nobody enrolled.
    open_hall: bool,
}

async fn session(State(api): State<Api>, headers: HeaderMap) -> Json<Session> {
    let login = api.access.who(&headers);
    Json(Session {
        arbiter: login.is_some(),
        name: login.map(|l| l.name().to_owned()),
        login_required: true,
        open_hall: api.access.open_hall(),
    })
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Login {
    token: String,
    /// Log in although the browser holds another login's session (the arbiter agreed).
    #[serde(default)]
    replace: bool,
}

/// `POST /api/session` `{"token": "…"}` (the hall's token or an arbiter's own login): opens
/// a session and sets its cookie; 401 for a wrong token, 429 for a client that sent too many
/// wrong ones, 409 when the browser holds another login's session and `"replace": true` is
/// not given (a login link somebody else sent must not swap an arbiter's session for theirs
/// unseen: the page asks first).
async fn log_in(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Json(login): Json<Login>,
) -> Response {
    let sessions = &api.access.sessions;
    let guesses = &api.access.guesses;
    let now = Instant::now();
    let wall = std::time::SystemTime::now();
    // A right token gets in whatever its address's wrong ones did (a NAT shared with a
    // guesser); only a wrong one waits for the address's throttle.
    let Some((who, credential)) = api.access.login_of(&login.token) else {
        static LOGGED: super::log_throttle::Throttle = super::log_throttle::Throttle::new();
        if let Err(wait) = guesses.may_try(peer.ip(), now) {
            api.metrics.login_refused();
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, (wait.as_secs() + 1).to_string())],
                "too many wrong tokens from this address: try again in a second\n",
            )
                .into_response();
        }
        guesses.wrong(peer.ip(), now);
        api.metrics.login_refused();
        if let Some(left_out) = LOGGED.admit() {
            tracing::warn!(client = %peer.ip(), left_out, "arbiter login refused: wrong token");
        }
        return (StatusCode::UNAUTHORIZED, "wrong token\n").into_response();
    };
    let current = session_cookie(&headers).and_then(|id| sessions.who(id, wall));
    if let Some(current) = current.filter(|c| *c != who && !login.replace) {
        return (
            StatusCode::CONFLICT,
            Json(serde_json::json!({
                "error": format!(
                    "this browser is logged in as {}; the token logs in as {}: send \"replace\": true to switch",
                    current.name(),
                    who.name()
                ),
                "logged_in_as": current.name(),
                "token_of": who.name(),
            })),
        )
            .into_response();
    }
    tracing::info!(client = %peer.ip(), arbiter = %who.name().escape_debug(), "arbiter logged in");
    let id = sessions.open(wall, who, credential);
    let cookie = format!(
        "{COOKIE}={id}; {}; Max-Age={}",
        api.access.cookie_attributes(),
        LIFETIME.as_secs()
    );
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, cookie)]).into_response()
}

/// `DELETE /api/session`: ends the page's session.
async fn log_out(State(api): State<Api>, headers: HeaderMap) -> Response {
    if let Some(id) = session_cookie(&headers) {
        api.access.sessions.close(id);
    }
    let cookie = format!("{COOKIE}=; {}; Max-Age=0", api.access.cookie_attributes());
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, cookie)]).into_response()
}

/// `GET /api/live`: the arbiters' stream. Events: `hall` (the whole hall: zones, tiles,
/// open alerts), then `update` (the tiles and alerts that changed).
pub(super) async fn arbiters_live(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(login): Extension<super::credential::Login>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let viewer = Viewer::Arbiter(login);
    live(api, peer, Audience::Arbiters, viewer, Some(headers)).await
}

/// `GET /api/public/live`: the spectators' stream: tiles as the broadcast delay releases
/// them, no alerts.
async fn spectators_live(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    live(api, peer, Audience::Spectators, Viewer::Spectator, None).await
}

/// How often an arbiters' stream asks whether its login still holds: a log-out or a
/// revocation ends it within this.
const LOGIN_CHECKED_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Where a page's stream is.
struct PageStream {
    api: Api,
    audience: Audience,
    first: Option<String>,
    updates: broadcast::Receiver<Arc<str>>,
    /// The arbiters' credentials it was opened with (their session's cookie or their
    /// token): the stream ends when they no longer log in. `None` for the spectators'.
    login: Option<HeaderMap>,
    checked: tokio::time::Interval,
    /// Held while the stream is open.
    _slot: Slot,
}

impl PageStream {
    /// Whether the stream may go on: the spectators' always, the arbiters' while the login
    /// it was opened with holds (not logged out, not revoked).
    fn login_holds(&self) -> bool {
        self.login
            .as_ref()
            .is_none_or(|headers| self.api.access.is_arbiter(headers))
    }
}

async fn live(
    api: Api,
    peer: SocketAddr,
    audience: Audience,
    viewer: Viewer,
    login: Option<HeaderMap>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let slot = api
        .slots
        .take(&viewer, peer.ip())
        .map_err(ApiError::TooManyStreams)?;
    let start = api.ask(|reply| HallRead::Live { audience, reply }).await?;
    let state = PageStream {
        api,
        audience,
        first: Some(start.hall),
        updates: start.updates,
        login,
        checked: tokio::time::interval(LOGIN_CHECKED_EVERY),
        _slot: slot,
    };
    let events = futures_util::stream::unfold(state, |mut s| async move {
        let (kind, data) = match s.first.take() {
            Some(hall) => ("hall", hall),
            None => loop {
                let update = tokio::select! {
                    update = s.updates.recv() => update,
                    _ = s.checked.tick() => {
                        if !s.login_holds() {
                            return None;
                        }
                        continue;
                    }
                };
                if !s.login_holds() {
                    return None;
                }
                break match update {
                    Ok(update) => ("update", update.to_string()),
                    // Too far behind (a slow page): it starts again from the whole hall.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let audience = s.audience;
                        let start = s
                            .api
                            .ask(|reply| HallRead::Live { audience, reply })
                            .await
                            .ok()?;
                        s.updates = start.updates;
                        ("hall", start.hall)
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
            },
        };
        s.api.metrics.live_sent(data.len());
        Some((Ok(Event::default().event(kind).data(data)), s))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
