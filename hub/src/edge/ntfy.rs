//! The subscribing side of ntfy's protocol, for the arbiters' phones (NOTES, *Phones*): the
//! ntfy app on a phone subscribes to the hub itself, no ntfy server and no internet.
//!
//! ```text
//! GET  /{topic}/json[?since=…][&poll=1]   a line of JSON per event: open, keepalive, message,
//!                                         message_clear (view::phone)
//! GET  /{topic}/sse                       the same as server-sent events (the phone view)
//! GET  /{topic}/auth                      {"success": true} for the topic's token
//! POST /api/phone/alerts/{id}/{act}       a notification's button: {"mac": …}, the token
//! ```
//!
//! A topic answers only to its arbiter's token (`Authorization: Bearer`, Basic with the
//! token as password, or ntfy's `?auth=`), or to the arbiter's own page session. Streams
//! draw from the arbiters' pool ([`super::slots`]) and end when the arbiter is revoked.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, Query as UrlQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::access::{presented_credential, Login, Phone};
use super::api::{Api, ApiError, PhoneFeed, Query};
use super::slots::{Slot, Viewer};
use crate::core::alerts::desk::AlertError;
use crate::core::ids::AlertId;
use crate::core::phone::{PhoneAct, PhoneCredentials, PhoneStep};
use crate::view::phone::{self, PhoneLinks, Since};

/// How often a stream says it is alive: well inside the app's 77 s (NOTES), and short
/// enough that a revoked arbiter's phone is cut off soon.
pub const KEEPALIVE: Duration = Duration::from_secs(25);

/// The routes of the phones; each checks its own credential.
pub(super) fn routes() -> Router<Api> {
    Router::new()
        .route("/{topic}/json", get(json_stream))
        .route("/{topic}/sse", get(sse_stream))
        .route("/{topic}/auth", get(auth))
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

/// Why a phone's request gets no answer.
#[derive(Debug)]
enum Refusal {
    /// As ntfy says it: `{"code", "http", "error"}`.
    Ntfy(StatusCode, String),
    /// As the rest of the API says it.
    Api(ApiError),
}

fn refused(status: StatusCode, why: &str) -> Refusal {
    Refusal::Ntfy(status, why.to_owned())
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Ntfy(status, why) => {
                let code = u32::from(status.as_u16()) * 100 + 1;
                let body = json!({"code": code, "http": status.as_u16(), "error": why});
                (status, Json(body)).into_response()
            }
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
            Some(super::access::Login::Arbiter(name)) => api.access.phone_of_arbiter(&name),
            _ => None,
        },
    };
    match phone {
        Some(phone) if phone.topic == topic => Ok(phone),
        Some(_) => Err(refused(StatusCode::FORBIDDEN, "forbidden")),
        // A wrong token was counted at the door (`access::guessers_slowed`).
        None => Err(refused(StatusCode::UNAUTHORIZED, "unauthorized")),
    }
}

#[derive(Debug, Default, serde::Deserialize)]
struct StreamParams {
    since: Option<String>,
    poll: Option<String>,
    auth: Option<String>,
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
    keepalive: tokio::time::Interval,
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
        self.ready.extend(events);
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
    let since = match params.since.as_deref() {
        None => Since::None,
        Some(text) => Since::parse(text, now_s())
            .ok_or_else(|| refused(StatusCode::BAD_REQUEST, "invalid since parameter"))?,
    };
    let slot = api
        .slots
        .take(
            &Viewer::Arbiter(Login::Arbiter(phone.arbiter.clone())),
            peer.ip(),
        )
        .map_err(|full| {
            refused(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("limit reached: {full}"),
            )
        })?;
    let after = match since {
        Since::After { seq, .. } => seq.saturating_sub(1),
        _ => 0,
    };
    let arbiter = phone.arbiter.clone();
    let feed = api
        .ask(|reply| Query::PhoneFeed(arbiter, after, reply))
        .await
        .map_err(Refusal::Api)?
        .ok_or_else(|| refused(StatusCode::UNAUTHORIZED, "unauthorized"))?;
    let token = presented_credential(headers, params.auth.as_deref()).unwrap_or_default();
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
        keepalive,
        token,
        feed,
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

/// `GET /{topic}/json`: a line of JSON per event; with `poll=1`, what is held, then the end.
async fn json_stream(
    State(api): State<Api>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(topic): Path<String>,
    UrlQuery(params): UrlQuery<StreamParams>,
    headers: HeaderMap,
) -> Response {
    let phone = match phone_for(&api, &topic, &headers, params.auth.as_deref()) {
        Ok(phone) => phone,
        Err(refusal) => return refusal.into_response(),
    };
    let poll = matches!(params.poll.as_deref(), Some("1" | "true" | "yes"));
    let mut stream = match open_stream(api, peer, phone, &headers, &params).await {
        Ok(stream) => stream,
        Err(refusal) => return refusal.into_response(),
    };
    let content_type = [(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8")];
    if poll {
        // A poll answers the messages held: no open event, nothing to wait for.
        let lines: String = stream
            .ready
            .drain(..)
            .filter(|e| e["event"] != "open")
            .map(|e| format!("{e}\n"))
            .collect();
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
    let phone = phone_for(&api, &topic, &headers, params.auth.as_deref())?;
    let stream = open_stream(api, peer, phone, &headers, &params).await?;
    let events = futures_util::stream::unfold(stream, |mut s| async move {
        let event = s.next().await?;
        let kind = event["event"].as_str().unwrap_or("message").to_owned();
        let sse = Event::default().data(event.to_string());
        let sse = if kind == "message" {
            sse
        } else {
            sse.event(kind)
        };
        Some((Ok(sse), s))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
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
        return refused(StatusCode::NOT_FOUND, "no such button").into_response();
    };
    let Some(phone) = presented_credential(&headers, None).and_then(|t| api.access.phone_of(&t))
    else {
        return refused(StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    };
    let body: TapBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return refused(StatusCode::BAD_REQUEST, &format!("body: {e}")).into_response(),
    };
    let arbiter = phone.arbiter.clone();
    let answer = api
        .ask(|reply| Query::PhoneCommand(arbiter, id, act, body.mac, reply))
        .await;
    match answer {
        Ok(Ok(alert)) => Json(alert).into_response(),
        Ok(Err(AlertError::NotTheirs(_))) => {
            tracing::warn!(id = id.0, arbiter = %phone.arbiter.escape_debug(), "a phone's button refused: not the arbiter's for this alert");
            refused(
                StatusCode::FORBIDDEN,
                "this button is not yours for this alert",
            )
            .into_response()
        }
        Ok(Err(AlertError::Unknown(id))) => ApiError::UnknownAlert(id).into_response(),
        Ok(Err(e @ AlertError::OutOfZone { .. })) => {
            refused(StatusCode::FORBIDDEN, &e.to_string()).into_response()
        }
        Ok(Err(e)) => refused(StatusCode::BAD_REQUEST, &e.to_string()).into_response(),
        Err(e) => e.into_response(),
    }
}
