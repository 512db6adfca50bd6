//! The journal as the shell holds it: the sled database, its flusher, and whether they work.
//!
//! A journal that cannot write or flush (a full disk) fails loudly and safely: the shell
//! stops taking events and changes, `/healthz` answers 503 with the reason, nothing more is
//! acknowledged, and every [`RETRY`] the journal is opened again. sled keeps an IO error for
//! good, so recovery is a fresh open of the same directory; the shell then rebuilds the core
//! from what is durable, and the nodes resend what was never acknowledged.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::mpsc;

use crate::core::hub::{Position, Write};
use crate::edge::journal::flusher::{Flushed, Flusher};
use crate::edge::journal::Journal;
use crate::metrics::Metrics;

/// How often a failed journal is tried again.
pub const RETRY: Duration = Duration::from_secs(2);

/// Why and since when the journal does not work.
#[derive(Debug, Clone)]
pub struct Failure {
    pub since: Instant,
    pub reason: String,
}

pub struct JournalLink {
    dir: PathBuf,
    metrics: Arc<Metrics>,
    durable: mpsc::UnboundedSender<Flushed>,
    /// `None` while failed: closed, so that it can be opened again.
    open: Option<(Journal, Flusher)>,
    /// Counts the openings: what an earlier opening's flusher reports is stale.
    generation: u64,
    failure: Option<Failure>,
    /// On a cluster's standby, why this hub writes nothing (where the active hub is): as its
    /// cluster role says, told by the shell.
    standby: Option<String>,
    /// On a cluster: where the writes go first (the journal stream's task), which hands
    /// them to the flusher once the cluster has them.
    cluster: Option<mpsc::UnboundedSender<(Position, Write)>>,
}

impl JournalLink {
    /// Opens the journal in `dir`; flushed positions and failures arrive on `durable`.
    pub fn open(
        dir: PathBuf,
        metrics: Arc<Metrics>,
        durable: mpsc::UnboundedSender<Flushed>,
    ) -> anyhow::Result<JournalLink> {
        let journal = Journal::open(&dir)
            .with_context(|| format!("opening the journal in {}", dir.display()))?;
        let flusher = Flusher::start(journal.clone(), 0, metrics.clone(), durable.clone())
            .context("starting the journal flusher")?;
        Ok(JournalLink {
            dir,
            metrics,
            durable,
            open: Some((journal, flusher)),
            generation: 0,
            failure: None,
            standby: None,
            cluster: None,
        })
    }

    /// The way into the flusher for the cluster's journal task.
    pub fn flusher_input(&self) -> Option<crate::edge::journal::flusher::FlusherInput> {
        self.open.as_ref().map(|(_, flusher)| flusher.input())
    }

    /// On a cluster: the writes go to the journal stream's task first.
    pub fn on_cluster(&mut self, writes: mpsc::UnboundedSender<(Position, Write)>) {
        self.cluster = Some(writes);
    }

    pub fn is_clustered(&self) -> bool {
        self.cluster.is_some()
    }

    /// A cluster's standby: nothing is written or acknowledged here, every change is
    /// refused (`reason` says where the active hub is); the journal stays open, filled
    /// from the stream.
    pub fn stand_by(&mut self, reason: String) {
        self.standby = Some(reason);
    }

    /// Whether this is a cluster's standby.
    pub fn is_standby(&self) -> bool {
        self.standby.is_some()
    }

    /// A cluster's hub became the active one: it writes again.
    pub fn activate(&mut self) {
        self.standby = None;
    }

    /// Why nothing is taken now, if so: the journal failed, or this is a cluster's standby.
    pub fn takes_nothing(&self) -> Option<&str> {
        self.failure
            .as_ref()
            .map(|f| f.reason.as_str())
            .or(self.standby.as_deref())
    }

    /// Whether a flusher's report is about the journal as it is open now.
    pub fn is_current(&self, generation: u64) -> bool {
        generation == self.generation && self.takes_nothing().is_none()
    }

    /// The open journal, to restore the core from; `None` while failed.
    pub fn journal(&self) -> Option<&Journal> {
        self.open.as_ref().map(|(journal, _)| journal)
    }

    /// Hands `write`, the journal's at `at`, to the flusher, which appends it and makes it
    /// durable (or reports the journal failed). While failed, nothing is written.
    pub fn write(&mut self, at: Position, write: Write) {
        if self.takes_nothing().is_some() {
            return;
        }
        if let Some(cluster) = &self.cluster {
            let _ = cluster.send((at, write));
        } else if let Some((_, flusher)) = &self.open {
            flusher.write(at, write);
        }
    }

    /// The journal cannot write or flush: it is closed until [`JournalLink::reopen`].
    pub fn fail(&mut self, reason: String) {
        if self.failure.is_none() {
            tracing::error!(%reason, "the journal failed: no event is taken or acknowledged until it works again");
            self.failure = Some(Failure {
                since: Instant::now(),
                reason,
            });
            self.metrics.journal_failing(true);
        }
        if let Some((journal, flusher)) = self.open.take() {
            // The loop never waits on a failing disk: the flusher ends with its channel, after
            // the flush it may be in, and what it reports is ignored (an older generation).
            flusher.abandon();
            drop(journal);
        }
    }

    /// The journal's own failure (a cluster's standby is not one).
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Tries the failed journal again: opened afresh, and a probe written and flushed, so a
    /// disk that is still full keeps the journal failed instead of rebuilding the hall every
    /// [`RETRY`] only to fail at the next flush. On success the journal is back, and the
    /// caller rebuilds the core from it.
    pub fn reopen(&mut self) -> bool {
        match &self.failure {
            None => return true,
            // A cluster's hub whose disk failed ends instead (the shell), and comes back as a
            // standby.
            Some(_) if self.cluster.is_some() => return false,
            Some(_) => {}
        }
        let reopened = Journal::open(&self.dir).and_then(|journal| {
            journal.probe()?;
            Ok(journal)
        });
        let journal = match reopened {
            Ok(journal) => journal,
            Err(e) => {
                tracing::warn!(error = %e, "the journal still fails");
                return false;
            }
        };
        let generation = self.generation + 1;
        let flusher = match Flusher::start(
            journal.clone(),
            generation,
            self.metrics.clone(),
            self.durable.clone(),
        ) {
            Ok(flusher) => flusher,
            Err(e) => {
                tracing::warn!(error = %e, "the journal's flusher does not start");
                return false;
            }
        };
        let failure = self.failure.take().expect("checked above");
        tracing::warn!(
            failed_for_s = failure.since.elapsed().as_secs(),
            "the journal works again"
        );
        self.metrics.journal_failing(false);
        self.generation = generation;
        self.open = Some((journal, flusher));
        true
    }

    /// Flushes what is pending and closes the journal.
    pub fn close(self) -> anyhow::Result<()> {
        match self.open {
            Some((_, flusher)) => flusher.stop().context("final journal flush"),
            None => Ok(()),
        }
    }
}
