//! The crosstable from the rounds as the hub shows them: each round's pairings with their
//! results (the hub's where it has them, else the pairing file's; `*` a game still in play)
//! and its players without a board, with the points each gets.

use std::collections::BTreeMap;

use super::crosstable::{Crosstable, Entrant, Outcome, Scoring};
use crate::core::pairings::{tenths, Pairing, Seat, Unpaired};
use crate::core::side::Side;

/// Rounds 1 to `rounds.len()`, each `(pairings, byes)`.
pub fn crosstable(rounds: &[super::Round], scoring: Scoring) -> Crosstable {
    let mut players: BTreeMap<u32, (Seat, Vec<Option<Outcome>>)> = BTreeMap::new();
    let count = rounds.len();
    let mut enter = |seat: &Seat, r: usize, outcome: Outcome| {
        let entry = players
            .entry(seat.start_rank)
            .or_insert_with(|| (seat.clone(), vec![None; count]));
        entry.1[r] = Some(outcome);
    };
    for (r, (games, byes)) in rounds.iter().enumerate() {
        for game in games {
            let (white, black) = outcomes(game, scoring);
            enter(&game.white, r, white);
            enter(&game.black, r, black);
        }
        for bye in byes {
            let points = tenths(&bye.points).unwrap_or(0);
            let outcome = match bye.kind {
                Unpaired::PairingAllocatedBye => Outcome::PairingBye { points },
                _ => Outcome::Unpaired { points },
            };
            enter(&bye.player, r, outcome);
        }
    }
    let entrants = players
        .into_iter()
        .map(|(start_rank, (seat, outcomes))| Entrant {
            start_rank,
            name: seat.name,
            rating: seat.rating.filter(|r| *r > 0),
            outcomes: outcomes
                .into_iter()
                .map(|o| o.unwrap_or(Outcome::Unpaired { points: 0 }))
                .collect(),
        })
        .collect();
    Crosstable::new(count, scoring, entrants)
}

/// White's and Black's rounds of a game by its result.
fn outcomes(game: &Pairing, scoring: Scoring) -> (Outcome, Outcome) {
    let (white, black) = (game.white.start_rank, game.black.start_rank);
    let played = |w: u32, b: u32| {
        (
            Outcome::Played {
                opponent: black,
                side: Side::White,
                points: w,
            },
            Outcome::Played {
                opponent: white,
                side: Side::Black,
                points: b,
            },
        )
    };
    let forfeited = |w: u32, b: u32| {
        (
            Outcome::Forfeited {
                opponent: black,
                side: Side::White,
                points: w,
            },
            Outcome::Forfeited {
                opponent: white,
                side: Side::Black,
                points: b,
            },
        )
    };
    let Scoring { win, draw } = scoring;
    match game.result.as_str() {
        "1-0" => played(win, 0),
        "0-1" => played(0, win),
        "1/2-1/2" => played(draw, draw),
        "+-" => forfeited(win, 0),
        "-+" => forfeited(0, win),
        "--" => forfeited(0, 0),
        _ => (
            Outcome::Running {
                opponent: black,
                side: Side::White,
            },
            Outcome::Running {
                opponent: white,
                side: Side::Black,
            },
        ),
    }
}
