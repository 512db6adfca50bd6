//! The fence of a clustered hall's journal, against three real `nats-server` processes: an
//! active hub whose append the stream refuses (another writer's record came first) steps
//! down at once, and what it was appending never becomes durable, so it never acknowledges
//! it. The lease alone could not promise this (a hub that slept through its lease may not
//! know it yet); the stream's expected last sequence does. A stranger's record (one the
//! hall's key does not open: written by a NATS login that leaked, or a genuine record copied
//! elsewhere) fences nothing: the active hub refuses it, says so, and appends after it.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use hub::core::hub::{Position, Write};
use hub::core::ids::HardwareId;
use hub::edge::cluster::jetstream::LeaseStore;
use hub::edge::cluster::journal;
use hub::edge::cluster::lease::Lease;
use hub::edge::cluster::nats::Cluster;
use hub::edge::cluster::record::{self, Takeover};
use hub::edge::cluster::role::{ClusterNews, Role};
use hub::edge::cluster::seal::JournalSeal;
use hub::edge::journal::flusher::{Flushed, Flusher};
use hub::edge::journal::Journal;
use hub::metrics::Metrics;
use protocol::seal::NodeKey;
use protocol::BoardNo;
use support::NatsCluster;
use tokio::time::timeout;

fn binding(board: u16) -> Write {
    Write::Binding {
        hardware: HardwareId(format!("dgt-{board}")),
        board: Some(BoardNo(board)),
    }
}

