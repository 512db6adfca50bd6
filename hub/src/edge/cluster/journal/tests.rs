//! The driver itself, two hubs on one in-memory cluster ([`memory`]), on simulated time
//! (tokio's paused clock: a takeover's seconds pass in no time): the first hub takes the
//! hall, the second keeps its copy; then a lease lost, a frozen hub woken with its append in
//! flight, a frozen hub woken past its lease, and a stranger's record. Each test asserts
//! what the stream holds and what each hub's flusher and shell were handed, as the NATS
//! process tests (`standby_hub`, `cluster_fence`, `cluster_sealed`) assert it on real
//! servers.

mod memory;

use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::seal::NodeKey;
use tokio::sync::watch;

use self::memory::MemoryCluster;
use super::*;
use crate::core::ids::HardwareId;
use crate::edge::cluster::role::HOLD_FOR;

/// What a hub's flusher was handed, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    /// This hub's append: how many writes, and the stream's sequence.
    Appended(usize, u64),
    /// Another hub's record (or a stranger's, with no writes).
    Copied(usize, u64),
    StreamSeq(u64),
    Sync,
}

struct Hub {
    link: ClusterLink,
    frozen: watch::Sender<bool>,
    got: Arc<Mutex<Vec<Got>>>,
    news: Vec<ClusterNews>,
}

impl Hub {
    /// A hub of the hall on `cluster`, a standby to begin with, its journal empty.
    async fn start(cluster: &MemoryCluster, name: &str) -> Hub {
        let (port, frozen) = cluster.port();
        genesis(&port, &seal(), name)
            .await
            .expect("the hall's stream");
        let role = Role::new(name.into(), format!("http://{name}:8080"), 0, now());
        let (flusher, handed) = FlusherInput::channel();
        let got = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn(stand_in_flusher(handed, got.clone()));
        let lease = Lease::new(port.clone());
        let link = start(port, seal(), lease, role, flusher, Arc::default());
        Hub {
            link,
            frozen,
            got,
            news: Vec::new(),
        }
    }

    fn status(&self) -> Status {
        self.link.status.borrow().clone()
    }

