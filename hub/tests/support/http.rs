//! The tests' HTTP client: plain or TLS (the hall CA pinned), as an arbiter (the hub's token)
//! or as a stranger, for the hubs the tests started.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
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

/// A connection to read and write, plain or TLS.
trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

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

/// [`stranger_request`] from `source` (127.0.0.N on loopback), or the default address.
pub fn request_from(
    source: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let mut tcp = match source {
        None => TcpStream::connect_timeout(&addr, Duration::from_secs(2))?,
        Some(source) => {
            let socket = socket2::Socket::new(
                socket2::Domain::for_address(addr),
                socket2::Type::STREAM,
                None,
            )?;
            socket.bind(&SocketAddr::new(source, 0).into())?;
            socket.connect_timeout(&addr.into(), Duration::from_secs(2))?;
            socket.into()
        }
    };
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    // Over TLS where the hub is HTTPS, with its hall CA pinned, as a browser that trusts it.
    let mut tls_stream;
    let stream: &mut dyn ReadWrite = match https_ca_of(addr) {
        None => &mut tcp,
        Some(ca) => {
            let config = link::tls::client_config(ca.as_bytes()).expect("the hall CA");
            let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
            let connection =
                rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
            tls_stream = rustls::StreamOwned::new(connection, tcp);
            &mut tls_stream
        }
    };
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method != "GET" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut response = Vec::new();
    match stream.write_all(request.as_bytes()) {
        Ok(()) => {}
        // A server that refuses a body (413) answers before it has read it and closes: the
        // answer is there to read, as a browser or curl reads it.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            ) => {}
        Err(e) => return Err(e),
    }
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            // The connection reset after the answer came (the body it never read), or a TLS
            // peer closed without its close_notify.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
                ) && !response.is_empty() =>
            {
                break
            }
            Err(e) => return Err(e),
        }
    }
    let response = String::from_utf8_lossy(&response);
    let status = response
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    Ok((status, headers, body.to_owned()))
}

pub fn http_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let (status, body) = http_get(addr, path).expect("HTTP request");
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}
