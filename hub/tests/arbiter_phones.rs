//! The arbiter's phone is the pager: a hub process with zones and three enrolled arbiters
//! (IA Berg for zone B, FA Lund for zone A, the chief arbiter for the whole hall), each
//! with a phone subscribed over ntfy's protocol by an independent client
//! (`tests/phone/ntfy_phone.py`). A flag fall (6.9), an illegal move (7.5.5) and a stopped
//! clock (6.11.2) each reach the phones of their zone, and only those, within a second of
//! the board event (measured beside an MQTT pager's figure in the same run). Tapping
//! *Acknowledge* as the app does acknowledges in the arbiter's name and clears the other
//! phones' copies; the same button for another alert or with another arbiter's token
//! changes nothing. A phone asleep while the hub is killed (SIGKILL) and restarted gets
//! what it missed and nothing twice; the others reconnect by themselves.

use crate::support;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use link::{self, BrokerAddr, LinkEvent};
use protocol::topic;
use serde_json::Value;
use support::board::{Incident, TestBoard};
use support::process::phone::wall_ns;
use support::{http_json, http_request, Hub, NtfyPhone};
use tokio::sync::mpsc;

const CONFIG: &str = r#"
[event]
time_control = "900+10"

[alerts]
escalate_urgent_s = 600

[[zones]]
name = "A"
boards = ["1-4"]

[[zones]]
name = "B"
boards = ["5-8"]

[[arbiters]]
name = "IA Eva"
chief = true
"#;

/// Enrols `name` for `zones` as the chief arbiter does over HTTP; the answer, also written
/// as the key file `hub pager --key-file` reads.
fn enrol(hub: &Hub, name: &str, zones: &[&str], dir: &Path) -> (Value, PathBuf) {
    let answer = hub.enrol_arbiter_in(name, zones);
    let file = dir.join(format!("arbiter-{}.json", name.replace(' ', "_")));
    std::fs::write(&file, answer.to_string()).unwrap();
    (answer, file)
}

/// An MQTT pager of every zone: each raised alert's id and when it arrived.
async fn pager(hub: &Hub, key_file: &Path) -> mpsc::UnboundedReceiver<(Instant, Value)> {
    let broker = BrokerAddr::plain("127.0.0.1", hub.broker_port());
    let mut options = hub.pager_options(key_file);
    options.subscribe = vec![topic::alerts("default", "+")];
    let (client, mut events) = link::start(&broker, options);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _client = client;
        while let Some(event) = events.recv().await {
            if let LinkEvent::Message { payload, .. } = event {
                let json: Value = serde_json::from_slice(&payload).expect("pager JSON");
                let _ = tx.send((Instant::now(), json));
            }
        }
    });
    rx
}

/// Waits for the pager's `raised` message of `kind` on `board`.
async fn paged(
    rx: &mut mpsc::UnboundedReceiver<(Instant, Value)>,
    kind: &str,
    board: u16,
) -> (Instant, u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (at, v) = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no {kind} on board {board} at the pager"))
            .unwrap();
        if v["change"] == "raised" && v["kind"] == kind && v["board"] == board {
            return (at, v["id"].as_u64().unwrap());
        }
    }
}

fn sequence(alert: u64) -> String {
    format!("alert-{alert}")
}

/// The phone's `message` for alert `alert` (its first), and when it arrived.
async fn notified(phone: &mut NtfyPhone, alert: u64) -> (Value, u128) {
    let id = sequence(alert);
    phone
        .wait_event(Duration::from_secs(5), move |e| {
            e["event"] == "message" && e["sequence_id"] == id.as_str()
        })
        .await
}

fn percentile(mut ms: Vec<f64>, p: f64) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() - 1) as f64 * p).round() as usize]
}

