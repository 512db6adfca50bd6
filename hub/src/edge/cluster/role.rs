//! The replica's role in a clustered hall, sans IO: standby, taking over, or active, with
//! its epoch and the stream's sequence its journal holds. Fed what the lease's reads and
//! renewals, the stream's records and the appends came to, and the time; it answers what
//! to do (take the lease, append after sequence N, read what came after, step down) and
//! when it next needs the time. The NATS code ([`super::journal`], [`super::lease`]) is
//! its driver, as the node's loop drives its `Delivery`; every view of "who is active"
//! (the standby's door, `/api/cluster`, `/healthz`, the page) reads [`Role::status`].
//!
//! The lease decides who *tries*: a standby takes it when it has seen it unchanged for
//! [`STALE_AFTER`] by its own clock (never the bucket's), and an active hub holds it only
//! while a renewal got through within [`HOLD_FOR`]. The stream's fence decides who *wins*:
//! every append expects the last sequence this hub knows, so once a takeover record is in,
//! a late writer's append is refused and it steps down.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How often the active hub renews the lease (and every hub looks at its role).
pub const RENEW_EVERY: Duration = Duration::from_millis(500);
/// A standby takes over a lease it has seen unchanged this long, by successful reads only:
/// while the bucket does not answer (a leader election, 4 to 9 s in NATS) nobody can renew
/// or take it, and the count starts again when it answers.
pub const STALE_AFTER: Duration = Duration::from_secs(3);
/// The active hub gives up a lease it could not renew this long after the last renewal
/// that got through. Longer than an election of the bucket's leader, so that a dead NATS
/// node does not make the active hub step down for nothing; a refused renewal (another hub
/// holds it) or a refused append steps it down at once, and the fence makes a late
/// step-down harmless.
pub const HOLD_FOR: Duration = Duration::from_secs(10);

/// Who holds the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The hub's name (`--hub-name`, else the host's name and the HTTP port).
    pub hub: String,
    /// Where its page and API answer.
    pub http: String,
    /// Counts the takeovers.
    pub epoch: u64,
}

/// The lease's entry as a read of the bucket found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseEntry {
    pub revision: u64,
    /// Who wrote it (`None`: not a holder this build reads).
    pub holder: Option<Holder>,
}

/// What to do after a look at the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseStep {
    /// Someone holds it (or it is not stale yet).
    Wait,
    /// Write `holder` into the lease if it is still at `revision` (`None`: absent).
    Take {
        revision: Option<u64>,
        holder: Holder,
    },
}

/// Whether a record of the stream opened with the hall's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sealed {
    /// One of the hall's hubs wrote it.
    Hall,
    /// It does not open: a stranger appended it.
    Stranger,
}

/// What follows records found after this hub's last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterOthers {
    /// Only strangers' records, skipped: append again, after the last of them.
    AppendAfter(u64),
    /// Taking over: another hub wrote after what was read; read that too and append again.
    ReadOn,
    /// Active: another hub wrote. This hub has stepped down.
    Fenced,
}

/// Why an active hub stepped down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepDown {
    /// Its renewals were refused, or none got through for [`HOLD_FOR`].
    LeaseLost,
    /// Another hub wrote the stream.
    Fenced,
}

/// An append this hub must not make: it does not hold the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Withheld;

/// The role's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Standby,
    /// The lease is this hub's from this epoch; the takeover record is not in yet.
    TakingOver(u64),
    /// This hub appends, from this epoch.
    Active(u64),
}

/// What the shell and its API see of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    pub active: bool,
    pub epoch: u64,
    /// The stream's sequence number this hub's journal holds up to.
    pub journal_seq: u64,
    /// The active hub as last seen (this one when active).
    pub holder: Option<Holder>,
    /// Appends this hub was refused by the fence.
    pub refused_appends: u64,
    /// Records of the stream this hub skipped: they do not open with the hall's key.
    pub strangers_records: u64,
}

