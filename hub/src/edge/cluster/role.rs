//! The replica's role in a clustered hall, sans IO: standby, taking over, or active, with
//! its epoch and the stream's sequence its journal holds. Fed what the lease's reads and
//! renewals, the stream's records and the appends came to, and the time; it queues what to
//! do ([`Action`]: take the lease at revision R, append after sequence N, read what came
//! after, tell the shell, step down), drained in order by [`Role::poll_action`], and says
//! when it next needs the time ([`Role::poll_timeout`]): the standby's look at the lease,
//! the tail's watchdog, a retry's pace, the leaders' look. Its driver
//! ([`super::journal`]) does the IO and decides nothing, as quinn's endpoint drives a
//! `Connection`; every view of "who is active" (the standby's door, `/api/cluster`,
//! `/healthz`, the page) reads [`Role::status`].
//!
//! The lease decides who *tries*: a standby takes it when it has seen it unchanged for
//! [`STALE_AFTER`] by its own clock (never the bucket's), and an active hub holds it only
//! while a renewal got through within [`HOLD_FOR`]. The stream's fence decides who *wins*:
//! every append expects the last sequence this hub knows, so once a takeover record is in,
//! a late writer's append is refused and it steps down.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod action;
mod phase;

pub use action::{Action, Appending, ClusterNews, Note, StepDown};
use phase::{Active, Held, Phase, Standby, TakingOver, Watch};

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
/// A standby's tail that has not advanced this long is made anew if the stream has more.
pub const TAIL_STALLED: Duration = Duration::from_secs(2);
/// How soon a failed append, or a failed read an append waits on, is tried again.
pub const RETRY_AFTER: Duration = Duration::from_millis(100);
/// How often the active hub looks where the streams' leaders are.
pub const LEADERS_EVERY: Duration = Duration::from_secs(10);

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

/// Whether a record of the stream opened with the hall's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sealed {
    /// One of the hall's hubs wrote it.
    Hall,
    /// It does not open: a stranger appended it.
    Stranger,
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

/// The replica's role.
#[derive(Debug, Clone)]
pub struct Role {
    me: Holder,
    phase: Phase,
    /// The stream's sequence number the local journal holds up to.
    applied: u64,
    /// The next look: at the lease (a standby) or at the renewals and the stream (a holder).
    look_at: Instant,
    refused_appends: u64,
    strangers_records: u64,
    /// Strangers' records that displaced this hub's appends, not told to the shell yet (a
    /// standby's shell writes nothing; the hub whose append they displaced tells).
    untold_strangers: Vec<u64>,
    actions: VecDeque<Action>,
}

impl Role {
    /// A standby whose journal holds the stream up to `applied`: it tells the shell so and
    /// tails the stream from there.
    pub fn new(hub: String, http: String, applied: u64, now: Instant) -> Role {
        let mut role = Role {
            me: Holder {
                hub,
                http,
                epoch: 0,
            },
            phase: Phase::Standby(Standby::fresh(applied, now)),
            applied,
            look_at: now,
            refused_appends: 0,
            strangers_records: 0,
            untold_strangers: Vec::new(),
            actions: VecDeque::new(),
        };
        role.act(Action::Tell(ClusterNews::Standby(None)));
        role.act(Action::Tail { from: applied + 1 });
        role
    }

    /// This hub, with the epoch it last held the lease in.
    pub fn me(&self) -> &Holder {
        &self.me
    }

    /// The stream's sequence number the local journal holds up to.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The one answer to "who is active", of which every view is made.
    pub fn status(&self) -> Status {
        Status {
            active: matches!(self.phase, Phase::Active(_)),
            epoch: self.me.epoch,
            journal_seq: self.applied,
            holder: match &self.phase {
                Phase::Standby(standby) => standby.watch.holder.clone(),
                Phase::TakingOver(_) | Phase::Active(_) => Some(self.me.clone()),
            },
            refused_appends: self.refused_appends,
            strangers_records: self.strangers_records,
        }
    }

