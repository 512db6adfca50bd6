//! The hub's commands besides `serve` (which is [`crate::run`]): each reads what it needs
//! and drives the core or talks to a running hub.
//!
//! - [`enrol`]: node keys at the edges: key files, enrolment over a running hub's API.
//! - [`pager`]: `hub pager`, an arbiter's terminal pager over MQTT.
//! - [`demo`]: `hub demo`, a demo hall with simulated boards replaying real games.
//! - [`report`]: `hub alert-report`, what real games page the arbiters with.

pub mod demo;
pub mod enrol;
pub mod pager;
pub mod report;
