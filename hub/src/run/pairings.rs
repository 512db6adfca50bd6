//! The pairings follow their files: the pairing program exports the next round's pairings
//! (and the results it was given) into the file the configuration names, and the hub reads
//! it again, when it changes and before a round starts, so one hub serves every round.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::{self, ConfigError};
use crate::pairings::Tournament;

/// The configuration file and the pairing files it names, as last read.
#[derive(Debug)]
pub(super) struct PairingFiles {
    config: PathBuf,
    /// Each file with its modification time and length when last read.
    seen: Vec<(PathBuf, Option<(SystemTime, u64)>)>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl PairingFiles {
    /// Follows `config` and what it names as it stands now.
    pub(super) fn new(config: PathBuf) -> PairingFiles {
        let mut files = PairingFiles {
            config,
            seen: Vec::new(),
        };
        if let Ok(read) = config::load(&files.config) {
            files.note(&read.pairing_files);
        }
        files
    }

    fn note(&mut self, pairing_files: &[PathBuf]) {
        self.seen = std::iter::once(self.config.clone())
            .chain(pairing_files.iter().cloned())
            .map(|path| {
                let stamp = stamp(&path);
                (path, stamp)
            })
            .collect();
    }

    /// Whether a file changed since it was last read.
    pub(super) fn changed(&self) -> bool {
        self.seen.iter().any(|(path, seen)| stamp(path) != *seen)
    }

    /// The rounds and TRFs as the files give them now.
    pub(super) fn read(&mut self) -> Result<Tournament, ConfigError> {
        let read = config::load(&self.config)?;
        self.note(&read.pairing_files);
        Ok(read.tournament)
    }
}
