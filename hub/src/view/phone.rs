//! What an arbiter's phone is sent, as ntfy's protocol has it (NOTES, *Phones*): a line of
//! JSON per event. Each step of an alert the phone sees is one or two events:
//!
//! ```text
//! {"id":"z0000000007m","time":…,"event":"message","topic":…,"sequence_id":"alert-3",
//!  "title":"Board 12 · 6.8","message":"White's flag fell. …","priority":5,
//!  "tags":["rotating_light"],"click":"…/phone#alert-3",
//!  "actions":[{"action":"http","label":"Acknowledge","url":"…/api/phone/alerts/3/ack",
//!              "method":"POST","headers":{…},"body":"{\"mac\":…}","clear":true}, …]}
//! {"id":"z0000000009c","time":…,"event":"message_clear","topic":…,"sequence_id":"alert-3"}
//! ```
//!
//! An alert handled by anyone is shown as handled (for apps that do not know
//! `message_clear`) and then cleared. Ids are the step's number and a letter, so a phone
//! that resumes `since` an id gets exactly what followed it.

use protocol::seal::NodeKey;
use serde::Serialize;
use serde_json::{json, Value};

use crate::core::alerts::{Change, Severity};
use crate::core::phone::{Notice, PhoneAct, PhoneStep, PhoneWatch};

/// Where a phone resumes from (`?since=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Everything held.
    All,
    /// Nothing before now.
    None,
    /// After this event: the step's number, and whether its first event (`m`) was the
    /// last one got (a clear may follow).
    After { seq: u64, shown_only: bool },
    /// From this Unix time (seconds) on.
    Time(u64),
}

impl Since {
    /// `since` as ntfy takes it: `all`, `none`, a message id, a Unix time, or a duration
    /// (`30s`, `10m`, `2h`, `1d`) before `now_s`. `None` when it is none of these.
    pub fn parse(since: &str, now_s: u64) -> Option<Since> {
        match since {
            "all" => return Some(Since::All),
            "none" | "latest" => return Some(Since::None),
            _ => {}
        }
        if let Some(id) = since.strip_prefix('z') {
            let (digits, part) = id.split_at(id.len().checked_sub(1)?);
            let seq = digits.parse().ok()?;
            return match part {
                "m" => Some(Since::After {
                    seq,
                    shown_only: true,
                }),
                "c" => Some(Since::After {
                    seq,
                    shown_only: false,
                }),
                _ => None,
            };
        }
        if let Ok(time) = since.parse::<u64>() {
            return Some(Since::Time(time));
        }
        let unit = match since.chars().last()? {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        let n: u64 = since[..since.len() - 1].parse().ok()?;
        Some(Since::Time(now_s.saturating_sub(n.saturating_mul(unit))))
    }
}

/// The id of a step's event: `m` its message, `c` its clear.
fn event_id(seq: u64, part: char) -> String {
    format!("z{seq:010}{part}")
}

/// Where the phone's links point: the hub as the phone reaches it, and the phone's topic.
#[derive(Debug, Clone)]
pub struct PhoneLinks<'a> {
    /// `https://hub.hall:8080`, no trailing slash.
    pub base: &'a str,
    pub topic: &'a str,
    /// The subscription's token: the buttons' requests carry it.
    pub token: &'a str,
}

/// ntfy's `open` event, first on every stream.
pub fn open_event(links: &PhoneLinks, now_s: u64) -> Value {
    json!({"id": event_id(0, 'o'), "time": now_s, "event": "open", "topic": links.topic})
}

/// ntfy's `keepalive` event.
pub fn keepalive_event(links: &PhoneLinks, now_s: u64) -> Value {
    json!({"id": event_id(0, 'k'), "time": now_s, "event": "keepalive", "topic": links.topic})
}

/// The events of `step` for `watch`'s phone (whose arbiter's key is `key`) that come after
/// `since`.
pub fn events(
    step: PhoneStep,
    watch: &PhoneWatch,
    key: &NodeKey,
    links: &PhoneLinks,
    since: Since,
) -> Vec<Value> {
    let seq = step.step.seq;
    let time = step.step.at / 1000;
    let wanted = |part: char| match since {
        Since::All => true,
        Since::None => false,
        Since::Time(t) => time >= t,
        Since::After {
            seq: after,
            shown_only,
        } => seq > after || (seq == after && shown_only && part == 'c'),
    };
    let mut out = Vec::new();
    if wanted('m') {
        out.push(message(step, watch, key, links));
    }
    if Notice::of(step.step.change) == Notice::Clear && wanted('c') {
        out.push(json!({
            "id": event_id(seq, 'c'),
            "time": time,
            "event": "message_clear",
            "topic": links.topic,
            "sequence_id": sequence_id(step),
        }));
    }
    out
}

fn sequence_id(step: PhoneStep) -> String {
    format!("alert-{}", step.alert.id.0)
}

#[derive(Serialize)]
struct Action {
    id: &'static str,
    action: &'static str,
    label: String,
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    headers: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    clear: bool,
}

