//! The journal stream's records, sealed: only the hall's hubs can read them, and only theirs
//! are taken. Whoever else reads the stream (a NATS login, a server that joined the cluster,
//! a backup, a disk) holds ciphertext; whatever a stranger appends fails to open and is
//! refused.
//!
//! ```text
//! record = 2 ‖ nonce (12 bytes, random) ‖ ChaCha20-Poly1305(key, nonce, aad, message)
//! key    = the hall secret's derived key for "cluster/journal"
//! aad    = "zeitnot/journal\0" ‖ event ‖ "\0" ‖ the record's stream sequence (8 bytes BE)
//! ```
//!
//! The sequence in the associated data pins a record to its place: a hub appends with the
//! stream's expected last sequence, so it knows where its record lands, and a stranger who
//! appends a copy of a genuine record elsewhere appends one that does not open. The nonce
//! is random, not the sequence: two hubs that both believe they are active seal different
//! records for the same place (the fence refuses one), which a counter nonce would turn
//! into a reused one.

use protocol::seal::NodeKey;
use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};

/// The first byte of a sealed record (a record's format byte in the clear was 1).
const SEALED: u8 = 2;

/// The key the hall's hubs seal and open the stream's records with.
pub struct JournalSeal {
    key: LessSafeKey,
    event: String,
}

/// A record that does not open: not sealed under this hall's key at this place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("journal stream record {seq} does not open with this hall's key: {why}")]
pub struct Foreign {
    pub seq: u64,
    pub why: &'static str,
}

impl JournalSeal {
    pub fn new(hall: &NodeKey, event: &str) -> JournalSeal {
        let bytes = hall.derive_key("cluster/journal");
        let key = UnboundKey::new(&CHACHA20_POLY1305, bytes.bytes())
            .expect("ChaCha20-Poly1305 takes a 32-byte key");
        JournalSeal {
            key: LessSafeKey::new(key),
            event: event.to_owned(),
        }
    }

    /// `message` sealed for the stream's record number `seq`.
    pub fn seal(&self, seq: u64, message: &[u8]) -> Vec<u8> {
        let nonce: [u8; NONCE_LEN] = rand::random();
        let mut out = Vec::with_capacity(1 + NONCE_LEN + message.len() + aead::MAX_TAG_LEN);
        out.push(SEALED);
        out.extend(nonce);
        let mut sealed = message.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(self.aad(seq)),
                &mut sealed,
            )
            .expect("a journal record fits ChaCha20-Poly1305's limit");
        out.extend(sealed);
        out
    }

    /// The message of record `seq`, if this hall's hubs sealed it there.
    pub fn open(&self, seq: u64, record: &[u8]) -> Result<Vec<u8>, Foreign> {
        let foreign = |why| Foreign { seq, why };
        let [format, rest @ ..] = record else {
            return Err(foreign("empty"));
        };
        if *format != SEALED {
            return Err(foreign("not sealed"));
        }
        let (nonce, sealed) = rest
            .split_first_chunk::<NONCE_LEN>()
            .ok_or(foreign("cut short"))?;
        let mut sealed = sealed.to_vec();
        let message = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(*nonce),
                Aad::from(self.aad(seq)),
                &mut sealed,
            )
            .map_err(|_| foreign("its seal fails"))?;
        let len = message.len();
        sealed.truncate(len);
        Ok(sealed)
    }

    fn aad(&self, seq: u64) -> Vec<u8> {
        let mut aad = b"zeitnot/journal\0".to_vec();
        aad.extend(self.event.as_bytes());
        aad.push(0);
        aad.extend(seq.to_be_bytes());
        aad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal(secret: u8, event: &str) -> JournalSeal {
        JournalSeal::new(&NodeKey::from_bytes([secret; 32]), event)
    }

    #[test]
    fn a_record_opens_at_its_place_under_its_halls_key_only() {
        let hub = seal(1, "open-2026");
        let record = hub.seal(7, b"the hall's writes");
        assert_ne!(&record[1 + NONCE_LEN..], b"the hall's writes".as_slice());
        assert_eq!(hub.open(7, &record).unwrap(), b"the hall's writes");
        // Moved to another place, read by another hall or for another event: refused.
        assert_eq!(hub.open(8, &record).unwrap_err().why, "its seal fails");
        assert!(seal(2, "open-2026").open(7, &record).is_err());
        assert!(seal(1, "open-2027").open(7, &record).is_err());
        // Altered anywhere: refused.
        for i in 0..record.len() {
            let mut altered = record.clone();
            altered[i] ^= 1;
            assert!(hub.open(7, &altered).is_err(), "byte {i}");
        }
    }

    #[test]
    fn the_same_message_seals_differently_each_time() {
        let hub = seal(1, "e");
        assert_ne!(hub.seal(1, b"m"), hub.seal(1, b"m"));
    }

    #[test]
    fn a_strangers_bytes_are_refused_never_a_panic() {
        let hub = seal(1, "e");
        let good = hub.seal(3, b"writes");
        for cut in 0..good.len() {
            assert!(hub.open(3, &good[..cut]).is_err());
        }
        assert_eq!(hub.open(3, b"\x01\x01{}").unwrap_err().why, "not sealed");
    }
}
