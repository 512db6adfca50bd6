//! What the hub's things are called: a board, a node's event, an alert, a decision, an
//! e-board's hardware. Each a type of its own, serialized as the bare number or text it
//! wraps, so the API's JSON and the journal's bytes are what they were.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use super::time::HubMs;
pub use protocol::{BoardNo, NodeMs, Seq};

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
