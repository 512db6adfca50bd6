//! `hub serve`: the command line merged over the event's configuration, in one place, and
//! the hub run until it is stopped.

use std::net::SocketAddr;
use std::path::PathBuf;

use link::Brokers;
use protocol::time_control::TimeControl;

use crate::config::tls::TlsChoice;
use crate::config::{EventConfig, DEFAULT_DELAY_S};
use crate::core::hall::DEFAULT_DEBOUNCE_MS;
use crate::core::hub::HubConfig;
use crate::core::laws::{Edition, GameType, Supervision};
use crate::core::relay::public::BroadcastSettings;
use crate::run::{BrokerChoice, ClusterSettings, Outlets, ServeConfig};

/// `hub serve`'s command line.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The event's configuration (TOML): laws, time control, zones, arbiters, alerts.
    /// The flags below override what it says.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Directory of the journal (created if missing).
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// Listen address of the embedded MQTT broker.
    #[arg(long, default_value = "127.0.0.1:1883", conflicts_with = "broker")]
    pub mqtt: SocketAddr,
    /// Also a listener of the embedded broker for MQTT 5 clients, here (none by default;
    /// `--mqtt` speaks MQTT 3.1.1 and tells an MQTT 5 client so, CONNACK 0x84).
    #[arg(long, conflicts_with = "broker")]
    pub mqtt5: Option<SocketAddr>,
    /// Use this external broker instead of the embedded one: mqtt://HOST:PORT; a
    /// cluster's nodes as ADDR,ADDR,…, tried in turn.
    #[arg(long)]
    pub broker: Option<Brokers>,
    /// Listen address of the HTTP API.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub http: SocketAddr,
    /// The event (tournament) id used in MQTT topics [default: the configuration's, else
    /// "default"].
    #[arg(long)]
    pub event: Option<String>,
    /// The edition of the FIDE Laws of Chess: 2023, 2018, 2014 or 2009 [default: 2023].
    #[arg(long)]
    pub laws: Option<Edition>,
    /// Every board's time control in PGN syntax: `40/5400+30:1800+30`, `900+10`,
    /// `5400+30d` (delay), `300+5b` (Bronstein); or in words, as regulations write it:
    /// "90 minutes for the first 40 moves, then 30 minutes, with 30 seconds per move".
    #[arg(long, value_parser = TimeControl::parse_any)]
    pub time_control: Option<TimeControl>,
    /// standard, rapid or blitz; by default from the time control (A.1, B.1), else
    /// standard.
    #[arg(long, value_enum)]
    pub game_type: Option<GameTypeArg>,
    /// For rapid and blitz: full (an arbiter watches every game: standard rules) or
    /// partial (2023 A.5 / B.3) [default: full].
    #[arg(long, value_enum)]
    pub supervision: Option<SupervisionArg>,
    /// Chess960 (Guidelines II): each board's start position is read off the board.
    #[arg(long)]
    chess960: bool,
    /// Boards whose node reports no clock: a legal move that stands this long (ms) on
    /// the board counts as completed; 0 turns the inference off.
    #[arg(long, default_value_t = DEFAULT_DEBOUNCE_MS)]
    pub debounce_ms: u64,
    /// The arbiters' token: the supervision page's login and the API's bearer token, at
    /// least 16 characters [default: the configuration's [access] arbiter_token; without
    /// one, the token the hub made at its first start and keeps in the data directory:
    /// `hub login-link` prints it].
    #[arg(long, env = "ZEITNOT_ARBITER_TOKEN", hide_env_values = true)]
    pub arbiter_token: Option<String>,
    /// What the public sees (feed, spectators' page, broadcast topics, LiveChess folder,
    /// lichess) is this many seconds behind the boards; 0 is live, and warned about
    /// [default: the configuration's [broadcast] delay_s, else 900].
    #[arg(long)]
    pub broadcast_delay_s: Option<u64>,
    /// Which listeners speak TLS: auto (all but those on loopback), on, off
    /// [default: the configuration's [access] tls, else auto].
    #[arg(long, value_enum)]
    pub tls: Option<TlsChoice>,
    /// A hub of a clustered hall: the NATS servers (nats://[USER:PASSWORD@]HOST:PORT,…),
    /// whose replicated stream holds the journal. Of the hubs started with the same
    /// cluster one is active, the others standbys that take over when it dies. The boards
    /// reach the cluster's MQTT gateways (--broker; default: port 1883 on each NATS host).
    /// This hub's own machine's server first. Its login in the environment keeps it out of
    /// the process list: ZEITNOT_CLUSTER=nats://zeitnot-cluster:PASSWORD@A:4222,…
    #[arg(
        long,
        value_delimiter = ',',
        env = "ZEITNOT_CLUSTER",
        hide_env_values = true
    )]
    pub cluster: Vec<String>,
    /// This hub's name in its cluster [default: the host's name and the HTTP port].
    #[arg(long)]
    pub hub_name: Option<String>,
    /// The CA certificate (PEM) that signed an external mqtts:// broker's certificate
    /// [default: the hall CA, which `hub broker-cert` issues the broker's from].
    #[arg(long)]
    pub broker_ca: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum GameTypeArg {
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

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SupervisionArg {
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

/// The event's configuration from `--config`, or the defaults without one.
pub fn event_config(path: Option<&std::path::Path>) -> anyhow::Result<EventConfig> {
    Ok(match path {
        Some(path) => crate::config::load(path)?,
        None => EventConfig::default(),
    })
}

impl ServeArgs {
    /// What the hub serves with: each flag given over what the configuration file says,
    /// the file over the defaults.
    pub fn merged(self) -> anyhow::Result<ServeConfig> {
        let file = event_config(self.config.as_deref())?;
        let time_control = self.time_control.or_else(|| file.time_control.clone());
        let rules = file.rules(
            self.laws,
            self.game_type.map(Into::into),
            self.supervision.map(Into::into),
            self.chess960,
            time_control.as_ref(),
        );
        let cluster = (!self.cluster.is_empty()).then(|| ClusterSettings {
            hub: self
                .hub_name
                .clone()
                .unwrap_or_else(|| format!("{}:{}", crate::run::host_name(), self.http.port())),
            urls: self.cluster.clone(),
            replicas: crate::edge::cluster::nats::REPLICAS,
        });
        let broker = match (self.broker, &cluster) {
            (Some(addr), _) => BrokerChoice::External(addr),
            (None, Some(cluster)) => BrokerChoice::External(gateways(&cluster.urls)?),
            (None, None) => BrokerChoice::Embedded(self.mqtt),
        };
        let delay_s = self
            .broadcast_delay_s
            .or(file.delay_s)
            .unwrap_or(DEFAULT_DELAY_S);
        Ok(ServeConfig {
            data: self.data,
            broker,
            http: self.http,
            arbiter_token: self.arbiter_token.or(file.arbiter_token),
            hosts: file.hosts,
            tls: self.tls.or(file.tls).unwrap_or_default(),
            mqtt5: self.mqtt5,
            broker_ca: self.broker_ca,
            config_path: self.config,
            cluster,
            trfs: file.tournament.trfs,
            standings: file.standings,
            outlets: Outlets {
                folder: file.folder,
                lichess: file.lichess,
                ftp: file.ftp,
            },
            hub: HubConfig {
                event: self
                    .event
                    .or(file.event_id)
                    .unwrap_or_else(|| "default".to_owned()),
                rules,
                time_control,
                sections: file.sections,
                debounce_ms: (self.debounce_ms > 0).then_some(self.debounce_ms),
                routing: file.routing,
                alerts: file.alerts,
                rounds: file.tournament.rounds,
                broadcast: BroadcastSettings {
                    delay_ms: delay_s * 1000,
                    ..file.broadcast
                },
                bindings: file.bindings,
                open_hall: file.open_hall,
            },
        })
    }
}

/// The cluster's MQTT gateways when none are given: port 1883 on each NATS server's host.
fn gateways(urls: &[String]) -> anyhow::Result<Brokers> {
    let hosts: Vec<String> = urls
        .iter()
        .map(|url| {
            let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            let host = rest.rsplit_once(':').map_or(rest, |(host, _)| host);
            format!("{host}:1883")
        })
        .collect();
    hosts
        .join(",")
        .parse()
        .map_err(|e| anyhow::anyhow!("the cluster's MQTT gateways: {e}"))
}

/// Runs the hub until `shutdown` resolves.
pub async fn run(
    args: ServeArgs,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    crate::run::serve(args.merged()?, None, shutdown).await
}
