//! The tests' HTTP client (reqwest's blocking one): plain or TLS (the hall CA pinned), as an
//! arbiter (the hub's token) or as a stranger, for the hubs the tests started.

use std::net::SocketAddr;
use std::time::Duration;

/// A value for each hub the tests started, by its HTTP address.
struct PerHub(std::sync::Mutex<Vec<(SocketAddr, String)>>);

impl PerHub {
    const fn new() -> PerHub {
        PerHub(std::sync::Mutex::new(Vec::new()))
    }

    fn set(&self, http: SocketAddr, value: &str) {
        let mut values = self.0.lock().unwrap();
        values.retain(|(addr, _)| *addr != http);
        values.push((http, value.to_owned()));
    }

    fn forget(&self, http: SocketAddr) {
        self.0.lock().unwrap().retain(|(addr, _)| *addr != http);
    }

    fn get(&self, http: SocketAddr) -> Option<String> {
        let values = self.0.lock().unwrap();
        values
            .iter()
            .find(|(addr, _)| *addr == http)
            .map(|(_, value)| value.clone())
    }
}

/// The arbiters' token of each hub the tests started: the requests below are an arbiter's
/// (they send it) unless they say they are a stranger's.
static ARBITER_TOKENS: PerHub = PerHub::new();

/// The hall CA (PEM) of each hub the tests started with HTTPS: requests to it go over TLS,
/// the CA pinned.
static HTTPS_CAS: PerHub = PerHub::new();

/// From now on, requests to `http` go over TLS, trusting `ca_pem`.
pub fn register_https(http: SocketAddr, ca_pem: &str) {
    HTTPS_CAS.set(http, ca_pem);
    CLIENTS.forget(http);
}

/// The hall CA a hub the tests started with HTTPS pins, by its HTTP address.
pub fn https_ca_of(http: SocketAddr) -> Option<String> {
    HTTPS_CAS.get(http)
}

/// From now on, requests to `http` are sent as an arbiter with `token`.
pub fn register_token(http: SocketAddr, token: &str) {
    ARBITER_TOKENS.set(http, token);
}

/// The arbiters' token of the hub at `http`, if a test started it.
pub fn token_of(http: SocketAddr) -> Option<String> {
    ARBITER_TOKENS.get(http)
}

/// The hub at `http` is gone: its token and CA are forgotten, so a later hub on the same
/// port (every test runs in one process) is not sent them.
pub fn forget_hub(http: SocketAddr) {
    ARBITER_TOKENS.forget(http);
    HTTPS_CAS.forget(http);
    CLIENTS.forget(http);
}

/// A plain HTTP/1.1 GET; returns the status and the body.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    http_get_with(addr, path, &[]).map(|(status, _, body)| (status, body))
}

/// A plain HTTP/1.1 GET with request headers; returns the status, the response headers
/// (names in lower case) and the body.
pub fn http_get_with(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    http_request(addr, "GET", path, headers, "")
}

/// A plain HTTP/1.1 POST of a JSON body; returns the status and the body.
pub fn http_post(addr: SocketAddr, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let json = [("Content-Type", "application/json")];
    http_request(addr, "POST", path, &json, body).map(|(status, _, body)| (status, body))
}

/// One HTTP/1.1 request with headers and a body, as an arbiter (with the hub's token, unless
/// `headers` carry an `Authorization` or a `Cookie` of their own); returns the status, the
/// response headers (names in lower case) and the body.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let own = headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie")
    });
    match token_of(addr).filter(|_| !own) {
        Some(token) => {
            let bearer = format!("Bearer {token}");
            let mut with = headers.to_vec();
            with.push(("Authorization", &bearer));
            stranger_request(addr, method, path, &with, body)
        }
        None => stranger_request(addr, method, path, headers, body),
    }
}

/// One HTTP/1.1 request with exactly the headers given (no token): a stranger's, or one
/// whose credentials are its own.
pub fn stranger_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    request_from(None, addr, method, path, headers, body)
}

/// Where a test's stranger on the hall network connects from: an address of its own on
/// loopback, so that what the hub does to it (throttling wrong tokens) is not done to the
/// arbiters' and the technician's requests from 127.0.0.1.
pub const STRANGER: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 66));

/// [`stranger_request`] from `source` (127.0.0.N on loopback), or the default address:
/// reqwest's blocking client, one per hub and source, over TLS with the hall CA pinned where
/// the hub is HTTPS, following no redirect.
pub fn request_from(
    source: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let request = request(source, addr, method, path, headers, body)?;
    // On a thread of its own: the blocking client may not wait inside an async test's
    // runtime (many tests are async).
    let response = std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let response = send_retrying_once(request)?;
                let status = response.status().as_u16();
                let headers = response
                    .headers()
                    .iter()
                    .map(|(name, value)| {
                        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                        (name.as_str().to_owned(), value)
                    })
                    .collect();
                let body = String::from_utf8_lossy(&response.bytes()?).into_owned();
                Ok::<_, reqwest::Error>((status, headers, body))
            })
            .join()
            .expect("the request's thread")
    });
    response.map_err(std::io::Error::other)
}

