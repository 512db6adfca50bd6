//! Nothing readable on the wire: with TLS on, a sniffer between a board node and
//! the broker, and between a browser and the page, sees no topic, no password, no key and no
//! token in clear, on the embedded broker and on Mosquitto with the shipped TLS listener;
//! and the games still arrive exactly as their PGN has them. Without TLS the same sniffer
//! reads all of it: the control that shows the sniffer would see what leaked.

use crate::support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use support::sniffer::Sniffer;
use support::{http_json, stranger_request, Broker, Enrolment, Hub, Mosquitto, Node, Replay};

const FILE: &str = "fide_world_cup_2025_blitz_5+3.pgn";

/// The secrets a sniffer must not read: the node's MQTT password and key, the arbiters'
/// token, the topics (MQTT carries them in clear).
fn secrets(hub: &Hub, enrolment: &Enrolment) -> Vec<String> {
    vec![
        protocol::identity::node_password(&enrolment.node_key()),
        enrolment.key.clone(),
        hub.token.clone(),
        "zeitnot/".into(),
    ]
}

/// Plays `replay` through `sniffer` (a relay to the broker) and checks the game on the hub.
fn play_through(
    hub: &Hub,
    replay: &Replay,
    enrolment: &Enrolment,
    broker: &str,
    ca: Option<&Path>,
    dir: &Path,
) {
    let node = Node::spawn_via(replay, broker, ca, dir, "outbox", Some(enrolment));
    let report = node.finish(Duration::from_secs(90));
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, &format!("/api/boards/{}", replay.board));
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, replay.sans, "the game as its PGN has it");
}

/// An API request through a sniffer in front of the hub's HTTP port, with the token.
fn api_through(sniffer: &Sniffer, hub: &Hub) -> u16 {
    let bearer = format!("Bearer {}", hub.token);
    // The sniffer's address is another door to the same hub: TLS with the same CA.
    stranger_request(
        &hub.web.through(sniffer.addr),
        "GET",
        "/api/boards/1",
        &[("Authorization", &bearer)],
        "",
    )
    .unwrap()
    .0
}

#[test]
fn on_the_embedded_broker_nothing_crosses_the_wire_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start_with(
        &dir.path().join("data"),
        Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
        vec!["--tls".into(), "on".into()],
    );
    let port = hub.broker_port();
    let enrolment = hub.enrol("replay-1", 1, dir.path());
    let ca = dir.path().join("hall-ca.pem");
    let answer = hub.technician_post(
        "/api/nodes/enrol",
        r#"{"hardware": "replay-2", "board": 2}"#,
    );
    std::fs::write(
        &ca,
        answer["ca"]
            .as_str()
            .expect("the enrolment hands out the CA"),
    )
    .unwrap();
    let broker = SocketAddr::from(([127, 0, 0, 1], port));
    let sniffer = Sniffer::start(broker);
    let replay = Replay::new(1, FILE, 1, 8.0);
    play_through(
        &hub,
        &replay,
        &enrolment,
        &format!("mqtts://{}", sniffer.addr),
        Some(&ca),
        dir.path(),
    );
    let http = Sniffer::start(hub.http);
    assert_eq!(api_through(&http, &hub), 200);
    for secret in secrets(&hub, &enrolment) {
        assert!(!sniffer.saw(&secret), "MQTT: {secret:?} in clear");
        assert!(!http.saw(&secret), "HTTP: {secret:?} in clear");
    }
    assert!(
        sniffer.seen().len() > 10_000,
        "the sniffer saw the game's bytes"
    );
    assert!(!http.saw("\"moves\""), "the board's moves in clear");

    // A node that pins another hall's CA does not talk to this hub at all.
    let elsewhere = tempfile::tempdir().unwrap();
    let other_ca = elsewhere.path().join("other-ca.pem");
    hub::edge::keys::hall_ca::load_or_make(elsewhere.path(), &[]).unwrap();
    std::fs::copy(elsewhere.path().join("hall-ca.pem"), &other_ca).unwrap();
    let wrong = Node::spawn_via(
        &Replay::new(2, FILE, 2, 8.0),
        &format!("mqtts://127.0.0.1:{port}"),
        Some(&other_ca),
        dir.path(),
        "outbox-wrong-ca",
        None,
    );
    std::thread::sleep(Duration::from_secs(3));
    drop(wrong);
    assert_eq!(
        support::http_get(&hub.web, "/api/boards/2").unwrap().0,
        404,
        "nothing from a node that does not trust the hall's CA"
    );
}

#[test]
fn without_tls_the_same_sniffer_reads_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let enrolment = hub.enrol("replay-1", 1, dir.path());
    let sniffer = Sniffer::start(SocketAddr::from(([127, 0, 0, 1], port)));
    let replay = Replay::new(1, FILE, 1, 8.0);
    play_through(
        &hub,
        &replay,
        &enrolment,
        &sniffer.addr.to_string(),
        None,
        dir.path(),
    );
    let http = Sniffer::start(hub.http);
    assert_eq!(api_through(&http, &hub), 200);
    let password = protocol::identity::node_password(&enrolment.node_key());
    assert!(
        sniffer.saw(&password),
        "a plain CONNECT carries the password"
    );
    assert!(sniffer.saw("zeitnot/"), "plain MQTT carries its topics");
    assert!(http.saw(&hub.token), "a plain request carries the token");
}

#[test]
fn on_mosquitto_with_the_shipped_tls_listener_nothing_crosses_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // As the technician sets the hall up: the broker's certificate from the hall CA, the
    // users, then the hub on the broker's TLS listener.
    let mut mosquitto = Mosquitto::start_with(dir.path(), Some(&data));
    let tls = mosquitto.tls_port().expect("its TLS listener");
    mosquitto.load_users_from(&data);
    let hub = Hub::start_with(
        &data,
        Broker::ExternalTls { port: tls },
        &dir.path().join("hub.log"),
        vec!["--tls".into(), "on".into()],
    );
    let enrolment = hub.enrol("replay-1", 1, dir.path());
    mosquitto.load_users_from_hub(&hub);
    let sniffer = Sniffer::start(SocketAddr::from(([127, 0, 0, 1], tls)));
    let ca = data.join("hall-ca.pem");
    let replay = Replay::new(1, FILE, 1, 8.0);
    play_through(
        &hub,
        &replay,
        &enrolment,
        &format!("mqtts://{}", sniffer.addr),
        Some(&ca),
        dir.path(),
    );
    for secret in secrets(&hub, &enrolment) {
        assert!(!sniffer.saw(&secret), "Mosquitto: {secret:?} in clear");
    }
    assert!(
        sniffer.seen().len() > 10_000,
        "the sniffer saw the game's bytes"
    );
}
