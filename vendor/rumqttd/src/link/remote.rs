use crate::link::local::{LinkError, LinkRx, LinkTx};
use crate::link::network;
use crate::link::network::Network;
use crate::local::LinkBuilder;
use crate::protocol::{
    ConnAck, Connect, ConnectReturnCode, Disconnect, DisconnectProperties, DisconnectReasonCode,
    Login, Packet, Protocol, PubAck, PubAckReason, QoS, SubAck, SubscribeReasonCode,
};
use crate::router::{Event, Notification};
use crate::{AclAction, AclHandler, AclRequest, AuthAnswer, ConnectionId, ConnectionSettings};

use flume::{RecvError, SendError, Sender, TrySendError};
use std::cmp::min;
use std::collections::{HashSet, VecDeque};
use std::io;
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::time::error::Elapsed;
use tokio::{select, time};
use tracing::{trace, Span};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O")]
    Io(#[from] io::Error),
    #[error("Zero keep alive")]
    ZeroKeepAlive,
    #[error("Not connect packet")]
    NotConnectPacket(Packet),
    #[error("Network {0}")]
    Network(#[from] network::Error),
    #[error("Timeout")]
    Timeout(#[from] Elapsed),
    #[error("Channel send error")]
    Send(#[from] SendError<(ConnectionId, Event)>),
    #[error("Channel recv error")]
    Recv(#[from] RecvError),
    #[error("Got new session, disconnecting old one")]
    SessionEnd,
    #[error("Persistent session requires valid client id")]
    InvalidClientId,
    #[error("Unexpected router message")]
    NotConnectionAck,
    #[error("ConnAck error {0}")]
    ConnectionAck(String),
    #[error("Authentication error")]
    InvalidAuth,
    #[error("Channel try send error")]
    TrySend(#[from] TrySendError<(ConnectionId, Event)>),
    #[error("Link error = {0}")]
    Link(#[from] LinkError),
    /// Zeitnot's patch: a PUBLISH under a topic alias, which the broker does not take.
    #[error("a topic alias, which this broker does not take (topic alias maximum 0)")]
    TopicAlias,
}

/// Orchestrates between Router and Network.
pub struct RemoteLink<P> {
    connect: Connect,
    pub(crate) connection_id: ConnectionId,
    network: Network<P>,
    link_tx: LinkTx,
    link_rx: LinkRx,
    notifications: VecDeque<Notification>,
    pub(crate) will_delay_interval: u32,
    /// Zeitnot's patch (vendor/README.md): the topic ACL and what it is asked about.
    acl: Option<Acl>,
}

/// Zeitnot's patch: a connection's topic ACL, its identity and its subscriptions.
struct Acl {
    handler: AclHandler,
    client_id: String,
    username: Option<String>,
    max_subscriptions: Option<usize>,
    subscriptions: HashSet<String>,
    /// Packets read, before the ACL passes them on.
    read: VecDeque<Packet>,
    /// SUBSCRIBEs passed on with their denied filters taken out, by packet id: which of the
    /// filters asked for were allowed, for the SUBACK to answer each in its place.
    partial: Vec<(u16, Vec<bool>)>,
}

/// What the ACL does with a packet read.
enum Judgement {
    /// To the router as it is.
    Pass,
    /// To the router in this form (a SUBSCRIBE without its denied filters).
    Replace(Packet),
    /// Not to the router: the broker answers (or drops it) here.
    Answer(Option<Packet>),
    /// The connection ends with this DISCONNECT (MQTT 5), for `Error`'s reason.
    Close(Packet, Error),
}

impl Acl {
    fn allows(&self, action: AclAction<'_>) -> bool {
        (self.handler)(&AclRequest {
            client_id: &self.client_id,
            username: self.username.as_deref(),
            action,
        })
    }

    /// What becomes of a packet read: passed on, passed on changed, or answered here.
    fn judge(&mut self, packet: &Packet) -> Result<Judgement, Error> {
        match packet {
            // Zeitnot's patch: the broker announces no topic alias maximum (0, MQTT 5
            // §3.2.2.3.8), so a client may not send one (§3.3.2.3.4); the ACL could not
            // judge the empty topic and the publish was dropped unsaid. Refused with
            // DISCONNECT 0x94 (topic alias invalid), which the client reads.
            Packet::Publish(_, Some(props)) if props.topic_alias.is_some() => {
                let disconnect = Packet::Disconnect(
                    Disconnect {
                        reason_code: DisconnectReasonCode::TopicAliasInvalid,
                    },
                    Some(DisconnectProperties {
                        session_expiry_interval: None,
                        reason_string: Some("this broker takes no topic alias".to_owned()),
                        user_properties: Vec::new(),
                        server_reference: None,
                    }),
                );
                Ok(Judgement::Close(disconnect, Error::TopicAlias))
            }
            Packet::Publish(publish, _) => {
                let topic = std::str::from_utf8(&publish.topic).unwrap_or("");
                let action = AclAction::Publish {
                    topic,
                    retain: publish.retain,
                };
                if self.allows(action) {
                    return Ok(Judgement::Pass);
                }
                tracing::debug!(?topic, "publish denied by the ACL");
                match publish.qos {
                    QoS::AtMostOnce => Ok(Judgement::Answer(None)),
                    QoS::AtLeastOnce => Ok(Judgement::Answer(Some(Packet::PubAck(
                        PubAck {
                            pkid: publish.pkid,
                            reason: PubAckReason::Success,
                        },
                        None,
                    )))),
                    QoS::ExactlyOnce => Err(Error::InvalidAuth),
                }
            }
            // MQTT 3.1.1 §3.9.3: each filter is granted or refused by itself.
            Packet::Subscribe(subscribe, props) => {
                // Zeitnot's patch: the ACL judges each filter as the client wrote it, and the
                // cap counts it so: a shared subscription's `$share/GROUP/` included, for
                // every group is delivered apart (20,000 groups of one filter were 20,000
                // subscriptions past a cap that saw one).
                let paths: Vec<&str> = subscribe.filters.iter().map(|f| f.path.as_str()).collect();
                let allowed: Vec<bool> = paths
                    .iter()
                    .map(|filter| self.allows(AclAction::Subscribe { filter }))
                    .collect();
                let new = paths
                    .iter()
                    .zip(&allowed)
                    .filter(|(p, ok)| **ok && !self.subscriptions.contains(**p))
                    .count();
                let within = self
                    .max_subscriptions
                    .is_none_or(|max| self.subscriptions.len() + new <= max);
                let refused = || {
                    Judgement::Answer(Some(Packet::SubAck(
                        SubAck {
                            pkid: subscribe.pkid,
                            return_codes: vec![SubscribeReasonCode::Failure; subscribe.filters.len()],
                        },
                        None,
                    )))
                };
                if !within || !allowed.contains(&true) {
                    tracing::debug!(?paths, within, "subscribe denied by the ACL");
                    return Ok(refused());
                }
                for (path, ok) in paths.iter().zip(&allowed) {
                    if *ok {
                        self.subscriptions.insert((*path).to_owned());
                    }
                }
                if !allowed.contains(&false) {
                    return Ok(Judgement::Pass);
                }
                tracing::debug!(?paths, ?allowed, "filters of a subscribe denied by the ACL");
                let mut kept = subscribe.clone();
                let mut mask = allowed.iter();
                kept.filters.retain(|_| *mask.next().unwrap_or(&false));
                self.partial.push((subscribe.pkid, allowed));
                Ok(Judgement::Replace(Packet::Subscribe(kept, props.clone())))
            }
            Packet::Unsubscribe(unsubscribe, _) => {
                for filter in &unsubscribe.filters {
                    self.subscriptions.remove(filter.as_str());
                }
                Ok(Judgement::Pass)
            }
            _ => Ok(Judgement::Pass),
        }
    }

    /// The router's SUBACK for a SUBSCRIBE passed on without its denied filters: a code for
    /// every filter asked for, the denied ones refused (0x80) in their places.
    fn answer_in_full(&mut self, packet: &mut Packet) {
        let Packet::SubAck(suback, _) = packet else {
            return;
        };
        let Some(i) = self.partial.iter().position(|(pkid, _)| *pkid == suback.pkid) else {
            return;
        };
        let (_, allowed) = self.partial.remove(i);
        let mut granted = std::mem::take(&mut suback.return_codes).into_iter();
        suback.return_codes = allowed
            .into_iter()
            .map(|ok| match ok {
                true => granted.next().unwrap_or(SubscribeReasonCode::Failure),
                false => SubscribeReasonCode::Failure,
            })
            .collect();
    }
}

impl<P: Protocol> RemoteLink<P> {
    pub async fn new(
        router_tx: Sender<(ConnectionId, Event)>,
        tenant_id: Option<String>,
        mut network: Network<P>,
        connect_packet: Packet,
        dynamic_filters: bool,
        assigned_client_id: Option<String>,
        config: &ConnectionSettings,
    ) -> Result<RemoteLink<P>, Error> {
        let Packet::Connect(connect, props, lastwill, lastwill_props, login) = connect_packet
        else {
            return Err(Error::NotConnectPacket(connect_packet));
        };
        // Zeitnot's patch (vendor/README.md): the topic ACL, the will first.
        let acl = config.external_acl.clone().map(|handler| Acl {
            handler,
            client_id: connect.client_id.clone(),
            username: login.map(|l| l.username),
            max_subscriptions: config.max_subscriptions,
            subscriptions: HashSet::new(),
            read: VecDeque::new(),
            partial: Vec::new(),
        });
        if let (Some(acl), Some(will)) = (&acl, &lastwill) {
            let topic = std::str::from_utf8(&will.topic).unwrap_or("");
            if !acl.allows(AclAction::Will {
                topic,
                retain: will.retain,
            }) {
                tracing::debug!(?topic, "last will denied by the ACL");
                return Err(Error::InvalidAuth);
            }
        }

        // Register this connection with the router. Router replys with ack which if ok will
        // start the link. Router can sometimes reject the connection (ex max connection limit)
        let client_id = assigned_client_id.as_ref().unwrap_or(&connect.client_id);
        let clean_session = connect.clean_session;

        let topic_alias_max = props.as_ref().and_then(|p| p.topic_alias_max);
        let session_expiry = props
            .as_ref()
            .and_then(|p| p.session_expiry_interval)
            .unwrap_or(0);

        let delay_interval = lastwill_props
            .as_ref()
            .and_then(|f| f.delay_interval)
            .unwrap_or(0);

        // The Server delays publishing the Client’s Will Message until
        // the Will Delay Interval has passed or the Session ends, whichever happens first
        let will_delay_interval = min(session_expiry, delay_interval);

        let (link_tx, link_rx, notification) = LinkBuilder::new(client_id, router_tx)
            .tenant_id(tenant_id)
            .clean_session(clean_session)
            .last_will(lastwill)
            .last_will_properties(lastwill_props)
            .dynamic_filters(dynamic_filters)
            .topic_alias_max(topic_alias_max.unwrap_or(0))
            // Zeitnot's patch (vendor/README.md): the router runs on this thread.
            .build_async()
            .await?;

        let id = link_rx.id();
        Span::current().record("connection_id", id);

        if let Some(mut packet) = notification.into() {
            if let Packet::ConnAck(_ack, props) = &mut packet {
                let mut new_props = props.clone().unwrap_or_default();
                new_props.assigned_client_identifier = assigned_client_id;
                *props = Some(new_props);
                network.write(packet).await?;
            }
        }

        Ok(RemoteLink {
            connect,
            connection_id: id,
            network,
            link_tx,
            link_rx,
            // Zeitnot's patch (vendor/README.md): grows to what the connection uses.
            notifications: VecDeque::new(),
            will_delay_interval,
            acl,
        })
    }

    pub async fn start(&mut self) -> Result<(), Error> {
        self.network.set_keepalive(self.connect.keep_alive);

        // Note:
        // Shouldn't result in bounded queue deadlocks because of blocking n/w send
        loop {
            select! {
                o = self.network.read() => {
                    let packet = o?;
                    let len = match &mut self.acl {
                        None => {
                            let mut buffer = self.link_tx.buffer();
                            buffer.push_back(packet);
                            self.network.readv(&mut buffer)?;
                            buffer.len()
                        }
                        // Zeitnot's patch: what the ACL denies is answered here, never seen
                        // by the router.
                        Some(acl) => {
                            let mut read = std::mem::take(&mut acl.read);
                            read.push_back(packet);
                            self.network.readv(&mut read)?;
                            let mut answers = VecDeque::new();
                            let mut passed = VecDeque::new();
                            let mut closed = None;
                            for packet in read.drain(..) {
                                match acl.judge(&packet)? {
                                    Judgement::Pass => passed.push_back(packet),
                                    Judgement::Replace(packet) => passed.push_back(packet),
                                    Judgement::Answer(answer) => answers.extend(answer),
                                    Judgement::Close(disconnect, why) => {
                                        answers.push_back(disconnect);
                                        closed = Some(why);
                                        break;
                                    }
                                }
                            }
                            if let Some(why) = closed {
                                self.network.writev(answers).await?;
                                return Err(why);
                            }
                            crate::router::iobufs::keep_room_for_one(&mut read);
                            acl.read = read;
                            if !answers.is_empty() {
                                self.network.writev(answers).await?;
                            }
                            let mut buffer = self.link_tx.buffer();
                            buffer.extend(passed);
                            buffer.len()
                        }
                    };

                    trace!("Packets read from network, count = {}", len);
                    self.link_tx.notify().await?;
                }
                // Receive from router when previous when state isn't in collision
                // due to previously received data request
                o = self.link_rx.exchange(&mut self.notifications) => {
                    o?;
                    let mut packets = VecDeque::new();
                    let mut unscheduled = false;

                    for notif in self.notifications.drain(..) {
                        if let Some(mut packet) = notif.into() {
                            // Zeitnot's patch: denied filters answered in their places.
                            if let Some(acl) = &mut self.acl {
                                acl.answer_in_full(&mut packet);
                            }
                            packets.push_back(packet);
                        } else {
                            unscheduled = true;
                        }

                    }
                    crate::router::iobufs::keep_room_for_one(&mut self.notifications);
                    self.network.writev(packets).await?;
                    if unscheduled {
                        self.link_rx.wake().await?;
                    }
                }
            }
        }
    }
}

/// Read MQTT connect packet from network and verify it.
/// authentication and checks are done here.
pub async fn mqtt_connect<P>(
    config: Arc<ConnectionSettings>,
    network: &mut Network<P>,
) -> Result<Packet, Error>
where
    P: Protocol,
{
    // Wait for MQTT connect packet and error out if it's not received in time to prevent
    // DOS attacks by filling total connections that the server can handle with idle open
    // connections which results in server rejecting new connections
    let connection_timeout_ms = config.connection_timeout_ms.into();
    let packet = time::timeout(Duration::from_millis(connection_timeout_ms), async {
        let packet = network.read().await;
        // Zeitnot's patch (vendor/README.md): a CONNECT of another protocol version is
        // told so, in that version's CONNACK, before the connection closes.
        if let Err(network::Error::Protocol(crate::protocol::Error::InvalidProtocolLevel(level))) =
            &packet
        {
            network.write_raw(&unsupported_version(*level)).await?;
        }
        Ok::<_, network::Error>(packet?)
    })
    .await??;

    let (connect, _props, login) = match packet {
        Packet::Connect(ref connect, ref props, _, _, ref login) => (connect, props, login),
        packet => return Err(Error::NotConnectPacket(packet)),
    };

    Span::current().record("client_id", &connect.client_id);

    // Zeitnot's patch: a refused login is told why (CONNACK return code 4 or 5).
    if let Err(code) = handle_auth(config.clone(), login.as_ref(), &connect.client_id).await {
        let ack = ConnAck {
            session_present: false,
            code,
        };
        network.write(Packet::ConnAck(ack, None)).await?;
        return Err(Error::InvalidAuth);
    }

    // When keep_alive feature is disabled client can live forever, which is not good in
    // distributed broker context so currenlty we don't allow it.
    if connect.keep_alive == 0 {
        return Err(Error::ZeroKeepAlive);
    }

    let empty_client_id = connect.client_id.is_empty();
    let clean_session = connect.clean_session;

    if empty_client_id && !clean_session {
        let ack = ConnAck {
            session_present: false,
            code: ConnectReturnCode::ClientIdentifierNotValid,
        };

        let packet = Packet::ConnAck(ack, None);
        network.write(packet).await?;

        return Err(Error::InvalidClientId);
    }

    // Ok((connect, props, lastwill, lastwill_props))
    Ok(packet)
}

/// Zeitnot's patch: the CONNACK refusing a CONNECT of protocol level `level`, written as that
/// version reads it: MQTT 5's reason code 0x84 (unsupported protocol version, with no
/// properties), else 3.1.1's return code 1 (unacceptable protocol version).
fn unsupported_version(level: u8) -> Vec<u8> {
    if level == 5 {
        vec![0x20, 0x03, 0x00, 0x84, 0x00]
    } else {
        vec![0x20, 0x02, 0x00, 0x01]
    }
}

/// Whether the CONNECT's login may connect; the CONNACK's return code when not (Zeitnot's
/// patch: upstream had only "no").
async fn handle_auth(
    config: Arc<ConnectionSettings>,
    login: Option<&Login>,
    client_id: &str,
) -> Result<(), ConnectReturnCode> {
    if config.auth.is_none() && config.external_auth.is_none() {
        return Ok(());
    }

    // if authentication is configured and connect packet doesn't have login details
    // return an error
    let Some(login) = login else {
        return Err(ConnectReturnCode::NotAuthorized);
    };

    let username = &login.username;
    let password = &login.password;

    if let Some(auth) = &config.external_auth {
        return match auth(
            client_id.to_owned(),
            username.to_owned(),
            password.to_owned(),
        )
        .await
        {
            AuthAnswer::Admitted => Ok(()),
            AuthAnswer::BadUserNamePassword => Err(ConnectReturnCode::BadUserNamePassword),
            AuthAnswer::NotAuthorized => Err(ConnectReturnCode::NotAuthorized),
        };
    }

    if let Some(pairs) = &config.auth {
        if let Some(stored_password) = pairs.get(username) {
            if stored_password.as_bytes().ct_eq(password.as_bytes()).into() {
                return Ok(());
            }
        }

        return Err(ConnectReturnCode::BadUserNamePassword);
    }

    Err(ConnectReturnCode::NotAuthorized)
}

#[cfg(test)]
mod tests {
    use std::{collections::HashMap, sync::Arc};

    use crate::{protocol::Login, ConnectionSettings};

    use super::handle_auth;

    fn config() -> ConnectionSettings {
        ConnectionSettings {
            connection_timeout_ms: 0,
            max_payload_size: 0,
            max_inflight_count: 0,
            auth: None,
            external_auth: None,
            dynamic_filters: false,
            external_acl: None,
            max_subscriptions: None,
        }
    }

    fn login() -> Login {
        Login {
            username: "u".to_owned(),
            password: "p".to_owned(),
        }
    }

    #[tokio::test]
    async fn no_login_no_auth() {
        let cfg = Arc::new(config());
        let r = handle_auth(cfg, None, "").await;
        assert!(r.is_ok());
    }

    #[tokio::test]
    async fn some_login_no_auth() {
        let cfg = Arc::new(config());
        let login = login();
        let r = handle_auth(cfg, Some(&login), "").await;
        assert!(r.is_ok());
    }

    #[tokio::test]
    async fn login_matches_static_auth() {
        let login = login();
        let mut map = HashMap::<String, String>::new();
        map.insert(login.username.clone(), login.password.clone());

        let mut cfg = config();
        cfg.auth = Some(map);

        let r = handle_auth(Arc::new(cfg), Some(&login), "").await;
        assert!(r.is_ok());
    }

    #[tokio::test]
    async fn login_fails_static_no_external() {
        let login = login();
        let mut map = HashMap::<String, String>::new();
        map.insert("wrong".to_owned(), "wrong".to_owned());

        let mut cfg = config();
        cfg.auth = Some(map);

        let r = handle_auth(Arc::new(cfg), Some(&login), "").await;
        assert!(r.is_err());
    }

    #[tokio::test]
    async fn login_fails_static_matches_external() {
        let login = login();

        let mut map = HashMap::<String, String>::new();
        map.insert("wrong".to_owned(), "wrong".to_owned());

        let dynamic = |_: String, _: String, _: String| async { true };

        let mut cfg = config();
        cfg.auth = Some(map);
        cfg.set_auth_handler(dynamic);

        let r = handle_auth(Arc::new(cfg), Some(&login), "").await;
        assert!(r.is_ok());
    }

    #[tokio::test]
    async fn login_fails_static_fails_external() {
        let login = login();

        let mut map = HashMap::<String, String>::new();
        map.insert("wrong".to_owned(), "wrong".to_owned());

        let dynamic = |_: String, _: String, _: String| async { false };

        let mut cfg = config();
        cfg.auth = Some(map);
        cfg.set_auth_handler(dynamic);

        let r = handle_auth(Arc::new(cfg), Some(&login), "").await;
        assert!(r.is_err());
    }

    #[tokio::test]
    async fn external_auth_clousre_or_fnptr_type_check_or_fail_compile() {
        let closure = |_: String, _: String, _: String| async { false };
        async fn fnptr(_: String, _: String, _: String) -> bool {
            true
        }

        let mut cfg = config();
        cfg.set_auth_handler(closure);
        cfg.set_auth_handler(fnptr);
    }
}
