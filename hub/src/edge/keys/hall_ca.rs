//! The hall's certificate authority: made at the hub's first start and kept in its data
//! directory (the key its owner's only), it issues the hub's own server certificate at
//! every start (for HTTPS and MQTT over TLS) and, on request, one for an external broker.
//! Nodes and pagers get its certificate at enrolment and pin it: they trust the hall's hub
//! and broker, not the internet's authorities, and nothing on the wire is readable.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

use super::secret_file;

/// The CA's certificate in the data directory: what nodes and pagers pin.
pub const CA_CERT_FILE: &str = "hall-ca.pem";
/// The CA's private key, its owner's only.
pub const CA_KEY_FILE: &str = "hall-ca.key";

/// The hall's CA and the hub's server configurations it signed.
#[derive(Clone)]
pub struct HallTls {
    /// The CA's certificate (PEM): handed out at enrolment.
    pub ca_pem: String,
    /// The hub's certificate and key for its HTTPS listener (ALPN `http/1.1`).
    pub http: Arc<rustls::ServerConfig>,
    /// The same for its MQTT listener (no ALPN).
    pub mqtt: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for HallTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HallTls")
    }
}

/// The CA of the hub whose data directory is `data` (made on the first call) and a server
/// configuration with a certificate for `names` (host names and IP addresses), the machine's
/// addresses, `localhost` and loopback.
pub fn load_or_make(data: &Path, names: &[String]) -> anyhow::Result<HallTls> {
    let (ca_pem, issuer) = authority(data)?;
    let (cert_pem, key_pem) = issue(&issuer, &server_names(names), &[])?;
    Ok(HallTls {
        ca_pem,
        http: server_config(&cert_pem, &key_pem, Some(b"http/1.1"))?,
        mqtt: server_config(&cert_pem, &key_pem, None)?,
    })
}

/// A server certificate and key (PEM) for an external broker reached as `names`, signed by
/// the CA of the hub whose data directory is `data`.
pub fn issue_for(data: &Path, names: &[String]) -> anyhow::Result<(String, String)> {
    let (_, issuer) = authority(data)?;
    let mut all: Vec<String> = names.to_vec();
    all.extend(["localhost".to_owned(), "127.0.0.1".to_owned()]);
    // A broker's certificate also opens its routes to the other brokers (NATS's cluster
    // routes are mutual TLS: each server is the other's client).
    issue(&issuer, &all, &[ExtendedKeyUsagePurpose::ClientAuth])
}

/// The CA certificate (PEM) of the hub whose data directory is `data`, made if missing: what
/// an enrolment hands out.
pub fn ca_pem(data: &Path) -> anyhow::Result<String> {
    Ok(authority(data)?.0)
}

/// The CA of `data` as its files hold it (made if missing): certificate and key, PEM. A
/// cluster's first hub puts them in the journal stream's first record.
pub fn files(data: &Path) -> anyhow::Result<(String, String)> {
    authority(data)?;
    let cert = secret_file::read(&data.join(CA_CERT_FILE))?.context("the hall CA's certificate")?;
    let key = secret_file::read(&data.join(CA_KEY_FILE))?.context("the hall CA's key")?;
    Ok((cert, key))
}

/// Makes `cert` and `key` (PEM) the CA of `data`: a cluster's hubs share the first hub's, so
/// that the nodes, pagers and browsers that pinned it trust whichever hub is active.
pub fn adopt(data: &Path, cert: &str, key: &str) -> anyhow::Result<()> {
    KeyPair::from_pem(key).context("the hall CA's key in the hall's secrets")?;
    secret_file::private_dir(data)?;
    secret_file::write(&data.join(CA_KEY_FILE), key.trim_end())?;
    let cert_file = data.join(CA_CERT_FILE);
    // As the CA writes it, one newline at the end (`files` reads it trimmed).
    std::fs::write(&cert_file, format!("{}\n", cert.trim_end()))
        .with_context(|| format!("writing {}", cert_file.display()))?;
    Ok(())
}

/// The CA certificate's file of the hub whose data directory is `data`.
pub fn ca_file(data: &Path) -> PathBuf {
    data.join(CA_CERT_FILE)
}

/// The CA's parameters: the same at every start, so that the issuer named in what it signs
/// is the certificate the nodes pinned.
fn ca_params() -> anyhow::Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "Zeitnot hall CA");
    name.push(DnType::OrganizationName, "Zeitnot");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(2045, 1, 1);
    Ok(params)
}

