//! A hall on a shared network takes only what its enrolled nodes seal. Enrolled nodes replay real games on
//! boards 1, 2 and 3 while a stranger and the (enrolled) node of board 3 attack boards 1
//! and 2: forged and replayed uplinks (a flag down, a `Hello` without a clock), forged
//! `Ack`, `ResendFrom` and `ContinueAt` to board 2's node, forged pager commands, and
//! subscriptions to every board's uplinks and downlinks. On the embedded broker and on
//! Mosquitto with the shipped configuration and ACL.
//!
//! At the end: every game's moves are the PGN's, no alert but the technician's
//! `forged_message` came from a forgery, every node exited with all its events acknowledged,
//! the forgeries that reached the hub are counted, and the stranger received nothing.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use link::{self, BrokerAddr, LinkEvent, LinkOptions};
use protocol::seal::{self, NodeKey};
use protocol::{
    topic, BoardNo, ClockReport, Downlink, DownlinkBody, Hello, NodeMs, Seq, Uplink, UplinkBody,
};
use rumqttc::QoS;
use serde_json::Value;
use support::{http_get, http_json, Broker, Hub, Mosquitto, Node, Replay};

const FILE: &str = "fide_world_cup_2025_rapid_15+10.pgn";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Embedded,
    Mosquitto,
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}

/// A client with `options`, and everything it receives, once connected; `None` if the
/// broker does not let it in within 2 s.
async fn connect(
    port: u16,
    options: LinkOptions,
) -> Option<(
    rumqttc::AsyncClient,
    tokio::sync::mpsc::UnboundedReceiver<(String, Vec<u8>)>,
)> {
    let broker = BrokerAddr::plain("127.0.0.1", port);
    let (client, mut events) = link::start(&broker, options);
    let connected = tokio::time::timeout(Duration::from_secs(2), async {
        while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await;
    connected.ok()?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let LinkEvent::Message { topic, payload } = event {
                let _ = tx.send((topic, payload));
            }
        }
    });
    Some((client, rx))
}

/// What the attackers publish at board 1's uplink: a flag down, a hello without a clock, a
/// heartbeat, at sequence numbers around any the node may be at; unsealed and sealed with
/// board 3's key.
fn forged_uplinks(three: &NodeKey) -> Vec<Vec<u8>> {
    let flag = ClockReport {
        white_ms: 0,
        black_ms: 300_000,
        running: Some(protocol::Color::White),
        white_flag: true,
        black_flag: false,
        pressed_by: None,
    };
    let hello = Hello {
        software: "board-node 0.1.0".into(),
        board_hw: "replay-1".into(),
        clock_hw: String::new(),
        highest_seq: Seq(0),
    };
    let mut frames = Vec::new();
    for seq in [1, 2, 3, 10, 40, 80, 120, 160, 200] {
        for body in [
            UplinkBody::Clock(flag),
            UplinkBody::Hello(hello.clone()),
            UplinkBody::Heartbeat,
        ] {
            let event = Uplink::new(BoardNo(1), Seq(seq), NodeMs(seq * 1000), body);
            frames.push(seal::seal_uplink(None, "default", seal::Boot(1), &event));
            frames.push(seal::seal_uplink(
                Some(three),
                "default",
                seal::Boot(1),
                &event,
            ));
        }
    }
    frames
}

/// What the attackers publish at board 2's downlink: an Ack of everything, a resend from the
/// start, a continuation far ahead; unsealed and sealed with board 3's key.
fn forged_downlinks(three: &NodeKey) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for body in [
        DownlinkBody::Ack {
            up_to_seq: Seq(1_000_000),
        },
        DownlinkBody::ResendFrom { seq: Seq(1) },
        DownlinkBody::ContinueAt {
            seq: Seq(1_000_000),
        },
    ] {
        let message = Downlink::new(BoardNo(2), body);
        frames.push(seal::seal_downlink(
            None,
            "default",
            seal::Boot(1),
            &message,
        ));
        frames.push(seal::seal_downlink(
            Some(three),
            "default",
            seal::Boot(1),
            &message,
        ));
    }
    frames
}

