//! The IO edges: each file talks to one thing outside the core.
//!
//! - [`store`]: the sled journal; [`journal_batch`]: its record of many events;
//!   [`hot_events`]: its events databases of the rounds in play; [`round_archive`]: the
//!   finished rounds' events, compressed, out of sled.
//! - [`flusher`]: group commit: one thread flushes the journal and reports what is durable.
//! - [`broker`]: the embedded rumqttd broker; [`descriptors`]: the open-files limit it shares;
//!   [`topic_acl`]: which topics each of its logins may touch.
//! - [`mqtt`]: the hub's MQTT client (embedded or external broker); [`broker_reach`]: whether it
//!   reaches the broker.
//! - [`api`]: how HTTP handlers ask the loop that owns the hall (queries and answers).
//! - [`http`]: the JSON API, health and metrics; [`rounds`]: the rounds' part of it.
//! - [`connections`]: the HTTP listener's connections, capped, timed out, evicted when silent.
//! - [`page`]: the supervision page, its login and its live streams.
//! - [`access`]: the arbiters' token: who may see the live games and the alerts.
//! - [`login`]: the token a fresh hub makes and the login link it prints.
//! - [`sessions`]: the page's logins; [`guesses`]: wrong credentials, throttled per client.
//! - [`secret_file`]: secrets on disk, their owner's only.
//! - [`hall_ca`]: the hall's certificate authority and the hub's certificate;
//!   [`tls`]: which listeners speak TLS, and their handshakes.
//! - [`slots`]: the cap on live streams per client and overall.
//! - [`standby_door`]: a cluster's standby refuses changes, naming the active hub.
//! - [`cluster`]: the journal on a NATS cluster, and which hub is active.
//! - [`lichess`]: pushing the round to a lichess broadcast.
//! - [`livechess`]: the DGT LiveChess-compatible folder of the broadcast.

pub mod access;
pub mod api;
pub mod broker;
pub mod broker_reach;
pub mod cluster;
pub mod connections;
pub mod descriptors;
pub mod flusher;
pub mod guesses;
pub mod hall_ca;
pub mod hot_events;
pub mod http;
pub mod journal_batch;
pub mod lichess;
pub mod livechess;
pub mod log_throttle;
pub mod login;
pub mod mqtt;
pub mod ntfy;
pub mod page;
pub mod phone_page;
pub mod round_archive;
pub mod rounds;
pub mod secret_file;
pub mod sessions;
pub mod slots;
pub mod standby_door;
pub mod store;
pub mod tls;
pub mod topic_acl;