/// Sends `request`; an idempotent one is sent once more if its connection closed before any
/// byte of the answer came (RFC 9112 §9.3.1), as browsers do. The tests' client retires
/// idle connections before the hub's announced `Keep-Alive: timeout`, so this covers a
/// connection that broke by other means, never one the hub closed as it said it would
/// (`keep_alive::` checks that without retrying).
fn send_retrying_once(
    request: reqwest::blocking::RequestBuilder,
) -> reqwest::Result<reqwest::blocking::Response> {
    let again = request.try_clone();
    let idempotent = request
        .try_clone()
        .and_then(|r| r.build().ok())
        .is_some_and(|r| r.method().is_idempotent());
    match request.send() {
        Err(e) if idempotent && closed_before_answer(&e) => match again {
            Some(again) => {
                eprintln!("the connection closed before the answer ({e}); sent once more");
                again.send()
            }
            None => Err(e),
        },
        answered => answered,
    }
}

/// Whether `e` says the connection closed before the answer began: hyper's incomplete
/// message, or a reset or broken pipe under it.
pub fn closed_before_answer(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(e) = cause {
        if let Some(e) = e.downcast_ref::<hyper::Error>() {
            if e.is_incomplete_message() {
                return true;
            }
        }
        if let Some(e) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
            if matches!(e.kind(), ConnectionReset | ConnectionAborted | BrokenPipe) {
                return true;
            }
        }
        cause = e.source();
    }
    false
}

/// A GET with exactly the headers given whose answer is read as it comes (a server-sent
/// event stream), from a test's own thread (not an async test's runtime).
pub fn stranger_stream(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<reqwest::blocking::Response> {
    request(None, addr, "GET", path, headers, "")?
        .send()
        .map_err(std::io::Error::other)
}

/// The request, on the client of `addr` and `source`.
fn request(
    source: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<reqwest::blocking::RequestBuilder> {
    let client = CLIENTS.of(addr, source)?;
    let scheme = if https_ca_of(addr).is_some() {
        "https"
    } else {
        "http"
    };
    let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(std::io::Error::other)?;
    let mut request = client.request(method.clone(), format!("{scheme}://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if !body.is_empty() || method != reqwest::Method::GET {
        request = request.body(body.to_owned());
    }
    Ok(request)
}

/// A test's client: the hub it asks, and the address it connects from (`None`: any).
type ClientKey = (SocketAddr, Option<std::net::IpAddr>);

/// The tests' HTTP clients, one per hub (its CA pinned) and source address.
struct Clients(std::sync::Mutex<Vec<(ClientKey, reqwest::blocking::Client)>>);

static CLIENTS: Clients = Clients(std::sync::Mutex::new(Vec::new()));

impl Clients {
    fn of(
        &self,
        addr: SocketAddr,
        source: Option<std::net::IpAddr>,
    ) -> std::io::Result<reqwest::blocking::Client> {
        let mut clients = self.0.lock().unwrap();
        if let Some((_, client)) = clients.iter().find(|(key, _)| *key == (addr, source)) {
            return Ok(client.clone());
        }
        let mut builder = reqwest::blocking::Client::builder()
            // A good client retires an idle connection before the hub's `Keep-Alive:
            // timeout=5` says it may close it.
            .pool_idle_timeout(Duration::from_secs(4))
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .local_address(source);
        if let Some(ca) = https_ca_of(addr) {
            let ca =
                reqwest::Certificate::from_pem(ca.as_bytes()).map_err(std::io::Error::other)?;
            builder = builder
                .tls_built_in_root_certs(false)
                .add_root_certificate(ca);
        }
        // Built on a thread of its own, as it is used (see `request_from`).
        let client = std::thread::scope(|scope| scope.spawn(|| builder.build()).join())
            .expect("the client's thread")
            .map_err(std::io::Error::other)?;
        clients.push(((addr, source), client.clone()));
        Ok(client)
    }

    /// The hub at `addr` changed (gone, or HTTPS now): its clients are made again.
    fn forget(&self, addr: SocketAddr) {
        self.0.lock().unwrap().retain(|((a, _), _)| *a != addr);
    }
}

pub fn http_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let (status, body) = http_get(addr, path).expect("HTTP request");
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// `method path` with `login` (an arbiter's own, or any token) as the bearer, as JSON:
/// status and body.
pub fn as_login(
    http: SocketAddr,
    login: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let bearer = format!("Bearer {login}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, answer) = stranger_request(http, method, path, &headers, body)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (status, answer)
}
