//! The pure core: synchronous state machines fed with events and the time, returning effects.
//! No tokio, MQTT, sled or HTTP in here.
//!
//! - [`time`]: [`HubMs`], the only "now" the core sees.
//! - [`intake`]: per-board sequencing: accept, drop a duplicate, or ask for a resend.
//! - [`sensed`]: the e-board's [`protocol::Placement`] as a shakmaty board.
//! - [`game`]: one game reconstructed from placements and clock presses.
//! - [`chess960`]: the start position of a Chess960 game, from the board.
//! - [`claim`]: checking a draw claim for the arbiter (9.2, 9.3).
//! - [`ending`]: what ends a game at once, and which draw claims would be correct.
//! - [`laws`]: the tournament's edition, game type and supervision, and their rulings.
//! - [`mating`]: whether a side can still checkmate (5.2.2, 6.9, 7.5.5), by chasolver.
//! - [`repetition`]: how often each position occurred (Art. 9.2.2).
//! - [`record`]: a journaled event with its receive time.
//! - [`board`]: everything the hub knows about one board.
//! - [`hall`]: all boards, routed by [`protocol::BoardNo`]; the fold over the journal.

pub mod board;
pub mod chess960;
pub mod claim;
pub mod ending;
pub mod game;
pub mod hall;
pub mod intake;
pub mod laws;
pub mod mating;
pub mod record;
pub mod repetition;
pub mod sensed;
pub mod time;

/// Positions for the core's tests, from FEN.
#[cfg(test)]
pub(crate) fn position(fen: &str) -> shakmaty::Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .expect("a FEN")
        .into_position(shakmaty::CastlingMode::Standard)
        .expect("a legal position")
}
