//! The embedded MQTT broker (rumqttd), for halls that run without an external one.
//!
//! rumqttd's `start()` blocks and has no shutdown, so it runs on its own OS thread for the
//! life of the process, never inside a tokio task (rumqtt issues 973, 245). It keeps
//! everything in memory: the board nodes' outboxes make that safe.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rumqttd::local::{LinkRx, LinkTx};
use rumqttd::{
    AuthAnswer, Broker, Config, ConnectionSettings, OnListening, RouterConfig, SegmentConfig,
    ServerSettings,
};

/// Who may connect: username → the password and how the client id must start
/// (`protocol::identity`). Shared with the hub's loop, which updates the nodes' entries as
/// nodes are enrolled, moved and revoked; the broker reads it at each CONNECT.
#[derive(Debug, Clone, Default)]
pub struct Users(Arc<RwLock<HashMap<String, User>>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct User {
    password: String,
    client_prefix: String,
}

impl Users {
    /// Admits `username` with `password` for client ids starting with `client_prefix`.
    pub fn set(&self, username: String, password: String, client_prefix: String) {
        let user = User {
            password,
            client_prefix,
        };
        self.0.write().expect("users lock").insert(username, user);
    }

    /// Forgets `username`: a revoked node, a node moved to another board.
    pub fn remove(&self, username: &str) {
        self.0.write().expect("users lock").remove(username);
    }

    /// Whether a CONNECT with these may go on: the password (compared in constant time)
    /// and the client id both the user's. A node cannot take another's client id and so
    /// cut its session; a stranger cannot connect at all. A refusal says which, as the
    /// CONNACK tells the client: 4 (bad user name or password) or 5 (not authorised: the
    /// login is right, the client id is not its own).
    pub fn admits(&self, client_id: &str, username: &str, password: &str) -> AuthAnswer {
        let users = self.0.read().expect("users lock");
        let Some(user) = users.get(username) else {
            return AuthAnswer::BadUserNamePassword;
        };
        if !protocol::seal::same_secret(user.password.as_bytes(), password.as_bytes()) {
            return AuthAnswer::BadUserNamePassword;
        }
        if !client_id.starts_with(&user.client_prefix) {
            return AuthAnswer::NotAuthorized;
        }
        AuthAnswer::Admitted
    }

    /// The client id prefix `username` must connect with, for the refusal's log line.
    fn client_prefix(&self, username: &str) -> Option<String> {
        let users = self.0.read().expect("users lock");
        users.get(username).map(|u| u.client_prefix.clone())
    }
}

/// How long a new socket has to send its CONNECT.
pub const CONNECT_TIMEOUT_MS: u16 = 5_000;
/// Sockets the broker holds at once before their CONNECT: a reconnect storm's worth, each
/// closed after [`CONNECT_TIMEOUT_MS`]; a socket beyond is closed at once.
pub const PENDING_CONNECTS: usize = 256;
/// Connections the kernel holds for the broker until it accepts them (Linux caps it at
/// `net.core.somaxconn`, 4,096 by default): a hall's nodes reconnecting at once after a
/// restart. Beyond, the kernel drops a SYN and the node sends it again after 1, 2, 4, 8 s:
/// with tokio's 1,024, a 10,000-board hall took 47-101 s to be back (`hall_day`).
pub const LISTEN_BACKLOG: u32 = 4_096;

/// A message at most once a second, counting the ones left out.
#[derive(Debug, Default)]
struct EverySecond {
    last: Option<Instant>,
    left_out: u64,
}

impl EverySecond {
    /// `Some(how many were left out since the last)` when one may be logged now.
    fn due(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            self.left_out += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.left_out))
    }
}

/// Broker logins as `username:password` lines, for Mosquitto's `mosquitto_passwd -U`.
pub fn passwd_lines(logins: &[(String, String)]) -> String {
    logins
        .iter()
        .map(|(user, password)| format!("{user}:{password}\n"))
        .collect()
}

