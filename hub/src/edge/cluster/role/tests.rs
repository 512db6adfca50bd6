//! The role on simulated time, two hubs and a stream with NATS's fence between them (an
//! append names the last sequence it expects, and the stream refuses it otherwise), as
//! quinn-proto tests a connection with a `Pair`. The real-NATS process tests
//! (`standby_hub`, `cluster_fence`) stay the acceptance tests.

use super::*;

/// The journal stream as NATS keeps it: who sealed each record, in order.
#[derive(Default)]
struct Stream {
    records: Vec<Sealed>,
}

impl Stream {
    /// `Nats-Expected-Last-Sequence`: the append is taken only after `expected`.
    fn append(&mut self, expected: u64, sealed: Sealed) -> Result<u64, ()> {
        if expected != self.records.len() as u64 {
            return Err(());
        }
        self.records.push(sealed);
        Ok(self.records.len() as u64)
    }

    /// A stranger with a NATS login appends whatever it likes.
    fn forge(&mut self) -> u64 {
        self.records.push(Sealed::Stranger);
        self.records.len() as u64
    }

    fn after(&self, seq: u64) -> Vec<(u64, Sealed)> {
        (seq + 1..=self.records.len() as u64)
            .map(|s| (s, self.records[s as usize - 1]))
            .collect()
    }
}

/// A hub's role with the time it lives in.
struct Hub {
    role: Role,
}

impl Hub {
    fn new(name: &str, t0: Instant) -> Hub {
        Hub {
            role: Role::new(name.into(), format!("{name}:8080"), 0, t0),
        }
    }

    /// Reads the stream up to its end, as the standby's tail does.
    fn catch_up(&mut self, stream: &Stream) {
        for (seq, sealed) in stream.after(self.role.applied()) {
            assert!(self.role.handle_record(seq, sealed));
        }
    }

    /// Takes the lease from `entry` at `now` and appends the takeover record, reading on
    /// while another hub writes.
    fn take_over(&mut self, now: Instant, entry: Option<LeaseEntry>, stream: &mut Stream) -> u64 {
        let LeaseStep::Take { holder, .. } = self.role.handle_lease_read(now, entry) else {
            panic!("the lease was not taken");
        };
        self.role.handle_lease_taken(now, holder.epoch);
        loop {
            self.catch_up(stream);
            let expected = self.role.expected_last(now).expect("holding");
            match stream.append(expected, Sealed::Hall) {
                Ok(seq) => {
                    assert_eq!(self.role.handle_appended(seq), Some(holder.epoch));
                    return holder.epoch;
                }
                Err(()) => {
                    let after = stream.after(self.role.applied());
                    assert_eq!(self.role.handle_others(now, &after), AfterOthers::ReadOn);
                }
            }
        }
    }

    /// An active hub's append of a flush: taken, refused by the fence, or withheld.
    fn append(&mut self, now: Instant, stream: &mut Stream) -> Result<u64, AfterOthers> {
        loop {
            let Ok(expected) = self.role.expected_last(now) else {
                return Err(AfterOthers::Fenced);
            };
            match stream.append(expected, Sealed::Hall) {
                Ok(seq) => {
                    self.role.handle_appended(seq);
                    return Ok(seq);
                }
                Err(()) => match self.role.handle_others(now, &stream.after(expected)) {
                    AfterOthers::AppendAfter(_) => continue,
                    other => return Err(other),
                },
            }
        }
    }

    fn entry(&self, revision: u64) -> Option<LeaseEntry> {
        Some(LeaseEntry {
            revision,
            holder: Some(self.role.me().clone()),
        })
    }
}

