//! What pagers get over MQTT, and what they send back: JSON any MQTT client can read.
//!
//! ```text
//! zeitnot/{event}/alerts/{zone}       {"change": "raised", "id": 7, "board": 12, "kind": …,
//!                                      "texts": {"en": {"text": …, "action": …}, "nb": …}}
//! zeitnot/{event}/alerts/{zone}/open  {"zone": "A", "at": …, "alerts": [ … ]}   (retained)
//! zeitnot/{event}/pager/command       {"id": 7, "action": "ack" | "resolve", "by": "ola",
//!                                      "note": "…"}
//! ```

use std::collections::BTreeMap;

use protocol::seal::NodeKey;
use serde::{Deserialize, Serialize};

use crate::core::alerts::{Alert, AlertAction, AlertChange, AlertCommand, Change, Language};
use crate::core::ids::AlertId;

/// An alert's text and action in one language.
#[derive(Debug, Serialize)]
pub struct Text {
    pub text: String,
    pub action: String,
}

/// The texts of `alert` in every language, by code.
pub fn texts(alert: &Alert) -> BTreeMap<&'static str, Text> {
    Language::ALL
        .into_iter()
        .map(|language| {
            let rendered = alert.in_language(language);
            (
                language.code(),
                Text {
                    text: rendered.text,
                    action: rendered.action,
                },
            )
        })
        .collect()
}

#[derive(Serialize)]
struct ChangeMessage<'a> {
    change: Change,
    #[serde(flatten)]
    alert: &'a Alert,
    texts: BTreeMap<&'static str, Text>,
}

/// One change of an alert, as published on its zone's topic.
pub fn change_message(change: &AlertChange) -> Vec<u8> {
    serde_json::to_vec(&ChangeMessage {
        change: change.change,
        alert: &change.alert,
        texts: texts(&change.alert),
    })
    .expect("an alert serializes")
}

#[derive(Serialize)]
struct OpenList<'a> {
    zone: &'a str,
    at: u64,
    /// How many alerts are open in the zone; `alerts` holds the most urgent of them.
    open: usize,
    alerts: Vec<serde_json::Value>,
}

/// At most this many alerts in a retained open list: a pager's screen shows fewer, and an
/// MQTT message must stay well under the packet size limit (256 KiB) whatever the hall does.
pub const OPEN_LIST_LIMIT: usize = 100;

