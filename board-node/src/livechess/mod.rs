//! Boards that DGT LiveChess drives: the node reads them through LiveChess's local API
//! instead of their serial ports, so a hall keeps the LiveChess that holds its boards.
//!
//! - [`api`]: the API's calls and messages, sans-IO (text in, each board's readings out);
//! - [`socket`]: the WebSocket that carries them, as one of the node's transports;
//! - [`emulator`]: a stand-in LiveChess serving replayed games, for tests and for a
//!   technician's rehearsal.

pub mod api;
pub mod emulator;
pub mod socket;
