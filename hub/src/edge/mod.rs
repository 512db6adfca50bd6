//! The IO edges: each file talks to one thing outside the core.
//!
//! - [`store`]: the sled journal.
//! - [`flusher`]: group commit: one thread flushes the journal and reports what is durable.
//! - [`broker`]: the embedded rumqttd broker; [`descriptors`]: the open-files limit it shares.
//! - [`mqtt`]: the hub's MQTT client (embedded or external broker).
//! - [`api`]: how HTTP handlers ask the loop that owns the hall (queries and answers).
//! - [`http`]: the JSON API, health and metrics; [`rounds`]: the rounds' part of it.
//! - [`page`]: the supervision page, its login and its live streams.
//! - [`access`]: the arbiters' token: who may see the live games and the alerts.
//! - [`slots`]: the cap on live streams per client and overall.
//! - [`lichess`]: pushing the round to a lichess broadcast.
//! - [`livechess`]: the DGT LiveChess-compatible folder of the broadcast.

pub mod access;
pub mod api;
pub mod broker;
pub mod descriptors;
pub mod flusher;
pub mod http;
pub mod lichess;
pub mod livechess;
pub mod mqtt;
pub mod page;
pub mod rounds;
pub mod slots;
pub mod store;
