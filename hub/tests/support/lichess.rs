//! A stand-in for lichess's broadcast push (no machine here reaches lichess.org): it
//! checks nothing itself, records every request for the test to check.

use std::collections::BTreeMap;
use std::time::Instant;

/// One request a stand-in for lichess received.
#[derive(Debug, Clone)]
pub struct Pushed {
    pub at: Instant,
    pub request_line: String,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    pub body: String,
}

/// A stand-in for lichess's `POST /api/broadcast/round/{id}/push`: it records each request
/// and answers the first with 503 (lichess busy), the others as lichess does.
pub fn stand_in() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<Pushed>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut headers = BTreeMap::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(": ") {
                    headers.insert(k.to_ascii_lowercase(), v.to_owned());
                }
            }
            let length: usize = headers
                .get("content-length")
                .map_or(0, |l| l.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let mut pushes = log.lock().unwrap();
            pushes.push(Pushed {
                at: Instant::now(),
                request_line: request_line.trim_end().to_owned(),
                authorization: headers.get("authorization").cloned(),
                content_type: headers.get("content-type").cloned(),
                body: String::from_utf8(body).unwrap(),
            });
            let response = if pushes.len() == 1 {
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_owned()
            } else {
                let body = r#"{"games":[]}"#;
                format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
            };
            let mut stream = stream;
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (port, received)
}

/// What a stand-in that keeps lichess's rules saw.
#[derive(Debug, Default)]
pub struct Broadcast {
    /// Each lichess round's games, by their `Round` tag, as last pushed.
    pub rounds: BTreeMap<String, BTreeMap<String, String>>,
    /// Every request: when, and its request line.
    pub requests: Vec<(Instant, String)>,
    /// Each `status` a round was marked with, in order: when, round id, status, and whether
    /// every game the round held then had its result.
    pub marks: Vec<(Instant, String, String, bool)>,
    /// When it answered 429.
    pub too_many_at: Option<Instant>,
    /// Broken rules: requests at once, a request within a minute of the 429, more than 100
    /// games, a wrong token or content type.
    pub broken: Vec<String>,
}

/// The `Round` tag of each game of a PGN text, with the game's text.
fn games_by_round(pgn: &str) -> Vec<(String, String)> {
    let mut games: Vec<(String, String)> = Vec::new();
    for line in pgn.split_inclusive('\n') {
        if line.starts_with("[Event ") {
            games.push((String::new(), String::new()));
        }
        let Some((tag, text)) = games.last_mut() else {
            continue;
        };
        if let Some(round) = line
            .strip_prefix("[Round \"")
            .and_then(|l| l.trim_end().strip_suffix("\"]"))
        {
            *tag = round.to_owned();
        }
        text.push_str(line);
    }
    games
}

