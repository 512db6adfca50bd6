//! Group commit.
//!
//! One OS thread owns flushing: it waits for the first write the hub appended, takes every
//! other one appended meanwhile, calls sled's blocking `flush()` once for all of them, and
//! then reports the journal position up to which everything is durable. Only then may the
//! hub acknowledge an event, publish an alert or confirm a decision (the core's one queue
//! of what waits, `core::hub`). A single flusher calling the blocking `flush()` also avoids
//! the deadlocks reported for concurrent `flush_async` calls (sled issues 1308, 1357).
//!
//! A flush that fails (a full disk) is reported, and the thread ends: sled keeps an IO error
//! for good, so only a journal opened again can flush again (the shell's recovery).
//!
//! Flushes are at least [`MIN_INTERVAL`] apart: a hall of 10,000 boards appends an event
//! every 100 µs, and a flush each (a write and its wake-ups of sled's IO threads) would cost
//! more than the rules. The hub wakes the thread once for the writes made while it flushes
//! or waits, not once per write.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The shortest time between two flushes: what an acknowledgement may wait at most for the
/// writes that come after it to share its flush.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

use tokio::sync::mpsc as async_mpsc;

use super::store::{Journal, StoreError};
use crate::core::hub::Position;
use crate::metrics::Metrics;

/// What the flusher of one opening of the journal (its `generation`: a journal opened
/// again after a failure has the next) reports.
#[derive(Debug)]
pub enum Flushed {
    /// Everything appended up to this position is durable.
    Durable { generation: u64, up_to: Position },
    /// The journal cannot flush (the reason); nothing more will be durable from it.
    Failed { generation: u64, reason: String },
}

pub struct Flusher {
    /// Wakes the thread: sent when the first write after its last look arrives.
    wake: Sender<()>,
    /// What the thread has to make durable: the latest position appended, and whether it has
    /// been told.
    latest: Arc<Latest>,
    thread: JoinHandle<Result<(), StoreError>>,
}

#[derive(Debug, Default)]
struct Latest {
    position: AtomicU64,
    told: AtomicBool,
}

impl Flusher {
    /// Starts the flusher thread; what it flushed arrives on `durable`.
    pub fn start(
        journal: Journal,
        generation: u64,
        metrics: Arc<Metrics>,
        durable: async_mpsc::UnboundedSender<Flushed>,
    ) -> std::io::Result<Flusher> {
        let (wake, woken) = mpsc::channel();
        let latest = Arc::new(Latest::default());
        let seen = latest.clone();
        let thread = std::thread::Builder::new()
            .name("journal-flusher".into())
            .spawn(move || run(&journal, generation, &metrics, &woken, &seen, &durable))?;
        Ok(Flusher {
            wake,
            latest,
            thread,
        })
    }

    /// Call after the write at `position` was appended to the journal.
    pub fn appended(&self, position: Position) {
        self.latest.position.fetch_max(position.0, Ordering::SeqCst);
        if !self.latest.told.swap(true, Ordering::SeqCst) {
            // The thread only stops when this sender is dropped or a flush failed, which it
            // reported.
            let _ = self.wake.send(());
        }
    }

    /// Lets the thread go without waiting for it: it ends after the flush it may be in (a
    /// failing disk can hold one for long), and what it reports then is stale.
    pub fn abandon(self) {
        drop(self.wake);
    }

    /// Flushes what is pending and stops the thread.
    pub fn stop(self) -> Result<(), StoreError> {
        drop(self.wake);
        self.thread.join().unwrap_or(Ok(()))
    }
}

fn run(
    journal: &Journal,
    generation: u64,
    metrics: &Metrics,
    woken: &Receiver<()>,
    latest: &Latest,
    durable: &async_mpsc::UnboundedSender<Flushed>,
) -> Result<(), StoreError> {
    let mut flushed_at: Option<Instant> = None;
    while woken.recv().is_ok() {
        // Writes that come meanwhile share this flush.
        if let Some(wait) = flushed_at.and_then(|at| MIN_INTERVAL.checked_sub(at.elapsed())) {
            std::thread::sleep(wait);
        }
        // From here on a write wakes the thread again; everything before is in this flush.
        latest.told.store(false, Ordering::SeqCst);
        let up_to = Position(latest.position.load(Ordering::SeqCst));
        let started = Instant::now();
        flushed_at = Some(started);
        if let Err(e) = journal.flush() {
            tracing::error!(error = %e, "journal flush failed; nothing is acknowledged until it recovers");
            let reason = e.to_string();
            let _ = durable.send(Flushed::Failed { generation, reason });
            return Err(e);
        }
        metrics.flushed(started.elapsed());
        if durable
            .send(Flushed::Durable { generation, up_to })
            .is_err()
        {
            break;
        }
    }
    Ok(())
}
