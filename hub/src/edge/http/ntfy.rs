//! The subscribing side of ntfy's protocol, for the arbiters' phones (NOTES, *Phones*): the
//! ntfy app on a phone subscribes to the hub itself, no ntfy server and no internet.
//!
//! ```text
//! GET  /{topic}/json[?since=…][&poll=1]   a line of JSON per event: open, keepalive, message,
//!                                         message_clear (view::phone)
//! GET  /{topic}/sse                       the same as server-sent events (the phone view)
//! GET  /{topic}/ws                        the same, a WebSocket text frame each (the app's
//!                                         "use WebSockets", aiontfy)
//! GET  /{topic}/auth                      {"success": true} for the topic's token
//! GET  /v1/health                         {"healthy": true}
//! POST /api/phone/alerts/{id}/{act}       a notification's button: {"mac": …}, the token
//! ```
//!
//! Every stream takes ntfy's `since`, `poll` (without `since`: everything held) and its
//! filters ([`PhoneFilter`]), as query parameters (with ntfy's short names) or `X-` headers.
//! Every refusal is ntfy's JSON error, `{"code", "http", "error"}` with ntfy's own code
//! ([`NtfyError`]), and so is every path the hub does not serve.
//!
//! A topic answers only to its arbiter's token (`Authorization: Bearer`, Basic with the
//! token as password, or ntfy's `?auth=`), or to the arbiter's own page session. Streams
//! draw from the arbiters' pool ([`super::slots`]) and end when the arbiter is revoked.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, Path, Query as UrlQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::access::{presented_credential, Phone};
use super::api::{AlertChange, Api, ApiError, ArbiterRead, PhoneFeed};
use super::credential::Login;
use super::slots::{Slot, Viewer};
use crate::core::alerts::desk::AlertError;
use crate::core::ids::AlertId;
use crate::core::phone::{PhoneAct, PhoneCredentials, PhoneStep};
use crate::view::phone::{self, PhoneLinks, Since};
use crate::view::phone_filter::{FilterParams, PhoneFilter};

/// How often a stream says it is alive: well inside the app's 77 s (NOTES), and short
/// enough that a revoked arbiter's phone is cut off soon.
pub const KEEPALIVE: Duration = Duration::from_secs(25);

/// The routes of the phones; each checks its own credential.
pub(super) fn routes() -> Router<Api> {
    Router::new()
        .route("/{topic}/json", get(json_stream))
        .route("/{topic}/sse", get(sse_stream))
        .route("/{topic}/ws", get(ws_stream))
        .route("/{topic}/auth", get(auth))
        .route("/v1/health", get(health))
        .route("/api/phone/alerts/{id}/{act}", post(tap))
}

/// The hub's address as the phone reaches it: the request's own host (checked by
/// [`super::access::own_host_only`]) with the hub's scheme.
pub(super) fn base_url(api: &Api, headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("{}://{host}", api.access.scheme())
}

/// An arbiter's phone subscription as an enrolment answers it: the server, topic and
/// token the app takes, and the phone view's login link.
pub fn subscription(base: &str, login: &str, credentials: &PhoneCredentials) -> Value {
    json!({
        "url": format!("{base}/phone?token={login}"),
        "ntfy": {
            "server": base,
            "topic": credentials.topic,
            "token": credentials.token,
        },
    })
}

/// An error as ntfy's server answers it (`server/errors.go`): the body
/// `{"code", "http", "error"}`, nothing else (aiontfy maps the code to its exception and
/// takes no other field).
#[derive(Debug, Clone)]
pub struct NtfyError {
    code: u32,
    status: StatusCode,
    error: std::borrow::Cow<'static, str>,
}

impl NtfyError {
    const fn new(code: u32, status: StatusCode, error: &'static str) -> NtfyError {
        NtfyError {
            code,
            status,
            error: std::borrow::Cow::Borrowed(error),
        }
    }

    /// The same code, the reason told in full.
    fn saying(mut self, why: impl std::fmt::Display) -> NtfyError {
        self.error = format!("{}: {why}", self.error).into();
        self
    }
}

const BAD_REQUEST: NtfyError = NtfyError::new(40000, StatusCode::BAD_REQUEST, "invalid request");
const PRIORITY_INVALID: NtfyError =
    NtfyError::new(40007, StatusCode::BAD_REQUEST, "invalid priority parameter");
