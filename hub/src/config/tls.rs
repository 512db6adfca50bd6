//! Where the hub speaks TLS: `[access] tls` (or `--tls`), a choice of the configuration
//! that `run/` applies to each listener.

use std::net::SocketAddr;

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