/// The stream's last sequence number, asked again while the stream elects a leader.
async fn last_seq(cluster: &Cluster) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        match cluster.last_seq().await {
            Ok(seq) => return seq,
            Err(e) if std::time::Instant::now() > deadline => panic!("{e:#}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Appends `payload` after record `after`, as a hub appends; asked again while the stream
/// has no leader (the active hub moves the leaders off its own server when it takes over).
async fn append(
    cluster: &Cluster,
    payload: Vec<u8>,
    after: u64,
) -> Result<u64, async_nats::jetstream::context::PublishError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let publish = PublishMessage::build()
            .payload(payload.clone().into())
            .expected_last_sequence(after);
        let acked = match cluster
            .js
            .send_publish(cluster.subject.clone(), publish)
            .await
        {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        match acked {
            Ok(ack) => return Ok(ack.sequence),
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => return Err(e),
            Err(e) if std::time::Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_active_hub_whose_append_the_stream_refuses_steps_down_and_makes_nothing_durable() {
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsCluster::start(dir.path());
    let urls: Vec<String> = nats.urls(0).split(',').map(str::to_owned).collect();
    let cluster = Cluster::connect(&urls, "fence", 3, &dir.path().join("no-ca.pem"))
        .await
        .unwrap();
    let hall = NodeKey::from_bytes([7; 32]);
    let seal = JournalSeal::new(&hall, "fence");
    assert_eq!(
        journal::genesis(&cluster, &seal, "hub-a")
            .await
            .unwrap()
            .hub,
        "hub-a"
    );
    // The first record is sealed: another hall's hub cannot open the stream.
    let stranger = JournalSeal::new(&NodeKey::from_bytes([8; 32]), "fence");
    let refused = journal::genesis(&cluster, &stranger, "hub-x")
        .await
        .unwrap_err();
    assert!(
        format!("{refused:#}").contains("hub cluster-join"),
        "{refused:#}"
    );

    let local = Journal::open(&dir.path().join("hub-a")).unwrap();
    let metrics = Arc::new(Metrics::default());
    let (durable_tx, mut durable) = tokio::sync::mpsc::unbounded_channel();
    let flusher = Flusher::start(local.clone(), 0, metrics.clone(), durable_tx).unwrap();
    let lease = Lease::new(LeaseStore(cluster.lease.clone()));
    let role = Role::new(
        "hub-a".into(),
        "127.0.0.1:1".into(),
        0,
        std::time::Instant::now(),
    );
    let mut link = journal::start(
        cluster.clone(),
        JournalSeal::new(&hall, "fence"),
        lease,
        role,
        flusher.input(),
        metrics.clone(),
    );
    let within = Duration::from_secs(15);
    assert_eq!(
        timeout(within, link.news.recv()).await.unwrap(),
        Some(ClusterNews::Standby(None))
    );
    assert_eq!(
        timeout(within, link.news.recv()).await.unwrap(),
        Some(ClusterNews::Active(1))
    );

    // A write of the active hub: durable once the cluster has it, in the stream and in its
    // own journal.
    link.writes.send((Position(1), binding(1))).unwrap();
    match timeout(within, durable.recv()).await.unwrap() {
        Some(Flushed::Durable { up_to, .. }) => assert_eq!(up_to, Position(1)),
        other => panic!("{other:?}"),
    }
    let mine = last_seq(&cluster).await;
    assert_eq!(local.stream_seq().unwrap(), mine);

    // Strangers' records: one in the clear, and a copy of the hub's own sealed record
    // appended at another place. Both fail the seal: counted, told, and the active hub
    // appends after them.
    let own = cluster.stream.get_raw_message(mine).await.unwrap().payload;
    append(&cluster, b"\x01\x01{\"hub\":\"x\"}".to_vec(), mine)
        .await
        .unwrap();
    append(&cluster, own.to_vec(), mine + 1).await.unwrap();
    link.writes.send((Position(2), binding(2))).unwrap();
    match timeout(within, durable.recv()).await.unwrap() {
        Some(Flushed::Durable { up_to, .. }) => assert_eq!(up_to, Position(2)),
        other => panic!("{other:?}"),
    }
    // Told as found: at the append, or at the active hub's look before it.
    let mut told = Vec::new();
    while told.len() < 2 {
        match timeout(within, link.news.recv()).await.unwrap() {
            Some(ClusterNews::StrangersRecords(seqs)) => told.extend(seqs),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(told, vec![mine + 1, mine + 2]);
    assert_eq!(link.status.borrow().strangers_records, 2);
    assert!(
        link.status.borrow().active,
        "a stranger's record fences nothing"
    );
    assert!(metrics
        .render(0)
        .contains("zeitnot_cluster_strangers_records_total 2"));
    let before = last_seq(&cluster).await;
    assert_eq!(before, mine + 3);
    assert_eq!(local.stream_seq().unwrap(), before);

    // Another writer's record comes first (a hub that took over), appended as any hub
    // appends: after the last record it knows.
    let rogue = record::takeover_message(&Takeover {
        hub: "hub-b".into(),
        epoch: 2,
    });
    append(&cluster, seal.seal(before + 1, &rogue), before)
        .await
        .unwrap();
    // A second writer that does not know it is refused by the stream itself (the fence).
    let refused = append(&cluster, b"stale".to_vec(), before)
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), PublishErrorKind::WrongLastSequence);

    // The active hub's next write: refused, the hub steps down, nothing more is durable.
    link.writes.send((Position(3), binding(3))).unwrap();
    let change = timeout(within, link.news.recv()).await.unwrap();
    assert!(
        matches!(change, Some(ClusterNews::Standby(_))),
        "{change:?}"
    );
    assert_eq!(link.status.borrow().refused_appends, 1);
    assert!(metrics
        .render(0)
        .contains("zeitnot_cluster_appends_refused_total 1"));
    // The stream ends with the other writer's record: the refused hub wrote nothing after.
    assert_eq!(last_seq(&cluster).await, before + 1);
    let late = timeout(Duration::from_secs(1), durable.recv()).await;
    assert!(
        late.is_err(),
        "nothing is durable after the refusal: {late:?}"
    );
    // As a standby it reads that record into its own journal.
    let deadline = std::time::Instant::now() + within;
    while local.stream_seq().unwrap() <= before {
        assert!(
            std::time::Instant::now() < deadline,
            "the standby does not tail"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(nats);
}
