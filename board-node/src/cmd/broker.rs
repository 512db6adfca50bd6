//! What a node needs to reach the hub: the broker's TLS with the hall's CA pinned, and the
//! key its enrolment gave it.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use link::Brokers;

/// The key in `path`, with the file named in the error.
pub fn read_key(path: &Path) -> anyhow::Result<protocol::seal::NodeKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the key file {}", path.display()))?;
    protocol::seal::NodeKey::parse(&text).with_context(|| format!("in {}", path.display()))
}

/// The TLS configuration of `broker`: for an mqtts:// broker, the hall CA in `ca_file`
/// pinned; `None` for a plain one.
pub fn broker_tls(
    broker: &Brokers,
    ca_file: Option<&Path>,
) -> anyhow::Result<Option<Arc<rustls::ClientConfig>>> {
    if !broker.any_tls() {
        return Ok(None);
    }
    let ca_file = ca_file.with_context(|| {
        format!("{broker} is TLS: give the hall's CA certificate with --ca-file (the `ca` of the enrolment's answer)")
    })?;
    let pem = std::fs::read(ca_file).with_context(|| format!("reading {}", ca_file.display()))?;
    let config =
        link::tls::client_config(&pem).with_context(|| format!("in {}", ca_file.display()))?;
    Ok(Some(config))
}

/// Refuses an event id MQTT topics cannot carry.
pub fn check_event(event: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        protocol::topic::is_valid_event(event),
        "event id {event:?}: use letters, digits, '-', '_' or '.'"
    );
    Ok(())
}
