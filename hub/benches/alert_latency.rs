//! Alert latency under load: N board nodes stream a real game's readings at a steady rate
//! through the broker into the hub, while K other boards have a flag fall at random moments.
//! A pager subscribed to every zone's alert topic measures board event → alert on the
//! pager; in the same run a plain subscriber to those boards' uplinks measures the bare
//! broker delivery of the same events, the baseline.
//!
//! `cargo bench -p zeitnot-hub --bench alert_latency -- [--nodes N] [--rate R]
//! [--incidents K] [--seconds S] [--external-port P]`

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    connect_nodes, connected, enrol_nodes, node_events, pager_login, percentile,
    print_hub_counters, start_hub,
};
use link::{self, LinkEvent};
use protocol::seal::{self, NodeKey};
use protocol::{topic, BoardNo, ClockReport, Color, Hello, NodeMs, Seq, Uplink, UplinkBody};
use rumqttc::QoS;

struct Args {
    nodes: u16,
    rate: f64,
    incidents: u16,
    seconds: f64,
    external: Option<u16>,
}

fn args() -> Args {
    let mut args = Args {
        nodes: 1_000,
        rate: 2.0,
        incidents: 200,
        seconds: 10.0,
        external: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().and_then(|v| v.parse::<f64>().ok());
        match flag.as_str() {
            "--nodes" => args.nodes = value().map_or(args.nodes, |v| v as u16),
            "--rate" => args.rate = value().unwrap_or(args.rate),
            "--incidents" => args.incidents = value().map_or(args.incidents, |v| v as u16),
            "--seconds" => args.seconds = value().unwrap_or(args.seconds),
            "--external-port" => args.external = value().map(|v| v as u16),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

const EVENT: &str = "bench-alerts";

/// An event of `board`'s node, sealed with its key (`keys[board - 1]`).
fn uplink(keys: &[NodeKey], board: u16, seq: u64, body: UplinkBody) -> Vec<u8> {
    let message = Uplink::new(BoardNo(board), Seq(seq), NodeMs(seq * 100), body);
    seal::seal_uplink(
        Some(&keys[usize::from(board) - 1]),
        EVENT,
        seal::Boot(1),
        &message,
    )
}

/// A board's first events: the node says hello, the start position, White's clock running.
fn opening(keys: &[NodeKey], board: u16) -> Vec<Vec<u8>> {
    let start = board_node::sensors::placement(&shakmaty::Board::default());
    vec![
        uplink(
            keys,
            board,
            1,
            UplinkBody::Hello(Hello {
                software: "alert-bench".into(),
                board_hw: String::new(),
                clock_hw: format!("clock-{board}"),
                highest_seq: Seq(0),
            }),
        ),
        uplink(keys, board, 2, UplinkBody::Placement(start)),
        uplink(keys, board, 3, UplinkBody::Clock(clock(300_000, false))),
    ]
}

fn clock(white_ms: u32, flag: bool) -> ClockReport {
    ClockReport {
        white_ms,
        black_ms: 300_000,
        running: Some(Color::White),
        white_flag: flag,
        black_flag: false,
        pressed_by: None,
    }
}

fn main() {
    let args = args();
    common::block_on(async {
        let (_data, running) = start_hub(EVENT, args.external, true).await;
        let keys =
            std::sync::Arc::new(enrol_nodes(running.http, 1..=args.nodes + args.incidents).await);
        println!(
            "alert_latency: {} nodes at {} events/s each ({} events/s), {} flag falls over {} s, broker {}",
            args.nodes,
            args.rate,
            args.rate * f64::from(args.nodes),
            args.incidents,
            args.seconds,
            match args.external {
                Some(port) => format!("external 127.0.0.1:{port}"),
                None => "embedded rumqttd".into(),
            }
        );

        // The pager, and the witness of the bare broker's delivery of the same events: the
        // hub is an open hall (start_hub's third argument), whose broker lets a login read
        // other boards' uplinks; a hall's broker would refuse the witness that.
        let flagged_at: Arc<Mutex<HashMap<u16, Instant>>> = Arc::default();
        let alert_latency: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let broker_latency: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let mut options = pager_login(running.http, EVENT, "pager").await;
        options.subscribe = vec![topic::alerts(EVENT, "+")];
        let (_pager, mut pager_events) = link::start(&running.broker, options);
        connected(&mut pager_events).await;
        let mut options = pager_login(running.http, EVENT, "witness").await;
        options.request_capacity = 65_536;
        options.subscribe = (1..=args.incidents)
            .map(|k| topic::uplink(EVENT, BoardNo(args.nodes + k)))
            .collect();
        let (_witness, mut witness_events) = link::start(&running.broker, options);
        connected(&mut witness_events).await;
        {
            let (flags, latency) = (flagged_at.clone(), alert_latency.clone());
            tokio::spawn(async move {
                let flagged_at = flags;
                while let Some(event) = pager_events.recv().await {
                    if let LinkEvent::Message { payload, .. } = event {
                        let now = Instant::now();
                        let alert: serde_json::Value = serde_json::from_slice(&payload).unwrap();
                        if alert["change"] == "raised" && alert["kind"] == "flag_fall" {
                            let board = alert["board"].as_u64().unwrap() as u16;
                            if let Some(sent) = flagged_at.lock().unwrap().get(&board) {
                                latency.lock().unwrap().push(now - *sent);
                            }
                        }
                    }
                }
            });
            let (flags, latency) = (flagged_at.clone(), broker_latency.clone());
            tokio::spawn(async move {
                let flagged_at = flags;
                while let Some(event) = witness_events.recv().await {
                    if let LinkEvent::Message { payload, .. } = event {
                        let now = Instant::now();
                        let event = seal::open_uplink(&payload).unwrap().message;
                        if event.seq.0 == 4 {
                            if let Some(sent) = flagged_at.lock().unwrap().get(&event.board.0) {
                                latency.lock().unwrap().push(now - *sent);
                            }
                        }
                    }
                }
            });
        }

        // The load: every node streams its game's readings at the rate, spread over the
        // interval; nodes do not wait for acknowledgements (the hub takes them in order).
        let pace = Duration::from_secs_f64(1.0 / args.rate);
        let per_node = (args.rate * (args.seconds + 3.0)) as usize;
        let publishers = connect_nodes(&running.broker, EVENT, &keys, |_, options| {
            options.request_capacity = 4_096;
        })
        .await;
        let began = Instant::now();
        let mut tasks = Vec::new();
        for (n, client, events) in publishers {
            let topic = topic::uplink(EVENT, BoardNo(n));
            if n <= args.nodes {
                let bodies = node_events(n, per_node);
                let offset = pace.mul_f64(f64::from(n) / f64::from(args.nodes));
                let keys = keys.clone();
                tasks.push(tokio::spawn(async move {
                    for (i, body) in bodies.into_iter().enumerate() {
                        tokio::time::sleep_until((began + offset + pace * i as u32).into()).await;
                        let bytes = uplink(&keys, n, i as u64 + 1, body);
                        let _ = client
                            .publish(topic.clone(), QoS::AtLeastOnce, false, bytes)
                            .await;
                    }
                    (client, events)
                }));
            } else {
                let k = n - args.nodes;
                let at = Duration::from_secs_f64(
                    1.0 + args.seconds * f64::from(k) / f64::from(args.incidents + 1),
                );
                let flagged_at = flagged_at.clone();
                let keys = keys.clone();
                tasks.push(tokio::spawn(async move {
                    for bytes in opening(&keys, n) {
                        let _ = client
                            .publish(topic.clone(), QoS::AtLeastOnce, false, bytes)
                            .await;
                    }
                    tokio::time::sleep_until((began + at).into()).await;
                    let bytes = uplink(&keys, n, 4, UplinkBody::Clock(clock(0, true)));
                    flagged_at.lock().unwrap().insert(n, Instant::now());
                    let _ = client
                        .publish(topic.clone(), QoS::AtLeastOnce, false, bytes)
                        .await;
                    (client, events)
                }));
            }
        }
        // The sessions stay open until the end: a session dropped right after its last
        // publish was queued ended before sending it (half the flag falls never left).
        let mut sessions = Vec::new();
        for task in tasks {
            sessions.push(task.await.expect("node task"));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        print_hub_counters(
            running.http,
            &[
                "zeitnot_alerts_raised",
                "zeitnot_alert_changes",
                "zeitnot_events_accepted",
                "zeitnot_journal_flush_seconds_count",
            ],
        )
        .await;
        let ms = |lat: &[Duration], p| percentile(lat, p).as_secs_f64() * 1e3;
        let mut alerts = alert_latency.lock().unwrap().clone();
        let mut bare = broker_latency.lock().unwrap().clone();
        alerts.sort();
        bare.sort();
        println!(
            "baseline  board event -> plain subscriber (bare broker):  {:>4} of {}   p50 {:>8.2} ms  p99 {:>8.2} ms",
            bare.len(),
            args.incidents,
            ms(&bare, 0.50),
            ms(&bare, 0.99)
        );
        println!(
            "alerts    board event -> hub -> journal -> pager:         {:>4} of {}   p50 {:>8.2} ms  p99 {:>8.2} ms",
            alerts.len(),
            args.incidents,
            ms(&alerts, 0.50),
            ms(&alerts, 0.99)
        );
        println!(
            "ratio     alert / bare delivery p50 {:.1}x  p99 {:.1}x",
            ms(&alerts, 0.50) / ms(&bare, 0.50).max(1e-6),
            ms(&alerts, 0.99) / ms(&bare, 0.99).max(1e-6)
        );
    });
    std::process::exit(0);
}
