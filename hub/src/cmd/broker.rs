//! `hub broker`: the MQTT broker the hub embeds, alone and open (no logins): what the hub's
//! figures are compared with, on the same footing (a process of its own, the same
//! configuration). Not for a hall.

use std::net::SocketAddr;

use crate::edge::{descriptors, mqtt::broker};

/// `hub broker`'s command line.
#[derive(Debug, clap::Args)]
pub struct BrokerArgs {
    /// Listen address.
    #[arg(long, default_value = "127.0.0.1:1883")]
    pub mqtt: SocketAddr,
}

/// Runs the bare broker until `shutdown` resolves.
pub async fn run(
    args: BrokerArgs,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let limit = descriptors::raise_limit();
    let connections = descriptors::broker_connections(limit);
    let started = broker::start(args.mqtt, None, None, connections, None, "", None)?;
    println!(
        "{{\"mqtt\": \"{}\", \"connections\": {connections}}}",
        started.listening.mqtt
    );
    shutdown.await;
    Ok(())
}
