//! The HTTP listener's connections: at most [`MAX_CONNECTIONS`] in all and [`PER_CLIENT`]
//! per address, room made by closing silent or idle ones ([`super::places`]); a request
//! head within [`HEADER_TIMEOUT`] and its body within [`BODY_TIMEOUT`] after it (OWASP's
//! slow-HTTP advice: a deadline for the whole request, not only its head); at most
//! [`MAX_REQUESTS_PER_CONNECTION`] requests and [`MAX_CONNECTION_AGE`] a connection.
//!
//! A request's body is read whole (at most [`MAX_BODY_BYTES`]) before the request is
//! routed: a body that stalls is answered 408 and its connection closed, and holds no
//! handler while it stalls.
//!
//! A kept-alive connection is closed only where no client can be sending on it, so no
//! request dies on a connection the hub chose to close (RFC 9112 §9.6):
//! - idle: every response says `Keep-Alive: timeout=5` ([`KEEP_ALIVE_ANNOUNCED`]), and the
//!   hub closes a connection only after [`HEADER_TIMEOUT`] without a request head, twice
//!   that (nginx's `keepalive_timeout` with its header). A client that retires its idle
//!   connections as told never sends on one the hub is closing.
//! - aged or used up: the first response after [`MAX_CONNECTION_AGE`] or the
//!   [`MAX_REQUESTS_PER_CONNECTION`]th carries `Connection: close` and the connection ends
//!   once it is written, never under a request.
//! - to make room at a cap: an idle connection is shut gracefully (a request already on its
//!   way is answered first); only a hall under a flood sees that.
//!
//! A peer that is gone (a phone that roamed off the Wi-Fi, a laptop shut) is found within a
//! minute ([`dead_peers_found`]): what the hub writes must be acknowledged within
//! [`UNACKNOWLEDGED_LIMIT`], and a silent connection is probed. Before, a live stream's
//! place stayed taken for the kernel's ~15 minutes of retransmissions: eight roamed phones
//! locked their arbiter's phone and page out.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower::ServiceExt;

use super::places::{Evicted, Places};
use crate::metrics::Metrics;

pub use super::places::{MAX_CONNECTIONS, PER_CLIENT};
/// A request's head must arrive within this (slowloris).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body must arrive within this after its head (slow POST).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request body the API reads: a decision, a note, a binding are a few hundred
/// bytes. Nothing needs more.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// How much of a body past [`MAX_BODY_BYTES`] is read and thrown away so that its client
/// reads the 413 instead of a reset; a larger one is cut off there.
pub const MAX_DRAINED_BYTES: usize = 4 * 1024 * 1024;
/// A connection takes no new request after this: its next response says `Connection:
/// close`. The one under way (a page's live stream) goes on.
pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(60);
/// How long a client may keep a connection idle, as every kept-alive response tells it
/// (`Keep-Alive: timeout=5`). The hub closes an idle connection only after
/// [`HEADER_TIMEOUT`] (hyper's deadline for the next request's head, which runs from the
/// end of the last response): the margin covers a client's timer and the network.
pub const KEEP_ALIVE_ANNOUNCED: Duration = Duration::from_secs(5);
const _: () = assert!(KEEP_ALIVE_ANNOUNCED.as_secs() * 2 <= HEADER_TIMEOUT.as_secs());
/// Requests one connection serves (nginx's `keepalive_requests`): its last answer says
/// `Connection: close`.
pub const MAX_REQUESTS_PER_CONNECTION: u32 = 1_000;

/// Serves `router` on `listener` until the task is dropped, its connections held in
/// `places`: HTTPS with `tls`, else plain.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    places: Places,
    metrics: Arc<Metrics>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut backoff = Duration::ZERO;
    let mut last_failure_logged: Option<std::time::Instant> = None;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => {
                backoff = Duration::ZERO;
                accepted
            }
            Err(e) => {
                // Out of descriptors: back off instead of spinning, say so once a second.
                if last_failure_logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    tracing::warn!(error = %e, "HTTP accept failed; backing off");
                    last_failure_logged = Some(std::time::Instant::now());
                }
                backoff = (backoff * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
                tokio::time::sleep(backoff).await;
                continue;
            }
        };
        let Some(place) = places.admit(peer.ip()) else {
            metrics.http_connection_refused();
            continue;
        };
        let _ = stream.set_nodelay(true);
        dead_peers_found(&stream);
        let (router, tls, places) = (router.clone(), tls.clone(), places.clone());
        tokio::spawn(async move {
            let id = place.id;
            let mut evicted = place.evicted;
            match tls {
                None => connection(stream, peer, router, id, &places, &mut evicted).await,
                Some(tls) => {
                    // The handshake within the time a request's head has, closed early
                    // like a silent connection.
                    let handshake = tokio::time::timeout(HEADER_TIMEOUT, tls.accept(stream));
                    tokio::select! {
                        done = handshake => match done {
                            Ok(Ok(stream)) => {
                                connection(stream, peer, router, id, &places, &mut evicted).await;
                            }
                            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        },
                        _ = &mut evicted => {}
                    }
                }
            }
            places.leave(id);
        });
    }
}

