//! The hub's MQTT session: subscribed to every board's uplink and the pagers' commands, it
//! also publishes the downlinks, the alerts and the live feed.
//!
//! On the embedded broker the session is rumqttd's in-process link: the hub's loop takes the
//! messages the broker's router hands it and gives it what it publishes, without a TCP
//! connection, an MQTT client, the broker's network thread or a task of ours in between
//! (every event crossed them twice), and it wakes the router once for all it published in a
//! turn. rumqttd's local links publish at QoS 0; nothing is lost by that in one process, and
//! a pager or a node that loses its connection reads the retained lists or resends, as it
//! would at QoS 1.
//!
//! With an external broker it is a `link` session (rumqttc), persistent (`clean_session =
//! false`); what the broker does not keep for it while the hub restarts (the boards' events
//! travel at QoS 0), the board nodes resend, asked at once when the session is up.
//!
//! On a clustered hall's gateway the MQTT session carries the pagers' messages only: the
//! boards' events and downlinks are core NATS messages ([`gateway`]).

use std::sync::Arc;

use link::{self, Brokers, LinkEvent, LinkOptions};
use protocol::{topic, BoardNo, DownlinkBody};
use rumqttc::{AsyncClient, QoS};
use rumqttd::local::{LinkRx, LinkTx};
use rumqttd::Notification;
use tokio::sync::mpsc;

use super::gateway::{self, Downlinks, Feed};
use super::reach::BrokerReach;
use crate::metrics::Metrics;

/// Messages from the broker waiting for the hub's loop.
const INCOMING: usize = 65_536;

pub struct HubLink {
    session: Session,
    event: String,
    metrics: Arc<Metrics>,
    /// Whether the broker is reached: an external one's session says so.
    reach: BrokerReach,
}

enum Session {
    /// A client of an external broker.
    Client(AsyncClient),
    /// Clients of a clustered hall's MQTT gateway: the pagers' session and the live moves'
    /// (the gateway stores every retained message in a stream before it reads the
    /// session's next packet: an alert does not wait behind the hall's moves); the boards'
    /// downlinks go on the cluster.
    Gateway {
        pagers: AsyncClient,
        moves: AsyncClient,
        downlinks: Downlinks,
    },
    /// The embedded broker's in-process link, and whether packets wait in its buffer for
    /// the router to be told.
    Local(LinkTx, bool),
    /// No session: a standby hub of a cluster speaks to nobody on MQTT (the active hub holds
    /// the session); what it would publish is dropped.
    Detached,
}

/// What the broker hands the hub.
pub enum Incoming {
    /// From the external broker's session (a `link` task).
    Client(mpsc::Receiver<LinkEvent>),
    /// From a clustered hall's gateway session and the boards' subscription on the cluster.
    Gateway(GatewayIncoming),
    /// Straight off the embedded broker's router; `connected` until said.
    Local { rx: LinkRx, connected: bool },
    /// Nothing ever arrives (a standby hub's).
    Detached,
}

/// The hub's client id: stable across restarts (an external broker keeps its persistent
/// session) and ending in the journal's `session_secret`, unknown to anyone else (a client
/// that connects with the hub's id takes its session over).
pub fn client_id(event: &str, session_secret: &str) -> String {
    format!(
        "{}{session_secret}",
        protocol::identity::hub_client_prefix(event)
    )
}

/// A clustered hall's session and the boards' subscription, as one stream of messages.
pub struct GatewayIncoming {
    mqtt: mpsc::Receiver<LinkEvent>,
    boards: mpsc::Receiver<Feed>,
    /// Whether the boards' subscription is in place, and whether its task still runs.
    subscribed: bool,
    boards_open: bool,
    /// The session connected before the boards' subscription was in place: said once it is,
    /// so that the nodes asked to resend are heard.
    connected_held: bool,
}

