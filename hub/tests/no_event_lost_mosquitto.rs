//! No event is lost on Mosquitto: the same hall with Mosquitto as the external broker (as
//! `deploy/mosquitto/zeitnot.conf` ships it); Mosquitto is SIGKILLed and restarted too.

use crate::support;

use std::time::Duration;

use support::{hall, Broker, Mosquitto};

#[test]
fn a_hall_on_mosquitto_loses_nothing_when_broker_hub_and_a_node_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mosquitto = Mosquitto::start(dir.path());
    let port = mosquitto.port();
    hall::run(
        dir.path(),
        Broker::External { port },
        Some(mosquitto),
        hall::Faults {
            kill_hub_at: [Duration::from_secs(3), Duration::from_secs(9)],
            kill_node_at: Duration::from_secs(5),
            kill_broker_at: Some(Duration::from_secs(6)),
        },
    );
}
