//! The node's commands, each with its command line: `main` parses and calls one of them.
//!
//! - [`replay`]: `board-node replay`, a real game from PGN as a board and clock report it.
//! - [`dgt`], [`chesslink`]: live e-boards on serial ports, through [`boards`] (the boards
//!   a live node serves); [`livechess`]: the boards DGT LiveChess drives, through its API;
//!   [`chessnut`]: a Chessnut board over Bluetooth LE.
//! - [`emulate`]: `emulate-dgt` and `emulate-chesslink`, an e-board on a pseudo-terminal,
//!   playing what [`emulation`] reads; [`emulate_chain`] a DGT chain in bus mode;
//!   [`emulate_livechess`] a stand-in for LiveChess's API.
//! - [`broker`]: what every command needs to reach the hub (the broker's TLS, the key);
//!   [`stopped`]: when to stop.

pub mod boards;
pub mod broker;
pub mod chesslink;
pub mod chessnut;
pub mod dgt;
pub mod emulate;
pub mod emulate_chain;
pub mod emulate_livechess;
pub mod emulation;
pub mod livechess;
pub mod replay;
pub mod stopped;
