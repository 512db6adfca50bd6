//! The HTTP listener's connections, bounded as nginx bounds them: at most
//! [`MAX_CONNECTIONS`] in all and [`PER_CLIENT`] per address, a request head within
//! [`HEADER_TIMEOUT`] and its body within [`BODY_TIMEOUT`] after it (OWASP's slow-HTTP
//! advice: a deadline for the whole request, not only its head), and no connection kept
//! open for more requests after [`MAX_CONNECTION_AGE`].
//!
//! A kept-alive connection is closed only where no client can be sending on it, so no
//! request dies on a connection the hub chose to close (RFC 9112 §9.6):
//! - idle: every response says `Keep-Alive: timeout=5` ([`KEEP_ALIVE_ANNOUNCED`]), and the
//!   hub closes a connection only after [`HEADER_TIMEOUT`] without a request head, twice
//!   that (nginx's `keepalive_timeout` with its header). A client that retires its idle
//!   connections as told never sends on one the hub is closing.
//! - aged: the first response after [`MAX_CONNECTION_AGE`] carries `Connection: close`
//!   and the connection ends once it is written, never under a request.
//!
//! A request's body is read whole (at most [`MAX_BODY_BYTES`]) before the request is
//! routed: a body that stalls is answered 408 and its connection closed, and holds no
//! handler while it stalls.
//!
//! When a cap is reached, the oldest connection that has not sent a whole request yet is
//! closed to make room: a browser or a script sends its request at once, so a silent
//! connection (or one whose body stalls) is the likeliest to be held open to use up the
//! places. That keeps `/healthz` and the arbiters'
//! page answering even when a stranger shares their address (behind a reverse proxy, an SSH
//! tunnel or NAT everyone is one address). Only when every connection has spoken is a new one
//! refused.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower::ServiceExt;

use crate::metrics::Metrics;

/// Connections held at once: every arbiter's and spectator's page, the broadcasters' polls.
pub const MAX_CONNECTIONS: usize = 2_048;
/// Connections one address holds at once.
pub const PER_CLIENT: usize = 256;
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

/// Serves `router` on `listener` until the task is dropped: HTTPS with `tls`, else plain.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    metrics: Arc<Metrics>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let registry = Registry::default();
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
        let Some(place) = registry.admit(peer.ip()) else {
            metrics.http_connection_refused();
            continue;
        };
        if place.evicted_another {
            metrics.http_connection_refused();
        }
        let _ = stream.set_nodelay(true);
        let (router, tls) = (router.clone(), tls.clone());
        tokio::spawn(async move {
            let Place {
                id,
                registry,
                mut evicted,
                ..
            } = place;
            match tls {
                None => connection(stream, peer, router, id, &registry, &mut evicted).await,
                Some(tls) => {
                    // The handshake within the time a request's head has, closed early
                    // like a silent connection.
                    let handshake = tokio::time::timeout(HEADER_TIMEOUT, tls.accept(stream));
                    tokio::select! {
                        done = handshake => match done {
                            Ok(Ok(stream)) => {
                                connection(stream, peer, router, id, &registry, &mut evicted).await;
                            }
                            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        },
                        _ = &mut evicted => {}
                    }
                }
            }
            registry.leave(id);
        });
    }
}

