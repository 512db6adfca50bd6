//! Hall throughput: N simulated board nodes drive real game events through the embedded
//! broker into the hub (sequencing, rules, sled journal, group-commit flush, acknowledgement),
//! and, in the same run, the same payloads through a bare broker pass-through (N publishers →
//! one subscriber) as the baseline. The hub is a `hub serve` process, the baseline the same
//! broker alone (`hub broker`), each in a process of its own; the nodes are in this one.
//!
//! `cargo bench -p zeitnot-hub --bench hall_throughput -- [--nodes N] [--events M] [--window W]
//! [--rate R] [--rounds K] [--external-port P] [--cluster]`
//!
//! Prints events/s for both, their ratio, and latency percentiles: publish → hub
//! acknowledgement for the hub, publish → delivery for the baseline. The saturated phase runs
//! the baseline and the hub in turn K times (default 3), each round on a line of its own; the
//! `baseline` and `hub` lines are each side's median round and the ratio theirs. On a shared
//! machine one round of either swings by half from minute to minute (the bare broker's
//! 175,000-306,000 events/s within one minute on 2026-11-29), so one pair is not a figure. On the embedded broker
//! the hub runs a third time with TLS (`--tls on`, every node's session over TLS pinning the
//! hall CA, enrolment over HTTPS): the cost of TLS per event, in the same run. Each saturated
//! run of either side also prints what an event cost in CPU: the bare broker's process or
//! the hub's, and the load generator (this process) beside it, for the ratio is a split of
//! shared cores.
//!
//! Saturated, each node keeps up to W events unacknowledged (by default 51,200 / N, between 4
//! and 256: the hall's events in flight stay about the same at every size, so that an
//! acknowledgement comes well within a node's 3 s resend timeout and the figure is the hub's
//! rate, not a resend storm's). The baseline's publishers keep the same window of events not
//! yet delivered to its subscriber (counted in this process), so that the bare broker holds no
//! more in flight than the hub's does. The nodes are bare MQTT sessions
//! (`common::bare_session`), so that the load generator leaves the cores to the brokers. Paced, the hall sends R events/s in all (default 800) for ten
//! seconds, each node at an even share.
//!
//! With `--cluster` the run also starts three `nats-server` processes (JetStream R3 with
//! `sync_interval: always`, the MQTT gateway) and runs both phases once more through a hub of
//! a clustered hall (`hub serve --cluster`, its journal in the replicated stream, an fsync on
//! every server before each acknowledgement): the cluster's cost against the one-machine hub,
//! in the same run, with the bare gateway's pass-through beside it. The clustered hub's lines
//! begin `cluster hub` (`cluster hub … events/s`, `cluster hub publish->ack p50 … p99 …`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use board_node::delivery::{ACK_TIMEOUT, MAX_ACK_TIMEOUT};
use link::{self, BrokerAddr, LinkEvent, LinkOptions};
use protocol::seal::{self, NodeKey};
use protocol::{topic, BoardNo, DownlinkBody, NodeMs, Seq, Uplink, UplinkBody};
use tokio::sync::{oneshot, Mutex, Notify};

mod common;
#[path = "../tests/support/process/nats.rs"]
#[allow(dead_code)]
mod nats_cluster;

use common::bare_session::{connect_all, socket_addr, Login};
use common::{
    connected, cpu_seconds, node_events, percentile, print_hub_counters, settle, BrokerProcess,
    HubProcess,
};

#[derive(Clone, Copy)]
struct Args {
    nodes: u16,
    events: usize,
    window: u64,
    /// Events per second of the whole hall in the paced (latency) phase.
    rate: f64,
    /// Use this broker for both runs instead of embedded rumqttd instances.
    external: Option<u16>,
    /// Run the hub of a clustered hall too, on three NATS servers started here.
    cluster: bool,
    /// Saturated rounds, the baseline and the hub in turn.
    rounds: u32,
}