fn at(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

#[test]
fn a_lease_unchanged_for_its_time_is_taken_and_not_a_moment_before() {
    let t0 = Instant::now();
    let mut b = Hub::new("hub-b", t0);
    let a = Holder {
        hub: "hub-a".into(),
        http: "a:8080".into(),
        epoch: 4,
    };
    let entry = |revision| {
        Some(LeaseEntry {
            revision,
            holder: Some(a.clone()),
        })
    };
    assert_eq!(b.role.handle_lease_read(t0, entry(7)), LeaseStep::Wait);
    assert_eq!(
        b.role.status().holder,
        Some(a.clone()),
        "a standby names the holder"
    );
    assert_eq!(b.role.poll_timeout(), t0 + STALE_AFTER);
    // A renewal (a new revision) starts the count again.
    assert_eq!(
        b.role.handle_lease_read(at(t0, 2_900), entry(8)),
        LeaseStep::Wait
    );
    assert_eq!(
        b.role.handle_lease_read(at(t0, 5_899), entry(8)),
        LeaseStep::Wait
    );
    // So does a bucket that does not answer: nobody could renew meanwhile.
    b.role.handle_lease_unreadable(at(t0, 5_000));
    assert_eq!(
        b.role.handle_lease_read(at(t0, 7_999), entry(8)),
        LeaseStep::Wait
    );
    let LeaseStep::Take { revision, holder } = b.role.handle_lease_read(at(t0, 8_000), entry(8))
    else {
        panic!("stale after {STALE_AFTER:?}");
    };
    assert_eq!(
        revision,
        Some(8),
        "taken only if nobody renewed it meanwhile"
    );
    assert_eq!((holder.hub.as_str(), holder.epoch), ("hub-b", 5));
    // Nobody holds it: taken at once, epoch 1.
    let mut c = Hub::new("hub-c", t0);
    assert!(matches!(
        c.role.handle_lease_read(t0, None),
        LeaseStep::Take { revision: None, holder } if holder.epoch == 1
    ));
}

#[test]
fn renewals_that_fail_for_their_time_step_the_active_hub_down() {
    let t0 = Instant::now();
    let mut stream = Stream::default();
    let mut a = Hub::new("hub-a", t0);
    assert_eq!(a.take_over(t0, None, &mut stream), 1);
    assert!(a.role.status().active);
    // Renewals get through until 2 s; none after (the bucket's leader is gone).
    for ms in (500..=2_000).step_by(500) {
        a.role.handle_renewed(at(t0, ms));
    }
    assert_eq!(a.role.poll_timeout(), at(t0, 2_000) + HOLD_FOR);
    assert_eq!(
        a.role.check(at(t0, 11_999)),
        None,
        "an election is waited out"
    );
    assert!(a.append(at(t0, 11_999), &mut stream).is_ok());
    assert_eq!(a.role.check(at(t0, 12_000)), Some(StepDown::LeaseLost));
    assert_eq!(a.role.phase(), Phase::Standby);
    assert!(!a.role.status().active);
    assert_eq!(a.role.expected_last(at(t0, 12_000)), Err(Withheld));

    // A renewal refused (another hub holds the lease) steps it down at the next look.
    let mut b = Hub::new("hub-b", t0);
    b.take_over(t0, None, &mut Stream::default());
    b.role.handle_renewal_refused();
    assert_eq!(b.role.expected_last(at(t0, 1)), Err(Withheld));
    assert_eq!(b.role.check(at(t0, 1)), Some(StepDown::LeaseLost));
}

#[test]
fn a_late_writer_is_fenced_by_the_expected_sequence() {
    let t0 = Instant::now();
    let mut stream = Stream::default();
    let mut a = Hub::new("hub-a", t0);
    a.take_over(t0, None, &mut stream);
    let mut b = Hub::new("hub-b", t0);
    for ms in [100, 200, 300] {
        a.append(at(t0, ms), &mut stream).unwrap();
    }
    b.catch_up(&stream);
    assert_eq!(b.role.applied(), 4);
    // B takes the lease over (A's renewals stopped reaching the bucket) and writes its
    // takeover while A still believes it holds the lease.
    b.role.handle_lease_read(at(t0, 1_000), a.entry(9));
    assert_eq!(b.take_over(at(t0, 4_000), a.entry(9), &mut stream), 2);
    assert_eq!(b.role.status().holder.unwrap().hub, "hub-b");
    // A's next append names sequence 4, which is no longer the last: refused, and A
    // steps down without a single record in the stream.
    let before = stream.records.len();
    assert!(
        a.role.holding(at(t0, 4_100)),
        "A's lease has not run out by its clock"
    );
    assert_eq!(
        a.append(at(t0, 4_100), &mut stream),
        Err(AfterOthers::Fenced)
    );
    assert_eq!(stream.records.len(), before);
    assert_eq!(a.role.phase(), Phase::Standby);
    assert_eq!(a.role.status().refused_appends, 1);
    assert!(b.append(at(t0, 4_200), &mut stream).is_ok(), "B writes on");
}

#[test]
fn a_takeover_racing_a_frozen_hub_leaves_the_frozen_one_nothing_to_write() {
    let t0 = Instant::now();
    let mut stream = Stream::default();
    let mut a = Hub::new("hub-a", t0);
    let mut b = Hub::new("hub-b", t0);
    a.take_over(t0, None, &mut stream);
    // A renews until 5 s, then freezes (SIGSTOP): its last renewal revision stays 10.
    for ms in (500..=5_000).step_by(500) {
        a.role.handle_renewed(at(t0, ms));
        b.role.handle_lease_read(at(t0, ms), a.entry(ms / 500));
    }
    a.append(at(t0, 5_000), &mut stream).unwrap();
    b.catch_up(&stream);
    // B sees the lease unchanged since 5 s: stale at 8 s, not before.
    assert_eq!(
        b.role.handle_lease_read(at(t0, 7_999), a.entry(10)),
        LeaseStep::Wait
    );
    assert_eq!(b.take_over(at(t0, 8_000), a.entry(10), &mut stream), 2);
    let written = stream.records.len();

    // The frozen hub, woken at two moments: within its lease by its own clock (6 s of
    // 10 passed), it tries and the fence refuses it; past it, it does not even try.
    let mut late = Hub {
        role: a.role.clone(),
    };
    assert_eq!(
        a.append(at(t0, 11_000), &mut stream),
        Err(AfterOthers::Fenced)
    );
    assert_eq!(late.role.expected_last(at(t0, 15_000)), Err(Withheld));
    assert_eq!(late.role.check(at(t0, 15_000)), Some(StepDown::LeaseLost));
    assert_eq!(
        stream.records.len(),
        written,
        "the frozen hub wrote nothing"
    );
    assert_eq!(stream.records.last(), Some(&Sealed::Hall));
    assert!(b.role.status().active && !a.role.status().active);
}

#[test]
fn strangers_records_are_skipped_and_a_halls_record_is_the_fence() {
    let t0 = Instant::now();
    let mut stream = Stream::default();
    let mut a = Hub::new("hub-a", t0);
    a.take_over(t0, None, &mut stream);
    a.append(at(t0, 100), &mut stream).unwrap();
    // A stranger appends twice: A's next append is refused, skips both and goes after them.
    stream.forge();
    stream.forge();
    assert_eq!(a.append(at(t0, 200), &mut stream), Ok(5));
    assert_eq!(a.role.status().strangers_records, 2);
    assert_eq!(a.role.take_strangers(), [3, 4], "told to the shell once");
    assert!(a.role.take_strangers().is_empty());
    assert!(a.role.status().active, "a stranger fences nothing");
    // A standby skips and counts them too; the active hub told them.
    let mut b = Hub::new("hub-b", t0);
    b.catch_up(&stream);
    assert_eq!(b.role.status().strangers_records, 2);
    assert!(
        b.role.take_strangers().is_empty(),
        "a standby's shell writes nothing"
    );
    b.take_over(t0, None, &mut stream);
    assert!(b.role.take_strangers().is_empty(), "told once, by A");
    // B's takeover after A's last: the fence, and A steps down.
    assert_eq!(
        a.role
            .handle_others(at(t0, 300), &stream.after(a.role.applied())),
        AfterOthers::Fenced
    );
    assert_eq!(a.role.phase(), Phase::Standby);
    assert_eq!(a.role.status().refused_appends, 1);
}

#[test]
fn a_record_out_of_order_is_not_applied() {
    let t0 = Instant::now();
    let mut a = Hub::new("hub-a", t0);
    assert!(a.role.handle_record(1, Sealed::Hall));
    assert!(!a.role.handle_record(3, Sealed::Hall), "a gap: read again");
    assert!(!a.role.handle_record(1, Sealed::Hall), "a repeat");
    assert_eq!(a.role.applied(), 1);
}
