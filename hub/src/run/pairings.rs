//! The pairings follow their files: the pairing program exports the next round's pairings
//! (and the results it was given) into the file the configuration names, and the hub reads
//! it again, when it changes and before a round starts, so one hub serves every round.
//!
//! The files are read off the loop, one read at a time, each within [`READ_LIMIT`]: a slow
//! disk or a share that hangs holds no board's acknowledgement and no `/healthz`. What the
//! files are (regular, bounded) is [`crate::config::file`]'s to check.
//!
//! ```text
//!  every 5 s: a file changed? ─┐
//!  POST /api/rounds/{r}/start ─┴─► begin: spawn_blocking(config::load) ─► Done ─► the shell
//!                                  the starts wait with the read            sets the rounds,
//!                                                                           then the starts
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::config;
use crate::core::hub::StartRequest;
use crate::core::pairings::RoundState;
use crate::core::rounds::StartError;
use crate::pairings::Tournament;

/// How long a read of the pairing files may take before the starts waiting for it are
/// answered that it failed.
pub(super) const READ_LIMIT: Duration = Duration::from_secs(10);

/// A round start waiting for the files, and where its answer goes.
pub(super) type WaitingStart = (
    StartRequest,
    oneshot::Sender<Result<Vec<RoundState>, StartError>>,
);

type Stamp = Option<(SystemTime, u64)>;

/// The configuration file and the pairing files it names, as last read.
pub(super) struct PairingFiles {
    config: PathBuf,
    /// Each file with its modification time and length when last read.
    seen: Vec<(PathBuf, Stamp)>,
    /// The read under way, if any.
    reading: Option<Reading>,
    /// Starts that came while a read was under way: they wait for the next.
    waiting: Vec<WaitingStart>,
    /// Whether a read is still running on its thread (one that ran past the limit too).
    busy: Arc<AtomicBool>,
}

/// A read under way on a blocking thread.
struct Reading {
    answer: oneshot::Receiver<Result<Read, String>>,
    until: Instant,
    starts: Vec<WaitingStart>,
}

/// What a read found.
struct Read {
    tournament: Tournament,
    seen: Vec<(PathBuf, Stamp)>,
}

/// A read ended: the tournament as the files give it (or why not), and the starts that
/// waited for it.
pub(super) struct Done {
    pub(super) tournament: Result<Tournament, String>,
    pub(super) starts: Vec<WaitingStart>,
}

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The configuration and its pairing files read, with what each looked like before.
fn read(config: &Path) -> Result<Read, String> {
    let before = stamp(config);
    let read = config::load(config).map_err(|e| e.to_string())?;
    let seen = std::iter::once((config.to_owned(), before))
        .chain(
            read.pairing_files
                .iter()
                .map(|path| (path.clone(), stamp(path))),
        )
        .collect();
    Ok(Read {
        tournament: read.tournament,
        seen,
    })
}

impl PairingFiles {
    /// Follows `config` and what it names as they stand now (the hub read them at its start).
    pub(super) fn new(config: PathBuf) -> PairingFiles {
        let seen = match read(&config) {
            Ok(read) => read.seen,
            Err(_) => vec![(config.clone(), stamp(&config))],
        };
        PairingFiles {
            config,
            seen,
            reading: None,
            waiting: Vec::new(),
            busy: Arc::default(),
        }
    }

    /// Whether a file changed since it was last read.
    pub(super) fn changed(&self) -> bool {
        self.seen.iter().any(|(path, seen)| stamp(path) != *seen)
    }

    /// Reads the files again off the loop, unless a read is under way.
    pub(super) fn begin(&mut self) {
        if self.reading.is_some() {
            return;
        }
        let starts = std::mem::take(&mut self.waiting);
        if self.busy.swap(true, Ordering::AcqRel) {
            // A read that ran past its limit still holds its thread: no second one beside it.
            let why = format!(
                "the pairing files are still being read (a read has taken longer than {} s)",
                READ_LIMIT.as_secs()
            );
            for (_, reply) in starts {
                drop(reply.send(Err(StartError::Pairings(why.clone()))));
            }
            return;
        }
        let (tx, answer) = oneshot::channel();
        let (config, busy) = (self.config.clone(), Arc::clone(&self.busy));
        tokio::task::spawn_blocking(move || {
            let read = read(&config);
            busy.store(false, Ordering::Release);
            drop(tx.send(read));
        });
        self.reading = Some(Reading {
            answer,
            until: Instant::now() + READ_LIMIT,
            starts,
        });
    }

    /// A round start waits for the files read again (the pairing program exported the
    /// round's pairings just before, perhaps): with the read about to begin, or the next.
    pub(super) fn wait_for_read(&mut self, start: WaitingStart) {
        self.waiting.push(start);
        self.begin();
    }

    /// Starts that arrived during the last read: they need one of their own.
    pub(super) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// The read under way, once it ends (never, with none under way).
    pub(super) async fn done(&mut self) -> Done {
        let Some(reading) = &mut self.reading else {
            return std::future::pending().await;
        };
        let answer = tokio::time::timeout_at(reading.until, &mut reading.answer).await;
        let reading = self.reading.take().expect("a read under way");
        let tournament = match answer {
            Ok(Ok(Ok(read))) => {
                self.seen = read.seen;
                Ok(read.tournament)
            }
            Ok(Ok(Err(why))) => Err(why),
            Ok(Err(_)) => Err("the read of the pairing files ended without an answer".to_owned()),
            Err(_) => Err(format!(
                "reading the pairing files took longer than {} s",
                READ_LIMIT.as_secs()
            )),
        };
        Done {
            tournament,
            starts: reading.starts,
        }
    }
}

/// The read under way of `files`, if the hub follows any.
pub(super) async fn next_read(files: &mut Option<PairingFiles>) -> Done {
    match files {
        Some(files) => files.done().await,
        None => std::future::pending().await,
    }
}
