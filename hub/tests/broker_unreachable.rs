//! A hub that cannot reach its broker says so: a hub started with `--broker` where nothing
//! listens yet (a Mosquitto not started, a cluster's gateways on another port) warns in its
//! log (the first time, then at a falling rate, not every retry), answers `/healthz` 503
//! naming the broker, and shows `zeitnot_broker_up 0`; once Mosquitto comes up, all of it
//! turns back. Before, such a hub logged "hub ready" and nothing else while no board's event
//! arrived.

use crate::support;

use std::time::{Duration, Instant};

use support::{free_port, http_get, Broker, Hub, Mosquitto};

fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn metric(hub: &Hub, name: &str) -> u64 {
    let (_, text) = http_get(&hub.web, "/metrics").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in /metrics"))
}

#[test]
fn a_hub_without_its_broker_warns_turns_healthz_503_and_recovers_when_it_comes() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let data = dir.path().join("data");
    let log = dir.path().join("hub.log");
    // The broker's users, made as the technician does before the first start (deploy/
    // mosquitto/users.sh with the hub's data directory); the broker itself not started.
    drop({
        let mut setup = Mosquitto::start(dir.path());
        setup.load_users_from(&data);
        setup
    });
    let hub = Hub::start(&data, Broker::External { port }, &log);
    let broker = format!("127.0.0.1:{port}");

    let mut reason = String::new();
    wait_until("/healthz 503", Duration::from_secs(15), || {
        let (status, body) = http_get(&hub.web, "/healthz").unwrap_or((0, String::new()));
        reason = body;
        status == 503
    });
    assert!(
        reason.contains("cannot reach the MQTT broker") && reason.contains(&broker),
        "{reason}"
    );
    assert_eq!(metric(&hub, "zeitnot_broker_up"), 0);
    let failures = metric(&hub, "zeitnot_broker_connect_failures_total");
    assert!(failures >= 2, "{failures}");
    let logs = std::fs::read_to_string(&log).unwrap();
    let warned = logs
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("cannot reach the MQTT broker"))
        .count();
    // The 1st, 2nd, 4th, 8th… failure: a falling rate, never silent.
    assert!(warned >= 1, "{logs}");
    assert!(
        warned <= failures.ilog2() as usize + 2,
        "{warned} warnings for {failures} failures"
    );
    assert!(!logs.contains("\u{1b}["), "no colour codes in a log file");

    // The broker comes: the hub connects, healthz and the gauge turn back.
    let _mosquitto = Mosquitto::start_on(dir.path(), port);
    wait_until("/healthz 200", Duration::from_secs(20), || {
        matches!(http_get(&hub.web, "/healthz"), Ok((200, _)))
    });
    assert_eq!(metric(&hub, "zeitnot_broker_up"), 1);
    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.contains("MQTT broker reached again"), "{logs}");
}
