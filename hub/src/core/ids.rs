//! What the hub's things are called: a board, a round, a node's event, an alert, a
//! decision, an e-board's hardware. Each a type of its own, serialized as the bare number or text it
//! wraps, so the API's JSON and the journal's bytes are what they were.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use super::time::HubMs;
pub use protocol::{BoardNo, NodeMs, Seq};

/// A map keyed by the hall's numbers (boards, alerts) and looked up at every event: hashed
/// with FxHash (rustc-hash), not std's SipHash, which took a twentieth of the hub's loop in
/// a saturated hall. The keys are small bounded numbers, not a stranger's strings: there is
/// no flood of one bucket to defend against.
pub type IdMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// Every board of a range of them (a zone's, a section's), in order.
pub fn boards_of(range: &std::ops::RangeInclusive<BoardNo>) -> impl Iterator<Item = BoardNo> {
    (range.start().0..=range.end().0).map(BoardNo)
}

/// An alert's number: from 1, one per alert of the hall, never reused.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct AlertId(pub u64);

/// An arbiter's decision's number: from 1, in the order taken.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct DecisionId(pub u64);

/// A round of the event: from 1. A board's games are told apart by their round.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct RoundNo(pub u16);

impl RoundNo {
    /// The first round.
    pub const FIRST: RoundNo = RoundNo(1);
    /// No event has more rounds than this (a round robin of 100 players twice over has 198):
    /// a round number from outside past it is refused.
    pub const MAX: RoundNo = RoundNo(999);

    /// `n` as a round number, if it is one (1 to [`RoundNo::MAX`]).
    pub fn new(n: u64) -> Option<RoundNo> {
        u16::try_from(n)
            .ok()
            .map(RoundNo)
            .filter(|r| r.0 >= 1 && *r <= RoundNo::MAX)
    }

    /// As an index from 1, for the pairing files' columns.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for RoundNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An e-board's hardware id as its node announces it (a DGT serial number, say).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HardwareId(pub String);

impl AlertId {
    #[must_use]
    pub fn next(self) -> AlertId {
        AlertId(self.0 + 1)
    }
}

impl DecisionId {
    #[must_use]
    pub fn next(self) -> DecisionId {
        DecisionId(self.0 + 1)
    }
}

impl fmt::Display for AlertId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for HardwareId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl HardwareId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for HardwareId {
    fn from(id: &str) -> HardwareId {
        HardwareId(id.to_owned())
    }
}
