//! No event is lost on the embedded broker: twenty real board-node processes; the hub is
//! SIGKILLed twice and a node once; no event is lost or duplicated and every game is right.

use crate::support;

use std::time::Duration;

use support::{hall, Broker};

#[test]
fn a_hall_on_the_embedded_broker_loses_nothing_when_the_hub_and_a_node_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    hall::run(
        dir.path(),
        Broker::Embedded { port: 0 },
        None,
        hall::Faults {
            kill_hub_at: [Duration::from_secs(3), Duration::from_secs(8)],
            kill_node_at: Duration::from_secs(5),
            kill_broker_at: None,
        },
    );
}
