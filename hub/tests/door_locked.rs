//! The door is locked by default: a fresh `hub serve` (no token configured) plays a
//! real game while a stranger on the hall's network tries every route, a reverse proxy's
//! loopback request, a login flood, 2,000 idle connections to each port, and while a node's
//! and a pager's logins on the embedded broker subscribe to `zeitnot/#`, retain messages and
//! take each other's client ids. At the end the game equals its PGN, nothing the stranger
//! sent changed anything, the logins read nothing but their own topics, `/healthz` answered
//! throughout and the log stayed under 1 MB.

use crate::support;

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use link::{BrokerAddr, LinkEvent, LinkOptions};
use rumqttc::QoS;
use support::{http_get, http_json, request_from, Hub, Node, Replay, Web, STRANGER};

const FILE: &str = "fide_world_cup_2025_blitz_5+3.pgn";

/// What a stranger tries, as (method, path, body).
const ROUTES: [(&str, &str, &str); 17] = [
    ("GET", "/api/boards", ""),
    ("GET", "/api/broadcast/outlets", ""),
    ("GET", "/api/boards/1", ""),
    ("GET", "/api/alerts", ""),
    ("GET", "/api/nodes", ""),
    ("GET", "/api/time-trouble", ""),
    ("GET", "/api/results.trf", ""),
    ("GET", "/api/rounds/1/boards/1", ""),
    ("GET", "/api/live", ""),
    ("GET", "/api/broker/users", ""),
    ("GET", "/metrics", ""),
    (
        "POST",
        "/api/boards/1/decisions",
        r#"{"arbiter": "stranger", "decision": "result", "result": "0-1", "cause": "agreement"}"#,
    ),
    ("POST", "/api/alerts/1/ack", r#"{"by": "chief"}"#),
    (
        "POST",
        "/api/nodes/bind",
        r#"{"hardware": "x", "board": 1}"#,
    ),
    (
        "POST",
        "/api/nodes/enrol",
        r#"{"hardware": "replay-1", "board": 1}"#,
    ),
    ("POST", "/api/rounds/2/start", r#"{"force": true}"#),
    ("POST", "/api/arbiters/enrol", r#"{"arbiter": "mallory"}"#),
];

/// Every route as a stranger: no credentials; then as a reverse proxy on the hub's machine
/// forwards it (from 127.0.0.1, `X-Forwarded-For`); then with a wrong token.
fn stranger_tries_every_route(web: &Web) {
    let json = ("Content-Type", "application/json");
    for (method, path, body) in ROUTES {
        for extra in [
            None,
            Some(("X-Forwarded-For", "127.0.0.1")),
            Some((
                "Authorization",
                "Bearer 0000000000000000000000000000000000000000",
            )),
        ] {
            let headers: Vec<(&str, &str)> = std::iter::once(json).chain(extra).collect();
            let (status, _, answer) =
                request_from(Some(STRANGER), web, method, path, &headers, body)
                    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
            // 429 once its wrong Bearers slowed the stranger's address (`edge::http::guesses`).
            assert!(
                status == 401 || status == 403 || status == 429,
                "{method} {path} with {extra:?}: {status} {answer}"
            );
        }
    }
}

/// A session of `options` on the embedded broker, connected.
async fn session(
    port: u16,
    options: LinkOptions,
) -> (rumqttc::AsyncClient, tokio::sync::mpsc::Receiver<LinkEvent>) {
    let (client, mut events) = link::start(&BrokerAddr::plain("127.0.0.1", port), options);
    tokio::time::timeout(Duration::from_secs(5), async {
        while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await
    .expect("connected");
    (client, events)
}

/// The topics `events` carried within `within`.
async fn heard(
    events: &mut tokio::sync::mpsc::Receiver<LinkEvent>,
    within: Duration,
) -> Vec<String> {
    let mut topics = Vec::new();
    let _ = tokio::time::timeout(within, async {
        while let Some(event) = events.recv().await {
            if let LinkEvent::Message { topic, .. } = event {
                topics.push(topic);
            }
        }
    })
    .await;
    topics
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stranger_on_the_hall_network_reads_nothing_changes_nothing_and_cannot_take_it_down() {
    // The test holds 4,000 idle sockets of its own.
    let _ = rlimit::increase_nofile_limit(16_384);
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let http = hub.http;
    let web = hub.web.clone();
    let game = Replay::new(1, FILE, 3, 25.0);
    let node_enrolment = hub.enrol("replay-1", 1, dir.path());
    let node = Node::spawn(&game, port, dir.path(), "outbox-1", Some(&node_enrolment));

    // Every route, from loopback as from anywhere.
    let stranger = web.clone();
    tokio::task::spawn_blocking(move || stranger_tries_every_route(&stranger))
        .await
        .unwrap();

    // A login flood: wrong tokens are throttled (429), and counted.
    let flooded = web.clone();
    let flood = tokio::task::spawn_blocking(move || {
        let json = [("Content-Type", "application/json")];
        (0..200)
            .map(|i| {
                let body = format!(r#"{{"token": "guess-{i:016}"}}"#);
                request_from(
                    Some(STRANGER),
                    &flooded,
                    "POST",
                    "/api/session",
                    &json,
                    &body,
                )
                .unwrap()
                .0
            })
            .collect::<Vec<u16>>()
    })
    .await
    .unwrap();
    assert!(flood.iter().all(|s| *s == 401 || *s == 429), "{flood:?}");
    assert!(
        flood.iter().filter(|s| **s == 429).count() >= 150,
        "the flood is throttled: {flood:?}"
    );

    // The broker: a node's login and a pager's login try to read the whole hall, to retain
    // a list where the pagers read theirs, and to take each other's client ids.
    let mut node_options = node_enrolment.node_link();
    node_options.subscribe = vec![
        "zeitnot/#".into(),
        "#".into(),
        "zeitnot/+/board/+/up".into(),
    ];
    let (node_login, mut node_heard) = session(port, node_options).await;
    let mut pager_options = hub.pager_link("mallory", dir.path());
    pager_options.subscribe = vec!["zeitnot/#".into(), "zeitnot/default/board/+/up".into()];
    let (pager_login, mut pager_heard) = session(port, pager_options.clone()).await;
    pager_login
        .publish(
            protocol::topic::open_alerts("default", "A"),
            QoS::AtLeastOnce,
            true,
            r#"{"zone": "A", "open": 0, "alerts": []}"#,
        )
        .await
        .unwrap();
    node_login
        .publish(
            protocol::topic::hub_status("default"),
            QoS::AtLeastOnce,
            true,
            r#"{"journal": "ok"}"#,
        )
        .await
        .unwrap();
    // Another's client id under one's own login is refused at CONNECT.
    let mut stolen = pager_options.clone();
    stolen.client_id = node_enrolment.node_link().client_id;
    let (_thief, mut thief_events) = link::start(&BrokerAddr::plain("127.0.0.1", port), stolen);
    let thief_in = tokio::time::timeout(Duration::from_secs(2), async {
        while !matches!(thief_events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await
    .is_ok();
    assert!(!thief_in, "a pager login took a node's client id");

    // 2,000 idle sockets on each port, opened while the game goes on and held, while
    // /healthz and a new arbiter's connection keep being answered.
    let mqtt_addr = SocketAddr::from(([127, 0, 0, 1], port));
    let started = Instant::now();
    let asked = web.clone();
    let (held, health) = tokio::task::spawn_blocking(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        let mut health = Vec::new();
        for i in 0..2_000 {
            for addr in [http, mqtt_addr] {
                if let Ok(socket) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                    held.push(socket);
                }
            }
            if i % 100 == 0 {
                health.push(http_get(&asked, "/healthz").map(|(s, _)| s).unwrap_or(0));
            }
        }
        for _ in 0..10 {
            health.push(http_get(&asked, "/healthz").map(|(s, _)| s).unwrap_or(0));
            std::thread::sleep(Duration::from_millis(200));
        }
        (held, health)
    })
    .await
    .unwrap();
    assert!(
        held.len() >= 3_000,
        "the stranger held {} sockets",
        held.len()
    );
    assert!(health.iter().all(|s| *s == 200), "/healthz: {health:?}");
    println!(
        "{} idle sockets opened and held in {:.1} s; /healthz answered {} times",
        held.len(),
        started.elapsed().as_secs_f64(),
        health.len()
    );
    // An arbiter's pager still gets in while they are held.
    let mut late = hub.pager_link("ola", dir.path());
    late.subscribe = vec![protocol::topic::alerts("default", "+")];
    let (_late, _late_events) = session(port, late).await;

    // The game goes on to its end, every event acknowledged, exactly as its PGN has it.
    let report = tokio::task::spawn_blocking(move || node.finish(Duration::from_secs(120)))
        .await
        .unwrap();
    assert_eq!(report["acked"], report["events"], "{report}");
    drop(held);
    let detail = http_json(&web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans);
    assert!(
        detail["decisions"].as_array().is_none_or(|d| d.is_empty()),
        "no decision by a stranger: {detail}"
    );
    let nodes = http_json(&web, "/api/nodes");
    assert!(
        !nodes.to_string().contains("\"x\""),
        "no binding by a stranger: {nodes}"
    );

    // What the logins heard: nothing of the hall's uplinks, nothing they retained.
    let from_node = heard(&mut node_heard, Duration::from_millis(500)).await;
    let from_pager = heard(&mut pager_heard, Duration::from_millis(500)).await;
    assert!(from_node.is_empty(), "a node login read {from_node:?}");
    assert!(from_pager.is_empty(), "a pager login read {from_pager:?}");
    let mut watcher = hub.pager_link("watcher", dir.path());
    watcher.subscribe = vec![
        protocol::topic::open_alerts("default", "A"),
        protocol::topic::hub_status("default"),
    ];
    let (_watcher, mut watched) = session(port, watcher).await;
    let mut retained = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(event) = watched.recv().await {
            if let LinkEvent::Message { payload, .. } = event {
                retained.push(String::from_utf8_lossy(&payload).into_owned());
            }
        }
    })
    .await;
    assert!(
        retained.iter().all(|m| m.contains("\"sig\"")),
        "only the hub's signed messages are retained: {retained:?}"
    );

    // The stranger's attempts are counted, and the log stayed small.
    let metrics = http_get(&web, "/metrics").unwrap().1;
    // The 200 logins, and each route's wrong Bearer.
    let refused = format!("zeitnot_logins_refused_total {}", 200 + ROUTES.len());
    assert!(metrics.contains(&refused), "{refused}: {metrics}");
    let log = std::fs::metadata(dir.path().join("hub.log")).unwrap().len();
    println!("hub log: {log} bytes");
    assert!(log < 1_000_000, "the log grew to {log} bytes");
}