/// A standby's view of the lease: the last revision seen, by whom, and since when.
#[derive(Debug, Clone)]
struct Watch {
    revision: Option<u64>,
    holder: Option<Holder>,
    since: Instant,
}

/// The lease held: when the last renewal that got through was sent, and whether another
/// hub took it.
#[derive(Debug, Clone, Copy)]
struct Held {
    sent: Instant,
    lost: bool,
}

/// The replica's role.
#[derive(Debug, Clone)]
pub struct Role {
    me: Holder,
    phase: Phase,
    watch: Watch,
    held: Held,
    applied: u64,
    refused_appends: u64,
    strangers_records: u64,
    /// Strangers' records that displaced this hub's appends, not told to the shell yet (a
    /// standby's shell writes nothing; the hub whose append they displaced tells).
    untold_strangers: Vec<u64>,
}

impl Role {
    /// A standby whose journal holds the stream up to `applied`.
    pub fn new(hub: String, http: String, applied: u64, now: Instant) -> Role {
        Role {
            me: Holder {
                hub,
                http,
                epoch: 0,
            },
            phase: Phase::Standby,
            watch: Watch {
                revision: None,
                holder: None,
                since: now,
            },
            held: Held {
                sent: now,
                lost: true,
            },
            applied,
            refused_appends: 0,
            strangers_records: 0,
            untold_strangers: Vec::new(),
        }
    }

