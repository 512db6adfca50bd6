//! The tie-breaks that count: wins (7.1, 7.2), games and wins with Black (7.3, 7.4), rounds
//! elected to play (7.6), progressive scores (7.5), Koya (9.2) and the standard score (STD).

use super::crosstable::Crosstable;
use super::{Family, KoyaLimit};
use crate::core::side::Side;

/// How many of player `i`'s rounds `family` counts.
pub fn count(crosstable: &Crosstable, i: usize, family: Family) -> i64 {
    (0..crosstable.rounds)
        .filter(|&r| {
            let won = crosstable.won(i, r);
            let played = crosstable.played(i, r);
            let black = crosstable.side(i, r) == Some(Side::Black);
            match family {
                Family::Wins => won,
                Family::WonOverTheBoard => won && played,
                Family::GamesWithBlack => black && played,
                Family::WonWithBlack => black && played && won,
                // The pairing-allocated bye is a round the player was there to play.
                Family::RoundsElected => played || won || crosstable.pairing_bye(i, r),
                _ => false,
            }
        })
        .count() as i64
}

/// The sum of player `i`'s running scores after each round, the first `cut` rounds' left
/// out, in tenths.
pub fn progressive(crosstable: &Crosstable, i: usize, cut: usize) -> i64 {
    let mut so_far = 0;
    let mut sum = 0;
    for r in 0..crosstable.rounds {
        so_far += crosstable.points_in(i, r);
        if r >= cut {
            sum += so_far;
        }
    }
    sum
}

/// Player `i`'s score in the standard point system (`STD`): a round worth more than a draw
/// is 1, a draw ½, less 0, in tenths.
pub fn standard(crosstable: &Crosstable, i: usize) -> i64 {
    (0..crosstable.rounds)
        .map(|r| match crosstable.points_in(i, r) {
            p if p > crosstable.draw() => 10,
            p if p == crosstable.draw() => 5,
            _ => 0,
        })
        .sum()
}

/// Player `i`'s points against opponents who scored half the possible points or more, in
/// tenths.
pub fn koya(crosstable: &Crosstable, i: usize, limit: KoyaLimit) -> i64 {
    // The limit's share of a win in every round, plus its shift: compared in hundredths of
    // tenths, so that no fraction is lost.
    let least = i64::from(limit.percent) * crosstable.win() * possible_games(crosstable)
        + 100 * limit.shift_tenths;
    (0..crosstable.rounds)
        .filter(|&r| {
            crosstable
                .opponent(i, r)
                .is_some_and(|o| 100 * crosstable.points(o) >= least)
        })
        .map(|r| crosstable.points_in(i, r))
        .sum()
}

/// The games a player could have had, whose points Koya's limit is a share of: a round
/// each; in a round-robin, as gacrux counts them, less a cycle's round off where the rounds
/// are whole cycles of an odd field's, and one for every player never paired.
fn possible_games(crosstable: &Crosstable) -> i64 {
    let rounds = crosstable.rounds as i64;
    if !crosstable.round_robin() {
        return rounds;
    }
    let field = crosstable.entrants.len() as i64;
    let cycles_off = if field > 0 && rounds % field == 0 {
        rounds / field
    } else {
        0
    };
    let never_paired = (0..crosstable.entrants.len())
        .filter(|&i| (0..crosstable.rounds).all(|r| crosstable.opponent(i, r).is_none()))
        .count() as i64;
    rounds - cycles_off - never_paired
}