/// One connection: HTTP/1.1 with its timeouts and budgets, closed early to make room.
async fn connection<I>(
    stream: I,
    peer: SocketAddr,
    router: Router,
    id: u64,
    places: &Places,
    evicted: &mut oneshot::Receiver<Evicted>,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let serving = places.clone();
    // Set once the connection is older than MAX_CONNECTION_AGE: the next response is its last.
    let aged_out = Arc::new(AtomicBool::new(false));
    let last = aged_out.clone();
    let served = Arc::new(AtomicU32::new(0));
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let router = router.clone();
        let places = serving.clone();
        let last = last.clone();
        let served = served.clone();
        async move {
            let (mut parts, body) = request.into_parts();
            let body = match whole_body(body).await {
                Ok(body) => body,
                Err(refusal) => {
                    tracing::debug!(%peer, status = %refusal.status(), "request body refused");
                    return Ok(refusal);
                }
            };
            // A whole request: the connection is busy until its answer is written.
            places.spoke(id);
            let used_up = served.fetch_add(1, Ordering::Relaxed) + 1 >= MAX_REQUESTS_PER_CONNECTION;
            parts.extensions.insert(ConnectInfo(peer));
            let request = hyper::Request::from_parts(parts, body);
            let mut response = router.oneshot(request).await.unwrap_or_else(|e| match e {});
            say_how_long_it_lives(&mut response, used_up || last.load(Ordering::Relaxed));
            let idle = Answered { places, id };
            Ok::<_, Infallible>(
                response.map(|body| axum::body::Body::new(Tracked { body, _idle: idle })),
            )
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_buf_size(64 * 1024);
    // Upgrades: a phone's WebSocket (`ntfy`) leaves the connection for its own task.
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let aged = tokio::time::sleep(MAX_CONNECTION_AGE);
    let mut aged = std::pin::pin!(aged);
    let mut is_aged = false;
    let mut told_to_close = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "HTTP connection ended");
                }
                break;
            }
            closed = &mut *evicted, if !told_to_close => {
                told_to_close = true;
                match closed {
                    Ok(Evicted::Silent) => {
                        tracing::debug!(%peer, "silent HTTP connection closed to make room");
                        break;
                    }
                    // Between requests: a request already on its way is answered first.
                    Ok(Evicted::Idle) => {
                        tracing::debug!(%peer, "idle HTTP connection closed to make room");
                        conn.as_mut().graceful_shutdown();
                    }
                    Err(_) => {}
                }
            }
            // Not closed here: an idle connection may have a request on its way. Its next
            // response closes it; hyper's idle deadline closes it if none comes.
            () = &mut aged, if !is_aged => {
                aged_out.store(true, Ordering::Relaxed);
                is_aged = true;
            }
        }
    }
}

/// Marks the connection idle when its answer's body is written whole, or dropped.
struct Answered {
    places: Places,
    id: u64,
}

impl Drop for Answered {
    fn drop(&mut self) {
        self.places.answered(self.id);
    }
}

/// An answer's body, with what marks its connection idle once it is done.
struct Tracked {
    body: axum::body::Body,
    _idle: Answered,
}

