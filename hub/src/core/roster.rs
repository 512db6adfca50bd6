//! The hall's arbiters: each enrolled by name with a key of their own, drawn at random when
//! the chief arbiter (or the technician) enrols them. Their pager's login, their page login
//! and the seal on their pager's commands all come from that key, so what the audit trail
//! says an arbiter did, that arbiter's own credential did. Enrolling a name again gives a
//! new key (the old one stops working); revoking the name retires it. An enrolment may name
//! the zones the arbiter watches and their language: what their phone is sent.

use std::collections::BTreeMap;

use protocol::seal::NodeKey;

use crate::core::alerts::Language;

/// Arbiters enrolled at once: a hall's team is a few dozen.
pub const MAX_ARBITERS: usize = 500;

/// An enrolled arbiter: their own key, and what the chief arbiter enrolled them for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub key: NodeKey,
    /// The zones they watch; empty: as the configuration says (`[[arbiters]]`), or the
    /// whole hall.
    pub zones: Vec<String>,
    /// Their language; `None`: as the configuration says, or English.
    pub language: Option<Language>,
    /// How often their links were renewed: their page login (the link their phone opens)
    /// and their phone's subscription derive from the key and this, so a renewal retires a
    /// lost phone's or a shown link and leaves their key, pager and signature.
    pub renewed: u32,
}

impl Member {
    /// An arbiter enrolled with `key` alone: zones and language from the configuration.
    pub fn with_key(key: NodeKey) -> Member {
        Member {
            key,
            zones: Vec::new(),
            language: None,
            renewed: 0,
        }
    }
}

/// Every enrolled arbiter, by name.
#[derive(Debug, Default)]
pub struct Roster {
    keys: BTreeMap<String, Member>,
}

impl Roster {
    /// The roster the journal kept.
    pub fn restore(keys: BTreeMap<String, Member>) -> Roster {
        Roster { keys }
    }

    /// `name`'s key, if enrolled.
    pub fn key(&self, name: &str) -> Option<&NodeKey> {
        self.keys.get(name).map(|m| &m.key)
    }

    /// `name`'s enrolment, if enrolled.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.keys.get(name)
    }

    /// Whether `name` may be enrolled: known already (a new key), or room for one more.
    pub fn has_room_for(&self, name: &str) -> bool {
        self.keys.contains_key(name) || self.keys.len() < MAX_ARBITERS
    }

    /// `name` enrolled as `member`, replacing an earlier key.
    pub fn enrol(&mut self, name: String, member: Member) {
        self.keys.insert(name, member);
    }

    /// `name`'s links renewed (the old ones stop working); their enrolment as it is now,
    /// `None` unless they are enrolled.
    pub fn renew_links(&mut self, name: &str) -> Option<Member> {
        let member = self.keys.get_mut(name)?;
        member.renewed += 1;
        Some(member.clone())
    }

    /// `name` revoked; whether it was enrolled.
    pub fn revoke(&mut self, name: &str) -> bool {
        self.keys.remove(name).is_some()
    }

    /// Every enrolled arbiter and their key, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &NodeKey)> {
        self.keys.iter().map(|(name, m)| (name.as_str(), &m.key))
    }

    /// Every enrolled arbiter, by name.
    pub fn members(&self) -> impl Iterator<Item = (&str, &Member)> {
        self.keys.iter().map(|(name, m)| (name.as_str(), m))
    }

    /// The enrolled arbiters' names.
    pub fn names(&self) -> Vec<String> {
        self.keys.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enrolling_again_replaces_the_key_and_revoking_retires_it() {
        let mut roster = Roster::default();
        let first = NodeKey::from_bytes([1; 32]);
        let second = NodeKey::from_bytes([2; 32]);
        roster.enrol("IA Berg".into(), Member::with_key(first.clone()));
        assert_eq!(roster.key("IA Berg"), Some(&first));
        roster.enrol("IA Berg".into(), Member::with_key(second.clone()));
        assert_eq!(roster.key("IA Berg"), Some(&second));
        assert!(roster.revoke("IA Berg"));
        assert!(!roster.revoke("IA Berg"));
        assert_eq!(roster.key("IA Berg"), None);
        assert!(roster.names().is_empty());
    }

    #[test]
    fn the_roster_is_bounded_but_a_known_name_can_always_be_enrolled_again() {
        let mut roster = Roster::default();
        for n in 0..MAX_ARBITERS {
            roster.enrol(
                format!("arbiter {n}"),
                Member::with_key(NodeKey::from_bytes([3; 32])),
            );
        }
        assert!(!roster.has_room_for("one too many"));
        assert!(roster.has_room_for("arbiter 7"));
    }
}
