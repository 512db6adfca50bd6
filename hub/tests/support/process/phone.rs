//! An arbiter's phone: `tests/phone/ntfy_phone.py`, a client of ntfy's subscription protocol
//! written from ntfy's documentation, or `tests/phone/aiontfy_phone.py`, ntfy's WebSocket
//! client library aiontfy; nothing of the hub's; killed when dropped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::mpsc;

/// A phone subscribed to an arbiter's ntfy topic: every line it printed, in order.
pub struct NtfyPhone {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<Value>,
    /// Every line so far: `{"recv_ns", "event"}`, `{"connected"}`, `{"disconnected"}`,
    /// `{"refused"}`, `{"tap", "status", "body"}`.
    pub seen: Vec<Value>,
}

impl NtfyPhone {
    /// A phone subscribed with `ntfy` (`{"server", "topic", "token"}`, as an enrolment
    /// answers) over the JSON stream, resuming after message `since` if given.
    pub fn start(ntfy: &Value, since: Option<&str>) -> NtfyPhone {
        NtfyPhone::spawn("ntfy_phone.py", ntfy, since)
    }

    /// A phone subscribed with `ntfy` over the WebSocket by aiontfy, keeping only the
    /// messages of `priorities` (`"5"`, `"4,5"`) if given.
    pub fn start_websocket(ntfy: &Value, priorities: Option<&str>) -> NtfyPhone {
        NtfyPhone::spawn("aiontfy_phone.py", ntfy, priorities)
    }

    fn spawn(script: &str, ntfy: &Value, extra: Option<&str>) -> NtfyPhone {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/phone")
            .join(script);
        let mut command = Command::new("python3");
        command.arg("-u").arg(&script);
        for field in ["server", "topic", "token"] {
            command.arg(ntfy[field].as_str().expect("a subscription's field"));
        }
        command.args(extra);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning python3 {}: {e}", script.display()));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Kept whatever it is: a test that waits in vain prints it with the rest.
                let value: Value = serde_json::from_str(&line).unwrap_or_else(
                    |e| serde_json::json!({ "not_json": line, "error": e.to_string() }),
                );
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        NtfyPhone {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (up to `within`) for a line `wanted` picks among those not yet waited for past
    /// `from` (an index into `seen`); returns its index.
    pub async fn wait_from(
        &mut self,
        from: usize,
        within: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> usize {
        if let Some(i) = self.seen.iter().skip(from).position(&wanted) {
            return from + i;
        }
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no such line from the phone within {within:?}; it printed {:#?}",
                        self.seen
                    )
                })
                .expect("the phone's output open");
            self.seen.push(line);
            if wanted(self.seen.last().unwrap()) {
                return self.seen.len() - 1;
            }
        }
    }

    /// Waits for an event `wanted` picks; returns it and when it arrived (ns since the epoch).
    pub async fn wait_event(
        &mut self,
        within: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> (Value, u128) {
        let i = self
            .wait_from(0, within, |line| line.get("event").is_some_and(&wanted))
            .await;
        let line = &self.seen[i];
        (
            line["event"].clone(),
            line["recv_ns"].as_u64().unwrap().into(),
        )
    }

    /// Takes what the phone printed meanwhile, waiting `quiet` for more.
    pub async fn settle(&mut self, quiet: Duration) {
        while let Ok(Some(line)) = tokio::time::timeout(quiet, self.lines.recv()).await {
            self.seen.push(line);
        }
    }

    /// The events of the stream (`message`, `message_clear`, `open`, `keepalive`).
    pub fn events(&self) -> impl Iterator<Item = &Value> {
        self.seen.iter().filter_map(|l| l.get("event"))
    }

    /// The messages and clears, in order.
    pub fn notifications(&self) -> Vec<&Value> {
        self.events()
            .filter(|e| e["event"] == "message" || e["event"] == "message_clear")
            .collect()
    }

    /// Taps the `http` button labelled `label` of message `id` as the app does; the status
    /// and body of the hub's answer.
    pub async fn tap(&mut self, id: &str, label: &str) -> (u64, String) {
        writeln!(self.stdin, "tap {id} {label}").expect("the phone's stdin");
        let i = self
            .wait_from(0, Duration::from_secs(10), |l| l["tap"] == id)
            .await;
        let line = self.seen.remove(i);
        (
            line["status"].as_u64().unwrap_or(0),
            line["body"].as_str().unwrap_or("").to_owned(),
        )
    }

    /// Asks the client for a path the hub does not serve (aiontfy's `stats`): what it
    /// raised, `{"stats": <exception>, "code", "http"}`.
    pub async fn ask_stats(&mut self) -> Value {
        writeln!(self.stdin, "stats").expect("the phone's stdin");
        let i = self
            .wait_from(0, Duration::from_secs(10), |l| l.get("stats").is_some())
            .await;
        self.seen.remove(i)
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for NtfyPhone {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Now, in ns since the epoch: the phone's clock.
pub fn wall_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}
