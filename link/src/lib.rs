//! An MQTT session that survives its broker: the one way both the hub and the board nodes
//! talk to MQTT.
//!
//! A task drives rumqttc's event loop. After every (re)connect it subscribes again (the broker
//! may have lost the session: rumqttd keeps nothing across restarts) and says so, so that the
//! owner can resend what is unacknowledged; between attempts it waits a jittered,
//! exponentially growing time ([`backoff`]). Given several brokers (a cluster's nodes,
//! [`Brokers`]) it tries the next one after each failed attempt, so a session moves to a
//! survivor when its broker dies.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{
    AsyncClient, Event, EventLoop, MqttOptions, NetworkOptions, Packet, QoS, TlsConfiguration,
    Transport,
};
use tokio::sync::mpsc;

pub mod backoff;
pub mod tls;

use crate::backoff::Backoff;

/// Where the broker is: `mqtt://host:port` or `host:port` (plain TCP), `mqtts://host:port`
/// (TLS, with the hall CA pinned: [`LinkOptions::tls`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddr {
    pub host: String,
    pub port: u16,
    /// `mqtts://`: the session is TLS.
    pub tls: bool,
}

impl BrokerAddr {
    /// A plain `mqtt://` broker off this machine: the login and every message would cross
    /// the hall's network in clear.
    pub fn in_clear_off_loopback(&self) -> bool {
        let loopback = self.host.eq_ignore_ascii_case("localhost")
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        !self.tls && !loopback
    }

    /// A plain-TCP broker at `host:port`.
    pub fn plain(host: impl Into<String>, port: u16) -> BrokerAddr {
        BrokerAddr {
            host: host.into(),
            port,
            tls: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("broker address {0:?}: expected mqtts://HOST:PORT, mqtt://HOST:PORT or HOST:PORT")]
pub struct BadBrokerAddr(String);

/// The brokers a session may use, tried in turn (`ADDR,ADDR,…`: a cluster's nodes, each
/// holding the same sessions); never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brokers(Vec<BrokerAddr>);

/// The most brokers one list names: a cluster has a handful of nodes.
pub const MAX_BROKERS: usize = 16;

impl Brokers {
    /// The first broker, where the session starts.
    pub fn first(&self) -> &BrokerAddr {
        &self.0[0]
    }

    pub fn iter(&self) -> impl Iterator<Item = &BrokerAddr> {
        self.0.iter()
    }

    /// Whether any of them is TLS (all then need the hall CA).
    pub fn any_tls(&self) -> bool {
        self.0.iter().any(|b| b.tls)
    }
}

impl From<BrokerAddr> for Brokers {
    fn from(addr: BrokerAddr) -> Brokers {
        Brokers(vec![addr])
    }
}

impl FromStr for Brokers {
    type Err = BadBrokerAddr;

    fn from_str(s: &str) -> Result<Brokers, BadBrokerAddr> {
        let addrs = s
            .split(',')
            .map(|one| one.trim().parse())
            .collect::<Result<Vec<BrokerAddr>, _>>()?;
        if addrs.len() > MAX_BROKERS {
            return Err(BadBrokerAddr(format!(
                "{} brokers, at most {MAX_BROKERS}",
                addrs.len()
            )));
        }
        Ok(Brokers(addrs))
    }
}

impl fmt::Display for Brokers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, addr) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{addr}")?;
        }
        Ok(())
    }
}

impl FromStr for BrokerAddr {
    type Err = BadBrokerAddr;

    fn from_str(s: &str) -> Result<BrokerAddr, BadBrokerAddr> {
        let bad = || BadBrokerAddr(s.to_owned());
        let (tls, rest) = match s.strip_prefix("mqtts://") {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix("mqtt://").unwrap_or(s)),
        };
        let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
        let port = port.trim_end_matches('/').parse().map_err(|_| bad())?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() {
            return Err(bad());
        }
        Ok(BrokerAddr {
            host: host.to_owned(),
            port,
            tls,
        })
    }
}

impl fmt::Display for BrokerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.tls {
            true => write!(f, "mqtts://{host}:{}", self.port),
            false => write!(f, "{host}:{}", self.port),
        }
    }
}

/// What the session reports to its owner.
#[derive(Debug)]
pub enum LinkEvent {
    /// Connected (again) and subscribed: anything unacknowledged should be sent again.
    Connected,
    /// The connection dropped; the session is reconnecting.
    Disconnected,
    /// A connect to `broker` failed (refused, unreachable, or a CONNACK refusing the
    /// login): the `attempts`-th in a row. Logged at warn by the link at a falling rate
    /// (the 1st, 2nd, 4th, 8th, …); the receiver shows it (`/healthz`, the metrics).
    Unreachable {
        broker: String,
        error: String,
        attempts: u64,
    },
    /// A message arrived on the subscription.
    Message { topic: String, payload: Vec<u8> },
}

