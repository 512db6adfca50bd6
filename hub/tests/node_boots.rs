//! A node's downlinks are bound to its boot (protocol 3): every uplink frame carries the boot
//! the node drew when it started, every downlink's tag covers the boot of the node it is for.
//! Real processes: `board-node replay`, the hub, Mosquitto as `deploy/mosquitto/` ships it
//! or the embedded broker.
//!
//! - A downlink sealed for the node's previous boot (a `ContinueAt` that would renumber its
//!   events, an `Ack` past what the hub has), played to it after a reboot by a client with
//!   the hub's login, is refused: the node renumbers and forgets nothing.
//! - A node rebooted with more than a window of unacknowledged events (its `Hello` behind
//!   them) reconnects and delivers everything: the hub learns the new boot from the first
//!   frame it resends.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use link::{self, BrokerAddr, LinkEvent, LinkOptions};
use protocol::seal::{self, Boot, NodeKey};
use protocol::{identity, topic, BoardNo, Downlink, DownlinkBody, Seq};
use rumqttc::QoS;
use support::{http_json, Broker, Hub, Mosquitto, Node, Replay};

/// The boots seen in board 1's uplink frames, in order of first sight.
type Boots = Arc<Mutex<Vec<Boot>>>;

/// A client with the hub's own login (its password derived from the hall's secret, as the
/// hub derives it): it reads board 1's uplinks, and may publish on its down topic.
async fn hub_twin(port: u16, hall: &NodeKey) -> (rumqttc::AsyncClient, Boots) {
    let mut options = LinkOptions::new("zeitnot-test-twin");
    options.credentials = Some((identity::HUB_USER.to_owned(), identity::hub_password(hall)));
    options.subscribe = vec![topic::uplink("default", BoardNo(1))];
    let (client, mut events) = link::start(&BrokerAddr::plain("127.0.0.1", port), options);
    let boots: Boots = Arc::default();
    let seen = boots.clone();
    let (connected, up) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut connected = Some(connected);
        while let Some(event) = events.recv().await {
            match event {
                LinkEvent::Connected => {
                    if let Some(tx) = connected.take() {
                        let _ = tx.send(());
                    }
                }
                LinkEvent::Message { payload, .. } => {
                    if let Ok(sealed) = seal::open_uplink(&payload) {
                        let mut boots = seen.lock().unwrap();
                        if !boots.contains(&sealed.boot) {
                            boots.push(sealed.boot);
                        }
                    }
                }
                _ => {}
            }
        }
    });
    up.await.unwrap();
    (client, boots)
}

/// Waits until `boots` holds `n` boots.
async fn boots_seen(boots: &Boots, n: usize) -> Vec<Boot> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = boots.lock().unwrap().clone();
        if seen.len() >= n {
            return seen;
        }
        assert!(Instant::now() < deadline, "{n} boots not seen: {seen:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Board 1's last event the hub took (0 before it heard the board).
fn last_seq(hub: &Hub) -> u64 {
    match support::http_get(&hub.web, "/api/boards/1") {
        Ok((200, body)) => serde_json::from_str::<serde_json::Value>(&body).unwrap()["last_seq"]
            .as_u64()
            .unwrap(),
        _ => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downlink_sealed_for_a_previous_boot_is_refused_by_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("hub-data");
    let mut mosquitto = Mosquitto::start(dir.path());
    mosquitto.load_users_from(&data);
    // The technician's copy of the hall's secrets: what the hub's own login derives from.
    let secrets = dir.path().join("hall-secrets.json");
    support::run_hub(&[
        "cluster-secrets".as_ref(),
        "--data".as_ref(),
        data.as_os_str(),
        "--out".as_ref(),
        secrets.as_os_str(),
    ]);
    let secrets: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&secrets).unwrap()).unwrap();
    let hall = NodeKey::parse(secrets["hall_secret"].as_str().unwrap()).unwrap();
    let port = mosquitto.port();
    let hub = Hub::start(
        &data,
        Broker::External { port },
        &dir.path().join("hub.log"),
    );
    let game = Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 2, 30.0);
    let enrolment = hub.enrol("replay-1", 1, dir.path());
    mosquitto.load_users_from_hub(&hub);
    let (twin, boots) = hub_twin(port, &hall).await;
    let mut node = Node::spawn(&game, port, dir.path(), "outbox-1", Some(&enrolment));

    // Boot A: events taken and acknowledged.
    let first = boots_seen(&boots, 1).await[0];
    let deadline = Instant::now() + Duration::from_secs(30);
    while last_seq(&hub) < 20 {
        assert!(Instant::now() < deadline, "the game began");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The node reboots: boot B.
    tokio::task::block_in_place(|| node.kill_and_restart());
    let seen = boots_seen(&boots, 2).await;
    assert_ne!(seen[1], first, "a new boot");
    assert_ne!(seen[1], Boot::NONE);

    // Downlinks the hub would have sealed for boot A, with the node's own key: one that
    // renumbers every unacknowledged event from 1, one that acknowledges past the game.
    let key = enrolment.node_key();
    let replayed = [
        DownlinkBody::ContinueAt { seq: Seq(1) },
        DownlinkBody::Ack {
            up_to_seq: Seq(100_000),
        },
    ];
    for body in replayed {
        let frame = seal::seal_downlink(
            Some(&key),
            "default",
            first,
            &Downlink::new(BoardNo(1), body),
        );
        for _ in 0..3 {
            twin.publish(
                topic::downlink("default", BoardNo(1)),
                QoS::AtLeastOnce,
                false,
                frame.clone(),
            )
            .await
            .unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    let report = tokio::task::spawn_blocking(move || node.finish(Duration::from_secs(90)))
        .await
        .unwrap();
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans, "every move, once");
    assert_eq!(
        detail["last_seq"], report["events"],
        "nothing renumbered: the hub journaled every event under the node's own numbers"
    );
    let alerts = http_json(&hub.web, "/api/alerts?board=1");
    assert!(
        alerts
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["kind"] != "node_gap"),
        "no renumbering the hub had to answer: {alerts}"
    );
    let log = std::fs::read_to_string(dir.path().join("node-1-outbox-1.log")).unwrap_or_default();
    assert!(
        log.contains("for this boot"),
        "the node said why it refused them: {log}"
    );
}

#[test]
fn a_rebooted_node_with_more_than_a_window_unacknowledged_delivers_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, _) = Hub::embedded(dir.path());
    // A long rapid game (225 plies) played in 20 s.
    let game = Replay::new(1, "fide_world_cup_2025_rapid_15+10.pgn", 1, 20.0);
    let mut node = Node::start(&game, &hub, dir.path());
    let deadline = Instant::now() + Duration::from_secs(30);
    while last_seq(&hub) < 10 {
        assert!(Instant::now() < deadline, "the game began");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The hub goes (and the embedded broker with it); the node plays on into its outbox,
    // then reboots with all of it unacknowledged, its new Hello last.
    let taken = last_seq(&hub);
    hub.kill();
    std::thread::sleep(Duration::from_secs(22));
    node.kill_and_restart();
    hub.restart();
    let report = node.finish(Duration::from_secs(90));
    let events = report["events"].as_u64().unwrap();
    assert!(
        events - taken > board_node::delivery::WINDOW,
        "more than a window was unacknowledged at the reboot: {events} events, {taken} taken"
    );
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans, "every move, once");
}
