//! Arbiter alerts end to end: a hub process with its embedded broker, real board-node
//! processes replaying real rapid games, and boards this test drives itself with the
//! incidents an arbiter must handle: a flag fall (6.9), an illegal move (7.5.5), a paused
//! clock (6.11.2) and a node killed mid-game. A pager subscribed over MQTT must get exactly
//! one alert per incident within a second of the board event; acknowledgement from the
//! pager (MQTT, and the `hub pager` terminal), resolution over HTTP, escalation of what
//! nobody acknowledged, and a SIGKILL of the hub that loses and duplicates nothing.

use crate::support;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hub::core::alerts::{AlertAction, AlertCommand};
use hub::core::ids::AlertId;
use link::{self, BrokerAddr, LinkEvent};
use protocol::topic;
use rumqttc::{AsyncClient, QoS};
use serde_json::Value;
use shakmaty::{Position, Square};
use support::board::TestBoard;
use support::{http_json, http_post, http_request, workspace_bin, Hub, Node, Replay};
use tokio::sync::mpsc;

const CONFIG: &str = r#"
[event]
time_control = "900+10"

[alerts]
escalate_urgent_s = 4
node_silent_s = 3
time_trouble_s = 20

[[zones]]
name = "A"
boards = ["1-4"]

[[zones]]
name = "B"
boards = ["5-8"]

[[arbiters]]
name = "ola"
zones = ["A"]
language = "nb"

[[arbiters]]
name = "eva"
chief = true
"#;

/// A pager of an arbiter: every message on the alert topics, with when it arrived.
struct Pager {
    messages: mpsc::UnboundedReceiver<(Instant, String, Value)>,
    client: AsyncClient,
    seen: Vec<(Instant, String, Value)>,
    /// The arbiter's key, which seals its commands.
    key: protocol::seal::NodeKey,
}

impl Pager {
    /// A pager of arbiter `name`, with the credentials the hub hands out.
    async fn connect(hub: &Hub, name: &str, dir: &std::path::Path) -> Pager {
        let broker = BrokerAddr::plain("127.0.0.1", hub.broker_port());
        let file = hub.enrol_arbiter(name, dir);
        let credentials = hub::cmd::pager::PagerCredentials::read(&file).unwrap();
        let mut options = hub.pager_options(&file);
        options.subscribe = vec![
            topic::alerts("default", "+"),
            topic::open_alerts("default", "+"),
        ];
        let (client, mut events) = link::start(&broker, options);
        let (tx, messages) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let LinkEvent::Message { topic, payload } = event {
                    let json = serde_json::from_slice(&payload).expect("pager JSON");
                    let _ = tx.send((Instant::now(), topic, json));
                }
            }
        });
        Pager {
            messages,
            client,
            seen: Vec::new(),
            key: credentials.key,
        }
    }

    /// Waits (up to `within`) for a change message that `wanted` picks.
    async fn wait_for(
        &mut self,
        within: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> (Instant, Value) {
        if let Some((at, _, v)) = self
            .seen
            .iter()
            .find(|(_, t, v)| !t.ends_with("/open") && wanted(v))
        {
            return (*at, v.clone());
        }
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let next = tokio::time::timeout_at(deadline, self.messages.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no such pager message within {within:?}; saw {:#?}",
                        self.changes()
                    )
                });
            let (at, topic, value) = next.expect("pager link open");
            self.seen.push((at, topic.clone(), value.clone()));
            if !topic.ends_with("/open") && wanted(&value) {
                return (at, value);
            }
        }
    }

    /// Takes whatever arrived meanwhile.
    fn drain(&mut self) {
        while let Ok(m) = self.messages.try_recv() {
            self.seen.push(m);
        }
    }

    fn changes(&self) -> Vec<(String, String, Value, Value)> {
        self.seen
            .iter()
            .filter(|(_, t, _)| !t.ends_with("/open"))
            .map(|(_, t, v)| {
                (
                    t.clone(),
                    v["change"].as_str().unwrap_or("").to_owned(),
                    v["kind"].clone(),
                    v["board"].clone(),
                )
            })
            .collect()
    }

    /// Sends `command` for alert `id`, sealed with the arbiter's key as `hub pager` seals it.
    async fn command(&self, id: u64, command: AlertCommand) {
        let sent_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let payload =
            hub::view::pager::sealed_command(&self.key, "default", AlertId(id), command, sent_ms);
        self.send(payload).await;
    }

    async fn send(&self, payload: Vec<u8>) {
        self.client
            .publish(
                topic::pager_command("default"),
                QoS::AtLeastOnce,
                false,
                payload,
            )
            .await
            .unwrap();
    }
}

