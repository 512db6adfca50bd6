//! A hall's day at its own pace, with the hub killed in the middle: `--boards` simulated
//! board nodes each play a real classical game (FIDE World Cup 2025, `../shared/data/real/`)
//! as a live DGT board reports it (the pieces lifted and set down, a press per move, a clock
//! reading every second while a clock runs) and `board-node` sends it: the clock readings
//! that are news (`board_node::clock_news`), the latest of the others at a heartbeat after
//! 5 s of silence (`--every-reading`: every reading, the load before), the games' time
//! running `--speed` times as fast as the clock on the wall so that a board's presses come
//! every 30-60 s as in a hall (each node announces its pace, as replaying nodes do). Each node
//! keeps what the hub has not acknowledged and resends it as `board-node` does: on reconnect,
//! on `ResendFrom`, and after 3 s without progress (then 6, 12, … up to 30 s); a resent event
//! is the same bytes. The nodes are this process's tasks, each with its own MQTT connection
//! (`common::bare_session`: the same packets as rumqttc's, without its event loop, so that
//! the load generator leaves the machine's cores to the hub it measures), and their events
//! are sealed before the run.
//!
//! The hall's last `--flags` boards have a flag fall each instead, spread over the run: a
//! pager measures board event -> alert. At `--kill-at` seconds the hub gets SIGKILL while
//! every node is connected; it is started again on the same journal after `--down` seconds,
//! and the nodes reconnect with their jittered backoff.
//!
//! In the same run, the baseline: a probe makes round trips through a bare broker (`hub
//! broker`, the broker the hub embeds) to an echo client and back, the same two broker
//! passes as an event and its acknowledgement.
//!
//! Prints the acknowledgement percentiles beside the baseline's (all outside the restart, and
//! those of the steady hall, after the round's start), the pager's, the hub's CPU share in
//! the steady hall (`hub_cpu_pct`) and memory per board (`rss_per_board_kib`: the hub's RSS
//! with the hall, less an idle hub's, per board), the restart (`ready_s`: the journal replayed and the hub answering;
//! `recovered_s`: every node acknowledged up to date), `lost` (events a node produced that the
//! hub never acknowledged, or asked for again after acknowledging them) and, the independent
//! check, every board's moves on the hub's API against the source PGN.
//!
//! With `--cluster` the hall is a clustered one: three `nats-server` processes (JetStream R3
//! with `sync_interval: always`, the MQTT gateway; as `hall_throughput --cluster`), the hub
//! `hub serve --cluster` with its journal in the replicated stream, the nodes and the pager
//! on the gateway, and the baseline's round trips through the same gateway. The killed hub,
//! started again, joins as a standby and takes the hall over once its own old lease is
//! stale (3 s): `recovered_s` includes that wait. `--stop-leader-at T` also stops the
//! server leading the journal stream (SIGSTOP) at T seconds for `--stop-for` seconds (12):
//! the line `leader` says how many board sessions were lost meanwhile (a gateway that
//! waits on JetStream for a board's publish closes its session after 5 s).
//!
//! `cargo bench -p zeitnot-hub --bench hall_day -- [--boards N] [--seconds S] [--kill-at K]
//! [--down D] [--speed X] [--flags F] [--cluster [--stop-leader-at T] [--stop-for S]]`

mod common;
#[path = "../tests/support/process/nats.rs"]
#[allow(dead_code)]
mod nats_cluster;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use board_node::clock_news;
use board_node::delivery::{ACK_TIMEOUT, MAX_ACK_TIMEOUT, WINDOW};
use board_node::source::Timed;
use board_node::{pgn::PgnGame, replay};
use common::bare_session::{connect_all, socket_addr, BareSession, Login};
use common::{
    classical_games, connected, enrol_nodes, pager_login, percentile, print_hub_counters,
    with_running_clock, BrokerProcess, HubProcess, CLASSICAL_TIME_CONTROL,
};
use futures_util::StreamExt;
use link::backoff::Backoff;
use link::{self, LinkEvent, LinkOptions};
use protocol::seal::{self, NodeKey};
use protocol::{
    topic, BoardNo, ClockReport, Color, DownlinkBody, Hello, NodeMs, Seq, Uplink, UplinkBody,
};
use rumqttc::QoS;
use shakmaty::san::SanPlus;

const EVENT: &str = "hall-day";
/// As `board-node`'s heartbeat after silence.
const HEARTBEAT: Duration = Duration::from_secs(5);