/// Which hub a phase runs through.
#[derive(Clone, Copy)]
enum Through<'a> {
    /// The hall's one hub (with every session over TLS).
    Alone { tls: bool },
    /// A hub of a clustered hall on these servers.
    Cluster(&'a nats_cluster::NatsCluster),
}

fn args() -> Args {
    let mut args = Args {
        nodes: 200,
        events: 300,
        window: 0,
        rate: 800.0,
        external: None,
        cluster: false,
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().and_then(|v| v.parse::<u64>().ok());
        match flag.as_str() {
            "--nodes" => args.nodes = value().map_or(args.nodes, |v| v as u16),
            "--events" => args.events = value().map_or(args.events, |v| v as usize),
            "--window" => args.window = value().unwrap_or(args.window),
            "--rate" => args.rate = value().map_or(args.rate, |v| v as f64),
            "--external-port" => args.external = value().map(|v| v as u16),
            "--cluster" => args.cluster = true,
            "--rounds" => args.rounds = value().map_or(args.rounds, |v| v.max(1) as u32),
            _ => {} // cargo bench passes --bench
        }
    }
    if args.window == 0 {
        args.window = (51_200 / u64::from(args.nodes.max(1))).clamp(4, 256);
    }
    args
}

/// The node time field carries the publish instant (µs since the run began), so the
/// receiver can compute a latency from the same payload. Sealed with `key` as a node seals
/// its events (the baseline's payloads are the same bytes).
fn encode(
    key: &NodeKey,
    event: &str,
    board: u16,
    seq: u64,
    body: &UplinkBody,
    start: Instant,
) -> Vec<u8> {
    let us = start.elapsed().as_micros() as u64;
    let message = Uplink::new(BoardNo(board), Seq(seq), NodeMs(us), body.clone());
    seal::seal_uplink(Some(key), event, seal::Boot(1), &message)
}

/// A key for the baseline's publishers, which no hub checks.
fn baseline_key() -> NodeKey {
    NodeKey::from_bytes([0x5a; 32])
}

/// When event `index` of node `n` may be sent: as fast as possible without a pace, else at
/// `pace` intervals, the nodes spread evenly over one interval.
fn send_time(began: Instant, pace: Option<Duration>, n: u16, nodes: u16, index: usize) -> Instant {
    match pace {
        None => began,
        Some(pace) => {
            let offset = pace.mul_f64(f64::from(n) / f64::from(nodes));
            began + offset + pace * index as u32
        }
    }
}

/// The round of median events/s (of an even number, the lower of the middle two), with its
/// latencies.
fn median_round(mut rounds: Vec<(f64, Vec<Duration>)>) -> (f64, Vec<Duration>) {
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    rounds.swap_remove((rounds.len() - 1) / 2)
}