fn is(change: &'static str, kind: &'static str, board: u16) -> impl Fn(&Value) -> bool {
    move |v| v["change"] == change && v["kind"] == kind && v["board"] == board
}

fn alerts(hub: &Hub) -> Vec<Value> {
    http_json(&hub.web, "/api/alerts")
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn incidents_reach_the_pager_once_are_handled_and_survive_a_hub_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, port) = Hub::configured(dir.path(), CONFIG);
    let mut pager = Pager::connect(&hub, "eva", dir.path()).await;
    // Real games on boards 1, 3 and 4 (rapid, 15 min + 10 s), 25 s each.
    let file = "fide_world_cup_2025_rapid_15+10.pgn";
    let mut replays: Vec<Node> = [(1, 1), (3, 2), (4, 3)]
        .into_iter()
        .map(|(board, game)| Node::start(&Replay::new(board, file, game, 25.0), &hub, dir.path()))
        .collect();
    // Board 5 (zone B): White's flag falls.
    // Each test board publishes through its own node's login, as real nodes do.
    let board = |n: u16| {
        let enrolled = hub.enrol(&format!("board-{n}"), n, dir.path());
        async move {
            let session = support::board::node_session(port, &enrolled).await;
            TestBoard::start(n, session, &enrolled).await
        }
    };
    let mut b5 = board(5).await;
    b5.play("e2e4").await;
    b5.play("e7e5").await;
    let flag_sent = b5
        .reading(Some(protocol::Color::White), Some(protocol::Color::White))
        .await;
    // Board 6 (zone B): Black moves the king two squares and presses.
    let mut b6 = board(6).await;
    b6.play("e2e4").await;
    let mut illegal = b6.position.board().clone();
    let king = illegal.remove_piece_at(Square::E8).unwrap();
    illegal.set_piece_at(Square::E6, king);
    let illegal_sent = b6.press_with(&illegal).await;
    // Board 2 (zone A): a player stops the clock.
    let mut b2 = board(2).await;
    b2.play("d2d4").await;
    let pause_sent = b2.reading(None, None).await;
    // Board 3's node dies mid-game.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let _ = replays[1].child.kill();
    let killed = Instant::now();

    let second = Duration::from_secs(1);
    let (at, flag) = pager
        .wait_for(Duration::from_secs(5), is("raised", "flag_fall", 5))
        .await;
    let flag_latency = at - flag_sent;
    let (at, illegal) = pager
        .wait_for(Duration::from_secs(5), is("raised", "illegal_move", 6))
        .await;
    let illegal_latency = at - illegal_sent;
    let (at, paused) = pager
        .wait_for(Duration::from_secs(5), is("raised", "clock_paused", 2))
        .await;
    let pause_latency = at - pause_sent;
    let (at, offline) = pager
        .wait_for(Duration::from_secs(10), is("raised", "node_offline", 3))
        .await;
    let offline_after = at - killed;
    eprintln!(
        "board event → pager: flag fall {flag_latency:?}, illegal move {illegal_latency:?}, paused clock {pause_latency:?}; node killed → offline alert {offline_after:?} (silence threshold 3 s)"
    );
    assert!(flag_latency < second && illegal_latency < second && pause_latency < second);
    // Silence counts from the node's last message, shortly before the kill.
    assert!(offline_after >= Duration::from_secs(1) && offline_after < Duration::from_secs(5));

    for (alert, kind, article, zone, to) in [
        (&flag, "flag_fall", "6.9", "B", "eva"),
        (&illegal, "illegal_move", "7.5.5", "B", "eva"),
        (&paused, "clock_paused", "6.11.2", "A", "ola"),
    ] {
        assert_eq!(alert["kind"], kind);
        assert_eq!(alert["article"], article, "{alert}");
        assert_eq!(alert["zone"], zone);
        assert_eq!(alert["to"][0], to);
        assert_eq!(alert["state"], "raised");
        assert!(alert["texts"]["nb"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Bord "));
    }
    assert_eq!(offline["zone"], "A");
    assert_eq!(offline["article"], Value::Null);
    // The pager's topic is the zone's.
    let topic_of = |kind: &str| {
        pager
            .seen
            .iter()
            .find(|(_, _, v)| v["kind"] == kind)
            .map(|(_, t, _)| t.clone())
    };
    assert_eq!(
        topic_of("flag_fall").as_deref(),
        Some("zeitnot/default/alerts/B")
    );
    assert_eq!(
        topic_of("clock_paused").as_deref(),
        Some("zeitnot/default/alerts/A")
    );

    // Acknowledge the flag fall from the pager; resolve the illegal move over HTTP.
    let flag_id = flag["id"].as_u64().unwrap();
    let ack = AlertCommand {
        action: AlertAction::Ack,
        by: "eva".into(),
        note: None,
    };
    pager.command(flag_id, ack.clone()).await;
    // The same acknowledgement in another arbiter's name, sealed with eva's key: refused.
    pager
        .command(
            flag_id,
            AlertCommand {
                by: "ola".into(),
                ..ack
            },
        )
        .await;
    let (_, acked) = pager
        .wait_for(Duration::from_secs(2), move |v| {
            v["id"] == flag_id && v["change"] == "acknowledged"
        })
        .await;
    assert_eq!(acked["acknowledged"]["by"], "eva");
    let illegal_id = illegal["id"].as_u64().unwrap();
    let path = format!("/api/alerts/{illegal_id}/resolve");
    // A page of another site opened on the hall's network cannot resolve it (the open API
    // had no Origin check), and a body past 16 KiB is refused before it is read; the hub's
    // own page, same origin, passes.
    fn from(origin: &str) -> [(&str, &str); 2] {
        [("Content-Type", "application/json"), ("Origin", origin)]
    }
    let mallory = r#"{"by": "mallory"}"#;
    let cross_site = http_request(
        &hub.web,
        "POST",
        &path,
        &from("http://evil.example"),
        mallory,
    );
    assert_eq!(cross_site.unwrap().0, 403);
    let huge = format!(r#"{{"by": "eva", "note": "{}"}}"#, "x".repeat(20_000));
    assert_eq!(http_post(&hub.web, &path, &huge).unwrap().0, 413);
    let own_page = format!("http://{}", hub.http);
    let unknown = http_request(
        &hub.web,
        "POST",
        "/api/alerts/99999/ack",
        &from(&own_page),
        "",
    );
    assert_eq!(unknown.unwrap().0, 404, "the hub's own page passes");
    // A page of another site whose name resolves to the hub (DNS rebinding) sends its own
    // name as the host: refused, whatever it asks.
    let http_port = hub.http.port();
    let rebound = format!("evil.example:{http_port}");
    let read = http_request(&hub.web, "GET", "/api/alerts", &[("Host", &rebound)], "");
    assert_eq!(read.unwrap().0, 421);
    let local = format!("localhost:{http_port}");
    let read = http_request(&hub.web, "GET", "/healthz", &[("Host", &local)], "");
    assert_eq!(read.unwrap().0, 200);
    let (status, body) = http_post(
        &hub.web,
        &path,
        r#"{"by": "eva", "note": "reinstated, 2 min to White"}"#,
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let resolved: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(resolved["state"], "resolved");
    assert_eq!(resolved["resolved"]["by"], "eva");
    // Idempotent: the same again answers the same alert, unchanged.
    let (status, again) = http_post(&hub.web, &path, r#"{"by": "ola"}"#).unwrap();
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), resolved);
    let (status, _) = http_post(&hub.web, "/api/alerts/99999/ack", "").unwrap();
    assert_eq!(status, 404);
    // A bad command from the network is refused and counted.
    pager
        .send(serde_json::to_vec(&serde_json::json!({"id": flag_id, "action": "delete"})).unwrap())
        .await;

    // Nobody acknowledged the paused clock: after 4 s it goes to the chief arbiter.
    let paused_id = paused["id"].as_u64().unwrap();
    let (at, escalated) = pager
        .wait_for(Duration::from_secs(6), move |v| {
            v["id"] == paused_id && v["change"] == "escalated"
        })
        .await;
    assert!(at - pause_sent >= Duration::from_secs(4));
    assert_eq!(escalated["to"], serde_json::json!(["ola", "eva"]));
    assert_ne!(
        pager
            .changes()
            .iter()
            .filter(|(_, c, ..)| c == "escalated")
            .count(),
        0
    );

    // The terminal pager of zone A shows it and acknowledges it, with ola's credentials.
    let ola = hub.enrol_arbiter("ola", dir.path());
    let mut terminal = Command::new(workspace_bin("hub"))
        .args([
            "pager",
            "--zone",
            "A",
            "--broker",
            &format!("127.0.0.1:{port}"),
            "--key-file",
            &ola.display().to_string(),
            "--lang",
            "nb",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(terminal.stdout.take().unwrap());
    let wanted = format!("#{paused_id} ");
    let mut shown = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !shown.starts_with(&wanted) {
        assert!(
            Instant::now() < deadline,
            "the pager never showed alert {paused_id}"
        );
        shown.clear();
        out.read_line(&mut shown).unwrap();
    }
    assert!(shown.contains("clock_paused 6.11.2 [ESCALATED]"), "{shown}");
    let mut norwegian = String::new();
    out.read_line(&mut norwegian).unwrap();
    assert!(
        norwegian.contains("Bord 2: En spiller har stanset klokken."),
        "{norwegian}"
    );
    writeln!(terminal.stdin.as_mut().unwrap(), "a {paused_id}").unwrap();
    let (_, acked) = pager
        .wait_for(Duration::from_secs(3), move |v| {
            v["id"] == paused_id && v["change"] == "acknowledged"
        })
        .await;
    assert_eq!(acked["acknowledged"]["by"], "ola");
    let _ = terminal.kill();
    let _ = terminal.wait();

    // Exactly one alert per incident.
    for s in &mut replays {
        let _ = s.child.wait();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    pager.drain();
    let before = alerts(&hub);
    for (board, kind) in [
        (5, "flag_fall"),
        (6, "illegal_move"),
        (2, "clock_paused"),
        (3, "node_offline"),
    ] {
        let n = before
            .iter()
            .filter(|a| a["board"] == board && a["kind"] == kind)
            .count();
        assert_eq!(n, 1, "{kind} at board {board}: {before:#?}");
    }
    let raised_on_the_wire: Vec<u64> = pager
        .seen
        .iter()
        .filter(|(_, t, v)| !t.ends_with("/open") && v["change"] == "raised")
        .map(|(_, _, v)| v["id"].as_u64().unwrap())
        .collect();
    let unique: HashSet<_> = raised_on_the_wire.iter().collect();
    assert_eq!(
        unique.len(),
        raised_on_the_wire.len(),
        "an alert raised twice on the wire"
    );
    let metrics = support::http_get(&hub.web, "/metrics").unwrap().1;
    assert!(
        metrics.contains("zeitnot_bad_payloads_total{reason=\"pager_command\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("zeitnot_bad_payloads_total{reason=\"unauthenticated\"} 1"),
        "the acknowledgement in ola's name with eva's key: {metrics}"
    );

    // SIGKILL and restart: every alert back as it was, none twice.
    hub.restart();
    let after = alerts(&hub);
    let by_id = |list: &[Value]| -> BTreeMap<u64, Value> {
        list.iter()
            .map(|a| (a["id"].as_u64().unwrap(), a.clone()))
            .collect()
    };
    let (before_ids, after_ids) = (by_id(&before), by_id(&after));
    for (id, alert) in &before_ids {
        assert_eq!(
            after_ids.get(id),
            Some(alert),
            "alert {id} after the restart"
        );
    }
    let incidents: Vec<&Value> = after.iter().map(|a| &a["incident"]).collect();
    let distinct: HashSet<String> = incidents.iter().map(|i| i.to_string()).collect();
    assert_eq!(
        distinct.len(),
        incidents.len(),
        "an incident with two alerts after the restart"
    );
    // A pager that connects now gets the zone's backlog from the retained list.
    let mut late = Pager::connect(&hub, "late", dir.path()).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let open_b: Vec<u64> = loop {
        assert!(
            Instant::now() < deadline,
            "no retained open list for zone B"
        );
        if let Ok(Some((_, topic, list))) =
            tokio::time::timeout(Duration::from_secs(1), late.messages.recv()).await
        {
            if topic == "zeitnot/default/alerts/B/open" {
                break list["alerts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["id"].as_u64().unwrap())
                    .collect();
            }
        }
    };
    let expected_b: Vec<u64> = after
        .iter()
        .filter(|a| a["zone"] == "B" && (a["state"] == "raised" || a["state"] == "acknowledged"))
        .map(|a| a["id"].as_u64().unwrap())
        .collect();
    assert!(
        open_b.contains(&flag_id) && !open_b.contains(&illegal_id),
        "{open_b:?}"
    );
    assert_eq!(
        open_b.iter().collect::<HashSet<_>>(),
        expected_b.iter().collect::<HashSet<_>>()
    );
}
