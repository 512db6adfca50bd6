//! The lease in the cluster's key-value bucket, as IO: reading it, writing this hub into it
//! by revision, and the active hub's renewals. What a read or a renewal means (stale or
//! not, held or lost) is the role's ([`super::role`]), by this hub's own clock: nothing
//! here trusts the bucket's clocks or a time to live (a TTL once failed to expire on some
//! nodes).

use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::ports::{LeaseBucket, WriteRefused};
use super::role::{Holder, LeaseEntry, RENEW_EVERY};
/// The longest one renewal is waited for.
const RENEWAL_TIMEOUT: Duration = Duration::from_secs(1);

/// How the renewals go.
#[derive(Debug, Clone, Copy)]
pub struct Renewals {
    /// When the last renewal that got through was sent.
    pub sent: Instant,
    /// A renewal was refused: another hub holds the lease now.
    pub lost: bool,
}

/// The lease's bucket, and this hub's renewals while it holds the lease.
pub struct Lease<B> {
    bucket: B,
    renewal: Option<Renewal>,
}

/// The active hub's renewals, a task of their own: an append that waits for an election
/// must not hold them up.
struct Renewal {
    renewals: watch::Receiver<Renewals>,
    task: tokio::task::JoinHandle<()>,
}

impl Renewal {
    fn start<B: LeaseBucket>(bucket: B, holder: &Holder, revision: u64, sent: Instant) -> Renewal {
        let (tx, renewals) = watch::channel(Renewals { sent, lost: false });
        let value: bytes::Bytes = serde_json::to_vec(holder)
            .expect("a holder serializes")
            .into();
        let task = tokio::spawn(async move {
            let mut revision = revision;
            let mut every = tokio::time::interval(RENEW_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let now = now();
                let renewed = tokio::time::timeout(
                    RENEWAL_TIMEOUT,
                    bucket.write(value.clone(), Some(revision)),
                )
                .await;
                match renewed {
                    Ok(Ok(next)) => {
                        revision = next;
                        tx.send_modify(|r| r.sent = now);
                    }
                    Ok(Err(WriteRefused::NotAtRevision)) => {
                        tx.send_modify(|r| r.lost = true);
                        return;
                    }
                    Ok(Err(WriteRefused::Failed(e))) => {
                        tracing::warn!(error = %e, "the lease was not renewed; trying again")
                    }
                    Err(_) => tracing::warn!("the lease's renewal got no answer; trying again"),
                }
            }
        });
        Renewal { renewals, task }
    }
}

impl Drop for Renewal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<B: LeaseBucket> Lease<B> {
    pub fn new(bucket: B) -> Lease<B> {
        Lease {
            bucket,
            renewal: None,
        }
    }

    /// The lease as the bucket has it now (`None`: nobody holds it).
    pub async fn read(&self) -> Result<Option<LeaseEntry>, String> {
        Ok(self
            .bucket
            .read()
            .await?
            .map(|(revision, value)| LeaseEntry {
                revision,
                holder: serde_json::from_slice(&value).ok(),
            }))
    }

    /// Writes `holder` into the lease if it is still at `revision` (`None`: absent), and
    /// renews it from then on; `false` when another standby was quicker or the cluster is
    /// busy. `sent` is when the write went out: the lease counts from then.
    pub async fn take(&mut self, revision: Option<u64>, holder: &Holder, sent: Instant) -> bool {
        let value = serde_json::to_vec(holder)
            .expect("a holder serializes")
            .into();
        match self.bucket.write(value, revision).await {
            Ok(revision) => {
                tracing::warn!(epoch = holder.epoch, "this hub took the lease");
                self.renewal = Some(Renewal::start(self.bucket.clone(), holder, revision, sent));
                true
            }
            Err(e) => {
                tracing::info!(error = ?e, "the lease was not taken");
                false
            }
        }
    }

    /// How the renewals go, while this hub renews the lease.
    pub fn renewals(&self) -> Option<Renewals> {
        self.renewal.as_ref().map(|r| *r.renewals.borrow())
    }

    /// The hub stepped down: it renews no more.
    pub fn give_up(&mut self) {
        self.renewal = None;
    }
}

/// The driver's clock: tokio's, so that the driver's tests run on simulated time.
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}
