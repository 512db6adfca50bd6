//! Group commit.
//!
//! One OS thread owns flushing: it waits for the first appended record, takes every other
//! record appended meanwhile, calls sled's blocking `flush()` once for all of them, and then
//! reports the highest durable sequence number per board, the arbiter's decisions and the
//! alert changes made durable. Only then may the hub acknowledge an event or confirm a decision.
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

/// What the journal buffered and the flusher must make durable.
#[derive(Debug, Clone, Copy)]
enum Appended {
    Event(BoardNo, Seq),
    Decision(u64),
    /// The shell's running number of an alert change.
    Alert(u64),
    /// The shell's running number of a binding of a node to a board.
    Binding(u64),
}

/// What became durable in one flush.
#[derive(Debug, Default)]
pub struct Durable {
    /// The highest sequence number per board.
    pub events: Vec<(BoardNo, Seq)>,
    /// The ids of the arbiter's decisions.
    pub decisions: Vec<u64>,
    /// Alert changes up to this running number.
    pub alerts_up_to: Option<u64>,
    /// Bindings up to this running number.
    pub bindings_up_to: Option<u64>,
}

pub struct Flusher {
    appended: Sender<Appended>,
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
        let _ = self.appended.send(Appended::Event(board, seq));
    }

    /// Call after [`Journal::append_decision`] returned.
    pub fn appended_decision(&self, id: u64) {
        let _ = self.appended.send(Appended::Decision(id));
    }

    /// Call after [`Journal::put_alert`] returned; `number` counts alert changes up.
    pub fn appended_alert(&self, number: u64) {
        let _ = self.appended.send(Appended::Alert(number));
    }

    /// Call after [`Journal::put_binding`] returned; `number` counts bindings up.
    pub fn appended_binding(&self, number: u64) {
        let _ = self.appended.send(Appended::Binding(number));
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
    pending: &Receiver<Appended>,
    durable: &async_mpsc::UnboundedSender<Durable>,
) -> Result<(), StoreError> {
    while let Ok(first) = pending.recv() {
        let mut batch = BTreeMap::new();
        let mut decisions = Vec::new();
        let mut alerts_up_to = None;
        let mut bindings_up_to = None;
        for appended in std::iter::once(first).chain(pending.try_iter()) {
            match appended {
                Appended::Event(board, seq) => {
                    let highest = batch.entry(board).or_insert(seq);
                    *highest = (*highest).max(seq);
                }
                Appended::Decision(id) => decisions.push(id),
                Appended::Alert(n) => alerts_up_to = alerts_up_to.max(Some(n)),
                Appended::Binding(n) => bindings_up_to = bindings_up_to.max(Some(n)),
            }
        }
        let started = Instant::now();
        if let Err(e) = journal.flush() {
            tracing::error!(error = %e, "journal flush failed; acknowledgements stop");
            return Err(e);
        }
        metrics.flushed(started.elapsed());
        let flushed = Durable {
            events: batch.into_iter().collect(),
            decisions,
            alerts_up_to,
            bindings_up_to,
        };
        if durable.send(flushed).is_err() {
            break;
        }
    }
    Ok(())
}
