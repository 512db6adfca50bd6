//! What the hub tells a board node.

use serde::{Deserialize, Serialize};

use crate::Seq;

/// The body of a [`crate::Downlink`]. Variants are only ever appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DownlinkBody {
    /// The hub's journal holds every event of this board up to and including `up_to_seq`
    /// durably (flushed): the node may forget them.
    Ack { up_to_seq: Seq },
    /// The hub has a gap: send everything from `seq` on again.
    ResendFrom { seq: Seq },
    /// The hub holds this board's events up to `seq - 1` from another node (this one
    /// replaced it, or lost its outbox): number every unacknowledged event from `seq` on and
    /// send them again, so the game continues where it stands.
    ContinueAt { seq: Seq },
}
