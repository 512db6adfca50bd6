//! The MQTT topic scheme.
//!
//! ```text
//! zeitnot/{event}/board/{n}/up     node → hub: postcard-encoded Uplink, QoS 0 (the hub's Ack
//!                                  acknowledges it; the node resends until then)
//! zeitnot/{event}/board/{n}/down   hub → node: postcard-encoded Downlink, QoS 0
//! zeitnot/{event}/alerts/{zone}       hub → pagers: each change of an alert, JSON, QoS 1
//! zeitnot/{event}/alerts/{zone}/open  hub → pagers: the zone's open alerts, JSON, retained
//! zeitnot/{event}/pager/command       pagers → hub: acknowledge or resolve, JSON, QoS 1
//! zeitnot/{event}/broadcast/{round}/board/{n}  hub → public: each move, JSON, retained
//! zeitnot/{event}/status              hub → pagers: whether its journal works, JSON, retained
//! ```
//!
//! `{event}` names the tournament (letters, digits, `-`, `_`, `.`), so several events can
//! share a broker; `{n}` is the board number in decimal without leading zeros. The hub
//! subscribes to `zeitnot/{event}/board/+/up`; each node to its own `down` topic. The board
//! number in the topic must equal the one inside the message, or the hub rejects it.

use alloc::format;
use alloc::string::String;

use crate::BoardNo;

/// The first level of every Zeitnot topic.
pub const ROOT: &str = "zeitnot";

/// An event id is usable in a topic: non-empty, at most 64 characters of `[A-Za-z0-9._-]`.
pub fn is_valid_event(event: &str) -> bool {
    !event.is_empty()
        && event.len() <= 64
        && event
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Where the hub publishes each change of an alert in `zone`.
pub fn alerts(event: &str, zone: &str) -> String {
    format!("{ROOT}/{event}/alerts/{zone}")
}

/// The retained list of `zone`'s open alerts: a pager that connects has the backlog at once.
pub fn open_alerts(event: &str, zone: &str) -> String {
    format!("{ROOT}/{event}/alerts/{zone}/open")
}

/// The public live feed of a board: each move as JSON (after the broadcast delay).
pub fn broadcast_move(event: &str, round: usize, board: BoardNo) -> String {
    format!("{ROOT}/{event}/broadcast/{round}/board/{}", board.0)
}

/// Every board's live feed of `event`, every round (what a broadcast screen subscribes to).
pub fn broadcast_filter(event: &str) -> String {
    format!("{ROOT}/{event}/broadcast/#")
}

/// The hub's status for the pagers: whether its journal works (retained).
pub fn hub_status(event: &str) -> String {
    format!("{ROOT}/{event}/status")
}

/// Where pagers send acknowledgements and resolutions.
pub fn pager_command(event: &str) -> String {
    format!("{ROOT}/{event}/pager/command")
}

/// Where a node publishes its events.
pub fn uplink(event: &str, board: BoardNo) -> String {
    format!("{ROOT}/{event}/board/{}/up", board.0)
}

/// Where the hub answers a node.
pub fn downlink(event: &str, board: BoardNo) -> String {
    format!("{ROOT}/{event}/board/{}/down", board.0)
}

/// What the hub subscribes to: every board's uplink.
pub fn uplink_filter(event: &str) -> String {
    format!("{ROOT}/{event}/board/+/up")
}

/// Every board's downlink (each node subscribes to its own): how a broker names them all.
pub fn downlink_filter(event: &str) -> String {
    format!("{ROOT}/{event}/board/+/down")
}

/// The board number of an uplink topic of `event`, or `None` if the topic is not one.
pub fn parse_uplink(event: &str, topic: &str) -> Option<BoardNo> {
    let rest = topic.strip_prefix(ROOT)?.strip_prefix('/')?;
    let rest = rest.strip_prefix(event)?.strip_prefix("/board/")?;
    let number = rest.strip_suffix("/up")?;
    if number.is_empty() || number.starts_with('0') || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse().ok().map(BoardNo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uplink_topic_round_trips() {
        let topic = uplink("olympiad-2026", BoardNo(412));
        assert_eq!(topic, "zeitnot/olympiad-2026/board/412/up");
        assert_eq!(parse_uplink("olympiad-2026", &topic), Some(BoardNo(412)));
    }

    #[test]
    fn foreign_topics_are_not_uplinks() {
        for topic in [
            "zeitnot/other/board/1/up",
            "zeitnot/ev/board/1/down",
            "zeitnot/ev/board/01/up",
            "zeitnot/ev/board//up",
            "zeitnot/ev/board/70000/up",
            "zeitnot/ev/board/-1/up",
            "zeitnot/ev/board/1/up/x",
        ] {
            assert_eq!(parse_uplink("ev", topic), None, "{topic}");
        }
    }

    #[test]
    fn event_ids_exclude_wildcards_and_separators() {
        assert!(is_valid_event("wc2026.r1"));
        for bad in ["", "a/b", "a+b", "a#", "a b"] {
            assert!(!is_valid_event(bad), "{bad}");
        }
    }
}
