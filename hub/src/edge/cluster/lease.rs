//! Which hub is active: a lease in the cluster's key-value bucket, renewed by the active hub
//! and taken over by a standby when it stops being renewed.
//!
//! The lease only decides who *tries*; the journal stream's fence decides who *wins*
//! ([`super::journal`]): a hub writes only with the stream's last sequence as it knows it,
//! and a takeover record moves that on, so a hub that slept through its lease cannot append.
//! Nothing here trusts the bucket's clocks or a time to live (a TTL once failed to expire
//! on some nodes): a standby counts the lease stale by its own clock, from the last change
//! of the entry it saw, and the active hub by its own, from the last renewal it sent.

use std::time::{Duration, Instant};

use async_nats::jetstream::kv;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// The key of the lease in its bucket.
const KEY: &str = "active";

/// How often the active hub renews the lease.
pub const RENEW_EVERY: Duration = Duration::from_millis(500);
/// A standby takes over a lease it has seen unchanged this long, by successful reads only:
/// while the bucket does not answer (a leader election, 4 to 9 s in NATS) nobody can renew
/// or take it, and the count starts again when it answers.
pub const STALE_AFTER: Duration = Duration::from_secs(3);
/// The active hub gives up a lease it could not renew this long after the last renewal
/// that got through. Longer than an election of the bucket's leader, so that a dead NATS
/// node does not make the active hub step down for nothing; a refused renewal (another hub
/// holds it) or a refused append steps it down at once, and the fence makes a late
/// step-down harmless.
pub const HOLD_FOR: Duration = Duration::from_secs(10);
/// The longest one renewal is waited for.
const RENEWAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Who holds the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The hub's name (`--hub-name`, else the host's name and the HTTP port).
    pub hub: String,
    /// Where its page and API answer.
    pub http: String,
    /// Counts the takeovers.
    pub epoch: u64,
}

/// What a look at the lease found.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    /// Held elsewhere (or not yet takeable): [`Lease::holder`] says by whom, if known.
    Held,
    /// This hub holds it now, from `epoch`.
    Taken(u64),
}

/// The lease as this hub sees it.
pub struct Lease {
    store: kv::Store,
    me: Holder,
    state: State,
}

enum State {
    /// Another hub holds it (or nobody yet): the last revision seen, and when.
    Watching {
        revision: Option<u64>,
        holder: Option<Holder>,
        since: Instant,
    },
    /// This hub holds it: renewed by a task of its own, beside the appends.
    Holding(Renewal),
}

/// The active hub's renewals, a task of their own: an append that waits for an election
/// must not hold them up.
struct Renewal {
    held: watch::Receiver<Held>,
    task: tokio::task::JoinHandle<()>,
}

/// How the renewals go.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// When the last renewal that got through was sent.
    sent: Instant,
    /// Another hub holds the lease now.
    lost: bool,
}

impl Renewal {
    fn start(store: kv::Store, me: &Holder, revision: u64, sent: Instant) -> Renewal {
        let (tx, held) = watch::channel(Held { sent, lost: false });
        let value: bytes::Bytes = serde_json::to_vec(me).expect("a holder serializes").into();
        let task = tokio::spawn(async move {
            let mut revision = revision;
            let mut every = tokio::time::interval(RENEW_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let now = Instant::now();
                let renewed = tokio::time::timeout(
                    RENEWAL_TIMEOUT,
                    store.update(KEY, value.clone(), revision),
                )
                .await;
                match renewed {
                    Ok(Ok(next)) => {
                        revision = next;
                        tx.send_modify(|h| h.sent = now);
                    }
                    Ok(Err(e)) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                        tx.send_modify(|h| h.lost = true);
                        return;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "the lease was not renewed; trying again")
                    }
                    Err(_) => tracing::warn!("the lease's renewal got no answer; trying again"),
                }
            }
        });
        Renewal { held, task }
    }

    fn holding(&self) -> bool {
        let held = *self.held.borrow();
        !held.lost && held.sent.elapsed() < HOLD_FOR
    }
}