/// The `message` event of `step`.
fn message(step: PhoneStep, watch: &PhoneWatch, key: &NodeKey, links: &PhoneLinks) -> Value {
    let alert = step.alert;
    let language = watch.language;
    let rendered = alert.in_language(language);
    let (place, what) = rendered
        .text
        .split_once(": ")
        .map_or((rendered.text.as_str(), ""), |(p, w)| (p, w));
    let mut title = match &alert.article {
        Some(article) => format!("{place} · {article}"),
        None => place.to_owned(),
    };
    let i = language.index();
    let notice = Notice::of(step.step.change);
    let mut body = String::new();
    if let Some(players) = &alert.players {
        body.push_str(players);
        body.push('\n');
    }
    let priority;
    let mut tags = vec![];
    match (notice, step.step.change) {
        (Notice::Clear, change) => {
            let word = match change {
                Change::Acknowledged => ACKNOWLEDGED[i],
                Change::Resolved => RESOLVED[i],
                _ => EXPIRED[i],
            };
            title = format!("✓ {title}");
            body.push_str(word);
            if let Some(by) = &step.step.by {
                body.push_str(": ");
                body.push_str(by);
            }
            priority = 1;
            tags.push("white_check_mark");
        }
        (Notice::Show, change) => {
            if change == Change::Escalated {
                title = format!("{} · {title}", ESCALATED[i]);
            }
            body.push_str(what);
            body.push('\n');
            body.push_str(&rendered.action);
            priority = match (change, alert.severity) {
                (Change::Escalated, _) | (_, Severity::Urgent) => 5,
                (_, Severity::High) => 4,
                _ => 3,
            };
            tags.push(if priority == 5 {
                "rotating_light"
            } else {
                "warning"
            });
        }
    }
    let board_link = format!("{}/phone#alert-{}", links.base, alert.id.0);
    let mut actions = Vec::new();
    if notice == Notice::Show && alert.state.is_open() {
        let mut act = |act: PhoneAct, label: &str| {
            let mac = act.mac(key, alert.id);
            actions.push(Action {
                id: act.as_str(),
                action: "http",
                label: label.to_owned(),
                url: format!(
                    "{}/api/phone/alerts/{}/{}",
                    links.base,
                    alert.id.0,
                    act.as_str()
                ),
                method: Some("POST"),
                headers: Some(json!({
                    "Authorization": format!("Bearer {}", links.token),
                    "Content-Type": "application/json",
                })),
                body: Some(json!({ "mac": mac }).to_string()),
                clear: true,
            });
        };
        if alert.acknowledged.is_none() {
            act(PhoneAct::Acknowledge, ACKNOWLEDGE[i]);
        }
        actions.push(Action {
            id: "open",
            action: "view",
            label: OPEN[i].to_owned(),
            url: board_link.clone(),
            method: None,
            headers: None,
            body: None,
            clear: false,
        });
    }
    json!({
        "id": event_id(step.step.seq, 'm'),
        "time": step.step.at / 1000,
        "event": "message",
        "topic": links.topic,
        "sequence_id": sequence_id(step),
        "title": title,
        "message": body.trim_end(),
        "priority": priority,
        "tags": tags,
        "click": board_link,
        "actions": actions,
    })
}

