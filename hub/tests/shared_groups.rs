//! Shared subscriptions count in a login's cap of 8 filters (issue 68). The security review
//! subscribed one pager login to 20,000 `$share/GROUP/` groups of its alerts filter: the
//! cap saw one filter, each group was delivered apart, and the hub went from ~5 % to ~100 %
//! of a core (40 MB/s) on both MQTT listeners. Now a group is a filter of its own: the
//! cap counts it, and no login of the hall may take one: every group is refused in its
//! SUBACK, on the MQTT 3.1.1 listener and on the MQTT 5 one, while the login's own filter
//! is granted, and the hub's CPU stays low while a game is played.

use crate::support;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{Broker, Hub, Node, Replay};

/// The groups one login tries, as the review did.
const GROUPS: usize = 20_000;
/// Filters in one SUBSCRIBE: a packet of about 2 KB.
const PER_PACKET: usize = 50;
const ALERTS: &str = "zeitnot/default/alerts/+";

/// The hub's CPU time so far (user and system), from `/proc`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// What a listener answered: filters granted, refused, and SUBACKs read.
#[derive(Debug, Default)]
struct Answered {
    granted: usize,
    refused: usize,
}

/// `filters`, `PER_PACKET` a SUBSCRIBE through `subscribe`, each sent once the one before
/// was answered: what the SUBACKs (granted, codes) on `acks` said.
fn answered(
    filters: &[String],
    subscribe: impl Fn(&[String]),
    acks: &mpsc::Receiver<(usize, usize)>,
) -> Answered {
    let mut answered = Answered::default();
    for packet in filters.chunks(PER_PACKET) {
        subscribe(packet);
        let (granted, codes) = acks
            .recv_timeout(Duration::from_secs(10))
            .expect("a SUBACK");
        assert_eq!(codes, packet.len(), "a code for every filter");
        answered.granted += granted;
        answered.refused += codes - granted;
    }
    answered
}

/// The login subscribes to `filters` over MQTT 3.1.1 on one connection ([`answered`]).
fn subscribe_v4(port: u16, login: &Login, filters: &[String]) -> Answered {
    use rumqttc::{Client, Event, MqttOptions, Packet, QoS, SubscribeFilter, SubscribeReasonCode};
    let mut options = MqttOptions::new(
        format!("{}v4-{}", login.prefix, filters.len()),
        "127.0.0.1",
        port,
    );
    options.set_credentials(&login.user, &login.password);
    options.set_max_packet_size(64 * 1024, 64 * 1024);
    let (client, mut connection) = Client::new(options, 16);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Until closed: by the test once done, or by the hub (no SUBACK then says so).
        for event in connection.iter().map_while(Result::ok) {
            if let Event::Incoming(Packet::SubAck(ack)) = event {
                let ok = |c: &&SubscribeReasonCode| matches!(c, SubscribeReasonCode::Success(_));
                let granted = ack.return_codes.iter().filter(ok).count();
                if tx.send((granted, ack.return_codes.len())).is_err() {
                    return;
                }
            }
        }
    });
    let subscribe = |packet: &[String]| {
        let asked = packet
            .iter()
            .map(|f| SubscribeFilter::new(f.clone(), QoS::AtMostOnce));
        client.subscribe_many(asked).unwrap();
    };
    let answer = answered(filters, subscribe, &rx);
    drop(client.disconnect());
    answer
}

/// As [`subscribe_v4`], over MQTT 5.
fn subscribe_v5(port: u16, login: &Login, filters: &[String]) -> Answered {
    use rumqttc::v5::mqttbytes::v5::{Filter, Packet, SubscribeReasonCode};
    use rumqttc::v5::mqttbytes::QoS;
    use rumqttc::v5::{Client, Event, MqttOptions};
    let mut options = MqttOptions::new(
        format!("{}v5-{}", login.prefix, filters.len()),
        "127.0.0.1",
        port,
    );
    options.set_credentials(&login.user, &login.password);
    let (client, mut connection) = Client::new(options, 16);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for event in connection.iter().map_while(Result::ok) {
            if let Event::Incoming(Packet::SubAck(ack)) = event {
                let ok = |c: &&SubscribeReasonCode| matches!(c, SubscribeReasonCode::Success(_));
                let granted = ack.return_codes.iter().filter(ok).count();
                if tx.send((granted, ack.return_codes.len())).is_err() {
                    return;
                }
            }
        }
    });
    let subscribe = |packet: &[String]| {
        let asked: Vec<Filter> = packet
            .iter()
            .map(|f| Filter::new(f.clone(), QoS::AtMostOnce))
            .collect();
        client.subscribe_many(asked).unwrap();
    };
    let answer = answered(filters, subscribe, &rx);
    drop(client.disconnect());
    answer
}

/// A pager's MQTT login, as the enrolment hands it out.
struct Login {
    user: String,
    password: String,
    prefix: String,
}

