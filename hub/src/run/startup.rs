//! What `serve` starts before the loop runs: the hall's certificates, the broker (embedded,
//! or an external one the hub logs in to), the page's access, and what it tells the
//! technician at every start.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use anyhow::Context;
use link::BrokerAddr;
use protocol::identity;
use protocol::seal::NodeKey;

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{BrokerChoice, Running, ServeConfig};
use crate::core::hub::Restored;
use crate::edge::http::api::Query;
use crate::edge::http::routes;
use crate::edge::journal::Journal;
use crate::edge::keys::arbiter_token::TokenSource;
use crate::edge::mqtt::client::{self, HubLink, Incoming};
use crate::edge::{
    descriptors, http::access::Access, http::login, http::sessions::Sessions, keys::hall_ca,
    mqtt::broker,
};
use crate::metrics::Metrics;

/// The journal's secrets: the hub's MQTT session id, and the hall's secret its broker
/// password and signing key derive from.
pub(super) struct Secrets {
    session: String,
    hall: NodeKey,
}

impl Secrets {
    pub(super) fn of(journal: &Journal) -> anyhow::Result<Secrets> {
        Ok(Secrets {
            session: journal
                .session_secret()
                .context("the hub's MQTT session id")?,
            hall: journal.hall_secret().context("the hall's secret")?,
        })
    }
}

/// A configuration the hub cannot serve with.
pub(super) fn check(config: &ServeConfig) -> anyhow::Result<()> {
    let event = &config.hub.event;
    anyhow::ensure!(
        protocol::topic::is_valid_event(event),
        "event id {event:?}: use letters, digits, '-', '_' or '.'"
    );
    Ok(())
}

/// The page's and the API's listening socket, bound first: a busy address fails the start
/// before anything else, and a cluster's lease names the address it got (`--http …:0`: the
/// port the kernel chose).
pub(super) async fn bind_http(config: &ServeConfig) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(config.http)
        .await
        .with_context(|| format!("HTTP address {}", config.http))
}

/// The page and the API on `listener` (HTTPS with the hall's certificate where TLS is on);
/// the server to spawn.
pub(super) async fn http(
    config: &ServeConfig,
    listener: tokio::net::TcpListener,
    hall_tls: &hall_ca::HallTls,
    queries: mpsc::Sender<Query>,
    metrics: &Arc<Metrics>,
    access: &Access,
    standby: crate::edge::http::standby_door::Standby,
) -> anyhow::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let tls = config.tls.on(config.http).then(|| hall_tls.http.clone());
    let ca = hall_tls.ca_pem.clone().into();
    routes::bind(
        listener,
        queries,
        metrics.clone(),
        access.clone(),
        tls,
        ca,
        standby,
    )
    .await
}

/// The hub is ready: said in the log, and the arbiters' login links printed where the
/// technician looks (unless the configuration gave the token).
pub(super) fn announce(
    config: &ServeConfig,
    http: SocketAddr,
    broker: BrokerAddr,
    token: String,
    source: TokenSource,
) -> Running {
    let https = config.tls.on(config.http);
    tracing::info!(%http, %broker, event = %config.hub.event, "hub ready");
    if source != TokenSource::Configured {
        print_login_links(http, https, &token, &config.data, source);
    }
    Running {
        http,
        broker,
        token,
        https,
    }
}

/// What the start's fold found in the journal.
pub(super) fn log_replayed(restored: &Restored) {
    tracing::info!(
        records = restored.records,
        boards = restored.boards,
        resumed = restored.resumed,
        alerts = restored.alerts,
        healed = restored.healed,
        "journal replayed"
    );
}

/// The hall CA, and the hub's certificate for every name it is reached under.
pub(super) fn hall_tls(config: &ServeConfig) -> anyhow::Result<hall_ca::HallTls> {
    let mut names = config.hosts.clone();
    names.push(config.http.ip().to_string());
    if let BrokerChoice::Embedded(listen) = &config.broker {
        names.push(listen.ip().to_string());
    }
    names.retain(|n| n != "0.0.0.0" && n != "::");
    hall_ca::load_or_make(&config.data, &names)
}

