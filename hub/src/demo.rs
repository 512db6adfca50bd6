//! `hub demo`: a hall on the embedded broker with simulated boards replaying real games.
//!
//! The games ship inside the binary (`hub/demo/`), so the demo needs nothing but the hub.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use board_node::node::{self, NodeConfig};
use board_node::{pgn, replay};
use protocol::BoardNo;
use tokio::sync::oneshot;

use crate::core::alerts::{AlertSettings, Routing};
use crate::core::laws::{GameType, Rules};
use crate::run::{self, BrokerChoice, ServeConfig};

/// Real rapid games (15 min + 10 s), FIDE World Cup 2025.
const GAMES: &[u8] = include_bytes!("../demo/world-cup-2025-rapid.pgn");

#[derive(Debug, Clone)]
pub struct DemoConfig {
    pub boards: u16,
    pub speed: f64,
    pub http: SocketAddr,
    pub mqtt: SocketAddr,
    /// Where the journal and the simulated nodes' outboxes go; a fresh temporary directory
    /// when `None`.
    pub data: Option<PathBuf>,
}

/// `addr` if it is free, else the same IP with a port the system picks.
fn free_or_ephemeral(addr: SocketAddr) -> anyhow::Result<SocketAddr> {
    match TcpListener::bind(addr) {
        Ok(_) => Ok(addr),
        Err(_) => {
            let listener = TcpListener::bind(SocketAddr::new(addr.ip(), 0))?;
            let picked = listener.local_addr()?;
            eprintln!("note: {addr} is taken, using {picked}");
            Ok(picked)
        }
    }
}

pub async fn run(config: DemoConfig) -> anyhow::Result<()> {
    let games = pgn::read_games(GAMES).context("reading the demo games")?;
    let (_temp, data) = match &config.data {
        Some(dir) => (None, dir.clone()),
        None => {
            let temp = tempfile::tempdir().context("creating a temporary directory")?;
            let path = temp.path().to_owned();
            (Some(temp), path)
        }
    };
    let serve = ServeConfig {
        data: data.join("journal"),
        broker: BrokerChoice::Embedded(free_or_ephemeral(config.mqtt)?),
        http: free_or_ephemeral(config.http)?,
        event: "demo".into(),
        // The demo games are rapid games (15 min + 10 s) in a fully supervised hall.
        rules: Rules {
            game_type: GameType::Rapid,
            ..Rules::default()
        },
        time_control: Some("900+10".parse().expect("a valid time control")),
        debounce_ms: Some(crate::core::hall::DEFAULT_DEBOUNCE_MS),
        routing: Routing::default(),
        alerts: AlertSettings::default(),
        rounds: Default::default(),
    };
    let (ready_tx, ready) = oneshot::channel();
    let hub = tokio::spawn(run::serve(serve, Some(ready_tx), async {
        let _ = tokio::signal::ctrl_c().await;
    }));
    let running = ready.await.context("the hub did not start")?;

    println!(
        "Zeitnot demo hall: {} boards replaying real rapid games at {}x",
        config.boards, config.speed
    );
    println!("  boards:   http://{}/api/boards", running.http);
    println!("  board 1:  http://{}/api/boards/1", running.http);
    println!("  clocks:   http://{}/api/time-trouble", running.http);
    println!("  alerts:   http://{}/api/alerts?state=open", running.http);
    println!("  metrics:  http://{}/metrics", running.http);
    println!(
        "  MQTT:     mqtt://{}  (topics zeitnot/demo/board/N/up|down)",
        running.broker
    );
    println!(
        "  pager:    hub pager --zone all --event demo --broker {}",
        running.broker
    );
    println!("Ctrl-C stops the hall.");

    for n in 1..=config.boards {
        let game = &games[usize::from(n - 1) % games.len()];
        let node = NodeConfig {
            board: BoardNo(n),
            event: "demo".into(),
            broker: running.broker.clone(),
            outbox: data.join(format!("node-{n}")),
            speed: config.speed,
            heartbeat: Some(Duration::from_secs(5)),
            exit_when_done: false,
            board_hw: format!("demo-board-{n}"),
            clock_hw: format!("demo-clock-{n}"),
        };
        let script = replay::script(game, None);
        tokio::spawn(async move {
            let shutdown = std::future::pending();
            if let Err(e) = node::run(node, script, shutdown).await {
                tracing::error!(board = n, error = %e, "simulated board stopped");
            }
        });
    }
    hub.await.context("the hub task failed")?
}
