//! The tests' HTTP client (reqwest's blocking one): plain or TLS (the hall CA pinned), as an
//! arbiter (the hub's token) or as a stranger. Each hub the tests start owns its [`Web`]:
//! its address, token and CA, and the clients made for it; nothing is process-wide, so a
//! later hub on the same port is never sent an earlier one's token.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the tests reach one HTTP server: a hub (its arbiters' token, its hall CA when it
/// serves HTTPS) or a server of their own (plain, no token). Clones share its clients.
#[derive(Clone)]
pub struct Web {
    pub addr: SocketAddr,
    token: Option<String>,
    ca: Option<String>,
    clients: Clients,
}

/// One client per source address (`None`: any), its CA pinned.
type Clients = Arc<Mutex<Vec<(Option<IpAddr>, reqwest::blocking::Client)>>>;

impl Web {
    /// A server that is not a hub the tests started (a stand-in, a hub asked as nobody):
    /// plain HTTP, no token.
    pub fn plain(addr: SocketAddr) -> Web {
        Web {
            addr,
            token: None,
            ca: None,
            clients: Arc::default(),
        }
    }

    /// A hub's arbiters' token: the requests below send it unless they say they are a
    /// stranger's.
    pub fn with_token(self, token: &str) -> Web {
        Web {
            token: Some(token.to_owned()),
            ..self
        }
    }

    /// Over TLS, trusting the hall CA `ca` (PEM): a hub that serves HTTPS.
    pub fn with_ca(self, ca: String) -> Web {
        Web {
            ca: Some(ca),
            clients: Arc::default(),
            ..self
        }
    }

    /// The same hub reached at `addr` (a proxy in between): its token and CA.
    pub fn through(&self, addr: SocketAddr) -> Web {
        Web {
            addr,
            clients: Arc::default(),
            ..self.clone()
        }
    }

    /// The arbiters' token, for a hub.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The hall CA (PEM) it pins, for a hub that serves HTTPS.
    pub fn ca(&self) -> Option<&str> {
        self.ca.as_deref()
    }

    /// Its client from `source`, made once.
    fn client(&self, source: Option<IpAddr>) -> std::io::Result<reqwest::blocking::Client> {
        let mut clients = self.clients.lock().unwrap();
        if let Some((_, client)) = clients.iter().find(|(from, _)| *from == source) {
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
        if let Some(ca) = &self.ca {
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
        clients.push((source, client.clone()));
        Ok(client)
    }
}

/// A plain HTTP/1.1 GET; returns the status and the body.
pub fn http_get(web: &Web, path: &str) -> std::io::Result<(u16, String)> {
    http_get_with(web, path, &[]).map(|(status, _, body)| (status, body))
}

/// A plain HTTP/1.1 GET with request headers; returns the status, the response headers
/// (names in lower case) and the body.
pub fn http_get_with(
    web: &Web,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    http_request(web, "GET", path, headers, "")
}

/// A plain HTTP/1.1 POST of a JSON body; returns the status and the body.
pub fn http_post(web: &Web, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let json = [("Content-Type", "application/json")];
    http_request(web, "POST", path, &json, body).map(|(status, _, body)| (status, body))
}

/// One HTTP/1.1 request with headers and a body, as an arbiter (with the hub's token, unless
/// `headers` carry an `Authorization` or a `Cookie` of their own); returns the status, the
/// response headers (names in lower case) and the body.
pub fn http_request(
    web: &Web,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let own = headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie")
    });
    match web.token().filter(|_| !own) {
        Some(token) => {
            let bearer = format!("Bearer {token}");
            let mut with = headers.to_vec();
            with.push(("Authorization", &bearer));
            stranger_request(web, method, path, &with, body)
        }
        None => stranger_request(web, method, path, headers, body),
    }
}

/// One HTTP/1.1 request with exactly the headers given (no token): a stranger's, or one
/// whose credentials are its own.
pub fn stranger_request(
    web: &Web,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    request_from(None, web, method, path, headers, body)
}

/// Where a test's stranger on the hall network connects from: an address of its own on
/// loopback, so that what the hub does to it (throttling wrong tokens) is not done to the
/// arbiters' and the technician's requests from 127.0.0.1.
pub const STRANGER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 66));

/// [`stranger_request`] from `source` (127.0.0.N on loopback), or the default address:
/// reqwest's blocking client, one per hub and source, over TLS with the hall CA pinned where
/// the hub is HTTPS, following no redirect.
pub fn request_from(
    source: Option<IpAddr>,
    web: &Web,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let request = request(source, web, method, path, headers, body)?;
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
    web: &Web,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<reqwest::blocking::Response> {
    request(None, web, "GET", path, headers, "")?
        .send()
        .map_err(std::io::Error::other)
}

/// The request, on the client of `web` from `source`.
fn request(
    source: Option<IpAddr>,
    web: &Web,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<reqwest::blocking::RequestBuilder> {
    let client = web.client(source)?;
    let addr = web.addr;
    let scheme = if web.ca().is_some() { "https" } else { "http" };
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

pub fn http_json(web: &Web, path: &str) -> serde_json::Value {
    let (status, body) = http_get(web, path).expect("HTTP request");
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// `method path` with `login` (an arbiter's own, or any token) as the bearer, as JSON:
/// status and body.
pub fn as_login(web: &Web, login: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let bearer = format!("Bearer {login}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, answer) = stranger_request(web, method, path, &headers, body)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (status, answer)
}
