//! The shell: builds the hub's core ([`Hub`]) and its edges, feeds the core what arrives
//! (uplinks, pager commands, the API's requests, the journal's durable points, the time)
//! and carries out what the core asks, in order: journal writes, downlinks, publications,
//! answers. It decides nothing; [`live`] and [`feed`] present what the core knows to the
//! supervision pages, the LiveChess folder and lichess.
//!
//! ```text
//! MQTT ──► decode ──► Hub::handle_uplink ─┐        ┌─► Journal::write ─► Flusher ─► Hub::handle_durable
//! HTTP ──► Query ───► Hub::handle_* ──────┼─► poll_output ─► Downlink, Publish, AlertChanged ─► MQTT
//! timer ──────────► Hub::handle_timeout ──┘        └─► Reply ─► HTTP
//! ```
//! Startup is the same fold: the journal's records go through [`Hub::restore`].

mod feed;
mod journal;
mod live;
mod pairings;
mod refusals;

use self::journal::JournalLink;

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use link::{BrokerAddr, LinkEvent};
use protocol::seal::{self, NodeKey};
use protocol::{identity, topic, BoardNo, DecodeError};
use tokio::sync::{mpsc, oneshot};

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::Alert;
use crate::core::arbiter::{AuditEntry, DecisionError};
use crate::core::hub::{
    ArbiterEnrolment, Count, Enrolled, Hub, HubConfig, Journaled, Output, PagerRefusal, Replayed,
    Reply, RequestId, Restored, Write,
};
use crate::core::pairings::RoundState;
use crate::core::rounds::StartError;
use crate::core::setup::NodesReport;
use crate::core::time::HubMs;
use crate::core::timebase::Step;
use crate::core::trust::Refusal;
use crate::edge::api::Query;
use crate::edge::flusher::Flushed;
use crate::edge::http;
use crate::edge::mqtt::{self, HubLink};
use crate::edge::store::{Journal, StoreError};
use crate::edge::tls::TlsChoice;
use crate::edge::{broker, descriptors, hall_ca, login};
use crate::metrics::{BadPayload, Metrics};
use crate::pairings::{self as tournament, Trfs};
use crate::view::feed::{section_games, FeedCache, FeedSource};
use crate::view::pager;
pub use feed::Outlets;

/// Which broker the hub uses.
#[derive(Debug, Clone)]
pub enum BrokerChoice {
    /// Start rumqttd inside the hub, listening here.
    Embedded(SocketAddr),
    /// Connect to a broker that runs elsewhere (Mosquitto, a cluster).
    External(BrokerAddr),
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The sled journal's directory.
    pub data: PathBuf,
    pub broker: BrokerChoice,
    pub http: SocketAddr,
    /// The arbiters' view answers only to this token; `None`: the one the hub made at its
    /// first start and keeps in `data` (`edge::login`).
    pub arbiter_token: Option<String>,
    /// Names the hub is reached under besides its IP addresses and `localhost`
    /// (`[access] hosts`); a request for any other host is refused. The hub's certificate
    /// names them.
    pub hosts: Vec<String>,
    /// Which listeners speak TLS (`[access] tls`): by default all but loopback's.
    pub tls: TlsChoice,
    /// The CA that signed an external `mqtts://` broker's certificate; `None`: the hall CA
    /// (`hub broker-cert` issues the broker's).
    pub broker_ca: Option<PathBuf>,
    /// The event, its Laws, clocks, alerts, rounds and broadcast.
    pub hub: HubConfig,
    /// The pairing program's TRFs the results go back into (`GET /api/results.trf`): the
    /// hall's (`None`) and each section's.
    pub trfs: Trfs,
    /// Where the feed goes besides the API: a LiveChess folder, a lichess round.
    pub outlets: Outlets,
    /// The configuration file it was read from: its pairing files are read again when they
    /// change and before a round starts.
    pub config_path: Option<PathBuf>,
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

/// The hub's clock: the Unix time in ms, never going backwards.
#[derive(Debug, Default)]
struct HubClock {
    last: HubMs,
}

impl HubClock {
    fn now(&mut self) -> HubMs {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.last = self.last.max(HubMs(wall));
        self.last
    }

