//! ntfy's own client libraries on the hub, as an arbiter's phone or a home-automation
//! bridge uses them: aiontfy (Home Assistant's; WebSocket only, `tests/phone/aiontfy_phone.py`),
//! python-ntfy (polls the JSON stream) and a JSON-stream phone written from ntfy's
//! documentation (`tests/phone/ntfy_phone.py`). A flag fall (6.9) and an illegal move
//! (7.5.5) reach each of them; aiontfy's *Acknowledge* acknowledges in the arbiter's name;
//! a priority filter keeps only what it asks for; a poll without `since` returns what is
//! held; every refusal and every path the hub does not serve answers ntfy's JSON error,
//! which the clients read as the error ntfy's code names.

use crate::support;

use std::time::Duration;

use serde_json::{json, Value};
use support::board::{Incident, TestBoard};
use support::process::phone::wall_ns;
use support::{http_json, http_request, Hub, NtfyPhone};

const CONFIG: &str = r#"
[event]
time_control = "900+10"

[[arbiters]]
name = "IA Eva"
chief = true
"#;

/// Waits on `phone` for the message of `incident` on `board`; it and its delay in ms
/// after `sent_ns`.
async fn notified(
    phone: &mut NtfyPhone,
    board: u16,
    incident: Incident,
    sent_ns: u128,
) -> (Value, f64) {
    let place = format!("Board {board} ");
    let (message, at) = phone
        .wait_event(Duration::from_secs(5), |e| {
            let title = e["title"].as_str().unwrap_or_default();
            e["event"] == "message"
                && title.starts_with(&place)
                && title.contains(incident.article())
        })
        .await;
    (message, (at.saturating_sub(sent_ns)) as f64 / 1e6)
}

/// A GET with the phone's token: the status and the body.
fn get_with_token(hub: &Hub, token: &str, path: &str) -> (u16, String) {
    let auth = format!("Bearer {token}");
    let (status, _, body) = http_request(
        &hub.web,
        "GET",
        path,
        &[("Authorization", auth.as_str())],
        "",
    )
    .unwrap();
    (status, body)
}