struct Args {
    boards: u16,
    seconds: f64,
    kill_at: f64,
    down: f64,
    speed: f64,
    flags: u16,
    /// Every clock reading sent, as before nodes left out those that tell nothing
    /// (`board_node::clock_news`): the hall's old load.
    every_reading: bool,
    /// A clustered hall on three NATS servers started here.
    cluster: bool,
    /// When the journal stream's leader is stopped, and for how long (a clustered hall).
    stop_leader_at: Option<f64>,
    stop_for: f64,
}

fn args() -> Args {
    let mut args = Args {
        boards: 10_000,
        seconds: 180.0,
        kill_at: 100.0,
        down: 1.0,
        speed: 2.0,
        flags: 100,
        every_reading: false,
        cluster: false,
        stop_leader_at: None,
        stop_for: 12.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--every-reading" {
            args.every_reading = true;
            continue;
        }
        if flag == "--cluster" {
            args.cluster = true;
            continue;
        }
        let mut value = || it.next().and_then(|v| v.parse::<f64>().ok());
        match flag.as_str() {
            "--boards" => args.boards = value().map_or(args.boards, |v| v as u16),
            "--seconds" => args.seconds = value().unwrap_or(args.seconds),
            "--kill-at" => args.kill_at = value().unwrap_or(args.kill_at),
            "--down" => args.down = value().unwrap_or(args.down),
            "--speed" => args.speed = value().unwrap_or(args.speed),
            "--flags" => args.flags = value().map_or(args.flags, |v| v as u16),
            "--stop-leader-at" => args.stop_leader_at = value(),
            "--stop-for" => args.stop_for = value().unwrap_or(args.stop_for),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// What a node sends when: `at` after the run began, `node_ms` on the node's clock.
struct Step {
    at: Duration,
    node_ms: u64,
    body: UplinkBody,
}

/// A board's events over the run: hello, its pace, then its game's readings.
fn timeline(game: &PgnGame, args: &Args, start: Duration, epoch_ms: u64) -> Vec<Step> {
    let tc = CLASSICAL_TIME_CONTROL.parse().expect("time control");
    // A reading every second of the wall's time is one every `speed` seconds of the game's.
    let every_ms = (1_000.0 * args.speed) as u64;
    // What the node sends of it: the readings that are news, the latest of the others at
    // each heartbeat (its 5 s of the wall's time are `speed` times as many of the game's).
    let heartbeat_ms = (HEARTBEAT.as_secs_f64() * 1e3 * args.speed) as u64;
    let script = clock_news::published(
        &with_running_clock(replay::script(game, Some(&tc)), every_ms),
        heartbeat_ms,
        !args.every_reading,
    );
    let real = |game_ms: u64| start + Duration::from_secs_f64(game_ms as f64 / 1e3 / args.speed);
    let end = Duration::from_secs_f64(args.seconds);
    let mut steps = vec![
        Step {
            at: start,
            node_ms: epoch_ms,
            body: UplinkBody::Hello(Hello {
                software: "hall-day bench".into(),
                board_hw: String::new(),
                clock_hw: String::new(),
                highest_seq: Seq(0),
            }),
        },
        Step {
            at: start,
            node_ms: epoch_ms,
            body: UplinkBody::Pace {
                node_ms_per_s: (args.speed * 1000.0) as u32,
            },
        },
    ];
    for Timed { game_ms, reading } in script {
        let at = real(game_ms);
        if at > end {
            break;
        }
        steps.push(Step {
            at,
            node_ms: epoch_ms + game_ms,
            body: reading.body(),
        });
    }
    steps
}

/// A flag board: its game starts (the start position, White's clock running) and White's
/// flag falls at `flag_at`.
fn flag_timeline(args: &Args, flag_at: Duration, epoch_ms: u64) -> Vec<Step> {
    let base_ms = 5_400_000;
    let report = |white_ms, flag| ClockReport {
        white_ms,
        black_ms: base_ms,
        running: Some(Color::White),
        white_flag: flag,
        black_flag: false,
        pressed_by: None,
    };
    let start = board_node::sensors::placement(&shakmaty::Board::default());
    let ran_ms = (flag_at.as_secs_f64() * 1e3 * args.speed) as u64;
    vec![
        Step {
            at: Duration::ZERO,
            node_ms: epoch_ms,
            body: UplinkBody::Hello(Hello {
                software: "hall-day bench".into(),
                board_hw: String::new(),
                clock_hw: String::new(),
                highest_seq: Seq(0),
            }),
        },
        Step {
            at: Duration::ZERO,
            node_ms: epoch_ms,
            body: UplinkBody::Pace {
                node_ms_per_s: (args.speed * 1000.0) as u32,
            },
        },
        Step {
            at: Duration::ZERO,
            node_ms: epoch_ms,
            body: UplinkBody::Placement(start),
        },
        Step {
            at: Duration::ZERO,
            node_ms: epoch_ms,
            body: UplinkBody::Clock(report(base_ms, false)),
        },
        Step {
            at: flag_at,
            node_ms: epoch_ms + ran_ms,
            body: UplinkBody::Clock(report(0, true)),
        },
    ]
}

/// A board's events as its node will send them: when, the sealed bytes (made before the run:
/// signing is the nodes' work, not the load generator's), and whether the event is a press.
struct Planned {
    at: Duration,
    frame: Vec<u8>,
    press: bool,
}

fn plan(board: u16, key: &NodeKey, steps: Vec<Step>) -> Vec<Planned> {
    (1u64..)
        .zip(steps)
        .map(|(seq, step)| {
            let press = matches!(&step.body, UplinkBody::Clock(c) if c.pressed_by.is_some());
            let message = Uplink::new(BoardNo(board), Seq(seq), NodeMs(step.node_ms), step.body);
            Planned {
                at: step.at,
                frame: seal::seal_uplink(Some(key), EVENT, seal::Boot(1), &message),
                press,
            }
        })
        .collect()
}

/// Every board's events, sealed before the run on every core: the flag boards are the last.
fn plan_hall(args: &Args, playing: u16, games: &[PgnGame], keys: &[NodeKey]) -> Vec<Vec<Planned>> {
    let signed = Instant::now();
    let epoch_ms = 1_790_000_000_000;
    let board = |n: u16| {
        let steps = if n <= playing {
            // The round starts over the first ten seconds, not all at one instant.
            let start = Duration::from_millis(u64::from(n) * 10_000 / u64::from(playing));
            timeline(
                &games[usize::from(n) * 7 % games.len()],
                args,
                start,
                epoch_ms,
            )
        } else {
            let k = n - playing;
            let flag_at =
                Duration::from_secs_f64(args.seconds * f64::from(k) / f64::from(args.flags + 1));
            flag_timeline(args, flag_at, epoch_ms)
        };
        plan(n, &keys[usize::from(n) - 1], steps)
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let boards: Vec<u16> = (1..=args.boards).collect();
    let plans: Vec<Vec<Planned>> = std::thread::scope(|scope| {
        let workers: Vec<_> = boards
            .chunks(boards.len().div_ceil(threads).max(1))
            .map(|chunk| scope.spawn(|| chunk.iter().map(|&n| board(n)).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("planner"))
            .collect()
    });
    println!(
        "plan      {} events sealed in {:.1} s",
        plans.iter().map(Vec::len).sum::<usize>(),
        signed.elapsed().as_secs_f64()
    );
    plans
}

/// What the run shares with every node: when it began, stops, and the hub came back.
struct Run {
    began: Instant,
    end: Instant,
    drain_until: Instant,
    respawned: OnceLock<Instant>,
}

/// What a node saw.
#[derive(Default)]
struct NodeReport {
    produced: u64,
    /// Moves completed (presses) among the events produced.
    presses: usize,
    acked: u64,
    /// Each event's first publish and its acknowledgement.
    acks: Vec<(Instant, Instant)>,
    /// When the node was acknowledged everything it had produced before the hub came back.
    caught_up: Option<Instant>,
    /// Events the hub asked for again after acknowledging them.
    asked_again: u64,
    continue_at: u64,
    resends: u64,
    /// Sessions opened again after one was lost.
    reconnects: u64,
    /// Sessions lost (and when), and attempts to open one that failed.
    sessions_lost: u64,
    lost_at: Vec<Instant>,
    failed_connects: u64,
    connected_at_end: bool,
    /// When the last event went out for the first time (a flag board's flag).
    last_sent: Option<Instant>,
}

/// Where and as whom a node logs in.
/// A node's outbox in memory: what the hub has not acknowledged, sent up to where.
#[derive(Default)]
struct Outbox {
    /// Unacknowledged: sequence number and first publish (the bytes are `steps[seq - 1]`).
    unacked: VecDeque<(u64, Option<Instant>)>,
    sent_up_to: u64,
}

impl Outbox {
    /// Publishes what is unsent within the window past `acked`, as `board-node` does.
    fn send(
        &mut self,
        session: &mut BareSession,
        topic: &str,
        steps: &[Planned],
        report: &mut NodeReport,
    ) {
        for (seq, first) in &mut self.unacked {
            if *seq <= self.sent_up_to {
                continue;
            }
            if *seq > report.acked + WINDOW {
                break;
            }
            session.publish(topic, &steps[*seq as usize - 1].frame);
            let now = Instant::now();
            if first.is_none() {
                *first = Some(now);
                report.last_sent = Some(now);
            }
            self.sent_up_to = *seq;
        }
    }
}

/// A board node as `board-node` behaves toward the hub, with its outbox in memory: it
/// reconnects with jittered backoff, resends what is unacknowledged on reconnect, on
/// `ResendFrom` and after 3 s without progress.
async fn node(
    board: u16,
    key: NodeKey,
    steps: Vec<Planned>,
    run: Arc<Run>,
    login: Login,
    session: BareSession,
) -> NodeReport {
    let topic = topic::uplink(EVENT, BoardNo(board));
    let mut report = NodeReport::default();
    let mut outbox = Outbox::default();
    let mut session = Some(session);
    let mut backoff = Backoff::new(
        Duration::from_millis(100),
        Duration::from_secs(2),
        u64::from(board),
    );
    let mut reconnect_at = Instant::now();
    let mut last_progress = Instant::now();
    let mut ack_timeout = ACK_TIMEOUT;
    let mut next = 0usize;
    // Everything produced before the hub came back: acknowledged, the node is up to date.
    let owed = |back: &Instant| steps.partition_point(|s| run.began + s.at <= *back) as u64;
    let caught_up = |report: &mut NodeReport, now: Instant| {
        if let (None, Some(back)) = (report.caught_up, run.respawned.get()) {
            if report.acked >= owed(back) {
                report.caught_up = Some(now);
            }
        }
    };
    loop {
        // A node stays connected until the run ends, whether or not it has more to say.
        let producing = Instant::now() < run.end;
        if !producing && (outbox.unacked.is_empty() || Instant::now() > run.drain_until) {
            break;
        }
        let due = steps.get(next).map_or(run.end, |step| run.began + step.at);
        // As board-node: no progress for the timeout, everything unacknowledged again, and
        // the next timeout twice as long.
        let resend_due = last_progress + ack_timeout;
        let connected = session.is_some();
        let message = async {
            match session.as_mut() {
                Some(s) => s.message().await,
                None => std::future::pending().await,
            }
        };
        let mut lost_session = false;
        tokio::select! {
            () = tokio::time::sleep_until(due.into()), if producing => {
                let Some(step) = steps.get(next).filter(|_| due < run.end) else { continue };
                next += 1;
                report.produced += 1;
                report.presses += usize::from(step.press);
                if outbox.unacked.is_empty() {
                    last_progress = Instant::now();
                }
                outbox.unacked.push_back((report.produced, None));
                if let Some(s) = session.as_mut() {
                    outbox.send(s, &topic, &steps, &mut report);
                }
            }
            () = tokio::time::sleep_until(run.drain_until.into()), if !producing => {}
            () = tokio::time::sleep_until(resend_due.into()), if connected && !outbox.unacked.is_empty() => {
                report.resends += 1;
                outbox.sent_up_to = report.acked;
                last_progress = Instant::now();
                ack_timeout = (ack_timeout * 2).min(MAX_ACK_TIMEOUT);
                if let Some(s) = session.as_mut() {
                    outbox.send(s, &topic, &steps, &mut report);
                }
            }
            () = tokio::time::sleep_until(reconnect_at.into()), if !connected => {
                match login.session().await {
                    Ok(mut s) => {
                        report.reconnects += 1;
                        backoff.reset();
                        // A node with nothing unacknowledged is up to date once it is back.
                        caught_up(&mut report, Instant::now());
                        outbox.sent_up_to = report.acked;
                        last_progress = Instant::now();
                        ack_timeout = ACK_TIMEOUT;
                        outbox.send(&mut s, &topic, &steps, &mut report);
                        session = Some(s);
                    }
                    Err(_) => {
                        report.failed_connects += 1;
                        reconnect_at = Instant::now() + backoff.next_wait();
                    }
                }
            }
            payload = message => match payload {
                Err(_) => lost_session = true,
                Ok(payload) => {
                    let Ok(sealed) = seal::open_downlink(&payload, seal::Boot(1)) else { continue };
                    assert!(sealed.verify(&key, EVENT), "a downlink not sealed by the hub");
                    let s = session.as_mut().expect("a message comes on a session");
                    match sealed.message.body {
                        DownlinkBody::Ack { up_to_seq } if up_to_seq.0 > report.acked => {
                            let now = Instant::now();
                            while outbox.unacked.front().is_some_and(|(seq, _)| *seq <= up_to_seq.0) {
                                let (_, first) = outbox.unacked.pop_front().expect("front");
                                report.acks.push((first.unwrap_or(now), now));
                            }
                            report.acked = up_to_seq.0;
                            last_progress = now;
                            ack_timeout = ACK_TIMEOUT;
                            caught_up(&mut report, now);
                            outbox.send(s, &topic, &steps, &mut report);
                        }
                        DownlinkBody::Ack { .. } => {}
                        DownlinkBody::ResendFrom { seq } => {
                            // A node asked on a session that stayed up (a clustered hall's)
                            // with nothing owed is up to date now, not at its next event.
                            caught_up(&mut report, Instant::now());
                            report.asked_again += report.acked.saturating_sub(seq.0.saturating_sub(1));
                            outbox.sent_up_to = seq.0.saturating_sub(1).max(report.acked);
                            outbox.send(s, &topic, &steps, &mut report);
                        }
                        DownlinkBody::ContinueAt { .. } => report.continue_at += 1,
                    }
                }
            },
        }
        if let Some(s) = session.as_mut() {
            if lost_session || s.flush().await.is_err() {
                report.sessions_lost += 1;
                report.lost_at.push(Instant::now());
                session = None;
                reconnect_at = Instant::now() + backoff.next_wait();
            }
        }
    }
    report.connected_at_end = session.is_some();
    report
}

/// The baseline: round trips through the bare broker, prober -> broker -> echo -> broker ->
/// prober, `rate` a second until `until`, at QoS 0 as the nodes' events and the hub's Acks.
async fn broker_round_trips(broker: &link::BrokerAddr, rate: f64, until: Instant) -> Vec<Duration> {
    let mut echo_options = LinkOptions::new("hall-day-echo");
    echo_options.subscribe = vec!["probe/ping".into()];
    echo_options.subscribe_qos = QoS::AtMostOnce;
    let (echo, mut echo_events) = link::start(broker, echo_options);
    connected(&mut echo_events).await;
    tokio::spawn(async move {
        while let Some(event) = echo_events.recv().await {
            if let LinkEvent::Message { payload, .. } = event {
                let _ = echo.try_publish("probe/pong", QoS::AtMostOnce, false, payload);
            }
        }
    });
    let mut options = LinkOptions::new("hall-day-prober");
    options.subscribe = vec!["probe/pong".into()];
    options.subscribe_qos = QoS::AtMostOnce;
    let (prober, mut events) = link::start(broker, options);
    connected(&mut events).await;
    common::settle().await;
    let origin = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    let mut round_trips = Vec::new();
    while Instant::now() < until {
        tokio::select! {
            _ = tick.tick() => {
                let sent = origin.elapsed().as_micros() as u64;
                let _ = prober.try_publish("probe/ping", QoS::AtMostOnce, false, sent.to_be_bytes().to_vec());
            }
            Some(LinkEvent::Message { payload, .. }) = events.recv() => {
                if let Ok(sent) = <[u8; 8]>::try_from(payload.as_slice()) {
                    let now = origin.elapsed().as_micros() as u64;
                    round_trips.push(Duration::from_micros(now.saturating_sub(u64::from_be_bytes(sent))));
                }
            }
        }
    }
    round_trips
}

fn main() {
    let args = args();
    // The hall's last `flags` boards are the flag boards; the others play.
    let total = args.boards;
    let playing = args.boards - args.flags.min(args.boards);
    common::many_open_files(u64::from(total) * 2 + 4_096);
    common::block_on(async move {
        println!(
            "hall_day: {} boards, {} playing real classical games at {}x (a press every 30-60 s, a clock reading a second, {}), {} with a flag fall; {} s, SIGKILL at {} s, restarted {} s later",
            args.boards,
            playing,
            args.speed,
            if args.every_reading {
                "every reading sent, heartbeats"
            } else {
                "the readings that are news sent, the latest at a heartbeat"
            },
            args.flags,
            args.seconds,
            args.kill_at,
            args.down
        );
        let games = classical_games();
        let nats_dir = tempfile::tempdir().expect("a directory for the NATS servers");
        let nats = args.cluster.then(|| {
            println!("cluster   three nats-server on loopback (JetStream R3, sync_interval: always; MQTT gateway, stream_replicas 3); the hub's journal in the stream, the nodes on the gateway");
            nats_cluster::NatsCluster::start(nats_dir.path())
        });
        // The baseline's broker: the bare broker the hub embeds, or the cluster's gateway.
        let (_bare, baseline_broker) = match &nats {
            None => {
                let bare = BrokerProcess::start().await;
                let broker = bare.broker.clone();
                (Some(bare), broker)
            }
            Some(nats) => (
                None,
                link::BrokerAddr::plain("127.0.0.1", nats.nodes[0].mqtt),
            ),
        };
        let mut hub = match &nats {
            None => {
                HubProcess::start_with(EVENT, None, &["--time-control", CLASSICAL_TIME_CONTROL])
                    .await
            }
            Some(nats) => {
                let urls = nats.urls(0);
                let flags = [
                    "--time-control",
                    CLASSICAL_TIME_CONTROL,
                    "--cluster",
                    urls.as_str(),
                    "--hub-name",
                    "bench",
                ];
                HubProcess::start_with(EVENT, Some(nats.nodes[0].mqtt), &flags).await
            }
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        let idle_rss = hub.rss_kib();

        let setup = Instant::now();
        let keys = enrol_nodes(hub.http, 1..=total).await;
        let enrolled_rss = hub.rss_kib();
        let mut pager_options = pager_login(hub.http, EVENT, "pager").await;
        pager_options.subscribe = vec![topic::alerts(EVENT, "+")];
        let (_pager, mut pager_events) = link::start(&hub.broker, pager_options);
        connected(&mut pager_events).await;
        let flag_alerts: Arc<Mutex<HashMap<u16, Instant>>> = Arc::default();
        {
            let flag_alerts = flag_alerts.clone();
            tokio::spawn(async move {
                while let Some(event) = pager_events.recv().await {
                    if let LinkEvent::Message { payload, .. } = event {
                        let now = Instant::now();
                        let Ok(alert) = serde_json::from_slice::<serde_json::Value>(&payload)
                        else {
                            continue;
                        };
                        if alert["change"] == "raised" && alert["kind"] == "flag_fall" {
                            if let Some(board) = alert["board"].as_u64() {
                                flag_alerts
                                    .lock()
                                    .unwrap()
                                    .entry(board as u16)
                                    .or_insert(now);
                            }
                        }
                    }
                }
            });
        }
        let enrolled_s = setup.elapsed().as_secs_f64();
        let plans = plan_hall(&args, playing, &games, &keys);
        let connecting = Instant::now();
        let broker = socket_addr(&hub.broker);
        let logins: Vec<Login> = (1u16..)
            .zip(&keys)
            .map(|(n, key)| Login::node(broker, EVENT, n, key))
            .collect();
        let sessions = connect_all(&logins).await;
        println!(
            "setup     {} nodes enrolled in {:.1} s, connected in {:.1} s; hub RSS idle {} KiB, enrolled {} KiB, connected {} KiB",
            total,
            enrolled_s,
            connecting.elapsed().as_secs_f64(),
            idle_rss,
            enrolled_rss,
            hub.rss_kib()
        );

        let began = Instant::now() + Duration::from_secs(1);
        let run = Arc::new(Run {
            began,
            end: began + Duration::from_secs_f64(args.seconds),
            drain_until: began + Duration::from_secs_f64(args.seconds + 60.0),
            respawned: OnceLock::new(),
        });
        let mut tasks = Vec::new();
        let mut sources = Vec::new();
        for (((n, login), session), steps) in (1u16..).zip(logins).zip(sessions).zip(plans) {
            let game = (n <= playing).then(|| games[usize::from(n) * 7 % games.len()].clone());
            sources.push((n, game));
            let key = keys[usize::from(n) - 1].clone();
            tasks.push(tokio::spawn(node(
                n,
                key,
                steps,
                run.clone(),
                login,
                session,
            )));
        }
        let baseline = tokio::spawn({
            let until = run.end;
            async move { broker_round_trips(&baseline_broker, 50.0, until).await }
        });

        // The journal stream's leader stopped, if asked: a machine that freezes.
        let mut leader_stop = None;
        if let (Some(at), Some(nats)) = (args.stop_leader_at, &nats) {
            tokio::time::sleep_until((began + Duration::from_secs_f64(at)).into()).await;
            let stream = format!("ZEITNOT_JOURNAL_{EVENT}");
            let leader = nats.wait_leader(&stream, Duration::from_secs(5));
            let stopped = Instant::now();
            nats.signal(leader, "STOP");
            tokio::time::sleep(Duration::from_secs_f64(args.stop_for)).await;
            nats.signal(leader, "CONT");
            leader_stop = Some((nats.nodes[leader].name.clone(), stopped));
        }
        // The steady hall, then the kill.
        tokio::time::sleep_until((began + Duration::from_secs(20)).into()).await;
        let me = std::process::id();
        let (cpu_from, nodes_from, from) = (hub.cpu_s(), common::cpu_seconds(me), Instant::now());
        let kill_at = began + Duration::from_secs_f64(args.kill_at);
        tokio::time::sleep_until(kill_at.into()).await;
        let steady_cpu = (hub.cpu_s() - cpu_from) / from.elapsed().as_secs_f64();
        let nodes_cpu = (common::cpu_seconds(me) - nodes_from) / from.elapsed().as_secs_f64();
        let rss_before = hub.rss_kib();
        let killed = Instant::now();
        hub.kill();
        tokio::time::sleep(Duration::from_secs_f64(args.down)).await;
        hub.respawn();
        let back = Instant::now();
        run.respawned.set(back).expect("one restart");
        hub.ready().await;
        let ready_s = back.elapsed().as_secs_f64();
        let cpu_after = (hub.cpu_s(), Instant::now());

        let mut reports = Vec::new();
        for task in tasks {
            reports.push(task.await.expect("node task"));
        }
        let cpu_after = (hub.cpu_s() - cpu_after.0) / cpu_after.1.elapsed().as_secs_f64();
        let rss_after = hub.rss_kib();
        let mut round_trips = baseline.await.expect("baseline");

        // Recovery: every node acknowledged what it had produced before the hub came back.
        let mut caught_up: Vec<Instant> = reports.iter().filter_map(|r| r.caught_up).collect();
        caught_up.sort();
        let recovered = caught_up.last().copied();
        let since_back: Vec<Duration> = caught_up.iter().map(|at| *at - back).collect();
        let lost: u64 = reports
            .iter()
            .map(|r| r.produced - r.acked + r.asked_again)
            .sum();
        let produced: u64 = reports.iter().map(|r| r.produced).sum();
        let acked_before_kill: usize = reports
            .iter()
            .map(|r| r.acks.iter().filter(|(_, ack)| *ack < killed).count())
            .sum();
        let resends: u64 = reports.iter().map(|r| r.resends).sum();
        let continue_at: u64 = reports.iter().map(|r| r.continue_at).sum();

        // Acknowledgements outside the restart: sent and acknowledged before the kill, or sent
        // after every node had caught up.
        let settled = recovered.unwrap_or(run.drain_until);
        let mut acks: Vec<Duration> = reports
            .iter()
            .flat_map(|r| r.acks.iter())
            .filter(|(sent, ack)| *ack < killed || *sent > settled)
            .map(|(sent, ack)| *ack - *sent)
            .collect();
        acks.sort();
        // The steady hall: sent from 20 s into the run (the round's start, every board's
        // first position and clock within ten seconds, is over) until the kill.
        let steady_from = began + Duration::from_secs(20);
        let mut steady: Vec<Duration> = reports
            .iter()
            .flat_map(|r| r.acks.iter())
            .filter(|(sent, ack)| *sent > steady_from && *ack < killed)
            .map(|(sent, ack)| *ack - *sent)
            .collect();
        steady.sort();
        round_trips.sort();
        let mut alerts = Vec::new();
        let mut flags_in_restart = 0;
        {
            let raised = flag_alerts.lock().unwrap();
            for (n, report) in (1u16..).zip(&reports) {
                if n <= playing {
                    continue;
                }
                let Some(sent) = report.last_sent else {
                    continue;
                };
                if (killed..settled).contains(&sent) {
                    flags_in_restart += 1;
                } else if let Some(at) = raised.get(&n) {
                    alerts.push(at.saturating_duration_since(sent));
                }
            }
        }
        alerts.sort();

        let ms = |lat: &[Duration], p| percentile(lat, p).as_secs_f64() * 1e3;
        let line = |lat: &[Duration]| {
            format!(
                "p50 {:>7.2} ms  p90 {:>7.2} ms  p99 {:>7.2} ms  max {:>8.2} ms  ({} samples)",
                ms(lat, 0.5),
                ms(lat, 0.9),
                ms(lat, 0.99),
                ms(lat, 1.0),
                lat.len()
            )
        };
        println!(
            "events    {produced} produced by the nodes, {:.0} events/s",
            produced as f64 / args.seconds
        );
        println!(
            "baseline  bare broker round trip (node -> broker -> echo -> broker -> node):  {}",
            line(&round_trips)
        );
        println!(
            "hub       publish -> durable acknowledgement, outside the restart:           {}",
            line(&acks)
        );
        println!(
            "          of which the steady hall (from 20 s to the kill):                {}",
            line(&steady)
        );
        println!(
            "ratio     hub / baseline  p50 {:.1}x  p99 {:.1}x",
            ms(&acks, 0.5) / ms(&round_trips, 0.5).max(1e-6),
            ms(&acks, 0.99) / ms(&round_trips, 0.99).max(1e-6)
        );
        println!(
            "alerts    board event -> hub -> journal -> pager (flag_fall): {} of {} ({} in the restart not counted)  {}",
            alerts.len(),
            args.flags - flags_in_restart,
            flags_in_restart,
            line(&alerts)
        );
        println!(
            "cpu       hub process {:.0} % of a core in the steady hall (20 s to the kill), {:.0} % from the restart to the end; the simulated nodes (this process) {:.0} %; hub_cpu_pct {:.0}",
            steady_cpu * 100.0,
            cpu_after * 100.0,
            nodes_cpu * 100.0,
            steady_cpu * 100.0
        );
        println!(
            "memory    hub RSS idle {} KiB, with the hall {} KiB before the kill, {} KiB at the end; rss_per_board_kib {:.1}",
            idle_rss,
            rss_before,
            rss_after,
            rss_before.saturating_sub(idle_rss) as f64 / f64::from(total)
        );
        println!(
            "restart   journal of {acked_before_kill} acknowledged events at the kill; ready_s {ready_s:.2} (replayed, answering); recovered_s {} (every node acknowledged up to date); {} of {} nodes caught up",
            recovered.map_or("never".into(), |at| format!("{:.2}", (at - back).as_secs_f64())),
            caught_up.len(),
            reports.len()
        );
        println!(
            "          nodes caught up after the restart: {}",
            line(&since_back)
        );
        if let Some((server, stopped)) = &leader_stop {
            // Lost while it was stopped, or within 10 s of its waking.
            let window = *stopped..*stopped + Duration::from_secs_f64(args.stop_for + 10.0);
            let lost_sessions: usize = reports
                .iter()
                .map(|r| r.lost_at.iter().filter(|at| window.contains(*at)).count())
                .sum();
            println!(
                "leader    the journal stream's leader ({server}) stopped (SIGSTOP) at {:.0} s for {:.0} s: {lost_sessions} board sessions lost meanwhile (or within 10 s after)",
                (*stopped - began).as_secs_f64(),
                args.stop_for
            );
        }
        let asked_again: u64 = reports.iter().map(|r| r.asked_again).sum();
        let unacked_boards = reports.iter().filter(|r| r.acked < r.produced).count();
        println!(
            "lost {lost}: {} never acknowledged (on {unacked_boards} boards), {asked_again} asked for again after their acknowledgement",
            lost - asked_again
        );
        for (n, r) in (1u16..)
            .zip(&reports)
            .filter(|(_, r)| r.acked < r.produced)
            .take(5)
        {
            println!(
                "          board {n}: produced {}, acknowledged up to {}, {} resends, {} reconnects, {} sessions lost, {} failed connects, connected at the end {}",
                r.produced, r.acked, r.resends, r.reconnects, r.sessions_lost, r.failed_connects, r.connected_at_end
            );
        }
        println!(
            "          {resends} resends after 3 s without progress, {continue_at} ContinueAt"
        );
        print_hub_counters(
            hub.http,
            &[
                "zeitnot_duplicates",
                "zeitnot_gap",
                "zeitnot_resend",
                "zeitnot_acks",
                "zeitnot_refused",
                "zeitnot_bad_payloads",
            ],
        )
        .await;

        // The independent check: every board's moves on the hub's API against the PGN.
        let client = reqwest::Client::new();
        let http = hub.http;
        // A board the hub cannot show counts as wrong.
        let mut wrong: Vec<u16> =
            futures_util::stream::iter(sources.into_iter().zip(reports.iter().map(|r| r.presses)))
                .map(|((n, game), presses)| {
                    let client = client.clone();
                    async move {
                        let game = game?;
                        let detail: Option<serde_json::Value> = async {
                            let answer = client
                                .get(format!("http://{http}/api/boards/{n}"))
                                .bearer_auth(common::TOKEN)
                                .send()
                                .await
                                .ok()?;
                            serde_json::from_slice(&answer.bytes().await.ok()?).ok()
                        }
                        .await;
                        let mut position = game.start.clone();
                        let want: Vec<String> = game.plies[..presses.min(game.plies.len())]
                            .iter()
                            .map(|p| {
                                SanPlus::from_move_and_play_unchecked(&mut position, p.m)
                                    .to_string()
                            })
                            .collect();
                        let have: Option<Vec<String>> =
                            detail.and_then(|d| serde_json::from_value(d["moves"].clone()).ok());
                        (have.as_ref() != Some(&want)).then_some(n)
                    }
                })
                .buffer_unordered(32)
                .filter_map(std::future::ready)
                .collect()
                .await;
        wrong.sort_unstable();
        println!(
            "moves     {} of {} boards as the source PGN has them{}",
            usize::from(playing) - wrong.len(),
            playing,
            if wrong.is_empty() {
                String::new()
            } else {
                format!("; differ: {:?}", &wrong[..wrong.len().min(20)])
            }
        );
    });
    std::process::exit(0);
}