    fn not_before(&mut self, at: HubMs) {
        self.last = self.last.max(at);
    }
}

/// Runs the hub until `shutdown` resolves. `ready` learns the bound addresses.
pub async fn serve(
    config: ServeConfig,
    ready: Option<oneshot::Sender<Running>>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let event = config.hub.event.clone();
    anyhow::ensure!(
        topic::is_valid_event(&event),
        "event id {event:?}: use letters, digits, '-', '_' or '.'"
    );
    let metrics = Arc::new(Metrics::default());
    let (durable_tx, mut durable) = mpsc::unbounded_channel();
    let journal = JournalLink::open(config.data.clone(), metrics.clone(), durable_tx)?;
    let opened = journal.journal().expect("a journal just opened");
    let mut clock = HubClock::default();
    let (hub, restored) = restored_hub(&config.hub, opened, &metrics, &mut clock)?;
    let session_secret = opened
        .session_secret()
        .context("the hub's MQTT session id")?;
    let hall_secret = opened.hall_secret().context("the hall's secret")?;
    tracing::info!(
        records = restored.records,
        boards = restored.boards,
        resumed = restored.resumed,
        alerts = restored.alerts,
        healed = restored.healed,
        "journal replayed"
    );

    // The embedded broker lets in only the hall's own clients, unless the hall is open; the
    // hub itself is in the same process (its own link, no login).
    let users = match (&config.broker, config.hub.open_hall) {
        (BrokerChoice::Embedded(_), false) => Some(broker::Users::default()),
        _ => None,
    };
    // The nodes the journal enrolled are let in from the broker's first connection on: after
    // a restart they are all reconnecting.
    let mut admitted = HashSet::new();
    if let Some(users) = &users {
        admit_nodes(users, &hub, &mut admitted);
    }
    let client_id = mqtt::client_id(&event, &session_secret);
    // The hall CA, and the hub's certificate for every name it is reached under.
    let mut names = config.hosts.clone();
    names.push(config.http.ip().to_string());
    if let BrokerChoice::Embedded(listen) = &config.broker {
        names.push(listen.ip().to_string());
    }
    names.retain(|n| n != "0.0.0.0" && n != "::");
    let hall_tls = hall_ca::load_or_make(&config.data, &names)?;
    let https = config.tls.on(config.http);
    warn_if_plain("HTTP", config.http, https);
    let (broker_addr, (link, mut incoming)) = match &config.broker {
        BrokerChoice::Embedded(listen) => {
            let limit = descriptors::raise_limit();
            let max_connections = descriptors::broker_connections(limit);
            if max_connections < 1_000 {
                tracing::warn!(limit, max_connections, "few open files allowed: the broker takes {max_connections} connections; raise the limit (LimitNOFILE in the unit, ulimit -n) for a larger hall");
            } else {
                tracing::info!(limit, max_connections, "open files");
            }
            let mqtts = config.tls.on(*listen);
            warn_if_plain("MQTT", *listen, mqtts);
            let local = broker::start(
                *listen,
                users.clone(),
                max_connections,
                Some(&client_id),
                &event,
                mqtts.then(|| hall_tls.mqtt.clone()),
            )?
            .expect("a link was asked for");
            let host = match listen.ip() {
                ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                ip => ip,
            };
            tracing::info!(%listen, tls = mqtts, "embedded MQTT broker listening");
            let addr = BrokerAddr {
                tls: mqtts,
                ..BrokerAddr::plain(host.to_string(), listen.port())
            };
            (addr, mqtt::connect_local(local, &event, metrics.clone())?)
        }
        BrokerChoice::External(addr) => {
            let hub_login = (
                identity::HUB_USER.to_owned(),
                identity::hub_password(&hall_secret),
            );
            let tls = match (addr.tls, &config.broker_ca) {
                (false, _) => None,
                (true, Some(file)) => {
                    let pem = std::fs::read(file)
                        .with_context(|| format!("reading the broker's CA {}", file.display()))?;
                    Some(
                        link::tls::client_config(&pem)
                            .with_context(|| file.display().to_string())?,
                    )
                }
                (true, None) => Some(link::tls::client_config(hall_tls.ca_pem.as_bytes())?),
            };
            let session = mqtt::connect(addr, &event, &client_id, hub_login, tls, metrics.clone());
            (addr.clone(), session)
        }
    };
    let (queries_tx, mut queries) = mpsc::channel(256);
    let (token, token_source) = login::arbiter_token(&config.data, config.arbiter_token.clone())?;
    let sessions = crate::edge::sessions::Sessions::kept_in(
        &config.data.join("page-sessions"),
        SystemTime::now(),
    )?;
    let access = crate::edge::access::Access::new(token.clone())
        .with_sessions(sessions)
        .with_hosts(config.hosts.clone())
        .with_open_hall(config.hub.open_hall);
    // The enrolled arbiters log in from the first request and connection on.
    let mut pagers = HashSet::new();
    admit_arbiters(users.as_ref(), &access, &hub, &mut pagers);
    if config.hub.open_hall {
        tracing::warn!(
            "[access] open_hall: events from boards whose node was never enrolled are taken unsealed; anyone on the network can speak for those boards"
        );
    }
    if config.hub.broadcast.delay_ms == 0 {
        tracing::warn!(
            "the broadcast is live ([broadcast] delay_s = 0): the public feed, the spectators' page, the broadcast topics, the LiveChess folder and lichess show every move as it is made"
        );
    }
    let (http_addr, server) = http::bind(
        config.http,
        queries_tx,
        metrics.clone(),
        access.clone(),
        https.then(|| hall_tls.http.clone()),
        hall_tls.ca_pem.clone().into(),
    )
    .await?;
    let server = tokio::spawn(server);
    tracing::info!(http = %http_addr, broker = %broker_addr, %event, "hub ready");
    if token_source != login::TokenSource::Configured {
        print_login_links(http_addr, https, &token, &config.data, token_source);
    }
    if let Some(ready) = ready {
        let _ = ready.send(Running {
            http: http_addr,
            broker: broker_addr,
            token,
            https,
        });
    }

    let mut shell = Shell {
        hub,
        hub_config: config.hub,
        journal,
        link,
        metrics,
        clock,
        waiting: HashMap::new(),
        next_request: 0,
        live: live::LivePages::default(),
        follower: feed::Follower::new(config.outlets),
        feed_cache: FeedCache::default(),
        trfs: config.trfs,
        told_journal_works: None,
        refusals: refusals::RefusalLog::default(),
        users,
        admitted,
        access,
        pagers,
        pager_commands: topic::pager_command(&event),
        pairing_files: config.config_path.clone().map(pairings::PairingFiles::new),
    };
    // What the restore asked for: alerts raised again, every zone's open list (signed again
    // at the hub's time now, newer than anything a pager holds from before the restart).
    let now = shell.clock.now();
    shell.hub.republish_open_lists(now);
    shell.carry_out()?;
    shell.publish_status();
    shell.link.flush();
    let mut retry = tokio::time::interval(journal::RETRY);
    let mut pairings_changed = tokio::time::interval(PAIRINGS_EVERY);
    let mut republish = tokio::time::interval(REPUBLISH_EVERY);
    let mut pages = tokio::time::interval(PAGES_EVERY);
    pages.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    let result = loop {
        let timeout = shell.sleep_until_due();
        tokio::select! {
            Some(event) = incoming.recv() => {
                shell.on_link_event(event);
                // What else the broker handed over meanwhile, before the outputs are carried
                // out once for all of it: under load one wake-up takes a batch.
                for _ in 1..BATCH {
                    match incoming.try_recv() {
                        Some(event) => shell.on_link_event(event),
                        None => break,
                    }
                }
            }
            Some(flushed) = durable.recv() => match flushed {
                Flushed::Durable { generation, up_to } if shell.journal.is_current(generation) => {
                    let now = shell.clock.now();
                    shell.hub.handle_durable(now, up_to);
                }
                Flushed::Failed { generation, reason } if shell.journal.is_current(generation) => {
                    shell.journal.fail(reason);
                }
                // An earlier opening's: its core is gone.
                Flushed::Durable { .. } | Flushed::Failed { .. } => {}
            },
            () = timeout, if shell.journal.failure().is_none() => {
                let now = shell.clock.now();
                shell.hub.handle_timeout(now);
            }
            _ = retry.tick(), if shell.journal.failure().is_some() => {
                if shell.journal.reopen() {
                    if let Err(e) = shell.rebuild() {
                        break Err(e);
                    }
                }
            }
            _ = pages.tick() => shell.present(),
            _ = republish.tick() => {
                // What the pagers hold, signed afresh: the open lists and the status.
                let now = shell.clock.now();
                shell.hub.republish_open_lists(now);
                shell.told_journal_works = None;
            }
            _ = pairings_changed.tick() => shell.follow_pairings(),
            Some(query) = queries.recv() => shell.answer(query),
            () = &mut shutdown => break Ok(()),
        }
        if let Err(e) = shell.carry_out() {
            break Err(e);
        }
        shell.publish_status();
        shell.link.flush();
    };
    server.abort();
    shell.journal.close()?;
    result
}

/// The arbiters' login links of a hub whose token it made itself, on stdout and stderr (the
/// unit's journal): like Jupyter, the way in is printed where the technician looks.
fn print_login_links(
    http: SocketAddr,
    https: bool,
    token: &str,
    data: &std::path::Path,
    source: login::TokenSource,
) {
    let made = match source {
        login::TokenSource::Made => "made now",
        _ => "kept",
    };
    let scheme = if https { "https" } else { "http" };
    let again = format!(
        "print it again with: hub login-link --data {} --http {http}{}",
        data.display(),
        if https { " --https" } else { "" }
    );
    if https {
        eprintln!(
            "The page is HTTPS with the hall's own certificate authority: browsers ask to trust it once, or import {} as a trusted authority",
            hall_ca::ca_file(data).display()
        );
    }
    for link in login::links(http, token, scheme) {
        println!("Arbiters log in at {link}");
        eprintln!("Arbiters log in at {link}  (token {made} in the data directory; {again})");
    }
}

/// A plain listener off loopback: said at every start, since anything sent to it can be read
/// by anyone on the hall's network.
fn warn_if_plain(what: &str, listen: SocketAddr, tls: bool) {
    if !tls && !listen.ip().is_loopback() {
        tracing::warn!(%listen, "{what} without TLS on the hall's network ([access] tls = \"off\"): positions, moves, tokens and passwords can be read off the wire");
    }
}

/// The embedded broker lets in exactly the enrolled nodes, each under its board's username
/// with the password its key derives: every enrolled board of `hub`, and no other of the
/// boards `admitted` held (at a start, and when the hall is rebuilt from the journal).
fn admit_nodes(users: &broker::Users, hub: &Hub, admitted: &mut HashSet<BoardNo>) {
    let enrolled: HashSet<BoardNo> = hub.enrolled_boards().map(|(board, _)| board).collect();
    let gone: Vec<BoardNo> = admitted.difference(&enrolled).copied().collect();
    admit_boards(users, hub, admitted, enrolled.into_iter().chain(gone));
}

/// Each enrolled arbiter's pager login on the embedded broker (`users`, if it keeps any;
/// `admitted` the pagers it admits) and page login (`access`), as `hub`'s roster has them
/// now: a revoked arbiter's are gone, and so are their page's sessions.
fn admit_arbiters(
    users: Option<&broker::Users>,
    access: &crate::edge::access::Access,
    hub: &Hub,
    admitted: &mut HashSet<String>,
) {
    access.set_arbiters(
        hub.arbiters()
            .map(|(name, key)| (name, login::arbiter_login(key))),
    );
    let Some(users) = users else {
        return;
    };
    let mut now = HashSet::new();
    for (_, key) in hub.arbiters() {
        let user = identity::pager_user(key);
        users.set(
            user.clone(),
            identity::pager_password(key),
            identity::pager_client_prefix(hub.event(), &user),
        );
        now.insert(user);
    }
    for gone in admitted.difference(&now) {
        users.remove(gone);
    }
    *admitted = now;
}

/// The broker's logins of `boards` as `hub` has their nodes' keys now.
fn admit_boards(
    users: &broker::Users,
    hub: &Hub,
    admitted: &mut HashSet<BoardNo>,
    boards: impl IntoIterator<Item = BoardNo>,
) {
    for board in boards {
        match hub.board_key(board) {
            Some(key) => {
                users.set(
                    identity::node_user(board),
                    identity::node_password(key),
                    identity::node_client_prefix(hub.event(), board),
                );
                admitted.insert(board);
            }
            None => {
                users.remove(&identity::node_user(board));
                admitted.remove(&board);
            }
        }
    }
}

/// A core built from what the journal holds, the fold of a start and of a recovery alike;
/// the hub's clock never goes back before the journal's last record.
fn restored_hub(
    config: &HubConfig,
    journal: &Journal,
    metrics: &Metrics,
    clock: &mut HubClock,
) -> anyhow::Result<(Hub, Restored)> {
    let (hub, restored) = restore(config, journal, metrics)?;
    clock.not_before(hub.latest());
    Ok((hub, restored))
}

/// The core `hub serve` starts with: `config`'s, folded over what `journal` holds (the
/// benchmarks time it).
pub fn restore(
    config: &HubConfig,
    journal: &Journal,
    metrics: &Metrics,
) -> anyhow::Result<(Hub, Restored)> {
    let mut hub = Hub::new(config.clone());
    let restored = hub.restore(journaled(journal, metrics)?);
    Ok((hub, restored))
}

/// A stopped hub: its journal at `data` and the core folded over it as a start folds it,
/// with the time now. What the offline commands act on, through the same core calls as a
/// running hub's API.
struct Offline {
    journal: Journal,
    hub: Hub,
    now: crate::core::time::HubMs,
}

impl Offline {
    /// Opens the journal at `data` (locked while the hub runs: `instead` says what to use
    /// then) and folds `config`'s core over it.
    fn open(data: &std::path::Path, config: &HubConfig, instead: &str) -> anyhow::Result<Offline> {
        let journal = Journal::open(data).with_context(|| {
            format!(
                "opening the journal in {} (while the hub runs, {instead})",
                data.display()
            )
        })?;
        let mut clock = HubClock::default();
        let (hub, _) = restored_hub(config, &journal, &Metrics::default(), &mut clock)?;
        Ok(Offline {
            journal,
            hub,
            now: clock.now(),
        })
    }

