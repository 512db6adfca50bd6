//! Each phase of the role and the data it keeps: a standby's watch of the lease and its
//! tail's watchdog, the lease held while taking over, the active hub's batch in flight.

use std::time::Instant;

use super::{Holder, HOLD_FOR};

/// A standby's view of the lease: the last revision seen, by whom, and since when.
#[derive(Debug, Clone)]
pub(super) struct Watch {
    pub(super) revision: Option<u64>,
    pub(super) holder: Option<Holder>,
    pub(super) since: Instant,
}

/// The lease held: when the last renewal that got through was sent, and whether another
/// hub took it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    pub(super) sent: Instant,
    pub(super) lost: bool,
}

impl Held {
    pub(super) fn holding(&self, now: Instant) -> bool {
        now < self.expiry()
    }

    /// When the lease stops being this hub's by its own clock (at once when lost).
    pub(super) fn expiry(&self) -> Instant {
        if self.lost {
            self.sent
        } else {
            self.sent + HOLD_FOR
        }
    }
}

/// A standby: it tails the stream and watches the lease.
#[derive(Debug, Clone)]
pub(super) struct Standby {
    pub(super) watch: Watch,
    /// The tail's watchdog: what the journal held, and since when.
    pub(super) progress: (u64, Instant),
}

/// The lease is this hub's; the takeover record is not in yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct TakingOver {
    pub(super) epoch: u64,
    pub(super) held: Held,
    /// A read or an append failed: the stream is read again then, and the record
    /// appended.
    pub(super) retry_at: Option<Instant>,
}

/// This hub appends.
#[derive(Debug, Clone, Copy)]
pub(super) struct Active {
    pub(super) epoch: u64,
    pub(super) held: Held,
    /// The driver holds a batch of the core's writes until the stream takes it.
    pub(super) appending: bool,
    /// Counts the batches: the append's message id, the same for every try of one.
    pub(super) batch_no: u64,
    /// An append failed: it is tried again then.
    pub(super) retry_at: Option<Instant>,
    pub(super) leaders_at: Instant,
}

#[derive(Debug, Clone)]
pub(super) enum Phase {
    Standby(Standby),
    TakingOver(TakingOver),
    Active(Active),
}

impl Standby {
    pub(super) fn fresh(applied: u64, now: Instant) -> Standby {
        Standby {
            watch: Watch {
                revision: None,
                holder: None,
                since: now,
            },
            progress: (applied, now),
        }
    }
}
