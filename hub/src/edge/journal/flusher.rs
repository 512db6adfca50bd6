//! Group commit.
//!
//! One OS thread owns the journal's writes: it takes the first write the hub handed it,
//! appends it and every other one handed over meanwhile to sled, calls sled's blocking
//! `flush()` once for all of them, and then reports the journal position up to which
//! everything is durable. Only then may the hub acknowledge an event, publish an alert or
//! confirm a decision (the core's one queue of what waits, `core::hub`). A single thread
//! calling the blocking `flush()` also avoids the deadlocks reported for concurrent
//! `flush_async` calls (sled issues 1308, 1357). The vendored sled writes a flushed buffer
//! on this thread too, without waking its IO pool (vendor/README.md).
//!
//! The appends are this thread's work, not the hub's loop's: at 10,000 boards sled's
//! inserts (a board's page found, its delta chain consolidated, its leaf split) took half the
//! loop's time, which the rules and the broker need. The hub hands each write over in order
//! and goes on; the positions it reports are the only way anything becomes durable.
//!
//! A write or flush that fails (a full disk) is reported, and the thread ends: sled keeps an
//! IO error for good, so only a journal opened again can write again (the shell's recovery).
//!
//! After a round start is durable the flusher wakes a second thread, the round archiver: the
//! events databases that hold finished rounds only become compressed files
//! ([`Journal::archive_finished`]), off the path of the acknowledgements. It also catches up
//! at a start (a crash in the middle of archiving).
//!
//! Flushes are at least [`MIN_INTERVAL`] apart: a hall of 10,000 boards appends an event
//! every 100 µs, and a flush each (a `pwrite`, a `sync_file_range` and the wake-ups) would cost
//! more than the rules.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The shortest time between two flushes: what an acknowledgement may wait at most for the
/// writes that come after it to share its flush.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

use tokio::sync::mpsc as async_mpsc;

use super::{Journal, StoreError};
use crate::core::hub::{Position, Write};
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
    /// The writes to append, in order, each at its position.
    writes: Sender<Handed>,
    thread: JoinHandle<Result<(), StoreError>>,
}

/// What the flusher is handed, in order.
#[derive(Debug)]
// The hot path is `Write`, one per event, moved through the channel as it is: boxing it to
// match the small variants would cost an allocation per event for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Handed {
    /// A write, the journal's at this position.
    Write(Position, Write),
    /// On a cluster, the active hub's append: its writes, at their positions, and the
    /// journal stream's sequence number after them, taken into one flush together (a flush
    /// between them would keep writes the local journal does not count as the stream's).
    Appended(Vec<(Position, Write)>, u64),
    /// A record another hub appended, read off the cluster's journal stream: its writes
    /// (kept, nobody waits for them) and its sequence number, taken into one flush together.
    Copied(Vec<Write>, u64),
    /// On a cluster: everything handed so far is the journal stream's up to this sequence
    /// number (a record with no writes: a takeover, a stranger's).
    StreamSeq(u64),
    /// Answered once everything handed before is flushed.
    Sync(tokio::sync::oneshot::Sender<()>),
}

/// A handle to give the flusher writes from another task (the cluster's journal).
#[derive(Clone)]
pub struct FlusherInput(Sender<Handed>);

impl FlusherInput {
    /// A handle whose hand-overs arrive on the receiver, for a test that stands in for the
    /// flusher.
    #[cfg(test)]
    pub(crate) fn channel() -> (FlusherInput, Receiver<Handed>) {
        let (tx, rx) = mpsc::channel();
        (FlusherInput(tx), rx)
    }

    /// Hands over `handed`; `false` once the flusher has stopped.
    pub fn hand(&self, handed: Handed) -> bool {
        self.0.send(handed).is_ok()
    }
}

impl Flusher {
    /// Starts the thread; what it flushed arrives on `durable`.
    pub fn start(
        journal: Journal,
        generation: u64,
        metrics: Arc<Metrics>,
        durable: async_mpsc::UnboundedSender<Flushed>,
    ) -> std::io::Result<Flusher> {
        let (writes, handed) = mpsc::channel();
        let (round_started, archive) = mpsc::channel();
        let archiving = journal.clone();
        std::thread::Builder::new()
            .name("round-archiver".into())
            .spawn(move || archive_rounds(&archiving, &archive))?;
        let thread = std::thread::Builder::new()
            .name("journal-flusher".into())
            .spawn(move || {
                run(
                    &journal,
                    generation,
                    &metrics,
                    &handed,
                    &durable,
                    &round_started,
                )
            })?;
        Ok(Flusher { writes, thread })
    }

