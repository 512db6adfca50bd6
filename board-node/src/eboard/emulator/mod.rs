//! An e-board emulated for tests, the demo and a technician checking a node before a round,
//! whatever its family: each family's device ([`crate::dgt::emulator`],
//! [`crate::chesslink::emulator`]) answers the node's commands.
//!
//! - [`timeline`]: what happens on the board over a game: a PGN game reported piece by
//!   piece with a clock message each second, or a recorded stream at the pace of its clock.
//! - [`pty`]: the emulator's edge: a pseudo-terminal the node opens as if it were the
//!   board's serial port, which it can unplug, fill with noise, and whose clock it can
//!   switch off.

pub mod pty;
pub mod timeline;

use super::message::Message;

/// An emulated e-board with the line it talks on, as [`pty::run`] drives it: the host's
/// bytes in, the board's out; what happens on the board (as DGT messages: a protocol
/// without a clock ignores the clock's).
pub trait EmulatedDevice {
    /// Bytes from the node: the bytes the board answers with.
    fn commands(&mut self, bytes: &[u8]) -> Vec<u8>;
    /// Something happens on the board or the clock: the bytes the board sends for it.
    fn happen(&mut self, message: &Message) -> Vec<u8>;
    /// The clock is switched off or on: what the board sends.
    fn switch_clock(&mut self, on: bool) -> Vec<u8>;
    /// The board lost its line and its power.
    fn unplugged(&mut self);
    /// A node has asked for reports: the game may start.
    fn reporting(&self) -> bool;
}