    /// The next thing to do, in the order the role decided them.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When the role next needs the time ([`Role::handle_timeout`]): the next look, a
    /// retry, the leaders' look, and a holder's lease running out by its own clock.
    pub fn poll_timeout(&self) -> Instant {
        let (expiry, retry, leaders) = match &self.phase {
            Phase::Standby(_) => (None, None, None),
            Phase::TakingOver(taking) => (Some(taking.held.expiry()), taking.retry_at, None),
            Phase::Active(active) => (
                Some(active.held.expiry()),
                active.retry_at,
                Some(active.leaders_at),
            ),
        };
        [Some(self.look_at), expiry, retry, leaders]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.look_at)
    }

    /// Whether the driver takes the core's writes now: active, with no batch in flight.
    pub fn takes_writes(&self) -> bool {
        matches!(
            self.phase,
            Phase::Active(Active {
                appending: false,
                ..
            })
        )
    }

    /// The time came for what [`Role::poll_timeout`] asked (or the driver woke for
    /// something else: nothing is due then).
    pub fn handle_timeout(&mut self, now: Instant) {
        if !self.holding(now) {
            match self.phase {
                Phase::Active(_) => self.step_down(now, StepDown::LeaseLost),
                Phase::TakingOver(_) => self.give_up(now),
                Phase::Standby(_) => {}
            }
        }
        if now >= self.look_at {
            self.look_at = now + RENEW_EVERY;
            self.look(now);
        }
        let retry = match &mut self.phase {
            Phase::Standby(_) => None,
            Phase::TakingOver(TakingOver { retry_at, .. })
            | Phase::Active(Active { retry_at, .. }) => retry_at.take_if(|at| now >= *at),
        };
        if retry.is_some() {
            match self.phase {
                Phase::TakingOver(_) => self.read_on(now),
                Phase::Active(_) => self.append_writes(now),
                Phase::Standby(_) => {}
            }
        }
        if let Phase::Active(active) = &mut self.phase {
            if now >= active.leaders_at {
                active.leaders_at = now + LEADERS_EVERY;
                self.act(Action::KeepLeadersOff);
            }
        }
    }

    /// Every [`RENEW_EVERY`]: a standby reads the lease and minds its tail; an active hub
    /// looks for records it did not write.
    fn look(&mut self, now: Instant) {
        let applied = self.applied;
        match &mut self.phase {
            Phase::Standby(standby) => {
                self.actions.push_back(Action::ReadLease);
                if standby.progress.0 != applied {
                    standby.progress = (applied, now);
                } else if now.saturating_duration_since(standby.progress.1) > TAIL_STALLED {
                    standby.progress.1 = now;
                    self.actions.push_back(Action::ReadLastSeq);
                }
            }
            Phase::TakingOver(_) => {}
            Phase::Active(_) => self.act(Action::ReadLastSeq),
        }
    }

    /// A standby's read of the lease (`None`: nobody holds it): it takes it when nobody
    /// does or it has not changed for [`STALE_AFTER`] by this hub's clock.
    pub fn handle_lease_read(&mut self, now: Instant, entry: Option<LeaseEntry>) {
        let Phase::Standby(standby) = &mut self.phase else {
            return;
        };
        let Some(entry) = entry else {
            self.take(None, 1);
            return;
        };
        let watch = &mut standby.watch;
        if watch.revision != Some(entry.revision) {
            *watch = Watch {
                revision: Some(entry.revision),
                holder: entry.holder.clone(),
                since: now,
            };
        }
        if now.saturating_duration_since(watch.since) >= STALE_AFTER {
            let epoch = entry.holder.as_ref().map_or(0, |h| h.epoch) + 1;
            self.take(Some(entry.revision), epoch);
        }
    }

    fn take(&mut self, revision: Option<u64>, epoch: u64) {
        let holder = Holder {
            epoch,
            ..self.me.clone()
        };
        self.act(Action::TakeLease { revision, holder });
    }

    /// The bucket did not answer: nobody can renew the lease meanwhile, so the standby's
    /// count starts again.
    pub fn handle_lease_unreadable(&mut self, now: Instant) {
        if let Phase::Standby(standby) = &mut self.phase {
            standby.watch.since = now;
        }
    }

    /// The lease is this hub's from `epoch`, written at `sent`: it reads the rest of the
    /// stream and appends its takeover record.
    pub fn handle_lease_taken(&mut self, sent: Instant, epoch: u64) {
        if !matches!(self.phase, Phase::Standby(_)) {
            return;
        }
        self.me.epoch = epoch;
        self.phase = Phase::TakingOver(TakingOver {
            epoch,
            held: Held { sent, lost: false },
            retry_at: None,
        });
        self.act(Action::DropTail);
        self.act(Action::CatchUp {
            from: self.applied + 1,
        });
    }

    /// A renewal sent at `sent` got through.
    pub fn handle_renewed(&mut self, sent: Instant) {
        if let Some(held) = self.held_mut() {
            held.sent = held.sent.max(sent);
        }
    }

    /// A renewal was refused: another hub holds the lease.
    pub fn handle_renewal_refused(&mut self) {
        if let Some(held) = self.held_mut() {
            held.lost = true;
        }
    }

    fn held_mut(&mut self) -> Option<&mut Held> {
        match &mut self.phase {
            Phase::Standby(_) => None,
            Phase::TakingOver(TakingOver { held, .. }) | Phase::Active(Active { held, .. }) => {
                Some(held)
            }
        }
    }

    /// Whether this hub holds the lease by its own clock at `now`.
    pub fn holding(&self, now: Instant) -> bool {
        match &self.phase {
            Phase::Standby(_) => false,
            Phase::TakingOver(TakingOver { held, .. }) | Phase::Active(Active { held, .. }) => {
                held.holding(now)
            }
        }
    }

    /// A record of the stream, read in order: `true` when it goes into the local journal
    /// (its writes, none for a stranger's, which is counted). A standby's tail that skipped
    /// is made anew; a record already held is ignored.
    pub fn handle_record(&mut self, seq: u64, sealed: Sealed) -> bool {
        if seq != self.applied + 1 {
            if seq > self.applied + 1 && matches!(self.phase, Phase::Standby(_)) {
                let applied = self.applied;
                self.act(Action::Note(Note::TailSkipped { seq, applied }));
                self.act(Action::Tail { from: applied + 1 });
            }
            return false;
        }
        self.applied = seq;
        if sealed == Sealed::Stranger {
            self.strangers_records += 1;
        }
        true
    }

    /// The standby's tail ended: it is made anew.
    pub fn handle_tail_ended(&mut self) {
        if matches!(self.phase, Phase::Standby(_)) {
            self.act(Action::Tail {
                from: self.applied + 1,
            });
        }
    }

    /// The stream's last sequence: a standby whose tail stalled makes it anew; an active
    /// hub reads what came after its last record.
    pub fn handle_last_seq(&mut self, last: u64) {
        if last <= self.applied {
            return;
        }
        let applied = self.applied;
        match &self.phase {
            Phase::Standby(_) => {
                self.act(Action::Note(Note::TailStalled { applied }));
                self.act(Action::Tail { from: applied + 1 });
            }
            Phase::Active(Active {
                appending: false, ..
            }) => self.act(Action::ReadAfter(applied)),
            Phase::TakingOver(_) | Phase::Active(_) => {}
        }
    }

    /// A read of the stream ([`Action::ReadLastSeq`], [`Action::ReadAfter`]) failed: what
    /// waits on it is tried again in a moment.
    pub fn handle_read_failed(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::TakingOver(taking) => taking.retry_at = Some(now + RETRY_AFTER),
            Phase::Active(active) if active.appending => active.retry_at = Some(now + RETRY_AFTER),
            Phase::Standby(_) | Phase::Active(_) => {}
        }
    }

    /// Reading the rest of the stream failed: a taking-over hub reads again in a while.
    pub fn handle_catch_up_failed(&mut self, now: Instant) {
        if let Phase::TakingOver(taking) = &mut self.phase {
            taking.retry_at = Some(now + RENEW_EVERY);
        }
    }

    /// The stream is read to its end: a taking-over hub still holding the lease appends its
    /// takeover record.
    pub fn handle_caught_up(&mut self, now: Instant) {
        let Phase::TakingOver(taking) = &self.phase else {
            return;
        };
        if !taking.held.holding(now) {
            self.give_up(now);
            return;
        }
        let epoch = taking.epoch;
        self.act(Action::Append {
            expected: self.applied,
            id: format!("takeover-{epoch}"),
            record: Appending::Takeover(epoch),
        });
    }

    /// The core has writes for the stream: an active hub holding the lease appends them, one
    /// that no longer holds it steps down (nothing is appended, nothing acknowledged).
    pub fn handle_writes(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::Active(active) if !active.appending => {
                active.appending = true;
                active.batch_no += 1;
                self.append_writes(now);
            }
            Phase::Active(_) => {}
            Phase::Standby(_) | Phase::TakingOver(_) => self.act(Action::DropWrites),
        }
    }

    /// The batch held is appended after this hub's last record, or withheld.
    fn append_writes(&mut self, now: Instant) {
        let Phase::Active(active) = &self.phase else {
            return;
        };
        if !active.held.holding(now) {
            self.act(Action::Note(Note::Withheld));
            self.step_down(now, StepDown::LeaseLost);
            return;
        }
        let id = format!("{}-{}-{}", self.me.hub, active.epoch, active.batch_no);
        self.act(Action::Append {
            expected: self.applied,
            id,
            record: Appending::Writes,
        });
    }

    /// The stream took this hub's append as `seq`: a taking-over hub is active from here.
    pub fn handle_appended(&mut self, now: Instant, seq: u64) {
        self.applied = seq;
        match &mut self.phase {
            Phase::TakingOver(taking) => {
                let TakingOver { epoch, held, .. } = *taking;
                self.phase = Phase::Active(Active {
                    epoch,
                    held,
                    appending: false,
                    batch_no: 0,
                    retry_at: None,
                    // Not at once: a leader that steps down holds appends up for a moment,
                    // which the first moments of a takeover do not need.
                    leaders_at: now + LEADERS_EVERY,
                });
                self.act(Action::Sync);
                // Writes a core of this hub's last active time handed on after it stepped
                // down: the core is built anew from the journal.
                self.act(Action::DropWrites);
                self.act(Action::Note(Note::Active { epoch, seq }));
                self.act(Action::Tell(ClusterNews::Active(epoch)));
                self.tell_strangers();
            }
            Phase::Active(active) => active.appending = false,
            Phase::Standby(_) => {}
        }
    }

    /// The stream refused an append: a record came after this hub's last one. It reads what.
    pub fn handle_append_refused(&mut self) {
        self.act(Action::ReadAfter(self.applied));
    }

    /// An append got no answer: it is tried again in a moment, while this hub holds the
    /// lease.
    pub fn handle_append_failed(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::TakingOver(taking) => taking.retry_at = Some(now + RETRY_AFTER),
            Phase::Active(active) => active.retry_at = Some(now + RETRY_AFTER),
            Phase::Standby(_) => {}
        }
    }

    /// The records after this hub's last one, found when an append was refused or by an
    /// active hub's look. Strangers' records only: skipped, and this hub appends after
    /// them. One of the hall's: the fence (a taking-over hub reads on, an active one steps
    /// down).
    pub fn handle_others(&mut self, now: Instant, after: &[(u64, Sealed)]) {
        let hall = after.is_empty() || after.iter().any(|(_, s)| *s == Sealed::Hall);
        if hall {
            self.refused_appends += 1;
            match self.phase {
                Phase::TakingOver(_) => {
                    self.act(Action::Note(Note::ReadOn));
                    self.read_on(now);
                }
                Phase::Active(_) => {
                    self.act(Action::Note(Note::Fenced));
                    self.step_down(now, StepDown::Fenced);
                }
                Phase::Standby(_) => {}
            }
            return;
        }
        for (seq, sealed) in after {
            if self.handle_record(*seq, *sealed) {
                self.untold_strangers.push(*seq);
                self.act(Action::Skip(*seq));
            }
        }
        match &self.phase {
            Phase::TakingOver(_) => self.handle_caught_up(now),
            Phase::Active(active) => {
                if active.appending {
                    self.append_writes(now);
                }
                self.tell_strangers();
            }
            Phase::Standby(_) => {}
        }
    }

    /// A taking-over hub reads the stream to its end again (then appends), while it holds
    /// the lease.
    fn read_on(&mut self, now: Instant) {
        if self.holding(now) {
            self.act(Action::CatchUp {
                from: self.applied + 1,
            });
        } else {
            self.give_up(now);
        }
    }

    /// Tells the shell of the strangers' records found (an active hub's: a standby's shell
    /// writes nothing).
    fn tell_strangers(&mut self) {
        if matches!(self.phase, Phase::Active(_)) && !self.untold_strangers.is_empty() {
            let seqs = std::mem::take(&mut self.untold_strangers);
            self.act(Action::Tell(ClusterNews::StrangersRecords(seqs)));
        }
    }

    /// An active hub steps down: it renews no more, drops what it did not append, tells the
    /// shell and watches the lease afresh.
    fn step_down(&mut self, now: Instant, why: StepDown) {
        self.act(Action::Note(Note::SteppedDown(why)));
        self.act(Action::DropWrites);
        self.act(Action::Tell(ClusterNews::Standby(None)));
        self.give_up(now);
    }

    /// Back to standby: the lease given up, the stream tailed again, the lease looked at
    /// at once.
    fn give_up(&mut self, now: Instant) {
        self.phase = Phase::Standby(Standby::fresh(self.applied, now));
        self.look_at = now;
        self.act(Action::GiveUpLease);
        self.act(Action::Tail {
            from: self.applied + 1,
        });
    }

    fn act(&mut self, action: Action) {
        self.actions.push_back(action);
    }
}

#[cfg(test)]
mod tests;