/// Who the embedded broker lets in: only the hall's own clients, unless the hall is open
/// (`None`: everyone, or an external broker, which keeps its own). The hub itself is in the
/// same process (its own link, no login).
pub(super) fn broker_users(config: &ServeConfig) -> Option<broker::Users> {
    match (&config.broker, config.hub.open_hall) {
        (BrokerChoice::Embedded(_), false) => Some(broker::Users::default()),
        _ => None,
    }
}

/// The hub's link to its broker: the embedded one started here, or an external one the
/// hub logs in to (a clustered hall's gateway, with `cluster`: the boards then travel on
/// the cluster). Returns where nodes and pagers reach the broker.
pub(super) fn connect_broker(
    config: &ServeConfig,
    secrets: &Secrets,
    hall_tls: &hall_ca::HallTls,
    users: Option<broker::Users>,
    cluster: Option<async_nats::Client>,
    metrics: &std::sync::Arc<Metrics>,
) -> anyhow::Result<(BrokerAddr, (HubLink, Incoming))> {
    let event = &config.hub.event;
    let client_id = client::client_id(event, &secrets.session);
    match &config.broker {
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
            let started = broker::start(
                *listen,
                config.mqtt5,
                users,
                max_connections,
                Some(&client_id),
                event,
                mqtts.then(|| hall_tls.mqtt.clone()),
            )?;
            let local = started.hub_link.expect("a link was asked for");
            // Where it is bound: a port 0 asked for is the kernel's choice, said here.
            let listen = started.listening.mqtt;
            let host = match listen.ip() {
                ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                ip => ip,
            };
            match started.listening.mqtt5 {
                Some(mqtt5) => {
                    tracing::info!(%listen, tls = mqtts, %mqtt5, "embedded MQTT broker listening")
                }
                None => tracing::info!(%listen, tls = mqtts, "embedded MQTT broker listening"),
            }
            let addr = BrokerAddr {
                tls: mqtts,
                ..BrokerAddr::plain(host.to_string(), listen.port())
            };
            Ok((addr, client::connect_local(local, event, metrics.clone())?))
        }
        BrokerChoice::External(brokers) => {
            let hub_login = (
                identity::HUB_USER.to_owned(),
                identity::hub_password(&secrets.hall),
            );
            let tls = match (brokers.any_tls(), &config.broker_ca) {
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
            let session = client::connect(
                brokers,
                event,
                &client_id,
                hub_login,
                tls,
                cluster,
                metrics.clone(),
            );
            Ok((brokers.first().clone(), session))
        }
    }
}

/// Who the page and the API let in: the arbiters' token, the page's sessions kept in the
/// data directory, the names the hub is reached under.
pub(super) fn page_access(config: &ServeConfig, token: &str) -> anyhow::Result<Access> {
    let sessions = Sessions::kept_in(
        &config.data.join("page-sessions"),
        std::time::SystemTime::now(),
    )?;
    Ok(Access::new(token.to_owned())
        .with_sessions(sessions)
        .with_hosts(config.hosts.clone())
        .with_open_hall(config.hub.open_hall))
}

/// The choices of the configuration the technician is warned about at every start: a
/// plain HTTP listener off loopback, an open hall, a live broadcast.
pub(super) fn warn_of_choices(config: &ServeConfig) {
    warn_if_plain("HTTP", config.http, config.tls.on(config.http));
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
}

/// The arbiters' login links of a hub whose token it made itself, on stdout and stderr (the
/// unit's journal): like Jupyter, the way in is printed where the technician looks.
fn print_login_links(
    http: SocketAddr,
    https: bool,
    token: &str,
    data: &std::path::Path,
    source: TokenSource,
) {
    let made = match source {
        TokenSource::Made => "made now",
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
