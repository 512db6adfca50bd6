//! The shell: builds the hub's core ([`Hub`](crate::core::hub::Hub)) and its edges, feeds the core what arrives
//! (uplinks, pager commands, the API's requests, the journal's durable points, the time)
//! and carries out what the core asks, in order: journal writes, downlinks, publications,
//! answers. It decides nothing; [`live`] and [`feed`] present what the core knows to the
//! supervision pages, the LiveChess folder and lichess.
//!
//! ```text
//! MQTT ──► decode ──► Hub::handle_uplink ─┐        ┌─► Journal::write ─► Flusher ─► Hub::handle_durable
//! HTTP ──► Query ───► Hub::handle_* ──────┼─► poll_output ─► Downlink, Publish, AlertChanged ─► MQTT, phones
//! timer ──────────► Hub::handle_timeout ──┘        └─► Reply ─► HTTP
//! ```
//! Startup is the same fold: the journal's records go through [`Hub::restore`](crate::core::hub::Hub::restore).
//!
//! - `serve` (here) wires: [`startup`] opens what the hall meets (certificates, the broker,
//!   the page's access), [`shell`] runs the loop.
//! - The shell's members: [`intake`], messages off the wire and the core's counts;
//!   [`requests`], the API's changes waiting for the core; [`admit`], who the broker and
//!   the page let in; [`live`], the supervision pages' streams; [`phones`], the arbiters'
//!   phones' streams; [`restore`]: the core folded over the journal.
//! - [`journal`], [`clock`], [`pairings`], [`refusals`]: the journal's link, the hub's time,
//!   the pairing files followed, refusals logged once per source.
//! - [`cluster`]: joining a clustered hall; [`cluster_news`]: the turn the cluster's news
//!   gives the shell (take over, stand by, keep a standby's core warm).

mod admit;
pub(crate) mod clock;
mod cluster;
mod cluster_news;
mod feed;
mod intake;
mod journal;
mod live;
mod pairings;
mod phones;
mod refusals;
mod requests;
pub(crate) mod restore;
mod shell;
mod startup;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use link::{BrokerAddr, Brokers};
use tokio::sync::{mpsc, oneshot};

use self::admit::Admission;
use self::clock::HubClock;
use self::journal::JournalLink;
use self::restore::restored_hub;
use self::shell::Shell;
use crate::config::tls::TlsChoice;
use crate::core::hub::HubConfig;
use crate::edge::keys::arbiter_token;
pub use crate::edge::outlets::OutletsConfig as Outlets;
use crate::metrics::Metrics;
use crate::pairings::Trfs;
pub use cluster::{host_name, ClusterSettings};
pub use restore::restore;

/// Which broker the hub uses.
#[derive(Debug, Clone)]
pub enum BrokerChoice {
    /// Start rumqttd inside the hub, listening here.
    Embedded(SocketAddr),
    /// Connect to a broker that runs elsewhere (Mosquitto; a cluster's nodes, tried in
    /// turn).
    External(Brokers),
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The sled journal's directory.
    pub data: PathBuf,
    pub broker: BrokerChoice,
    pub http: SocketAddr,
    /// The arbiters' view answers only to this token; `None`: the one the hub made at its
    /// first start and keeps in `data` (`edge::keys::arbiter_token`).
    pub arbiter_token: Option<String>,
    /// Names the hub is reached under besides its IP addresses and `localhost`
    /// (`[access] hosts`); a request for any other host is refused. The hub's certificate
    /// names them.
    pub hosts: Vec<String>,
    /// Which listeners speak TLS (`[access] tls`): by default all but loopback's.
    pub tls: TlsChoice,
    /// A second listener of the embedded broker, speaking MQTT 5 (`--mqtt5`; none by
    /// default): the same logins, topics and refusals, in MQTT 5's reason codes.
    pub mqtt5: Option<SocketAddr>,
    /// The CA that signed an external `mqtts://` broker's certificate; `None`: the hall CA
    /// (`hub broker-cert` issues the broker's).
    pub broker_ca: Option<PathBuf>,
    /// The event, its Laws, clocks, alerts, rounds and broadcast.
    pub hub: HubConfig,
    /// The pairing program's TRFs the results go back into (`GET /api/results.trf`): the
    /// hall's (`None`) and each section's.
    pub trfs: Trfs,
    /// How the standings rank the players (`[standings]`).
    pub standings: crate::core::standings::Settings,
    /// Where the feed goes besides the API: a LiveChess folder, a lichess round.
    pub outlets: Outlets,
    /// The configuration file it was read from: its pairing files are read again when they
    /// change and before a round starts.
    pub config_path: Option<PathBuf>,
    /// A hub of a clustered hall: the journal on the NATS cluster, active or standby
    /// (`None`: the hall's one hub, its journal its own).
    pub cluster: Option<ClusterSettings>,
}

