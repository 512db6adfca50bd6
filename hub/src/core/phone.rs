//! The arbiter's phone: what it is sent and what it may do. The hub serves the subscribing
//! side of ntfy's protocol to each enrolled arbiter (docs/phones.md): a topic and a token
//! of their own, both derived from their key, so revoking or enrolling them again retires
//! both. Each alert of the arbiter's zones is a notification; its buttons carry a MAC of the
//! alert and the act under the arbiter's key, so a tap is that arbiter's signed command,
//! useless for another alert or in another arbiter's hands.
//!
//! The notifications are a view of the alerts' histories: every step of an alert the phone
//! sees, in the order of [`Step::seq`], which the journal keeps; a phone that reconnects
//! says the last one it got and is sent the rest, nothing twice.

use protocol::seal::NodeKey;

use crate::core::alerts::routing::Routing;
use crate::core::alerts::{Alert, Change, Language, Severity, Step};
use crate::core::ids::AlertId;
use crate::core::roster::Member;

/// An arbiter's phone subscription: the ntfy topic and the access token the app sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneCredentials {
    /// `zeitnot-` and 32 hex digits: unguessable, and a valid ntfy topic.
    pub topic: String,
    /// `tk_` and 29 hex digits, as ntfy's tokens look.
    pub token: String,
}

impl PhoneCredentials {
    /// The subscription of the arbiter enrolled as `member`: from their key and how often
    /// their links were renewed.
    pub fn of(member: &Member) -> PhoneCredentials {
        let (key, renewed) = (&member.key, member.renewed);
        let purpose = |what: &str| match renewed {
            0 => format!("phone/{what}"),
            n => format!("phone/{what}/{n}"),
        };
        let token = key.derive(&purpose("ntfy-token"));
        PhoneCredentials {
            topic: format!("zeitnot-{}", key.derive(&purpose("ntfy-topic"))),
            token: format!("tk_{}", &token[..29]),
        }
    }
}

/// What a phone's button does to an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhoneAct {
    Acknowledge,
    Resolve,
}

impl PhoneAct {
    /// As it stands in the button's URL.
    pub fn as_str(self) -> &'static str {
        match self {
            PhoneAct::Acknowledge => "ack",
            PhoneAct::Resolve => "resolve",
        }
    }

    pub fn parse(text: &str) -> Option<PhoneAct> {
        match text {
            "ack" => Some(PhoneAct::Acknowledge),
            "resolve" => Some(PhoneAct::Resolve),
            _ => None,
        }
    }

    fn purpose(self, alert: AlertId) -> String {
        format!("phone/act\0{}\0{}", self.as_str(), alert.0)
    }

    /// The MAC a button carries: `act` on `alert`, under the arbiter's key.
    pub fn mac(self, key: &NodeKey, alert: AlertId) -> String {
        key.derive(&self.purpose(alert))
    }

    /// Whether `mac` is this act's on `alert` under `key` (in constant time).
    pub fn checks(self, key: &NodeKey, alert: AlertId, mac: &str) -> bool {
        key.derives(&self.purpose(alert), mac)
    }
}

/// What an arbiter's phone is sent: the alerts of their zones, and as chief the escalated
/// ones, in their language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneWatch {
    pub arbiter: String,
    /// `None`: the whole hall.
    pub zones: Option<Vec<String>>,
    /// Escalated alerts reach them wherever they are.
    pub chief: bool,
    pub language: Language,
}

impl PhoneWatch {
    /// Arbiter `name`'s, enrolled as `member`: the enrolment's zones and language, else the
    /// configuration's (`[[arbiters]]`), else the whole hall in English. A chief arbiter of
    /// the configuration watches the whole hall unless enrolled for zones.
    pub fn of(name: &str, member: &Member, routing: &Routing) -> PhoneWatch {
        let configured = routing.arbiter(name);
        let chief = configured.is_some_and(|a| a.chief);
        let zones = if !member.zones.is_empty() {
            Some(member.zones.clone())
        } else {
            configured
                .filter(|a| !a.chief && !a.zones.is_empty())
                .map(|a| a.zones.clone())
        };
        PhoneWatch {
            arbiter: name.to_owned(),
            chief: chief || zones.is_none(),
            zones,
            language: member
                .language
                .or(configured.map(|a| a.language))
                .unwrap_or_default(),
        }
    }

    /// Whether `alert`'s zone is one this phone watches.
    pub fn watches_zone(&self, zone: &str) -> bool {
        self.zones
            .as_ref()
            .is_none_or(|zones| zones.iter().any(|z| z == zone))
    }

    /// Whether the phone is told of `step` of `alert`: its zone's alerts, and a chief's
    /// escalated ones from the escalation on. Alerts for the record only (severity info)
    /// call nobody.
    pub fn sees(&self, alert: &Alert, step: &Step) -> bool {
        if alert.severity == Severity::Info {
            return false;
        }
        self.watches_zone(&alert.zone)
            || (self.chief && alert.escalated_at.is_some_and(|at| step.at >= at))
    }
}