/// One word in each language, in the order of
/// [`Language::ALL`](crate::core::alerts::Language::ALL).
type Words = [&'static str; 6];

/// The button's label: the acceptance checks read the English one.
const ACKNOWLEDGE: Words = [
    "Acknowledge",
    "Kvitter",
    "Kvittera",
    "Kvittér",
    "Kuittaa",
    "Nyugtáz",
];
const OPEN: Words = ["Open", "Åpne", "Öppna", "Åbn", "Avaa", "Megnyit"];
const ACKNOWLEDGED: Words = [
    "Acknowledged",
    "Kvittert",
    "Kvitterad",
    "Kvitteret",
    "Kuitattu",
    "Nyugtázva",
];
const RESOLVED: Words = ["Resolved", "Løst", "Löst", "Løst", "Ratkaistu", "Megoldva"];
const EXPIRED: Words = [
    "No longer needed",
    "Ikke lenger nødvendig",
    "Behövs inte längre",
    "Ikke længere nødvendig",
    "Ei enää tarpeen",
    "Már nem szükséges",
];
const ESCALATED: Words = [
    "Escalated",
    "Eskalert",
    "Eskalerad",
    "Eskaleret",
    "Eskaloitu",
    "Eszkalálva",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alerts::{sample, Alert, AlertState, Language, Step};
    use crate::core::phone::steps_after;

    fn step(seq: u64, at: u64, change: Change) -> Step {
        Step {
            at,
            seq,
            change,
            by: Some("IA Berg".into()),
            note: None,
        }
    }

    /// Zone B's arbiter; the chief, who watches nothing but what escalates.
    fn watches() -> (PhoneWatch, PhoneWatch) {
        let zone_b = PhoneWatch {
            arbiter: "IA Berg".into(),
            zones: Some(vec!["B".into()]),
            chief: false,
            language: Language::English,
        };
        let chief = PhoneWatch {
            arbiter: "IA Eva".into(),
            zones: Some(vec![]),
            chief: true,
            language: Language::English,
        };
        (zone_b, chief)
    }

    /// Two urgent alerts of zone B: 1 raised (step 1) and acknowledged (step 4); 2 raised
    /// (step 2), escalated (step 3).
    fn alerts() -> Vec<Alert> {
        let mut first = sample(1);
        first.zone = "B".into();
        first.severity = Severity::Urgent;
        first.state = AlertState::Acknowledged;
        first.history = vec![
            step(1, 1_000, Change::Raised),
            step(4, 9_000, Change::Acknowledged),
        ];
        let mut second = sample(2);
        second.zone = "B".into();
        second.severity = Severity::Urgent;
        second.escalated_at = Some(5_000);
        second.history = vec![
            step(2, 2_000, Change::Raised),
            step(3, 5_000, Change::Escalated),
        ];
        vec![first, second]
    }

    /// The arbiter's key, and where their phone's links point, in these tests.
    fn key() -> NodeKey {
        NodeKey::from_bytes([9; 32])
    }

    const LINKS: PhoneLinks<'static> = PhoneLinks {
        base: "http://hub:8080",
        topic: "zeitnot-t",
        token: "tk_t",
    };

    fn ids(alerts: &[Alert], watch: &PhoneWatch, since: Since) -> Vec<String> {
        let (key, links) = (key(), LINKS);
        steps_after(alerts.iter(), watch, 0, 100)
            .into_iter()
            .flat_map(|s| events(s, watch, &key, &links, since))
            .map(|e| {
                format!(
                    "{}:{}",
                    e["event"].as_str().unwrap(),
                    e["id"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn a_phone_gets_its_zones_steps_in_the_journals_order_and_resumes_after_its_last() {
        let alerts = alerts();
        let (zone_b, chief) = watches();
        assert_eq!(
            ids(&alerts, &zone_b, Since::All),
            [
                "message:z0000000001m",
                "message:z0000000002m",
                "message:z0000000003m",
                "message:z0000000004m",
                "message_clear:z0000000004c",
            ]
        );
        // Asleep after the acknowledgement's first event: only its clear is missed.
        let after = Since::parse("z0000000004m", 0).unwrap();
        assert_eq!(ids(&alerts, &zone_b, after), ["message_clear:z0000000004c"]);
        // The chief watches no zone: only the escalation, from its step on.
        assert_eq!(ids(&alerts, &chief, Since::All), ["message:z0000000003m"]);
    }

    #[test]
    fn an_escalation_rings_loudest_and_a_handled_alert_has_no_button() {
        let alerts = alerts();
        let (zone_b, _) = watches();
        let (key, links) = (key(), LINKS);
        let steps = steps_after(alerts.iter(), &zone_b, 0, 100);
        let escalated = &events(steps[2], &zone_b, &key, &links, Since::All)[0];
        assert_eq!(escalated["priority"], 5);
        assert!(escalated["title"]
            .as_str()
            .unwrap()
            .starts_with("Escalated · Board 2"));
        let ack = &escalated["actions"][0];
        assert_eq!(
            (ack["action"].as_str(), ack["label"].as_str()),
            (Some("http"), Some("Acknowledge"))
        );
        assert_eq!(ack["url"], "http://hub:8080/api/phone/alerts/2/ack");
        let mac = PhoneAct::Acknowledge.mac(&key, crate::core::ids::AlertId(2));
        assert_eq!(ack["body"], json!({ "mac": mac }).to_string());
        let handled = &events(steps[3], &zone_b, &key, &links, Since::All)[0];
        assert_eq!(handled["priority"], 1);
        assert_eq!(
            handled["message"].as_str().unwrap().lines().last(),
            Some("Acknowledged: IA Berg")
        );
        assert!(handled["actions"].as_array().unwrap().is_empty());
    }

    #[test]
    fn since_takes_what_ntfy_takes() {
        assert_eq!(Since::parse("all", 1000), Some(Since::All));
        assert_eq!(Since::parse("none", 1000), Some(Since::None));
        assert_eq!(
            Since::parse(&event_id(42, 'm'), 0),
            Some(Since::After {
                seq: 42,
                shown_only: true
            })
        );
        assert_eq!(
            Since::parse(&event_id(42, 'c'), 0),
            Some(Since::After {
                seq: 42,
                shown_only: false
            })
        );
        assert_eq!(Since::parse("10m", 1000), Some(Since::Time(400)));
        assert_eq!(
            Since::parse("1700000000", 0),
            Some(Since::Time(1_700_000_000))
        );
        for bad in ["", "z", "zx", "z12q", "10y", "-5", "abc"] {
            assert_eq!(Since::parse(bad, 1000), None, "{bad}");
        }
    }
}
