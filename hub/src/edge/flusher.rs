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

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

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
    appended: Sender<Position>,
    thread: JoinHandle<Result<(), StoreError>>,
}

impl Flusher {
    /// Starts the flusher thread; what it flushed arrives on `durable`.
    pub fn start(
        journal: Journal,
        generation: u64,
        metrics: Arc<Metrics>,
        durable: async_mpsc::UnboundedSender<Flushed>,
    ) -> std::io::Result<Flusher> {
        let (appended, pending) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("journal-flusher".into())
            .spawn(move || run(&journal, generation, &metrics, &pending, &durable))?;
        Ok(Flusher { appended, thread })
    }

    /// Call after the write at `position` was appended to the journal.
    pub fn appended(&self, position: Position) {
        // The thread only stops when this sender is dropped or a flush failed, which it
        // reported.
        let _ = self.appended.send(position);
    }

    /// Lets the thread go without waiting for it: it ends after the flush it may be in (a
    /// failing disk can hold one for long), and what it reports then is stale.
    pub fn abandon(self) {
        drop(self.appended);
    }

    /// Flushes what is pending and stops the thread.
    pub fn stop(self) -> Result<(), StoreError> {
        drop(self.appended);
        self.thread.join().unwrap_or(Ok(()))
    }
}

fn run(
    journal: &Journal,
    generation: u64,
    metrics: &Metrics,
    pending: &Receiver<Position>,
    durable: &async_mpsc::UnboundedSender<Flushed>,
) -> Result<(), StoreError> {
    while let Ok(first) = pending.recv() {
        let up_to = pending.try_iter().fold(first, Position::max);
        let started = Instant::now();
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