/// Starts the broker on `listen` and returns once it accepts connections, with the hub's
/// own session on it if `hub_client_id` names one: an in-process link
/// ([`super::client::connect_local`]).
/// With `users`, only they may connect (anonymous clients and wrong passwords are refused at
/// CONNECT); without, anyone (an open hall). It holds `max_connections` at most
/// ([`crate::edge::descriptors::broker_connections`]).
pub fn start(
    listen: SocketAddr,
    listen5: Option<SocketAddr>,
    users: Option<Users>,
    max_connections: usize,
    hub_client_id: Option<&str>,
    event: &str,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> anyhow::Result<Started> {
    // Each listener tells where it is bound (port 0: the one the kernel chose), or why not.
    let (bound_tx, bound) = std::sync::mpsc::channel();
    let on_listening = |name: &'static str| {
        let bound_tx = std::sync::Mutex::new(bound_tx.clone());
        OnListening(Arc::new(move |addr| {
            let _ = bound_tx.lock().map(|tx| tx.send((name, addr)));
        }))
    };

    let mut connections = ConnectionSettings {
        // A socket that sends no CONNECT within this is closed: a real client sends it at
        // once, and an idle socket holds a descriptor.
        connection_timeout_ms: CONNECT_TIMEOUT_MS,
        max_payload_size: 256 * 1024,
        max_inflight_count: 500,
        auth: None,
        external_auth: None,
        dynamic_filters: true,
        external_acl: None,
        max_subscriptions: Some(super::topic_acl::MAX_SUBSCRIPTIONS),
    };
    if users.is_some() {
        // Each login its own topics (`topic_acl`), as Mosquitto's ACL file does.
        let event = event.to_owned();
        connections.external_acl = Some(Arc::new(move |request: &rumqttd::AclRequest<'_>| {
            super::topic_acl::allows(&event, request)
        }));
    }
    if let Some(users) = users.clone() {
        let refusals = Arc::new(std::sync::Mutex::new(EverySecond::default()));
        connections.set_auth_handler(move |client_id: String, username: String, password: String| {
            let users = users.clone();
            let refusals = refusals.clone();
            async move {
                let answer = users.admits(&client_id, &username, &password);
                // The client's own strings, escaped (`?`), and once a second at most: a
                // stranger's login flood must not fill the log.
                let due = || refusals.lock().expect("refusals lock").due();
                match answer {
                    AuthAnswer::Admitted => {}
                    AuthAnswer::BadUserNamePassword => {
                        if let Some(more) = due() {
                            tracing::warn!(?client_id, ?username, refused_since_last = more, "MQTT client refused (CONNACK 4): unknown user or wrong password");
                        }
                    }
                    AuthAnswer::NotAuthorized => {
                        if let Some(more) = due() {
                            let expected = users.client_prefix(&username).unwrap_or_default();
                            tracing::warn!(?client_id, ?username, expected = %format!("{expected}…"), refused_since_last = more, "MQTT client refused (CONNACK 5): the login is right, the client id is not its own");
                        }
                    }
                }
                answer
            }
        });
    }
    let server = ServerSettings {
        name: "zeitnot-v4".into(),
        listen,
        tls: None,
        // Accepted as fast as they come: a hall reconnecting after a restart is 10,000
        // connections at once, and the cap on sockets before their CONNECT bounds a flood.
        next_connection_delay_ms: 0,
        listen_backlog: LISTEN_BACKLOG,
        connections,
        max_pending_connects: PENDING_CONNECTS,
        external_tls: tls.clone().map(crate::edge::keys::tls::mqtt_handshake),
        on_listening: Some(on_listening("MQTT")),
    };
    let config = Config {
        id: 0,
        router: RouterConfig {
            max_connections,
            max_outgoing_packet_count: 500,
            // rumqttd keeps each subscription filter's messages in an in-memory log of this
            // many segments and drops the oldest segment when it needs a new one, even if a
            // subscriber has not read it; it keeps each message in an entry of about 100
            // bytes beside its own bytes. The hub's one wildcard filter carries the whole
            // hall, and the hub takes its messages as the router forwards them (an
            // in-process link), so its log has only to hold a burst the hub has not read:
            // up to 32 × 512 KiB, about 160,000 events, and the segments the hub has read
            // are dropped (`drop_read`, vendor/README.md), so a hall the hub keeps up with
            // holds one segment, not 64 MB of what it read long ago. (With 10 × 1 MiB and the
            // hub on TCP, an 800-board burst once lost 17% of its messages; the nodes
            // resend whatever a log drops.)
            // Every other filter keeps what a slow subscriber needs, no more, a node's
            // downlinks least of all, so that 10,000 nodes' acknowledgements do not pile up.
            // A topic that no filter matches is kept in no log at all.
            max_segment_size: SMALL_SEGMENT,
            max_segment_count: 2,
            custom_segment: Some(HashMap::from([
                // A node reads its downlinks as they come, and each makes good the ones
                // before it (acknowledgements are cumulative, requests are sent again).
                (
                    protocol::topic::downlink_filter("+"),
                    SegmentConfig {
                        max_segment_size: DOWNLINK_SEGMENT,
                        max_segment_count: 2,
                        drop_read: false,
                    },
                ),
                (
                    protocol::topic::uplink_filter("+"),
                    SegmentConfig {
                        max_segment_size: UPLINK_SEGMENT,
                        max_segment_count: UPLINK_SEGMENTS,
                        drop_read: true,
                    },
                ),
                // Alert changes carry their texts in six languages; a pager that falls a
                // few behind reads the zone's retained list.
                (
                    protocol::topic::alerts("+", "#"),
                    SegmentConfig {
                        max_segment_size: 1024 * 1024,
                        max_segment_count: 2,
                        drop_read: false,
                    },
                ),
                // A screen following the live moves gets a whole burst of them.
                (
                    protocol::topic::broadcast_filter("+"),
                    SegmentConfig {
                        max_segment_size: 1024 * 1024,
                        max_segment_count: 2,
                        drop_read: false,
                    },
                ),
            ])),
            ..RouterConfig::default()
        },
        // MQTT 5 on its own listener when asked: the same logins, ACL and bounds.
        v5: listen5.map(|listen5| {
            let server = ServerSettings {
                name: "zeitnot-v5".into(),
                listen: listen5,
                on_listening: Some(on_listening("MQTT 5")),
                ..server.clone()
            };
            HashMap::from([("1".to_owned(), server)])
        }),
        v4: Some(HashMap::from([("1".to_owned(), server)])),
        ..Config::default()
    };
    // The router runs from `new`; the hub's link is made before the network is served.
    let mut broker = Broker::new(config);
    let hub_link = match hub_client_id {
        Some(id) => Some(
            broker
                .link(id)
                .map_err(|e| anyhow::anyhow!("the hub's link to the embedded broker: {e}"))?,
        ),
        None => None,
    };
    std::thread::Builder::new()
        .name("mqtt-broker".into())
        .spawn(move || {
            if let Err(e) = broker.start() {
                tracing::error!(error = %e, "embedded MQTT broker stopped");
            }
        })
        .context("starting the broker thread")?;

    let deadline = Instant::now() + Duration::from_secs(10);
    let mut listening = Listening {
        mqtt: listen,
        mqtt5: None,
    };
    for _ in 0..1 + usize::from(listen5.is_some()) {
        let wait = deadline.saturating_duration_since(Instant::now());
        let (name, addr) = bound
            .recv_timeout(wait)
            .context("the embedded MQTT broker did not start listening")?;
        let asked = if name == "MQTT" {
            listen
        } else {
            listen5.unwrap_or(listen)
        };
        let addr = addr.with_context(|| format!("{name} address {asked} is not free"))?;
        match name {
            "MQTT" => listening.mqtt = addr,
            _ => listening.mqtt5 = Some(addr),
        }
    }
    let listen = listening.mqtt;
    let probe = users.map(|users| {
        let password = format!("{:032x}", rand::random::<u128>());
        users.set(PROBE_USER.into(), password.clone(), PROBE_CLIENT.into());
        (users, password)
    });
    let login = probe.as_ref().map(|(_, password)| password.as_str());
    // Over TLS a listening socket is the sign (a plain MQTT session cannot speak to it).
    let ready = || match tls {
        Some(_) => TcpStream::connect_timeout(&listen, Duration::from_millis(200)).map(drop),
        None => mqtt_session(listen, login),
    };
    while ready().is_err() {
        if Instant::now() > deadline {
            bail!("the embedded MQTT broker did not start listening on {listen}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some((users, _)) = probe {
        users.remove(PROBE_USER);
    }
    Ok(Started {
        hub_link,
        listening,
    })
}

/// Where the embedded broker listens: the asked addresses, a port 0 the one the kernel chose.
#[derive(Debug, Clone, Copy)]
pub struct Listening {
    pub mqtt: SocketAddr,
    pub mqtt5: Option<SocketAddr>,
}

/// The started broker: the hub's own session on it, if asked, and where it listens.
pub struct Started {
    pub hub_link: Option<(LinkTx, LinkRx)>,
    pub listening: Listening,
}

/// A log segment of a filter that is not the hall's uplinks or downlinks, alerts or live
/// moves (the pagers' commands, the hub's status): 1 KiB of messages.
const SMALL_SEGMENT: usize = 1024;

/// A log segment of the hall's uplinks, and how many the log holds at most: 16 MiB, the
/// saturated burst of `hall_throughput -- --nodes 1000` (a window of 51 events a node) with
/// room to spare; 4 MiB lost a third of it. Small, so that the one segment a hall that is
/// read holds is small.
const UPLINK_SEGMENT: usize = 512 * 1024;
const UPLINK_SEGMENTS: usize = 32;

/// A log segment of a node's downlinks: 128 bytes, three or four sealed acknowledgements of
/// about 40 bytes, each kept in an entry of about 100 bytes (rumqttd's publish) beside its
/// topic and payload. With 1 KiB segments (and entries of 260 bytes, their properties
/// inline) a node's two held some fifty of them: 20 KiB a board, a third of a 10,000-board
/// hall's memory (`heaptrack`, 2026-11-28).
const DOWNLINK_SEGMENT: usize = 128;

/// The readiness probe's one-time identity, removed once the broker answered it.
const PROBE_USER: &str = "zeitnot-probe";
const PROBE_CLIENT: &str = "zeitnot-hub-probe";

/// One MQTT 3.1.1 session: CONNECT (with the probe's login, if the broker wants one),
/// CONNACK accepted, close. A bare TCP probe would do to know the port listens, but rumqttd
/// logs every connection closed before its CONNECT as an error, and a newcomer's first line
/// would be an `ERROR` for nothing.
fn mqtt_session(broker: SocketAddr, password: Option<&str>) -> std::io::Result<()> {
    use std::io::{Error, Read, Write};
    let client_id = PROBE_CLIENT.as_bytes();
    let mut stream = TcpStream::connect_timeout(&broker, Duration::from_millis(200))?;
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    // Variable header: protocol name "MQTT", level 4, flags (clean session; username and
    // password with a login), keep-alive 10 s.
    let flags = if password.is_some() { 0xc2 } else { 0x02 };
    let mut connect = vec![0x00, 0x04, b'M', b'Q', b'T', b'T', 0x04, flags, 0x00, 0x0a];
    let mut field = |bytes: &[u8]| {
        connect.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
        connect.extend_from_slice(bytes);
    };
    field(client_id);
    if let Some(password) = password {
        field(PROBE_USER.as_bytes());
        field(password.as_bytes());
    }
    let mut packet = vec![0x10, connect.len() as u8];
    packet.extend_from_slice(&connect);
    stream.write_all(&packet)?;
    let mut connack = [0u8; 4];
    stream.read_exact(&mut connack)?;
    if connack != [0x20, 0x02, 0x00, 0x00] {
        return Err(Error::other(format!("CONNACK {connack:02x?}")));
    }
    // No DISCONNECT: rumqttd 0.20 logs a client's DISCONNECT as an error ("router-drop"),
    // and a close after the CONNACK as the peer's ordinary leaving.
    Ok(())
}
