//! The hub's commands, each with its command line: each reads what it needs and drives the
//! core, a running hub, or a stopped hub's journal.
//!
//! - [`serve`]: `hub serve`, the command line merged over the configuration; the hub is
//!   [`crate::run`].
//! - [`keys`]: the hall's keys on a stopped hub (`hub enrol`, `enrol-arbiter`,
//!   `broker-users`, `rotate-hall-secret`, `login-link`, `broker-cert`, `cluster-secrets`,
//!   `cluster-join`), through
//!   [`offline`], the one way of opening a stopped hub's journal.
//! - [`broker`]: `hub broker`, the bare broker the benchmarks compare with.
//! - [`enrol`]: node keys at the edges: key files, enrolment over a running hub's API.
//! - [`pager`]: `hub pager`, an arbiter's terminal pager over MQTT.
//! - [`demo`]: `hub demo`, a demo hall with simulated boards replaying real games.
//! - [`report`]: `hub alert-report`, what real games page the arbiters with.

pub mod broker;
pub mod demo;
pub mod enrol;
pub mod keys;
pub mod offline;
pub mod pager;
pub mod report;
pub mod serve;