    /// The news told so far.
    fn news(&mut self) -> &[ClusterNews] {
        while let Ok(news) = self.link.news.try_recv() {
            self.news.push(news);
        }
        &self.news
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// How many writes its flusher was handed: its own appends' (`true`), or the records
    /// it copied (`false`).
    fn writes_handed(&self, own: bool) -> usize {
        self.got()
            .iter()
            .map(|g| match (g, own) {
                (Got::Appended(n, _), true) | (Got::Copied(n, _), false) => *n,
                _ => 0,
            })
            .sum()
    }

    /// Whether it appended anything after the stream's record `seq`.
    fn appended_after(&self, seq: u64) -> bool {
        self.got()
            .iter()
            .any(|g| matches!(g, Got::Appended(_, at) if *at > seq))
    }

    /// The core hands the driver a write.
    fn write(&self, n: u64) {
        let write = Write::Binding {
            hardware: HardwareId(format!("board-{n}")),
            board: None,
        };
        self.link.writes.send((Position(n), write)).unwrap();
    }
}

/// The flusher's part, in a task (a thread would let the paused clock run on while it
/// works): what it is handed, kept; a sync answered.
async fn stand_in_flusher(handed: Receiver<Handed>, got: Arc<Mutex<Vec<Got>>>) {
    loop {
        match handed.try_recv() {
            Ok(handed) => got.lock().unwrap().push(match handed {
                Handed::Appended(writes, seq) => Got::Appended(writes.len(), seq),
                Handed::Copied(writes, seq) => Got::Copied(writes.len(), seq),
                Handed::StreamSeq(seq) => Got::StreamSeq(seq),
                Handed::Sync(synced) => {
                    let _ = synced.send(());
                    Got::Sync
                }
                Handed::Write(..) => panic!("a cluster's driver hands no single write"),
            }),
            Err(TryRecvError::Empty) => tokio::time::sleep(Duration::from_millis(1)).await,
            Err(TryRecvError::Disconnected) => return,
        }
    }
}

fn seal() -> JournalSeal {
    JournalSeal::new(&NodeKey::from_bytes([7; 32]), "memory-open")
}

/// Waits (on the simulated clock) until `done`, at most a minute.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within a minute"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The stream's records from `from` on, as the hall's messages (`None`: a stranger's).
fn messages(cluster: &MemoryCluster, from: u64) -> Vec<Option<Message>> {
    let records = cluster.records();
    (from..=records.len() as u64)
        .map(|seq| {
            let opened = seal().open(seq, &records[seq as usize - 1]).ok()?;
            Some(record::decode(&opened).expect("a hall's record reads"))
        })
        .collect()
}

/// Two hubs, `hub-a` active and `hub-b` its standby, `hub-a`'s writes 1 and 2 in.
async fn a_hall() -> (MemoryCluster, Hub, Hub) {
    let cluster = MemoryCluster::new();
    let mut a = Hub::start(&cluster, "hub-a").await;
    until("hub-a active", || a.status().active).await;
    let b = Hub::start(&cluster, "hub-b").await;
    a.write(1);
    a.write(2);
    until("hub-b holds what hub-a wrote", || {
        b.status().journal_seq == cluster.records().len() as u64 && b.status().journal_seq >= 3
    })
    .await;
    assert_eq!(
        a.news(),
        [ClusterNews::Standby(None), ClusterNews::Active(1)]
    );
    (cluster, a, b)
}

#[tokio::test(start_paused = true)]
async fn the_first_hub_takes_the_hall_and_a_standby_keeps_its_copy() {
    let (cluster, a, b) = a_hall().await;
    // Genesis, the takeover, then A's writes: acknowledged (to A's flusher) only once in
    // the stream, copied by B.
    let messages = messages(&cluster, 1);
    assert!(matches!(messages[0], Some(Message::Genesis(_))));
    assert!(matches!(&messages[1], Some(Message::Takeover(t)) if t.hub == "hub-a" && t.epoch == 1));
    assert_eq!(a.writes_handed(true), 2, "{:?}", a.got());
    assert_eq!(
        a.got()[..3],
        [Got::Copied(0, 1), Got::StreamSeq(2), Got::Sync],
        "the genesis read, then the takeover made durable before the core is built"
    );
    assert_eq!(b.writes_handed(false), 2, "{:?}", b.got());
    assert_eq!(
        b.status().holder.map(|h| (h.hub, h.epoch)),
        Some(("hub-a".into(), 1)),
        "the standby names the active hub"
    );
    assert!(!b.status().active);
}

#[tokio::test(start_paused = true)]
async fn a_hub_whose_lease_is_taken_steps_down_and_appends_nothing_more() {
    let (cluster, mut a, mut b) = a_hall().await;
    let before = cluster.records().len() as u64;
    // Somebody writes the lease: A's next renewal is refused, and A steps down at once,
    // long before its lease would run out.
    let lost_at = tokio::time::Instant::now();
    cluster.overwrite_lease();
    until("hub-a stands down", || !a.status().active).await;
    assert!(
        lost_at.elapsed() < Duration::from_secs(2),
        "{:?}",
        lost_at.elapsed()
    );
    assert_eq!(a.news().last(), Some(&ClusterNews::Standby(None)));
    // Its write after that is never appended (nor acknowledged), even if the hall comes
    // back to it: the writes of a core it had before are dropped when it takes over.
    a.write(3);
    // Whichever standby sees the lease unchanged for its time first takes the hall over.
    until("a hub active again", || {
        a.status().active || b.status().active
    })
    .await;
    let b_won = b.status().active;
    let new = if b_won { &mut b } else { &mut a };
    assert_eq!(new.news().last(), Some(&ClusterNews::Active(2)));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = messages(&cluster, before + 1);
    assert!(
        matches!(after.as_slice(), [Some(Message::Takeover(t))] if t.epoch == 2),
        "{after:?}"
    );
    assert!(!a.appended_after(before));
    assert!(a.status().active != b_won, "one active hub");
}

#[tokio::test(start_paused = true)]
async fn a_frozen_hub_woken_with_its_append_in_flight_is_refused_by_the_fence() {
    let (cluster, a, b) = a_hall().await;
    let before = cluster.records().len() as u64;
    a.frozen.send_replace(true);
    // The core hands the frozen hub a write: its append waits inside the freeze.
    a.write(3);
    until("hub-b takes over from the frozen hub", || b.status().active).await;
    assert!(a.status().active, "frozen, A still believes it is active");
    // Woken within its lease by its own clock, A's append goes out naming the last record
    // it knew: refused, and A steps down with nothing appended.
    assert!(a.status().epoch == 1 && HOLD_FOR > Duration::from_secs(5));
    a.frozen.send_replace(false);
    until("hub-a fenced", || !a.status().active).await;
    assert_eq!(a.status().refused_appends, 1);
    let after = messages(&cluster, before + 1);
    assert!(
        matches!(after.as_slice(), [Some(Message::Takeover(t))] if t.hub == "hub-b"),
        "only B's takeover: {after:?}"
    );
    assert!(!a.appended_after(before));
}

#[tokio::test(start_paused = true)]
async fn a_frozen_hub_woken_past_its_lease_appends_nothing() {
    let (cluster, a, b) = a_hall().await;
    let before = cluster.records().len() as u64;
    a.frozen.send_replace(true);
    until("hub-b takes over", || b.status().active).await;
    tokio::time::sleep(HOLD_FOR).await;
    // Woken with a write waiting, past its lease by its own clock: withheld.
    a.write(3);
    a.frozen.send_replace(false);
    until("hub-a stands down", || !a.status().active).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(messages(&cluster, before + 1).len(), 1, "B's takeover only");
    assert!(!a.appended_after(before));
}

#[tokio::test(start_paused = true)]
async fn a_strangers_record_is_skipped_by_every_hub_and_fences_nothing() {
    let (cluster, mut a, b) = a_hall().await;
    let forged = cluster.forge(b"\x01 whatever a NATS login can publish");
    // A's next append is refused by it, skips it, and goes after it.
    a.write(3);
    until("hub-a appends after the stranger", || {
        a.got().contains(&Got::Appended(1, forged + 1))
    })
    .await;
    assert!(a.status().active, "a stranger fences nothing");
    assert_eq!(a.status().strangers_records, 1);
    assert_eq!(a.status().refused_appends, 0);
    assert!(a.got().contains(&Got::StreamSeq(forged)));
    assert_eq!(
        a.news().last(),
        Some(&ClusterNews::StrangersRecords(vec![forged])),
        "told to the shell, for an alert"
    );
    until("hub-b copies the write", || {
        b.got().contains(&Got::Copied(1, forged + 1))
    })
    .await;
    assert!(
        b.got().contains(&Got::Copied(0, forged)),
        "skipped in order"
    );
    assert_eq!(b.status().strangers_records, 1);
    assert!(messages(&cluster, forged)[0].is_none());
}
