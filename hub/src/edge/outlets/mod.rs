//! The broadcast's outlets beside the live feed: pushing the round to a lichess broadcast
//! ([`lichess`]) and the DGT LiveChess-compatible folder ([`livechess`]).

pub mod lichess;
pub mod livechess;
