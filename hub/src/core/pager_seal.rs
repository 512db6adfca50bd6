//! The pagers' seals: what the hub tells the pagers is signed (Ed25519, under a key derived
//! from the hall's secret) with the topic and time it was signed for, and what a pager sends
//! back is sealed with its arbiter's own key (`core::roster`). The pagers' JSON is
//! `view::pager`'s; this is only what proves who said it, and when.

use protocol::seal::NodeKey;
use serde::Deserialize;

use crate::core::alerts::{AlertAction, AlertCommand};
use crate::core::ids::AlertId;

/// The hub's signature on what it tells the pagers (alert changes, the retained open lists):
/// Ed25519 under a key derived from the hall's secret, so a pager that holds the public half
/// (`hub_key` in its key file) recognises a list somebody else published in the hub's place.
/// Appended to the JSON object as its last field, `"sig"`, over the object's bytes without it:
/// pagers that do not check it read the JSON as before.
pub struct HubSigner(ed25519_dalek::SigningKey);

/// What the signature field adds: `,"sig":"` 128 hex digits `"}` instead of the closing `}`.
const SIG_FIELD: &str = ",\"sig\":\"";
const SIGNED_SUFFIX: usize = SIG_FIELD.len() + 128 + 2;

impl HubSigner {
    pub fn from_hall(hall: &NodeKey) -> HubSigner {
        HubSigner(ed25519_dalek::SigningKey::from_bytes(
            hall.derive_key("hub/pagers").bytes(),
        ))
    }

