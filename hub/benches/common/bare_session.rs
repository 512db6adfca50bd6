//! A simulated node's MQTT 3.1.1 session, reduced to what a board node does: connect with its
//! login, subscribe to its downlinks, publish its events at QoS 0 (as a node does: the hub's Ack
//! acknowledges them), read what the broker sends.
//!
//! Ten thousand `link` sessions (rumqttc's event loop, a channel each way, a task each) cost
//! this process more than a core, and it shares the machine with the hub it measures. Here a
//! node is one socket its own task reads and writes: the packets on the wire are the same
//! (rumqttc's own encoder and decoder write and read them), only the machinery around them is
//! gone. The hub sees what a hall of `board-node`s would send it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use protocol::seal::NodeKey;
use protocol::{identity, topic, BoardNo};

use bytes::BytesMut;
use rumqttc::mqttbytes::v4::{Connect, Packet, PubAck, Publish, Subscribe};
use rumqttc::mqttbytes::QoS;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A session's socket: plain TCP, or TLS over it.
trait Socket: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Socket for T {}

/// The largest packet read: a downlink, or a pager's alert.
const MAX_PACKET: usize = 256 * 1024;
/// The session's keep-alive: a ping goes out when nothing else did for half of it.
const KEEP_ALIVE: Duration = Duration::from_secs(60);
/// How long a connection may take to be accepted and subscribed (rumqttc's default).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The broker's socket address (a host name is resolved by the system).
pub fn socket_addr(broker: &link::BrokerAddr) -> SocketAddr {
    use std::net::ToSocketAddrs;
    (broker.host.as_str(), broker.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .expect("the broker's address")
}

/// What a session connects with.
pub struct Login {
    pub broker: SocketAddr,
    pub client_id: String,
    /// User and password; `None` on an open broker.
    pub credentials: Option<(String, String)>,
    pub filters: Vec<String>,
    /// TLS, pinning the hall CA (`link::tls::client_config`); `None`: plain TCP.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl Login {
    /// A board node's login to the hub's broker, subscribed to its downlinks.
    pub fn node(broker: SocketAddr, event: &str, board: u16, key: &NodeKey) -> Login {
        let n = BoardNo(board);
        Login {
            broker,
            client_id: format!("{}bench", identity::node_client_prefix(event, n)),
            credentials: Some((identity::node_user(n), identity::node_password(key))),
            filters: vec![topic::downlink(event, n)],
            tls: None,
        }
    }

    /// The same login over TLS with `config`.
    #[allow(dead_code)]
    pub fn over_tls(self, config: Option<Arc<rustls::ClientConfig>>) -> Login {
        Login {
            tls: config,
            ..self
        }
    }

    pub async fn session(&self) -> std::io::Result<BareSession> {
        let credentials = self
            .credentials
            .as_ref()
            .map(|(user, password)| (user.as_str(), password.as_str()));
        BareSession::connect(
            self.broker,
            self.tls.clone(),
            &self.client_id,
            credentials,
            &self.filters,
        )
        .await
    }
}

/// Connects every login, many at once as a hall's nodes come up; each retries until the
/// broker lets it in. The sessions in the logins' order.
pub async fn connect_all(logins: &[Login]) -> Vec<BareSession> {
    let started: Vec<(BareSession, Duration, u32)> = futures_util::stream::iter(logins)
        .map(|login| async move {
            let began = Instant::now();
            let mut failures = 0;
            loop {
                match login.session().await {
                    Ok(session) => break (session, began.elapsed(), failures),
                    Err(_) => {
                        failures += 1;
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        })
        .buffered(256)
        .collect()
        .await;
    let mut ms: Vec<f64> = started
        .iter()
        .map(|(_, took, _)| took.as_secs_f64() * 1e3)
        .collect();
    ms.sort_by(f64::total_cmp);
    let failed: u32 = started.iter().map(|(_, _, failures)| failures).sum();
    if let (Some(max), false) = (ms.last(), ms.is_empty()) {
        println!(
            "connect   each session's connect+subscribe, 256 at a time: p50 {:.2} ms  p99 {:.2} ms  max {max:.2} ms; {failed} attempts failed and tried again",
            ms[ms.len() / 2],
            ms[ms.len() * 99 / 100],
        );
    }
    started.into_iter().map(|(session, _, _)| session).collect()
}

/// What [`BareSession::receive`] read.
pub enum Received {
    /// A message on a subscription: its payload.
    Message(Vec<u8>),
    /// The broker took one of this session's publishes.
    PubAck,
}

pub struct BareSession {
    stream: Box<dyn Socket>,
    read: BytesMut,
    write: BytesMut,
    next_pkid: u16,
    last_write: Instant,
}

impl BareSession {
    /// CONNECT with `login` if any (CONNACK accepted), SUBSCRIBE to `filters` at QoS 0 as a
    /// node does (SUBACK read),
    /// within [`CONNECT_TIMEOUT`] as a client gives up on a broker that does not answer.
    pub async fn connect(
        broker: SocketAddr,
        tls: Option<Arc<rustls::ClientConfig>>,
        client_id: &str,
        login: Option<(&str, &str)>,
        filters: &[String],
    ) -> std::io::Result<BareSession> {
        tokio::time::timeout(
            CONNECT_TIMEOUT,
            Self::handshake(broker, tls, client_id, login, filters),
        )
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
    }

    async fn handshake(
        broker: SocketAddr,
        tls: Option<Arc<rustls::ClientConfig>>,
        client_id: &str,
        login: Option<(&str, &str)>,
        filters: &[String],
    ) -> std::io::Result<BareSession> {
        let tcp = TcpStream::connect(broker).await?;
        tcp.set_nodelay(true)?;
        let stream: Box<dyn Socket> = match tls {
            None => Box::new(tcp),
            Some(config) => {
                // The hub's certificate names its IP addresses.
                let name = rustls::pki_types::ServerName::IpAddress(broker.ip().into());
                let connector = tokio_rustls::TlsConnector::from(config);
                Box::new(connector.connect(name, tcp).await?)
            }
        };
        let mut session = BareSession {
            stream,
            read: BytesMut::with_capacity(256),
            write: BytesMut::with_capacity(256),
            next_pkid: 0,
            last_write: Instant::now(),
        };
        let mut connect = Connect::new(client_id);
        connect.keep_alive = KEEP_ALIVE.as_secs() as u16;
        if let Some((user, password)) = login {
            connect.set_login(user, password);
        }
        session.queue(&Packet::Connect(connect));
        session.flush().await?;
        match session.packet().await? {
            Packet::ConnAck(ack)
                if ack.code == rumqttc::mqttbytes::v4::ConnectReturnCode::Success => {}
            other => return Err(std::io::Error::other(format!("refused: {other:?}"))),
        }
        if !filters.is_empty() {
            let mut subscribe =
                Subscribe::new_many(filters.iter().map(|f| {
                    rumqttc::mqttbytes::v4::SubscribeFilter::new(f.clone(), QoS::AtMostOnce)
                }));
            subscribe.pkid = session.pkid();
            session.queue(&Packet::Subscribe(subscribe));
            session.flush().await?;
            loop {
                if let Packet::SubAck(_) = session.packet().await? {
                    break;
                }
            }
        }
        Ok(session)
    }

    /// Queues `payload` on `topic` at QoS 0, as a node sends its events; [`Self::flush`]
    /// sends it.
    pub fn publish(&mut self, topic: &str, payload: &[u8]) {
        let publish = Publish::new(topic, QoS::AtMostOnce, payload.to_vec());
        self.queue(&Packet::Publish(publish));
    }

    /// Sends what is queued, with a ping if the session was quiet for half its keep-alive.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        if self.write.is_empty() && self.last_write.elapsed() > KEEP_ALIVE / 2 {
            self.queue(&Packet::PingReq);
        }
        if !self.write.is_empty() {
            self.stream.write_all(&self.write).await?;
            // TLS holds records until flushed; plain TCP has nothing to flush.
            self.stream.flush().await?;
            self.write.clear();
            self.last_write = Instant::now();
        }
        Ok(())
    }

    /// The next message on a subscription (its payload). Acknowledgements of this session's
    /// publishes and pings are read and dropped. Cancel-safe, as [`Self::receive`].
    pub async fn message(&mut self) -> std::io::Result<Vec<u8>> {
        loop {
            if let Received::Message(payload) = self.receive().await? {
                return Ok(payload);
            }
        }
    }

    /// The next message or acknowledgement of a publish (pings are read and dropped); a QoS 1
    /// message's PUBACK is queued for the next [`Self::flush`]. Cancel-safe: what was read
    /// stays in the buffer.
    pub async fn receive(&mut self) -> std::io::Result<Received> {
        loop {
            match self.packet().await? {
                Packet::Publish(publish) => {
                    if publish.qos != QoS::AtMostOnce {
                        self.queue(&Packet::PubAck(PubAck::new(publish.pkid)));
                    }
                    return Ok(Received::Message(publish.payload.to_vec()));
                }
                Packet::PubAck(_) => return Ok(Received::PubAck),
                _ => {}
            }
        }
    }

    /// The next whole packet off the socket.
    async fn packet(&mut self) -> std::io::Result<Packet> {
        loop {
            match Packet::read(&mut self.read, MAX_PACKET) {
                Ok(packet) => return Ok(packet),
                Err(rumqttc::mqttbytes::Error::InsufficientBytes(_)) => {}
                Err(e) => return Err(std::io::Error::other(format!("{e:?}"))),
            }
            if self.stream.read_buf(&mut self.read).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    fn queue(&mut self, packet: &Packet) {
        packet
            .write(&mut self.write, MAX_PACKET)
            .expect("a packet under the limit");
    }

    /// Packet ids 1..=65535, round and round (the window is far smaller).
    fn pkid(&mut self) -> u16 {
        self.next_pkid = self.next_pkid.checked_add(1).unwrap_or(1);
        self.next_pkid
    }
}
