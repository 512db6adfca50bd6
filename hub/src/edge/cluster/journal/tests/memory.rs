//! The driver's ports in memory, with JetStream's rules as `standby_hub` and
//! `cluster_fence` meet them on real NATS: an append names the last sequence it expects
//! and is refused otherwise, a message id is taken once, a tail delivers every record from
//! where it starts as the stream grows, and the lease is written by revision only. Each hub
//! has its own port, which can be frozen: every call through it waits until it thaws, as a
//! hub stopped by SIGSTOP does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::watch;

use crate::edge::cluster::ports::{AppendRefused, JournalStream, LeaseBucket, Tail, WriteRefused};

#[derive(Default)]
struct Kept {
    records: Vec<Bytes>,
    /// Message ids taken, with the sequence each was taken at.
    ids: HashMap<String, u64>,
    lease: Option<(u64, Bytes)>,
    revisions: u64,
}

/// The cluster: one stream and one bucket, shared by the hubs' ports.
#[derive(Clone)]
pub struct MemoryCluster {
    kept: Arc<Mutex<Kept>>,
    /// The stream's length, for the tails.
    grew: Arc<watch::Sender<u64>>,
}

impl MemoryCluster {
    pub fn new() -> MemoryCluster {
        MemoryCluster {
            kept: Arc::default(),
            grew: Arc::new(watch::channel(0).0),
        }
    }

    /// A hub's port, and the switch that freezes it.
    pub fn port(&self) -> (MemoryPort, watch::Sender<bool>) {
        let (frozen, thawed) = watch::channel(false);
        let port = MemoryPort {
            cluster: self.clone(),
            thawed,
        };
        (port, frozen)
    }

    /// A stranger with a NATS login appends whatever it likes: its sequence number.
    pub fn forge(&self, payload: &[u8]) -> u64 {
        let mut kept = self.kept.lock().unwrap();
        kept.records.push(Bytes::copy_from_slice(payload));
        let last = kept.records.len() as u64;
        self.grew.send_replace(last);
        last
    }

    /// The stream's records, as appended.
    pub fn records(&self) -> Vec<Bytes> {
        self.kept.lock().unwrap().records.clone()
    }

    /// Somebody else writes the lease (a newer revision): the holder's next renewal is
    /// refused.
    pub fn overwrite_lease(&self) {
        let mut kept = self.kept.lock().unwrap();
        kept.revisions += 1;
        let value = kept.lease.as_ref().map_or_else(Bytes::new, |l| l.1.clone());
        kept.lease = Some((kept.revisions, value));
    }

    fn record(&self, seq: u64) -> Option<Bytes> {
        let kept = self.kept.lock().unwrap();
        let index = usize::try_from(seq).ok()?.checked_sub(1)?;
        kept.records.get(index).cloned()
    }
}

/// One hub's way to the cluster.
#[derive(Clone)]
pub struct MemoryPort {
    cluster: MemoryCluster,
    thawed: watch::Receiver<bool>,
}

impl MemoryPort {
    /// Waits while the hub is frozen.
    async fn thaw(&self) {
        let mut thawed = self.thawed.clone();
        let _ = thawed.wait_for(|frozen| !frozen).await;
    }
}

impl JournalStream for MemoryPort {
    async fn last_seq(&self) -> anyhow::Result<u64> {
        self.thaw().await;
        Ok(self.cluster.kept.lock().unwrap().records.len() as u64)
    }

    async fn record(&self, seq: u64) -> anyhow::Result<Bytes> {
        self.thaw().await;
        self.cluster
            .record(seq)
            .ok_or_else(|| anyhow::anyhow!("no record {seq}"))
    }

    async fn append(&self, payload: Bytes, id: &str, expected: u64) -> Result<u64, AppendRefused> {
        self.thaw().await;
        let mut kept = self.cluster.kept.lock().unwrap();
        if let Some(seq) = kept.ids.get(id) {
            return Ok(*seq);
        }
        if kept.records.len() as u64 != expected {
            return Err(AppendRefused::NotLast);
        }
        kept.records.push(payload);
        let last = kept.records.len() as u64;
        kept.ids.insert(id.to_owned(), last);
        self.cluster.grew.send_replace(last);
        Ok(last)
    }

    async fn tail(&self, from: u64) -> Result<Tail, String> {
        self.thaw().await;
        let grew = self.cluster.grew.subscribe();
        let start = (self.clone(), from, grew);
        Ok(Box::pin(futures_util::stream::unfold(
            start,
            |(port, next, mut grew)| async move {
                loop {
                    port.thaw().await;
                    if let Some(record) = port.cluster.record(next) {
                        return Some((Ok((next, record)), (port, next + 1, grew)));
                    }
                    grew.changed().await.ok()?;
                }
            },
        )))
    }

    async fn keep_leaders_off(&self) {}
}

impl LeaseBucket for MemoryPort {
    async fn read(&self) -> Result<Option<(u64, Bytes)>, String> {
        self.thaw().await;
        Ok(self.cluster.kept.lock().unwrap().lease.clone())
    }

    async fn write(&self, value: Bytes, revision: Option<u64>) -> Result<u64, WriteRefused> {
        self.thaw().await;
        let mut kept = self.cluster.kept.lock().unwrap();
        if kept.lease.as_ref().map(|l| l.0) != revision {
            return Err(WriteRefused::NotAtRevision);
        }
        kept.revisions += 1;
        kept.lease = Some((kept.revisions, value));
        Ok(kept.revisions)
    }
}
