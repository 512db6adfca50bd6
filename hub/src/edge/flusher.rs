//! Group commit.
//!
//! One OS thread owns flushing: it waits for the first appended record, takes every other
//! record appended meanwhile, calls sled's blocking `flush()` once for all of them, and then
//! reports the highest durable sequence number per board. Only then may the hub acknowledge.
//! A single flusher calling the blocking `flush()` also avoids the deadlocks reported for
//! concurrent `flush_async` calls (sled issues 1308, 1357).

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use protocol::{BoardNo, Seq};
use tokio::sync::mpsc as async_mpsc;

use super::store::{Journal, StoreError};
use crate::metrics::Metrics;

/// What became durable in one flush: the highest sequence number per board.
pub type Durable = Vec<(BoardNo, Seq)>;

pub struct Flusher {
    appended: Sender<(BoardNo, Seq)>,
    thread: JoinHandle<Result<(), StoreError>>,
}

impl Flusher {
    /// Starts the flusher thread; durable points arrive on `durable`.
    pub fn start(
        journal: Journal,
        metrics: Arc<Metrics>,
        durable: async_mpsc::UnboundedSender<Durable>,
    ) -> std::io::Result<Flusher> {
        let (appended, pending) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("journal-flusher".into())
            .spawn(move || run(&journal, &metrics, &pending, &durable))?;
        Ok(Flusher { appended, thread })
    }

    /// Call after [`Journal::append`] returned.
    pub fn appended(&self, board: BoardNo, seq: Seq) {
        // The thread only stops when this sender is dropped or sled failed; a failure is
        // reported by `stop`.
        let _ = self.appended.send((board, seq));
    }

    /// Flushes what is pending and stops the thread.
    pub fn stop(self) -> Result<(), StoreError> {
        drop(self.appended);
        self.thread.join().unwrap_or(Ok(()))
    }
}

fn run(
    journal: &Journal,
    metrics: &Metrics,
    pending: &Receiver<(BoardNo, Seq)>,
    durable: &async_mpsc::UnboundedSender<Durable>,
) -> Result<(), StoreError> {
    while let Ok(first) = pending.recv() {
        let mut batch = BTreeMap::new();
        for (board, seq) in std::iter::once(first).chain(pending.try_iter()) {
            let highest = batch.entry(board).or_insert(seq);
            *highest = (*highest).max(seq);
        }
        let started = Instant::now();
        if let Err(e) = journal.flush() {
            tracing::error!(error = %e, "journal flush failed; acknowledgements stop");
            return Err(e);
        }
        metrics.flushed(started.elapsed());
        if durable.send(batch.into_iter().collect()).is_err() {
            break;
        }
    }
    Ok(())
}