/// [`get_with_token`], the body as JSON.
fn with_token(hub: &Hub, token: &str, path: &str) -> (u16, Value) {
    let (status, body) = get_with_token(hub, token, path);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// The lines of a JSON stream's answer.
fn lines(hub: &Hub, token: &str, path: &str) -> Vec<Value> {
    let (status, body) = get_with_token(hub, token, path);
    assert_eq!(status, 200, "{path}: {body}");
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// python-ntfy's `get_cached_messages(since=None)`: a poll without `since`.
fn python_ntfy_poll(ntfy: &Value) -> Vec<Value> {
    let script = "import json, sys\n\
                  from python_ntfy import NtfyClient\n\
                  client = NtfyClient(sys.argv[2], sys.argv[1], auth=sys.argv[3])\n\
                  print(json.dumps(client.get_cached_messages(since=None)))";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(["server", "topic", "token"].map(|f| ntfy[f].as_str().unwrap()))
        .output()
        .expect("python3 with python-ntfy (.ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ntfys_own_clients_get_alerts_over_websocket_and_json_and_read_every_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(dir.path(), CONFIG);
    let answer = hub.enrol_arbiter_in("IA Eva", &[]);
    let ntfy = answer["phone"]["ntfy"].clone();
    let token = ntfy["token"].as_str().unwrap().to_owned();
    let topic = ntfy["topic"].as_str().unwrap().to_owned();

    let mut websocket = NtfyPhone::start_websocket(&ntfy, None);
    let mut urgent_only = NtfyPhone::start_websocket(&ntfy, Some("5"));
    let mut stream = NtfyPhone::start(&ntfy, None);
    let mut stranger = NtfyPhone::start_websocket(
        &json!({"server": ntfy["server"], "topic": topic, "token": "tk_not_a_phone"}),
        None,
    );
    for phone in [&mut websocket, &mut urgent_only, &mut stream] {
        phone
            .wait_event(Duration::from_secs(10), |e| e["event"] == "open")
            .await;
    }
    // A wrong token: aiontfy reads ntfy's 40101, not a connection error.
    let refused = stranger
        .wait_from(0, Duration::from_secs(10), |l| l.get("refused").is_some())
        .await;
    assert_eq!(stranger.seen[refused]["code"], 40101, "{:?}", stranger.seen);
    stranger.stop();

    let mut delays = Vec::new();
    let mut sequences = Vec::new();
    let mut boards = Vec::new();
    for (n, incident) in [(1, Incident::FlagFall), (2, Incident::IllegalMove)] {
        let enrolled = hub.enrol(&format!("board-{n}"), n, dir.path());
        let session = support::board::node_session(port, &enrolled).await;
        let mut board = TestBoard::start(n, session, &enrolled).await;
        let sent = incident.cause(&mut board).await;
        let sent_ns = wall_ns() - sent.elapsed().as_nanos();
        boards.push(board);
        let (over_ws, ws_ms) = notified(&mut websocket, n, incident, sent_ns).await;
        let (over_json, json_ms) = notified(&mut stream, n, incident, sent_ns).await;
        let (urgent, _) = notified(&mut urgent_only, n, incident, sent_ns).await;
        assert_eq!(over_ws["priority"], 5, "{over_ws}");
        for other in [&over_json, &urgent] {
            assert_eq!(other["id"], over_ws["id"]);
            assert_eq!(other["message"], over_ws["message"]);
        }
        println!("{} on board {n}: WebSocket (aiontfy) {ws_ms:.1} ms, JSON stream {json_ms:.1} ms after the board's message", incident.kind());
        delays.extend([ws_ms, json_ms]);
        sequences.push(over_ws["sequence_id"].as_str().unwrap().to_owned());
    }
    let slowest = delays.iter().copied().fold(0.0, f64::max);
    println!("slowest of {} deliveries: {slowest:.1} ms", delays.len());
    assert!(
        slowest < 2000.0,
        "an alert took {slowest} ms to reach a phone"
    );

    // aiontfy's Acknowledge: the app's request, taken in the arbiter's name.
    let flag = &sequences[0];
    let (message, _) = websocket
        .wait_event(Duration::from_secs(1), |e| {
            e["sequence_id"] == flag.as_str()
        })
        .await;
    let (status, body) = websocket
        .tap(message["id"].as_str().unwrap(), "Acknowledge")
        .await;
    assert_eq!(status, 200, "{body}");
    let id = flag.trim_start_matches("alert-");
    let alert = http_json(&hub.web, &format!("/api/alerts/{id}"));
    assert_eq!(alert["acknowledged"]["by"], "IA Eva", "{alert}");
    // Handled: shown at priority 1 and cleared on every phone.
    stream
        .wait_event(Duration::from_secs(5), |e| {
            e["sequence_id"] == flag.as_str() && e["event"] == "message_clear"
        })
        .await;
    let (handled, _) = stream
        .wait_event(Duration::from_secs(1), |e| {
            e["sequence_id"] == flag.as_str() && e["priority"] == 1
        })
        .await;
    urgent_only
        .wait_event(Duration::from_secs(5), |e| {
            e["sequence_id"] == flag.as_str() && e["event"] == "message_clear"
        })
        .await;
    urgent_only.settle(Duration::from_millis(300)).await;
    assert!(
        urgent_only
            .notifications()
            .iter()
            .all(|e| e["event"] == "message_clear" || e["priority"] == 5),
        "priority=5 lets only urgent messages through: {:?}",
        urgent_only.notifications()
    );

    // A poll without `since` answers what is held, as ntfy does (python-ntfy's own call).
    let held = python_ntfy_poll(&ntfy);
    for sequence in &sequences {
        assert!(
            held.iter()
                .any(|m| m["event"] == "message" && m["sequence_id"] == sequence.as_str()),
            "{sequence} in the poll: {held:?}"
        );
    }
    // A poll's filter: priority 1 is the handled flag fall alone.
    let low = lines(&hub, &token, &format!("/{topic}/json?poll=1&p=min"));
    let messages: Vec<&Value> = low.iter().filter(|m| m["event"] == "message").collect();
    assert_eq!(messages.len(), 1, "{low:?}");
    assert_eq!(messages[0]["id"], handled["id"]);
    let tagged = lines(
        &hub,
        &token,
        &format!("/{topic}/json?poll=1&tags=rotating_light"),
    );
    assert!(tagged
        .iter()
        .filter(|m| m["event"] == "message")
        .all(|m| m["priority"] == 5));

    // ntfy's errors, by ntfy's codes, and nothing more in the body.
    for (path, code, http) in [
        (format!("/{topic}/json?since=yesterday"), 40008, 400),
        (format!("/{topic}/json?poll=1&priority=loud"), 40007, 400),
        (format!("/{topic}/ws"), 40016, 400),
        (format!("/{topic}/raw"), 40401, 404),
        ("/v1/account".to_owned(), 40401, 404),
    ] {
        let (status, body) = with_token(&hub, &token, &path);
        assert_eq!(
            (status, &body["code"], &body["http"]),
            (http, &json!(code), &json!(http)),
            "{path}: {body}"
        );
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["code", "error", "http"], "{path}: {body}");
    }
    let asked = websocket.ask_stats().await;
    assert_eq!(asked["stats"], "NtfyNotFoundPageError", "{asked}");
    assert_eq!(asked["code"], 40401);
    let (status, health) = with_token(&hub, "", "/v1/health");
    assert_eq!((status, health), (200, json!({"healthy": true})));
}
