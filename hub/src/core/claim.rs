//! Checking a draw claim for the arbiter (Art. 9.2 threefold repetition, 9.3 fifty moves).
//!
//! The arbiter asks; the hub answers whether the claim is correct and shows the evidence:
//! where the position occurred, or how many moves have passed without a pawn move or a
//! capture. The hub never suggests a claim to a player (12.6).

use serde::{Deserialize, Serialize};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Move, Position};

use super::ending::Claim;

/// What the arbiter asks.
#[derive(Debug, Clone, Deserialize)]
pub struct ClaimRequest {
    pub claim: ClaimKind,
    /// The move the player wrote down and declared he will make (9.2.1, 9.3.1), in UCI.
    #[serde(default)]
    pub r#move: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    ThreefoldRepetition,
    FiftyMoves,
}

impl From<ClaimKind> for Claim {
    fn from(kind: ClaimKind) -> Claim {
        match kind {
            ClaimKind::ThreefoldRepetition => Claim::ThreefoldRepetition,
            ClaimKind::FiftyMoves => Claim::FiftyMoves,
        }
    }
}

/// The hub's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimCheck {
    pub claim: ClaimKind,
    pub valid: bool,
    /// 9.2.1 / 9.3.1 with an intended move, 9.2.2 / 9.3.2 without; 9.5.3 (or the edition's)
    /// for an incorrect claim.
    pub article: &'static str,
    /// Threefold: where the position in question occurred, e.g. `"after 31...Kg7"` or
    /// `"start"`; it must occur three times.
    pub occurred: Vec<String>,
    /// Fifty moves: half-moves without a pawn move or capture (after the intended move).
    pub halfmoves: u32,
    /// The time an incorrect claim adds to the opponent, in seconds.
    pub penalty_if_incorrect: u32,
    /// Why the claim cannot be checked as asked (an illegal or unreadable intended move).
    pub problem: Option<String>,
}

/// Checks `request` in the game that went from `start` through `moves` to `current`.
/// `wrong_claim` is the edition's penalty for an incorrect claim and its article.
pub fn check(
    start: &Chess,
    moves: &[Move],
    current: &Chess,
    request: &ClaimRequest,
    wrong_claim: (u32, &'static str),
) -> ClaimCheck {
    let mut answer = ClaimCheck {
        claim: request.claim,
        valid: false,
        article: "",
        occurred: Vec::new(),
        halfmoves: 0,
        penalty_if_incorrect: wrong_claim.0,
        problem: None,
    };
    let intended = match &request.r#move {
        None => None,
        Some(text) => match text
            .parse::<UciMove>()
            .ok()
            .and_then(|uci| uci.to_move(current).ok())
        {
            Some(m) => Some(m),
            None => {
                answer.problem = Some(format!("{text:?} is not a legal move here"));
                answer.article = wrong_claim.1;
                return answer;
            }
        },
    };
    let target = match intended {
        Some(m) => {
            let mut after = current.clone();
            after.play_unchecked(m);
            after
        }
        None => current.clone(),
    };
    match request.claim {
        ClaimKind::ThreefoldRepetition => {
            let mut position = start.clone();
            let mut seen = Vec::new();
            if position == target {
                seen.push("start".to_owned());
            }
            let all = moves.iter().copied().chain(intended);
            for m in all {
                let label = describe(&position, m);
                position.play_unchecked(m);
                if position == target {
                    seen.push(label);
                }
            }
            answer.valid = seen.len() >= 3;
            answer.article = if intended.is_some() { "9.2.1" } else { "9.2.2" };
            answer.occurred = seen;
        }
        ClaimKind::FiftyMoves => {
            answer.halfmoves = target.halfmoves();
            answer.valid = target.halfmoves() >= 100;
            answer.article = if intended.is_some() { "9.3.1" } else { "9.3.2" };
        }
    }
    if !answer.valid {
        answer.article = wrong_claim.1;
    }
    answer
}

/// `"after 12.Nf3"` or `"after 12...Nf6"` for the position after `m`.
fn describe(before: &Chess, m: Move) -> String {
    let number = before.fullmoves();
    let san = shakmaty::san::SanPlus::from_move(before.clone(), m);
    match before.turn() {
        Color::White => format!("after {number}.{san}"),
        Color::Black => format!("after {number}...{san}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(ucis: &[&str]) -> (Chess, Vec<Move>, Chess) {
        let start = Chess::default();
        let mut position = start.clone();
        let mut moves = Vec::new();
        for uci in ucis {
            let m = uci.parse::<UciMove>().unwrap().to_move(&position).unwrap();
            position.play_unchecked(m);
            moves.push(m);
        }
        (start, moves, position)
    }

    fn ask(claim: ClaimKind, m: Option<&str>) -> ClaimRequest {
        ClaimRequest {
            claim,
            r#move: m.map(str::to_owned),
        }
    }

    const KNIGHTS: [&str; 8] = [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
    ];

    #[test]
    fn threefold_on_the_board_lists_where_the_position_stood() {
        // Art. 9.2.2: the start position now stands for the third time.
        let (start, moves, now) = play(&KNIGHTS);
        let answer = check(
            &start,
            &moves,
            &now,
            &ask(ClaimKind::ThreefoldRepetition, None),
            (120, "9.5.3"),
        );
        assert!(answer.valid);
        assert_eq!(answer.article, "9.2.2");
        assert_eq!(answer.occurred, ["start", "after 2...Ng8", "after 4...Ng8"]);
    }

    #[test]
    fn threefold_with_the_intended_move() {
        // Art. 9.2.1: one move short on the board, correct with the written move.
        let (start, moves, now) = play(&KNIGHTS[..7]);
        let without = check(
            &start,
            &moves,
            &now,
            &ask(ClaimKind::ThreefoldRepetition, None),
            (120, "9.5.3"),
        );
        assert!(!without.valid);
        assert_eq!(
            (without.article, without.penalty_if_incorrect),
            ("9.5.3", 120)
        );
        let with = check(
            &start,
            &moves,
            &now,
            &ask(ClaimKind::ThreefoldRepetition, Some("f6g8")),
            (120, "9.5.3"),
        );
        assert!(with.valid);
        assert_eq!(with.article, "9.2.1");
    }

    #[test]
    fn an_illegal_intended_move_is_named() {
        let (start, moves, now) = play(&KNIGHTS[..7]);
        let answer = check(
            &start,
            &moves,
            &now,
            &ask(ClaimKind::ThreefoldRepetition, Some("e7e4")),
            (60, "9.5.3"),
        );
        assert!(!answer.valid);
        assert!(answer.problem.is_some());
    }

    #[test]
    fn fifty_moves_are_counted_in_half_moves() {
        // Art. 9.3: 8 half-moves without a pawn move or capture is far from fifty moves.
        let (start, moves, now) = play(&KNIGHTS);
        let answer = check(
            &start,
            &moves,
            &now,
            &ask(ClaimKind::FiftyMoves, None),
            (120, "9.5.3"),
        );
        assert!(!answer.valid);
        assert_eq!(answer.halfmoves, 8);
        assert_eq!(answer.article, "9.5.3");
    }
}
