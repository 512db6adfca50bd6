//! What ends a game at once, and which draw claims would be correct.
//!
//! Ends at once, in this order: checkmate (5.1.1), stalemate (5.2.1), dead position (5.2.2),
//! fivefold repetition (9.6.1), 75 moves by each player without a pawn move or capture
//! (9.6.2; a mate on the 75th move stands, because checkmate is looked at first). The 2014
//! Laws end the game on the fifth occurrence only over consecutive alternate moves (9.6a);
//! the 2009 Laws have neither rule: there a player must claim.
//!
//! Dead position: chasolver's fast analysis after every move ([`super::mating`]): sound (it
//! never declares a position dead that is not) and it sees locked pawn walls that material
//! counting misses, but it is incomplete; the full analysis is kept for decisions.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position};

use super::arbiter::{Cause, GameResult};
use super::laws::Edition;
use super::mating;
use super::repetition::Repetitions;

/// Where the game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Playing,
    Checkmate,
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    SeventyfiveMoves,
    /// The arbiter declared the result (its [`Cause`] names how the game ended).
    Declared(Cause),
}

impl Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Status {
    /// The name back to the status (an archived game's detail): the rules' own first, then a
    /// declared result's cause (a dead position the arbiter established reads as the rules').
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Status::named(&name).ok_or_else(|| {
            serde::de::Error::custom(format_args!("no game status is named {name:?}"))
        })
    }
}

impl Status {
    /// The status `name` names, as [`Status::name`] writes it.
    pub fn named(name: &str) -> Option<Status> {
        const RULES: [Status; 6] = [
            Status::Playing,
            Status::Checkmate,
            Status::Stalemate,
            Status::DeadPosition,
            Status::FivefoldRepetition,
            Status::SeventyfiveMoves,
        ];
        RULES.into_iter().find(|s| s.name() == name).or_else(|| {
            serde_json::from_value(serde_json::Value::from(name))
                .ok()
                .map(Status::Declared)
        })
    }

    /// The name `GET /api/boards/{n}` shows: `playing`, `checkmate`, …, or the cause of a
    /// declared result (`flag_fall`, `resignation`, …).
    pub fn name(self) -> &'static str {
        match self {
            Status::Playing => "playing",
            Status::Checkmate => "checkmate",
            Status::Stalemate => "stalemate",
            Status::DeadPosition => "dead_position",
            Status::FivefoldRepetition => "fivefold_repetition",
            Status::SeventyfiveMoves => "seventyfive_moves",
            Status::Declared(cause) => cause.name(),
        }
    }

    /// The article of the edition's Laws that ends the game this way.
    pub fn article(self, edition: Edition) -> Option<&'static str> {
        Some(match (self, edition.lettered()) {
            (Status::Playing, _) => return None,
            (Status::Declared(cause), _) => return cause.article(edition),
            (Status::Checkmate, false) => "5.1.1",
            (Status::Checkmate, true) => "5.1a",
            (Status::Stalemate, false) => "5.2.1",
            (Status::Stalemate, true) => "5.2a",
            (Status::DeadPosition, false) => "5.2.2",
            (Status::DeadPosition, true) => "5.2b",
            (Status::FivefoldRepetition, false) => "9.6.1",
            (Status::FivefoldRepetition, true) => "9.6a",
            (Status::SeventyfiveMoves, false) => "9.6.2",
            (Status::SeventyfiveMoves, true) => "9.6b",
        })
    }

    /// The result in PGN notation; `to_move` is the side to move in the final position. A
    /// declared result is the arbiter's: [`super::game::Game::result`] knows it.
    pub fn result(self, to_move: Color) -> GameResult {
        match self {
            Status::Playing | Status::Declared(_) => GameResult::Ongoing,
            Status::Checkmate => GameResult::win_for(to_move.other()),
            _ => GameResult::Draw,
        }
    }
}

/// A draw claim the player to move could make now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// 9.2.2 (the position stands for the third time) or 9.2.1 (a legal move would make it).
    ThreefoldRepetition,
    /// 9.3.2 (the last 50 moves of each player had no pawn move or capture) or 9.3.1 (a legal
    /// move would complete them).
    FiftyMoves,
}

/// How often a position has occurred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrences {
    /// In the whole game (2023, 2018).
    pub total: u8,
    /// In an unbroken run of alternate moves: the same position every fourth half-move
    /// back from now (2014 9.6a).
    pub consecutive: u8,
}

