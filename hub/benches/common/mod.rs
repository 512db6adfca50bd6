//! What the process benchmarks share: free ports, real game readings, percentiles, links.

#![allow(dead_code)] // each bench uses its own part

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use board_node::{pgn, replay};
use hub::core::hub::HubConfig;
use hub::run::{self, BrokerChoice, Running, ServeConfig};
use link::{BrokerAddr, LinkEvent};
use protocol::identity;
use protocol::seal::NodeKey;
use protocol::{BoardNo, UplinkBody};

const GAMES: &[u8] = include_bytes!("../../demo/world-cup-2025-rapid.pgn");

pub fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// Each node's events: the readings of a real game, as the replay source reports them.
pub fn node_events(board: u16, events: usize) -> Vec<UplinkBody> {
    let games = pgn::read_games(GAMES).expect("demo games");
    let game = &games[usize::from(board) % games.len()];
    replay::script(game, None)
        .into_iter()
        .map(|t| t.reading.body())
        .cycle()
        .take(events)
        .collect()
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub async fn connected(events: &mut tokio::sync::mpsc::Receiver<LinkEvent>) {
    while let Some(event) = events.recv().await {
        if matches!(event, LinkEvent::Connected) {
            return;
        }
    }
}

/// A simulated board node's MQTT link: its board, client and events.
pub type NodeLink = (
    u16,
    rumqttc::AsyncClient,
    tokio::sync::mpsc::Receiver<LinkEvent>,
);

/// Connects the enrolled nodes of boards 1, 2, … (`keys`, board 1's first) of `event`, each
/// logged in as its board with its key's password, each link shaped by `options`
/// (subscriptions, capacity), and waits until every one is connected and settled.
pub async fn connect_nodes(
    broker: &BrokerAddr,
    event: &str,
    keys: &[NodeKey],
    options: impl Fn(u16, &mut link::LinkOptions),
) -> Vec<NodeLink> {
    let mut nodes = Vec::new();
    for (n, key) in (1u16..).zip(keys) {
        let board = BoardNo(n);
        let mut link_options = link::LinkOptions::new(format!(
            "{}bench",
            identity::node_client_prefix(event, board)
        ));
        link_options.credentials = Some((identity::node_user(board), identity::node_password(key)));
        link_options.seed = u64::from(n);
        options(n, &mut link_options);
        let (client, events) = link::start(broker, link_options);
        nodes.push((n, client, events));
    }
    for (_, _, events) in &mut nodes {
        connected(events).await;
    }
    settle().await;
    nodes
}

/// Runs a process benchmark's body on a multi-threaded runtime, as the hub runs.
pub fn block_on<F: std::future::Future>(body: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(body)
}

/// Lets the subscriptions queued at connect reach the broker.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Prints the hub's `/metrics` lines that start with one of `shown`.
pub async fn print_hub_counters(http: std::net::SocketAddr, shown: &[&str]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(http).await else {
        return;
    };
    let request = format!("GET /metrics HTTP/1.1\r\nHost: {http}\r\nConnection: close\r\n\r\n");
    let mut response = String::new();
    if stream.write_all(request.as_bytes()).await.is_ok()
        && stream.read_to_string(&mut response).await.is_ok()
    {
        for line in response.lines() {
            if shown.iter().any(|s| line.starts_with(s)) {
                println!("          {line}");
            }
        }
    }
}

/// Enrols the simulated nodes of `boards` (hardware `bench-N`) as a technician does, over
/// the hub's API; returns their keys, board 1's first.
pub async fn enrol_nodes(http: SocketAddr, boards: std::ops::RangeInclusive<u16>) -> Vec<NodeKey> {
    let client = reqwest::Client::new();
    let mut keys = Vec::new();
    for n in boards {
        let key =
            hub::cmd::enrol::over_http(&client, http, None, &format!("bench-{n}"), BoardNo(n))
                .await
                .expect("enrolment");
        keys.push(key);
    }
    keys
}

/// MQTT options of a pager (a screen, a witness) of `event` logged in as pagers are, with
/// the credentials the hub hands an arbiter (`POST /api/arbiters/enrol`).
pub async fn pager_login(http: SocketAddr, event: &str, name: &str) -> link::LinkOptions {
    let client = reqwest::Client::new();
    let answer = hub::cmd::enrol::arbiter_over_http(&client, http, None, name)
        .await
        .expect("the arbiter's credentials");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let mut options =
        link::LinkOptions::new(format!("{}{name}", identity::pager_client_prefix(event)));
    options.credentials = Some((
        identity::PAGER_USER.into(),
        answer["mqtt_password"].as_str().expect("a password").into(),
    ));
    options
}

/// Starts a hub in this process for event `event`: on the broker already listening on
/// `external`, else on an embedded broker of its own. The directory holds its journal.
pub async fn start_hub(event: &str, external: Option<u16>) -> (tempfile::TempDir, Running) {
    let data = tempfile::tempdir().expect("temp dir");
    let broker = match external {
        Some(port) => BrokerChoice::External(BrokerAddr {
            host: "127.0.0.1".into(),
            port,
        }),
        None => BrokerChoice::Embedded(free_addr()),
    };
    let config = ServeConfig {
        data: data.path().join("journal"),
        broker,
        http: "127.0.0.1:0".parse().unwrap(),
        arbiter_token: None,
        hosts: Vec::new(),
        config_path: None,
        hub: HubConfig {
            event: event.into(),
            ..HubConfig::default()
        },
    };
    let (ready_tx, ready) = tokio::sync::oneshot::channel();
    tokio::spawn(run::serve(config, Some(ready_tx), std::future::pending()));
    (data, ready.await.expect("hub ready"))
}