    /// Carries out what the core asked: its writes journaled and flushed (the round a new
    /// hub begins in is the serving hub's to journal, from its configuration); its replies.
    fn settle(&mut self) -> anyhow::Result<Vec<Reply>> {
        let mut replies = Vec::new();
        for output in self.hub.poll_all_durable(self.now) {
            match output {
                Output::Write(_, Write::RoundStart(_)) => {}
                Output::Write(_, write) => self.journal.write(&write)?,
                Output::Reply(_, reply) => replies.push(reply),
                _ => {}
            }
        }
        self.journal.flush()?;
        Ok(replies)
    }
}

/// Enrols `hardware` for `board` in the journal at `data` of a hub that is not running, as
/// `POST /api/nodes/enrol` does on one that runs: the same fold, the same core call, its
/// writes flushed before the key is handed out.
pub fn enrol_offline(
    data: &std::path::Path,
    config: &HubConfig,
    hardware: &crate::core::ids::HardwareId,
    board: BoardNo,
) -> anyhow::Result<Enrolled> {
    let mut offline = Offline::open(data, config, "enrol with POST /api/nodes/enrol")?;
    let fresh = NodeKey::from_bytes(rand::random());
    let now = offline.now;
    offline
        .hub
        .handle_enrolment(now, RequestId(0), hardware, board, fresh);
    let enrolled = offline.settle()?.into_iter().find_map(|reply| match reply {
        Reply::Enrolled(answer) => Some(answer),
        _ => None,
    });
    enrolled.context("the core gave no enrolment")
}

/// The external broker's users from the journal at `data` of a hub that is not running:
/// the hub's own login and `Hub::broker_users` (while it runs, `GET /api/broker/users`
/// serves the latter only). Makes the hall's secret on a first run, so the broker can be set
/// up before the hub first starts.
pub fn broker_users_offline(data: &std::path::Path, config: &HubConfig) -> anyhow::Result<String> {
    let offline = Offline::open(data, config, "use GET /api/broker/users")?;
    let hall = offline.journal.hall_secret().context("the hall's secret")?;
    offline.journal.flush()?;
    let others = offline
        .hub
        .broker_users()
        .context("the hall has no secret")?;
    let others = broker::passwd_lines(&others);
    Ok(format!(
        "{}:{}\n{others}",
        identity::HUB_USER,
        identity::hub_password(&hall)
    ))
}

/// Enrols arbiter `name` in the journal at `data` of a hub that is not running, as `POST
/// /api/arbiters/enrol` does on one that runs: the same fold, the same core call, its write
/// flushed before the key is handed out.
pub fn arbiter_offline(
    data: &std::path::Path,
    config: &HubConfig,
    name: &str,
) -> anyhow::Result<ArbiterEnrolment> {
    let mut offline = Offline::open(data, config, "use POST /api/arbiters/enrol")?;
    let fresh = NodeKey::from_bytes(rand::random());
    let now = offline.now;
    offline
        .hub
        .handle_arbiter_enrolment(now, RequestId(0), name, fresh);
    let enrolled = offline.settle()?.into_iter().find_map(|reply| match reply {
        Reply::ArbiterEnrolled(answer) => answer,
        _ => None,
    });
    enrolled.context("the hall has no secret, or its roster of arbiters is full")
}

/// Re-keys the hall of the hub that is not running whose data directory is `data` (`hub
/// rotate-hall-secret`): a new hall secret (the hub's signing key and its broker password
/// derive from it), every arbiter revoked (their key files name the old signing key: each
/// is enrolled again), and the made arbiter token and the page's sessions gone (a new token
/// is made at the next start). Node keys are the nodes' own: re-enrol a node to re-key it.
/// Returns the arbiters revoked, to be enrolled again.
pub fn rotate_offline(data: &std::path::Path, config: &HubConfig) -> anyhow::Result<Vec<String>> {
    let mut offline = Offline::open(
        data,
        config,
        "stop it first: its secret cannot change under it",
    )?;
    let names: Vec<String> = offline
        .hub
        .arbiters()
        .map(|(name, _)| name.to_owned())
        .collect();
    let now = offline.now;
    for name in &names {
        offline
            .hub
            .handle_arbiter_revocation(now, RequestId(0), name);
    }
    offline.settle()?;
    let journal = offline.journal;
    journal
        .rotate_hall_secret()
        .context("the new hall secret")?;
    for file in [login::token_file(data), data.join("page-sessions")] {
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", file.display()))
            }
            _ => {}
        }
    }
    Ok(names)
}

