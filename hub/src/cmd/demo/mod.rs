//! `hub demo`: a hall on the embedded broker with simulated boards replaying real games.
//!
//! The games ship inside the binary (`hub/demo/`), so the demo needs nothing but the hub.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use board_node::node::{self, NodeConfig};
use board_node::source::Feed;
use board_node::{pgn, replay};
use protocol::BoardNo;
use tokio::sync::oneshot;

use crate::cmd::enrol;
use crate::core::alerts::routing::{Arbiter, Zone};
use crate::core::alerts::{AlertSettings, Language, Routing};
use crate::core::hub::HubConfig;
use crate::core::ids::RoundNo;
use crate::core::laws::{GameType, Rules};
use crate::core::pairings::{Pairing, Rounds, Seat};
use crate::run::{self, BrokerChoice, ServeConfig};

mod incidents;
mod summary;

/// Real rapid games (15 min + 10 s), FIDE World Cup 2025.
const GAMES: &[u8] = include_bytes!("../../../demo/world-cup-2025-rapid.pgn");

/// `hub demo`'s command line.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoConfig {
    /// Number of simulated boards.
    #[arg(long, default_value_t = 48)]
    pub boards: u16,
    /// Game time runs this many times faster than real time.
    #[arg(long, default_value_t = 10.0)]
    pub speed: f64,
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub http: SocketAddr,
    #[arg(long, default_value = "127.0.0.1:1883")]
    pub mqtt: SocketAddr,
    /// Keep the journal and outboxes here instead of a temporary directory.
    #[arg(long)]
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

/// Four zones of a quarter of the boards each, an arbiter for each (in the languages of our
/// Laws texts) and a chief arbiter.
fn routing(boards: u16) -> Routing {
    let quarter = boards.div_ceil(4).max(1);
    let names = ["A", "B", "C", "D"];
    let languages = [
        Language::English,
        Language::Norwegian,
        Language::Swedish,
        Language::Danish,
    ];
    let zones = (0..4u16)
        .map(|k| Zone {
            name: names[usize::from(k)].into(),
            boards: vec![BoardNo(k * quarter + 1)..=BoardNo((k + 1) * quarter)],
        })
        .collect();
    let mut arbiters: Vec<Arbiter> = (0..4)
        .map(|k| Arbiter {
            name: format!("arbiter-{}", names[k].to_lowercase()),
            zones: vec![names[k].into()],
            language: languages[k],
            chief: false,
        })
        .collect();
    arbiters.push(Arbiter {
        name: "chief-arbiter".into(),
        zones: Vec::new(),
        language: Language::English,
        chief: true,
    });
    Routing { zones, arbiters }
}

/// What happens where: one incident in each zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Incident {
    FlagFall,
    IllegalMove,
    PausedClock,
    NodeDropsOut,
}

impl Incident {
    const ALL: [Incident; 4] = [
        Incident::FlagFall,
        Incident::IllegalMove,
        Incident::PausedClock,
        Incident::NodeDropsOut,
    ];

    fn name(self) -> &'static str {
        match self {
            // FIDE's numbering, as the alerts say it: plies 24, 16 and 20 of the script.
            Incident::FlagFall => "a flag falls: White's, thinking after 12…",
            Incident::IllegalMove => "an illegal move: White's move 9, after 8…",
            Incident::PausedClock => "a player stops the clock after 10…",
            Incident::NodeDropsOut => "the node drops out after 10… for 25 s",
        }
    }
}

/// Round 1's pairings: the players of the game each board replays, from its PGN tags.
fn pairings(games: &[pgn::PgnGame], boards: u16) -> Rounds {
    let seat = |game: &pgn::PgnGame, side: &str| Seat {
        name: game.tag(side).unwrap_or("?").to_owned(),
        fide_id: game
            .tag(&format!("{side}FideId"))
            .and_then(|v| v.parse().ok()),
        rating: game.tag(&format!("{side}Elo")).and_then(|v| v.parse().ok()),
        title: game.tag(&format!("{side}Title")).map(str::to_owned),
        federation: game.tag(&format!("{side}Fed")).map(str::to_owned),
        start_rank: 0,
    };
    let round = (1..=boards)
        .map(|n| {
            let game = &games[usize::from(n - 1) % games.len()];
            Pairing {
                board: BoardNo(n),
                white: seat(game, "White"),
                black: seat(game, "Black"),
                result: "*".to_owned(),
                white_team: None,
                black_team: None,
                section: None,
            }
        })
        .collect();
    Rounds {
        pairings: [(RoundNo::FIRST, round)].into(),
        first: Some(RoundNo::FIRST),
        starts: Default::default(),
        byes: Default::default(),
    }
}