const SINCE_INVALID: NtfyError =
    NtfyError::new(40008, StatusCode::BAD_REQUEST, "invalid since parameter");
const NOT_WEBSOCKET: NtfyError = NtfyError::new(
    40016,
    StatusCode::BAD_REQUEST,
    "invalid request: client not using the websocket protocol",
);
const JSON_INVALID: NtfyError = NtfyError::new(
    40024,
    StatusCode::BAD_REQUEST,
    "invalid request: request body must be valid JSON",
);
const UNAUTHORIZED: NtfyError = NtfyError::new(40101, StatusCode::UNAUTHORIZED, "unauthorized");
const FORBIDDEN: NtfyError = NtfyError::new(40301, StatusCode::FORBIDDEN, "forbidden");
const NOT_FOUND: NtfyError = NtfyError::new(40401, StatusCode::NOT_FOUND, "page not found");
const TOO_MANY_SUBSCRIPTIONS: NtfyError = NtfyError::new(
    42903,
    StatusCode::TOO_MANY_REQUESTS,
    "limit reached: too many active subscriptions",
);

impl IntoResponse for NtfyError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code, "http": self.status.as_u16(), "error": self.error});
        (self.status, Json(body)).into_response()
    }
}

/// What the hub answers a path it does not serve: ntfy's 40401, so an ntfy client says
/// "not found" rather than "cannot connect".
pub(super) async fn not_found() -> NtfyError {
    NOT_FOUND
}

/// A path the hub serves asked with another method: 405, in ntfy's shape.
pub(super) async fn method_not_allowed() -> NtfyError {
    NtfyError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        ..BAD_REQUEST.saying("method not allowed on this path")
    }
}

/// Why a phone's request gets no answer.
#[derive(Debug)]
enum Refusal {
    /// As ntfy says it.
    Ntfy(NtfyError),
    /// As the rest of the API says it.
    Api(ApiError),
}

impl From<NtfyError> for Refusal {
    fn from(e: NtfyError) -> Refusal {
        Refusal::Ntfy(e)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Ntfy(e) => e.into_response(),
            Refusal::Api(e) => e.into_response(),
        }
    }
}

/// Whose phone may read `topic`: the one whose token the request carries, or the arbiter
/// whose page session it is.
fn phone_for(
    api: &Api,
    topic: &str,
    headers: &HeaderMap,
    auth_param: Option<&str>,
) -> Result<Phone, Refusal> {
    let phone = match presented_credential(headers, auth_param) {
        Some(token) => api.access.phone_of(&token),
        None => match api.access.who(headers) {
            Some(super::credential::Login::Arbiter(name)) => api.access.phone_of_arbiter(&name),
            _ => None,
        },
    };
    match phone {
        Some(phone) if phone.topic == topic => Ok(phone),
        Some(_) => Err(FORBIDDEN.into()),
        // A wrong token was counted at the door (`access::guessers_slowed`).
        None => Err(UNAUTHORIZED.into()),
    }
}

/// A subscription's parameters, by ntfy's names and short names (`readParam`).
#[derive(Debug, Default, serde::Deserialize)]
struct StreamParams {
    #[serde(alias = "si")]
    since: Option<String>,
    #[serde(alias = "po")]
    poll: Option<String>,
    auth: Option<String>,
    id: Option<String>,
    #[serde(alias = "m")]
    message: Option<String>,
    #[serde(alias = "t")]
    title: Option<String>,
    #[serde(alias = "tag", alias = "ta")]
    tags: Option<String>,
    #[serde(alias = "prio", alias = "p")]
    priority: Option<String>,
}

impl StreamParams {
    /// The query's parameters, with ntfy's `X-` headers for those it does not give.
    fn with_headers(mut self, headers: &HeaderMap) -> StreamParams {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        for (field, name) in [
            (&mut self.since, "x-since"),
            (&mut self.poll, "x-poll"),
            (&mut self.id, "x-id"),
            (&mut self.message, "x-message"),
            (&mut self.title, "x-title"),
            (&mut self.tags, "x-tags"),
            (&mut self.priority, "x-priority"),
        ] {
            if field.is_none() {
                *field = header(name);
            }
        }
        self
    }

