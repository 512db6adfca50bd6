//! The arbiters' way in on a fresh hub, as Jupyter does it: without a configured token the
//! hub makes one at its first start, keeps it in its data directory (its owner's only) and
//! prints a login link; `hub login-link` prints it again. Nothing is ever open by default.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::edge::keys::secret_file;

/// The token's file in the data directory.
pub const TOKEN_FILE: &str = "arbiter-token";

/// Where the hub's token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// The configuration or `ZEITNOT_ARBITER_TOKEN`: whoever set it knows it.
    Configured,
    /// Made at this start: nobody knows it until the link is printed.
    Made,
    /// Made at an earlier start and kept in the data directory.
    Kept,
}

/// The shortest token the hub takes from a configuration: a guessable one is no lock.
pub const MIN_CONFIGURED_LEN: usize = 16;

/// The token's file of the hub whose data directory is `data`.
pub fn token_file(data: &Path) -> PathBuf {
    data.join(TOKEN_FILE)
}

/// Keeps `token` as the hub's own (a cluster's hubs share the first hub's).
pub fn keep_token(data: &Path, token: &str) -> anyhow::Result<()> {
    secret_file::private_dir(data)?;
    secret_file::write(&token_file(data), token)?;
    Ok(())
}

/// The arbiters' token: `configured` if given, else the one kept in `data`, else a new one
/// (256 random bits), written there readable by the hub's user only.
pub fn arbiter_token(
    data: &Path,
    configured: Option<String>,
) -> anyhow::Result<(String, TokenSource)> {
    if let Some(token) = configured.filter(|t| !t.is_empty()) {
        anyhow::ensure!(
            token.len() >= MIN_CONFIGURED_LEN && token.is_ascii() && !token.contains(char::is_whitespace),
            "the arbiter token must be at least {MIN_CONFIGURED_LEN} printable characters without spaces"
        );
        return Ok((token, TokenSource::Configured));
    }
    let file = token_file(data);
    if let Some(kept) = secret_file::read(&file)?.filter(|t| !t.is_empty()) {
        return Ok((kept, TokenSource::Kept));
    }
    secret_file::private_dir(data)?;
    let token = new_token();
    secret_file::write(&file, &token)?;
    Ok((token, TokenSource::Made))
}

/// Arbiter's page login (their credential for the page and the API, as `Authorization:
/// Bearer` or in their login link and their phone's), derived from their own key and their
/// links' renewals: revoking them, enrolling them again or renewing their links retires it.
pub fn arbiter_login(member: &crate::core::roster::Member) -> String {
    match member.renewed {
        0 => member.key.derive("page/login"),
        n => member.key.derive(&format!("page/login/{n}")),
    }
}

/// An arbiter's credentials as `POST /api/arbiters/enrol` and `hub enrol-arbiter` answer
/// and `hub pager --key-file` reads them: the enrolment, their page login and the hall CA
/// (`ca`, PEM) the pager pins for TLS.
pub fn arbiter_credentials(
    enrolment: &crate::core::hub::ArbiterEnrolment,
    ca: &str,
) -> serde_json::Value {
    serde_json::json!({
        "arbiter": enrolment.arbiter,
        "key": enrolment.key.to_text(),
        "mqtt_user": enrolment.mqtt_user,
        "mqtt_password": enrolment.mqtt_password,
        "mqtt_client_id_prefix": enrolment.mqtt_client_id_prefix,
        "hub_key": enrolment.hub_key,
        "login": arbiter_login(&crate::core::roster::Member::with_key(enrolment.key.clone())),
        "ca": ca,
    })
}

/// 32 random bytes in hex: nothing in it needs escaping in a URL, a header or a shell.
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The login links of a hub listening on `http`: the address itself, or for a hub on every
/// interface, loopback and the machine's name.
pub fn links(http: SocketAddr, token: &str, scheme: &str) -> Vec<String> {
    let port = http.port();
    let hosts = if http.ip().is_unspecified() {
        let mut hosts = vec!["127.0.0.1".to_owned()];
        hosts.extend(machine_name());
        hosts
    } else if http.is_ipv6() {
        vec![format!("[{}]", http.ip())]
    } else {
        vec![http.ip().to_string()]
    };
    hosts
        .into_iter()
        .map(|host| format!("{scheme}://{host}:{port}/?token={token}"))
        .collect()
}

/// The machine's host name, as the hall's network may know it.
fn machine_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty() && name != "localhost").then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_hub_makes_its_token_once_and_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("journal");
        let (made, source) = arbiter_token(&data, None).unwrap();
        assert_eq!(source, TokenSource::Made);
        assert_eq!(made.len(), 64);
        let (kept, source) = arbiter_token(&data, None).unwrap();
        assert_eq!((kept.as_str(), source), (made.as_str(), TokenSource::Kept));
        let (configured, source) =
            arbiter_token(&data, Some("a-token-from-the-unit".into())).unwrap();
        assert_eq!(
            (configured.as_str(), source),
            ("a-token-from-the-unit", TokenSource::Configured)
        );
    }

    #[test]
    fn a_short_configured_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(arbiter_token(dir.path(), Some("1234".into())).is_err());
        assert!(arbiter_token(dir.path(), Some("with a space in the middle".into())).is_err());
    }

    #[test]
    fn the_link_names_where_the_hub_listens() {
        let links = links("10.0.0.5:8080".parse().unwrap(), "abc", "http");
        assert_eq!(links, ["http://10.0.0.5:8080/?token=abc"]);
        let links = links_for_all();
        assert_eq!(links[0], "http://127.0.0.1:8080/?token=abc");
    }

    fn links_for_all() -> Vec<String> {
        links("0.0.0.0:8080".parse().unwrap(), "abc", "http")
    }
}
