//! Who may publish and subscribe to what on the embedded broker: the same rules as the
//! Mosquitto ACL we ship (`deploy/mosquitto/zeitnot.acl`), so that no login reads or writes
//! beyond its own part of the hall. The hub itself is the broker's in-process link and is
//! not judged here.
//!
//! - A board node (username: its board number) publishes its board's `up` and reads its
//!   board's `down`, nothing else.
//! - An arbiter's pager (`pager-…`) reads the alerts, the open lists and the hub's status, the delayed broadcast
//!   topics, and publishes its commands.
//! - Nobody retains a message or leaves a last will: the hub's lists are retained by the hub.
//! - Nobody takes a shared subscription (`$share/GROUP/…`, judged as written): no login
//!   needs one, and every group is delivered apart.

use protocol::{identity, topic, BoardNo};
use rumqttd::{AclAction, AclRequest};

/// Subscription filters one connection may hold: a pager of every zone needs four.
pub const MAX_SUBSCRIPTIONS: usize = 8;

/// Whether `request` is allowed in the hall of event `event`.
pub fn allows(event: &str, request: &AclRequest<'_>) -> bool {
    let user = request.username.unwrap_or("");
    match request.action {
        AclAction::Will { .. } | AclAction::Publish { retain: true, .. } => false,
        // A node's publish is every event of the hall: compared level by level, without
        // formatting its topic each time.
        AclAction::Publish { topic, .. } => match role(user) {
            Role::Node(board) => is_board_topic(event, topic, board, "up"),
            Role::Pager => topic == topic::pager_command(event),
            Role::Other => false,
        },
        AclAction::Subscribe { filter } => match role(user) {
            Role::Node(board) => is_board_topic(event, filter, board, "down"),
            Role::Pager => pager_may_read(event, filter),
            Role::Other => false,
        },
    }
}

/// Whether `topic` is `zeitnot/{event}/board/{board}/{leaf}` (as `protocol::topic` makes it).
fn is_board_topic(event: &str, topic: &str, board: BoardNo, leaf: &str) -> bool {
    let mut levels = topic.split('/');
    levels.next() == Some(topic::ROOT)
        && levels.next() == Some(event)
        && levels.next() == Some("board")
        && levels
            .next()
            .is_some_and(|n| n.parse::<u16>() == Ok(board.0) && !n.starts_with('0'))
        && levels.next() == Some(leaf)
        && levels.next().is_none()
}

enum Role {
    Node(BoardNo),
    Pager,
    Other,
}

fn role(user: &str) -> Role {
    // Only the enrolled arbiters' pagers have such a login (`identity::pager_user`).
    if user.starts_with(identity::PAGER_USER_PREFIX) {
        return Role::Pager;
    }
    match user.parse::<u16>() {
        Ok(n) if identity::node_user(BoardNo(n)) == user => Role::Node(BoardNo(n)),
        _ => Role::Other,
    }
}

