//! DGT boards chained on one line in bus mode, as tournament halls wire them (a dozen
//! boards on one cable, one adapter per chain).
//!
//! - [`wire`]: commands and replies with their bus addresses, and the EEPROM records
//!   changes come in.
//! - [`master`]: the node's side of a chain: discovery, polling, repeats and resyncs, each
//!   board's readings and health.
//! - [`emulator`]: a chain of boards as DGT's header describes them, on a pseudo-terminal.

pub mod emulator;
pub mod master;
pub mod wire;
