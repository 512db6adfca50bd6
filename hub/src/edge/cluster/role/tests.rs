//! The role on simulated time, hubs sharing a stream with NATS's fence (an append names the
//! last sequence it expects, and the stream refuses it otherwise) and a lease bucket
//! written by revision, as quinn-proto tests a connection with a `Pair`: each hub's actions
//! are carried out at once against the shared world. The driver itself is tested over
//! in-memory ports in `journal/tests.rs`; the real-NATS process tests (`standby_hub`,
//! `cluster_fence`) stay the acceptance tests.

use super::*;

/// The journal stream as NATS keeps it (who sealed each record, in order) and the lease.
#[derive(Default)]
struct World {
    records: Vec<Sealed>,
    lease: Option<LeaseEntry>,
    revisions: u64,
}

impl World {
    fn last(&self) -> u64 {
        self.records.len() as u64
    }

    /// A stranger with a NATS login appends whatever it likes.
    fn forge(&mut self) -> u64 {
        self.records.push(Sealed::Stranger);
        self.last()
    }

    fn after(&self, seq: u64) -> Vec<(u64, Sealed)> {
        (seq + 1..=self.last())
            .map(|s| (s, self.records[s as usize - 1]))
            .collect()
    }

    /// Writes the lease by revision, as the bucket does.
    fn write_lease(&mut self, revision: Option<u64>, holder: Holder) -> bool {
        if self.lease.as_ref().map(|e| e.revision) != revision {
            return false;
        }
        self.revisions += 1;
        self.lease = Some(LeaseEntry {
            revision: self.revisions,
            holder: Some(holder),
        });
        true
    }
}

/// A hub's role, its actions carried out against the world.
struct Hub {
    role: Role,
    news: Vec<ClusterNews>,
    notes: Vec<Note>,
    /// Where its tail stands (`None`: no tail).
    tail: Option<u64>,
    /// The lease revision its renewals write.
    renewing: Option<u64>,
}

impl Hub {
    fn new(name: &str, t0: Instant) -> Hub {
        let mut hub = Hub {
            role: Role::new(name.into(), format!("{name}:8080"), 0, t0),
            news: Vec::new(),
            notes: Vec::new(),
            tail: None,
            renewing: None,
        };
        hub.drive(t0, &mut World::default());
        hub
    }

    /// Carries out every action the role asks for, at `now`.
    fn drive(&mut self, now: Instant, world: &mut World) {
        while let Some(action) = self.role.poll_action() {
            match action {
                Action::ReadLease => self.role.handle_lease_read(now, world.lease.clone()),
                Action::TakeLease { revision, holder } => {
                    let epoch = holder.epoch;
                    if world.write_lease(revision, holder) {
                        self.renewing = Some(world.revisions);
                        self.role.handle_lease_taken(now, epoch);
                    }
                }
                Action::GiveUpLease => self.renewing = None,
                Action::Tail { from } => self.tail = Some(from),
                Action::DropTail => self.tail = None,
                Action::ReadLastSeq => self.role.handle_last_seq(world.last()),
                Action::CatchUp { from } => {
                    for (seq, sealed) in world.after(from - 1) {
                        self.role.handle_record(seq, sealed);
                    }
                    self.role.handle_caught_up(now);
                }
                Action::ReadAfter(seq) => self.role.handle_others(now, &world.after(seq)),
                Action::Append { expected, .. } => {
                    if expected == world.last() {
                        world.records.push(Sealed::Hall);
                        self.role.handle_appended(now, world.last());
                    } else {
                        self.role.handle_append_refused();
                    }
                }
                Action::Tell(news) => self.news.push(news),
                Action::Note(note) => self.notes.push(note),
                Action::Skip(_) | Action::Sync | Action::DropWrites | Action::KeepLeadersOff => {}
            }
        }
    }

    /// The time passes to `now`, the hub woken at every timeout of its role on the way,
    /// as its driver wakes.
    fn at(&mut self, now: Instant, world: &mut World) {
        while self.role.poll_timeout() <= now {
            let due = self.role.poll_timeout();
            self.role.handle_timeout(due);
            self.drive(due, world);
        }
    }

    /// Its tail delivers what the stream holds, at `now`.
    fn tail(&mut self, now: Instant, world: &mut World) {
        if let Some(from) = self.tail {
            for (seq, sealed) in world.after(from - 1) {
                self.role.handle_record(seq, sealed);
                self.tail = Some(seq + 1);
            }
        }
        self.drive(now, world);
    }

    /// A renewal at `now`: through if the lease is still at the revision it renews.
    fn renew(&mut self, now: Instant, world: &mut World) {
        let Some(revision) = self.renewing else {
            return;
        };
        let holder = self.role.me().clone();
        if world.write_lease(Some(revision), holder) {
            self.renewing = Some(world.revisions);
            self.role.handle_renewed(now);
        } else {
            self.role.handle_renewal_refused();
        }
    }

    /// The core hands writes over at `now`; the append's outcome is the world's.
    fn write(&mut self, now: Instant, world: &mut World) {
        assert!(
            self.role.takes_writes(),
            "an active hub with no batch in flight"
        );
        self.role.handle_writes(now);
        self.drive(now, world);
    }

