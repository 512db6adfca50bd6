//! What every e-board family shares: the messages a board reports ([`message`]), their
//! turning into the hall's placements and clock reports ([`adapter`]: orientation, the
//! clock's sides), and the emulator's pseudo-terminal and timeline ([`emulator`]). Each
//! family ([`crate::dgt`], [`crate::chesslink`]) adds only its wire and its session.

pub mod adapter;
pub mod emulator;
pub mod message;

pub use adapter::{Adapter, ClockSide, Orientation};
