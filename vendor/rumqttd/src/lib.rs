use std::fmt;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::{collections::HashMap, path::Path};

use serde::{Deserialize, Serialize};
use tracing_subscriber::{
    filter::EnvFilter,
    fmt::{
        format::{Format, Pretty},
        Layer,
    },
    layer::Layered,
    reload::Handle,
    Registry,
};

pub use link::alerts;
pub use link::local;
pub use link::meters;
/// Zeitnot's patch: what a connection reads and writes, for [`TlsHandshake`].
pub use link::network::N as NetworkStream;
pub use router::{Alert, Forward, IncomingMeter, Meter, Notification, OutgoingMeter, Router};
use segments::Storage;
pub use server::{Broker, LinkType, Server};

pub use self::router::shared_subs::Strategy;

mod link;
pub mod protocol;
mod router;
mod segments;
mod server;

pub type ConnectionId = usize;
pub type RouterId = usize;
pub type NodeId = usize;
pub type Topic = String;
pub type Filter = String;
pub type TopicId = usize;
pub type Offset = (u64, u64);
pub type Cursor = (u64, u64);

pub type ClientId = String;
pub type AuthUser = String;
pub type AuthPass = String;
pub type AuthHandler = Arc<
    dyn Fn(ClientId, AuthUser, AuthPass) -> Pin<Box<dyn std::future::Future<Output = AuthAnswer> + Send>>
        + Send
        + Sync,
>;

/// Zeitnot's patch (vendor/README.md): an auth handler's answer, and for a refusal the
/// CONNACK return code the client is told (upstream closed the connection without one, and
/// clients such as `mosquitto_sub` retried in silence). A `bool` is `Admitted` or
/// `BadUserNamePassword`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthAnswer {
    Admitted,
    /// 3.1.1's return code 4: an unknown user or a wrong password.
    BadUserNamePassword,
    /// 3.1.1's return code 5: the login is right but may not connect so (another's client
    /// id, for instance).
    NotAuthorized,
}

impl From<bool> for AuthAnswer {
    fn from(admitted: bool) -> AuthAnswer {
        if admitted {
            AuthAnswer::Admitted
        } else {
            AuthAnswer::BadUserNamePassword
        }
    }
}

/// Zeitnot's patch (vendor/README.md): what a remote client asks to do, for the topic ACL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclAction<'a> {
    /// A PUBLISH to `topic`.
    Publish { topic: &'a str, retain: bool },
    /// A SUBSCRIBE to `filter`, as the client wrote it (a shared subscription with its
    /// `$share/GROUP/`).
    Subscribe { filter: &'a str },
    /// The last will of its CONNECT.
    Will { topic: &'a str, retain: bool },
}

/// Zeitnot's patch: who asks (the CONNECT's client id and username) and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclRequest<'a> {
    pub client_id: &'a str,
    pub username: Option<&'a str>,
    pub action: AclAction<'a>,
}

/// Zeitnot's patch: whether a remote client may do what it asks. A denied PUBLISH is
/// acknowledged and dropped (MQTT 3.1.1 has no refusal for it), a denied SUBSCRIBE answered
/// with a failure for each of its filters, a denied will refuses the connection.
pub type AclHandler = Arc<dyn Fn(&AclRequest<'_>) -> bool + Send + Sync>;

#[derive(Debug, Default, Serialize, Deserialize, Clone)]
pub struct Config {
    pub id: usize,
    pub router: RouterConfig,
    pub v4: Option<HashMap<String, ServerSettings>>,
    pub v5: Option<HashMap<String, ServerSettings>>,
    pub ws: Option<HashMap<String, ServerSettings>>,
    pub cluster: Option<ClusterSettings>,
    pub console: Option<ConsoleSettings>,
    pub bridge: Option<BridgeConfig>,
    pub prometheus: Option<PrometheusSetting>,
    pub metrics: Option<HashMap<MetricType, MetricSettings>>,
}

#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct PrometheusSetting {
    #[deprecated(note = "Use listen instead")]
    port: Option<u16>,
    listen: Option<SocketAddr>,
    // How frequently to update metrics
    interval: u64,
}

// TODO: Change names without _ until config-rs issue is resolved
// https://github.com/mehcode/config-rs/issues/369
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(untagged)]
pub enum TlsConfig {
    Rustls {
        capath: Option<String>,
        certpath: String,
        keypath: String,
    },
    NativeTls {
        pkcs12path: String,
        pkcs12pass: String,
    },
}