/// What a step does to the phone's notification of an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// Shown (raised), shown again (updated) or rung louder (escalated).
    Show,
    /// Handled by someone: shown as handled, then cleared.
    Clear,
}

impl Notice {
    pub fn of(change: Change) -> Notice {
        match change {
            Change::Raised | Change::Updated | Change::Escalated | Change::Reopened => Notice::Show,
            Change::Acknowledged | Change::Resolved | Change::Expired => Notice::Clear,
        }
    }
}

/// One step of one alert, for a phone.
#[derive(Debug, Clone, Copy)]
pub struct PhoneStep<'a> {
    pub alert: &'a Alert,
    pub step: &'a Step,
}

/// The steps `watch`'s phone is told of after step `after` (0: all), oldest first, at
/// most the last `limit`.
pub fn steps_after<'a>(
    alerts: impl Iterator<Item = &'a Alert>,
    watch: &PhoneWatch,
    after: u64,
    limit: usize,
) -> Vec<PhoneStep<'a>> {
    let mut steps: Vec<PhoneStep<'a>> = alerts
        .flat_map(|alert| {
            alert
                .history
                .iter()
                .map(move |step| PhoneStep { alert, step })
        })
        .filter(|s| s.step.seq > after && watch.sees(s.alert, s.step))
        .collect();
    steps.sort_unstable_by_key(|s| s.step.seq);
    let skip = steps.len().saturating_sub(limit);
    steps.drain(..skip);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alerts::routing::{Arbiter, Zone};
    use crate::core::ids::BoardNo;

    fn routing() -> Routing {
        Routing {
            zones: vec![
                Zone {
                    name: "A".into(),
                    boards: vec![BoardNo(1)..=BoardNo(10)],
                },
                Zone {
                    name: "C".into(),
                    boards: vec![BoardNo(21)..=BoardNo(30)],
                },
            ],
            arbiters: vec![
                Arbiter {
                    name: "Ola".into(),
                    zones: vec!["A".into()],
                    language: Language::Norwegian,
                    chief: false,
                },
                Arbiter {
                    name: "Eva".into(),
                    zones: vec![],
                    language: Language::Swedish,
                    chief: true,
                },
            ],
        }
    }

    fn member(zones: &[&str]) -> Member {
        Member {
            key: NodeKey::from_bytes([7; 32]),
            zones: zones.iter().map(|z| (*z).to_owned()).collect(),
            language: None,
            renewed: 0,
        }
    }

    #[test]
    fn an_enrolment_names_the_zones_else_the_configuration_does() {
        let routing = routing();
        let berg = PhoneWatch::of("IA Berg", &member(&["C"]), &routing);
        assert_eq!(berg.zones, Some(vec!["C".to_owned()]));
        assert!(!berg.chief);
        let ola = PhoneWatch::of("Ola", &member(&[]), &routing);
        assert_eq!(ola.zones, Some(vec!["A".to_owned()]));
        assert_eq!(ola.language, Language::Norwegian);
        let eva = PhoneWatch::of("Eva", &member(&[]), &routing);
        assert!(eva.chief && eva.zones.is_none());
        // Nobody said what a new name watches: the whole hall.
        let anyone = PhoneWatch::of("FA Lund", &member(&[]), &routing);
        assert!(anyone.watches_zone("A") && anyone.watches_zone("hall"));
    }

    #[test]
    fn credentials_and_buttons_belong_to_one_arbiter_and_one_alert() {
        let berg = NodeKey::from_bytes([1; 32]);
        let lund = NodeKey::from_bytes([2; 32]);
        let mine = PhoneCredentials::of(&Member::with_key(berg.clone()));
        assert_ne!(mine, PhoneCredentials::of(&Member::with_key(lund.clone())));
        // A renewed link is another topic and token: the old one is retired.
        let renewed = Member {
            renewed: 1,
            ..Member::with_key(berg.clone())
        };
        let new = PhoneCredentials::of(&renewed);
        assert!(new.topic != mine.topic && new.token != mine.token);
        assert!(mine.topic.len() <= 64 && mine.topic.starts_with("zeitnot-"));
        assert_eq!(mine.token.len(), 32);
        let mac = PhoneAct::Acknowledge.mac(&berg, AlertId(7));
        assert!(PhoneAct::Acknowledge.checks(&berg, AlertId(7), &mac));
        assert!(!PhoneAct::Acknowledge.checks(&berg, AlertId(8), &mac));
        assert!(!PhoneAct::Resolve.checks(&berg, AlertId(7), &mac));
        assert!(!PhoneAct::Acknowledge.checks(&lund, AlertId(7), &mac));
    }
}
