//! The Zeitnot hub: receives every board's events, journals them, and applies the Laws of
//! Chess.
//!
//! - [`core`]: the pure state machines (sequencing, games, the hall). No IO.
//! - [`edge`]: the IO: sled journal and its flusher, MQTT (embedded broker or external),
//!   HTTP.
//! - [`view`]: what the outside is shown (the feed's games, the page's tiles, the pagers'
//!   JSON): pure.
//! - [`config`]: the event's configuration file (TOML).
//! - [`pairings`]: pairings from TRF files, results back out as TRF.
//! - [`metrics`]: counters for `GET /metrics`.
//! - [`run`]: the loop that owns the core and carries out its effects.
//! - [`cmd`]: the other commands: `hub pager`, `hub demo`, `hub alert-report`.

pub mod cmd;
pub mod config;
pub mod core;
pub mod edge;
pub mod metrics;
pub mod pairings;
pub mod run;
pub mod view;

pub use run::{serve, BrokerChoice, Running, ServeConfig};