/// Connects (and keeps reconnecting) to the external broker at `brokers` as the hub
/// (`client_id`, and `login`: its MQTT username and password); incoming messages arrive on
/// the receiver. On a cluster (`cluster`: the hub's NATS client) the boards' events and
/// downlinks go on the cluster, and the session subscribes to the pagers' commands only.
pub fn connect(
    brokers: &Brokers,
    event: &str,
    client_id: &str,
    login: (String, String),
    tls: Option<Arc<rustls::ClientConfig>>,
    cluster: Option<async_nats::Client>,
    metrics: Arc<Metrics>,
) -> (HubLink, Incoming) {
    let mut options = LinkOptions::new(client_id);
    options.credentials = Some(login);
    options.tls = tls;
    options.clean_session = false;
    options.subscribe = match cluster {
        Some(_) => vec![topic::pager_command(event)],
        None => subscriptions(event),
    };
    options.request_capacity = INCOMING;
    options.inflight = 1_000;
    options.backoff_max = std::time::Duration::from_secs(2);
    let (session, incoming) = match cluster {
        None => {
            let (client, events) = link::start_any(brokers, options);
            (Session::Client(client), Incoming::Client(events))
        }
        Some(nats) => gateway(brokers, event, options, nats),
    };
    let link = HubLink {
        session,
        event: event.to_owned(),
        metrics,
        reach: BrokerReach::connecting(),
    };
    (link, incoming)
}

/// A clustered hall's sessions: the pagers' (`options`), the live moves' beside it, and the
/// boards on the cluster.
fn gateway(
    brokers: &Brokers,
    event: &str,
    options: LinkOptions,
    nats: async_nats::Client,
) -> (Session, Incoming) {
    let mut moves = options.clone();
    moves.client_id = format!("{}-moves", options.client_id);
    moves.clean_session = true;
    moves.subscribe = Vec::new();
    let (pagers, events) = link::start_any(brokers, options);
    let (moves, mut news) = link::start_any(brokers, moves);
    // The link warns of its own trouble; the pagers' session is the one `/healthz` follows.
    tokio::spawn(async move { while news.recv().await.is_some() {} });
    let (downlinks, boards) = gateway::open(nats, event);
    let incoming = GatewayIncoming {
        mqtt: events,
        boards,
        subscribed: false,
        boards_open: true,
        connected_held: false,
    };
    let session = Session::Gateway {
        pagers,
        moves,
        downlinks,
    };
    (session, Incoming::Gateway(incoming))
}

/// The hub's session on the embedded broker's in-process `local` link
/// ([`super::broker::start`]), subscribed here.
pub fn connect_local(
    local: (LinkTx, LinkRx),
    event: &str,
    metrics: Arc<Metrics>,
) -> anyhow::Result<(HubLink, Incoming)> {
    let (mut tx, rx) = local;
    for filter in subscriptions(event) {
        tx.subscribe(filter)
            .map_err(|e| anyhow::anyhow!("subscribing on the embedded broker: {e}"))?;
    }
    let link = HubLink {
        session: Session::Local(tx, false),
        event: event.to_owned(),
        metrics,
        reach: BrokerReach::in_process(),
    };
    let incoming = Incoming::Local {
        rx,
        connected: false,
    };
    Ok((link, incoming))
}

/// What the hub subscribes to: every board's uplink, the pagers' commands.
fn subscriptions(event: &str) -> Vec<String> {
    vec![topic::uplink_filter(event), topic::pager_command(event)]
}

impl Incoming {
    /// The next message (or news of the session); `None` once the session is gone for good.
    /// Cancel-safe: nothing taken off the router is dropped with the future.
    pub async fn recv(&mut self) -> Option<LinkEvent> {
        match self {
            Incoming::Client(events) => events.recv().await,
            Incoming::Gateway(gateway) => gateway.recv().await,
            Incoming::Detached => std::future::pending().await,
            Incoming::Local { rx, connected } => {
                if !*connected {
                    *connected = true;
                    return Some(LinkEvent::Connected);
                }
                loop {
                    // `next` takes the router's whole batch at once, and returns its first.
                    match rx.next().await {
                        Ok(Some(notification)) => {
                            if let Some(event) = Self::local_event(rx, notification) {
                                return Some(event);
                            }
                        }
                        Ok(None) => {}
                        Err(e) => return Self::closed(&e),
                    }
                }
            }
        }
    }