/// A pager's filters: a zone's alerts or open list (one zone, or `+` for all), the hub's
/// status, the delayed broadcast.
fn pager_may_read(event: &str, filter: &str) -> bool {
    if filter == topic::hub_status(event) || filter == topic::broadcast_filter(event) {
        return true;
    }
    let prefix = format!("{}/{event}/", topic::ROOT);
    let Some(rest) = filter.strip_prefix(&prefix) else {
        return false;
    };
    let levels: Vec<&str> = rest.split('/').collect();
    let literal = |level: &str| !level.is_empty() && !level.contains(['+', '#']);
    let zone = |level: &str| level == "+" || literal(level);
    match levels.as_slice() {
        // Every zone's alerts and open lists, as Mosquitto's ACL grants `alerts/#`.
        ["alerts", "#"] => true,
        ["alerts", z] => zone(z),
        ["alerts", z, "open"] => zone(z),
        ["broadcast", rest @ ..] => {
            // Any level under broadcast/, wildcards included, never out of it.
            !rest.is_empty() && rest.iter().all(|l| !l.is_empty())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(user: &str, action: AclAction<'_>) -> bool {
        allows(
            "ev",
            &AclRequest {
                client_id: "c",
                username: Some(user),
                action,
            },
        )
    }

    fn publish(user: &str, topic: &str) -> bool {
        ask(
            user,
            AclAction::Publish {
                topic,
                retain: false,
            },
        )
    }

    fn subscribe(user: &str, filter: &str) -> bool {
        ask(user, AclAction::Subscribe { filter })
    }

    #[test]
    fn a_node_writes_its_boards_up_and_reads_its_down_only() {
        assert!(publish("12", "zeitnot/ev/board/12/up"));
        assert!(subscribe("12", "zeitnot/ev/board/12/down"));
        for other in [
            "zeitnot/ev/board/13/up",
            "zeitnot/ev/board/12/down",
            "zeitnot/other/board/12/up",
            "zeitnot/ev/pager/command",
            "zeitnot/ev/alerts/A",
        ] {
            assert!(!publish("12", other), "{other}");
        }
        for other in [
            "#",
            "zeitnot/#",
            "zeitnot/ev/board/+/up",
            "zeitnot/ev/board/12/up",
            "zeitnot/ev/board/+/down",
            "zeitnot/ev/alerts/+",
        ] {
            assert!(!subscribe("12", other), "{other}");
        }
        // "012" is no board's username, nor its topic's level.
        assert!(!publish("012", "zeitnot/ev/board/12/up"));
        assert!(!publish("12", "zeitnot/ev/board/012/up"));
        assert!(!publish("12", "zeitnot/ev/board/12/up/x"));
        for board in [1, 12, 9_999] {
            let n = BoardNo(board);
            let user = identity::node_user(n);
            assert!(publish(&user, &topic::uplink("ev", n)));
            assert!(subscribe(&user, &topic::downlink("ev", n)));
        }
    }

    #[test]
    fn a_pager_reads_alerts_status_and_broadcast_and_writes_commands() {
        for ok in [
            "zeitnot/ev/alerts/A",
            "zeitnot/ev/alerts/+",
            "zeitnot/ev/alerts/+/open",
            "zeitnot/ev/alerts/A/open",
            "zeitnot/ev/alerts/#",
            "zeitnot/ev/status",
            "zeitnot/ev/broadcast/#",
            "zeitnot/ev/broadcast/1/board/3",
        ] {
            assert!(subscribe("pager-0123456789abcdef", ok), "{ok}");
        }
        for denied in [
            "#",
            "zeitnot/#",
            "zeitnot/ev/#",
            "zeitnot/+/alerts/A",
            "zeitnot/ev/board/1/up",
            "zeitnot/ev/board/+/up",
            "zeitnot/ev/alerts/A/open/#",
            "zeitnot/ev/broadcast",
            "zeitnot/ev/broadcast//x",
        ] {
            assert!(!subscribe("pager-0123456789abcdef", denied), "{denied}");
        }
        assert!(publish(
            "pager-0123456789abcdef",
            "zeitnot/ev/pager/command"
        ));
        assert!(!publish(
            "pager-0123456789abcdef",
            "zeitnot/ev/alerts/A/open"
        ));
        assert!(!publish(
            "pager-0123456789abcdef",
            "zeitnot/ev/board/1/down"
        ));
    }

    /// The broker hands the ACL a shared subscription whole: no login of the hall needs one,
    /// and each group would be delivered apart (issue 68).
    #[test]
    fn no_login_takes_a_shared_subscription() {
        for (user, filter) in [
            ("pager-0123456789abcdef", "$share/g/zeitnot/ev/alerts/+"),
            ("pager-0123456789abcdef", "$share/g/zeitnot/ev/status"),
            ("12", "$share/g/zeitnot/ev/board/12/down"),
        ] {
            assert!(!subscribe(user, filter), "{user}: {filter}");
        }
    }

    #[test]
    fn nobody_retains_or_leaves_a_will_and_strangers_do_nothing() {
        assert!(!ask(
            "12",
            AclAction::Publish {
                topic: "zeitnot/ev/board/12/up",
                retain: true
            }
        ));
        assert!(!ask(
            "pager-0123456789abcdef",
            AclAction::Will {
                topic: "zeitnot/ev/pager/command",
                retain: false
            }
        ));
        assert!(!publish("public", "zeitnot/ev/broadcast/1/board/1"));
        assert!(!subscribe("public", "zeitnot/ev/broadcast/#"));
        assert!(!subscribe("", "zeitnot/ev/status"));
    }
}