/// How the game ends in `position` under `edition`; `None` if play goes on. `may_be_dead`:
/// the move that made it could make a position dead ([`mating::may_become_dead`]); without,
/// the dead-position search is not made.
pub fn ending(
    position: &Chess,
    occurrences: Occurrences,
    edition: Edition,
    may_be_dead: bool,
) -> Option<Status> {
    let fivefold = match edition {
        Edition::Laws2023 | Edition::Laws2018 => occurrences.total >= 5,
        Edition::Laws2014 => occurrences.consecutive >= 5,
        Edition::Laws2009 => false,
    };
    let seventyfive = edition != Edition::Laws2009 && position.halfmoves() >= 150;
    if position.is_checkmate() {
        Some(Status::Checkmate)
    } else if position.is_stalemate() {
        Some(Status::Stalemate)
    } else if may_be_dead && mating::is_dead_position(position) {
        Some(Status::DeadPosition)
    } else if fivefold {
        Some(Status::FivefoldRepetition)
    } else if seventyfive {
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
    use crate::core::position;

    fn times(total: u8) -> Occurrences {
        Occurrences {
            total,
            consecutive: total,
        }
    }

    const NOW: Edition = Edition::Laws2023;

    #[test]
    fn a_mate_on_the_75th_move_stands() {
        // Art. 9.6.2: the last move checkmates, so checkmate decides, not the 75-move rule.
        let mate = position("7k/6Q1/6K1/8/8/8/8/8 b - - 150 120");
        assert_eq!(ending(&mate, times(1), NOW, true), Some(Status::Checkmate));
        let quiet = position("7k/8/5QK1/8/8/8/8/8 b - - 150 120");
        assert_eq!(
            ending(&quiet, times(1), NOW, true),
            Some(Status::SeventyfiveMoves)
        );
        let earlier = position("7k/8/5QK1/8/8/8/8/8 b - - 149 120");
        assert_eq!(ending(&earlier, times(1), NOW, true), None);
    }

    #[test]
    fn fivefold_ends_the_game_fourfold_does_not() {
        // Art. 9.6.1.
        let start = Chess::default();
        assert_eq!(ending(&start, times(4), NOW, true), None);
        assert_eq!(
            ending(&start, times(5), NOW, true),
            Some(Status::FivefoldRepetition)
        );
    }

    #[test]
    fn bare_kings_are_a_dead_position() {
        // Art. 5.2.2.
        let kings = position("8/8/4k3/8/8/3K4/8/8 w - - 0 60");
        assert_eq!(
            ending(&kings, times(1), NOW, true),
            Some(Status::DeadPosition)
        );
        assert_eq!(Status::DeadPosition.result(Color::White), GameResult::Draw);
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

    #[test]
    fn each_edition_has_its_automatic_draws() {
        // The "automatic draws" row of LAWS.md.
        let start = Chess::default();
        let scattered = Occurrences {
            total: 5,
            consecutive: 2,
        };
        let in_a_row = Occurrences {
            total: 5,
            consecutive: 5,
        };
        // 2023 9.6.1 (and 2018): the fifth occurrence, not necessarily consecutive.
        assert_eq!(
            ending(&start, scattered, Edition::Laws2018, true),
            Some(Status::FivefoldRepetition)
        );
        // 2014 9.6a: only over consecutive alternate moves.
        assert_eq!(ending(&start, scattered, Edition::Laws2014, true), None);
        assert_eq!(
            ending(&start, in_a_row, Edition::Laws2014, true),
            Some(Status::FivefoldRepetition)
        );
        // 2009: no automatic repetition or 75-move draw; only the dead position.
        assert_eq!(ending(&start, in_a_row, Edition::Laws2009, true), None);
        let quiet = position("7k/8/5QK1/8/8/8/8/8 b - - 150 120");
        assert_eq!(ending(&quiet, times(1), Edition::Laws2009, true), None);
        assert_eq!(
            ending(&quiet, times(1), Edition::Laws2014, true),
            Some(Status::SeventyfiveMoves)
        );
        let kings = position("8/8/4k3/8/8/3K4/8/8 w - - 0 60");
        assert_eq!(
            ending(&kings, times(1), Edition::Laws2009, true),
            Some(Status::DeadPosition)
        );
        assert_eq!(
            Status::DeadPosition.article(Edition::Laws2009),
            Some("5.2b")
        );
        assert_eq!(
            Status::FivefoldRepetition.article(Edition::Laws2014),
            Some("9.6a")
        );
        assert_eq!(
            Status::SeventyfiveMoves.article(Edition::Laws2023),
            Some("9.6.2")
        );
    }
}
