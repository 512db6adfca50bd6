//! Who is who on the broker: the MQTT username, password and client id of each kind of
//! client, so the embedded broker, Mosquitto's password and ACL files, the nodes, the pagers
//! and the hub agree (README, *Security*).
//!
//! | client            | username      | password                          | client id                        |
//! |-------------------|---------------|-----------------------------------|----------------------------------|
//! | board node        | board number  | `node_key.derive("mqtt")`         | `zeitnot-node-{event}-{board}-…` |
//! | hub               | `zeitnot-hub` | `hall_secret.derive("mqtt/hub")`  | `zeitnot-hub-{event}-…`          |
//! | arbiter's pager   | `pager-{id}`  | `arbiter_key.derive("mqtt/pager")`| `zeitnot-pager-{event}-{id}-…`   |
//! | public reader     | `public`      | `public` (Mosquitto only)         | any                              |
//!
//! A node's username is its board number so that one ACL pattern (`%u`) gives each node
//! its own board's topics. Each arbiter's pager logs in as itself: `{id}` is derived from
//! the arbiter's own key, so revoking an arbiter (a new key, or none) retires the login.
//! Passwords are derived, never stored apart from the keys: a node computes its own from
//! its key file, and the hub all of them from its journal. Every client id starts with its
//! login's own prefix and ends in a random part: no login can take another's session, and
//! nobody can guess a session's id.

use alloc::format;
use alloc::string::{String, ToString};

use crate::seal::NodeKey;
use crate::BoardNo;

/// The hub's MQTT username.
pub const HUB_USER: &str = "zeitnot-hub";
/// How every pager's MQTT username starts.
pub const PAGER_USER_PREFIX: &str = "pager-";
/// The read-only public identity of an external broker, limited by its ACL to the delayed
/// broadcast topics; its password is no secret.
pub const PUBLIC_USER: &str = "public";

/// A node's MQTT username: its board number.
pub fn node_user(board: BoardNo) -> String {
    board.0.to_string()
}

/// A node's MQTT password, derived from its key.
pub fn node_password(key: &NodeKey) -> String {
    key.derive("mqtt")
}

/// The hub's MQTT password, derived from the hall's secret.
pub fn hub_password(hall: &NodeKey) -> String {
    hall.derive("mqtt/hub")
}

/// The MQTT username of the pager of the arbiter with key `arbiter`.
pub fn pager_user(arbiter: &NodeKey) -> String {
    let id = arbiter.derive("mqtt/pager-user");
    format!("{PAGER_USER_PREFIX}{}", &id[..16])
}

/// The MQTT password of the pager of the arbiter with key `arbiter`.
pub fn pager_password(arbiter: &NodeKey) -> String {
    arbiter.derive("mqtt/pager")
}

/// How a node's client id starts; a random part follows.
pub fn node_client_prefix(event: &str, board: BoardNo) -> String {
    format!("zeitnot-node-{event}-{}-", board.0)
}

/// How the hub's client id starts; the secret of its persistent session follows.
pub fn hub_client_prefix(event: &str) -> String {
    format!("zeitnot-hub-{event}-")
}

/// How the client id of the pager logged in as `pager_user` starts; a random part follows.
pub fn pager_client_prefix(event: &str, pager_user: &str) -> String {
    format!("zeitnot-pager-{event}-{pager_user}-")
}