    /// `poll=1` (ntfy's boolean words).
    fn poll(&self) -> bool {
        matches!(
            self.poll.as_deref().map(str::to_ascii_lowercase).as_deref(),
            Some("1" | "true" | "yes")
        )
    }

    fn filter(&self) -> Result<PhoneFilter, NtfyError> {
        PhoneFilter::parse(FilterParams {
            id: self.id.as_deref(),
            message: self.message.as_deref(),
            title: self.title.as_deref(),
            tags: self.tags.as_deref(),
            priority: self.priority.as_deref(),
        })
        .map_err(|e| PRIORITY_INVALID.saying(e.0))
    }

    /// Where the stream starts: as given; without it, a poll gets everything held and a
    /// stream only what comes (ntfy's `parseSince`).
    fn since(&self) -> Result<Since, NtfyError> {
        match self.since.as_deref() {
            None | Some("") if self.poll() => Ok(Since::All),
            None | Some("") => Ok(Since::None),
            Some(text) => Since::parse(text, now_s()).ok_or(SINCE_INVALID),
        }
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `GET /{topic}/auth`: whether the token may read the topic.
async fn auth(
    State(api): State<Api>,
    Path(topic): Path<String>,
    UrlQuery(params): UrlQuery<StreamParams>,
    headers: HeaderMap,
) -> Response {
    match phone_for(&api, &topic, &headers, params.auth.as_deref()) {
        Ok(_) => Json(json!({"success": true})).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

/// `GET /v1/health`, as ntfy answers it: the hub answers, so it is.
async fn health() -> Json<Value> {
    Json(json!({"healthy": true}))
}

/// Where a phone's stream is.
struct PhoneStream {
    api: Api,
    phone: Phone,
    feed: PhoneFeed,
    base: String,
    token: String,
    /// Events ready to go, oldest first.
    ready: std::collections::VecDeque<Value>,
    /// The last step sent: a change the backlog had already is not sent again.
    last_seq: u64,
    /// The subscription's filters: the messages that fail them are not sent.
    filter: PhoneFilter,
    keepalive: tokio::time::Interval,
    /// The page session the stream was opened with (no token of its own): it ends with it.
    session: Option<String>,
    _slot: Slot,
}

impl PhoneStream {
    fn links(&self) -> PhoneLinks<'_> {
        PhoneLinks {
            base: &self.base,
            topic: &self.phone.topic,
            token: &self.token,
        }
    }

    fn push(
        &mut self,
        alert: &crate::core::alerts::Alert,
        step: &crate::core::alerts::Step,
        since: Since,
    ) {
        let events = phone::events(
            PhoneStep { alert, step },
            &self.feed.watch,
            &self.feed.key,
            &self.links(),
            since,
        );
        let filter = &self.filter;
        self.ready
            .extend(events.into_iter().filter(|e| filter.pass(e)));
        self.last_seq = self.last_seq.max(step.seq);
    }

    /// The next event, waiting for one; `None` when the stream ends (the arbiter revoked,
    /// the stream too far behind, the hub stopping).
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            tokio::select! {
                change = self.feed.live.recv() => match change {
                    Ok(change) => {
                        let step = change.alert.history.last()?.clone();
                        if step.seq > self.last_seq && self.feed.watch.sees(&change.alert, &step) {
                            self.push(&change.alert, &step, Since::All);
                        }
                    }
                    // Behind: the app reconnects and resumes from its last event.
                    Err(broadcast::error::RecvError::Lagged(_)) => return None,
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = self.keepalive.tick() => {
                    if self.api.access.phone_of(&self.token).as_ref() != Some(&self.phone) {
                        tracing::info!(arbiter = %self.phone.arbiter.escape_debug(), "phone stream ended: the arbiter was revoked");
                        return None;
                    }
                    let now = std::time::SystemTime::now();
                    if self.session.as_ref().is_some_and(|id| !self.api.access.sessions.is_open(id, now)) {
                        tracing::info!(arbiter = %self.phone.arbiter.escape_debug(), "phone stream ended: the page's session ended");
                        return None;
                    }
                    return Some(phone::keepalive_event(&self.links(), now_s()));
                }
            }
        }
    }
}

/// Opens `phone`'s stream from `since`: its open event, what it missed, then the changes.
async fn open_stream(
    api: Api,
    peer: SocketAddr,
    phone: Phone,
    headers: &HeaderMap,
    params: &StreamParams,
) -> Result<PhoneStream, Refusal> {
    let since = params.since()?;
    let filter = params.filter()?;
    let slot = api
        .slots
        .take(
            &Viewer::Arbiter(Login::Arbiter(phone.arbiter.clone())),
            peer.ip(),
        )
        .map_err(|full| TOO_MANY_SUBSCRIPTIONS.saying(full))?;
    let after = match since {
        Since::After { seq, .. } => seq.saturating_sub(1),
        _ => 0,
    };
    let arbiter = phone.arbiter.clone();
    let feed = api
        .ask(|reply| ArbiterRead::PhoneFeed {
            arbiter,
            after,
            reply,
        })
        .await
        .map_err(Refusal::Api)?
        .ok_or(UNAUTHORIZED)?;
    let token = presented_credential(headers, params.auth.as_deref()).unwrap_or_default();
    // Opened by the page's session, not a token: it ends at log-out.
    let session = token
        .is_empty()
        .then(|| super::access::session_cookie(headers).map(str::to_owned))
        .flatten();
    let mut keepalive = tokio::time::interval(KEEPALIVE);
    keepalive.reset();
    let mut feed = feed;
    let backlog = std::mem::take(&mut feed.backlog);
    let mut stream = PhoneStream {
        base: base_url(&api, headers),
        api,
        phone,
        ready: Default::default(),
        last_seq: after,
        filter,
        keepalive,
        token,
        feed,
        session,
        _slot: slot,
    };
    // The phone's own token is in its buttons; a page session's phone gets the arbiter's.
    if stream.token.is_empty() {
        stream.token = stream.feed.credentials.token.clone();
    }
    let open = phone::open_event(&stream.links(), now_s());
    stream.ready.push_back(open);
    for (alert, step) in &backlog {
        stream.push(alert, step, since);
    }
    if matches!(since, Since::None) {
        stream.last_seq = stream
            .last_seq
            .max(backlog.last().map_or(0, |(_, s)| s.seq));
    }
    Ok(stream)
}

/// A phone's stream opened for `topic`, or why not.
async fn subscribe(
    api: Api,
    peer: SocketAddr,
    topic: &str,
    headers: &HeaderMap,
    params: &StreamParams,
) -> Result<PhoneStream, Refusal> {
    let phone = phone_for(&api, topic, headers, params.auth.as_deref())?;
    open_stream(api, peer, phone, headers, params).await
}

impl PhoneStream {
    /// A poll's answer: the messages held, no open event, nothing to wait for.
    fn held(&mut self) -> impl Iterator<Item = Value> + '_ {
        self.ready.drain(..).filter(|e| e["event"] != "open")
    }
}

/// `GET /{topic}/json`: a line of JSON per event; with `poll=1`, what is held, then the end.
async fn json_stream(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(topic): Path<String>,
    UrlQuery(params): UrlQuery<StreamParams>,
    headers: HeaderMap,
) -> Response {
    let params = params.with_headers(&headers);
    let mut stream = match subscribe(api, peer, &topic, &headers, &params).await {
        Ok(stream) => stream,
        Err(refusal) => return refusal.into_response(),
    };
    let content_type = [(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8")];
    if params.poll() {
        let lines: String = stream.held().map(|e| format!("{e}\n")).collect();
        return (content_type, lines).into_response();
    }
    let lines = futures_util::stream::unfold(stream, |mut s| async move {
        let event = s.next().await?;
        Some((Ok::<_, Infallible>(Bytes::from(format!("{event}\n"))), s))
    });
    (content_type, Body::from_stream(lines)).into_response()
}

/// `GET /{topic}/sse`: the same events as server-sent events (named by their `event`,
/// `message` the default), for the phone view's `EventSource`.
async fn sse_stream(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(topic): Path<String>,
    UrlQuery(params): UrlQuery<StreamParams>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Refusal> {
    let params = params.with_headers(&headers);
    let mut stream = subscribe(api, peer, &topic, &headers, &params).await?;
    let poll = params.poll();
    let held: Vec<Value> = if poll {
        stream.held().collect()
    } else {
        Vec::new()
    };
    let as_sse = |event: Value| {
        let kind = event["event"].as_str().unwrap_or("message").to_owned();
        let sse = Event::default().data(event.to_string());
        Ok(if kind == "message" {
            sse
        } else {
            sse.event(kind)
        })
    };
    let live = futures_util::stream::unfold((stream, poll), |(mut s, poll)| async move {
        if poll {
            return None;
        }
        let event = s.next().await?;
        Some((event, (s, poll)))
    });
    let events = futures_util::stream::iter(held).chain(live).map(as_sse);
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// `GET /{topic}/ws`: the same events, one WebSocket text frame each, as ntfy's server
/// sends them (the Android app once WebSockets are enabled, aiontfy always). A refusal is
/// answered before the upgrade, as ntfy's JSON error.
async fn ws_stream(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(topic): Path<String>,
    UrlQuery(params): UrlQuery<StreamParams>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Ok(upgrade) = upgrade else {
        return NOT_WEBSOCKET.into_response();
    };
    // RFC 6455 §10.2: a browser names the page that opens a WebSocket; a page of another
    // site must not read a phone's stream with the cookie of the hub's own page. ntfy's apps
    // send no Origin.
    if !super::access::is_same_origin(&headers) {
        return FORBIDDEN
            .saying("cross-site WebSocket refused: the Origin is not this hub")
            .into_response();
    }
    let params = params.with_headers(&headers);
    let stream = match subscribe(api, peer, &topic, &headers, &params).await {
        Ok(stream) => stream,
        Err(refusal) => return refusal.into_response(),
    };
    let poll = params.poll();
    upgrade
        .max_message_size(WS_MAX_READ)
        .max_frame_size(WS_MAX_READ)
        .on_upgrade(move |socket| websocket(socket, stream, poll))
}

/// The most a phone may send on its WebSocket: it has nothing to say (ntfy: 64 bytes).
const WS_MAX_READ: usize = 1024;

/// Sends `stream`'s events on `socket` until either ends; pings are answered by the
/// WebSocket layer, anything else the phone sends is read and dropped.
async fn websocket(mut socket: WebSocket, mut stream: PhoneStream, poll: bool) {
    if poll {
        for event in stream.held().collect::<Vec<_>>() {
            if socket.send(Message::text(event.to_string())).await.is_err() {
                return;
            }
        }
        let _ = socket.send(Message::Close(None)).await;
        return;
    }
    loop {
        tokio::select! {
            event = stream.next() => {
                let Some(event) = event else { break };
                if socket.send(Message::text(event.to_string())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

#[derive(Debug, serde::Deserialize)]
struct TapBody {
    mac: String,
}

/// `POST /api/phone/alerts/{id}/{act}`: a notification's button, as the app sends it:
/// the phone's token and the button's MAC. Taken in the name of the token's arbiter, and
/// only when the MAC is theirs for this alert and act (403 otherwise, nothing changed).
async fn tap(
    State(api): State<Api>,
    Path((id, act)): Path<(AlertId, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(act) = PhoneAct::parse(&act) else {
        return NOT_FOUND.saying("no such button").into_response();
    };
    let Some(phone) = presented_credential(&headers, None).and_then(|t| api.access.phone_of(&t))
    else {
        return UNAUTHORIZED.into_response();
    };
    let body: TapBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return JSON_INVALID.saying(e).into_response(),
    };
    let arbiter = phone.arbiter.clone();
    let answer = api
        .ask(|reply| AlertChange::Phone {
            arbiter,
            id,
            act,
            mac: body.mac,
            reply,
        })
        .await;
    match answer {
        Ok(Ok(alert)) => Json(alert).into_response(),
        Ok(Err(AlertError::NotTheirs(_))) => {
            tracing::warn!(id = id.0, arbiter = %phone.arbiter.escape_debug(), "a phone's button refused: not the arbiter's for this alert");
            FORBIDDEN
                .saying("this button is not yours for this alert")
                .into_response()
        }
        Ok(Err(AlertError::Unknown(id))) => ApiError::UnknownAlert(id).into_response(),
        Ok(Err(e @ AlertError::OutOfZone { .. })) => FORBIDDEN.saying(e).into_response(),
        Ok(Err(e)) => BAD_REQUEST.saying(e).into_response(),
        Err(e) => e.into_response(),
    }
}
