//! The boards' events and the hub's downlinks on a clustered hall: core NATS messages on
//! the subjects of the MQTT gateway's topics, not an MQTT session of the hub's.
//!
//! The nodes publish at QoS 0, which the gateway turns into a core NATS message on the
//! topic's subject (`zeitnot/EVENT/board/7/up` is `zeitnot.EVENT.board.7.up`); a core NATS
//! message on a downlink's subject reaches the node's MQTT subscription at QoS 0. On this
//! path nothing waits for JetStream: the hub's MQTT session to the gateway carries only
//! the pagers' JSON (some of it retained, which the gateway stores in a stream before it
//! reads the session's next packet: an Ack queued behind a move's retained message waited
//! for an R3 fsync), and a stream-leader election stalls no board's session. What this path
//! loses in a NATS server's death the nodes resend, as they resend anything the hub did
//! not acknowledge.

use bytes::Bytes;
use futures_util::StreamExt;
use protocol::topic;
use tokio::sync::mpsc;

/// Messages from the boards waiting for the hub's loop.
const INCOMING: usize = 65_536;
/// Downlinks waiting for the NATS client.
const OUTGOING: usize = 65_536;

/// The NATS subject the gateway gives an MQTT topic (or filter): levels split by `.`, the
/// wildcards `+` and `#` as `*` and `>` (nats-server's `mqttToNATSSubjectConversion`; it
/// takes no `.` or space in a topic, nor do the hall's topics hold one).
pub fn subject(topic: &str) -> String {
    topic
        .chars()
        .map(|c| match c {
            '/' => '.',
            '+' => '*',
            '#' => '>',
            c => c,
        })
        .collect()
}

/// The MQTT topic of a subject the gateway wrote ([`subject`] undone).
pub fn topic_of(subject: &str) -> String {
    subject.replace('.', "/")
}

/// What the boards' subscription hands the hub.
pub enum Feed {
    /// The subscription is in place: from here every board's event reaches the hub.
    Subscribed,
    /// A board's message, under its MQTT topic.
    Message { topic: String, payload: Vec<u8> },
}

/// The hub's downlinks, handed to the NATS client by a task of their own.
pub struct Downlinks {
    tx: mpsc::Sender<(String, Bytes)>,
}

/// Subscribes to every board's uplink of `event` and starts the downlinks' task. Both
/// end when their halves are dropped (a hub that steps down drops them).
pub fn open(client: async_nats::Client, event: &str) -> (Downlinks, mpsc::Receiver<Feed>) {
    let (feed_tx, feed) = mpsc::channel(INCOMING);
    let uplinks = subject(&topic::uplink_filter(event));
    let reader = client.clone();
    tokio::spawn(async move {
        let mut subscription = match reader.subscribe(uplinks.clone()).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::error!(subject = %uplinks, error = %e, "the boards' events cannot be subscribed to on the cluster");
                return;
            }
        };
        // Subscribed once the server has the subscription, not when the client queued it.
        if let Err(e) = reader.flush().await {
            tracing::warn!(error = %e, "the cluster did not confirm the boards' subscription");
        }
        if feed_tx.send(Feed::Subscribed).await.is_err() {
            return;
        }
        while let Some(message) = subscription.next().await {
            let feed = Feed::Message {
                topic: topic_of(message.subject.as_str()),
                payload: message.payload.to_vec(),
            };
            if feed_tx.send(feed).await.is_err() {
                return;
            }
        }
    });
    let (tx, mut downlinks) = mpsc::channel::<(String, Bytes)>(OUTGOING);
    tokio::spawn(async move {
        while let Some((subject, payload)) = downlinks.recv().await {
            if let Err(e) = client.publish(subject, payload).await {
                tracing::debug!(error = %e, "a downlink was not handed to the cluster");
            }
        }
    });
    (Downlinks { tx }, feed)
}

impl Downlinks {
    /// Queues a downlink on `topic`'s subject; a full queue drops it (the node resends, and
    /// the hub answers again).
    pub fn send(&self, topic: &str, frame: Vec<u8>) -> Result<(), String> {
        self.tx
            .try_send((subject(topic), Bytes::from(frame)))
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_map_to_the_gateways_subjects_and_back() {
        assert_eq!(
            subject("zeitnot/open-a/board/7/up"),
            "zeitnot.open-a.board.7.up"
        );
        assert_eq!(
            subject("zeitnot/open-a/board/+/up"),
            "zeitnot.open-a.board.*.up"
        );
        assert_eq!(subject("zeitnot/e/#"), "zeitnot.e.>");
        let topic = "zeitnot/open_2026/board/12/down";
        assert_eq!(topic_of(&subject(topic)), topic);
    }
}