impl hyper::body::Body for Tracked {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Tells the client how long the connection lives: `Connection: close` on its last
/// response, else `Keep-Alive: timeout=N`. A response that closes or upgrades the connection
/// already says so.
fn say_how_long_it_lives(response: &mut axum::response::Response, last: bool) {
    use hyper::header::{HeaderValue, CONNECTION};
    if response.status() == hyper::StatusCode::SWITCHING_PROTOCOLS
        || response.headers().contains_key(CONNECTION)
    {
        return;
    }
    if last {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    } else {
        static ANNOUNCED: LazyLock<HeaderValue> = LazyLock::new(|| {
            HeaderValue::from_str(&format!("timeout={}", KEEP_ALIVE_ANNOUNCED.as_secs()))
                .expect("a number is a header value")
        });
        response.headers_mut().insert(KEEP_ALIVE, ANNOUNCED.clone());
    }
}

const KEEP_ALIVE: hyper::header::HeaderName = hyper::header::HeaderName::from_static("keep-alive");

/// A request's body, read whole within [`BODY_TIMEOUT`] and [`MAX_BODY_BYTES`]; else the
/// answer: 408 or 413, and the connection closed after it.
///
/// A body past the limit is read on and thrown away, up to [`MAX_DRAINED_BYTES`], before
/// the 413 goes out (nginx's lingering close): a connection closed with the client's bytes
/// unread is reset, and a client still sending its body would meet the reset before it
/// read why.
async fn whole_body(body: Incoming) -> Result<axum::body::Body, axum::response::Response> {
    use axum::response::IntoResponse;
    use futures_util::StreamExt;
    use hyper::body::Body as _;
    if body.is_end_stream() {
        return Ok(axum::body::Body::empty());
    }
    let read = async {
        let mut chunks = axum::body::Body::new(body).into_data_stream();
        let mut kept = Vec::new();
        let mut seen = 0usize;
        while let Some(chunk) = chunks.next().await {
            // A body that breaks off (the client went) is never routed in part.
            let chunk = chunk.map_err(|_| hyper::StatusCode::BAD_REQUEST)?;
            seen += chunk.len();
            if seen <= MAX_BODY_BYTES {
                kept.extend_from_slice(&chunk);
            } else if seen > MAX_DRAINED_BYTES {
                break;
            }
        }
        if seen <= MAX_BODY_BYTES {
            Ok(kept)
        } else {
            Err(hyper::StatusCode::PAYLOAD_TOO_LARGE)
        }
    };
    let close = [(hyper::header::CONNECTION, "close")];
    match tokio::time::timeout(BODY_TIMEOUT, read).await {
        Ok(Ok(bytes)) => Ok(axum::body::Body::from(bytes)),
        Ok(Err(status)) if status == hyper::StatusCode::BAD_REQUEST => {
            Err((status, close, "the request's body broke off\n").into_response())
        }
        Ok(Err(_)) => Err((
            hyper::StatusCode::PAYLOAD_TOO_LARGE,
            close,
            format!("a request body is at most {MAX_BODY_BYTES} bytes\n"),
        )
            .into_response()),
        Err(_) => Err((
            hyper::StatusCode::REQUEST_TIMEOUT,
            close,
            format!(
                "the request's body did not arrive within {} s of its head\n",
                BODY_TIMEOUT.as_secs()
            ),
        )
            .into_response()),
    }
}

/// How long what the hub wrote may stay unacknowledged before the connection is dropped
/// (`TCP_USER_TIMEOUT`): a live stream writes at least every 25 s (its keepalive), so a
/// stream to a peer that is gone ends within a minute and gives its place back.
pub const UNACKNOWLEDGED_LIMIT: Duration = Duration::from_secs(30);
/// A connection silent this long is probed (`TCP_KEEPIDLE`), every 5 s, three times.
const PROBE_AFTER: Duration = Duration::from_secs(15);

/// Has the kernel find a peer that is gone: TCP keepalive probes on a silent connection,
/// and a deadline for acknowledging what the hub wrote. A socket that refuses either keeps
/// the kernel's defaults.
fn dead_peers_found(stream: &tokio::net::TcpStream) {
    use rustix::net::sockopt;
    let limit_ms = u32::try_from(UNACKNOWLEDGED_LIMIT.as_millis()).unwrap_or(u32::MAX);
    let set = sockopt::set_socket_keepalive(stream, true)
        .and_then(|()| sockopt::set_tcp_keepidle(stream, PROBE_AFTER))
        .and_then(|()| sockopt::set_tcp_keepintvl(stream, Duration::from_secs(5)))
        .and_then(|()| sockopt::set_tcp_keepcnt(stream, 3))
        .and_then(|()| sockopt::set_tcp_user_timeout(stream, limit_ms));
    if let Err(e) = set {
        tracing::debug!(error = %e, "a connection keeps the kernel's dead-peer timers");
    }
}
