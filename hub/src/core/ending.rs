//! What ends a game at once, and which draw claims would be correct (2023 Laws).
//!
//! Ends at once, in this order: checkmate (5.1.1), stalemate (5.2.1), dead position (5.2.2),
//! fivefold repetition (9.6.1), 75 moves by each player without a pawn move or capture
//! (9.6.2; a mate on the 75th move stands, because checkmate is looked at first).
//!
//! Dead position: chasolver's fast analysis after every move ([`super::mating`]): sound (it
//! never declares a position dead that is not) and it sees locked pawn walls that material
//! counting misses, but it is incomplete; the full analysis is kept for decisions.

use serde::Serialize;
use shakmaty::{Chess, Color, Position};

use super::mating;
use super::repetition::Repetitions;

/// Where the game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Playing,
    Checkmate,
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    SeventyfiveMoves,
}

impl Status {
    /// The article of the 2023 Laws that ends the game this way.
    pub fn article(self) -> Option<&'static str> {
        match self {
            Status::Playing => None,
            Status::Checkmate => Some("5.1.1"),
            Status::Stalemate => Some("5.2.1"),
            Status::DeadPosition => Some("5.2.2"),
            Status::FivefoldRepetition => Some("9.6.1"),
            Status::SeventyfiveMoves => Some("9.6.2"),
        }
    }

    /// The result in PGN notation; `to_move` is the side to move in the final position.
    pub fn result(self, to_move: Color) -> &'static str {
        match (self, to_move) {
            (Status::Playing, _) => "*",
            (Status::Checkmate, Color::White) => "0-1",
            (Status::Checkmate, Color::Black) => "1-0",
            _ => "1/2-1/2",
        }
    }
}

/// A draw claim the player to move could make now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// 9.2.2 (the position stands for the third time) or 9.2.1 (a legal move would make it).
    ThreefoldRepetition,
    /// 9.3.2 (the last 50 moves of each player had no pawn move or capture) or 9.3.1 (a legal
    /// move would complete them).
    FiftyMoves,
}

/// How the game ends in `position`, which has now occurred `occurrences` times; `None` if
/// play goes on.
pub fn ending(position: &Chess, occurrences: u8) -> Option<Status> {
    if position.is_checkmate() {
        Some(Status::Checkmate)
    } else if position.is_stalemate() {
        Some(Status::Stalemate)
    } else if mating::is_dead_position(position) {
        Some(Status::DeadPosition)
    } else if occurrences >= 5 {
        Some(Status::FivefoldRepetition)
    } else if position.halfmoves() >= 150 {
        Some(Status::SeventyfiveMoves)
    } else {
        None
    }
}

/// The claims the player to move could make correctly in `position` (still in play).
pub fn claimable(position: &Chess, repetitions: &Repetitions) -> Vec<Claim> {
    let moves = position.legal_moves();
    let mut claims = Vec::new();
    let threefold = repetitions.count(position) >= 3
        || moves.iter().any(|m| {
            let mut after = position.clone();
            after.play_unchecked(*m);
            repetitions.count(&after) >= 2
        });
    if threefold {
        claims.push(Claim::ThreefoldRepetition);
    }
    let fifty = position.halfmoves() >= 100
        || (position.halfmoves() >= 99 && moves.iter().any(|m| !m.is_zeroing()));
    if fifty {
        claims.push(Claim::FiftyMoves);
    }
    claims
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn a_mate_on_the_75th_move_stands() {
        // Art. 9.6.2: the last move checkmates, so checkmate decides, not the 75-move rule.
        let mate = position("7k/6Q1/6K1/8/8/8/8/8 b - - 150 120");
        assert_eq!(ending(&mate, 1), Some(Status::Checkmate));
        let quiet = position("7k/8/5QK1/8/8/8/8/8 b - - 150 120");
        assert_eq!(ending(&quiet, 1), Some(Status::SeventyfiveMoves));
        let earlier = position("7k/8/5QK1/8/8/8/8/8 b - - 149 120");
        assert_eq!(ending(&earlier, 1), None);
    }

    #[test]
    fn fivefold_ends_the_game_fourfold_does_not() {
        // Art. 9.6.1.
        let start = Chess::default();
        assert_eq!(ending(&start, 4), None);
        assert_eq!(ending(&start, 5), Some(Status::FivefoldRepetition));
    }

    #[test]
    fn bare_kings_are_a_dead_position() {
        // Art. 5.2.2.
        let kings = position("8/8/4k3/8/8/3K4/8/8 w - - 0 60");
        assert_eq!(ending(&kings, 1), Some(Status::DeadPosition));
        assert_eq!(Status::DeadPosition.result(Color::White), "1/2-1/2");
    }

    #[test]
    fn fifty_moves_can_be_claimed_with_the_intended_move() {
        // Art. 9.3.1: at 99 half-moves a quiet move completes the fifty.
        let quiet = position("7k/8/6K1/8/8/8/8/1Q6 w - - 99 100");
        let reps = Repetitions::default();
        assert_eq!(claimable(&quiet, &reps), [Claim::FiftyMoves]);
        let early = position("7k/8/6K1/8/8/8/8/1Q6 w - - 98 100");
        assert!(claimable(&early, &reps).is_empty());
    }
}
