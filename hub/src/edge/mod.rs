//! The IO edges, in wings by the outside thing each talks to:
//!
//! - [`journal`]: the sled journal on this machine's disk, its batches, the rounds' events
//!   databases and archives, and the flusher that makes them durable.
//! - [`cluster`]: the journal on a NATS cluster, and which hub of the hall is active.
//! - [`mqtt`]: the embedded broker, its topic ACL, and the hub's own MQTT client.
//! - [`http`]: the JSON API, the supervision and phone pages, ntfy's protocol, the logins
//!   and sessions of arbiters and phones.
//! - [`keys`]: the hall's certificate authority, TLS, and secrets on disk.
//! - [`outlets`]: the broadcast's outlets beside the live feed (lichess, a LiveChess
//!   folder).
//! - [`descriptors`]: the open-files limit the broker and HTTP share.

pub mod cluster;
pub mod descriptors;
pub mod http;
pub mod journal;
pub mod keys;
pub mod mqtt;
pub mod outlets;
