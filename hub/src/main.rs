//! `hub`: the command line. Everything else lives in the library.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use hub::cmd::demo::{self, DemoConfig};
use hub::core::hub::HubConfig;
use hub::core::laws::{Edition, GameType, Supervision};
use hub::{BrokerChoice, ServeConfig};
use link::BrokerAddr;
use protocol::time_control::TimeControl;

#[derive(Parser)]
#[command(
    version,
    about = "Zeitnot hub: applies the Laws of Chess to every board of a hall"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the hub for a hall.
    Serve {
        /// The event's configuration (TOML): laws, time control, zones, arbiters, alerts.
        /// The flags below override what it says.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Directory of the journal (created if missing).
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// Listen address of the embedded MQTT broker.
        #[arg(long, default_value = "127.0.0.1:1883", conflicts_with = "broker")]
        mqtt: SocketAddr,
        /// Use this external broker instead of the embedded one: mqtt://HOST:PORT.
        #[arg(long)]
        broker: Option<BrokerAddr>,
        /// Listen address of the HTTP API.
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: SocketAddr,
        /// The event (tournament) id used in MQTT topics [default: the configuration's, else
        /// "default"].
        #[arg(long)]
        event: Option<String>,
        /// The edition of the FIDE Laws of Chess: 2023, 2018, 2014 or 2009 [default: 2023].
        #[arg(long)]
        laws: Option<Edition>,
        /// Every board's time control in PGN syntax: `40/5400+30:1800+30`, `900+10`,
        /// `5400+30d` (delay), `300+5b` (Bronstein); or in words, as regulations write it:
        /// "90 minutes for the first 40 moves, then 30 minutes, with 30 seconds per move".
        #[arg(long, value_parser = TimeControl::parse_any)]
        time_control: Option<TimeControl>,
        /// standard, rapid or blitz; by default from the time control (A.1, B.1), else
        /// standard.
        #[arg(long, value_enum)]
        game_type: Option<GameTypeArg>,
        /// For rapid and blitz: full (an arbiter watches every game: standard rules) or
        /// partial (2023 A.5 / B.3) [default: full].
        #[arg(long, value_enum)]
        supervision: Option<SupervisionArg>,
        /// Chess960 (Guidelines II): each board's start position is read off the board.
        #[arg(long)]
        chess960: bool,
        /// Boards whose node reports no clock: a legal move that stands this long (ms) on
        /// the board counts as completed; 0 turns the inference off.
        #[arg(long, default_value_t = hub::core::hall::DEFAULT_DEBOUNCE_MS)]
        debounce_ms: u64,
        /// The arbiters' token: the supervision page's login and the API's bearer token, at
        /// least 16 characters [default: the configuration's [access] arbiter_token; without
        /// one, the token the hub made at its first start and keeps in the data directory:
        /// `hub login-link` prints it].
        #[arg(long, env = "ZEITNOT_ARBITER_TOKEN", hide_env_values = true)]
        arbiter_token: Option<String>,
        /// What the public sees (feed, spectators' page, broadcast topics, LiveChess folder,
        /// lichess) is this many seconds behind the boards; 0 is live, and warned about
        /// [default: the configuration's [broadcast] delay_s, else 900].
        #[arg(long)]
        broadcast_delay_s: Option<u64>,
        /// Which listeners speak TLS: auto (all but those on loopback), on, off
        /// [default: the configuration's [access] tls, else auto].
        #[arg(long, value_enum)]
        tls: Option<hub::edge::tls::TlsChoice>,
        /// The CA certificate (PEM) that signed an external mqtts:// broker's certificate
        /// [default: the hall CA, which `hub broker-cert` issues the broker's from].
        #[arg(long)]
        broker_ca: Option<PathBuf>,
    },
    /// An arbiter's pager in the terminal: the zone's open alerts, the most urgent first,
    /// a bell on a new one. Type `a ID` (or `a` for the top one) to acknowledge, `r ID note`
    /// to resolve, `q` to quit.
    Pager {
        /// The zone to watch; `all` for the chief arbiter.
        #[arg(long)]
        zone: String,
        /// The broker the hub uses: HOST:PORT or mqtt://HOST:PORT.
        #[arg(long, default_value = "127.0.0.1:1883")]
        broker: BrokerAddr,
        /// The event id in MQTT topics.
        #[arg(long, default_value = "default")]
        event: String,
        /// The name acknowledgements are signed with.
        #[arg(long, default_value = "arbiter")]
        name: String,
        /// The language of the texts: en, nb, sv, da, fi, hu.
        #[arg(long, default_value = "en")]
        lang: hub::core::alerts::Language,
        /// The arbiter's credentials (`hub enrol-arbiter`): the commands are sealed with its
        /// key and the name is its arbiter's. Without it, only an open hall listens.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Everyone an external broker (Mosquitto) must let in, as `username:password` lines for
    /// `mosquitto_passwd -U` (while the hub runs: `GET /api/broker/users`). Makes the hall's
    /// secret on a first run, so the broker can be set up before the hub first starts.
    BrokerUsers {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// The event's configuration, for its bindings of hardware to boards.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Re-keys the hall on a stopped hub: a new hall secret (the hub's signing key and its
    /// Mosquitto password), every arbiter revoked (enrol each again: their key files name
    /// the old signing key), and a new arbiter token at the next start (unless configured),
    /// every page logged out. Then: `deploy/mosquitto/users.sh` for an external broker.
    RotateHallSecret {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
    },
    /// Enrols an arbiter with a new key (an earlier one of the name stops working): their
    /// pager's credentials for `hub pager --key-file`, and their own page login (while the
    /// hub runs: `POST /api/arbiters/enrol`).
    EnrolArbiter {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// The arbiter's name, as the commands are signed.
        #[arg(long)]
        arbiter: String,
        /// Write the credentials here (mode 0600) as well as printing them.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Replays real games from PGN files through the hub's core as a hall sees them and
    /// prints the alerts the arbiters would get, per 100 games by kind.
    AlertReport {
        /// PGN files of games with `[%clk]` (repeat the flag for several).
        #[arg(long, required = true)]
        pgn: Vec<PathBuf>,
        /// The games' real time control, where their `TimeControl` tags are missing or wrong
        /// [default: each game's tag].
        #[arg(long, value_parser = TimeControl::parse_any)]
        time_control: Option<TimeControl>,
        /// The edition of the Laws [default: 2023].
        #[arg(long)]
        laws: Option<Edition>,
        /// The event's configuration: its [alerts] settings are used.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Think times as a node beside the board measures them (`node`: what the clock
        /// lost), or as the broadcast stamped them (`broadcast`: each move's `%emt`).
        #[arg(long, value_enum, default_value = "node")]
        think_times: ThinkTimesArg,
    },
    /// The arbiters' login link of the hub whose data directory is `--data`: the token it
    /// made at its first start, as `http://HOST:PORT/?token=…`.
    LoginLink {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// The hub's HTTP address, as `hub serve --http` has it.
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: SocketAddr,
        /// The page is HTTPS (the default for a listener off loopback).
        #[arg(long)]
        https: bool,
    },
    /// A server certificate and key for an external broker (Mosquitto) reached as `--name`,
    /// signed by the hall CA of the hub whose data directory is `--data`: the nodes and
    /// pagers that pin the hall CA then trust the broker (deploy/mosquitto/README.md).
    BrokerCert {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// A name or IP address the broker is reached under; repeat for each.
        #[arg(long = "name", required = true)]
        names: Vec<String>,
        /// Where to write the certificate (PEM).
        #[arg(long)]
        cert: PathBuf,
        /// Where to write the key (PEM, mode 0600).
        #[arg(long)]
        key: PathBuf,
    },
    /// Enrol a node for a board on a hub that is not running (while it runs: `POST
    /// /api/nodes/enrol`): prints `{"hardware","board","key"}` and writes the key to
    /// `--key-file` for the node's own `--key-file`. Enrolling the same hardware again hands
    /// out a new key (the old one stops working) and moves it to the board given: a swap in
    /// one step.
    Enrol {
        /// Directory of the hub's journal.
        #[arg(long, default_value = "zeitnot-data")]
        data: PathBuf,
        /// The node's hardware id, as it announces it (`board-node --hardware-id`).
        #[arg(long)]
        hardware: String,
        /// The board it reports for.
        #[arg(long)]
        board: u16,
        /// Write the key here (mode 0600) as well as printing it.
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// The event's configuration, for its bindings of hardware to boards.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// The MQTT broker the hub embeds, alone and open to anyone (no logins): the baseline
    /// the benchmarks compare the hub with. Not for a hall.
    #[command(hide = true)]
    Broker {
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:1883")]
        mqtt: SocketAddr,
    },
    /// A demo hall: embedded broker, hub and simulated boards replaying real games.
    Demo {
        /// Number of simulated boards.
        #[arg(long, default_value_t = 48)]
        boards: u16,
        /// Game time runs this many times faster than real time.
        #[arg(long, default_value_t = 10.0)]
        speed: f64,
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: SocketAddr,
        #[arg(long, default_value = "127.0.0.1:1883")]
        mqtt: SocketAddr,
        /// Keep the journal and outboxes here instead of a temporary directory.
        #[arg(long)]
        data: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum GameTypeArg {
    Standard,
    Rapid,
    Blitz,
}

impl From<GameTypeArg> for GameType {
    fn from(arg: GameTypeArg) -> GameType {
        match arg {
            GameTypeArg::Standard => GameType::Standard,
            GameTypeArg::Rapid => GameType::Rapid,
            GameTypeArg::Blitz => GameType::Blitz,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ThinkTimesArg {
    Node,
    Broadcast,
}

impl From<ThinkTimesArg> for board_node::replay::ThinkTimes {
    fn from(arg: ThinkTimesArg) -> board_node::replay::ThinkTimes {
        match arg {
            ThinkTimesArg::Node => board_node::replay::ThinkTimes::AsNode,
            ThinkTimesArg::Broadcast => board_node::replay::ThinkTimes::Broadcast,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SupervisionArg {
    Full,
    Partial,
}

impl From<SupervisionArg> for Supervision {
    fn from(arg: SupervisionArg) -> Supervision {
        match arg {
            SupervisionArg::Full => Supervision::Full,
            SupervisionArg::Partial => Supervision::Partial,
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Whatever the hub writes (the journal, the token, key files) is its user's only.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    let cli = Cli::parse();
    // The hall's service logs what it does; the demo and the report print their own
    // summary, and log only what goes wrong (RUST_LOG asks for more).
    let default_filter = match cli.command {
        Command::Serve { .. } => "warn,hub=info,board_node=warn",
        Command::Pager { .. }
        | Command::Demo { .. }
        | Command::AlertReport { .. }
        | Command::Enrol { .. }
        | Command::EnrolArbiter { .. }
        | Command::RotateHallSecret { .. }
        | Command::BrokerUsers { .. }
        | Command::LoginLink { .. }
        | Command::BrokerCert { .. }
        | Command::Broker { .. } => "warn",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .init();
    match cli.command {
        Command::Serve {
            config,
            data,
            mqtt,
            broker,
            http,
            event,
            laws,
            time_control,
            game_type,
            supervision,
            chess960,
            debounce_ms,
            arbiter_token,
            broadcast_delay_s,
            tls,
            broker_ca,
        } => {
            let file = event_config(config.as_deref())?;
            let time_control = time_control.or_else(|| file.time_control.clone());
            let rules = file.rules(
                laws,
                game_type.map(Into::into),
                supervision.map(Into::into),
                chess960,
                time_control.as_ref(),
            );
            let broker = match broker {
                Some(addr) => BrokerChoice::External(addr),
                None => BrokerChoice::Embedded(mqtt),
            };
            let config = ServeConfig {
                data,
                broker,
                http,
                arbiter_token: arbiter_token.or(file.arbiter_token),
                hosts: file.hosts,
                tls: tls.or(file.tls).unwrap_or_default(),
                broker_ca,
                config_path: config.clone(),
                trfs: file.tournament.trfs,
                outlets: hub::run::Outlets {
                    folder: file.folder,
                    lichess: file.lichess,
                },
                hub: HubConfig {
                    event: event
                        .or(file.event_id.clone())
                        .unwrap_or_else(|| "default".to_owned()),
                    rules,
                    time_control,
                    sections: file.sections,
                    debounce_ms: (debounce_ms > 0).then_some(debounce_ms),
                    routing: file.routing,
                    alerts: file.alerts,
                    rounds: file.tournament.rounds,
                    broadcast: hub::core::relay::public::BroadcastSettings {
                        delay_ms: broadcast_delay_s
                            .or(file.delay_s)
                            .unwrap_or(hub::config::DEFAULT_DELAY_S)
                            * 1000,
                        ..file.broadcast
                    },
                    bindings: file.bindings,
                    open_hall: file.open_hall,
                },
            };
            hub::serve(config, None, shutdown_signal()).await
        }
        Command::Pager {
            zone,
            broker,
            event,
            name,
            lang,
            key_file,
        } => {
            let credentials = key_file
                .as_deref()
                .map(hub::cmd::pager::PagerCredentials::read)
                .transpose()?;
            hub::cmd::pager::run(hub::cmd::pager::PagerConfig {
                zone,
                broker,
                event,
                name,
                language: lang,
                credentials,
            })
            .await
        }
        Command::BrokerCert {
            data,
            names,
            cert,
            key,
        } => {
            let (cert_pem, key_pem) = hub::edge::hall_ca::issue_for(&data, &names)?;
            std::fs::write(&cert, cert_pem)
                .with_context(|| format!("writing {}", cert.display()))?;
            hub::edge::secret_file::write(&key, key_pem.trim_end())?;
            println!(
                "{} and {}: the broker's certificate for {}, signed by the hall CA {}",
                cert.display(),
                key.display(),
                names.join(", "),
                hub::edge::hall_ca::ca_file(&data).display()
            );
            Ok(())
        }
        Command::LoginLink { data, http, https } => {
            let file = hub::edge::login::token_file(&data);
            let token = hub::edge::secret_file::read(&file)?.with_context(|| {
                format!(
                    "{} has no token: the hub makes it at its first start, unless the configuration or ZEITNOT_ARBITER_TOKEN gives one",
                    file.display()
                )
            })?;
            let scheme = if https { "https" } else { "http" };
            for link in hub::edge::login::links(http, &token, scheme) {
                println!("{link}");
            }
            Ok(())
        }
        Command::BrokerUsers { data, config } => {
            let file = event_config(config.as_deref())?;
            let hub_config = HubConfig {
                bindings: file.bindings,
                ..HubConfig::default()
            };
            print!("{}", hub::run::broker_users_offline(&data, &hub_config)?);
            Ok(())
        }
        Command::RotateHallSecret { data } => {
            let revoked = hub::run::rotate_offline(&data, &HubConfig::default())?;
            println!("The hall has a new secret: the hub signs with a new key, and its Mosquitto password changed (run deploy/mosquitto/users.sh with the data directory).");
            println!("A new arbiter token is made at the next start (unless one is configured); every page is logged out.");
            if revoked.is_empty() {
                println!("No arbiter was enrolled.");
            } else {
                println!("Arbiters revoked, to enrol again (hub enrol-arbiter or POST /api/arbiters/enrol):");
                for name in revoked {
                    println!("  {}", name.escape_debug());
                }
            }
            Ok(())
        }
        Command::EnrolArbiter {
            data,
            arbiter,
            key_file,
        } => {
            anyhow::ensure!(
                !arbiter.trim().is_empty() && arbiter.chars().count() <= 64,
                "an arbiter's name of 1 to 64 characters"
            );
            let enrolment = hub::run::arbiter_offline(&data, &HubConfig::default(), &arbiter)?;
            let ca = hub::edge::hall_ca::ca_pem(&data)?;
            let json = hub::edge::login::arbiter_credentials(&enrolment, &ca).to_string();
            if let Some(path) = key_file {
                hub::edge::secret_file::write(&path, &json)?;
            }
            println!("{json}");
            Ok(())
        }
        Command::AlertReport {
            pgn,
            time_control,
            laws,
            config,
            think_times,
        } => {
            let file = event_config(config.as_deref())?;
            let mut games = Vec::new();
            let mut without_control = 0;
            for path in &pgn {
                let text =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                let read = board_node::pgn::read_games(&text)
                    .with_context(|| format!("in {}", path.display()))?;
                for game in read {
                    let tc = time_control.clone().or_else(|| {
                        game.tag("TimeControl")
                            .and_then(|t| TimeControl::parse_any(t).ok())
                    });
                    match tc {
                        Some(tc) if game.plies.iter().any(|p| p.clk_ms.is_some()) => {
                            games.push((game, tc));
                        }
                        _ => without_control += 1,
                    }
                }
            }
            if without_control > 0 {
                eprintln!("{without_control} games without a time control or clock times left out");
            }
            let edition = laws.or(file.edition).unwrap_or_default();
            let report = hub::cmd::report::run(&games, edition, &file.alerts, think_times.into());
            print!("{}", report.table());
            Ok(())
        }
        Command::Enrol {
            data,
            hardware,
            board,
            key_file,
            config,
        } => {
            let file = event_config(config.as_deref())?;
            anyhow::ensure!(
                !hardware.is_empty() && hardware.len() <= protocol::Hello::MAX_TEXT,
                "a hardware id of 1 to {} bytes",
                protocol::Hello::MAX_TEXT
            );
            anyhow::ensure!(
                board >= 1 && protocol::BoardNo(board) <= protocol::BoardNo::MAX,
                "boards are numbered 1 to {}",
                protocol::BoardNo::MAX
            );
            let hub_config = HubConfig {
                bindings: file.bindings,
                ..HubConfig::default()
            };
            let enrolled = hub::run::enrol_offline(
                &data,
                &hub_config,
                &hub::core::ids::HardwareId(hardware),
                protocol::BoardNo(board),
            )?;
            if let Some(path) = key_file {
                hub::cmd::enrol::write_key_file(&path, &enrolled.key)?;
            }
            let ca = hub::edge::hall_ca::ca_pem(&data)?;
            println!("{}", hub::cmd::enrol::answer_json(&enrolled, &ca));
            Ok(())
        }
        Command::Broker { mqtt } => {
            // The broker the hub embeds, alone and open: what the hub's figures are compared
            // with, on the same footing (a process of its own, the same configuration).
            let limit = hub::edge::descriptors::raise_limit();
            let connections = hub::edge::descriptors::broker_connections(limit);
            hub::edge::broker::start(mqtt, None, connections, None, "", None)?;
            println!("{{\"mqtt\": \"{mqtt}\", \"connections\": {connections}}}");
            shutdown_signal().await;
            Ok(())
        }
        Command::Demo {
            boards,
            speed,
            http,
            mqtt,
            data,
        } => {
            demo::run(DemoConfig {
                boards,
                speed,
                http,
                mqtt,
                data,
            })
            .await
        }
    }
}

/// The event's configuration from `--config`, or the defaults without one.
fn event_config(path: Option<&std::path::Path>) -> anyhow::Result<hub::config::EventConfig> {
    Ok(match path {
        Some(path) => hub::config::load(path)?,
        None => hub::config::EventConfig::default(),
    })
}

/// Ctrl-C or SIGTERM (systemd's stop).
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("stopping");
}
