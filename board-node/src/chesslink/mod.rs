//! The Millennium ChessLink e-board (Millennium's eONE, Exclusive and Performance boards with
//! the ChessLink module), the second family a node reads, behind the same line edge as DGT's.
//!
//! - [`wire`]: the protocol's messages, their checks and their decoder.
//! - [`session`]: the board's line: the [`crate::line::LineSession`] of a ChessLink board.
//! - [`emulator`]: a ChessLink board on a pseudo-terminal.

pub mod emulator;
pub mod session;
pub mod wire;