    /// A message that is there already, without waiting.
    pub fn try_recv(&mut self) -> Option<LinkEvent> {
        match self {
            Incoming::Client(events) => events.try_recv().ok(),
            Incoming::Gateway(gateway) => gateway.try_recv(),
            Incoming::Detached => None,
            Incoming::Local { rx, .. } => loop {
                // A deadline now: what the router handed over, if anything.
                let notification = rx.recv_deadline(std::time::Instant::now()).ok()??;
                if let Some(event) = Self::local_event(rx, notification) {
                    return Some(event);
                }
            },
        }
    }

    /// A router notification as a message; the router is asked for more when it paused the
    /// link (it does when a batch fills the link's buffer).
    fn local_event(rx: &mut LinkRx, notification: Notification) -> Option<LinkEvent> {
        match notification {
            Notification::Forward(forward) => Some(LinkEvent::Message {
                topic: String::from_utf8_lossy(&forward.publish.topic).into_owned(),
                payload: forward.publish.payload.to_vec(),
            }),
            Notification::Unschedule => {
                if let Err(e) = rx.ready() {
                    tracing::error!(error = %e, "the embedded broker's router is gone");
                }
                None
            }
            _ => None,
        }
    }

    fn closed(e: &rumqttd::local::LinkError) -> Option<LinkEvent> {
        tracing::error!(error = %e, "the embedded broker's link to the hub closed");
        None
    }
}

impl GatewayIncoming {
    /// The next message of either; `None` once the session is gone for good. Cancel-safe.
    async fn recv(&mut self) -> Option<LinkEvent> {
        loop {
            tokio::select! {
                event = self.mqtt.recv() => match self.on_session(event?) {
                    Some(event) => return Some(event),
                    None => continue,
                },
                feed = self.boards.recv(), if self.boards_open => match self.on_feed(feed) {
                    Some(event) => return Some(event),
                    None => continue,
                },
            }
        }
    }

    fn try_recv(&mut self) -> Option<LinkEvent> {
        while let Ok(event) = self.mqtt.try_recv() {
            if let Some(event) = self.on_session(event) {
                return Some(event);
            }
        }
        while self.boards_open {
            let Ok(feed) = self.boards.try_recv() else {
                return None;
            };
            if let Some(event) = self.on_feed(Some(feed)) {
                return Some(event);
            }
        }
        None
    }

    fn on_session(&mut self, event: LinkEvent) -> Option<LinkEvent> {
        match event {
            LinkEvent::Connected if !self.subscribed => {
                self.connected_held = true;
                None
            }
            event => Some(event),
        }
    }

    fn on_feed(&mut self, feed: Option<Feed>) -> Option<LinkEvent> {
        match feed {
            Some(Feed::Message { topic, payload }) => Some(LinkEvent::Message { topic, payload }),
            Some(Feed::Subscribed) => {
                self.subscribed = true;
                std::mem::take(&mut self.connected_held).then_some(LinkEvent::Connected)
            }
            None => {
                tracing::error!("the boards' subscription on the cluster ended");
                self.boards_open = false;
                None
            }
        }
    }
}

impl HubLink {
    /// A standby hub's: no session, nothing arrives, nothing goes out.
    pub fn detached(event: &str, metrics: Arc<Metrics>) -> (HubLink, Incoming) {
        let link = HubLink {
            session: Session::Detached,
            event: event.to_owned(),
            metrics,
            reach: BrokerReach::in_process(),
        };
        (link, Incoming::Detached)
    }

    /// What the session said of the broker: counted, and kept for `/healthz`.
    pub fn on_reach(&mut self, event: &LinkEvent) {
        if matches!(event, LinkEvent::Message { .. }) {
            return;
        }
        if let LinkEvent::Unreachable { .. } = event {
            self.metrics.broker_connect_failed();
        }
        let up = self.reach.on(event);
        self.metrics.broker_up(up);
    }