/// How to open a session.
#[derive(Debug, Clone)]
pub struct LinkOptions {
    pub client_id: String,
    /// `false` asks the broker to keep the subscription and queue QoS 1 messages while this
    /// client is away (the hub does this with an external broker).
    pub clean_session: bool,
    /// The topic filters to subscribe to, after every connect, …
    pub subscribe: Vec<String>,
    /// … at this QoS (1 by default).
    pub subscribe_qos: QoS,
    /// Capacity of the request channel to the event loop (publishes queued before sending).
    pub request_capacity: usize,
    /// Outgoing QoS 1 messages in flight before rumqttc waits for PUBACKs.
    pub inflight: u16,
    /// Reconnect waits grow from this …
    pub backoff_base: Duration,
    /// … up to this.
    pub backoff_max: Duration,
    /// Seeds the reconnect jitter.
    pub seed: u64,
    /// The MQTT username and password (see the README's *Security*); `None`: anonymous.
    pub credentials: Option<(String, String)>,
    /// For an `mqtts://` broker: the TLS configuration, the hall CA pinned
    /// ([`tls::client_config`]).
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl LinkOptions {
    pub fn new(client_id: impl Into<String>) -> LinkOptions {
        LinkOptions {
            client_id: client_id.into(),
            clean_session: true,
            subscribe: Vec::new(),
            subscribe_qos: QoS::AtLeastOnce,
            request_capacity: 1024,
            inflight: 100,
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            seed: 0,
            credentials: None,
            tls: None,
        }
    }
}

/// Starts the session. Publish with the returned client (`try_publish`: never wait on a
/// broker that is away; the outbox resends). The task ends, and the connection with it,
/// when the receiver is dropped.
pub fn start(addr: &BrokerAddr, options: LinkOptions) -> (AsyncClient, mpsc::Receiver<LinkEvent>) {
    start_any(&Brokers::from(addr.clone()), options)
}

/// [`start`] on the first of `brokers`, moving on to the next after each failed attempt.
pub fn start_any(
    brokers: &Brokers,
    options: LinkOptions,
) -> (AsyncClient, mpsc::Receiver<LinkEvent>) {
    for addr in brokers.iter().filter(|a| a.in_clear_off_loopback()) {
        if options.tls.is_some() {
            tracing::warn!(%addr, "the broker is mqtt://, so the hall CA given is not used: the login and every message cross the hall's network in clear; use mqtts://");
        } else {
            tracing::warn!(%addr, "the broker is mqtt:// off this machine: the login and every message cross the hall's network in clear; use mqtts:// with the hall CA (--ca-file)");
        }
    }
    let (client, mut eventloop) = AsyncClient::new(
        mqtt_options(brokers.first(), &options),
        options.request_capacity,
    );
    // Small request/response messages (an event, its acknowledgement) must not wait for
    // Nagle's algorithm to meet the peer's delayed ACK: that stalls a round trip by ~40 ms.
    let mut network = NetworkOptions::new();
    network.set_tcp_nodelay(true);
    eventloop.set_network_options(network);
    let (events, receiver) = mpsc::channel(options.request_capacity.max(64));
    tokio::spawn(drive(
        client.clone(),
        eventloop,
        brokers.clone(),
        options,
        events,
    ));
    (client, receiver)
}

/// The session's options for one broker.
fn mqtt_options(addr: &BrokerAddr, options: &LinkOptions) -> MqttOptions {
    let mut mqtt = MqttOptions::new(options.client_id.clone(), addr.host.clone(), addr.port);
    mqtt.set_keep_alive(Duration::from_secs(5))
        .set_clean_session(options.clean_session)
        .set_inflight(options.inflight)
        .set_max_packet_size(256 * 1024, 256 * 1024);
    if let Some((username, password)) = &options.credentials {
        mqtt.set_credentials(username.clone(), password.clone());
    }
    if addr.tls {
        // Without the hall CA nothing is trusted: every attempt fails, and says why.
        let config = options.tls.clone().unwrap_or_else(|| {
            tracing::error!(%addr, "an mqtts:// broker needs the hall CA (--ca-file): no server will be trusted");
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            Arc::new(
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("ring supports the default TLS versions")
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth(),
            )
        });
        mqtt.set_transport(Transport::tls_with_config(TlsConfiguration::Rustls(config)));
    }
    mqtt
}

async fn drive(
    client: AsyncClient,
    mut eventloop: EventLoop,
    brokers: Brokers,
    options: LinkOptions,
    events: mpsc::Sender<LinkEvent>,
) {
    let mut backoff = Backoff::new(options.backoff_base, options.backoff_max, options.seed);
    let mut connected = false;
    // Connects failed in a row, for the falling rate of the warnings.
    let mut failures: u64 = 0;
    // Which of `brokers` the session is on.
    let mut on = 0;
    loop {
        // Once the receiver is gone, so is the connection (by closing it: rumqttd 0.20 logs
        // a DISCONNECT as an error), not at the next packet: a quiet session would linger,
        // and a node started again under the same client id would have to push it out.
        let polled = tokio::select! {
            polled = eventloop.poll() => polled,
            () = events.closed() => return,
        };
        let report = match polled {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                backoff.reset();
                if failures > 0 {
                    tracing::warn!(broker = %brokers.0[on], failures, "MQTT broker reached again");
                }
                failures = 0;
                for filter in &options.subscribe {
                    if let Err(e) = client.try_subscribe(filter.clone(), options.subscribe_qos) {
                        tracing::warn!(error = %e, "subscribe request not queued");
                    }
                }
                connected = true;
                Some(LinkEvent::Connected)
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => Some(LinkEvent::Message {
                topic: publish.topic,
                payload: publish.payload.to_vec(),
            }),
            Ok(_) => None,
            Err(e) => {
                let wait = backoff.next_wait();
                let broker = brokers.0[on].to_string();
                let was_connected = std::mem::replace(&mut connected, false);
                if was_connected {
                    tracing::warn!(%broker, error = %e, "MQTT connection lost; reconnecting");
                    if events.send(LinkEvent::Disconnected).await.is_err() {
                        return;
                    }
                } else {
                    // Never silent: a program that cannot reach its broker says so, the
                    // 1st, 2nd, 4th, 8th… time in a row, not every 5 s.
                    failures += 1;
                    if failures.is_power_of_two() {
                        tracing::warn!(%broker, error = %e, attempts = failures, ?wait, "cannot reach the MQTT broker; retrying");
                    } else {
                        tracing::debug!(%broker, error = %e, attempts = failures, ?wait, "MQTT connect failed; retrying");
                    }
                    let unreachable = LinkEvent::Unreachable {
                        broker,
                        error: e.to_string(),
                        attempts: failures,
                    };
                    if events.send(unreachable).await.is_err() {
                        return;
                    }
                }
                if brokers.0.len() > 1 {
                    // The next broker: a dead node's sessions live on at its peers.
                    on = (on + 1) % brokers.0.len();
                    let next = &brokers.0[on];
                    tracing::debug!(broker = %next, "trying the next broker");
                    eventloop.mqtt_options = mqtt_options(next, &options);
                }
                tokio::time::sleep(wait).await;
                None
            }
        };
        if let Some(report) = report {
            if events.send(report).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_addresses_parse_with_or_without_scheme() {
        let want = BrokerAddr::plain("10.0.0.5", 1883);
        assert_eq!("mqtt://10.0.0.5:1883".parse::<BrokerAddr>().unwrap(), want);
        assert_eq!("10.0.0.5:1883".parse::<BrokerAddr>().unwrap(), want);
        for bad in ["10.0.0.5", "mqtt://:1883", "host:port", "host:70000"] {
            assert!(bad.parse::<BrokerAddr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_plain_broker_off_this_machine_is_in_clear() {
        let in_clear = |s: &str| s.parse::<BrokerAddr>().unwrap().in_clear_off_loopback();
        assert!(in_clear("mqtt://hub.hall.lan:1883"));
        assert!(in_clear("10.0.0.11:1883"));
        assert!(!in_clear("mqtts://hub.hall.lan:8883"));
        assert!(!in_clear("mqtt://127.0.0.1:1883"));
        assert!(!in_clear("localhost:1883"));
        assert!(!in_clear("mqtt://[::1]:1883"));
    }

    #[test]
    fn a_list_of_brokers_parses_and_prints_back() {
        let one: Brokers = "10.0.0.5:1883".parse().unwrap();
        assert_eq!(one, Brokers::from(BrokerAddr::plain("10.0.0.5", 1883)));
        let three: Brokers = "a:1883, mqtts://b:8883,c:1884".parse().unwrap();
        assert_eq!(three.iter().count(), 3);
        assert_eq!(three.first(), &BrokerAddr::plain("a", 1883));
        assert!(three.any_tls());
        assert_eq!(three.to_string(), "a:1883,mqtts://b:8883,c:1884");
        for bad in ["", "a:1883,", "a:1883,,b:1", "a:1883,b"] {
            assert!(bad.parse::<Brokers>().is_err(), "{bad:?}");
        }
        let many = vec!["h:1"; MAX_BROKERS + 1].join(",");
        assert!(many.parse::<Brokers>().is_err());
    }

    #[test]
    fn mqtts_is_tls_and_prints_back_as_it_was_given() {
        let tls: BrokerAddr = "mqtts://hub.hall:8883".parse().unwrap();
        assert!(tls.tls);
        assert_eq!((tls.host.as_str(), tls.port), ("hub.hall", 8883));
        assert_eq!(tls.to_string(), "mqtts://hub.hall:8883");
        let v6: BrokerAddr = "mqtts://[::1]:8883".parse().unwrap();
        assert_eq!(v6.host, "::1");
        assert_eq!(v6.to_string(), "mqtts://[::1]:8883");
        assert_eq!(BrokerAddr::plain("h", 1).to_string(), "h:1");
    }
}
