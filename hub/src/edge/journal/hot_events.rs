//! The events of the rounds in play: a sled database of their own for each round start.
//!
//! sled gives no space back when records are removed (measured: 3 million events, 90 %
//! removed, the directory grew by 13 %), so a finished round cannot leave a database that
//! keeps growing. Instead every round start opens a new events database,
//! `events/NNNNNNNN` (the start's ordinal; `0` before the first), and the events journaled
//! after it go there. A database that only holds finished rounds is turned into a
//! compressed file ([`super::round_archive`]) and its directory removed: sled then holds
//! the round in play, and a restart opens only that.
//!
//! Each board's first events (up to [`STREAM_HEAD`](crate::core::hub::STREAM_HEAD), what a restart reads to tell a node
//! starting again from 1 from a resend) stay in the main database, where every event went
//! before this layout; it is still read first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::error::StoreError;

/// The pages sled keeps in memory for one events database: appends, read once at a start.
const CACHE_BYTES: u64 = 16 * 1024 * 1024;

/// One events database: the ordinal of the round start that opened it.
#[derive(Clone)]
pub struct EventsDb {
    pub ordinal: u32,
    db: sled::Db,
    /// Events of one record each, as written before batches.
    pub tree: sled::Tree,
    pub batches: sled::Tree,
}

impl EventsDb {
    fn open(dir: &Path, ordinal: u32) -> Result<EventsDb, StoreError> {
        let db = sled::Config::new()
            .path(dir.join(format!("{ordinal:08}")))
            // The journal's flusher flushes it with the main database (group commit).
            .flush_every_ms(None)
            .cache_capacity(CACHE_BYTES)
            .open()?;
        let tree = db.open_tree("journal")?;
        let batches = db.open_tree("batches")?;
        Ok(EventsDb {
            ordinal,
            db,
            tree,
            batches,
        })
    }
}

/// The open events databases, oldest first; the last takes the appends.
#[derive(Clone)]
pub struct HotEvents {
    dir: PathBuf,
    open: Arc<RwLock<Vec<EventsDb>>>,
}

impl HotEvents {
    /// Opens every events database under `dir` (`<data>/events`), or a first one.
    /// `archived` says which ordinals the archive already holds: a directory left behind
    /// by a crash after its archive was written is removed.
    pub fn open(dir: &Path, archived: impl Fn(u32) -> bool) -> Result<HotEvents, StoreError> {
        std::fs::create_dir_all(dir).map_err(StoreError::io("creating the events directory"))?;
        let mut ordinals = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(StoreError::io("listing the events"))? {
            let entry = entry.map_err(StoreError::io("listing the events"))?;
            let Some(ordinal) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if archived(ordinal) {
                tracing::info!(ordinal, "events database already archived: removed");
                std::fs::remove_dir_all(entry.path())
                    .map_err(StoreError::io("removing an archived events database"))?;
            } else {
                ordinals.push(ordinal);
            }
        }
        ordinals.sort_unstable();
        if ordinals.is_empty() {
            ordinals.push(0);
        }
        let open = ordinals
            .into_iter()
            .map(|ordinal| EventsDb::open(dir, ordinal))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(HotEvents {
            dir: dir.to_path_buf(),
            open: Arc::new(RwLock::new(open)),
        })
    }

    /// The databases open now, oldest first.
    pub fn all(&self) -> Vec<EventsDb> {
        self.open.read().expect("not poisoned").clone()
    }

    /// The database that takes the appends.
    pub fn current(&self) -> EventsDb {
        self.open
            .read()
            .expect("not poisoned")
            .last()
            .expect("one at least")
            .clone()
    }

    /// Round start `ordinal` is written: what is appended after it goes to a new database.
    /// The one before is flushed first, as nothing more comes to it.
    pub fn switch(&self, ordinal: u32) -> Result<(), StoreError> {
        let current = self.current();
        if ordinal <= current.ordinal {
            return Ok(());
        }
        current.db.flush()?;
        let next = EventsDb::open(&self.dir, ordinal)?;
        self.open.write().expect("not poisoned").push(next);
        Ok(())
    }

    /// Makes every append durable. Returns the bytes written.
    pub fn flush(&self) -> Result<usize, StoreError> {
        Ok(self.current().db.flush()?)
    }

    /// Closes and removes database `ordinal` (its events are archived); never the current.
    pub fn remove(&self, ordinal: u32) -> Result<(), StoreError> {
        {
            let mut open = self.open.write().expect("not poisoned");
            if open.last().is_some_and(|db| db.ordinal == ordinal) {
                return Ok(());
            }
            open.retain(|db| db.ordinal != ordinal);
        }
        std::fs::remove_dir_all(self.dir.join(format!("{ordinal:08}")))
            .map_err(StoreError::io("removing an archived events database"))
    }
}