/// Baseline: N publishers → one subscriber on the bare embedded broker.
async fn baseline(
    broker: &BrokerAddr,
    broker_pid: Option<u32>,
    args: &Args,
    bodies: &[Vec<UplinkBody>],
    pace: Option<Duration>,
    phase: &str,
) -> (f64, Vec<Duration>) {
    let event = format!("bench-base-{phase}");
    let total = usize::from(args.nodes) * args.events;
    let start = Instant::now();

    let mut options = LinkOptions::new(format!("baseline-subscriber-{phase}"));
    options.subscribe = vec![topic::uplink_filter(&event)];
    options.request_capacity = 65_536;
    let (_sub_client, mut sub_events) = link::start(broker, options);
    connected(&mut sub_events).await;
    settle().await;

    // Each node's events delivered to the subscriber, and a wake-up for the node: the
    // publishers' window counts what is delivered, as the hub's nodes count what is
    // acknowledged, so the broker holds at most the same events in flight.
    let delivered: Arc<Vec<(AtomicUsize, Notify)>> = Arc::new(
        (0..args.nodes)
            .map(|_| (AtomicUsize::new(0), Notify::new()))
            .collect(),
    );
    let (done_tx, done) = oneshot::channel();
    let received = Arc::new(AtomicUsize::new(0));
    let counted = received.clone();
    let to_nodes = delivered.clone();
    let subscriber = tokio::spawn(async move {
        let received = counted;
        let mut latencies = Vec::with_capacity(total);
        while let Some(event) = sub_events.recv().await {
            if let LinkEvent::Message { payload, .. } = event {
                received.fetch_add(1, Ordering::Relaxed);
                let message = seal::open_uplink(&payload).expect("own payload").message;
                let now = start.elapsed().as_micros() as u64;
                latencies.push(Duration::from_micros(now.saturating_sub(message.node_ms.0)));
                let (count, wake) = &to_nodes[usize::from(message.board.0) - 1];
                count.fetch_add(1, Ordering::Relaxed);
                wake.notify_one();
                if latencies.len() == total {
                    break;
                }
            }
        }
        let _ = done_tx.send(Instant::now());
        latencies
    });

    let logins: Vec<Login> = (1..=args.nodes)
        .map(|n| Login {
            broker: socket_addr(broker),
            client_id: format!("baseline-node-{phase}-{n}"),
            credentials: None,
            filters: Vec::new(),
            tls: None,
        })
        .collect();
    let sessions = connect_all(&logins).await;
    let began = Instant::now();
    let cpu_before = (broker_pid.map(cpu_seconds), cpu_seconds(std::process::id()));
    let nodes = args.nodes;
    let window = args.window as usize;
    let mut tasks = Vec::new();
    for (n, mut session) in (1..=args.nodes).zip(sessions) {
        let bodies = bodies[usize::from(n) - 1].clone();
        let event = event.clone();
        let delivered = delivered.clone();
        tasks.push(tokio::spawn(async move {
            let topic = topic::uplink(&event, BoardNo(n));
            let (count, wake) = &delivered[usize::from(n) - 1];
            let mut sent = 0;
            while sent < bodies.len() {
                while sent < bodies.len()
                    && sent - count.load(Ordering::Relaxed) < window
                    && send_time(began, pace, n, nodes, sent) <= Instant::now()
                {
                    let bytes = encode(
                        &baseline_key(),
                        &event,
                        n,
                        sent as u64 + 1,
                        &bodies[sent],
                        start,
                    );
                    session.publish(&topic, &bytes);
                    sent += 1;
                }
                session.flush().await.expect("publishing");
                if sent == bodies.len() {
                    break;
                }
                let due = send_time(began, pace, n, nodes, sent);
                let open = sent - count.load(Ordering::Relaxed) < window;
                tokio::select! {
                    () = tokio::time::sleep_until(due.into()), if open => {}
                    () = wake.notified() => {}
                    // The broker's PUBACKs, read and dropped.
                    received = session.receive() => { received.expect("the broker's session"); }
                }
            }
            // The session stays open until the phase ends.
            std::future::pending::<()>().await;
            drop(session);
        }));
    }
    // The publishers' sessions end with the phase (10,000 of them per phase otherwise add up).
    let _closing = AbortOnDrop(tasks);
    // A bare broker may drop QoS 0 messages for a subscriber that falls behind; nothing
    // resends them here, so stop once delivery stalls and report what arrived.
    let mut done = done;
    let mut last = (0, Instant::now());
    let finished = loop {
        tokio::select! {
            at = &mut done => break at.expect("subscriber finished"),
            () = tokio::time::sleep(Duration::from_millis(500)) => {
                let now = received.load(Ordering::Relaxed);
                if now != last.0 {
                    last = (now, Instant::now());
                } else if last.1.elapsed() > Duration::from_secs(3) {
                    subscriber.abort();
                    println!("          the bare broker delivered {now} of {total}: {} QoS 0 messages lost", total - now);
                    return (now as f64 / (last.1 - began).as_secs_f64(), Vec::new());
                }
            }
        }
    };
    let mut latencies = subscriber.await.expect("subscriber task");
    latencies.sort();
    if let (Some(pid), Some(broker_before), None) = (broker_pid, cpu_before.0, pace) {
        let seconds = (finished - began).as_secs_f64();
        let broker_cpu = cpu_seconds(pid) - broker_before;
        println!(
            "          the bare broker's process: {:.0} % of a core, {:.1} µs of CPU an event; the load (this process): {:.1} µs an event",
            broker_cpu / seconds * 100.0,
            broker_cpu / total as f64 * 1e6,
            (cpu_seconds(std::process::id()) - cpu_before.1) / total as f64 * 1e6
        );
    }
    (total as f64 / (finished - began).as_secs_f64(), latencies)
}