    /// Takes the lease from the world at `now`, nobody holding it: active at once.
    fn take_over(&mut self, now: Instant, world: &mut World) -> u64 {
        self.at(now, world);
        assert!(self.role.status().active, "{:?}", self.notes);
        self.role.me().epoch
    }
}

fn at(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

fn a_holder(epoch: u64) -> Option<LeaseEntry> {
    Some(LeaseEntry {
        revision: epoch * 100,
        holder: Some(Holder {
            hub: "hub-a".into(),
            http: "a:8080".into(),
            epoch,
        }),
    })
}

#[test]
fn a_lease_unchanged_for_its_time_is_taken_and_not_a_moment_before() {
    let t0 = Instant::now();
    let mut world = World {
        lease: a_holder(4),
        ..World::default()
    };
    let mut b = Hub::new("hub-b", t0);
    b.at(at(t0, 2_999), &mut world);
    assert_eq!(
        b.role.status().holder,
        a_holder(4).unwrap().holder,
        "a standby names the holder"
    );
    assert_eq!(
        b.role.poll_timeout(),
        at(t0, 3_000),
        "it looks every 500 ms"
    );
    // A renewal (a new revision) starts the count again.
    world.lease.as_mut().unwrap().revision = 401;
    b.at(at(t0, 4_999), &mut world);
    // So does a bucket that does not answer: nobody could renew meanwhile.
    b.role.handle_lease_unreadable(at(t0, 5_000));
    b.at(at(t0, 7_999), &mut world);
    assert!(!b.role.status().active && b.renewing.is_none());
    b.at(at(t0, 8_000), &mut world);
    assert_eq!(
        world.lease.as_ref().unwrap().holder.as_ref().unwrap().hub,
        "hub-b",
        "stale after {STALE_AFTER:?}: taken at the revision it saw"
    );
    assert!(b.role.status().active);
    assert_eq!(b.role.me().epoch, 5);
    assert_eq!(b.news.last(), Some(&ClusterNews::Active(5)));
    // Nobody holds it: taken at once, epoch 1.
    let mut c = Hub::new("hub-c", t0);
    assert_eq!(c.take_over(t0, &mut World::default()), 1);
}

#[test]
fn renewals_that_fail_for_their_time_step_the_active_hub_down() {
    let t0 = Instant::now();
    let mut world = World::default();
    let mut a = Hub::new("hub-a", t0);
    assert_eq!(a.take_over(t0, &mut world), 1);
    // Renewals get through until 2 s; none after (the bucket's leader is gone).
    for ms in (500..=2_000).step_by(500) {
        a.renew(at(t0, ms), &mut world);
        a.at(at(t0, ms), &mut world);
    }
    a.at(at(t0, 11_999), &mut world);
    assert!(a.role.status().active, "an election is waited out");
    a.write(at(t0, 11_999), &mut world);
    assert_eq!(world.last(), 2, "and it writes meanwhile");
    a.at(at(t0, 12_000), &mut world);
    assert!(!a.role.status().active);
    assert_eq!(
        a.notes.last(),
        Some(&Note::SteppedDown(StepDown::LeaseLost))
    );
    assert_eq!(a.news.last(), Some(&ClusterNews::Standby(None)));
    assert!(a.renewing.is_none() && a.tail == Some(3), "it tails again");

    // A renewal refused (another hub holds the lease) steps it down at the next look,
    // and a write meanwhile is withheld, never appended.
    let mut world = World::default();
    let mut b = Hub::new("hub-b", t0);
    b.take_over(t0, &mut world);
    world.lease.as_mut().unwrap().revision += 1;
    b.renew(at(t0, 1), &mut world);
    b.write(at(t0, 1), &mut world);
    assert_eq!(world.last(), 1, "only the takeover record");
    assert!(b.notes.contains(&Note::Withheld));
    assert!(!b.role.status().active);
}

#[test]
fn a_late_writer_is_fenced_by_the_expected_sequence() {
    let t0 = Instant::now();
    let mut world = World::default();
    let mut a = Hub::new("hub-a", t0);
    a.take_over(t0, &mut world);
    let mut b = Hub::new("hub-b", t0);
    for ms in [100, 200, 300] {
        a.write(at(t0, ms), &mut world);
    }
    b.tail(at(t0, 300), &mut world);
    assert_eq!(b.role.applied(), 4);
    // B takes the lease over (A's renewals stopped reaching the bucket) and writes its
    // takeover while A still believes it holds the lease.
    b.at(at(t0, 1_000), &mut world);
    b.at(at(t0, 4_000), &mut world);
    assert!(b.role.status().active);
    assert_eq!(b.role.me().epoch, 2);
    // A's next append names sequence 4, which is no longer the last: refused, and A
    // steps down without a single record in the stream.
    let before = world.last();
    assert!(
        a.role.holding(at(t0, 4_100)),
        "A's lease has not run out by its clock"
    );
    a.write(at(t0, 4_100), &mut world);
    assert_eq!(world.last(), before);
    assert!(!a.role.status().active);
    assert_eq!(a.notes.last(), Some(&Note::SteppedDown(StepDown::Fenced)));
    assert_eq!(a.role.status().refused_appends, 1);
    b.write(at(t0, 4_200), &mut world);
    assert_eq!(world.last(), before + 1, "B writes on");
}

#[test]
fn a_takeover_racing_a_frozen_hub_leaves_the_frozen_one_nothing_to_write() {
    let t0 = Instant::now();
    let mut world = World::default();
    let mut a = Hub::new("hub-a", t0);
    let mut b = Hub::new("hub-b", t0);
    a.take_over(t0, &mut world);
    // A renews until 5 s, then freezes (SIGSTOP).
    for ms in (500..=5_000).step_by(500) {
        a.renew(at(t0, ms), &mut world);
        a.at(at(t0, ms), &mut world);
        b.at(at(t0, ms), &mut world);
    }
    a.write(at(t0, 5_000), &mut world);
    b.tail(at(t0, 5_000), &mut world);
    // B sees the lease unchanged since 5 s: stale at 8 s, not before.
    b.at(at(t0, 7_999), &mut world);
    assert!(!b.role.status().active);
    b.at(at(t0, 8_000), &mut world);
    assert!(b.role.status().active);
    let written = world.last();

    // The frozen hub, woken at two moments: within its lease by its own clock (6 s of
    // 10 passed), it tries and the fence refuses it; past it, it does not even try.
    let mut late = Hub {
        role: a.role.clone(),
        news: Vec::new(),
        notes: Vec::new(),
        tail: None,
        renewing: None,
    };
    a.write(at(t0, 11_000), &mut world);
    assert_eq!(a.notes.last(), Some(&Note::SteppedDown(StepDown::Fenced)));
    late.write(at(t0, 15_000), &mut world);
    assert_eq!(
        late.notes,
        [Note::Withheld, Note::SteppedDown(StepDown::LeaseLost)]
    );
    assert_eq!(world.last(), written, "the frozen hub wrote nothing");
    assert!(b.role.status().active && !a.role.status().active);
}

#[test]
fn strangers_records_are_skipped_and_a_halls_record_is_the_fence() {
    let t0 = Instant::now();
    let mut world = World::default();
    let mut a = Hub::new("hub-a", t0);
    a.take_over(t0, &mut world);
    a.write(at(t0, 100), &mut world);
    // A stranger appends twice: A's next append is refused, skips both and goes after them.
    world.forge();
    world.forge();
    a.write(at(t0, 200), &mut world);
    assert_eq!(world.last(), 5);
    assert_eq!(world.records[4], Sealed::Hall);
    assert_eq!(a.role.status().strangers_records, 2);
    assert_eq!(
        a.news.last(),
        Some(&ClusterNews::StrangersRecords(vec![3, 4])),
        "told to the shell once"
    );
    assert!(a.role.status().active, "a stranger fences nothing");
    // A standby skips and counts them too, and tells nothing: the active hub told them.
    let mut b = Hub::new("hub-b", t0);
    b.tail(at(t0, 200), &mut world);
    assert_eq!(b.role.status().strangers_records, 2);
    world.lease = None;
    b.take_over(at(t0, 300), &mut world);
    assert!(
        !b.news
            .iter()
            .any(|n| matches!(n, ClusterNews::StrangersRecords(_))),
        "told once, by A"
    );
    // B's takeover after A's last: A's look finds it, the fence, and A steps down.
    a.at(at(t0, 500), &mut world);
    assert!(!a.role.status().active);
    assert_eq!(a.role.status().refused_appends, 1);
    assert!(a.notes.contains(&Note::Fenced));
}

#[test]
fn a_record_out_of_order_is_not_applied_and_the_tail_is_made_anew() {
    let t0 = Instant::now();
    let mut a = Hub::new("hub-a", t0);
    assert_eq!(a.tail, Some(1), "a standby tails from its journal's end");
    assert!(a.role.handle_record(1, Sealed::Hall));
    assert!(!a.role.handle_record(3, Sealed::Hall), "a gap: read again");
    assert!(!a.role.handle_record(1, Sealed::Hall), "a repeat");
    assert_eq!(a.role.applied(), 1);
    a.tail = None;
    a.drive(t0, &mut World::default());
    assert_eq!(a.tail, Some(2));
}

#[test]
fn a_tail_that_stalls_while_the_stream_goes_on_is_made_anew() {
    let t0 = Instant::now();
    let mut world = World::default();
    world.forge();
    let mut a = Hub::new("hub-a", t0);
    world.lease = a_holder(1);
    a.tail = None;
    for ms in (0..=2_000).step_by(500) {
        a.at(at(t0, ms), &mut world);
    }
    assert_eq!(a.tail, None, "not before {TAIL_STALLED:?}");
    a.at(at(t0, 2_500), &mut world);
    assert_eq!(a.tail, Some(1));
    assert_eq!(a.notes, [Note::TailStalled { applied: 0 }]);
}
