//! MQTT over TLS with the hall's own certificate authority pinned: a node or a pager trusts
//! the hub (or broker) whose certificate the hall CA signed, and nothing else: not the
//! internet's authorities, not another hall's hub.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("the CA file holds no certificate")]
    NoCertificate,
    #[error("the CA file: {0}")]
    Pem(String),
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// A client configuration that trusts exactly the certificates in `ca_pem` (the hall CA's).
pub fn client_config(ca_pem: &[u8]) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        let cert = cert.map_err(|e| TlsError::Pem(e.to_string()))?;
        roots.add(cert)?;
    }
    if roots.is_empty() {
        return Err(TlsError::NoCertificate);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_certificate_is_refused_clearly() {
        assert!(matches!(
            client_config(b"not a certificate"),
            Err(TlsError::NoCertificate)
        ));
    }
}
