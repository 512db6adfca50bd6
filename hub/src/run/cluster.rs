//! A hub of a clustered hall (`hub serve --cluster`): it joins the cluster with the hall's
//! secrets from its data directory (the first hub's, or `hub cluster-join`'s), proves them
//! on the journal stream's first record, and follows the role the cluster gives it
//! ([`crate::edge::cluster::journal`]).
//!
//! - A **standby** refuses every change (503 with the active hub's address), takes nothing
//!   from MQTT (it holds no session: the active hub does), and keeps its core warm: rebuilt
//!   from its own journal, which the stream fills, at most every [`WARM_EVERY`], so its page
//!   and API show the hall as the active hub wrote it.
//! - Becoming **active**, its journal holds the whole stream: the core is built from it as
//!   at a start, and the hub takes the MQTT session over from the gateway (same client id,
//!   persistent: what the boards sent meanwhile waits there, and the rest the nodes resend).
//! - Stepping down, it drops the session at once and is a standby again.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use link::BrokerAddr;
use tokio::sync::watch;

use super::journal::JournalLink;
use super::startup::{self, Secrets};
use super::{BrokerChoice, ServeConfig};
use crate::edge::cluster::jetstream::LeaseStore;
use crate::edge::cluster::journal::{self, ClusterLink};
use crate::edge::cluster::lease::Lease;
use crate::edge::cluster::nats::Cluster;
use crate::edge::cluster::role::{ClusterNews, Role, Status};
use crate::edge::cluster::seal::{Foreign, JournalSeal};
use crate::edge::keys::hall_ca::HallTls;
use crate::edge::mqtt::client::{HubLink, Incoming};
use crate::metrics::Metrics;

/// How often at most a standby rebuilds its core from what the stream brought; a rebuild
/// that takes long waits five times its own time before the next, so that a standby of a
/// large hall keeps most of a core free for its tail (and for taking over).
pub const WARM_EVERY: Duration = Duration::from_secs(1);

/// How long a starting hub tries to join its cluster before it gives up (and its service
/// manager starts it again).
const JOIN_WITHIN: Duration = Duration::from_secs(120);

/// `hub serve --cluster`'s settings.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// The NATS servers, `nats://[USER:PASSWORD@]HOST:PORT`.
    pub urls: Vec<String>,
    /// This hub's name in the lease and in `/api/cluster`.
    pub hub: String,
    /// The journal stream's replicas (3; a lab of one server takes 1).
    pub replicas: usize,
}

