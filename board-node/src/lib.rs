//! The Zeitnot board node: reads an e-board and a clock, and delivers every reading to the
//! hub without loss.
//!
//! - [`source`]: the [`source::Source`] trait adapters implement; [`replay`] is the first
//!   adapter (a real game from PGN), reading it with [`pgn`] and [`sensors`]; [`eboard`]
//!   is what every e-board family shares (messages, orientation, the emulator), [`dgt`]
//!   reads a DGT e-board and clock (and recordings of one), [`chesslink`] a Millennium
//!   ChessLink board.
//! - [`outbox`]: the durable, sequence-numbered store of events until the hub acknowledges;
//!   [`delivery`]: which of them go on the wire when (a sans-IO state machine).
//! - [`line`]: a live board's serial line, whatever its protocol; [`live`]: one process
//!   serving several live boards.
//! - [`clock_news`]: which clock readings are worth sending (the hub computes the rest).
//! - [`node`]: the loop that joins them; [`cmd`]: the command line's commands.

pub mod chesslink;
pub mod chessnut;
pub mod clock_news;
pub mod cmd;
pub mod delivery;
pub mod dgt;
pub mod eboard;
pub mod line;
pub mod live;
pub mod livechess;
pub mod node;
pub mod outbox;
pub mod pgn;
pub mod replay;
pub mod sensors;
pub mod source;