/// The journal as the core restores it. A record or decision that cannot be read is
/// counted and logged; the rest restores.
fn journaled<'a>(
    journal: &'a Journal,
    metrics: &'a Metrics,
) -> anyhow::Result<Journaled<impl Iterator<Item = Replayed> + 'a>> {
    let skipped = |what: &str, e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "{what} skipped");
        metrics.journal_records_skipped();
    };
    let alerts = journal
        .alerts()
        .filter_map(|alert| alert.map_err(|e| skipped("alert", &e)).ok())
        .collect();
    let decisions = journal
        .decisions()
        .filter_map(|decision| decision.map_err(|e| skipped("decision", &e)).ok())
        .collect();
    let rounds: Vec<crate::core::rounds::RoundStart> = journal
        .rounds()
        .filter_map(|start| start.map_err(|e| skipped("round start", &e)).ok())
        .collect();
    // Boards resume where a round's start kept their node: the events of their finished
    // rounds are not read (the archive has those games), only each board's head.
    let resume = Hub::resume_points(&rounds);
    let marks: std::collections::BTreeMap<BoardNo, protocol::Seq> =
        resume.iter().map(|(board, r)| (*board, r.mark)).collect();
    let games = journal
        .games()
        .filter_map(|game| game.map_err(|e| skipped("archived game", &e)).ok())
        .collect();
    let mut heads = Vec::new();
    for (board, mark) in &marks {
        let up_to = protocol::Seq(mark.0.min(crate::core::hub::STREAM_HEAD));
        heads.extend(journal.head(*board, up_to).filter_map(Result::ok));
    }
    // A damaged record takes its place in the board's sequence (the core goes on after it
    // and tells the arbiter); a key that is not a board's event at all is skipped.
    let records = journal
        .replay_after(marks)
        .filter_map(move |record| match record {
            Ok(record) => Some(Replayed::Record(record)),
            Err(StoreError::Unreadable { board, seq, why }) => {
                tracing::error!(%board, %seq, %why, "journal record unreadable");
                Some(Replayed::Damaged { board, seq })
            }
            Err(e) => {
                tracing::error!(error = %e, "journal record skipped");
                metrics.journal_records_skipped();
                None
            }
        });
    Ok(Journaled {
        rounds,
        games,
        records,
        heads,
        decisions,
        alerts,
        bindings: journal.bindings().context("reading the bindings")?,
        enrolments: journal.enrolments().context("reading the enrolled nodes")?,
        arbiters: journal
            .arbiters()
            .context("reading the enrolled arbiters")?,
        hall_secret: Some(journal.hall_secret().context("the hall's secret")?),
    })
}

