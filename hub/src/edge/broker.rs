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
    while mqtt_session(listen).is_err() {
        if Instant::now() > deadline {
            bail!("the embedded MQTT broker did not start listening on {listen}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// One MQTT 3.1.1 session: CONNECT, CONNACK accepted, close. A bare TCP probe
/// would do to know the port listens, but rumqttd logs every connection closed before its
/// CONNECT as an error, and a newcomer's first line would be an `ERROR` for nothing.
fn mqtt_session(broker: SocketAddr) -> std::io::Result<()> {
    use std::io::{Error, Read, Write};
    const CLIENT_ID: &[u8] = b"zeitnot-hub-probe";
    let mut stream = TcpStream::connect_timeout(&broker, Duration::from_millis(200))?;
    stream.set_read_timeout(Some(Duration::from_millis(500)))?;
    // Variable header: protocol name "MQTT", level 4, clean session, keep-alive 10 s.
    let mut connect = vec![0x00, 0x04, b'M', b'Q', b'T', b'T', 0x04, 0x02, 0x00, 0x0a];
    connect.extend_from_slice(&(CLIENT_ID.len() as u16).to_be_bytes());
    connect.extend_from_slice(CLIENT_ID);
    let mut packet = vec![0x10, connect.len() as u8];
    packet.extend_from_slice(&connect);
    stream.write_all(&packet)?;
    let mut connack = [0u8; 4];
    stream.read_exact(&mut connack)?;
    if connack != [0x20, 0x02, 0x00, 0x00] {
        return Err(Error::other(format!("CONNACK {connack:02x?}")));
    }
    // No DISCONNECT: rumqttd 0.20 logs a client's DISCONNECT as an error ("router-drop"),
    // and a close after the CONNACK as the peer's ordinary leaving.
    Ok(())
}
