//! What the role asks of its driver, and what it tells: the IO to do next, in order, each
//! result fed back to the role before the next is taken; the news for the shell; the notes
//! the driver logs and counts. The driver decides none of it.

use super::Holder;

/// One thing for the driver to do. The role queues them; [`super::Role::poll_action`]
/// hands them out in order.
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Read the lease: [`super::Role::handle_lease_read`], or
    /// [`super::Role::handle_lease_unreadable`].
    ReadLease,
    /// Write `holder` into the lease if it is still at `revision` (`None`: absent), and
    /// renew it from then on: [`super::Role::handle_lease_taken`] when it was written.
    TakeLease {
        revision: Option<u64>,
        holder: Holder,
    },
    /// Renew the lease no more.
    GiveUpLease,
    /// Tail the stream from this sequence, every record to [`super::Role::handle_record`]
    /// (and [`super::Role::handle_tail_ended`] when the tail ends).
    Tail { from: u64 },
    /// Tail no more.
    DropTail,
    /// Read the stream's last sequence: [`super::Role::handle_last_seq`].
    ReadLastSeq,
    /// Read the stream from this sequence to its end now, every record to
    /// [`super::Role::handle_record`], then [`super::Role::handle_caught_up`].
    CatchUp { from: u64 },
    /// Read the records after this sequence, each sealed by the hall or not:
    /// [`super::Role::handle_others`].
    ReadAfter(u64),
    /// Append, expecting the stream's last record to be `expected` (the fence), under
    /// this message id (the stream takes one id once): [`super::Role::handle_appended`],
    /// [`super::Role::handle_append_refused`] or [`super::Role::handle_append_failed`].
    Append {
        expected: u64,
        id: String,
        record: Appending,
    },
    /// A stranger's record, after this hub's last one, is skipped: the local journal holds
    /// the stream up to it.
    Skip(u64),
    /// Make everything handed to the local journal durable before going on: the core is
    /// built from it.
    Sync,
    /// The core's writes waiting to be appended are dropped: they were never acknowledged,
    /// and the nodes resend them to whichever hub is active.
    DropWrites,
    /// Ask the streams' leaders on this hub's server to move.
    KeepLeadersOff,
    /// Tell the shell.
    Tell(ClusterNews),
    /// Log (and count) what happened.
    Note(Note),
}

/// What an append carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appending {
    /// This hub's takeover record, of this epoch: it fences every earlier writer.
    Takeover(u64),
    /// The core's writes the driver holds (the same batch until it is taken).
    Writes,
}

/// What the role tells the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterNews {
    /// This hub is a standby; the active hub, as last seen.
    Standby(Option<Holder>),
    /// This hub is active from this epoch: its journal holds the whole stream.
    Active(u64),
    /// The active hub found these records of the stream not sealed by the hall's hubs (a
    /// stranger appended them) and skipped them.
    StrangersRecords(Vec<u64>),
}

/// What the driver logs, and counts where a metric counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The tail skipped a record; it is made anew.
    TailSkipped { seq: u64, applied: u64 },
    /// The tail stopped while the stream went on; it is made anew.
    TailStalled { applied: u64 },
    /// Another hub wrote after what this hub read while it took over: it reads on.
    ReadOn,
    /// Another hub wrote the stream: this hub is fenced.
    Fenced,
    /// An append this hub no longer holds the lease for.
    Withheld,
    /// This hub is active from this epoch, its takeover record at `seq`.
    Active { epoch: u64, seq: u64 },
    /// This hub stepped down.
    SteppedDown(StepDown),
}

/// Why an active hub stepped down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepDown {
    /// Its renewals were refused, or none got through for [`super::HOLD_FOR`].
    LeaseLost,
    /// Another hub wrote the stream.
    Fenced,
}
