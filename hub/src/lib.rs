//! The Zeitnot hub: receives every board's events, journals them, and applies the Laws of
//! Chess.
//!
//! - [`core`]: the pure state machines (sequencing, games, the hall). No IO.
//! - [`edge`]: the IO: sled journal and its flusher, MQTT (embedded broker or external),
//!   HTTP.
//! - [`broadcast`]: the public feed's games (PGN, delay, players).
//! - [`live`]: the supervision page's tiles and their changes.
//! - [`config`]: the event's configuration file (TOML).
//! - [`pairings`]: pairings from TRF files, results back out as TRF.
//! - [`pager`]: `hub pager`, an arbiter's terminal pager over MQTT.
//! - [`metrics`]: counters for `GET /metrics`.
//! - [`run`]: the loop that owns the core and carries out its effects.
//! - [`demo`]: a demo hall with simulated boards replaying real games.
//! - [`report`]: `hub alert-report`, what real games page the arbiters with.

pub mod config;
pub mod core;
pub mod demo;
pub mod edge;
pub mod metrics;
pub mod pager;
pub mod pairings;
pub mod report;
pub mod run;
pub mod view;

pub use run::{serve, BrokerChoice, Running, ServeConfig};