impl Drop for Renewal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Lease {
    pub fn new(store: kv::Store, hub: String, http: String) -> Lease {
        Lease {
            store,
            me: Holder {
                hub,
                http,
                epoch: 0,
            },
            state: State::Watching {
                revision: None,
                holder: None,
                since: Instant::now(),
            },
        }
    }

    pub fn me(&self) -> &Holder {
        &self.me
    }

    /// Whether this hub holds the lease by its own clock now.
    pub fn holding(&self) -> bool {
        match &self.state {
            State::Holding(renewal) => renewal.holding(),
            State::Watching { .. } => false,
        }
    }

    /// The hub that holds it, as last seen.
    pub fn holder(&self) -> Option<&Holder> {
        match &self.state {
            State::Watching { holder, .. } => holder.as_ref(),
            State::Holding(_) => Some(&self.me),
        }
    }

    /// A standby's look: takes the lease when nobody holds it or it went stale.
    pub async fn watch(&mut self) -> Seen {
        let entry = match self.store.entry(KEY).await {
            Ok(entry) => entry,
            Err(e) => {
                tracing::warn!(error = %e, "the lease cannot be read");
                if let State::Watching { since, .. } = &mut self.state {
                    *since = Instant::now();
                }
                return Seen::Held;
            }
        };
        let live = entry.filter(|e| e.operation == kv::Operation::Put);
        let Some(entry) = live else {
            return self.take(None, 1).await;
        };
        let holder: Option<Holder> = serde_json::from_slice(&entry.value).ok();
        let stale = match &mut self.state {
            State::Watching {
                revision,
                holder: seen,
                since,
            } => {
                if *revision != Some(entry.revision) {
                    *revision = Some(entry.revision);
                    seen.clone_from(&holder);
                    *since = Instant::now();
                }
                since.elapsed() >= STALE_AFTER
            }
            State::Holding(_) => false,
        };
        if stale {
            let epoch = holder.as_ref().map_or(0, |h| h.epoch) + 1;
            return self.take(Some(entry.revision), epoch).await;
        }
        Seen::Held
    }

    /// Writes this hub into the lease if it is still at `revision` (`None`: absent).
    async fn take(&mut self, revision: Option<u64>, epoch: u64) -> Seen {
        let me = Holder {
            epoch,
            ..self.me.clone()
        };
        let value = serde_json::to_vec(&me).expect("a holder serializes").into();
        let sent = Instant::now();
        let taken = match revision {
            None => self
                .store
                .create(KEY, value)
                .await
                .map_err(|e| e.to_string()),
            Some(revision) => self
                .store
                .update(KEY, value, revision)
                .await
                .map_err(|e| e.to_string()),
        };
        match taken {
            Ok(revision) => {
                tracing::warn!(epoch, "this hub took the lease");
                self.state =
                    State::Holding(Renewal::start(self.store.clone(), &me, revision, sent));
                self.me = me;
                Seen::Taken(epoch)
            }
            Err(e) => {
                // Another standby was quicker, or the cluster is busy: look again.
                tracing::info!(error = %e, "the lease was not taken");
                Seen::Held
            }
        }
    }

    /// The hub stepped down: it renews no more, and watches the lease again.
    pub fn give_up(&mut self) {
        self.state = State::Watching {
            revision: None,
            holder: None,
            since: Instant::now(),
        };
    }

    /// Whether the active hub still holds the lease; once not, it is a standby that
    /// watches it again.
    pub fn still_held(&mut self) -> bool {
        if self.holding() {
            return true;
        }
        if matches!(self.state, State::Holding(_)) {
            tracing::error!("this hub lost the lease: another hub holds it, or it could not renew it for {HOLD_FOR:?}");
            self.give_up();
        }
        false
    }
}