/// Connects to the cluster and opens the journal stream's first record with this hub's
/// hall secret (writing it, sealed, if the stream is new): a hub without the hall's secrets
/// stops here, with what to do. Returns the journal task's link; the hub starts as a
/// standby.
pub(super) async fn join(
    config: &ServeConfig,
    settings: &ClusterSettings,
    http: SocketAddr,
    journal: &mut JournalLink,
    metrics: &Arc<Metrics>,
) -> anyhow::Result<Joined> {
    let local = journal.journal().expect("a journal just opened");
    let hall = local.hall_secret().context("the hall's secret")?;
    let seal = JournalSeal::new(&hall, &config.hub.event);
    let ca = crate::edge::keys::hall_ca::ca_file(&config.data);
    // A server that just came back answers before its JetStream does ("temporarily
    // unavailable"): the hub tries again rather than ending.
    let started = Instant::now();
    let (cluster, genesis, last) = loop {
        let joined = async {
            let cluster =
                Cluster::connect(&settings.urls, &config.hub.event, settings.replicas, &ca).await?;
            let genesis = journal::genesis(&cluster, &seal, &settings.hub).await?;
            let last = cluster.last_seq().await?;
            anyhow::Ok((cluster, genesis, last))
        };
        match joined.await {
            Ok(joined) => break joined,
            // A stream this hub cannot open is no passing trouble: it stops at once.
            Err(e) if e.downcast_ref::<Foreign>().is_some() => return Err(e),
            Err(e) if started.elapsed() < JOIN_WITHIN => {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "the cluster does not answer yet; trying again"
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => {
                return Err(e.context(format!("no answer from the cluster in {JOIN_WITHIN:?}")))
            }
        }
    };
    let applied = local.stream_seq()?;
    anyhow::ensure!(
        applied <= last,
        "this hub's journal holds {applied} records of the stream, which has {last}: the data directory belongs to another hall (or the stream was made anew); start with an empty one"
    );
    let lease = Lease::new(LeaseStore(cluster.lease.clone()));
    let role = Role::new(
        settings.hub.clone(),
        advertised(config, http),
        applied,
        Instant::now(),
    );
    let flusher = journal.flusher_input().expect("a journal just opened");
    let nats = cluster.client.clone();
    let link = journal::start(cluster, seal, lease, role, flusher, metrics.clone());
    journal.on_cluster(link.writes.clone());
    journal.stand_by("this hub is the cluster's standby; no active hub seen yet".into());
    tracing::info!(hub = %settings.hub, began = %genesis.hub, applied, stream = last, "joined the cluster as a standby");
    Ok(Joined { link, nats })
}

/// A hub that joined its cluster: the journal's driver, and its client of the cluster, on
/// which the active hub's boards travel ([`crate::edge::mqtt::gateway`]).
pub(super) struct Joined {
    link: ClusterLink,
    nats: async_nats::Client,
}

/// The joined hub's role for the shell, ready: it starts a standby, holding no MQTT session
/// (a detached one) and connecting to the cluster's MQTT gateways (`--broker`) only when
/// it becomes active. Returns the gateway it names as its broker too.
pub(super) fn ready(
    config: &ServeConfig,
    Joined { link, nats }: Joined,
    secrets: Secrets,
    hall_tls: &HallTls,
    metrics: &Arc<Metrics>,
) -> anyhow::Result<(BrokerAddr, (HubLink, Incoming), ClusterRole)> {
    let BrokerChoice::External(brokers) = &config.broker else {
        anyhow::bail!("a cluster's hub uses the cluster's MQTT gateways (--broker)");
    };
    let broker = brokers.first().clone();
    let (door, _) = watch::channel(Some(String::new()));
    let connect = {
        let (config, hall_tls, metrics) = (config.clone(), hall_tls.clone(), metrics.clone());
        Box::new(move || {
            let nats = Some(nats.clone());
            startup::connect_broker(&config, &secrets, &hall_tls, None, nats, &metrics)
                .map(|(_, session)| session)
        })
    };
    let role = ClusterRole {
        settings: config.cluster.clone().expect("a cluster's settings"),
        link,
        door,
        connect,
        warm: (0, Instant::now()),
        warm_every: WARM_EVERY,
    };
    let session = HubLink::detached(&config.hub.event, metrics.clone());
    Ok((broker, session, role))
}

/// Where this hub's page and API are reached, as the lease tells the others (and a standby
/// tells a browser): the first of the names it is reached under (`[access] hosts`), else its
/// listening address `http`, else (listening on every address) the machine's name.
fn advertised(config: &ServeConfig, http: SocketAddr) -> String {
    let port = http.port();
    let scheme = if config.tls.on(config.http) {
        "https"
    } else {
        "http"
    };
    let host = match config.hosts.first() {
        Some(host) => host.clone(),
        None if http.ip().is_unspecified() => host_name(),
        None => match http.ip() {
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        },
    };
    format!("{scheme}://{host}:{port}")
}

/// The machine's name: a hub's default name in its cluster, and its address when it listens
/// on every address.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// What the shell holds of the cluster.
pub(super) struct ClusterRole {
    pub(super) settings: ClusterSettings,
    pub(super) link: ClusterLink,
    /// Tells the HTTP door where the active hub is while this one is a standby.
    pub(super) door: watch::Sender<Option<String>>,
    /// Connects the MQTT session when this hub becomes active.
    pub(super) connect: Box<dyn FnMut() -> anyhow::Result<(HubLink, Incoming)> + Send>,
    /// The stream's sequence number the warm core was built at, and when.
    pub(super) warm: (u64, Instant),
    /// The time until the next rebuild may start.
    pub(super) warm_every: Duration,
}

impl ClusterRole {
    /// The role as the cluster task holds it: the one answer to whether this hub is active,
    /// of which the door, `/api/cluster`, `/healthz` and the journal's refusals are views.
    pub(super) fn status(&self) -> Status {
        self.link.status.borrow().clone()
    }
}

/// The cluster task's next news, if this hub is on a cluster (never otherwise).
pub(super) async fn next_news(cluster: &mut Option<ClusterRole>) -> Option<ClusterNews> {
    match cluster {
        Some(role) => role.link.news.recv().await,
        None => std::future::pending().await,
    }
}