/// The retained list of a zone's open alerts, the most urgent first (at most
/// [`OPEN_LIST_LIMIT`]); each as its change message without the history (`GET
/// /api/alerts/{id}` has it).
pub fn open_list(zone: &str, at: u64, mut alerts: Vec<&Alert>) -> Vec<u8> {
    alerts.sort_by(|a, b| crate::core::alerts::by_urgency(a, b));
    let open = alerts.len();
    let alerts = alerts
        .into_iter()
        .take(OPEN_LIST_LIMIT)
        .map(|alert| {
            let message = ChangeMessage {
                change: alert.history.last().map_or(Change::Raised, |s| s.change),
                alert,
                texts: texts(alert),
            };
            let mut value = serde_json::to_value(&message).expect("an alert serializes");
            if let Some(fields) = value.as_object_mut() {
                fields.remove("history");
            }
            value
        })
        .collect();
    serde_json::to_vec(&OpenList {
        zone,
        at,
        open,
        alerts,
    })
    .expect("alerts serialize")
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PagerCommand {
    id: AlertId,
    action: AlertAction,
    by: Option<String>,
    note: Option<String>,
    /// When the pager sent it (Unix ms) and its seal under the arbiter's key: see
    /// [`PagerSeal`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sent_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mac: Option<String>,
}

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

/// A pager's command as JSON, sealed with the arbiter's key.
pub fn sealed_command(
    key: &NodeKey,
    event: &str,
    id: AlertId,
    command: AlertCommand,
    sent_ms: u64,
) -> Vec<u8> {
    let mac = key.derive(&sealed_text(event, id, &command, sent_ms));
    serde_json::to_vec(&PagerCommand {
        id,
        action: command.action,
        by: Some(command.by),
        note: command.note,
        sent_ms: Some(sent_ms),
        mac: Some(mac),
    })
    .expect("a command serializes")
}

/// Reads a pager's command: the alert's id, what to do, and its seal if it has one.
pub fn parse_command(
    payload: &[u8],
) -> Result<(AlertId, AlertCommand, Option<PagerSeal>), serde_json::Error> {
    let command: PagerCommand = serde_json::from_slice(payload)?;
    let seal = match (command.sent_ms, command.mac) {
        (Some(sent_ms), Some(mac)) => Some(PagerSeal { sent_ms, mac }),
        _ => None,
    };
    Ok((
        command.id,
        AlertCommand {
            action: command.action,
            by: command.by.unwrap_or_else(|| "pager".to_owned()),
            note: command.note,
        },
        seal,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alerts::{AlertKind, AlertState, Facts, Incident, Occurrence, Severity};
    use protocol::BoardNo;

    fn alert(id: u64) -> Alert {
        let board = BoardNo(id as u16);
        let kind = AlertKind::TimeTrouble;
        Alert {
            id: AlertId(id),
            board: Some(board),
            players: Some("Carlsen, Magnus – Nakamura, Hikaru".into()),
            zone: "hall".into(),
            kind,
            severity: Severity::Normal,
            article: Some("12.3".into()),
            facts: Facts::default(),
            text: "Board 1: White is short of time: 12 s left.".into(),
            action: "Be present at the board.".into(),
            deadline: None,
            state: AlertState::Raised,
            raised_at: id,
            updated_at: id,
            to: vec!["chief".into()],
            escalated_at: None,
            acknowledged: None,
            resolved: None,
            outcome: None,
            incident: Incident {
                board: Some(board),
                kind,
                occurrence: Occurrence::ONLY,
                round: Default::default(),
            },
            history: Vec::new(),
        }
    }

    #[test]
    fn an_open_list_stays_far_under_the_mqtt_packet_limit_whatever_is_open() {
        // A whole hall in time trouble: 1,000 open alerts in one zone.
        let alerts: Vec<Alert> = (1..=1_000).map(alert).collect();
        let list = open_list("hall", 0, alerts.iter().collect());
        assert!(list.len() < 256 * 1024 / 2, "{} bytes", list.len());
        let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
        assert_eq!(list["open"], 1_000);
        assert_eq!(list["alerts"].as_array().unwrap().len(), OPEN_LIST_LIMIT);
        // The newest first among equals; no history in the list.
        assert_eq!(list["alerts"][0]["id"], 1_000);
        assert!(list["alerts"][0].get("history").is_none());
    }

    #[test]
    fn commands_read_with_defaults_and_refuse_what_is_not_one() {
        let (id, command, seal) = parse_command(br#"{"id": 7, "action": "ack"}"#).unwrap();
        assert_eq!(
            (id, command.action, command.by.as_str()),
            (AlertId(7), AlertAction::Ack, "pager")
        );
        let (_, command, _) =
            parse_command(br#"{"id": 7, "action": "resolve", "by": "ola", "note": "1-0"}"#)
                .unwrap();
        assert_eq!(command.note.as_deref(), Some("1-0"));
        assert!(parse_command(b"ack 7").is_err());
        assert!(parse_command(br#"{"id": 7, "action": "delete"}"#).is_err());
        assert!(parse_command(br#"{"id": 7, "action": "ack", "boom": 1}"#).is_err());
        assert_eq!(seal, None, "an unsealed command");
    }

    #[test]
    fn only_the_named_arbiters_key_seals_a_command() {
        let command = AlertCommand {
            action: AlertAction::Resolve,
            by: "IA Berg".into(),
            note: Some("0-1".into()),
        };
        let sealed = |key: &NodeKey, event: &str, command: AlertCommand| {
            sealed_command(key, event, AlertId(7), command, 1_000)
        };
        let berg = NodeKey::from_bytes([8; 32]);
        let payload = sealed(&berg, "open", command.clone());
        let (id, read, seal) = parse_command(&payload).unwrap();
        assert_eq!((id, &read), (AlertId(7), &command));
        let seal = seal.expect("sealed");
        assert!(verify_command(&berg, "open", id, &read, &seal));
        // Another event, another alert, another note, another arbiter's name, another key.
        assert!(!verify_command(&berg, "other", id, &read, &seal));
        assert!(!verify_command(&berg, "open", AlertId(8), &read, &seal));
        let noted = AlertCommand {
            note: Some("1-0".into()),
            ..command.clone()
        };
        assert!(!verify_command(&berg, "open", id, &noted, &seal));
        let renamed = AlertCommand {
            by: "IA Dahl".into(),
            ..command.clone()
        };
        assert!(!verify_command(&berg, "open", id, &renamed, &seal));
        let dahl = NodeKey::from_bytes([9; 32]);
        let (_, read, seal) = parse_command(&sealed(&dahl, "open", command)).unwrap();
        assert!(!verify_command(&berg, "open", id, &read, &seal.unwrap()));
    }

    #[test]
    fn a_pager_tells_the_hubs_lists_from_anyone_elses() {
        let signer = HubSigner::from_hall(&NodeKey::from_bytes([5; 32]));
        let public = hub_key(&signer.public_hex()).unwrap();
        let list = open_list("A", 7, vec![&alert(3)]);
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
        let empty = signer.sign(topic, 1_000, open_list("A", 1_000, Vec::new()));
        let one_open = signer.sign(topic, 2_000, open_list("A", 2_000, vec![&alert(3)]));
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
            !pager.fresh(topic, &open_list("A", 3_000, Vec::new())),
            "no stamp"
        );
    }
}
