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