/// How often the supervision pages get what changed, and the LiveChess folder and lichess
/// what the feed shows.
const PAGES_EVERY: Duration = Duration::from_millis(250);

/// How often the pagers' retained messages (every zone's open list, the hub's status) are
/// signed and published again, so that a pager can tell a fresh list from one held back.
const REPUBLISH_EVERY: Duration = Duration::from_secs(30);

/// How often the pairing files are looked at for the next round's pairings.
const PAIRINGS_EVERY: Duration = Duration::from_secs(5);

/// The most messages from the broker taken in one turn of the loop, before what they caused
/// is carried out: enough to share a turn's cost under load, few enough that the loop's
/// other work (flushes reported, the pages, the API) waits a fraction of a millisecond.
const BATCH: usize = 64;

/// Where a started hub can be reached.
#[derive(Debug, Clone)]
pub struct Running {
    pub http: SocketAddr,
    pub broker: BrokerAddr,
    /// The arbiters' token.
    pub token: String,
    /// The page and API are HTTPS.
    pub https: bool,
}

/// Runs the hub until `shutdown` resolves. `ready` learns the bound addresses.
pub async fn serve(
    config: ServeConfig,
    ready: Option<oneshot::Sender<Running>>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    startup::check(&config)?;
    let metrics = Arc::new(Metrics::default());
    let (durable_tx, durable) = mpsc::unbounded_channel();
    let mut journal = JournalLink::open(config.data.clone(), metrics.clone(), durable_tx)?;
    let http_listener = startup::bind_http(&config).await?;
    // A cluster's hub takes the hall's secrets from the stream before anything uses them.
    let cluster_link = match &config.cluster {
        Some(settings) => {
            let http = http_listener.local_addr()?;
            Some(cluster::join(&config, settings, http, &mut journal, &metrics).await?)
        }
        None => None,
    };
    let opened = journal.journal().expect("a journal just opened");
    let mut clock = HubClock::default();
    let (mut hub, restored) = restored_hub(&config.hub, opened, &metrics, &mut clock)?;
    startup::log_replayed(&restored);
    if cluster_link.is_none() {
        // The pairing file may have been corrected while the hub was down.
        hub.take_corrections(clock.now());
    }
    let secrets = startup::Secrets::of(opened)?;
    let hall_tls = startup::hall_tls(&config)?;
    let mut admission = Admission::new(startup::broker_users(&config));
    admission.nodes(&hub);
    let (broker, (link, incoming), cluster) = match cluster_link {
        None => {
            let (broker, session) = startup::connect_broker(
                &config,
                &secrets,
                &hall_tls,
                admission.users().cloned(),
                None,
                &metrics,
            )?;
            (broker, session, None)
        }
        Some(link) => {
            let (broker, session, role) =
                cluster::ready(&config, link, secrets, &hall_tls, &metrics)?;
            (broker, session, Some(role))
        }
    };
    let (queries_tx, queries) = mpsc::channel(256);
    let (token, token_source) =
        arbiter_token::arbiter_token(&config.data, config.arbiter_token.clone())?;
    let access = startup::page_access(&config, &token)?;
    admission.arbiters(&access, &hub);
    startup::warn_of_choices(&config);
    let standby = match &cluster {
        Some(role) => role.door.subscribe(),
        None => crate::edge::http::standby_door::never(),
    };
    let (http, server) = startup::http(
        &config,
        http_listener,
        &hall_tls,
        queries_tx,
        &metrics,
        &access,
        standby,
    )
    .await?;
    let server = tokio::spawn(server);
    let running = startup::announce(&config, http, broker, token, token_source);
    if let Some(ready) = ready {
        let _ = ready.send(running);
    }
    let parts = shell::Parts {
        hub,
        journal,
        link,
        metrics,
        clock,
        admission,
        access,
        cluster,
    };
    let result = Shell::new(config, parts)
        .run(incoming, durable, queries, shutdown)
        .await;
    server.abort();
    result
}
