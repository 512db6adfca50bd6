//! The hall on a NATS cluster: the journal in a replicated JetStream stream, and which hub
//! is active.
//!
//! - [`record`]: the stream's messages.
pub mod record;
