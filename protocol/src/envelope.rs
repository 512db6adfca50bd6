//! The envelope every message travels in.

use serde::{Deserialize, Serialize};

use crate::{DownlinkBody, UplinkBody};

/// The layout of [`Uplink`] and [`Downlink`] that this crate reads and writes.
///
/// A receiver reads the version first and rejects a message of another version before it
/// looks at the body (see [`crate::codec`]).
///
/// Version 2 added the tag after each message on the wire ([`crate::seal`]); the layout of
/// the messages themselves is version 1's. Version 3 binds downlinks to the node's boot: an
/// uplink frame carries the boot before its tag, a downlink's tag covers it; the messages'
/// layout is unchanged, and messages of version 2 (a journal's) still decode
/// ([`OLDEST_READ_VERSION`]).
pub const PROTOCOL_VERSION: u16 = 3;

/// The oldest version whose messages decode: their layout is this version's.
pub const OLDEST_READ_VERSION: u16 = 2;

/// A board's number in the hall, as on the pairing list (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BoardNo(pub u16);

impl BoardNo {
    /// The highest board number of a hall: the largest events play 2,000 boards, side events
    /// numbered from 1001 or 5001 included. Every board costs the hub its state and an alert
    /// when its node falls silent, so a message for board 0 or past this one is refused when
    /// decoded ([`crate::DecodeError::OutOfRange`]).
    pub const MAX: BoardNo = BoardNo(10_000);
}

impl core::fmt::Display for BoardNo {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

/// A node's sequence number for one event: starts at 1, strictly increasing, and survives
/// restarts of the node (it is kept in the node's outbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Seq(pub u64);

impl core::fmt::Display for Seq {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

impl Seq {
    /// The first sequence number a node ever uses.
    pub const FIRST: Seq = Seq(1);

    /// No sequence number reaches this: a node numbering an event a millisecond would take
    /// 8,900 years, and arithmetic on numbers below it cannot overflow. A message with a
    /// higher one is refused when decoded ([`crate::DecodeError::OutOfRange`]).
    pub const LIMIT: Seq = Seq(1 << 48);

    /// The sequence number after this one.
    #[must_use]
    pub fn next(self) -> Seq {
        Seq(self.0 + 1)
    }
}

/// The node's own clock in milliseconds since the Unix epoch. Differences between two of one
/// node's timestamps measure think time; they are never compared with the hub's clock.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct NodeMs(pub u64);

impl NodeMs {
    /// No node's clock reaches this (the year 10889 in Unix milliseconds): times below it
    /// can have any duration of a game added without overflow. A message with a later time
    /// is refused when decoded ([`crate::DecodeError::OutOfRange`]).
    pub const LIMIT: NodeMs = NodeMs(1 << 48);
}

/// One event from a board node to the hub.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Uplink {
    /// Always [`PROTOCOL_VERSION`] when built by this crate.
    pub version: u16,
    pub board: BoardNo,
    pub seq: Seq,
    pub node_ms: NodeMs,
    pub body: UplinkBody,
}

impl Uplink {
    pub fn new(board: BoardNo, seq: Seq, node_ms: NodeMs, body: UplinkBody) -> Uplink {
        Uplink {
            version: PROTOCOL_VERSION,
            board,
            seq,
            node_ms,
            body,
        }
    }
}

/// One message from the hub to a board node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Downlink {
    /// Always [`PROTOCOL_VERSION`] when built by this crate.
    pub version: u16,
    pub board: BoardNo,
    pub body: DownlinkBody,
}

impl Downlink {
    pub fn new(board: BoardNo, body: DownlinkBody) -> Downlink {
        Downlink {
            version: PROTOCOL_VERSION,
            board,
            body,
        }
    }
}