/// An answer the API waits for.
enum Waiting {
    Decision(oneshot::Sender<Result<AuditEntry, DecisionError>>),
    Alert(oneshot::Sender<Result<Alert, AlertError>>),
    Nodes(oneshot::Sender<NodesReport>),
    Enrolled(oneshot::Sender<Enrolled>),
    Rounds(oneshot::Sender<Result<Vec<RoundState>, StartError>>),
    ArbiterEnrolled(oneshot::Sender<Option<ArbiterEnrolment>>),
    Arbiters(oneshot::Sender<Vec<String>>),
}

/// What the loop owns: the core and the edges it carries out outputs on.
struct Shell {
    hub: Hub,
    /// What the core is built from again when the journal recovers.
    hub_config: HubConfig,
    journal: JournalLink,
    link: HubLink,
    metrics: Arc<Metrics>,
    clock: HubClock,
    /// The API's requests waiting for the core's answer.
    waiting: HashMap<RequestId, Waiting>,
    next_request: u64,
    /// The supervision pages.
    live: live::LivePages,
    /// The LiveChess folder and the lichess pusher.
    follower: feed::Follower,
    /// The feed's rendered games, for the API and the follower.
    feed_cache: FeedCache,
    /// The TRFs the results go back into.
    trfs: Trfs,
    /// Whether the journal works, as last told to the pagers (`None`: not yet told).
    told_journal_works: Option<bool>,
    /// What was refused, logged once per source and reason.
    refusals: refusals::RefusalLog,
    /// The pairing files, followed for the next round's pairings.
    pairing_files: Option<pairings::PairingFiles>,
    /// Who the embedded broker lets in (`None`: an external broker, or an open hall).
    users: Option<broker::Users>,
    /// The boards whose nodes `users` admits now.
    admitted: HashSet<BoardNo>,
    /// Who the page and the API let in: the arbiters' logins follow the roster.
    access: crate::edge::access::Access,
    /// The pagers' usernames `users` admits now.
    pagers: HashSet<String>,
    /// The pagers' commands' topic, made once: every message from the broker is compared
    /// with it.
    pager_commands: String,
}