/// A stand-in for lichess's broadcast API that keeps its rules (lila's `RelayPush` and the
/// API's specification; lichess.org is out of reach here): `POST
/// /api/broadcast/round/{id}/push` with the token, plain-text PGN, at most 100 games a
/// request and 100 a round; `POST /broadcast/round/{id}/edit?patch=1` with `status=…`; one
/// request at a time; it answers its `too_many_at`-th request with 429 (lichess's API: wait
/// a minute), and a request within the minute after it is a broken rule too. A round whose
/// id starts `Sourced` has a source URL: lila refuses every push to it.
pub fn rules_stand_in(
    token: &str,
    too_many_at: usize,
) -> (u16, std::sync::Arc<std::sync::Mutex<Broadcast>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Broadcast::default()));
    let log = seen.clone();
    let in_flight = Arc::new(AtomicUsize::new(0));
    let bearer = format!("Bearer {token}");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (log, in_flight, bearer) = (log.clone(), in_flight.clone(), bearer.clone());
            std::thread::spawn(move || {
                let at = Instant::now();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    return;
                }
                let request_line = request_line.trim_end().to_owned();
                let mut headers = BTreeMap::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        headers.insert(k.to_ascii_lowercase(), v.trim().to_owned());
                    }
                }
                let length: usize = headers
                    .get("content-length")
                    .map_or(0, |l| l.parse().unwrap());
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                let at_once = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                // Held a little, as lichess takes its time: requests at once would overlap.
                std::thread::sleep(std::time::Duration::from_millis(30));
                let (code, answer) = {
                    let mut seen = log.lock().unwrap();
                    seen.requests.push((at, request_line.clone()));
                    if at_once > 1 {
                        seen.broken
                            .push(format!("{at_once} requests at once: {request_line}"));
                    }
                    if let Some(too_many) = seen.too_many_at {
                        if at.duration_since(too_many) < std::time::Duration::from_secs(60) {
                            seen.broken
                                .push(format!("{request_line} within a minute of the 429"));
                        }
                    }
                    if headers.get("authorization") != Some(&bearer) {
                        seen.broken
                            .push(format!("{request_line} without the token"));
                        (401, r#"{"error":"No such token"}"#.to_owned())
                    } else if seen.requests.len() == too_many_at {
                        seen.too_many_at = Some(at);
                        (
                            429,
                            r#"{"error":"Too many requests. Try again later."}"#.to_owned(),
                        )
                    } else {
                        answer_lichess(&mut seen, &request_line, &headers, &body)
                    }
                };
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let reason = match code {
                    200 => "OK",
                    400 => "Bad Request",
                    401 => "Unauthorized",
                    429 => "Too Many Requests",
                    _ => "Not Found",
                };
                let response = format!(
                    "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let mut stream = stream;
                let _ = stream.write_all(response.as_bytes());
            });
        }
    });
    (port, seen)
}

/// A push or an edit, taken as lichess takes it.
fn answer_lichess(
    seen: &mut Broadcast,
    request_line: &str,
    headers: &BTreeMap<String, String>,
    body: &str,
) -> (u16, String) {
    let path = request_line.split(' ').nth(1).unwrap_or("");
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        // lila refuses pushes to a round that polls a source URL; these stand for one.
        ["", "api", "broadcast", "round", id, "push"] if id.starts_with("Sourced") => (
            400,
            r#"{"error":"This broadcast round has a source URL, it cannot be pushed to"}"#.into(),
        ),
        ["", "api", "broadcast", "round", id, "push"] => {
            if !headers
                .get("content-type")
                .is_some_and(|c| c.starts_with("text/plain"))
            {
                seen.broken.push(format!("{request_line}: not text/plain"));
                return (400, r#"{"error":"Content-Type"}"#.into());
            }
            let games = games_by_round(body);
            if games.len() > 100 {
                seen.broken.push(format!(
                    "{request_line}: {} games in a request",
                    games.len()
                ));
                return (400, r#"{"error":"Too many games"}"#.into());
            }
            let round = seen.rounds.entry((*id).to_owned()).or_default();
            for (tag, text) in games {
                round.insert(tag, text);
            }
            if round.len() > 100 {
                let n = round.len();
                seen.broken
                    .push(format!("{request_line}: {n} games in the round"));
                return (400, r#"{"error":"Max 100 games per round"}"#.into());
            }
            (200, r#"{"games":[]}"#.into())
        }
        ["", "broadcast", "round", id, "edit" | "edit?patch=1"] => {
            let id = (*id).to_owned();
            if !path.ends_with("?patch=1") {
                // Without `patch`, lichess's form wants the round's name and the rest.
                return (
                    400,
                    r#"{"error":{"name":["This field is required"]}}"#.into(),
                );
            }
            let Some(status) = body.strip_prefix("status=") else {
                return (400, r#"{"error":"status"}"#.into());
            };
            let all_decided = seen
                .rounds
                .get(&id)
                .is_some_and(|games| games.values().all(|g| !g.contains("[Result \"*\"]")));
            seen.marks
                .push((Instant::now(), id, status.to_owned(), all_decided));
            (200, r#"{"round":{}}"#.into())
        }
        _ => (404, r#"{"error":"Not found"}"#.into()),
    }
}
