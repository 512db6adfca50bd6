//! The real processes a test starts: `hub serve`, `board-node`, Mosquitto, a NATS cluster,
//! `hub pager`, an
//! arbiter's phone (ntfy's protocol, in Python), each in a directory of its own with its
//! log, killed when dropped.

pub mod hub;
pub mod mosquitto;
pub mod nats;
pub mod node;
pub mod pager;
pub mod phone;