/// One connection: HTTP/1.1 with its timeouts, closed early if evicted while silent.
async fn connection<I>(
    stream: I,
    peer: SocketAddr,
    router: Router,
    id: u64,
    registry: &Registry,
    evicted: &mut oneshot::Receiver<()>,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let spoke = registry.clone();
    // Set once the connection is older than MAX_CONNECTION_AGE: the next response is its last.
    let aged_out = Arc::new(AtomicBool::new(false));
    let last = aged_out.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let router = router.clone();
        let spoke = spoke.clone();
        let last = last.clone();
        async move {
            let (mut parts, body) = request.into_parts();
            let body = match whole_body(body).await {
                Ok(body) => body,
                Err(refusal) => {
                    tracing::debug!(%peer, status = %refusal.status(), "request body refused");
                    return Ok(refusal);
                }
            };
            // A whole request: the connection is no longer silent, nor evicted to make room.
            spoke.spoke(id);
            parts.extensions.insert(ConnectInfo(peer));
            let request = hyper::Request::from_parts(parts, body);
            let mut response = router.oneshot(request).await.unwrap_or_else(|e| match e {});
            say_how_long_it_lives(&mut response, last.load(Ordering::Relaxed));
            Ok::<_, Infallible>(response)
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
    // Once the connection has spoken its sender is dropped: no eviction can come any more.
    let mut silent = true;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "HTTP connection ended");
                }
                break;
            }
            closed = &mut *evicted, if silent => {
                if closed.is_ok() {
                    tracing::debug!(%peer, "silent HTTP connection closed to make room");
                    break;
                }
                silent = false;
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

/// The connections open now.
#[derive(Debug, Clone, Default)]
struct Registry(Arc<Mutex<Open>>);

#[derive(Debug, Default)]
struct Open {
    next: u64,
    total: usize,
    by_client: HashMap<IpAddr, usize>,
    /// Connections that have not sent a request yet, oldest first, with a way to close each.
    silent: BTreeMap<u64, (IpAddr, oneshot::Sender<()>)>,
    clients: HashMap<u64, IpAddr>,
}

/// A connection's place; it is given back by [`Registry::leave`].
struct Place {
    id: u64,
    registry: Registry,
    evicted: oneshot::Receiver<()>,
    /// Admitting it closed a silent connection.
    evicted_another: bool,
}

impl Registry {
    /// A place for a connection from `client`; `None` when the caps are reached and every
    /// connection in the way has spoken.
    fn admit(&self, client: IpAddr) -> Option<Place> {
        let mut open = self.0.lock().expect("connections lock");
        let mut evicted_another = false;
        if open.by_client.get(&client).copied().unwrap_or(0) >= PER_CLIENT {
            evicted_another |= open.evict_oldest_silent(Some(client))?;
        }
        if open.total >= MAX_CONNECTIONS {
            evicted_another |= open.evict_oldest_silent(None)?;
        }
        let id = open.next;
        open.next += 1;
        open.total += 1;
        *open.by_client.entry(client).or_insert(0) += 1;
        let (close, evicted) = oneshot::channel();
        open.silent.insert(id, (client, close));
        open.clients.insert(id, client);
        Some(Place {
            id,
            registry: self.clone(),
            evicted,
            evicted_another,
        })
    }

    /// Connection `id` sent a request: it is no longer closed to make room.
    fn spoke(&self, id: u64) {
        let mut open = self.0.lock().expect("connections lock");
        open.silent.remove(&id);
    }

    fn leave(&self, id: u64) {
        let mut open = self.0.lock().expect("connections lock");
        open.silent.remove(&id);
        if let Some(client) = open.clients.remove(&id) {
            open.total -= 1;
            if let Some(n) = open.by_client.get_mut(&client) {
                *n -= 1;
                if *n == 0 {
                    open.by_client.remove(&client);
                }
            }
        }
    }
}

impl Open {
    /// Closes the oldest silent connection (of `client`, if given), and counts it gone at
    /// once so its place is free; `None` if there is none.
    fn evict_oldest_silent(&mut self, client: Option<IpAddr>) -> Option<bool> {
        let id = self
            .silent
            .iter()
            .find(|(_, (from, _))| client.is_none_or(|c| c == *from))
            .map(|(id, _)| *id)?;
        let (from, close) = self.silent.remove(&id)?;
        let _ = close.send(());
        self.clients.remove(&id);
        self.total -= 1;
        if let Some(n) = self.by_client.get_mut(&from) {
            *n -= 1;
            if *n == 0 {
                self.by_client.remove(&from);
            }
        }
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_address_makes_room_by_closing_its_oldest_silent_connection() {
        let registry = Registry::default();
        let client: IpAddr = "127.0.0.1".parse().unwrap();
        let mut places: Vec<Place> = (0..PER_CLIENT)
            .map(|_| registry.admit(client).unwrap())
            .collect();
        // The first one spoke; the second is the oldest silent one.
        registry.spoke(places[0].id);
        let newest = registry.admit(client).expect("room made");
        assert!(newest.evicted_another);
        assert!(
            places[1].evicted.try_recv().is_ok(),
            "the oldest silent one closed"
        );
        assert!(
            places[0].evicted.try_recv().is_err(),
            "one that spoke stays"
        );
        assert_eq!(registry.0.lock().unwrap().by_client[&client], PER_CLIENT);
        // When every connection has spoken, a new one is refused.
        for place in &places {
            registry.spoke(place.id);
        }
        registry.spoke(newest.id);
        assert!(registry.admit(client).is_none());
        // Places come back when connections end (an evicted one was counted out already).
        registry.leave(places[1].id);
        registry.leave(places[2].id);
        assert!(registry.admit(client).is_some());
        places.clear();
    }

    #[test]
    fn the_hub_wide_cap_takes_a_silent_connection_of_any_address() {
        let registry = Registry::default();
        let mut n = 0u32;
        let mut places = Vec::new();
        while places.len() < MAX_CONNECTIONS {
            let client = IpAddr::from(n.to_be_bytes());
            n += 1;
            for _ in 0..8 {
                places.push(registry.admit(client).unwrap());
            }
        }
        let other: IpAddr = "10.9.9.9".parse().unwrap();
        let admitted = registry.admit(other).expect("room made");
        assert!(admitted.evicted_another);
        assert_eq!(registry.0.lock().unwrap().total, MAX_CONNECTIONS);
    }
}