    /// The public half, as pagers' key files hold it: 64 hex digits.
    pub fn public_hex(&self) -> String {
        self.0
            .verifying_key()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// `json` (an object) bound to the `topic` it is published on and the hub's time
    /// `signed_ms` (two fields added at its end: a pager refuses it on another topic, or
    /// older than what the hub said last there), with its signature as the last field.
    pub fn sign(&self, topic: &str, signed_ms: u64, mut json: Vec<u8>) -> Vec<u8> {
        use ed25519_dalek::Signer;
        json.pop(); // the closing brace
        if json.len() > 1 {
            json.push(b',');
        }
        let topic = serde_json::to_string(topic).expect("a string serializes");
        json.extend_from_slice(format!("\"topic\":{topic},\"signed_ms\":{signed_ms}}}").as_bytes());
        let signature = self.0.sign(&json).to_bytes();
        json.pop(); // the closing brace
        json.extend_from_slice(SIG_FIELD.as_bytes());
        for b in signature {
            json.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        json.extend_from_slice(b"\"}");
        json
    }
}

/// Reads a hub's public key (64 hex digits).
pub fn hub_key(hex: &str) -> Option<ed25519_dalek::VerifyingKey> {
    let bytes = decode_hex::<32>(hex)?;
    ed25519_dalek::VerifyingKey::from_bytes(&bytes).ok()
}

fn decode_hex<const N: usize>(hex: &str) -> Option<[u8; N]> {
    let hex = hex.as_bytes();
    if hex.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// Where and when the hub signed `payload` (its `topic` and `signed_ms` fields).
pub fn signed_where_and_when(payload: &[u8]) -> Option<(String, u64)> {
    #[derive(Deserialize)]
    struct Stamp {
        topic: String,
        signed_ms: u64,
    }
    let stamp: Stamp = serde_json::from_slice(payload).ok()?;
    Some((stamp.topic, stamp.signed_ms))
}

/// What a pager remembers of what the hub signed: per topic, the latest time seen. A
/// message signed for another topic, or older than the latest on its topic (a recorded list
/// played back), is stale.
#[derive(Debug, Default)]
pub struct Freshness(std::collections::HashMap<String, u64>);

impl Freshness {
    /// Whether `payload`, signed by the hub and arriving on `topic`, is as fresh as anything
    /// the hub said there before; if so it becomes the latest.
    pub fn fresh(&mut self, topic: &str, payload: &[u8]) -> bool {
        let Some((signed_for, signed_ms)) = signed_where_and_when(payload) else {
            return false;
        };
        if signed_for != topic {
            return false;
        }
        let latest = self.0.entry(topic.to_owned()).or_insert(0);
        if signed_ms < *latest {
            return false;
        }
        *latest = signed_ms;
        true
    }
}

/// Whether `payload` carries the hub's signature over the rest of it.
pub fn signed_by_hub(hub: &ed25519_dalek::VerifyingKey, payload: &[u8]) -> bool {
    let Some(at) = payload.len().checked_sub(SIGNED_SUFFIX) else {
        return false;
    };
    let suffix = &payload[at..];
    if !suffix.starts_with(SIG_FIELD.as_bytes()) || !suffix.ends_with(b"\"}") {
        return false;
    }
    let hex = std::str::from_utf8(&suffix[SIG_FIELD.len()..suffix.len() - 2]).unwrap_or("");
    let Some(signature) = decode_hex::<64>(hex) else {
        return false;
    };
    let mut body = payload[..at].to_vec();
    body.push(b'}');
    let signature = ed25519_dalek::Signature::from_bytes(&signature);
    hub.verify_strict(&body, &signature).is_ok()
}

/// A pager command's seal: the arbiter's own key (`core::roster`) over the event, the command and
/// when it was sent, so only the arbiter named in `by` can have sent it, and only lately.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagerSeal {
    pub sent_ms: u64,
    pub mac: String,
}

/// What a pager command's seal covers, one field per line.
fn sealed_text(event: &str, id: AlertId, command: &AlertCommand, sent_ms: u64) -> String {
    let action = match command.action {
        AlertAction::Ack => "ack",
        AlertAction::Resolve => "resolve",
    };
    let note = command.note.as_deref().unwrap_or("");
    format!(
        "zeitnot/pager\n{event}\n{id}\n{action}\n{}\n{note}\n{sent_ms}",
        command.by
    )
}

/// The seal's MAC of `command` under `key`, the arbiter's key, sent at `sent_ms`.
pub fn command_mac(
    key: &NodeKey,
    event: &str,
    id: AlertId,
    command: &AlertCommand,
    sent_ms: u64,
) -> String {
    key.derive(&sealed_text(event, id, command, sent_ms))
}

/// Whether `seal` is `command`'s under `key`, the key of the arbiter it names.
pub fn verify_command(
    key: &NodeKey,
    event: &str,
    id: AlertId,
    command: &AlertCommand,
    seal: &PagerSeal,
) -> bool {
    key.derives(&sealed_text(event, id, command, seal.sent_ms), &seal.mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pager_tells_the_hubs_lists_from_anyone_elses() {
        let signer = HubSigner::from_hall(&NodeKey::from_bytes([5; 32]));
        let public = hub_key(&signer.public_hex()).unwrap();
        let list = br#"{"zone":"A","open":1,"alerts":[{"id":3}]}"#.to_vec();
        let topic = "zeitnot/ev/alerts/A/open";
        let signed = signer.sign(topic, 7, list.clone());
        assert!(signed_by_hub(&public, &signed));
        let json: serde_json::Value = serde_json::from_slice(&signed).unwrap();
        assert_eq!(json["zone"], "A", "still the same JSON with fields more");
        assert_eq!(
            (json["topic"].as_str(), json["signed_ms"].as_u64()),
            (Some(topic), Some(7))
        );
        assert!(!signed_by_hub(&public, &list), "unsigned");
        // Another hall's signature, and one altered byte.
        let other = HubSigner::from_hall(&NodeKey::from_bytes([6; 32]));
        assert!(!signed_by_hub(&public, &other.sign(topic, 7, list.clone())));
        let mut altered = signed.clone();
        altered[10] ^= 1;
        assert!(!signed_by_hub(&public, &altered));
        assert!(!signed_by_hub(&public, b"{}"));
        assert!(signed_by_hub(
            &public,
            &signer.sign(topic, 1, b"{}".to_vec())
        ));
    }

    #[test]
    fn a_pager_refuses_the_hubs_own_words_played_back_later_or_elsewhere() {
        let signer = HubSigner::from_hall(&NodeKey::from_bytes([5; 32]));
        let topic = "zeitnot/ev/alerts/A/open";
        let empty = signer.sign(
            topic,
            1_000,
            br#"{"zone":"A","open":0,"alerts":[]}"#.to_vec(),
        );
        let one_open = signer.sign(
            topic,
            2_000,
            br#"{"zone":"A","open":1,"alerts":[{"id":3}]}"#.to_vec(),
        );
        let mut pager = Freshness::default();
        assert!(pager.fresh(topic, &empty));
        assert!(pager.fresh(topic, &one_open));
        assert!(
            pager.fresh(topic, &one_open),
            "the same again (QoS 1) is no older"
        );
        // The old "nothing open" list replayed to hide the alert: older than the latest.
        assert!(!pager.fresh(topic, &empty));
        // A list of zone A published on zone B's topic.
        assert!(!pager.fresh("zeitnot/ev/alerts/B/open", &one_open));
        assert!(
            !pager.fresh(topic, br#"{"zone":"A","open":0,"alerts":[]}"#),
            "no stamp"
        );
    }
}