impl TlsConfig {
    // Returns true only if all of the file paths inside `TlsConfig` actually exists on file system.
    // NOTE: This doesn't verify if certificate files are in required format or not.
    pub fn validate_paths(&self) -> bool {
        match self {
            TlsConfig::Rustls {
                capath,
                certpath,
                keypath,
            } => {
                let ca = capath.is_none() || capath.as_ref().is_some_and(|v| Path::new(v).exists());

                ca && [certpath, keypath].iter().all(|v| Path::new(v).exists())
            }
            TlsConfig::NativeTls { pkcs12path, .. } => Path::new(pkcs12path).exists(),
        }
    }
}

/// Zeitnot's patch (vendor/README.md): a TLS handshake the embedding program does itself
/// (its own rustls and certificates), run in the connection's task, not the accept loop.
pub type TlsHandshake = Arc<
    dyn Fn(
            tokio::net::TcpStream,
        ) -> Pin<Box<dyn std::future::Future<Output = std::io::Result<Box<dyn NetworkStream>>> + Send>>
        + Send
        + Sync,
>;

/// Zeitnot's patch: [`TlsHandshake`] in a type that `ServerSettings` can derive with.
#[derive(Clone)]
pub struct ExternalTls(pub TlsHandshake);

impl fmt::Debug for ExternalTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExternalTls")
    }
}

#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct ServerSettings {
    pub name: String,
    pub listen: SocketAddr,
    pub tls: Option<TlsConfig>,
    pub next_connection_delay_ms: u64,
    pub connections: ConnectionSettings,
    /// Zeitnot's patch (vendor/README.md): sockets accepted that have not sent their CONNECT
    /// yet, at once; beyond, the oldest of them is closed.
    #[serde(default = "default_max_pending_connects")]
    pub max_pending_connects: usize,
    /// Zeitnot's patch (vendor/README.md): the listening socket's backlog, connections the
    /// kernel holds until they are accepted (capped by `net.core.somaxconn`); beyond, it drops
    /// their SYN and the client sends it again a second later, then 2, 4, 8 s.
    #[serde(default = "default_listen_backlog")]
    pub listen_backlog: u32,
    /// Zeitnot's patch: TLS by the embedding program; `None`: `tls` above, or plain TCP.
    #[serde(skip)]
    pub external_tls: Option<ExternalTls>,
    /// Zeitnot's patch (vendor/README.md): told the address the listener is bound to (its
    /// port when `listen` asked for port 0), or why it could not bind.
    #[serde(skip)]
    pub on_listening: Option<OnListening>,
}

/// Zeitnot's patch: [`ServerSettings::on_listening`]'s callback.
#[derive(Clone)]
pub struct OnListening(pub Arc<dyn Fn(std::io::Result<SocketAddr>) + Send + Sync>);

impl fmt::Debug for OnListening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnListening")
    }
}

fn default_listen_backlog() -> u32 {
    // tokio's `TcpListener::bind`.
    1024
}

fn default_max_pending_connects() -> usize {
    256
}

impl ServerSettings {
    pub fn set_auth_handler<F, O, A>(&mut self, auth_fn: F)
    where
        F: Fn(ClientId, AuthUser, AuthPass) -> O + Send + Sync + 'static,
        O: IntoFuture<Output = A> + 'static,
        O::IntoFuture: Send,
        A: Into<AuthAnswer>,
    {
        self.connections.set_auth_handler(auth_fn)
    }
}