#[test]
fn twenty_thousand_shared_groups_are_refused_past_the_cap_on_both_listeners() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start_with(
        &dir.path().join("data"),
        Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
        vec!["--mqtt5".into(), "127.0.0.1:0".into()],
    );
    let (port, port5) = (hub.broker_port(), hub.mqtt5_port.expect("an MQTT 5 port"));
    let key = hub.enrol_arbiter_in("IA Mallory", &[]);
    let field = |name: &str| key[name].as_str().unwrap().to_owned();
    let login = Login {
        user: field("mqtt_user"),
        password: field("mqtt_password"),
        prefix: field("mqtt_client_id_prefix"),
    };
    // A game goes on meanwhile: the hub's own work, which the flood must not swamp.
    let game = Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 3, 25.0);
    let node = Node::start(&game, &hub, dir.path());

    let pid = hub.child.id();
    let (cpu_before, started) = (cpu_seconds(pid), Instant::now());
    let groups: Vec<String> = (0..GROUPS)
        .map(|g| format!("$share/g{g}/{ALERTS}"))
        .collect();
    for (listener, subscribe) in [
        (
            "MQTT 3.1.1",
            subscribe_v4 as fn(u16, &Login, &[String]) -> Answered,
        ),
        ("MQTT 5", subscribe_v5),
    ] {
        let port = if listener == "MQTT 5" { port5 } else { port };
        // The login's own filter, as a pager subscribes: granted.
        let plain = subscribe(port, &login, &[ALERTS.to_owned()]);
        assert_eq!(plain.granted, 1, "{listener}: the alerts filter itself");
        // 20,000 groups, 50 a SUBSCRIBE on one connection, as the review sent them: every
        // one refused in its SUBACK (no login of the hall uses shared subscriptions, and
        // the cap counts each group).
        let flood_answer = subscribe(port, &login, &groups);
        assert_eq!(
            (flood_answer.granted, flood_answer.refused),
            (0, GROUPS),
            "{listener}: {flood_answer:?}"
        );
        println!("{listener}: {GROUPS} groups, {flood_answer:?}");
    }
    // Five seconds of the game after the floods.
    std::thread::sleep(Duration::from_secs(5));
    let busy = (cpu_seconds(pid) - cpu_before) / started.elapsed().as_secs_f64();
    println!(
        "the hub used {:.1} % of a core over the floods and 5 s after",
        busy * 100.0
    );
    assert!(busy < 0.20, "the hub used {:.0} % of a core", busy * 100.0);
    let report = node.finish(Duration::from_secs(120));
    assert_eq!(report["acked"], report["events"], "{report}");
}

/// MQTT 5 topic aliases (issue 68): the broker announces none, so a publish under one is
/// refused with DISCONNECT 0x94 and its reason, which the client reads, instead of being
/// dropped unsaid (the ACL saw an empty topic).
#[test]
fn a_publish_under_a_topic_alias_is_refused_with_its_reason() {
    use rumqttc::v5::mqttbytes::v5::{Packet, PublishProperties};
    use rumqttc::v5::mqttbytes::QoS;
    use rumqttc::v5::{Client, Event, MqttOptions};
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::start_with(
        &dir.path().join("data"),
        Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
        vec!["--mqtt5".into(), "127.0.0.1:0".into()],
    );
    let key = hub.enrol_arbiter_in("IA Ola", &[]);
    let field = |name: &str| key[name].as_str().unwrap().to_owned();
    let mut options = MqttOptions::new(
        format!("{}alias", field("mqtt_client_id_prefix")),
        "127.0.0.1",
        hub.mqtt5_port.unwrap(),
    );
    options.set_credentials(field("mqtt_user"), field("mqtt_password"));
    let (client, mut connection) = Client::new(options, 16);
    let properties = PublishProperties {
        topic_alias: Some(1),
        ..PublishProperties::default()
    };
    client
        .publish_with_properties(
            protocol::topic::pager_command("default"),
            QoS::AtLeastOnce,
            false,
            "{}",
            properties,
        )
        .unwrap();
    // The CONNACK announces no topic alias maximum (0, MQTT 5 §3.2.2.3.8), and a client
    // that reads it sends none: rumqttc refuses before anything is sent.
    let mut announced = None;
    let mut refused = None;
    for event in connection.iter().take(10) {
        match event {
            Ok(Event::Incoming(Packet::ConnAck(ack))) => {
                announced = Some(ack.properties.and_then(|p| p.topic_alias_max));
            }
            Ok(_) => {}
            Err(e) => {
                refused = Some(e.to_string());
                break;
            }
        }
    }
    assert_eq!(announced, Some(None), "no topic alias maximum announced");
    let refused = refused.expect("rumqttc keeps to the broker's maximum");
    assert!(refused.contains("maximum of '0'"), "{refused}");

    // A client that ignores it (raw bytes) is told in a DISCONNECT: 0x94, with the reason.
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", hub.mqtt5_port.unwrap())).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let string = |s: &str| [&(s.len() as u16).to_be_bytes()[..], s.as_bytes()].concat();
    let packet = |kind: u8, body: Vec<u8>| {
        let mut out = vec![kind];
        let mut len = body.len();
        loop {
            let byte = (len % 128) as u8;
            len /= 128;
            out.push(if len > 0 { byte | 0x80 } else { byte });
            if len == 0 {
                break;
            }
        }
        out.extend(body);
        out
    };
    let connect = [
        string("MQTT"),
        vec![5, 0xC2, 0, 60, 0],
        string(&format!("{}raw", field("mqtt_client_id_prefix"))),
        string(&field("mqtt_user")),
        string(&field("mqtt_password")),
    ]
    .concat();
    let publish = [
        string(&protocol::topic::pager_command("default")),
        vec![3, 0x23, 0, 1],
        b"{}".to_vec(),
    ]
    .concat();
    let mut wire = packet(0x10, connect);
    wire.extend(packet(0x30, publish));
    std::io::Write::write_all(&mut socket, &wire).unwrap();
    let mut answer = Vec::new();
    let _ = std::io::Read::read_to_end(&mut socket, &mut answer);
    // The CONNACK (success), then the DISCONNECT.
    assert_eq!(answer.first(), Some(&0x20), "{answer:?}");
    let at = 2 + usize::from(answer[1]);
    assert_eq!(answer.get(at), Some(&0xE0), "a DISCONNECT: {answer:?}");
    assert_eq!(
        answer.get(at + 2),
        Some(&0x94),
        "topic alias invalid: {answer:?}"
    );
    let text = String::from_utf8_lossy(&answer[at..]);
    assert!(text.contains("this broker takes no topic alias"), "{text}");
}
