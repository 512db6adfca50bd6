//! Bad input from the network (a spectator's laptop, a node with other firmware) is counted
//! and refused without disturbing the boards around it; a sequence gap asks for a resend.

use crate::support;

use std::time::Duration;

use link::{self, BrokerAddr, LinkEvent, LinkOptions};
use protocol::seal::{self, NodeKey};
use protocol::{topic, BoardNo, Downlink, DownlinkBody, NodeMs, Seq, Uplink, UplinkBody};
use rumqttc::QoS;
use support::{http_get, http_json, Hub, Node, Replay};

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing in\n{text}"))
}

/// A client on the hall's broker, once connected.
async fn client(
    port: u16,
    options: LinkOptions,
) -> (rumqttc::AsyncClient, tokio::sync::mpsc::Receiver<LinkEvent>) {
    let broker = BrokerAddr::plain("127.0.0.1", port);
    let (client, mut events) = link::start(&broker, options);
    while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    (client, events)
}

/// The hub process's resident memory, from `/proc`.
fn rss_kib(hub: &Hub) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", hub.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Whether a client with `options` gets in within 2 s (the broker refuses strangers at
/// CONNECT: anonymous, a wrong password, another's client id).
async fn gets_in(port: u16, options: LinkOptions) -> bool {
    let broker = BrokerAddr::plain("127.0.0.1", port);
    let (_client, mut events) = link::start(&broker, options);
    tokio::time::timeout(Duration::from_secs(2), async {
        while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await
    .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_is_counted_and_refused_while_a_real_board_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let game = Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 2, 4.0);
    let node = Node::start(&game, &hub, dir.path());

    // A spectator's laptop does not get in at all.
    assert!(!gets_in(port, LinkOptions::new("spectator-laptop")).await);
    // Board 9's node is enrolled and has a firmware bug; its events are sealed with its key.
    let enrolled = hub.enrol("board-9", 9, dir.path());
    let nine = enrolled.node_key();
    let mut options = enrolled.node_link();
    options.subscribe = vec![topic::downlink("default", BoardNo(9))];
    let (client, mut events) = client(port, options).await;
    // The subscription is queued right after the connect; give the broker a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let up = |board: u16| topic::uplink("default", BoardNo(board));
    let sealed = |key: Option<&NodeKey>, board: u16, seq: u64| {
        let event = Uplink::new(BoardNo(board), Seq(seq), NodeMs(0), UplinkBody::Heartbeat);
        seal::seal_uplink(key, "default", seal::Boot(1), &event)
    };
    let event = |board: u16, seq: u64| sealed(Some(&nine), board, seq);
    // Board 8's first event, unsealed: refused for its bounds before any seal is looked at.
    let eight = |node_ms: NodeMs, body: UplinkBody| {
        seal::seal_uplink(
            None,
            "default",
            seal::Boot(1),
            &Uplink::new(BoardNo(8), Seq(1), node_ms, body),
        )
    };
    let mut wrong_version = event(9, 1);
    wrong_version[0] = 7;
    let publishes: Vec<(String, Vec<u8>)> = vec![
        (up(9), b"hello from a laptop".to_vec()),
        (up(9), Vec::new()),
        (up(9), vec![2, 0xff, 0xff]), // version 2, then a truncated body and no tag
        (up(9), wrong_version),
        (up(9), event(8, 1)), // topic says 9, message says 8
        ("zeitnot/default/board/x/up".into(), event(9, 1)), // not a board number
        (up(9), event(9, 5)), // 1..=4 never arrived
        // Not sealed with the key of the board's node: without a key, with another key.
        (up(1), sealed(None, 1, 3)),
        (up(1), sealed(Some(&NodeKey::from_bytes([7; 32])), 1, 3)),
        // Past the protocol's bounds: a node time near u64::MAX (it overflowed the hub's
        // arithmetic), and a Hello the size the broker allows (it was kept and journaled).
        (up(0), event(0, 1)),         // boards are numbered from 1
        (up(65535), event(65535, 1)), // past BoardNo::MAX: each board costs state
        (up(8), eight(NodeMs(u64::MAX - 5), UplinkBody::Heartbeat)),
        (
            up(8),
            eight(
                NodeMs(0),
                UplinkBody::Hello(protocol::Hello {
                    software: "x".repeat(200 * 1024),
                    board_hw: String::new(),
                    clock_hw: String::new(),
                    highest_seq: Seq(0),
                }),
            ),
        ),
    ];
    let rss_before = rss_kib(&hub);
    for (topic, payload) in publishes {
        client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
            .unwrap();
    }
    // A pager command with a note the size the broker allows, unsealed: refused, and never
    // copied into an alert (whose change message would exceed the hub's own packet limit).
    let huge_note = serde_json::json!({"id": 1, "action": "resolve", "by": "x", "note": "n".repeat(200 * 1024)});
    client
        .publish(
            topic::pager_command("default"),
            QoS::AtLeastOnce,
            false,
            serde_json::to_vec(&huge_note).unwrap(),
        )
        .await
        .unwrap();
    // And over HTTP: a name past 64 characters, a body past 16 KiB, a body that is not JSON.
    let http = hub.web.clone();
    let (long_name, big_body, not_json) = tokio::task::spawn_blocking(move || {
        let name = "A".repeat(10_000);
        let decision = format!(
            r#"{{"arbiter": "{name}", "decision": "adjust_time", "side": "white", "ms": 1000, "reason": "clock_correction"}}"#
        );
        let long_name = support::http_post(&http, "/api/boards/1/decisions", &decision).unwrap().0;
        let big = format!(r#"{{"arbiter": "IA", "note": "{}"}}"#, "n".repeat(1 << 20));
        let big_body = support::http_post(&http, "/api/boards/1/decisions", &big).unwrap().0;
        let text = [("Content-Type", "text/plain")];
        let not_json = support::http_request(&http, "POST", "/api/nodes/bind", &text, "{}")
            .unwrap()
            .0;
        (long_name, big_body, not_json)
    })
    .await
    .unwrap();
    assert_eq!((long_name, big_body, not_json), (422, 413, 415));
    // Numbers in paths that are none: 400 in the API's words, the same for every route.
    let http = hub.web.clone();
    let bad_paths = tokio::task::spawn_blocking(move || {
        [
            "/api/boards/x",
            "/api/boards/70000",
            "/api/rounds/0/pairings",
            "/api/rounds/1/boards/x",
            "/broadcast/round/x/games.pgn",
            "/broadcast/round/1/game-x.pgn",
        ]
        .map(|path| (path, support::http_get(&http, path).unwrap()))
    })
    .await
    .unwrap();
    for (path, (status, body)) in bad_paths {
        assert_eq!(status, 400, "{path}: {body}");
        assert!(
            [
                "is not a board number",
                "is not a round number",
                "games.pgn or game-N.pgn"
            ]
            .iter()
            .any(|why| body.contains(why)),
            "{path}: {body}"
        );
    }

    // Board 9 is asked to resend from its first event.
    let resend = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match events.recv().await {
                Some(LinkEvent::Message { payload, .. }) => {
                    let sealed = seal::open_downlink(&payload, seal::Boot(1)).unwrap();
                    assert!(
                        sealed.verify(&nine, "default"),
                        "sealed with the node's key"
                    );
                    return sealed.message;
                }
                Some(_) => continue,
                None => panic!("link closed"),
            }
        }
    })
    .await
    .expect("a ResendFrom within 5 s");
    assert_eq!(
        resend,
        Downlink::new(BoardNo(9), DownlinkBody::ResendFrom { seq: Seq(1) })
    );

    let report = tokio::task::spawn_blocking(move || node.finish(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(report["acked"], report["events"]);

    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    // The empty and the truncated message are undecodable; the laptop's text starts with b'h', which reads as
    // protocol version 104, so it is counted with the wrong-version message.
    assert_eq!(
        metric(
            &metrics,
            "zeitnot_bad_payloads_total{reason=\"undecodable\"}"
        ),
        2
    );
    assert_eq!(
        metric(
            &metrics,
            "zeitnot_bad_payloads_total{reason=\"unknown_version\"}"
        ),
        2
    );
    assert_eq!(
        metric(
            &metrics,
            "zeitnot_bad_payloads_total{reason=\"board_mismatch\"}"
        ),
        1
    );
    // Board 9's login publishes only on its own board's topic (the broker's topic ACL): what
    // it sent to another board, a made-up topic or the pagers' topic never reached the hub.
    for reason in ["foreign_topic", "out_of_range", "unauthenticated"] {
        assert_eq!(
            metric(
                &metrics,
                &format!("zeitnot_bad_payloads_total{{reason=\"{reason}\"}}")
            ),
            0,
            "{reason}: the ACL kept it from the hub"
        );
    }
    assert_eq!(metric(&metrics, "zeitnot_gap_events_total"), 1);
    let rss_after = rss_kib(&hub);
    println!("hub RSS: {rss_before} KiB before the bad input, {rss_after} KiB after");
    assert!(
        rss_after < rss_before + 64 * 1024,
        "the bad input grew the hub by {} KiB",
        rss_after - rss_before
    );
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    assert!(
        !log.contains("lost the broker"),
        "the hub's own session was never cut: {log}"
    );
    assert_eq!(metric(&metrics, "zeitnot_resend_requests_total"), 1);

    // The real board's game is whole; board 9's held-back event was not journaled.
    let detail = http_json(&hub.web, "/api/boards/1");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans);
    assert_eq!(
        http_get(&hub.web, "/api/boards/8").unwrap().0,
        404,
        "nothing past the bounds reached board 8"
    );
    let nine = http_json(&hub.web, "/api/boards/9");
    assert_eq!(nine["last_seq"], 0);
    assert_eq!(http_get(&hub.web, "/api/boards/77").unwrap().0, 404);
    assert_eq!(http_get(&hub.web, "/api/boards/seven").unwrap().0, 400);
}

