//! The hall's arbiters: each enrolled by name with a key of their own, drawn at random when
//! the chief arbiter (or the technician) enrols them. Their pager's login, their page login
//! and the seal on their pager's commands all come from that key, so what the audit trail
//! says an arbiter did, that arbiter's own credential did. Enrolling a name again gives a
//! new key (the old one stops working); revoking the name retires it.

use std::collections::BTreeMap;

use protocol::seal::NodeKey;

/// Arbiters enrolled at once: a hall's team is a few dozen.
pub const MAX_ARBITERS: usize = 500;

/// Every enrolled arbiter's key, by name.
#[derive(Debug, Default)]
pub struct Roster {
    keys: BTreeMap<String, NodeKey>,
}

impl Roster {
    /// The roster the journal kept.
    pub fn restore(keys: BTreeMap<String, NodeKey>) -> Roster {
        Roster { keys }
    }

    /// `name`'s key, if enrolled.
    pub fn key(&self, name: &str) -> Option<&NodeKey> {
        self.keys.get(name)
    }

    /// Whether `name` may be enrolled: known already (a new key), or room for one more.
    pub fn has_room_for(&self, name: &str) -> bool {
        self.keys.contains_key(name) || self.keys.len() < MAX_ARBITERS
    }

    /// `name` enrolled with `key`, replacing an earlier key.
    pub fn enrol(&mut self, name: String, key: NodeKey) {
        self.keys.insert(name, key);
    }

    /// `name` revoked; whether it was enrolled.
    pub fn revoke(&mut self, name: &str) -> bool {
        self.keys.remove(name).is_some()
    }

    /// Every enrolled arbiter and their key, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &NodeKey)> {
        self.keys.iter().map(|(name, key)| (name.as_str(), key))
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
        roster.enrol("IA Berg".into(), first.clone());
        assert_eq!(roster.key("IA Berg"), Some(&first));
        roster.enrol("IA Berg".into(), second.clone());
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
            roster.enrol(format!("arbiter {n}"), NodeKey::from_bytes([3; 32]));
        }
        assert!(!roster.has_room_for("one too many"));
        assert!(roster.has_room_for("arbiter 7"));
    }
}
