//! The arbiters' token on a fresh hub, as Jupyter does it: without a configured token the
//! hub makes one at its first start, keeps it in its data directory (its owner's only) and
//! prints a login link (`edge/http/login.rs`); `hub login-link` prints it again. A cluster's
//! hubs keep the first hub's.

use std::path::{Path, PathBuf};

use super::secret_file;

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

/// 32 random bytes in hex: nothing in it needs escaping in a URL, a header or a shell.
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
}