/// Pager commands resolving alerts 1 to 5 in the chief arbiter's name: unsealed, and sealed
/// with a key that is not the arbiter's.
fn forged_commands(three: &NodeKey) -> Vec<Vec<u8>> {
    let mut commands = Vec::new();
    for id in 1..=5u64 {
        commands.push(
            serde_json::json!({"id": id, "action": "resolve", "by": "chief", "note": "1-0"})
                .to_string()
                .into_bytes(),
        );
        let command = hub::core::alerts::AlertCommand {
            action: hub::core::alerts::AlertAction::Resolve,
            by: "chief".into(),
            note: Some("1-0".into()),
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        commands.push(hub::view::pager::sealed_command(
            three,
            "default",
            hub::core::ids::AlertId(id),
            command,
            now,
        ));
    }
    commands
}

async fn publish_all(client: &rumqttc::AsyncClient, topic: &str, payloads: &[Vec<u8>]) {
    for payload in payloads {
        client
            .publish(topic, QoS::AtLeastOnce, false, payload.clone())
            .await
            .unwrap();
    }
}

/// Every topic the attackers listen on: every board's uplink and downlink.
fn everything() -> Vec<String> {
    vec![
        "zeitnot/+/board/+/up".into(),
        "zeitnot/+/board/+/down".into(),
    ]
}

async fn a_hall_under_attack(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut mosquitto = (kind == Kind::Mosquitto).then(|| {
        let mut mosquitto = Mosquitto::start(dir.path());
        mosquitto.load_users_from(&data);
        mosquitto
    });
    let broker = match &mosquitto {
        None => Broker::Embedded { port: 0 },
        Some(mosquitto) => Broker::External {
            port: mosquitto.port(),
        },
    };
    let hub = Hub::start(&data, broker, &dir.path().join("hub.log"));
    let port = hub.broker_port();
    let games: Vec<Replay> = (1..=3)
        .map(|board| Replay::new(board, FILE, usize::from(board) + 3, 20.0))
        .collect();
    // Each node enrolled once (enrolling again would give it a new key).
    let enrolments: Vec<support::Enrolment> = games
        .iter()
        .map(|game| hub.enrol(&format!("replay-{}", game.board), game.board, dir.path()))
        .collect();
    let three = enrolments[2].clone();
    if let Some(mosquitto) = &mut mosquitto {
        mosquitto.load_users_from_hub(&hub);
    }

    // The stranger: anonymous, then with a made-up login; on Mosquitto also the public
    // identity, whose password is no secret.
    let mut stranger = LinkOptions::new("spectator-laptop");
    stranger.subscribe = vec!["#".into()];
    assert!(
        connect(port, stranger.clone()).await.is_none(),
        "an anonymous client got in"
    );
    let mut guessing = stranger.clone();
    guessing.credentials = Some(("1".into(), "0".repeat(32)));
    assert!(
        connect(port, guessing).await.is_none(),
        "a guessed node login got in"
    );
    let mut public = stranger.clone();
    public.credentials = Some(("public".into(), "public".into()));
    let public = connect(port, public).await;
    assert_eq!(
        public.is_some(),
        kind == Kind::Mosquitto,
        "the public identity exists on Mosquitto only"
    );

    // Board 3's node, enrolled, turned against boards 1 and 2.
    let mut rogue = three.node_link();
    rogue.subscribe = everything();
    let (rogue, mut rogue_heard) = connect(port, rogue).await.expect("board 3's node gets in");

    let nodes: Vec<Node> = games
        .iter()
        .zip(&enrolments)
        .map(|(g, e)| {
            let outbox = format!("outbox-{}", g.board);
            Node::spawn(g, hub.broker_port(), dir.path(), &outbox, Some(e))
        })
        .collect();
    let key3 = three.node_key();
    let (uplinks, downlinks, commands) = (
        forged_uplinks(&key3),
        forged_downlinks(&key3),
        forged_commands(&key3),
    );
    let pager_topic = topic::pager_command("default");
    let mut public_client = public;
    // While the games are played: a round of forgeries every second, for 8 s; then what
    // the rogue recorded off the uplinks, replayed.
    let mut recorded: Vec<(String, Vec<u8>)> = Vec::new();
    for _ in 0..8 {
        publish_all(&rogue, &topic::uplink("default", BoardNo(1)), &uplinks).await;
        publish_all(&rogue, &topic::downlink("default", BoardNo(2)), &downlinks).await;
        publish_all(&rogue, &pager_topic, &commands).await;
        if let Some((client, _)) = &public_client {
            publish_all(client, &topic::uplink("default", BoardNo(1)), &uplinks).await;
            publish_all(client, &topic::downlink("default", BoardNo(2)), &downlinks).await;
            publish_all(client, &pager_topic, &commands).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        while let Ok(heard) = rogue_heard.try_recv() {
            recorded.push(heard);
        }
    }
    for (topic, payload) in &recorded {
        if !topic.ends_with("/board/3/up") && !topic.ends_with("/board/3/down") {
            rogue
                .publish(topic, QoS::AtLeastOnce, false, payload.clone())
                .await
                .unwrap();
        }
    }

    // Every node finishes its game, every event acknowledged by the hub itself.
    let reports = tokio::task::spawn_blocking(move || {
        nodes
            .into_iter()
            .map(|node| node.finish(Duration::from_secs(90)))
            .collect::<Vec<Value>>()
    })
    .await
    .unwrap();
    for report in &reports {
        assert_eq!(report["acked"], report["events"], "{kind:?}: {report}");
    }
    for (game, report) in games.iter().zip(&reports) {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", game.board));
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, game.sans, "{kind:?}: board {} whole", game.board);
        assert_eq!(detail["last_seq"], report["events"], "{kind:?}");
        assert_eq!(
            detail["events_accepted"], report["events"],
            "{kind:?}: board {}: nothing accepted but the node's own events",
            game.board
        );
    }

    // No alert came from a forgery: none of the kinds a forged flag, hello, continuation or
    // resend would raise (the games' own time trouble is theirs, the same on both brokers);
    // the technician's alert about the forgeries where they reached the hub. No alert was
    // resolved by a forged command.
    let alerts = http_json(&hub.web, "/api/alerts");
    let mut kinds: BTreeMap<(u64, String), usize> = BTreeMap::new();
    for alert in alerts.as_array().unwrap() {
        let board = alert["board"].as_u64().unwrap_or(0);
        *kinds
            .entry((board, alert["kind"].as_str().unwrap().to_owned()))
            .or_default() += 1;
        assert_ne!(
            alert["resolved"]["by"], "chief",
            "{kind:?}: a forged command resolved {alert:#}"
        );
    }
    let forged_at_one = kinds.remove(&(1, "forged_message".into()));
    kinds.remove(&(2, "forged_message".into()));
    let from_forgeries = [
        "flag_fall",
        "both_flags",
        "node_gap",
        "node_offline",
        "clock_silent",
        "out_of_sync",
        "illegal_move",
        "press_without_move",
        "clock_set_wrong",
        "clock_paused",
        "forged_message",
    ];
    assert!(
        kinds
            .keys()
            .all(|(_, k)| !from_forgeries.contains(&k.as_str())),
        "{kind:?}: alerts from forgeries: {kinds:?}"
    );
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    let refused = metric(
        &metrics,
        "zeitnot_bad_payloads_total{reason=\"unauthenticated\"}",
    );
    // Both brokers' ACLs (the embedded broker's `edge::mqtt::topic_acl`, Mosquitto's shipped file)
    // keep the rogue node and the public reader off others' topics: the forged uplinks never
    // reach the hub; only the pager topic is open to pagers, and neither is a pager.
    assert_eq!(refused, 0, "{kind:?}: {metrics}");
    assert_eq!(forged_at_one, None, "{kind:?}");
    // What the attackers heard: nothing of boards 1 and 2, on either broker.
    let foreign = recorded
        .iter()
        .filter(|(topic, _)| !topic.contains("/board/3/"))
        .count();
    assert_eq!(foreign, 0, "{kind:?}: the rogue read other boards");
    if let Some((_, mut heard)) = public_client.take() {
        let mut topics = Vec::new();
        while let Ok((topic, _)) = heard.try_recv() {
            topics.push(topic);
        }
        assert!(
            topics.iter().all(|t| t.contains("/broadcast/")),
            "{kind:?}: the public identity read {topics:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_the_embedded_broker_no_forgery_changes_a_game_or_silences_a_node() {
    a_hall_under_attack(Kind::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_mosquitto_with_the_shipped_acl_no_forgery_reaches_anyone() {
    a_hall_under_attack(Kind::Mosquitto).await;
}

/// Only the hub speaks as the hub: where the broker holds no login to its topics (an open
/// hall's embedded broker lets anyone in and publish anything; so would a broker without
/// an ACL) a client overwrites a zone's retained list of open alerts with one of its own.
/// The terminal pager, holding the hub's public key from its arbiter's key file, shows the
/// hub's signed lists and refuses the forged one.
#[test]
fn a_pager_shows_only_what_the_hub_signed() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(
        dir.path(),
        "[access]\nopen_hall = true\n\n\
         [[zones]]\nname = \"A\"\nboards = [\"1-10\"]\n\n\
         [[arbiters]]\nname = \"ola\"\nzones = [\"A\"]\n",
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let forger = runtime.block_on(async {
        let (client, _heard) = connect(port, hub.pager_link("mallory", dir.path()))
            .await
            .expect("a pager login gets in");
        let forged = r#"{"zone": "Z", "at": 1, "open": 1, "alerts": [{"id": 999, "board": 44,
            "zone": "Z", "kind": "flag_fall", "severity": "urgent", "article": "6.9",
            "state": "raised", "raised_at": 1, "escalated_at": null, "acknowledged": null,
            "texts": {"en": {"text": "Board 44: FORGED flag", "action": "run"}}}]}"#;
        client
            .publish(
                topic::open_alerts("default", "Z"),
                QoS::AtLeastOnce,
                true,
                forged,
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        client
    });
    let ola = hub.enrol_arbiter("ola", dir.path());
    let pager = support::TerminalPager::all_zones(port, &ola);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pager.complaints().contains("not signed by the hub")
        || !pager.shown().contains("open alert")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "stdout: {}\nstderr: {}",
            pager.shown(),
            pager.complaints()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(forger);
    let shown = pager.shown();
    assert!(
        !shown.contains("FORGED") && !shown.contains("#999"),
        "{shown}"
    );
    assert!(pager.complaints().contains("zeitnot/default/alerts/Z/open"));
}
