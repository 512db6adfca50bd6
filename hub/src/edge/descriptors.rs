//! File descriptors: the broker's connections, the journal's files, HTTP and the page's live
//! streams share the process's one limit. A connection storm on the broker must not take the
//! descriptors the journal and the arbiters' pages need, so the broker gets what is left
//! after a reserve for them, and the limit is first raised as far as the system allows.

use super::http::{connections, slots};
use super::mqtt::broker::PENDING_CONNECTS;

/// Kept back from the broker: every page stream the hub allows, every other HTTP
/// connection, the journal's files, the hub's own sessions, and the sockets the broker holds
/// before their CONNECT.
pub const RESERVED: u64 =
    slots::OVERALL as u64 + connections::MAX_CONNECTIONS as u64 + PENDING_CONNECTS as u64 + 256;
/// The broker's connections at most: a hall of 1,000 boards, pagers and screens, with room for
/// reconnect storms.
pub const BROKER_MAX: usize = 20_010;

/// Raises the soft limit on open files to the hard limit; returns the limit now in force.
pub fn raise_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            let (soft, _) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap_or((1_024, 1_024));
            tracing::warn!(error = %e, soft, "the open-files limit could not be raised");
            soft
        }
    }
}

/// How many connections the embedded broker may hold under a process limit of `limit`
/// descriptors: what the reserve leaves, at most [`BROKER_MAX`]; under a limit too small for
/// the reserve (a developer's 1,024), half of it.
pub fn broker_connections(limit: u64) -> usize {
    let spare = if limit >= 2 * RESERVED {
        limit - RESERVED
    } else {
        limit / 2
    };
    usize::try_from(spare).map_or(BROKER_MAX, |n| n.min(BROKER_MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_gets_what_the_reserve_leaves_up_to_its_maximum() {
        assert_eq!(broker_connections(1_024), 512, "a default soft limit: half");
        assert_eq!(broker_connections(20_000), 20_000 - RESERVED as usize);
        assert_eq!(broker_connections(65_536), BROKER_MAX);
    }

    #[test]
    fn the_limit_raised_is_at_least_the_limit_before() {
        let (before, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        let now = raise_limit();
        assert!(
            now >= before && now <= hard,
            "{before} → {now} (hard {hard})"
        );
    }
}