impl Shell {
    /// Sleeps until the core's next timeout (a long while when it has none).
    fn sleep_until_due(&mut self) -> tokio::time::Sleep {
        let now = self.clock.now();
        let wait = self
            .hub
            .poll_timeout()
            .map_or(Duration::from_secs(3600), |due| {
                Duration::from_millis(due.since(now))
            });
        tokio::time::sleep(wait)
    }

    /// Tells the pagers (retained, signed) whether the journal works, when that changed: while
    /// it fails nothing is acknowledged and no alert goes out, and the arbiters must know.
    fn publish_status(&mut self) {
        let failure = self.journal.failure();
        let works = failure.is_none();
        if self.told_journal_works == Some(works) {
            return;
        }
        let status = match failure {
            None => serde_json::json!({"journal": "ok"}),
            Some(f) => serde_json::json!({"journal": "failing", "reason": f.reason}),
        };
        let payload = serde_json::to_vec(&status).expect("a status serializes");
        let topic = topic::hub_status(self.hub.event());
        let payload = self.hub.signed(&topic, self.clock.now(), payload);
        self.link.publish_json(topic, payload, true);
        self.told_journal_works = Some(works);
    }

    /// The embedded broker lets in exactly the enrolled nodes ([`admit_nodes`]).
    fn admit_nodes(&mut self) {
        if let Some(users) = &self.users {
            admit_nodes(users, &self.hub, &mut self.admitted);
        }
    }

    /// The embedded broker and the page let in exactly the enrolled arbiters
    /// ([`admit_arbiters`]).
    fn admit_arbiters(&mut self) {
        admit_arbiters(
            self.users.as_ref(),
            &self.access,
            &self.hub,
            &mut self.pagers,
        );
    }

    /// Carries out what the core asked, in order. Only a failing journal is an error.
    fn carry_out(&mut self) -> anyhow::Result<()> {
        while let Some(output) = self.hub.poll_output() {
            match output {
                Output::Write(at, write) => self.journal.write(at, write),
                Output::NodeKeys(boards) => {
                    if let Some(users) = &self.users {
                        admit_boards(users, &self.hub, &mut self.admitted, boards);
                    }
                }
                Output::Downlink(board, body, frame) => self.link.send(board, body, frame),
                Output::AlertChanged(change) => {
                    let topic = topic::alerts(self.hub.event(), &change.alert.zone);
                    let now = self.clock.now();
                    let payload = self.hub.signed(&topic, now, pager::change_message(&change));
                    self.link.publish_json(topic, payload, false);
                    self.metrics.alert_change_published();
                    self.live.alert_changed(&change.alert);
                }
                Output::OpenList {
                    topic,
                    zone,
                    at,
                    alerts,
                } => {
                    let list = pager::open_list(&zone, at.0, alerts.iter().collect());
                    let payload = self.hub.signed(&topic, at, list);
                    self.link.publish_json(topic, payload, true);
                }
                Output::LiveMove { topic, message } => match serde_json::to_vec(&message) {
                    Ok(payload) => self.link.publish_json(topic, payload, true),
                    Err(e) => tracing::error!(error = %e, "a live move not written"),
                },
                Output::Reply(request, reply) => self.reply(request, reply),
                Output::Count(count) => self.count(count),
            }
        }
        Ok(())
    }

    /// The journal works again: the core is built anew from what is durable, as at a start.
    /// What it had taken since the last flush is gone from it; the nodes resend it, since
    /// none of it was acknowledged, and the API's waiting requests get no answer (503).
    fn rebuild(&mut self) -> anyhow::Result<()> {
        let journal = self
            .journal
            .journal()
            .expect("the journal was just reopened");
        let (hub, restored) =
            restored_hub(&self.hub_config, journal, &self.metrics, &mut self.clock)?;
        self.hub = hub;
        self.waiting.clear();
        self.admit_nodes();
        self.admit_arbiters();
        // The lists the restore published are signed at the journal's last time, older than
        // what the pagers were told before: signed again now, so they are the latest.
        self.hub.republish_open_lists(self.clock.now());
        tracing::warn!(
            records = restored.records,
            boards = restored.boards,
            "the hall rebuilt from the journal"
        );
        self.carry_out()
    }

