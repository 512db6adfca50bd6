//! The secrets a clustered hall's hubs share, carried from hub to hub by the technician,
//! never through NATS: `hub cluster-secrets` writes them from the first hub's data
//! directory to a file (mode 0600), `hub cluster-join` puts them into each other hub's.
//!
//! - the hall secret: the hub's broker password, its signing key (pagers, phones) and the
//!   key the journal stream is sealed under ([`super::seal`]) derive from it;
//! - the MQTT session id, the same on whichever hub is active (the gateway keeps what the
//!   boards sent meanwhile for it);
//! - the arbiters' token the first hub made;
//! - the hall CA (certificate and key), which nodes, pagers and browsers pin.

use std::path::Path;

use anyhow::Context;
use protocol::seal::{NodeKey, KEY_LEN};
use serde::{Deserialize, Serialize};

use crate::edge::journal::Journal;
use crate::edge::keys::{arbiter_token, hall_ca, secret_file};

/// The file's format, so that a later build can read an earlier one's.
const FORMAT: u32 = 1;

/// The hall's shared secrets, as the file holds them (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HallSecrets {
    pub zeitnot_hall_secrets: u32,
    /// 64 hex digits.
    pub hall_secret: String,
    pub session_secret: String,
    pub arbiter_token: String,
    pub ca_cert: String,
    pub ca_key: String,
}

impl HallSecrets {
    /// The secrets of the hub whose data directory is `data` and journal `journal` (made
    /// there if it has none yet: the hall's first hub can export before its first start).
    pub fn of(data: &Path, journal: &Journal) -> anyhow::Result<HallSecrets> {
        let hall = journal.hall_secret().context("the hall's secret")?;
        let session_secret = journal.session_secret().context("the MQTT session id")?;
        journal.flush()?;
        let (arbiter_token, _) = arbiter_token::arbiter_token(data, None)?;
        let (ca_cert, ca_key) = hall_ca::files(data)?;
        Ok(HallSecrets {
            zeitnot_hall_secrets: FORMAT,
            hall_secret: hall.to_text(),
            session_secret,
            arbiter_token,
            ca_cert,
            ca_key,
        })
    }

    pub fn hall_key(&self) -> anyhow::Result<NodeKey> {
        NodeKey::parse(&self.hall_secret)
            .map_err(|_| anyhow::anyhow!("the hall secret is not {} hex digits", 2 * KEY_LEN))
    }

    /// Reads the file `hub cluster-secrets` wrote.
    pub fn read(path: &Path) -> anyhow::Result<HallSecrets> {
        let text = secret_file::read(path)?
            .with_context(|| format!("{} does not exist", path.display()))?;
        let secrets: HallSecrets = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a file of the hall's secrets (hub cluster-secrets writes one)",
                path.display()
            )
        })?;
        anyhow::ensure!(
            secrets.zeitnot_hall_secrets == FORMAT,
            "{} has format {}; this build reads {FORMAT}",
            path.display(),
            secrets.zeitnot_hall_secrets
        );
        secrets.hall_key()?;
        anyhow::ensure!(
            !secrets.session_secret.is_empty() && !secrets.arbiter_token.is_empty(),
            "{} lacks the session id or the arbiters' token",
            path.display()
        );
        Ok(secrets)
    }

    /// Writes them to `path`, readable by its owner only.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self).expect("the secrets serialize");
        secret_file::write(path, &json)
    }

    /// Makes them the secrets of the hub whose data directory is `data`. Refused when the
    /// journal there already holds another hall's records: its records would not open.
    pub fn adopt(&self, data: &Path, journal: &Journal) -> anyhow::Result<()> {
        let hall = self.hall_key()?;
        if journal.holds_records()? {
            let kept = journal.hall_secret().context("the hall's secret")?;
            anyhow::ensure!(
                kept.bytes() == hall.bytes(),
                "{} holds the records of another hall (another hall secret): join with an empty data directory",
                data.display()
            );
        }
        journal
            .adopt_secrets(&hall, &self.session_secret)
            .context("keeping the hall's secrets")?;
        arbiter_token::keep_token(data, &self.arbiter_token)?;
        hall_ca::adopt(data, &self.ca_cert, &self.ca_key)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hubs_secrets_go_to_another_through_the_file_and_the_file_is_its_owners() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let first = Journal::open(&a).unwrap();
        let secrets = HallSecrets::of(&a, &first).unwrap();
        let file = dir.path().join("hall-secrets.json");
        secrets.write(&file).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let read = HallSecrets::read(&file).unwrap();
        assert_eq!(read, secrets);

        let second = Journal::open(&b).unwrap();
        read.adopt(&b, &second).unwrap();
        assert_eq!(HallSecrets::of(&b, &second).unwrap(), secrets);
    }

    #[test]
    fn a_journal_of_another_hall_is_not_rekeyed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let secrets = HallSecrets::of(&a, &Journal::open(&a).unwrap()).unwrap();
        let other = Journal::open(&b).unwrap();
        other.hall_secret().unwrap();
        other.set_stream_seq(12).unwrap();
        let refused = secrets.adopt(&b, &other).unwrap_err().to_string();
        assert!(refused.contains("another hall"), "{refused}");
    }

    #[test]
    fn a_file_that_is_not_the_halls_secrets_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.json");
        std::fs::write(&file, r#"{"hall_secret": "00"}"#).unwrap();
        let refused = format!("{:#}", HallSecrets::read(&file).unwrap_err());
        assert!(refused.contains("hub cluster-secrets"), "{refused}");
    }
}