/// The zone of each alert the hub holds.
fn zones_of_alerts(hub: &Hub) -> BTreeMap<String, String> {
    http_json(&hub.web, "/api/alerts")
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                sequence(a["id"].as_u64().unwrap()),
                a["zone"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The alert as the hub holds it.
fn alert(hub: &Hub, id: u64) -> Value {
    http_json(&hub.web, &format!("/api/alerts/{id}"))
}

/// Sends an `http` action's request as the app would, with `authorization` in place of its
/// own if given, to `url` in place of its own if given.
fn send_action(hub: &Hub, action: &Value, url: Option<&str>, authorization: Option<&str>) -> u16 {
    let url = url.unwrap_or_else(|| action["url"].as_str().unwrap());
    let path = &url[url.find("/api/").unwrap()..];
    let mut headers: Vec<(String, String)> = action["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect();
    if let Some(auth) = authorization {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        headers.push(("Authorization".into(), auth.to_owned()));
    }
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (status, _, _) = http_request(
        &hub.web,
        "POST",
        path,
        &headers,
        action["body"].as_str().unwrap(),
    )
    .unwrap();
    status
}

fn acknowledge_action(message: &Value) -> Value {
    message["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "http" && a["label"] == "Acknowledge")
        .unwrap_or_else(|| panic!("an Acknowledge button in {message}"))
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn alerts_reach_the_right_phones_are_acknowledged_from_them_and_survive_a_hub_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, port) = Hub::configured(dir.path(), CONFIG);
    let (berg, _) = enrol(&hub, "IA Berg", &["B"], dir.path());
    let (lund, _) = enrol(&hub, "FA Lund", &["A"], dir.path());
    let (eva, eva_file) = enrol(&hub, "IA Eva", &[], dir.path());
    let base = format!("http://{}", hub.http);
    let mut topics = HashSet::new();
    for answer in [&berg, &lund, &eva] {
        let phone = &answer["phone"];
        assert_eq!(phone["ntfy"]["server"], base.as_str(), "{phone}");
        let url = phone["url"].as_str().unwrap();
        assert!(url.starts_with(&format!("{base}/phone?token=")), "{url}");
        let topic = phone["ntfy"]["topic"].as_str().unwrap();
        assert!(
            topic.len() <= 64
                && topic
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert!(topics.insert(topic.to_owned()), "a topic of one's own");
        assert!(phone["ntfy"]["token"].as_str().unwrap().len() >= 32);
    }
    // A topic answers only to its own token.
    let other = format!(
        "Bearer {}",
        lund["phone"]["ntfy"]["token"].as_str().unwrap()
    );
    let berg_topic = berg["phone"]["ntfy"]["topic"].as_str().unwrap();
    for (auth, status) in [
        (Some(other.as_str()), 403),
        (None, 401),
        (Some("Bearer tk_guess"), 401),
    ] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let path = format!("/{berg_topic}/json?poll=1&since=all");
        let (got, _, _) = support::stranger_request(&hub.web, "GET", &path, &headers, "").unwrap();
        assert_eq!(got, status, "{auth:?}");
    }

    let mut phones: BTreeMap<&str, NtfyPhone> =
        [("IA Berg", &berg), ("FA Lund", &lund), ("IA Eva", &eva)]
            .into_iter()
            .map(|(name, answer)| (name, NtfyPhone::start(&answer["phone"]["ntfy"], None)))
            .collect();
    for phone in phones.values_mut() {
        phone
            .wait_event(Duration::from_secs(10), |e| e["event"] == "open")
            .await;
    }
    let mut pager = pager(&hub, &eva_file).await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let board = |n: u16| {
        let enrolled = hub.enrol(&format!("board-{n}"), n, dir.path());
        async move {
            let session = support::board::node_session(port, &enrolled).await;
            TestBoard::start(n, session, &enrolled).await
        }
    };
    // Eight incidents, one per board, each waited for on the pager and the phone before
    // the next: board 5 (zone B) a flag, 6 an illegal move, 2 (zone A) a stopped clock, …
    let incidents = [
        (5, Incident::FlagFall, "IA Berg"),
        (6, Incident::IllegalMove, "IA Berg"),
        (2, Incident::PausedClock, "FA Lund"),
        (7, Incident::PausedClock, "IA Berg"),
        (3, Incident::FlagFall, "FA Lund"),
        (4, Incident::IllegalMove, "FA Lund"),
        (8, Incident::FlagFall, "IA Berg"),
        (1, Incident::PausedClock, "FA Lund"),
    ];
    let mut phone_ms = Vec::new();
    let mut pager_ms = Vec::new();
    let mut messages = BTreeMap::new();
    let mut ids = BTreeMap::new();
    let mut boards = Vec::new();
    for (n, incident, owner) in incidents {
        let mut test_board = board(n).await;
        let sent = incident.cause(&mut test_board).await;
        let wall = wall_ns() - sent.elapsed().as_nanos();
        boards.push(test_board);
        let (at_pager, alert_id) = paged(&mut pager, incident.kind(), n).await;
        ids.insert(n, alert_id);
        let (board, article) = (n, incident.article());
        let (message, at) = notified(phones.get_mut(owner).unwrap(), alert_id).await;
        phone_ms.push((at - wall) as f64 / 1e6);
        pager_ms.push((at_pager - sent).as_secs_f64() * 1e3);
        let title = message["title"].as_str().unwrap();
        assert!(
            title.starts_with(&format!("Board {board}")) && title.contains(article),
            "{title}"
        );
        assert_eq!(message["priority"], 5, "urgent rings through: {message}");
        assert!(message["click"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{base}/phone")));
        acknowledge_action(&message);
        // The chief arbiter's phone has every zone's.
        notified(phones.get_mut("IA Eva").unwrap(), alert_id).await;
        messages.insert(alert_id, message);
    }
    let (flag, illegal_id, pause) = (ids[&5], ids[&6], ids[&2]);
    eprintln!(
        "board event → phone (ntfy JSON stream): p50 {:.1} ms, p99 {:.1} ms; → MQTT pager: p50 {:.1} ms, p99 {:.1} ms ({} alerts)",
        percentile(phone_ms.clone(), 0.5),
        percentile(phone_ms.clone(), 0.99),
        percentile(pager_ms.clone(), 0.5),
        percentile(pager_ms.clone(), 0.99),
        phone_ms.len()
    );
    assert!(
        phone_ms.iter().all(|ms| *ms < 1000.0),
        "within a second: {phone_ms:?}"
    );

    // Tap Acknowledge on IA Berg's phone, as the app does.
    let flag_message = &messages[&flag];
    let (status, body) = phones
        .get_mut("IA Berg")
        .unwrap()
        .tap(flag_message["id"].as_str().unwrap(), "Acknowledge")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(alert(&hub, flag)["acknowledged"]["by"], "IA Berg");
    // The chief's copy is cleared.
    let flag_sequence = sequence(flag);
    phones
        .get_mut("IA Eva")
        .unwrap()
        .wait_event(Duration::from_secs(5), |e| {
            e["event"] == "message_clear" && e["sequence_id"] == flag_sequence.as_str()
        })
        .await;

    // The same button for another alert, or with another arbiter's token: nothing changes.
    let flag_ack = acknowledge_action(flag_message);
    let illegal_url = flag_ack["url"]
        .as_str()
        .unwrap()
        .replace(&format!("/{flag}/"), &format!("/{illegal_id}/"));
    assert_eq!(send_action(&hub, &flag_ack, Some(&illegal_url), None), 403);
    let illegal_ack = acknowledge_action(&messages[&illegal_id]);
    assert_eq!(send_action(&hub, &illegal_ack, None, Some(&other)), 403);
    assert_eq!(
        alert(&hub, illegal_id)["state"],
        "raised",
        "nobody acknowledged it"
    );
    assert_eq!(alert(&hub, illegal_id)["acknowledged"], Value::Null);

    // Each phone has only its zones' alerts (the chief every zone's).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let zones = zones_of_alerts(&hub);
    for (name, allowed) in [("IA Berg", &["B"][..]), ("FA Lund", &["A"][..])] {
        let phone = phones.get_mut(name).unwrap();
        phone.settle(Duration::from_millis(200)).await;
        for n in phone.notifications() {
            let zone = &zones[n["sequence_id"].as_str().unwrap()];
            assert!(allowed.contains(&zone.as_str()), "{name}'s phone got {n}");
        }
    }

    // FA Lund's phone sleeps; meanwhile the stopped clock is resolved, and the hub is
    // killed and restarted.
    let lund_phone = phones.get_mut("FA Lund").unwrap();
    let lund_last = lund_phone.notifications().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let lund_before: HashSet<String> = lund_phone
        .notifications()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect();
    lund_phone.stop();
    let (status, _, body) = http_request(
        &hub.web,
        "POST",
        &format!("/api/alerts/{pause}/resolve"),
        &[("Content-Type", "application/json")],
        r#"{"by": "IA Eva", "note": "clock restarted, 2 min to Black (6.11.2)"}"#,
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let pause_sequence = sequence(pause);
    phones
        .get_mut("IA Eva")
        .unwrap()
        .wait_event(Duration::from_secs(5), |e| {
            e["event"] == "message_clear" && e["sequence_id"] == pause_sequence.as_str()
        })
        .await;
    hub.restart();
    let mut lund_phone = NtfyPhone::start(&lund["phone"]["ntfy"], Some(&lund_last));
    let pause_sequence = sequence(pause);
    lund_phone
        .wait_event(Duration::from_secs(10), |e| {
            e["event"] == "message_clear" && e["sequence_id"] == pause_sequence.as_str()
        })
        .await;
    lund_phone.settle(Duration::from_millis(500)).await;
    let missed: Vec<&Value> = lund_phone.notifications();
    assert!(
        missed
            .iter()
            .all(|n| !lund_before.contains(n["id"].as_str().unwrap())),
        "nothing twice: {missed:#?}"
    );
    assert!(
        missed
            .iter()
            .any(|n| n["event"] == "message" && n["sequence_id"] == pause_sequence.as_str()),
        "the resolution, shown as handled: {missed:#?}"
    );

    // The others reconnected by themselves: a change after the restart reaches them once.
    let (status, _, body) = http_request(
        &hub.web,
        "POST",
        &format!("/api/alerts/{illegal_id}/resolve"),
        &[("Content-Type", "application/json")],
        r#"{"by": "IA Eva", "note": "2 min added to White (7.5.5)"}"#,
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let illegal_sequence = sequence(illegal_id);
    for name in ["IA Berg", "IA Eva"] {
        let phone = phones.get_mut(name).unwrap();
        phone
            .wait_event(Duration::from_secs(15), |e| {
                e["event"] == "message_clear" && e["sequence_id"] == illegal_sequence.as_str()
            })
            .await;
        phone.settle(Duration::from_millis(300)).await;
        assert!(
            phone.seen.iter().any(|l| l.get("disconnected").is_some()),
            "{name}'s phone saw the hub go"
        );
        let ids: Vec<&str> = phone
            .notifications()
            .iter()
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(
            ids.len(),
            unique.len(),
            "{name}'s phone got nothing twice: {ids:?}"
        );
    }
}
