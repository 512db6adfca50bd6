//! Which of the hub's listeners speak TLS, and the handshakes they do with the hall CA's
//! certificate ([`super::hall_ca`]). By default a listener on loopback is plain (the tests,
//! an SSH tunnel, a reverse proxy on the same machine) and any other is TLS: nothing a node,
//! a pager or a browser sends across the hall's network is readable. Plain on the hall's
//! network must be said (`[access] tls = "off"`, `--tls off`) and is warned about.

use std::net::SocketAddr;
use std::sync::Arc;

/// The configuration's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum TlsChoice {
    /// TLS on every listener but those on loopback.
    #[default]
    Auto,
    /// TLS on every listener, loopback too.
    On,
    /// Plain TCP everywhere (warned about where the listener is not on loopback).
    Off,
}

impl TlsChoice {
    /// Whether the listener on `addr` speaks TLS.
    pub fn on(self, addr: SocketAddr) -> bool {
        match self {
            TlsChoice::On => true,
            TlsChoice::Off => false,
            TlsChoice::Auto => !addr.ip().is_loopback(),
        }
    }
}

/// The embedded broker's handshake: rustls with the hub's certificate, in the connection's
/// own task (`rumqttd::ExternalTls`, a patch of ours).
pub fn mqtt_handshake(config: Arc<rustls::ServerConfig>) -> rumqttd::ExternalTls {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    rumqttd::ExternalTls(Arc::new(move |stream| {
        let acceptor = acceptor.clone();
        Box::pin(async move {
            let stream = acceptor.accept(stream).await?;
            Ok(Box::new(stream) as Box<dyn rumqttd::NetworkStream>)
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_plain_and_the_hall_network_is_tls_unless_said_otherwise() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let hall: SocketAddr = "0.0.0.0:8443".parse().unwrap();
        let v6: SocketAddr = "[::1]:8080".parse().unwrap();
        assert!(!TlsChoice::Auto.on(loopback));
        assert!(!TlsChoice::Auto.on(v6));
        assert!(TlsChoice::Auto.on(hall));
        assert!(TlsChoice::On.on(loopback));
        assert!(!TlsChoice::Off.on(hall));
    }
}
