//! Kept-alive connections: the hub never closes one under a client's request (RFC 9112
//! §9.6). Pollers as a broadcaster's script or lichess's relay poller run them, on raw
//! sockets with a client that does what the hub's `Keep-Alive: timeout=N` asks (retire a
//! connection idle that long) and never retries: a request that meets a closed connection
//! is a failure here, not something to paper over.

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use support::{Hub, Node, Replay};

/// How long the pollers poll.
const POLLING: Duration = Duration::from_secs(180);

/// Four pollers for three minutes, each waiting 0.1 to 15 s between polls (log-uniform: many
/// quick polls on a reused connection, some idle past what the hub announced), and one
/// that polls steadily every 0.1 to 4 s, as a relay poller does, so its connection reaches
/// the hub's age limit: no request sees its connection closed before its answer, every
/// kept-alive answer says how long the connection lives, the aged one ends with a
/// `Connection: close` answer and the hub closing it after, never under a request.
#[test]
fn pollers_on_kept_alive_connections_never_meet_a_closed_one() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    // A game under way for the whole time, so the answers change as a hall's do.
    let game = Replay::new(1, "fide_womens_world_rapid_2024.pgn", 3, 200.0);
    let node = Node::start(&game, &hub, dir.path());

    let seed: u64 = rand::rng().random();
    eprintln!("pollers' seed: {seed}");
    let pollers: Vec<_> = (0..5u64)
        .map(|i| {
            let (http, token) = (hub.http, hub.token.clone());
            let steady = i == 0;
            std::thread::spawn(move || poll(http, &token, seed.wrapping_add(i), steady))
        })
        .collect();
    let idle = idle_connection_is_closed(hub.http, &hub.token);
    let seen: Vec<Polled> = pollers
        .into_iter()
        .map(|p| {
            p.join()
                .unwrap_or_else(|cause| std::panic::resume_unwind(cause))
        })
        .collect();
    drop(node);

    for (i, polled) in seen.iter().enumerate() {
        eprintln!("poller {i}: {polled:?}");
    }
    let failures: Vec<&String> = seen.iter().flat_map(|p| &p.failures).collect();
    assert!(
        failures.is_empty(),
        "requests that met a closed connection or failed: {failures:#?}"
    );
    let requests: usize = seen.iter().map(|p| p.requests).sum();
    let reused: usize = seen.iter().map(|p| p.reused).sum();
    let retired: usize = seen.iter().map(|p| p.retired_idle).sum();
    assert!(requests >= 150, "{requests} requests in 3 minutes");
    assert!(
        reused >= requests / 2,
        "{reused} of {requests} on a reused connection"
    );
    assert!(
        retired >= 3,
        "{retired} connections retired idle as the hub said"
    );
    let steady = &seen[0];
    assert!(
        steady.closed_by_hub_after_last >= 2,
        "the steady poller's connection ended after a `Connection: close` answer at 60 s \
         and 120 s: {steady:?}"
    );
    assert_eq!(
        seen.iter().map(|p| p.announced.clone()).collect::<Vec<_>>(),
        vec![vec!["timeout=5".to_owned()]; seen.len()],
        "every kept-alive answer says how long an idle connection lives"
    );
    assert!(
        idle < Duration::from_secs(11),
        "an idle connection is closed by the hub, {idle:?} after its answer"
    );
}

/// What one poller saw.
#[derive(Debug, Default)]
struct Polled {
    requests: usize,
    /// Requests sent on a connection that had answered before.
    reused: usize,
    /// Connections the poller closed because they had been idle as long as the hub said.
    retired_idle: usize,
    /// Connections the hub closed after an answer that said `Connection: close`.
    closed_by_hub_after_last: usize,
    /// The `Keep-Alive` values the answers carried (distinct).
    announced: Vec<String>,
    statuses: BTreeMap<u16, usize>,
    failures: Vec<String>,
}

/// A kept-alive connection and when it last answered.
struct Kept {
    stream: BufReader<TcpStream>,
    idle_since: Instant,
    idle_for: Duration,
}

