//! The security review's low findings at the HTTP door (issue 68), tried as it tried them,
//! on raw sockets against a real hub: a `Host` of an IPv6 literal with a name after it
//! (`[::1]evil.example`) was taken as the hub's own, and a WebSocket upgrade from another
//! site's page (an `Origin` not the hub's) was served.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use support::Hub;

/// One raw request on its own connection: the status and the whole answer.
fn raw(http: SocketAddr, request: &str) -> (u16, String) {
    let mut socket = TcpStream::connect(http).unwrap();
    socket.set_nodelay(true).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    socket.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    // The head and what follows until the hub closes or goes quiet.
    while let Ok(n) = socket.read(&mut buf) {
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.len() > 200 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[test]
fn a_host_with_a_name_after_its_ipv6_literal_and_a_cross_site_websocket_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let get = |host: &str| {
        format!("GET /api/rounds HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
    };
    let (status, _) = raw(hub.http, &get("[::1]:8080"));
    assert_eq!(status, 200, "the hub's own IPv6 literal");
    for other in ["[::1]evil.example", "[::1]:evil", "evil.example"] {
        let (status, answer) = raw(hub.http, &get(other));
        assert_eq!(status, 421, "Host: {other}: {answer}");
        assert!(answer.contains("[access] hosts"), "{answer}");
    }

    let upgrade = |origin: Option<&str>| {
        let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
        format!(
            "GET /zeitnot-phone/ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n{origin}\r\n",
            hub.http
        )
    };
    // RFC 6455 §10.2: another site's page is refused before anything else, in ntfy's terms.
    let (status, answer) = raw(hub.http, &upgrade(Some("http://evil.example")));
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("cross-site WebSocket"), "{answer}");
    assert!(answer.contains("\"code\":40301"), "ntfy's error: {answer}");
    // The hub's own page, and an app that sends no Origin, go on to the credential check.
    for origin in [Some(format!("http://{}", hub.http)), None] {
        let (status, answer) = raw(hub.http, &upgrade(origin.as_deref()));
        assert_ne!(status, 403, "{origin:?}: {answer}");
        assert!(!answer.contains("cross-site"), "{origin:?}: {answer}");
    }
}
