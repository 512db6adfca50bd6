//! The embedded MQTT broker (rumqttd), for halls that run without an external one.
//!
//! rumqttd's `start()` blocks and has no shutdown, so it runs on its own OS thread for the
//! life of the process, never inside a tokio task (rumqtt issues 973, 245). It keeps
//! everything in memory: the board nodes' outboxes make that safe.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rumqttd::{Broker, Config, ConnectionSettings, RouterConfig, ServerSettings};

/// Starts the broker on `listen` and returns once it accepts connections.
pub fn start(listen: SocketAddr) -> anyhow::Result<()> {
    // rumqttd reports a bind failure only in its own thread's log; find out here instead.
    drop(TcpListener::bind(listen).with_context(|| format!("MQTT address {listen} is not free"))?);

    let server = ServerSettings {
        name: "zeitnot-v4".into(),
        listen,
        tls: None,
        next_connection_delay_ms: 1,
        connections: ConnectionSettings {
            connection_timeout_ms: 60_000,
            max_payload_size: 256 * 1024,
            max_inflight_count: 500,
            auth: None,
            external_auth: None,
            dynamic_filters: true,
        },
    };
    let config = Config {
        id: 0,
        router: RouterConfig {
            // A hall of 1,000 boards, pagers and screens, with room for reconnect storms.
            max_connections: 20_010,
            max_outgoing_packet_count: 500,
            // rumqttd keeps each subscription filter's messages in an in-memory log of this
            // many segments and drops the oldest segment when it needs a new one, even if a
            // subscriber has not read it. The hub's one wildcard filter carries the whole
            // hall: with 10 × 1 MiB, an 800-board burst lost 17% of its QoS 1 messages.
            // 8 × 8 MiB holds about a million events and bounds the broker's memory.
            max_segment_size: 8 * 1024 * 1024,
            max_segment_count: 8,
            ..RouterConfig::default()
        },
        v4: Some(HashMap::from([("1".to_owned(), server)])),
        ..Config::default()
    };
    std::thread::Builder::new()
        .name("mqtt-broker".into())
        .spawn(move || {
            if let Err(e) = Broker::new(config).start() {
                tracing::error!(error = %e, "embedded MQTT broker stopped");
            }
        })
        .context("starting the broker thread")?;

    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect_timeout(&listen, Duration::from_millis(200)).is_err() {
        if Instant::now() > deadline {
            bail!("the embedded MQTT broker did not start listening on {listen}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