/// A node on the hall's network publishes `Ack { up_to_seq: 1000000 }` to another playing
/// board's node, again and again. Before, the node forgot every event it held and never sent
/// another (the hub got 14 of a game's 99 moves). Now the node acts only on downlinks sealed
/// with its key (and would refuse an acknowledgement of events it never sent even then): the
/// game reaches the hub whole and every event is acknowledged by the hub itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_ack_makes_no_node_forget_its_events() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let game = Replay::new(2, "fide_womens_world_rapid_2024.pgn", 3, 20.0);
    let node = Node::start(&game, &hub, dir.path());

    // The forger is board 3's node (enrolled; a stranger does not get in at all).
    let three = hub.enrol("replay-3", 3, dir.path());
    let (client, _events) = client(port, three.node_link()).await;
    // It tries the hub's client id, persistent session and all: the broker would hand it the
    // hub's session and cut the hub's. A node's login is held to its own client ids.
    let mut impostor = three.node_link();
    impostor.client_id = "zeitnot-hub-default-0".into();
    impostor.clean_session = false;
    assert!(
        !gets_in(port, impostor).await,
        "a node took the hub's client id"
    );
    let mut anonymous = LinkOptions::new("zeitnot-hub-default");
    anonymous.clean_session = false;
    assert!(!gets_in(port, anonymous).await);
    let forged = seal::seal_downlink(
        None,
        "default",
        seal::Boot(1),
        &Downlink::new(
            BoardNo(2),
            DownlinkBody::Ack {
                up_to_seq: Seq(1_000_000),
            },
        ),
    );
    // While the game is played, whenever a loaded machine begins it: from its first ply on,
    // a forged Ack every 200 ms until twenty have gone or the game is over.
    let ply = || {
        http_json(&hub.web, "/api/boards/2")["ply"]
            .as_u64()
            .unwrap()
    };
    let plies = game.sans.len() as u64;
    let began = std::time::Instant::now() + Duration::from_secs(60);
    while ply() == 0 {
        assert!(
            std::time::Instant::now() < began,
            "the game began within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut forged_during_play = 0;
    while forged_during_play < 20 && ply() < plies {
        client
            .publish(
                topic::downlink("default", BoardNo(2)),
                QoS::AtLeastOnce,
                false,
                forged.clone(),
            )
            .await
            .unwrap();
        forged_during_play += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        forged_during_play >= 5,
        "the forgeries came while the game was played ({forged_during_play} of them)"
    );

    let report = tokio::task::spawn_blocking(move || node.finish(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(report["acked"], report["events"], "{report}");
    let detail = http_json(&hub.web, "/api/boards/2");
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(moves, game.sans, "every move reached the hub");
    assert_eq!(
        detail["last_seq"], report["events"],
        "the hub journaled every event the node numbered"
    );
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    assert!(
        !log.contains("lost the broker"),
        "the hub kept its session: {log}"
    );
}

/// One laptop opens live streams until it is refused: each holds a task and a queue in the
/// hub, so a client gets its share (`edge::http::slots::SPECTATORS_PER_CLIENT`) and a clear 429,
/// a stream it closes frees its slot, and the arbiters' own stream still opens.
#[test]
fn a_client_cannot_open_more_live_streams_than_its_share() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let open_as = |path: &str, auth: &str| {
        let mut stream = std::net::TcpStream::connect(hub.http).unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n{auth}\r\n",
            hub.http
        );
        stream.write_all(request.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        let status: u16 = String::from_utf8_lossy(&head[9..12]).parse().unwrap();
        (status, stream)
    };
    let open = || open_as("/api/public/live", "");
    let mut held = Vec::new();
    for _ in 0..hub::edge::http::slots::SPECTATORS_PER_CLIENT {
        let (status, stream) = open();
        assert_eq!(status, 200);
        held.push(stream);
    }
    assert_eq!(open().0, 429, "one stream past the share");
    let arbiter = format!("Authorization: Bearer {}\r\n", hub.token);
    let (status, _arbiters_stream) = open_as("/api/live", &arbiter);
    assert_eq!(
        status, 200,
        "the arbiters' stream opens when the spectators' share is used up"
    );
    drop(held.pop());
    // The hub sees the closed connection when it next writes to it (a keep-alive at most
    // 15 s later): the slot comes back.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _) = open();
        if status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the slot never came back"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One arbiter's phone token, copied to a script on many addresses, opens live streams
/// until refused: before, it filled all 200 of the arbiters' places and the chief's
/// `/api/live` answered 429. Now the login gets its share (`edge::http::slots::PER_ARBITER`) and a
/// 429 in ntfy's terms, while another arbiter's phone and the chief's page still open.
#[test]
fn one_arbiters_token_fills_neither_the_arbiters_streams_nor_the_chiefs() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let ntfy = |name: &str| {
        let answer = hub.enrol_arbiter_in(name, &[]);
        let ntfy = &answer["phone"]["ntfy"];
        (
            ntfy["topic"].as_str().unwrap().to_owned(),
            ntfy["token"].as_str().unwrap().to_owned(),
        )
    };
    let (berg_topic, berg_token) = ntfy("IA Berg");
    let (dahl_topic, dahl_token) = ntfy("IA Dahl");
    // A stream from 127.0.0.`host`: the status, the start of the answer, and the connection.
    let open_from = |host: u8, path: &str, token: &str| {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let source = std::net::SocketAddr::from(([127, 0, 0, host], 0));
        socket.bind(&source.into()).unwrap();
        socket.connect(&hub.http.into()).unwrap();
        let mut stream: std::net::TcpStream = socket.into();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\r\n",
            hub.http
        );
        stream.write_all(request.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut head = [0u8; 512];
        let n = stream.read(&mut head).unwrap();
        let text = String::from_utf8_lossy(&head[..n]).into_owned();
        let status: u16 = text[9..12].parse().unwrap();
        (status, text, stream)
    };
    let mut held = Vec::new();
    for i in 0..hub::edge::http::slots::PER_ARBITER {
        let (status, text, stream) =
            open_from(10 + i as u8, &format!("/{berg_topic}/json"), &berg_token);
        assert_eq!(status, 200, "{text}");
        held.push(stream);
    }
    let (status, text, _) = open_from(99, &format!("/{berg_topic}/json"), &berg_token);
    assert_eq!(status, 429, "one stream past the login's share: {text}");
    assert!(
        text.contains("\"code\":42903") && text.contains("this login holds"),
        "{text}"
    );
    let (status, text, _dahl) = open_from(100, &format!("/{dahl_topic}/json"), &dahl_token);
    assert_eq!(status, 200, "another arbiter's phone: {text}");
    let (status, text, _chief) = open_from(101, "/api/live", &hub.token);
    assert_eq!(status, 200, "the chief's page: {text}");
}

/// A board node's clock that sends one time an hour ahead (a faulty RTC, a wild NTP answer),
/// sealed and in sequence, while its clock runs: before, the board's "now" moved an hour on
/// for good, so its running clock was counted down to zero and its flag called "probable".
/// Now the step is taken out of the node's times (and the next time, back where it was, is
/// no second step into the past), counted as `node_time`, and shown to the technician.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_time_an_hour_ahead_does_not_move_the_boards_now() {
    const HOUR: u64 = 3_600_000;
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let enrolled = hub.enrol("board-5", 5, dir.path());
    let key = enrolled.node_key();
    let (client, _events) = client(port, enrolled.node_link()).await;
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let clock = |white_ms: u32| {
        UplinkBody::Clock(protocol::ClockReport {
            white_ms,
            black_ms: 300_000,
            running: Some(protocol::Color::White),
            white_flag: false,
            black_flag: false,
            pressed_by: None,
        })
    };
    let hello = UplinkBody::Hello(protocol::Hello {
        software: "board-node test".into(),
        board_hw: "board-5".into(),
        clock_hw: "DGT3000".into(),
        highest_seq: Seq(0),
    });
    // White's clock runs from 5:00; one event, the fourth, is stamped an hour ahead.
    let script = [
        (0, hello),
        (0, clock(300_000)),
        (1_000, UplinkBody::Heartbeat),
        (2_000 + HOUR, UplinkBody::Heartbeat),
        (3_000, clock(297_000)),
        (4_000, UplinkBody::Heartbeat),
    ];
    for (seq, (after_ms, body)) in (1..).zip(script) {
        let wait = (start + after_ms % HOUR).saturating_sub(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64,
        );
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let event = Uplink::new(BoardNo(5), Seq(seq), NodeMs(start + after_ms), body);
        client
            .publish(
                topic::uplink("default", BoardNo(5)),
                QoS::AtLeastOnce,
                false,
                seal::seal_uplink(Some(&key), "default", seal::Boot(1), &event),
            )
            .await
            .unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let detail = loop {
        let detail = http_json(&hub.web, "/api/boards/5");
        if detail["last_seq"] == 6 {
            break detail;
        }
        assert!(std::time::Instant::now() < deadline, "{detail}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let white_ms = detail["clock"]["white_ms"].as_u64().unwrap();
    assert!(
        (280_000..=297_000).contains(&white_ms),
        "White's clock as it ran, not an hour on: {white_ms} ms ({detail})"
    );
    assert_eq!(detail["clock"]["flag_probable"], serde_json::Value::Null);
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    assert_eq!(
        metric(&metrics, "zeitnot_bad_payloads_total{reason=\"node_time\"}"),
        2,
        "the step ahead and the step back to where it was"
    );
    let nodes = http_json(&hub.web, "/api/nodes");
    let stepped = nodes["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "node_clock_stepped")
        .unwrap_or_else(|| panic!("no warning in {nodes}"));
    assert_eq!(
        (stepped["board"].as_u64(), stepped["steps"].as_u64()),
        (Some(5), Some(2))
    );
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    // Taken, not refused: each step logged as such, once each for its source.
    assert_eq!(log.matches("message refused").count(), 0, "{log}");
    assert_eq!(
        log.matches("message taken, its node's clock step taken out")
            .count(),
        2,
        "each step logged, once each for its source: {log}"
    );
}

/// A stranger on the arbiters' address sends request heads and then stalls their bodies
/// (slow POST, on the open login): before, each held its connection for ever, and 256 of them shut the
/// address out of the page, the API and `/healthz`. Now a stalled body is evictable like a
/// silent connection, so the arbiters' requests still get in at once, and it is answered
/// 408 (its connection closed) once its body is late.
#[test]
fn stalled_request_bodies_hold_no_door() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let stalled: Vec<std::net::TcpStream> = (0..hub::edge::http::connections::PER_CLIENT)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(hub.http).unwrap();
            let head = format!(
                "POST /api/session HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"token\":",
                hub.http
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let started = std::time::Instant::now();
    for _ in 0..5 {
        let (status, body) = http_get(&hub.web, "/healthz").unwrap();
        assert_eq!(status, 200, "{body}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the arbiters' address is not shut out: {:?}",
        started.elapsed()
    );
    // Those not evicted are answered 408 once their bodies are late, and closed.
    let late = hub::edge::http::connections::BODY_TIMEOUT + Duration::from_secs(5);
    let mut answered = 0;
    for mut stream in stalled.into_iter().rev().take(8) {
        stream.set_read_timeout(Some(late)).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        if answer.starts_with("HTTP/1.1 408") {
            answered += 1;
        }
    }
    assert!(answered > 0, "no stalled body was answered 408");
}

/// Names come from outside: a pairing file's player with a newline and a forged tag in his
/// name, an arbiter enrolled with a newline, a bidirectional override or as "chief". The
/// feed's tags stay one line each (python-chess and lichess read the tags the hub wrote,
/// not a stranger's), and such arbiters are refused with the reason.
#[test]
fn names_cannot_break_a_pgn_tag_or_pass_for_another() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("round-1.csv"),
        "board,white,black\n1,\"Evil\n[Result \"\"1-0\"\"]\",\"Abc\u{202e}xyz\"\n",
    )
    .unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        "[broadcast]\ndelay_s = 0\n\n[[rounds]]\nnumber = 1\npairings = \"round-1.csv\"\n",
    );
    let (status, feed) = http_get(&hub.web, "/broadcast/round/1/games.pgn").unwrap();
    assert_eq!(status, 200, "{feed}");
    let tags: Vec<&str> = feed.lines().filter(|l| l.starts_with('[')).collect();
    assert!(
        tags.iter().all(|t| t.ends_with("\"]")),
        "every tag on its own line: {feed}"
    );
    assert_eq!(
        tags.iter().filter(|t| t.starts_with("[Result ")).count(),
        1,
        "one Result tag: {feed}"
    );
    assert!(
        feed.contains("[White \"Evil\u{fffd}[Result \\\"1-0\\\"]\"]"),
        "{feed}"
    );
    assert!(!feed.contains('\u{202e}'), "no override: {feed}");
    // The security review's (issue 68): the hub's own names, a zero-width space, a Cyrillic
    // lookalike (Unicode TR 39).
    for name in [
        "IA\nBerg",
        "IA \u{202e}greB",
        "chief",
        "Chief",
        "pairing program",
        "configuration",
        "chi\u{200b}ef",
        "\u{441}hief",
    ] {
        let body = serde_json::json!({ "arbiter": name }).to_string();
        let (status, answer) = support::http_post(&hub.web, "/api/arbiters/enrol", &body).unwrap();
        assert_eq!(status, 400, "{name:?} enrolled: {answer}");
    }
}

/// A stranger repeats a refused request as fast as it can (another host's name): every one
/// is refused and counted, and the log gets a line a second, not one per request (20,000
/// once wrote 4.96 MB of warnings in 0.3 s).
#[test]
fn refusals_repeated_at_will_fill_no_log() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    const TIMES: usize = 2_000;
    let started = std::time::Instant::now();
    for _ in 0..TIMES {
        let mut stream = std::net::TcpStream::connect(hub.http).unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
    }
    let seconds = started.elapsed().as_secs() + 1;
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    assert!(
        metrics.contains(&format!("zeitnot_http_requests_refused_total {TIMES}")),
        "every refusal counted: {metrics}"
    );
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    let lines = log.matches("request for another host refused").count();
    assert!(
        (1..=seconds as usize + 1).contains(&lines),
        "{lines} log lines for {TIMES} refusals in {seconds} s"
    );
}

/// Every answer, pages and API, found or not, carries the security headers: only the hub's
/// own scripts run on its pages, no other site frames them, no type is sniffed, no address
/// leaves as a referrer (a login link's token).
#[test]
fn every_answer_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    for path in [
        "/",
        "/spectator",
        "/phone",
        "/healthz",
        "/api/rounds",
        "/api/nowhere",
    ] {
        let (status, headers, _) =
            support::stranger_request(&hub.web, "GET", path, &[], "").unwrap();
        let csp = headers.get("content-security-policy").unwrap_or_else(|| {
            panic!("{path} ({status}): no Content-Security-Policy: {headers:?}")
        });
        assert!(
            csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{path}: {csp}"
        );
        assert_eq!(
            headers.get("x-content-type-options").map(String::as_str),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            headers.get("referrer-policy").map(String::as_str),
            Some("no-referrer"),
            "{path}"
        );
        assert_eq!(
            headers.get("x-frame-options").map(String::as_str),
            Some("DENY"),
            "{path}"
        );
    }
    // The pages run under that policy as they are: no inline script, style or handler.
    for path in ["/", "/phone"] {
        let (_, _, page) = support::stranger_request(&hub.web, "GET", path, &[], "").unwrap();
        let lower = page.to_lowercase();
        assert!(!lower.contains(" style="), "{path}: an inline style");
        assert!(!lower.contains("<style"), "{path}: an inline style sheet");
        assert!(
            !lower.contains(" onclick=") && !lower.contains(" onload="),
            "{path}: a handler"
        );
        for script in lower.split("<script").skip(1) {
            let tag = script.split('>').next().unwrap();
            assert!(tag.contains("src="), "{path}: an inline script");
        }
    }
}

/// An arbiter's live stream (every move and alert) ends when its login no longer holds:
/// the page's session logged out, the arbiter revoked. Before, both kept streaming for
/// minutes.
#[test]
fn a_live_stream_ends_with_its_login() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::embedded(dir.path());
    let enrolled = hub.enrol_arbiter_in("IA Berg", &[]);
    let login = enrolled["login"].as_str().unwrap().to_owned();
    let open = |path: &str, credential: &str| {
        let mut stream = std::net::TcpStream::connect(hub.http).unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n{credential}\r\n\r\n",
            hub.http
        );
        stream.write_all(request.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        stream
    };
    // Reads until the stream ends (its last chunk, or the connection closed), at most `within`.
    let ends_within = |stream: &mut std::net::TcpStream, within: Duration| -> bool {
        let deadline = std::time::Instant::now() + within;
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while std::time::Instant::now() < deadline {
            match stream.read(&mut buf) {
                Ok(0) => return true,
                Ok(n) => {
                    seen.extend_from_slice(&buf[..n]);
                    // The last chunk: alone in its read, or after the chunk before it.
                    if seen.ends_with(b"\r\n0\r\n\r\n") || seen.starts_with(b"0\r\n\r\n") {
                        return true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return true,
            }
        }
        false
    };
    // A session of Berg's, with its stream; and a stream on her own token.
    let body = format!(r#"{{"token": "{login}"}}"#);
    let json = [("Content-Type", "application/json")];
    let (status, headers, _) =
        support::stranger_request(&hub.web, "POST", "/api/session", &json, &body).unwrap();
    assert_eq!(status, 204);
    let cookie = headers["set-cookie"].split(';').next().unwrap().to_owned();
    let mut by_session = open("/api/live", &format!("Cookie: {cookie}"));
    let mut by_token = open("/api/live", &format!("Authorization: Bearer {login}"));
    // Her phone's stream, opened by the page with its cookie (issue 68: it went on after
    // log-out, on the phone's own token).
    let topic = enrolled["phone"]["ntfy"]["topic"].as_str().unwrap();
    let mut phone_by_session = open(&format!("/{topic}/json"), &format!("Cookie: {cookie}"));
    assert!(
        !ends_within(&mut by_session, Duration::from_secs(3)),
        "the session's stream runs"
    );
    assert!(
        !ends_within(&mut by_token, Duration::from_millis(500)),
        "the token's stream runs"
    );
    assert!(
        !ends_within(&mut phone_by_session, Duration::from_millis(500)),
        "the phone stream the page opened runs"
    );
    // She logs out of the page: its stream ends, the token's goes on.
    let with_cookie = [("Cookie", cookie.as_str())];
    let (status, _, answer) =
        support::stranger_request(&hub.web, "DELETE", "/api/session", &with_cookie, "").unwrap();
    assert_eq!(status, 204, "{answer}");
    let (status, _, _) =
        support::stranger_request(&hub.web, "GET", "/api/alerts", &with_cookie, "").unwrap();
    assert_eq!(status, 401, "the session ended");
    assert!(
        ends_within(&mut by_session, Duration::from_secs(6)),
        "the logged-out stream ended"
    );
    // The phone's stream ends at its next keepalive (25 s).
    assert!(
        ends_within(
            &mut phone_by_session,
            hub::edge::http::ntfy::KEEPALIVE + Duration::from_secs(5)
        ),
        "the phone stream the page opened ended with its session"
    );
    assert!(!ends_within(&mut by_token, Duration::from_millis(500)));
    // The chief revokes her: her token's stream ends.
    hub.technician_post("/api/arbiters/revoke", r#"{"arbiter": "IA Berg"}"#);
    assert!(
        ends_within(&mut by_token, Duration::from_secs(6)),
        "the revoked stream ended"
    );
}