    fn reply(&mut self, request: RequestId, reply: Reply) {
        // A dropped receiver means the HTTP client went away; nothing to do.
        match (self.waiting.remove(&request), reply) {
            (Some(Waiting::Decision(tx)), Reply::Decision(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Alert(tx)), Reply::Alert(answer)) => drop(tx.send(answer.map(|a| *a))),
            (Some(Waiting::Nodes(tx)), Reply::Nodes(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Enrolled(tx)), Reply::Enrolled(answer)) => drop(tx.send(answer)),
            (Some(Waiting::Rounds(tx)), Reply::RoundStarted(answer)) => drop(tx.send(answer)),
            // The roster changed and is durable: the broker and the page let in the
            // arbiters as they now are, before the answer goes out.
            (Some(Waiting::ArbiterEnrolled(tx)), Reply::ArbiterEnrolled(answer)) => {
                self.admit_arbiters();
                drop(tx.send(answer));
            }
            (Some(Waiting::Arbiters(tx)), Reply::Arbiters(answer)) => {
                self.admit_arbiters();
                drop(tx.send(answer));
            }
            (_, reply) => tracing::error!(?request, ?reply, "an answer nobody waits for"),
        }
    }

    fn count(&mut self, count: Count) {
        match count {
            Count::EventAccepted => self.metrics.event_accepted(),
            Count::DuplicateDropped => self.metrics.duplicate_dropped(),
            Count::GapEvent => self.metrics.gap_event(),
            Count::ResendRequested => self.metrics.resend_requested(),
            Count::AlertRaised => self.metrics.alert_raised(),
            Count::JournalRecordSkipped => self.metrics.journal_records_skipped(),
            Count::PagerRefused(why) => {
                let why = match why {
                    PagerRefusal::Malformed => BadPayload::PagerCommand,
                    PagerRefusal::NotSealed => BadPayload::Unauthenticated,
                };
                let topic = self.pager_commands.clone();
                self.refuse(why, &topic, "refused by the hub");
            }
            Count::Unauthenticated(board, refusal) => {
                let why = match refusal {
                    Refusal::BadTag => "not sealed with the key of the board's node",
                    Refusal::NotEnrolled => {
                        "no enrolled node is bound to the board (hub enrol, POST /api/nodes/enrol)"
                    }
                };
                let source = topic::uplink(self.hub.event(), board);
                self.refuse(BadPayload::Unauthenticated, &source, why);
            }
            Count::NodeTimeStep(board, step) => {
                let why = match step {
                    Step::Ahead(ms) => format!("the node's time ran {ms} ms ahead: taken out"),
                    Step::Behind(ms) => format!("the node's time went {ms} ms back: taken out"),
                };
                let source = topic::uplink(self.hub.event(), board);
                self.refuse(BadPayload::NodeTime, &source, &why);
            }
        }
    }

    /// A request to the core whose answer waits: its number.
    fn request(&mut self, waiting: Waiting) -> RequestId {
        self.next_request += 1;
        let request = RequestId(self.next_request);
        self.waiting.insert(request, waiting);
        request
    }

    /// One message off the wire. Bad input is counted and logged, never fatal.
    fn on_link_event(&mut self, event: LinkEvent) {
        match event {
            LinkEvent::Message { topic, payload } => self.on_message(&topic, &payload),
            LinkEvent::Connected => tracing::info!("connected to the broker, subscribed"),
            LinkEvent::Disconnected => tracing::warn!("lost the broker; reconnecting"),
        }
    }

    fn on_message(&mut self, topic: &str, payload: &[u8]) {
        if self.journal.failure().is_some() {
            // Nothing is taken that cannot be made durable; the nodes resend it later.
            return;
        }
        if topic == self.pager_commands {
            return match pager::parse_command(payload) {
                Ok((id, command, seal)) => {
                    let now = self.clock.now();
                    self.hub.handle_pager_command(now, id, command, seal);
                }
                Err(e) => self.refuse(BadPayload::PagerCommand, topic, &e.to_string()),
            };
        }
        let Some(board) = topic::parse_uplink(self.hub.event(), topic) else {
            return self.refuse(BadPayload::ForeignTopic, topic, "not a board uplink topic");
        };
        let sealed = match seal::open_uplink(payload) {
            Ok(sealed) => sealed,
            Err(e @ DecodeError::UnknownVersion(_)) => {
                return self.refuse(BadPayload::UnknownVersion, topic, &e.to_string());
            }
            Err(e @ DecodeError::OutOfRange(_)) => {
                return self.refuse(BadPayload::OutOfRange, topic, &e.to_string());
            }
            Err(e) => return self.refuse(BadPayload::Undecodable, topic, &e.to_string()),
        };
        if sealed.message.board != board {
            let why = format!("message says board {}", sealed.message.board.0);
            return self.refuse(BadPayload::BoardMismatch, topic, &why);
        }
        let now = self.clock.now();
        self.hub.handle_sealed_uplink(now, sealed);
    }

    /// Counts a refusal, and logs it the first time from its source (and the 2nd, 4th, …).
    fn refuse(&mut self, why: BadPayload, source: &str, detail: &str) {
        self.metrics.bad_payload(why);
        if let Some(count) = self.refusals.note(why, source) {
            tracing::warn!(source, ?why, detail, from_source = count, "message refused");
        }
    }

    /// The pairings as their files give them now; the hub keeps what it had if they cannot
    /// be read.
    fn reload_pairings(&mut self) -> Result<(), crate::config::ConfigError> {
        let Some(files) = &mut self.pairing_files else {
            return Ok(());
        };
        let tournament = files.read()?;
        self.hub_config.rounds = tournament.rounds.clone();
        self.hub.set_rounds(tournament.rounds);
        self.trfs = tournament.trfs;
        // The players' names are in every rendered game.
        self.feed_cache = FeedCache::default();
        Ok(())
    }