#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct BridgeConfig {
    pub name: String,
    pub addr: String,
    pub qos: u8,
    pub sub_path: Filter,
    pub reconnection_delay: u64,
    pub ping_delay: u64,
    pub connections: ConnectionSettings,
    #[serde(default)]
    pub transport: Transport,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct ConnectionSettings {
    pub connection_timeout_ms: u16,
    pub max_payload_size: usize,
    pub max_inflight_count: usize,
    pub auth: Option<HashMap<String, String>>,
    #[serde(skip)]
    pub external_auth: Option<AuthHandler>,
    #[serde(default)]
    pub dynamic_filters: bool,
    /// Zeitnot's patch (vendor/README.md): the topic ACL of remote clients; `None`: all.
    #[serde(skip)]
    pub external_acl: Option<AclHandler>,
    /// Zeitnot's patch: subscription filters one connection may hold; `None`: no limit.
    #[serde(default)]
    pub max_subscriptions: Option<usize>,
}

impl ConnectionSettings {
    pub fn set_auth_handler<F, O, A>(&mut self, auth_fn: F)
    where
        F: Fn(ClientId, AuthUser, AuthPass) -> O + Send + Sync + 'static,
        O: IntoFuture<Output = A> + 'static,
        O::IntoFuture: Send,
        A: Into<AuthAnswer>,
    {
        self.external_auth = Some(Arc::new(move |client_id, username, password| {
            let auth = auth_fn(client_id, username, password).into_future();
            Box::pin(async move { auth.await.into() })
        }));
    }
}

impl fmt::Debug for ConnectionSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionSettings")
            .field("connection_timeout_ms", &self.connection_timeout_ms)
            .field("max_payload_size", &self.max_payload_size)
            .field("max_inflight_count", &self.max_inflight_count)
            .field("auth", &self.auth)
            .field("external_auth", &self.external_auth.is_some())
            .field("dynamic_filters", &self.dynamic_filters)
            .finish()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterSettings {
    /// Id with which this node connects to other nodes of the mesh
    pub node_id: NodeId,
    /// Address on which this broker is listening for mesh connections
    pub listen: String,
    /// Address of clusters that this node has to initiate connection
    pub seniors: Vec<(ConnectionId, String)>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct RouterConfig {
    pub max_connections: usize,
    pub max_outgoing_packet_count: u64,
    pub max_segment_size: usize,
    pub max_segment_count: usize,
    pub custom_segment: Option<HashMap<String, SegmentConfig>>,
    pub initialized_filters: Option<Vec<Filter>>,
    // defaults to Round Robin
    #[serde(default)]
    pub shared_subscriptions_strategy: Strategy,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct SegmentConfig {
    pub max_segment_size: usize,
    pub max_segment_count: usize,
    /// Zeitnot's patch (vendor/README.md): drop the sealed segments once every connected
    /// subscriber of the filter has read them all (each at QoS 0, none in a shared group),
    /// so that the log holds only a burst that is not read yet. A subscriber that is not
    /// connected then finds nothing of what came while it was away.
    #[serde(default)]
    pub drop_read: bool,
}

type ReloadHandle = Handle<EnvFilter, Layered<Layer<Registry, Pretty, Format<Pretty>>, Registry>>;

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct ConsoleSettings {
    pub listen: String,
    #[serde(skip)]
    filter_handle: Option<ReloadHandle>,
}

impl ConsoleSettings {
    pub fn set_filter_reload_handle(&mut self, handle: ReloadHandle) {
        self.filter_handle.replace(handle);
    }
}

#[derive(Debug, Serialize, Deserialize, Clone, Default)]
pub enum Transport {
    #[serde(rename = "tcp")]
    #[default]
    Tcp,
    #[serde(rename = "tls")]
    Tls {
        ca: PathBuf,
        client_auth: Option<ClientAuth>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientAuth {
    certs: PathBuf,
    key: PathBuf,
}

#[derive(Debug, Serialize, Deserialize, Clone, Hash, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MetricType {
    Meters,
    Alerts,
}

#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct MetricSettings {
    push_interval: u64,
}
