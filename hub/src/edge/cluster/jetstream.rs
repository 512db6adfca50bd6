//! The driver's ports on NATS JetStream: the journal stream with its expected-last-sequence
//! fence and message ids, an ordered consumer for the tail, and the lease as one key of a
//! key-value bucket written by revision.

use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::kv;
use async_nats::jetstream::message::PublishMessage as Publish;
use bytes::Bytes;
use futures_util::StreamExt;

use super::nats::Cluster;
use super::ports::{AppendRefused, JournalStream, LeaseBucket, Tail, WriteRefused};

/// The key of the lease in its bucket.
const KEY: &str = "active";

impl JournalStream for Cluster {
    async fn last_seq(&self) -> anyhow::Result<u64> {
        Cluster::last_seq(self).await
    }

    async fn record(&self, seq: u64) -> anyhow::Result<Bytes> {
        let message = self
            .stream
            .get_raw_message(seq)
            .await
            .map_err(|e| anyhow::anyhow!("journal stream record {seq}: {e}"))?;
        Ok(message.payload)
    }

    async fn append(&self, payload: Bytes, id: &str, expected: u64) -> Result<u64, AppendRefused> {
        let publish = Publish::build()
            .payload(payload)
            .message_id(id)
            .expected_last_sequence(expected);
        let acked = match self.js.send_publish(self.subject.clone(), publish).await {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        match acked {
            Ok(ack) => Ok(ack.sequence),
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                Err(AppendRefused::NotLast)
            }
            Err(e) => Err(AppendRefused::Failed(e.to_string())),
        }
    }

    async fn tail(&self, from: u64) -> Result<Tail, String> {
        let config = pull::OrderedConfig {
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: from,
            },
            ..Default::default()
        };
        let consumer = self
            .stream
            .create_consumer(config)
            .await
            .map_err(|e| e.to_string())?;
        let messages = consumer.messages().await.map_err(|e| e.to_string())?;
        Ok(Box::pin(messages.map(|next| {
            let message = next.map_err(|e| e.to_string())?;
            let seq = message.info().map_err(|e| e.to_string())?.stream_sequence;
            Ok((seq, message.message.payload.clone()))
        })))
    }

    async fn keep_leaders_off(&self) {
        Cluster::keep_leaders_off(self).await
    }
}

/// The lease's bucket.
#[derive(Clone)]
pub struct LeaseStore(pub kv::Store);

impl LeaseBucket for LeaseStore {
    async fn read(&self) -> Result<Option<(u64, Bytes)>, String> {
        let entry = self.0.entry(KEY).await.map_err(|e| e.to_string())?;
        Ok(entry
            .filter(|e| e.operation == kv::Operation::Put)
            .map(|e| (e.revision, e.value)))
    }

    async fn write(&self, value: Bytes, revision: Option<u64>) -> Result<u64, WriteRefused> {
        match revision {
            None => self.0.create(KEY, value).await.map_err(|e| match e.kind() {
                kv::CreateErrorKind::AlreadyExists => WriteRefused::NotAtRevision,
                _ => WriteRefused::Failed(e.to_string()),
            }),
            Some(revision) => {
                self.0
                    .update(KEY, value, revision)
                    .await
                    .map_err(|e| match e.kind() {
                        kv::UpdateErrorKind::WrongLastRevision => WriteRefused::NotAtRevision,
                        _ => WriteRefused::Failed(e.to_string()),
                    })
            }
        }
    }
}