    /// This hub, with the epoch it last held the lease in.
    pub fn me(&self) -> &Holder {
        &self.me
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The stream's sequence number the local journal holds up to.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The one answer to "who is active", of which every view is made.
    pub fn status(&self) -> Status {
        let active = matches!(self.phase, Phase::Active(_));
        Status {
            active,
            epoch: self.me.epoch,
            journal_seq: self.applied,
            holder: match self.phase {
                Phase::Standby => self.watch.holder.clone(),
                Phase::TakingOver(_) | Phase::Active(_) => Some(self.me.clone()),
            },
            refused_appends: self.refused_appends,
            strangers_records: self.strangers_records,
        }
    }

    /// When the role next needs the time: a standby when the lease it sees turns stale,
    /// a holder when its last renewal stops counting.
    pub fn poll_timeout(&self) -> Instant {
        match self.phase {
            Phase::Standby => self.watch.since + STALE_AFTER,
            Phase::TakingOver(_) | Phase::Active(_) => self.held.sent + HOLD_FOR,
        }
    }

    /// A standby's read of the lease (`None`: nobody holds it): take it when nobody does or
    /// it has not changed for [`STALE_AFTER`].
    pub fn handle_lease_read(&mut self, now: Instant, entry: Option<LeaseEntry>) -> LeaseStep {
        if self.phase != Phase::Standby {
            return LeaseStep::Wait;
        }
        let Some(entry) = entry else {
            return self.take(None, 1);
        };
        if self.watch.revision != Some(entry.revision) {
            self.watch = Watch {
                revision: Some(entry.revision),
                holder: entry.holder.clone(),
                since: now,
            };
        }
        if now.duration_since(self.watch.since) < STALE_AFTER {
            return LeaseStep::Wait;
        }
        let epoch = entry.holder.as_ref().map_or(0, |h| h.epoch) + 1;
        self.take(Some(entry.revision), epoch)
    }

    fn take(&self, revision: Option<u64>, epoch: u64) -> LeaseStep {
        LeaseStep::Take {
            revision,
            holder: Holder {
                epoch,
                ..self.me.clone()
            },
        }
    }

    /// The bucket did not answer: nobody can renew the lease meanwhile, so the standby's
    /// count starts again.
    pub fn handle_lease_unreadable(&mut self, now: Instant) {
        self.watch.since = now;
    }

    /// The lease is this hub's from `epoch`, written at `sent`: it reads the rest of the
    /// stream and appends its takeover record.
    pub fn handle_lease_taken(&mut self, sent: Instant, epoch: u64) {
        self.me.epoch = epoch;
        self.held = Held { sent, lost: false };
        self.phase = Phase::TakingOver(epoch);
    }

    /// A renewal sent at `sent` got through.
    pub fn handle_renewed(&mut self, sent: Instant) {
        self.held.sent = self.held.sent.max(sent);
    }

    /// A renewal was refused: another hub holds the lease.
    pub fn handle_renewal_refused(&mut self) {
        self.held.lost = true;
    }

    /// Whether this hub holds the lease by its own clock at `now`.
    pub fn holding(&self, now: Instant) -> bool {
        !matches!(self.phase, Phase::Standby)
            && !self.held.lost
            && now.duration_since(self.held.sent) < HOLD_FOR
    }

    /// A holder's look: it steps down once it no longer holds the lease.
    pub fn check(&mut self, now: Instant) -> Option<StepDown> {
        if matches!(self.phase, Phase::Standby) || self.holding(now) {
            return None;
        }
        self.step_down(now);
        Some(StepDown::LeaseLost)
    }

    /// A record of the stream, read in order, is in the local journal; a stranger's is
    /// skipped and counted (and told by the hub whose append it displaced). `false` for a record out of order (a tail that skipped: read
    /// again from [`Role::applied`]).
    pub fn handle_record(&mut self, seq: u64, sealed: Sealed) -> bool {
        if seq != self.applied + 1 {
            return false;
        }
        self.applied = seq;
        if sealed == Sealed::Stranger {
            self.strangers_records += 1;
        }
        true
    }

    /// The sequence an append must find last in the stream (the fence), or [`Withheld`]
    /// when this hub does not hold the lease at `now`.
    pub fn expected_last(&self, now: Instant) -> Result<u64, Withheld> {
        if self.holding(now) {
            Ok(self.applied)
        } else {
            Err(Withheld)
        }
    }

    /// The stream took this hub's append as `seq`: a taking-over hub is active from here
    /// (its epoch returned once).
    pub fn handle_appended(&mut self, seq: u64) -> Option<u64> {
        self.applied = seq;
        match self.phase {
            Phase::TakingOver(epoch) => {
                self.phase = Phase::Active(epoch);
                Some(epoch)
            }
            Phase::Standby | Phase::Active(_) => None,
        }
    }

    /// Records after this hub's last one: found when an append was refused, or by an
    /// active hub's look. Strangers' records only: skipped, and this hub appends after
    /// them. One of the hall's: the fence (a taking-over hub reads on).
    pub fn handle_others(&mut self, now: Instant, after: &[(u64, Sealed)]) -> AfterOthers {
        let hall = after.is_empty() || after.iter().any(|(_, s)| *s == Sealed::Hall);
        if !hall {
            for (seq, sealed) in after {
                if self.handle_record(*seq, *sealed) {
                    self.untold_strangers.push(*seq);
                }
            }
            return AfterOthers::AppendAfter(self.applied);
        }
        self.refused_appends += 1;
        match self.phase {
            Phase::TakingOver(_) => AfterOthers::ReadOn,
            Phase::Standby | Phase::Active(_) => {
                self.step_down(now);
                AfterOthers::Fenced
            }
        }
    }

    /// The strangers' records to tell the shell: an active hub's only.
    pub fn take_strangers(&mut self) -> Vec<u64> {
        match self.phase {
            Phase::Active(_) => std::mem::take(&mut self.untold_strangers),
            Phase::Standby | Phase::TakingOver(_) => Vec::new(),
        }
    }

    /// Back to standby: it renews no more and watches the lease afresh.
    pub fn step_down(&mut self, now: Instant) {
        self.phase = Phase::Standby;
        self.held.lost = true;
        self.watch = Watch {
            revision: None,
            holder: None,
            since: now,
        };
    }
}

#[cfg(test)]
mod tests;
