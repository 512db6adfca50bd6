//! The IO edges: each file talks to one thing outside the core.
//!
//! - [`store`]: the sled journal.
//! - [`flusher`]: group commit: one thread flushes the journal and reports what is durable.
//! - [`broker`]: the embedded rumqttd broker.
//! - [`mqtt`]: the hub's MQTT client (embedded or external broker).
//! - [`http`]: the JSON API, health and metrics.
//! - [`lichess`]: pushing the round to a lichess broadcast.
//! - [`livechess`]: the DGT LiveChess-compatible folder of the broadcast.
//! - [`pager_feed`]: the JSON pagers get over MQTT and the commands they send back.

pub mod broker;
pub mod flusher;
pub mod http;
pub mod lichess;
pub mod livechess;
pub mod mqtt;
pub mod pager_feed;
pub mod store;