fn poll(http: SocketAddr, token: &str, seed: u64, steady: bool) -> Polled {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut polled = Polled::default();
    let mut kept: Option<Kept> = None;
    let end = Instant::now() + POLLING;
    let paths = ["/api/nodes", "/broadcast/round/1/games.pgn"];
    while Instant::now() < end {
        // A good client retires a connection idle as long as the hub said it may be.
        if kept
            .as_ref()
            .is_some_and(|k| k.idle_since.elapsed() >= k.idle_for)
        {
            kept = None;
            polled.retired_idle += 1;
        }
        let reused = kept.is_some();
        let mut connection = match kept.take() {
            Some(k) => k,
            None => match TcpStream::connect(http) {
                Ok(stream) => {
                    stream
                        .set_read_timeout(Some(Duration::from_secs(10)))
                        .unwrap();
                    Kept {
                        stream: BufReader::new(stream),
                        idle_since: Instant::now(),
                        idle_for: Duration::ZERO,
                    }
                }
                Err(e) => {
                    polled.failures.push(format!("connect: {e}"));
                    continue;
                }
            },
        };
        let path = paths[rng.random_range(0..paths.len())];
        polled.requests += 1;
        polled.reused += usize::from(reused);
        let idle = connection.idle_since.elapsed();
        match request(&mut connection.stream, http, path, token) {
            Ok(answer) => {
                *polled.statuses.entry(answer.status).or_default() += 1;
                if answer.status >= 500 {
                    polled
                        .failures
                        .push(format!("GET {path}: {}", answer.status));
                }
                match (answer.header("connection"), answer.header("keep-alive")) {
                    (Some(close), _) if close.eq_ignore_ascii_case("close") => {
                        // The hub's last answer on it: it closes the connection now.
                        let mut rest = Vec::new();
                        match connection.stream.read_to_end(&mut rest) {
                            Ok(_) if rest.is_empty() => polled.closed_by_hub_after_last += 1,
                            other => polled.failures.push(format!(
                                "after `Connection: close` the hub did not close: {other:?}"
                            )),
                        }
                    }
                    (_, Some(keep_alive)) => {
                        if !polled.announced.contains(&keep_alive.to_owned()) {
                            polled.announced.push(keep_alive.to_owned());
                        }
                        connection.idle_for = announced_timeout(keep_alive);
                        connection.idle_since = Instant::now();
                        kept = Some(connection);
                    }
                    _ => polled.failures.push(format!(
                        "GET {path}: an answer that says neither: {answer:?}"
                    )),
                }
            }
            Err(e) => polled.failures.push(format!(
                "GET {path} on a {} connection idle {idle:?}: {e}",
                if reused { "reused" } else { "new" }
            )),
        }
        let wait = if steady {
            rng.random_range(0.1..4.0)
        } else {
            // Log-uniform from 0.1 to 15 s.
            (rng.random_range(0.1f64.ln()..15f64.ln())).exp()
        };
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
    polled
}

/// One request on a connection that stays open and its whole answer; an error if the
/// connection closes before the answer is complete.
fn request(
    stream: &mut BufReader<TcpStream>,
    http: SocketAddr,
    path: &str,
    token: &str,
) -> std::io::Result<Answer> {
    write!(
        stream.get_mut(),
        "GET {path} HTTP/1.1\r\nHost: {http}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )?;
    let mut status_line = String::new();
    if stream.read_line(&mut status_line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the connection closed before any byte of the answer",
        ));
    }
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("a status line: {status_line:?}")))?;
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let answer = Answer { status, headers };
    match answer.header("content-length") {
        Some(length) => {
            let length: usize = length.parse().map_err(std::io::Error::other)?;
            stream.read_exact(&mut vec![0; length])?;
        }
        None if answer.header("transfer-encoding") == Some("chunked") => loop {
            let mut size = String::new();
            stream.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16).map_err(std::io::Error::other)?;
            stream.read_exact(&mut vec![0; size + 2])?;
            if size == 0 {
                break;
            }
        },
        None => {}
    }
    Ok(answer)
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: BTreeMap<String, String>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// `timeout=N` of a `Keep-Alive` header, as a duration.
fn announced_timeout(keep_alive: &str) -> Duration {
    let seconds = keep_alive
        .split(',')
        .find_map(|p| p.trim().strip_prefix("timeout="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("Keep-Alive without a timeout: {keep_alive}"));
    Duration::from_secs(seconds)
}

/// A connection left idle after one answer: how long until the hub closes it (it must, or
/// idle connections would hold the hub's places).
fn idle_connection_is_closed(http: SocketAddr, token: &str) -> Duration {
    let stream = TcpStream::connect(http).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut stream = BufReader::new(stream);
    request(&mut stream, http, "/healthz", token).expect("an answer");
    let answered = Instant::now();
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    assert!(
        matches!(read, Ok(0)),
        "the hub closed the idle connection: {read:?}"
    );
    answered.elapsed()
}
