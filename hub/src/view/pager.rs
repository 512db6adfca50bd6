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
use crate::core::pager_seal::{command_mac, PagerSeal};

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

/// A pager's command as JSON, sealed with the arbiter's key.
pub fn sealed_command(
    key: &NodeKey,
    event: &str,
    id: AlertId,
    command: AlertCommand,
    sent_ms: u64,
) -> Vec<u8> {
    let mac = command_mac(key, event, id, &command, sent_ms);
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
    use crate::core::pager_seal::verify_command;

    fn alert(id: u64) -> Alert {
        crate::core::alerts::sample(id)
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
}