    /// Hands over `write`, the journal's at `position`, to be appended and made durable.
    pub fn write(&self, position: Position, write: Write) {
        // The thread only stops when this sender is dropped or a write failed, which it
        // reported.
        let _ = self.writes.send(Handed::Write(position, write));
    }

    /// Another way in, for a task that hands the flusher what it wrote elsewhere first.
    pub fn input(&self) -> FlusherInput {
        FlusherInput(self.writes.clone())
    }

    /// Lets the thread go without waiting for it: it ends after the writes and the flush it
    /// may be in (a failing disk can hold one for long), and what it reports then is stale.
    pub fn abandon(self) {
        drop(self.writes);
    }

    /// Writes and flushes what is pending and stops the thread.
    pub fn stop(self) -> Result<(), StoreError> {
        drop(self.writes);
        self.thread.join().unwrap_or(Ok(()))
    }
}

fn run(
    journal: &Journal,
    generation: u64,
    metrics: &Metrics,
    handed: &Receiver<Handed>,
    durable: &async_mpsc::UnboundedSender<Flushed>,
    round_started: &Sender<()>,
) -> Result<(), StoreError> {
    let failed = |e: StoreError| {
        tracing::error!(error = %e, "journal write or flush failed; nothing is acknowledged until it recovers");
        let reason = e.to_string();
        let _ = durable.send(Flushed::Failed { generation, reason });
        e
    };
    let mut flushed_at: Option<Instant> = None;
    loop {
        // The interval is slept out before the next write is waited for, not after it came:
        // in a busy hall the writes handed over meanwhile are there when it ends, and the hub
        // that hands them over does not wake this thread only for it to sleep again (a
        // wake-up per flush saved; a quiet hall's first write still finds it waiting).
        if let Some(wait) = flushed_at.and_then(|at| MIN_INTERVAL.checked_sub(at.elapsed())) {
            std::thread::sleep(wait);
        }
        let Ok(first) = handed.recv() else { break };
        let mut batch = Taken::default();
        batch.take(journal, first).map_err(failed)?;
        // Writes that came meanwhile share this flush.
        while let Ok(next) = handed.try_recv() {
            batch.take(journal, next).map_err(failed)?;
        }
        let started = Instant::now();
        flushed_at = Some(started);
        journal.flush().map_err(failed)?;
        metrics.flushed(started.elapsed());
        if batch.starts_round {
            let _ = round_started.send(());
        }
        for synced in batch.syncs {
            let _ = synced.send(());
        }
        if let Some(up_to) = batch.up_to {
            if durable
                .send(Flushed::Durable { generation, up_to })
                .is_err()
            {
                break;
            }
        }
    }
    Ok(())
}

/// What one flush takes in.
#[derive(Default)]
struct Taken {
    up_to: Option<Position>,
    starts_round: bool,
    syncs: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Taken {
    fn take(&mut self, journal: &Journal, handed: Handed) -> Result<(), StoreError> {
        match handed {
            Handed::Write(at, write) => {
                self.starts_round |= matches!(write, Write::RoundStart(_));
                journal.write(&write)?;
                self.up_to = Some(at);
            }
            Handed::Appended(writes, seq) => {
                for (at, write) in writes {
                    self.take(journal, Handed::Write(at, write))?;
                }
                journal.set_stream_seq(seq)?;
            }
            Handed::Copied(writes, seq) => {
                for write in writes {
                    self.starts_round |= matches!(write, Write::RoundStart(_));
                    journal.write(&write)?;
                }
                journal.set_stream_seq(seq)?;
            }
            Handed::StreamSeq(seq) => journal.set_stream_seq(seq)?,
            Handed::Sync(synced) => self.syncs.push(synced),
        }
        Ok(())
    }
}

/// The round archiver's thread: archives what is finished at once, then after every round
/// start; ends with the flusher. A failure is logged and tried again at the next start.
fn archive_rounds(journal: &Journal, round_started: &Receiver<()>) {
    loop {
        if let Err(e) = journal.archive_finished() {
            tracing::error!(error = %e, "archiving finished rounds failed; their events stay in sled");
        }
        if round_started.recv().is_err() {
            break;
        }
        // Round starts of several sections at once: one pass.
        while round_started.try_recv().is_ok() {}
    }
}
