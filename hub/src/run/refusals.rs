//! What the hub refused, logged once per source and reason: a misbehaving client sends
//! thousands of messages, and the log must still show every other source's first refusal.
//!
//! A source is what the hub can tell senders apart by: a board's uplink topic (the broker
//! does not tell a subscriber who published), the pagers' command topic, a board number.
//! After its first, a source's refusals are logged at the 2nd, 4th, 8th, … of that reason.

use std::collections::HashMap;

use crate::metrics::BadPayload;

/// How many sources are told apart; a hall has at most 10,000 boards, a stranger may make
/// up any number of topics. Beyond this, new sources share one line.
pub const MAX_SOURCES: usize = 16_384;

/// The source all further sources share once [`MAX_SOURCES`] are known.
pub const OTHER_SOURCES: &str = "(other sources)";

#[derive(Debug, Default)]
pub struct RefusalLog {
    refused: HashMap<(BadPayload, String), u64>,
}

impl RefusalLog {
    /// Notes one refusal from `source`: `Some(n)`, the source's count of this reason, when
    /// it is to be logged; `None` when it is not.
    pub fn note(&mut self, why: BadPayload, source: &str) -> Option<u64> {
        let key = if self.refused.len() < MAX_SOURCES
            || self.refused.contains_key(&(why, source.to_owned()))
        {
            (why, source.to_owned())
        } else {
            (why, OTHER_SOURCES.to_owned())
        };
        let count = self.refused.entry(key).or_insert(0);
        *count += 1;
        count.is_power_of_two().then_some(*count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_source_is_logged_first_then_at_powers_of_two() {
        let mut log = RefusalLog::default();
        let logged: Vec<u64> = (0..20)
            .filter_map(|_| log.note(BadPayload::Undecodable, "zeitnot/e/board/1/up"))
            .collect();
        assert_eq!(logged, [1, 2, 4, 8, 16]);
        // A second source and a second reason are logged at once, however many came before.
        assert_eq!(
            log.note(BadPayload::Undecodable, "zeitnot/e/board/2/up"),
            Some(1)
        );
        assert_eq!(
            log.note(BadPayload::OutOfRange, "zeitnot/e/board/1/up"),
            Some(1)
        );
    }

    #[test]
    fn a_flood_of_made_up_sources_is_bounded() {
        let mut log = RefusalLog::default();
        for i in 0..MAX_SOURCES + 1_000 {
            log.note(BadPayload::ForeignTopic, &format!("made/up/{i}"));
        }
        assert!(log.refused.len() <= MAX_SOURCES + 1);
        // Known sources go on being told apart.
        assert_eq!(log.note(BadPayload::ForeignTopic, "made/up/0"), Some(2));
    }
}
