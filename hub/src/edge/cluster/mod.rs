//! The hall on a NATS cluster: the journal in a replicated JetStream stream, and which hub
//! is active.
//!
//! - [`secrets`]: what the hall's hubs share, carried by the technician, not by NATS.
//! - [`seal`]: the stream's records sealed under the hall's key.
//! - [`record`]: the stream's messages.
//! - [`nats`]: the hub's client of the cluster, the stream and the bucket.
//! - [`role`]: the replica's role (standby, taking over, active), sans IO, on simulated
//!   time in its tests.
//! - [`ports`]: what the role's driver needs of the cluster: the stream and the bucket.
//! - [`jetstream`]: those ports on NATS JetStream.
//! - [`lease`]: the lease in the bucket, read, taken and renewed.
//! - [`journal`]: the role's driver: one loop doing what the role asks, deciding nothing.
//!
//! The boards' events on a cluster are the MQTT wing's (`mqtt/gateway.rs`): they travel on
//! the NATS servers, but as the gateway's messages, not the journal's.

pub mod jetstream;
pub mod journal;
pub mod lease;
pub mod nats;
pub mod ports;
pub mod record;
pub mod role;
pub mod seal;
pub mod secrets;
