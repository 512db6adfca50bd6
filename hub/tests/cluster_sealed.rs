//! A clustered hall's journal stream holds nothing a reader of NATS can use, and takes
//! nothing a writer of NATS forges, against three real `nats-server` processes (without
//! logins: as if every login had leaked) and real hubs:
//! - the hall's secrets reach the second hub through the technician's file, never the
//!   stream: every record read with NATS's own client holds neither the hall secret, nor
//!   the arbiters' token, nor the hall CA's key, nor a node's or an arbiter's key, nor a
//!   name;
//! - a stranger's record (a binding of a rogue node) is refused by the active hub, which
//!   stays active, counts it, raises `strangers_records` and goes on writing;
//! - a hub started without the hall's secrets stops at once and says how to give them.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hub::core::hub::Write;
use hub::core::ids::HardwareId;
use hub::edge::cluster::record;
use protocol::BoardNo;
use serde_json::Value;
use support::{http_get, http_json, share_hall_secrets, Broker, Hub, NatsCluster};

const STREAM: &str = "ZEITNOT_JOURNAL_default";

fn start_hub(dir: &Path, nats: &NatsCluster, name: &str) -> Hub {
    Hub::start_with(
        &dir.join(name),
        Broker::Cluster {
            nats: nats.urls(0),
            gateways: nats.gateways(0),
            name: name.into(),
        },
        &dir.join(format!("{name}.log")),
        Vec::new(),
    )
}

fn cluster_view(hub: &Hub) -> Value {
    match http_get(&hub.web, "/api/cluster") {
        Ok((200, body)) => serde_json::from_str(&body).unwrap(),
        other => panic!("/api/cluster: {other:?}"),
    }
}

fn wait_for(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every record of the stream, as anyone with a NATS login reads it.
async fn every_record(nats: &NatsCluster) -> Vec<Vec<u8>> {
    let client = async_nats::connect(nats.urls(0).split(',').next().unwrap())
        .await
        .unwrap();
    let js = async_nats::jetstream::new(client);
    let stream = js.get_stream(STREAM).await.unwrap();
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig::default())
        .await
        .unwrap();
    let last = stream.get_info().await.unwrap().state.last_sequence;
    let mut messages = consumer.messages().await.unwrap();
    let mut records = Vec::new();
    while (records.len() as u64) < last {
        let message = tokio::time::timeout(Duration::from_secs(10), messages.next())
            .await
            .expect("the stream reads")
            .unwrap()
            .unwrap();
        records.push(message.message.payload.to_vec());
    }
    records
}

/// A stranger with a NATS login appends a record after the last.
async fn append_strangers_record(nats: &NatsCluster, payload: Vec<u8>) {
    let client = async_nats::connect(nats.urls(0).split(',').next().unwrap())
        .await
        .unwrap();
    let js = async_nats::jetstream::new(client);
    js.publish("zeitnot.journal.default", payload.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn the_stream_holds_nothing_a_reader_can_use_and_takes_nothing_a_writer_forges() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let nats = NatsCluster::start(dir);
    let runtime = tokio::runtime::Runtime::new().unwrap();

    share_hall_secrets(&dir.join("hub-a"), &[&dir.join("hub-b")]);
    let hub_a = start_hub(dir, &nats, "hub-a");
    wait_for("hub A active", Duration::from_secs(30), || {
        cluster_view(&hub_a)["role"] == "active"
    });
    let node = hub_a.enrol("dgt-1", 1, dir);
    let arbiter: Value = serde_json::from_str(
        &std::fs::read_to_string(hub_a.enrol_arbiter("Åse Berg", dir)).unwrap(),
    )
    .unwrap();
    let hub_b = start_hub(dir, &nats, "hub-b");
    wait_for("hub B standby", Duration::from_secs(30), || {
        cluster_view(&hub_b)["role"] == "standby"
    });
    assert_eq!(hub_b.token, hub_a.token, "the token came with the file");

    // What a reader of NATS holds: nothing of the hall's.
    let records = runtime.block_on(every_record(&nats));
    assert!(records.len() >= 3, "{} records", records.len());
    let hall_secret: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("hub-a.hall-secrets.json")).unwrap(),
    )
    .unwrap();
    let hall_hex = hall_secret["hall_secret"].as_str().unwrap();
    let hall_bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hall_hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let secrets: Vec<(&str, Vec<u8>)> = vec![
        ("the hall secret (hex)", hall_hex.as_bytes().to_vec()),
        ("the hall secret", hall_bytes),
        ("the arbiters' token", hub_a.token.as_bytes().to_vec()),
        ("a private key", b"PRIVATE KEY".to_vec()),
        ("the node's key", node.key.as_bytes().to_vec()),
        (
            "the arbiter's pager password",
            arbiter["mqtt_password"]
                .as_str()
                .unwrap()
                .as_bytes()
                .to_vec(),
        ),
        ("the arbiter's name", "Åse Berg".as_bytes().to_vec()),
        ("the node's hardware id", b"dgt-1".to_vec()),
    ];
    for (i, record) in records.iter().enumerate() {
        for (what, secret) in &secrets {
            assert!(!contains(record, secret), "record {}: {what}", i + 1);
        }
    }

    // A stranger's record: a rogue node bound to board 1, in the stream's own encoding.
    let rogue = record::writes_message(
        [Write::Binding {
            hardware: HardwareId("rogue".into()),
            board: Some(BoardNo(1)),
        }]
        .iter(),
    );
    runtime.block_on(append_strangers_record(&nats, rogue));
    wait_for(
        "the stranger's record refused",
        Duration::from_secs(10),
        || cluster_view(&hub_a)["strangers_records"] == 1,
    );
    assert_eq!(cluster_view(&hub_a)["role"], "active", "it fences nothing");
    wait_for("the technician called", Duration::from_secs(10), || {
        http_json(&hub_a.web, "/api/alerts")
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "strangers_records" && a["zone"] == "hall")
    });
    let (_, metrics) = http_get(&hub_a.web, "/metrics").unwrap();
    assert!(
        metrics.contains("zeitnot_cluster_strangers_records_total 1"),
        "{metrics}"
    );
    // The active hub still writes (after the stranger's record), and the rogue node is
    // bound nowhere: the standby skipped it too.
    hub_a.enrol("dgt-2", 2, dir);
    wait_for("the standby skipped it", Duration::from_secs(10), || {
        cluster_view(&hub_b)["strangers_records"] == 1
    });
    let (_, nodes) = http_get(&hub_a.web, "/api/nodes").unwrap();
    assert!(!nodes.contains("rogue"), "{nodes}");

    // A hub without the hall's secrets: it stops at once, saying how to give them.
    let mut without = Command::new(support::workspace_bin("hub"))
        .args(["serve", "--data"])
        .arg(dir.join("hub-c"))
        .args(["--cluster", &nats.urls(2)])
        .args(["--broker", &nats.gateways(2)])
        .args(["--hub-name", "hub-c"])
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = without.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = without.kill();
            panic!("a hub without the hall's secrets still runs after 30 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut without.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("hub cluster-join"), "{stderr}");
}
