//! The handshakes the hub's TLS listeners do with the hall CA's certificate
//! ([`super::hall_ca`]); which listeners speak TLS is the configuration's
//! [`crate::config::tls::TlsChoice`]. By default a listener on loopback is plain (the tests,
//! an SSH tunnel, a reverse proxy on the same machine) and any other is TLS: nothing a node,
//! a pager or a browser sends across the hall's network is readable. Plain on the hall's
//! network must be said (`[access] tls = "off"`, `--tls off`) and is warned about.

use std::sync::Arc;

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