    /// Why the hub is in trouble with its broker, if it is (see [`BrokerReach::trouble`]).
    pub fn broker_trouble(&self) -> Option<String> {
        self.reach.trouble(std::time::Instant::now())
    }

    /// Queues a JSON message for the pagers (QoS 1 on an external broker, 0 on a clustered
    /// hall's gateway, which would store each in a stream before the session's next packet:
    /// a pager that was away reads the retained lists, as on the embedded broker); `retain`
    /// for what a client that connects later must see at once.
    pub fn publish_json(&mut self, topic: String, payload: Vec<u8>, retain: bool) {
        let qos = match self.session {
            Session::Gateway { .. } => QoS::AtMostOnce,
            _ => QoS::AtLeastOnce,
        };
        if let Err(e) = self.publish(topic, qos, retain, payload) {
            tracing::warn!(error = %e, "JSON message not queued");
        }
    }

    /// Queues a live move (retained: a screen that connects later sees each board's last);
    /// on a clustered hall's gateway on the moves' own session, at QoS 0.
    pub fn publish_move(&mut self, topic: String, payload: Vec<u8>) {
        let queued = match &self.session {
            Session::Gateway { moves, .. } => moves
                .try_publish(topic, QoS::AtMostOnce, true, payload)
                .map_err(|e| e.to_string()),
            _ => self.publish(topic, QoS::AtLeastOnce, true, payload),
        };
        if let Err(e) = queued {
            tracing::warn!(error = %e, "a live move not queued");
        }
    }

    /// Queues a downlink's sealed `frame`, at QoS 0 (the nodes subscribe at QoS 0): each is
    /// made good without the broker. An acknowledgement is cumulative, and a lost one is made
    /// good by the next, or by the node's resend, which the hub answers with the
    /// acknowledgement again; a lost `ResendFrom` by the node's resend timer; a `ContinueAt`
    /// is sent again while the other node's events come. QoS 1 would add two packets an
    /// event through the broker for nothing. When the queue is full the downlink is dropped,
    /// and the same holds.
    pub fn send(&mut self, board: BoardNo, body: DownlinkBody, frame: Vec<u8>) {
        let ack = matches!(body, DownlinkBody::Ack { .. });
        let topic = topic::downlink(&self.event, board);
        let sent = match &self.session {
            Session::Gateway { downlinks, .. } => downlinks.send(&topic, frame),
            _ => self.publish(topic, QoS::AtMostOnce, false, frame),
        };
        match sent {
            Ok(()) if ack => self.metrics.ack_sent(),
            Ok(()) => {}
            Err(e) => tracing::debug!(board = board.0, error = %e, "downlink not queued"),
        }
    }

    fn publish(
        &mut self,
        topic: String,
        qos: QoS,
        retain: bool,
        payload: Vec<u8>,
    ) -> Result<(), String> {
        match &mut self.session {
            Session::Client(client) | Session::Gateway { pagers: client, .. } => client
                .try_publish(topic, qos, retain, payload)
                .map_err(|e| e.to_string()),
            Session::Local(tx, waiting) => {
                let publish = rumqttd::protocol::Publish::new(
                    bytes::Bytes::from(topic),
                    bytes::Bytes::from(payload),
                    retain,
                );
                tx.buffer()
                    .push_back(rumqttd::protocol::Packet::Publish(publish, None));
                *waiting = true;
                Ok(())
            }
            // Dropped: the standby's core is a view; the active hub publishes.
            Session::Detached => Ok(()),
        }
    }

    /// Hands what was published since the last call to the broker: on the embedded broker
    /// the router is woken once for all of it (an external broker's client sends as it goes).
    pub fn flush(&mut self) {
        if let Session::Local(tx, waiting) = &mut self.session {
            if std::mem::take(waiting) {
                if let Err(e) = tx.notify_router() {
                    tracing::error!(error = %e, "the embedded broker's router is gone");
                }
            }
        }
    }
}
