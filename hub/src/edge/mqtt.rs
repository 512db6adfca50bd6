//! The hub's MQTT client: one session subscribed to every board's uplink, which also
//! publishes the downlinks. The same code serves the embedded and an external broker.
//!
//! With an external broker the session is persistent (`clean_session = false`), so the
//! broker queues the boards' events while the hub restarts; whatever it does not keep, the
//! board nodes resend.

use link::{self, BrokerAddr, LinkEvent, LinkOptions};
use protocol::{topic, BoardNo, DownlinkBody};
use rumqttc::{AsyncClient, QoS};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::metrics::Metrics;

pub struct HubLink {
    client: AsyncClient,
    event: String,
    metrics: Arc<Metrics>,
}

/// Connects (and keeps reconnecting) to `addr` as the hub (`login`: its MQTT username and
/// password); incoming messages arrive on the receiver.
/// The client id ends in the journal's `session_secret`: stable across restarts, unknown to
/// anyone else (a client that connects with the hub's id takes its session over).
pub fn connect(
    addr: &BrokerAddr,
    event: &str,
    session_secret: &str,
    login: (String, String),
    metrics: Arc<Metrics>,
) -> (HubLink, mpsc::Receiver<LinkEvent>) {
    let mut options = LinkOptions::new(format!(
        "{}{session_secret}",
        protocol::identity::hub_client_prefix(event)
    ));
    options.credentials = Some(login);
    options.clean_session = false;
    options.subscribe = vec![topic::uplink_filter(event), topic::pager_command(event)];
    options.request_capacity = 65_536;
    options.inflight = 1_000;
    options.backoff_max = std::time::Duration::from_secs(2);
    let (client, events) = link::start(addr, options);
    (
        HubLink {
            client,
            event: event.to_owned(),
            metrics,
        },
        events,
    )
}

impl HubLink {
    /// Queues a JSON message (pagers, the live feed; QoS 1); `retain` for what a client
    /// that connects later must see at once.
    pub fn publish_json(&self, topic: String, payload: Vec<u8>, retain: bool) {
        if let Err(e) = self
            .client
            .try_publish(topic, QoS::AtLeastOnce, retain, payload)
        {
            tracing::warn!(error = %e, "JSON message not queued");
        }
    }

    /// Queues a downlink's sealed `frame`. When the queue is full it is dropped: the node
    /// resends after its timeout and the hub answers the duplicate with the acknowledgement
    /// again.
    pub fn send(&self, board: BoardNo, body: DownlinkBody, frame: Vec<u8>) {
        match self.client.try_publish(
            topic::downlink(&self.event, board),
            QoS::AtLeastOnce,
            false,
            frame,
        ) {
            Ok(()) => {
                if matches!(body, DownlinkBody::Ack { .. }) {
                    self.metrics.ack_sent();
                }
            }
            Err(e) => tracing::debug!(board = board.0, error = %e, "downlink not queued"),
        }
    }
}