/// The CA of `data`: its certificate (PEM) and the issuer that signs with its key.
fn authority(data: &Path) -> anyhow::Result<(String, Issuer<'static, KeyPair>)> {
    let cert_file = data.join(CA_CERT_FILE);
    let key_file = data.join(CA_KEY_FILE);
    if let (Some(cert), Some(key)) = (
        secret_file::read(&cert_file)?,
        secret_file::read(&key_file)?,
    ) {
        let key = KeyPair::from_pem(&key)
            .with_context(|| format!("the hall CA's key {}", key_file.display()))?;
        return Ok((cert + "\n", Issuer::new(ca_params()?, key)));
    }
    secret_file::private_dir(data)?;
    let key = KeyPair::generate().context("making the hall CA's key")?;
    let params = ca_params()?;
    let cert = params
        .self_signed(&key)
        .context("making the hall CA's certificate")?;
    // The key first: a certificate without its key would be a CA nobody can sign with.
    secret_file::write(&key_file, key.serialize_pem().trim_end())?;
    let pem = cert.pem();
    std::fs::write(&cert_file, &pem).with_context(|| format!("writing {}", cert_file.display()))?;
    tracing::info!(file = %cert_file.display(), "made the hall's certificate authority");
    Ok((pem, Issuer::new(params, key)))
}

/// A server certificate for `names` (and the `also` uses), valid from yesterday for two
/// years; (cert, key) PEM.
fn issue(
    issuer: &Issuer<'_, KeyPair>,
    names: &[String],
    also: &[ExtendedKeyUsagePurpose],
) -> anyhow::Result<(String, String)> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(
        DnType::CommonName,
        names.first().map_or("zeitnot", String::as_str),
    );
    params.subject_alt_names = names
        .iter()
        .map(|name| match name.parse::<IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => Ok(SanType::DnsName(name.clone().try_into()?)),
        })
        .collect::<Result<_, rcgen::Error>>()?;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.extended_key_usages.extend_from_slice(also);
    let now = time_now();
    params.not_before = now - std::time::Duration::from_secs(24 * 3600);
    params.not_after = now + std::time::Duration::from_secs(2 * 365 * 24 * 3600);
    let key = KeyPair::generate().context("making a server key")?;
    let cert = params
        .signed_by(&key, issuer)
        .context("signing a server certificate")?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn time_now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

/// Every name the hub may be reached under: those given, the machine's name and addresses,
/// `localhost` and loopback, each once.
fn server_names(names: &[String]) -> Vec<String> {
    let mut all: Vec<String> = names.to_vec();
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        all.push(host.trim().to_owned());
    }
    all.push("localhost".into());
    if let Ok(interfaces) = if_addrs::get_if_addrs() {
        all.extend(interfaces.into_iter().map(|i| i.ip().to_string()));
    }
    all.extend(["127.0.0.1".to_owned(), "::1".to_owned()]);
    let mut seen = std::collections::HashSet::new();
    all.retain(|n| !n.is_empty() && seen.insert(n.clone()));
    all
}

/// A rustls server configuration of `cert_pem` and `key_pem`, offering `alpn`.
fn server_config(
    cert_pem: &str,
    key_pem: &str,
    alpn: Option<&[u8]>,
) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .context("the server certificate")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).context("the server key")?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the server certificate and key")?;
    config.alpn_protocols = alpn.into_iter().map(<[u8]>::to_vec).collect();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TLS handshake over an in-memory pipe: the client pinning `ca_pem` and asking for
    /// `name`, the server showing `cert_pem`.
    async fn handshake(ca_pem: &str, name: &str, cert_pem: &str, key_pem: &str) -> bool {
        let server = server_config(cert_pem, key_pem, None).unwrap();
        let client = link::tls::client_config(ca_pem.as_bytes()).unwrap();
        let (a, b) = tokio::io::duplex(64 * 1024);
        let acceptor = tokio_rustls::TlsAcceptor::from(server);
        let connector = tokio_rustls::TlsConnector::from(client);
        let name = rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap();
        let (client, _server) = tokio::join!(connector.connect(name, a), acceptor.accept(b));
        client.is_ok()
    }

    #[tokio::test]
    async fn the_ca_is_made_once_and_only_what_it_signed_for_the_name_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_make(dir.path(), &["hub.hall".into()]).unwrap();
        let again = load_or_make(dir.path(), &[]).unwrap();
        assert_eq!(first.ca_pem, again.ca_pem, "the pinned CA stays the same");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(CA_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A broker's certificate from the same CA is trusted under its names only.
        let (cert, key) = issue_for(dir.path(), &["broker.hall".into()]).unwrap();
        assert!(handshake(&first.ca_pem, "broker.hall", &cert, &key).await);
        assert!(handshake(&first.ca_pem, "127.0.0.1", &cert, &key).await);
        assert!(!handshake(&first.ca_pem, "evil.hall", &cert, &key).await);
        // Another hall's CA does not vouch for it.
        let elsewhere = tempfile::tempdir().unwrap();
        let stranger = load_or_make(elsewhere.path(), &[]).unwrap();
        assert!(!handshake(&stranger.ca_pem, "broker.hall", &cert, &key).await);
    }
}
