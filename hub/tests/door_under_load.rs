//! The HTTP door under load: connections that each sent a whole request and are kept alive
//! (a NAT, a reverse proxy, a stranger's script) fill every place the hub has, and another
//! address still gets in at once; an address past its request budget is told to wait while
//! an arbiter's request from it goes through. As the security review tried it (issue 68),
//! from chosen loopback addresses.

use crate::support;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use hub::edge::http::places::{MAX_CONNECTIONS, PER_CLIENT, REQUEST_BURST};
use support::Hub;

/// A connection from `source` on loopback.
fn connect_from(source: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::new(source, 0).into())?;
    socket.connect_timeout(&to.into(), Duration::from_secs(2))?;
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// `GET path` on a kept-alive `stream`, with a bearer token or none: the status and the
/// head (in lower case), or `None` if the connection closed.
fn get_on(
    stream: &mut TcpStream,
    http: SocketAddr,
    path: &str,
    bearer: Option<&str>,
) -> Option<(u16, String)> {
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {http}\r\n{auth}\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())?;
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    Some((head.get(9..12)?.parse().ok()?, head))
}

fn healthz_on(stream: &mut TcpStream, http: SocketAddr) -> Option<u16> {
    get_on(stream, http, "/healthz", None).map(|(status, _)| status)
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in /metrics"))
}

/// 2,048 connections from eight addresses, each having sent a whole `GET /healthz` and kept
/// alive, fill every place. Another address gets `/healthz` within 1 s, and so does a new
/// connection from a flooding address: each makes room by closing an idle connection of
/// the address that holds the most (fair shares), never one under a request. `/metrics`
/// says how many are open and how many were closed to make room.
#[test]
fn complete_requests_on_every_place_keep_no_other_address_out() {
    let _ = rlimit::increase_nofile_limit(16_384);
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let flooders: Vec<IpAddr> = (0..8)
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 0, 20 + i)))
        .collect();
    assert_eq!(flooders.len() * PER_CLIENT, MAX_CONNECTIONS);
    let mut held = Vec::new();
    for source in &flooders {
        for _ in 0..PER_CLIENT {
            let mut stream = connect_from(*source, hub.http).unwrap();
            assert_eq!(healthz_on(&mut stream, hub.http), Some(200));
            held.push((*source, stream));
        }
    }
    let metrics = support::http_get(&hub.web, "/metrics").unwrap().1;
    assert_eq!(
        metric(&metrics, "zeitnot_http_connections_open "),
        MAX_CONNECTIONS as u64,
        "every place taken (the arbiter's /metrics took one from the heaviest)"
    );

    // Another address, and a new connection from a flooding one: in at once.
    for source in [IpAddr::V4(Ipv4Addr::new(127, 0, 0, 99)), flooders[3]] {
        let asked = Instant::now();
        let mut stream = connect_from(source, hub.http).unwrap();
        assert_eq!(healthz_on(&mut stream, hub.http), Some(200), "{source}");
        let took = asked.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "{source}: /healthz took {took:?}"
        );
        held.push((source, stream));
    }

    // The places stay bounded; each newcomer closed an idle connection to make room.
    let metrics = support::http_get(&hub.web, "/metrics").unwrap().1;
    assert!(metric(&metrics, "zeitnot_http_connections_open ") <= MAX_CONNECTIONS as u64);
    let evicted = metric(&metrics, "zeitnot_http_connections_evicted_total ");
    assert!(evicted >= 2, "{evicted} closed to make room");
    assert_eq!(
        metric(&metrics, "zeitnot_http_connections_refused_total "),
        0
    );
    drop(held);
}

/// One address makes more requests without a credential than its budget allows: past the
/// burst it is answered 429 with `Retry-After`, and an arbiter's request from the same
/// address (a NAT) goes through all the same.
#[test]
fn an_address_past_its_budget_waits_but_an_arbiter_behind_it_gets_in() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 77));
    let mut stream = connect_from(source, hub.http).unwrap();
    let mut answered = 0u32;
    let refusal = loop {
        assert!(
            answered < 20 * REQUEST_BURST,
            "no request refused after {answered}"
        );
        match get_on(&mut stream, hub.http, "/healthz", None) {
            Some((200, _)) => answered += 1,
            Some((429, head)) => break head,
            // A connection's last request (its budget of requests): another one.
            None => stream = connect_from(source, hub.http).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    assert!(
        answered >= REQUEST_BURST,
        "{answered} answered before the first 429"
    );
    assert!(refusal.contains("retry-after: 1"), "{refusal}");
    // At once, from the same address and connection: an arbiter's request goes through.
    let arbiter = get_on(&mut stream, hub.http, "/api/boards", Some(&hub.token));
    assert_eq!(
        arbiter.map(|(s, _)| s),
        Some(200),
        "the arbiter behind the busy address"
    );
    let metrics = support::http_get(&hub.web, "/metrics").unwrap().1;
    assert!(metric(&metrics, "zeitnot_http_requests_over_budget_total ") >= 1);
}
