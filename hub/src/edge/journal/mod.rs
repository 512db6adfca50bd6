//! The journal on this machine's disk (sled): every write the hub's core asks for, made
//! durable before anything is acknowledged.
//!
//! - [`store`]: the sled database, its trees and what each holds; [`error`]: what goes
//!   wrong with it.
//! - [`write_codec`]: the bytes of every [`Write`](crate::core::hub::Write), one codec for sled
//!   and for the cluster's stream.
//! - [`batch`]: the record of many events; [`hot_events`]: the events databases of the
//!   rounds in play; [`round_archive`]: the finished rounds' events, compressed, out of
//!   sled.
//! - [`trees`]: reading sled's event trees and the id-keyed JSON trees.
//! - [`flusher`]: group commit: one thread flushes the journal and reports what is durable.

pub mod batch;
pub mod error;
pub mod flusher;
pub mod hot_events;
pub mod round_archive;
pub mod store;
pub mod trees;
pub mod write_codec;

pub use error::StoreError;
pub use store::Journal;
