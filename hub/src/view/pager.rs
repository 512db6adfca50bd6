//! What pagers get over MQTT, and what they send back: JSON any MQTT client can read.
//!
//! ```text
//! zeitnot/{event}/alerts/{zone}       {"change": "raised", "id": 7, "board": 12, "kind": …,
//!                                      "texts": {"en": {"text": …, "action": …}, "nb": …}}
//! zeitnot/{event}/alerts/{zone}/open  {"zone": "A", "at": …, "alerts": [ … ]}   (retained)
//! zeitnot/{event}/pager/command       {"id": 7, "action": "ack" | "resolve", "by": "ola",
//!                                      "note": "…"}
//! ```

use std::collections::{BTreeMap, HashMap};

use protocol::seal::NodeKey;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

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
    alerts: Vec<&'a RawValue>,
}

/// The zones' retained lists of open alerts, each alert's entry kept while it does not
/// change: a zone's list is written again every second while any of its alerts changes, and
/// rendering its hundred alerts in every language each time held the hub's loop up for
/// milliseconds, the acknowledgements of the events behind it with it. The shell keeps one.
#[derive(Debug, Default)]
pub struct OpenLists {
    entries: HashMap<String, HashMap<AlertId, (Version, Box<RawValue>)>>,
}

/// An alert's version: every change adds a step to its history, numbered in the hall's
/// order.
type Version = (usize, u64);

fn version(alert: &Alert) -> Version {
    (
        alert.history.len(),
        alert.history.last().map_or(0, |s| s.seq),
    )
}

impl OpenLists {
    /// The retained list of `zone` at `at`: `open` alerts open, `alerts` the most urgent of
    /// them in order (the core chooses them, [`crate::core::alerts::most_urgent`]), each as
    /// its change message without the history (`GET /api/alerts/{id}` has it).
    pub fn write(&mut self, zone: &str, at: u64, open: usize, alerts: &[Alert]) -> Vec<u8> {
        let mut kept = self.entries.remove(zone).unwrap_or_default();
        // In the list's order; kept by id for the next list.
        let entries: Vec<_> = alerts
            .iter()
            .map(|alert| {
                let version = version(alert);
                let entry = match kept.remove(&alert.id) {
                    Some((was, entry)) if was == version => entry,
                    _ => listed(alert),
                };
                (alert.id, (version, entry))
            })
            .collect();
        let list = serde_json::to_vec(&OpenList {
            zone,
            at,
            open,
            alerts: entries.iter().map(|(_, (_, entry))| &**entry).collect(),
        })
        .expect("alerts serialize");
        self.entries
            .insert(zone.to_owned(), entries.into_iter().collect());
        list
    }
}

/// An alert's entry in an open list: its change message without the history.
fn listed(alert: &Alert) -> Box<RawValue> {
    let message = ChangeMessage {
        change: alert.history.last().map_or(Change::Raised, |s| s.change),
        alert,
        texts: texts(alert),
    };
    let mut value = serde_json::to_value(&message).expect("an alert serializes");
    if let Some(fields) = value.as_object_mut() {
        fields.remove("history");
    }
    serde_json::value::to_raw_value(&value).expect("an alert serializes")
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
    use crate::core::alerts::{most_urgent, AlertState, Step, OPEN_LIST_LIMIT};
    use crate::core::pager_seal::verify_command;

    fn alert(id: u64) -> Alert {
        crate::core::alerts::sample(id)
    }

    #[test]
    fn an_open_list_stays_far_under_the_mqtt_packet_limit_whatever_is_open() {
        // A whole hall in time trouble: 1,000 open alerts in one zone.
        let alerts: Vec<Alert> = (1..=1_000).map(alert).collect();
        let (open, listed) = most_urgent(alerts.iter());
        let list = OpenLists::default().write("hall", 0, open, &listed);
        assert!(list.len() < 256 * 1024 / 2, "{} bytes", list.len());
        let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
        assert_eq!(list["open"], 1_000);
        assert_eq!(list["alerts"].as_array().unwrap().len(), OPEN_LIST_LIMIT);
        assert_eq!(list["alerts"][0]["id"], 1_000);
        // No history in the list; the change is the last step's.
        assert!(list["alerts"][0].get("history").is_none());
        assert_eq!(list["alerts"][0]["change"], "raised");
    }

    #[test]
    fn a_listed_alert_is_written_again_once_it_changes() {
        let mut lists = OpenLists::default();
        let mut alerts: Vec<Alert> = (1..=3).map(alert).collect();
        let first = lists.write("hall", 0, 3, &alerts);
        assert_eq!(lists.write("hall", 0, 3, &alerts), first, "nothing changed");
        // Board 2's alert is acknowledged: a step in its history, its text anew.
        let acknowledged = &mut alerts[1];
        acknowledged.state = AlertState::Acknowledged;
        acknowledged.text = "Board 2: White is short of time: 5 s left.".into();
        acknowledged.history.push(Step {
            at: 5,
            seq: 7,
            change: Change::Acknowledged,
            by: Some("ola".into()),
            note: None,
        });
        let list: serde_json::Value =
            serde_json::from_slice(&lists.write("hall", 5, 3, &alerts)).unwrap();
        let entry = &list["alerts"][1];
        assert_eq!(entry["change"], "acknowledged");
        assert_eq!(entry["state"], "acknowledged");
        assert_eq!(entry["text"], "Board 2: White is short of time: 5 s left.");
        // Another zone keeps its own entries.
        let other: serde_json::Value =
            serde_json::from_slice(&lists.write("stage", 5, 1, &alerts[..1])).unwrap();
        assert_eq!(other["alerts"][0]["id"], 1);
        assert_eq!(other["zone"], "stage");
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