/// The board of each incident: the first board of each zone.
fn incident_at(board: u16, boards: u16) -> Option<Incident> {
    let quarter = boards.div_ceil(4).max(1);
    let k = (board - 1) / quarter;
    (board - 1)
        .is_multiple_of(quarter)
        .then(|| Incident::ALL[usize::from(k.min(3))])
}

/// How long a dropped-out node stays away (wall time).
const DROPOUT: Duration = Duration::from_secs(25);

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
        // The demo's own token, new each time: its login link is printed below.
        arbiter_token: Some(crate::edge::keys::arbiter_token::new_token()),
        hosts: Vec::new(),
        tls: crate::config::tls::TlsChoice::Auto,
        mqtt5: None,
        broker_ca: None,
        config_path: None,
        cluster: None,
        hub: HubConfig {
            event: "demo".into(),
            // The demo games are rapid games (15 min + 10 s) in a fully supervised hall.
            rules: Rules {
                game_type: GameType::Rapid,
                ..Rules::default()
            },
            time_control: Some("900+10".parse().expect("a valid time control")),
            sections: Vec::new(),
            debounce_ms: Some(crate::core::hall::DEFAULT_DEBOUNCE_MS),
            routing: routing(config.boards),
            alerts: AlertSettings::default(),
            rounds: pairings(&games, config.boards),
            bindings: Default::default(),
            // The simulated nodes are enrolled below, as a technician enrols real ones.
            open_hall: false,
            broadcast: crate::core::relay::public::BroadcastSettings {
                event_name: Some("Zeitnot demo hall".into()),
                site: Some("Zeitnot".into()),
                delay_ms: 0,
                flag_results_at_once: false,
            },
        },
        trfs: Default::default(),
        standings: Default::default(),
        outlets: Default::default(),
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
    println!(
        "  page:     http://{}/?token={}  (the chief arbiter's screen: the link logs in)",
        running.http, running.token
    );
    println!(
        "  public:   http://{}/spectator  (what spectators see)",
        running.http
    );
    // Every line below runs as printed: the API needs the token, the pager the binary.
    let curl = |path: &str| {
        format!(
            "curl -H 'Authorization: Bearer {}' http://{}{path}",
            running.token, running.http
        )
    };
    println!("  boards:   {}", curl("/api/boards"));
    println!("  board 1:  {}", curl("/api/boards/1"));
    println!("  clocks:   {}", curl("/api/time-trouble"));
    println!("  alerts:   {}", curl("/api/alerts?state=open"));
    println!("  metrics:  {}", curl("/metrics"));
    println!(
        "  MQTT:     mqtt://{}  (topics zeitnot/demo/board/N/up|down)",
        running.broker
    );
    // The chief arbiter's pager credentials, as `POST /api/arbiters/enrol` hands them out.
    let client = reqwest::Client::new();
    let pager_file = data.join("pager-chief.json");
    let credentials =
        enrol::arbiter_over_http(&client, running.http, &running.token, "chief-arbiter")
            .await
            .context("enrolling the chief arbiter's pager")?;
    crate::edge::keys::secret_file::write(&pager_file, &credentials)?;
    // This very binary: `hub` is on no PATH after `cargo run`.
    let binary = std::env::current_exe().map_or_else(|_| "hub".into(), |p| p.display().to_string());
    println!(
        "  pager:    {binary} pager --zone all --event demo --broker {} --key-file {}",
        running.broker,
        pager_file.display()
    );
    // Any MQTT client as a pager: the same login, the client id its key file names.
    let key: serde_json::Value = serde_json::from_str(&credentials).context("an enrolment")?;
    let field = |name: &str| key[name].as_str().unwrap_or_default().to_owned();
    let tls = if running.broker.tls {
        let ca = data.join("hall-ca.pem");
        std::fs::write(&ca, field("ca")).context("writing the hall CA for mosquitto_sub")?;
        format!(" --cafile {}", ca.display())
    } else {
        String::new()
    };
    println!(
        "  MQTT pager: mosquitto_sub -h {} -p {}{tls} -v -u {} -P {} -i {}demo -t 'zeitnot/demo/alerts/#'",
        running.broker.host,
        running.broker.port,
        field("mqtt_user"),
        field("mqtt_password"),
        field("mqtt_client_id_prefix"),
    );
    // Zone A's arbiter's phone: the phone view, and the ntfy app's subscription.
    let phone = enrol::arbiter_over_http(&client, running.http, &running.token, "arbiter-a")
        .await
        .context("enrolling zone A's arbiter")?;
    let phone: serde_json::Value = serde_json::from_str(&phone).context("an enrolment")?;
    let phone = &phone["phone"];
    println!(
        "  phone:    {}  (zone A's arbiter; open it in a phone-sized window)",
        phone["url"].as_str().unwrap_or_default()
    );
    println!(
        "  ntfy:     server {} topic {} token {}",
        phone["ntfy"]["server"].as_str().unwrap_or_default(),
        phone["ntfy"]["topic"].as_str().unwrap_or_default(),
        phone["ntfy"]["token"].as_str().unwrap_or_default()
    );

    for n in 1..=config.boards {
        if let Some(incident) = incident_at(n, config.boards) {
            println!("  board {n:>3}: {}", incident.name());
        }
    }
    println!("Ctrl-C stops the hall. Every 10 s, what it is doing:");
    tokio::spawn(summary::print_every_while(
        running.http,
        running.token.clone(),
    ));

    for n in 1..=config.boards {
        let game = &games[usize::from(n - 1) % games.len()];
        let board_hw = format!("demo-board-{n}");
        let key = enrol::over_http(&client, running.http, &running.token, &board_hw, BoardNo(n))
            .await
            .with_context(|| format!("enrolling the node of board {n}"))?;
        let node = NodeConfig {
            board: BoardNo(n),
            event: "demo".into(),
            broker: running.broker.clone().into(),
            outbox: data.join(format!("node-{n}")),
            speed: config.speed,
            heartbeat: Some(Duration::from_secs(5)),
            exit_when_done: false,
            script: None,
            board_hw,
            clock_hw: format!("demo-clock-{n}"),
            key: Some(key),
            tls: None,
        };
        let script = replay::script(game, None);
        let incident = incident_at(n, config.boards);
        let script = match incident {
            Some(Incident::FlagFall) => incidents::flag_fall_after(script, 24),
            Some(Incident::IllegalMove) => incidents::illegal_move_after(script, 16),
            Some(Incident::PausedClock) => incidents::pause_after(script, 20, 60_000),
            Some(Incident::NodeDropsOut) | None => script,
        };
        // The node that drops out stops when its move 20 is due and comes back later
        // on the same outbox, as a rebooted node does.
        let dropout = (incident == Some(Incident::NodeDropsOut))
            .then(|| incidents::time_of(&script, 20))
            .flatten()
            .map(|game_ms| Duration::from_secs_f64(game_ms as f64 / 1000.0 / config.speed));
        tokio::spawn(async move {
            let result = match dropout {
                Some(after) => {
                    let first = node::run(
                        node.clone(),
                        Feed::Script(script.clone()),
                        tokio::time::sleep(after),
                    )
                    .await;
                    tokio::time::sleep(DROPOUT).await;
                    match first {
                        Ok(_) => {
                            node::run(node, Feed::Script(script), std::future::pending()).await
                        }
                        Err(e) => Err(e),
                    }
                }
                None => node::run(node, Feed::Script(script), std::future::pending()).await,
            };
            if let Err(e) = result {
                tracing::error!(board = n, error = %e, "simulated board stopped");
            }
        });
    }
    hub.await.context("the hub task failed")?
}