/// Aborts its tasks when dropped.
struct AbortOnDrop(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The hub: N windowed nodes → broker → hub → journal flush → ack; with `tls`, the nodes'
/// sessions and the hub's API over TLS (`--tls on`, the hall CA pinned), as in a hall.
async fn through_hub(
    args: &Args,
    bodies: &[Vec<UplinkBody>],
    pace: Option<Duration>,
    phase: &str,
    through: Through<'_>,
) -> (f64, Vec<Duration>) {
    // The hub of an earlier phase still runs: with a shared external broker each phase needs
    // its own event id, or the old hub would answer the new nodes.
    let event = format!("bench-{phase}");
    let hub = match through {
        Through::Alone { tls } => {
            let flags: &[&str] = if tls { &["--tls", "on"] } else { &[] };
            HubProcess::start_with(&event, args.external, flags).await
        }
        Through::Cluster(nats) => {
            let urls = nats.urls(0);
            let flags = ["--cluster", urls.as_str(), "--hub-name", "bench"];
            HubProcess::start_with(&event, Some(nats.nodes[0].mqtt), &flags).await
        }
    };
    let keys = hub.enrol_nodes(1..=args.nodes).await;
    let nodes_total = args.nodes;
    let latencies = Arc::new(Mutex::new(Vec::new()));

    let logins: Vec<Login> = (1..=args.nodes)
        .zip(&keys)
        .map(|(n, key)| {
            Login::node(socket_addr(&hub.broker), &event, n, key).over_tls(hub.mqtt_tls())
        })
        .collect();
    let sessions = connect_all(&logins).await;
    let began = Instant::now();
    let cpu_before = hub.cpu_s();
    let load_before = cpu_seconds(std::process::id());
    let mut tasks = Vec::new();
    for ((n, mut session), key) in (1..=args.nodes).zip(sessions).zip(keys) {
        let bodies = bodies[usize::from(n) - 1].clone();
        let window = args.window;
        let latencies = latencies.clone();
        let event = event.clone();
        tasks.push(tokio::spawn(async move {
            let topic = topic::uplink(&event, BoardNo(n));
            let total = bodies.len() as u64;
            // Each event's bytes are made once, as a node's outbox keeps them: a resend is the
            // same bytes (the hub takes anything else under a known number for another node's
            // stream). Latency is measured here, out of band.
            let frames: Vec<Vec<u8>> = bodies
                .iter()
                .zip(1u64..)
                .map(|(body, seq)| {
                    let message =
                        Uplink::new(BoardNo(n), Seq(seq), NodeMs(seq * 1_000), body.clone());
                    seal::seal_uplink(Some(&key), &event, seal::Boot(1), &message)
                })
                .collect();
            let mut sent_at = vec![Instant::now(); bodies.len() + 1];
            let (mut sent, mut acked) = (0u64, 0u64);
            // board-node's resend timer: doubled at each resend, reset by progress.
            let mut ack_timeout = ACK_TIMEOUT;
            let mut mine = Vec::with_capacity(bodies.len());
            while acked < total {
                while sent < total && sent - acked < window {
                    let due = send_time(began, pace, n, nodes_total, sent as usize);
                    if due > Instant::now() {
                        break;
                    }
                    sent += 1;
                    sent_at[sent as usize] = Instant::now();
                    session.publish(&topic, &frames[sent as usize - 1]);
                }
                session.flush().await.expect("publishing");
                let next_due = (sent < total)
                    .then(|| send_time(began, pace, n, nodes_total, sent as usize))
                    .filter(|due| *due > Instant::now());
                let wait = next_due.map_or(ack_timeout, |due| due - Instant::now());
                let received = tokio::time::timeout(wait, session.message()).await;
                match received {
                    Ok(Ok(payload)) => {
                        let sealed =
                            seal::open_downlink(&payload, seal::Boot(1)).expect("hub downlink");
                        assert!(sealed.verify(&key, &event), "sealed by the hub");
                        match sealed.message.body {
                            DownlinkBody::Ack { up_to_seq } if up_to_seq.0 > acked => {
                                let now = Instant::now();
                                for s in acked + 1..=up_to_seq.0 {
                                    mine.push(now - sent_at[s as usize]);
                                }
                                acked = up_to_seq.0;
                                ack_timeout = ACK_TIMEOUT;
                            }
                            DownlinkBody::Ack { .. } => {}
                            DownlinkBody::ResendFrom { seq } => sent = seq.0 - 1,
                            DownlinkBody::ContinueAt { .. } => unreachable!("one node per board"),
                        }
                    }
                    Ok(Err(e)) => panic!("node {n}'s session: {e}"),
                    // The next paced send is due; or no ack in time: resend, as a real node does.
                    Err(_) if next_due.is_some() => {}
                    Err(_) => {
                        sent = acked;
                        ack_timeout = (ack_timeout * 2).min(MAX_ACK_TIMEOUT);
                    }
                }
            }
            latencies.lock().await.extend(mine);
        }));
    }
    for task in tasks {
        task.await.expect("node task");
    }
    let elapsed = began.elapsed();
    let events = (usize::from(args.nodes) * args.events) as f64;
    let hub_cpu = hub.cpu_s() - cpu_before;
    // Paced, the CPU is mostly the idle hall's (sessions, timers): an event's share says
    // nothing there.
    let per_event = if pace.is_none() {
        format!(
            ", {:.1} µs of CPU an event; the load (this process): {:.1} µs an event",
            hub_cpu / events * 1e6,
            (cpu_seconds(std::process::id()) - load_before) / events * 1e6
        )
    } else {
        String::new()
    };
    println!(
        "          the hub process: {:.0} % of a core, RSS {} KiB{per_event}",
        hub_cpu / elapsed.as_secs_f64() * 100.0,
        hub.rss_kib(),
    );
    print_hub_counters(
        hub.http,
        &[
            "zeitnot_duplicates",
            "zeitnot_gap",
            "zeitnot_resend",
            "zeitnot_acks",
            "zeitnot_journal_flush_seconds_sum",
            "zeitnot_journal_flush_seconds_count",
        ],
    )
    .await;
    let total = usize::from(args.nodes) * args.events;
    let mut latencies = std::mem::take(&mut *latencies.lock().await);
    latencies.sort();
    (total as f64 / elapsed.as_secs_f64(), latencies)
}

fn args_with(args: &Args, events: usize) -> Args {
    Args { events, ..*args }
}

fn main() {
    let args = args();
    common::block_on(async {
        let bodies: Vec<_> = (1..=args.nodes)
            .map(|n| node_events(n, args.events))
            .collect();
        let sizes: Vec<usize> = bodies[0]
            .iter()
            .map(|b| encode(&baseline_key(), "bench", 1, 1, b, Instant::now()).len())
            .collect();
        let mean_size = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        println!(
            "hall_throughput: {} nodes x {} events = {} events (real game readings, mean payload {:.0} B), window {}",
            args.nodes,
            args.events,
            usize::from(args.nodes) * args.events,
            mean_size,
            args.window
        );
        // 10,000 nodes' connections in this process.
        common::many_open_files(u64::from(args.nodes) * 2 + 4_096);
        let broker_process;
        let (base_broker, base_pid) = match args.external {
            Some(port) => {
                println!("broker: external, 127.0.0.1:{port}");
                (BrokerAddr::plain("127.0.0.1", port), None)
            }
            None => {
                println!("broker: rumqttd as the hub embeds it; the baseline's alone (hub broker), the hub's in hub serve");
                broker_process = BrokerProcess::start().await;
                (broker_process.broker.clone(), Some(broker_process.pid()))
            }
        };
        let ms = |lat: &[Duration], p| percentile(lat, p).as_secs_f64() * 1e3;

        println!(
            "-- saturated: every node sends as fast as its window allows; the bare broker and the hub in turn, {} rounds, the median of each below",
            args.rounds
        );
        let mut base_rounds = Vec::new();
        let mut hub_rounds = Vec::new();
        for round in 1..=args.rounds {
            let phase = match round {
                1 => "burst".to_string(),
                _ => format!("burst-{round}"),
            };
            let (base_rate, base_lat) =
                baseline(&base_broker, base_pid, &args, &bodies, None, &phase).await;
            let (hub_rate, hub_lat) =
                through_hub(&args, &bodies, None, &phase, Through::Alone { tls: false }).await;
            println!(
                "round {round}   bare broker {base_rate:>9.0} events/s   hub {hub_rate:>9.0} events/s   hub / bare broker {:.2}",
                hub_rate / base_rate
            );
            base_rounds.push((base_rate, base_lat));
            hub_rounds.push((hub_rate, hub_lat));
        }
        let (base_rate, base_lat) = median_round(base_rounds);
        let (hub_rate, hub_lat) = median_round(hub_rounds);
        println!(
            "baseline  bare broker pass-through (QoS 0, N publishers -> 1 subscriber): {base_rate:>9.0} events/s   publish->delivery p50 {:>8.2} ms  p99 {:>8.2} ms",
            ms(&base_lat, 0.50),
            ms(&base_lat, 0.99)
        );
        println!(
            "hub       broker -> rules -> sled journal -> flush -> ack:                  {hub_rate:>9.0} events/s   publish->ack      p50 {:>8.2} ms  p99 {:>8.2} ms",
            ms(&hub_lat, 0.50),
            ms(&hub_lat, 0.99)
        );
        println!(
            "ratio     hub / baseline events/s: {:.2}",
            hub_rate / base_rate
        );
        // The cost of TLS: the same hall with every node's session over TLS (an external
        // broker's TLS is its own; not measured here).
        let with_tls = args.external.is_none();
        if with_tls {
            let (tls_rate, tls_lat) = through_hub(
                &args,
                &bodies,
                None,
                "burst-tls",
                Through::Alone { tls: true },
            )
            .await;
            println!(
                "hub+TLS   the same, every node's session over TLS:                         {tls_rate:>9.0} events/s   publish->ack      p50 {:>8.2} ms  p99 {:>8.2} ms",
                ms(&tls_lat, 0.50),
                ms(&tls_lat, 0.99)
            );
            println!(
                "ratio     hub+TLS / hub events/s: {:.2}",
                tls_rate / hub_rate
            );
        }

        let nats = args.cluster.then(|| {
            let dir = tempfile::tempdir().expect("a directory for the NATS servers");
            let nats = nats_cluster::NatsCluster::start(dir.path());
            println!("cluster: three nats-server on loopback (JetStream R3, sync_interval: always; MQTT gateway, stream_replicas 3)");
            (dir, nats)
        });
        if let Some((_, nats)) = &nats {
            let gateway = BrokerAddr::plain("127.0.0.1", nats.nodes[0].mqtt);
            let (gate_rate, gate_lat) =
                baseline(&gateway, None, &args, &bodies, None, "burst-gateway").await;
            println!(
                "gateway   bare NATS MQTT gateway pass-through (QoS 0):                     {gate_rate:>9.0} events/s   publish->delivery p50 {:>8.2} ms  p99 {:>8.2} ms",
                ms(&gate_lat, 0.50),
                ms(&gate_lat, 0.99)
            );
            let (cl_rate, cl_lat) = through_hub(
                &args,
                &bodies,
                None,
                "burst-cluster",
                Through::Cluster(nats),
            )
            .await;
            println!(
                "cluster hub  gateway -> rules -> JetStream R3 fsync -> sled -> ack:         {cl_rate:>9.0} events/s   publish->ack      p50 {:>8.2} ms  p99 {:>8.2} ms",
                ms(&cl_lat, 0.50),
                ms(&cl_lat, 0.99)
            );
            println!(
                "ratio     cluster / hub events/s: {:.2}   cluster / gateway: {:.2}",
                cl_rate / hub_rate,
                cl_rate / gate_rate
            );
        }

        // Ten seconds at the hall's rate, each node an even share (at least one event).
        let per_node = args.rate / f64::from(args.nodes);
        let paced_events = ((per_node * 10.0).round() as usize).clamp(1, args.events);
        let pace = Duration::from_secs_f64(10.0 / paced_events as f64);
        let paced: Vec<Vec<UplinkBody>> =
            bodies.iter().map(|b| b[..paced_events].to_vec()).collect();
        println!(
            "-- paced: {:.0} events/s in all, {} events per node one every {:.2} s, {} s",
            f64::from(args.nodes) * paced_events as f64 / 10.0,
            paced_events,
            pace.as_secs_f64(),
            10
        );
        let (_, base_lat) = baseline(
            &base_broker,
            None,
            &args_with(&args, paced_events),
            &paced,
            Some(pace),
            "paced",
        )
        .await;
        println!(
            "baseline  publish->delivery p50 {:>8.2} ms  p99 {:>8.2} ms",
            ms(&base_lat, 0.50),
            ms(&base_lat, 0.99)
        );
        let paced_args = args_with(&args, paced_events);
        let (_, hub_lat) = through_hub(
            &paced_args,
            &paced,
            Some(pace),
            "paced",
            Through::Alone { tls: false },
        )
        .await;
        println!(
            "hub       publish->ack      p50 {:>8.2} ms  p99 {:>8.2} ms",
            ms(&hub_lat, 0.50),
            ms(&hub_lat, 0.99)
        );
        if with_tls {
            let (_, tls_lat) = through_hub(
                &paced_args,
                &paced,
                Some(pace),
                "paced-tls",
                Through::Alone { tls: true },
            )
            .await;
            println!(
                "hub+TLS   publish->ack      p50 {:>8.2} ms  p99 {:>8.2} ms   (TLS adds p50 {:+.2} ms, p99 {:+.2} ms)",
                ms(&tls_lat, 0.50),
                ms(&tls_lat, 0.99),
                ms(&tls_lat, 0.50) - ms(&hub_lat, 0.50),
                ms(&tls_lat, 0.99) - ms(&hub_lat, 0.99)
            );
        }
        if let Some((_, nats)) = &nats {
            let (_, cl_lat) = through_hub(
                &paced_args,
                &paced,
                Some(pace),
                "paced-cluster",
                Through::Cluster(nats),
            )
            .await;
            println!(
                "cluster hub  publish->ack   p50 {:>8.2} ms  p99 {:>8.2} ms   (the cluster adds p50 {:+.2} ms, p99 {:+.2} ms)",
                ms(&cl_lat, 0.50),
                ms(&cl_lat, 0.99),
                ms(&cl_lat, 0.50) - ms(&hub_lat, 0.50),
                ms(&cl_lat, 0.99) - ms(&hub_lat, 0.99)
            );
        }
    });
    // The nodes' sessions end with the process.
    std::process::exit(0);
}