    /// The pairing files changed: read again.
    fn follow_pairings(&mut self) {
        if self.pairing_files.as_ref().is_some_and(|f| f.changed()) {
            match self.reload_pairings() {
                Ok(()) => tracing::info!("pairings read again: their files changed"),
                Err(e) => {
                    tracing::warn!(error = %e, "the pairing files changed but cannot be read; the pairings stay as they were")
                }
            }
        }
    }

    /// The pages, the LiveChess folder and lichess get what changed.
    fn present(&mut self) {
        let now = self.clock.now();
        self.follower.follow(&self.hub, &mut self.feed_cache, now);
        self.publish_live(now);
    }

    fn answer(&mut self, query: Query) {
        let now = self.clock.now();
        if let Some(failure) = self.journal.failure() {
            // A change cannot be made durable: its answer is dropped (503 to the client).
            if let Query::Decide(..)
            | Query::StartRound(..)
            | Query::Bind(..)
            | Query::AlertCommand(..)
            | Query::Enrol(..)
            | Query::Revoke(..) = query
            {
                tracing::warn!(reason = %failure.reason, "a change refused: the journal fails");
                return;
            }
        }
        let hub = &mut self.hub;
        // A dropped receiver means the HTTP client went away; nothing to do.
        match query {
            Query::Boards(reply) => drop(reply.send(hub.hall().summaries(now))),
            Query::Board(board, round, reply) => {
                let round = round.unwrap_or_else(|| hub.hall().round_of(board));
                drop(reply.send(hub.board_detail(now, round, board)));
            }
            Query::TimeTrouble(reply) => drop(reply.send(hub.hall().time_trouble(now))),
            Query::ConnectedNodes(reply) => drop(reply.send(hub.hall().connected_nodes(now))),
            Query::Health(reply) => drop(reply.send(match self.journal.failure() {
                None => Ok(()),
                Some(f) => Err(format!(
                    "the journal cannot write since {} s ago: {}",
                    f.since.elapsed().as_secs(),
                    f.reason
                )),
            })),
            Query::CheckClaim(board, request, reply) => {
                drop(reply.send(hub.hall().check_claim(board, &request)));
            }
            Query::Decide(board, round, action, reply) => {
                let request = self.request(Waiting::Decision(reply));
                self.hub.handle_decision(now, request, board, round, action);
            }
            Query::Alerts(reply) => drop(reply.send(hub.desk().alerts().cloned().collect())),
            Query::Pairings(round, section, reply) => {
                drop(reply.send(hub.section_pairings(round, section.as_deref())));
            }
            Query::Broadcast(round, board, section, reply) => {
                let source = FeedSource::of(hub);
                let section = section.as_deref();
                let games =
                    section_games(&source, now, round, board, section, &mut self.feed_cache);
                drop(reply.send(games));
            }
            Query::Rounds(reply) => drop(reply.send(hub.round_states())),
            Query::StartRound(start, reply) => {
                // The pairing program exported the round's pairings just before, perhaps.
                if let Err(e) = self.reload_pairings() {
                    return drop(reply.send(Err(StartError::Pairings(e.to_string()))));
                }
                let request = self.request(Waiting::Rounds(reply));
                self.hub.handle_round_start(now, request, start);
            }
            Query::Nodes(reply) => drop(reply.send(hub.nodes_report(now))),
            Query::Bind(hardware, board, reply) => {
                let request = self.request(Waiting::Nodes(reply));
                self.hub.handle_binding(now, request, &hardware, board);
            }
            Query::Enrol(hardware, board, reply) => {
                let request = self.request(Waiting::Enrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                self.hub
                    .handle_enrolment(now, request, &hardware, board, fresh);
            }
            Query::Revoke(hardware, reply) => {
                let request = self.request(Waiting::Nodes(reply));
                self.hub.handle_revocation(now, request, &hardware);
            }
            Query::EnrolArbiter(name, reply) => {
                let request = self.request(Waiting::ArbiterEnrolled(reply));
                let fresh = NodeKey::from_bytes(rand::random());
                self.hub
                    .handle_arbiter_enrolment(now, request, &name, fresh);
            }
            Query::RevokeArbiter(name, reply) => {
                let request = self.request(Waiting::Arbiters(reply));
                self.hub.handle_arbiter_revocation(now, request, &name);
            }
            Query::Arbiters(reply) => {
                drop(reply.send(hub.arbiters().map(|(n, _)| n.to_owned()).collect()))
            }
            Query::BrokerUsers(reply) => {
                let lines = hub.broker_users().map(|l| broker::passwd_lines(&l));
                drop(reply.send(lines));
            }
            Query::ResultsTrf(section, reply) => {
                let trf = tournament::results_trf(&self.trfs, hub, section.as_deref());
                drop(reply.send(trf));
            }
            Query::AlertCommand(id, command, reply) => {
                let request = self.request(Waiting::Alert(reply));
                self.hub
                    .handle_alert_command(now, Some(request), id, command);
            }
            Query::Live(audience, reply) => drop(reply.send(self.live_start(audience))),
            Query::SpectatorBoard(board, reply) => {
                drop(reply.send(self.spectator_board(board, now)));
            }
        }
    }
}
