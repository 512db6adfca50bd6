//! What goes wrong with the journal on disk: sled, a record this build cannot read, the
//! events directory or a round's archive.

use protocol::{BoardNo, Seq};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// sled could not open, write or flush the database.
    #[error("journal database: {0}")]
    Sled(#[from] sled::Error),
    /// A stored record is not one this build can read (damaged, or another format).
    #[error("journal record {board}/{seq} is unreadable: {why}")]
    Unreadable {
        board: BoardNo,
        seq: Seq,
        why: String,
    },
    /// A stored decision is not one this build can read.
    #[error("decision {id} is unreadable: {why}")]
    UnreadableDecision { id: u64, why: String },
    /// A stored alert is not one this build can read.
    #[error("alert {id} is unreadable: {why}")]
    UnreadableAlert { id: u64, why: String },
    /// A stored round start is not one this build can read.
    #[error("round start {id} is unreadable: {why}")]
    UnreadableRound { id: u64, why: String },
    /// A stored game of a finished round is not one this build can read.
    #[error("archived game {id:#010x} (round, board) is unreadable: {why}")]
    UnreadableGame { id: u64, why: String },
    /// A stored arbiter's enrolment is not one this build can read.
    #[error("enrolled arbiter {name:?} is unreadable: {why}")]
    UnreadableArbiter { name: String, why: String },
    /// A batch of events whose framing is broken: its events after the break are lost.
    #[error("journal batch {batch} is unreadable: {why}")]
    UnreadableBatch { batch: u64, why: String },
    /// A stored key does not have the journal's layout.
    #[error("journal key of {0} bytes, not the layout of its tree")]
    BadKey(usize),
    /// The events directory or the round archive could not be read or written.
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    /// A round's archive is not one this build can read (damaged, or another format).
    #[error("round archive: {0}")]
    Archive(String),
}

impl StoreError {
    /// An IO error, with what was being done.
    pub(crate) fn io(what: &'static str) -> impl Fn(std::io::Error) -> StoreError {
        move |source| StoreError::Io { what, source }
    }
}
