//! DGT e-boards and clocks: what a DGT board sends and is sent, in the family-neutral terms
//! of [`crate::eboard`].
//!
//! - [`wire`]: the serial protocol's bytes, decoded into [`crate::eboard::message::Message`]s.
//! - [`recording`]: a recorded byte stream played back as a [`crate::source::Source`].
//! - [`session`]: a live board's line: commands, readings, probes and the node's health.
//! - [`emulator`]: a DGT board and clock as an [`crate::eboard::emulator::EmulatedDevice`].
//! - [`bus`]: a chain of DGT boards on one line (bus mode).

pub mod bus;
pub mod emulator;
pub mod recording;
pub mod session;
pub mod wire;
