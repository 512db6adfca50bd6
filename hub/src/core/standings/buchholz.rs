//! Buchholz (8.1), Sonneborn-Berger (9.1) and the average of opponents' Buchholz (8.2), with
//! unplayed rounds as Article 16 counts them and the cuts of Article 14, as FIDE's reference
//! tool (gacrux) computes them:
//!
//! - an opponent counts with their score as opponents see it (16.3): their rounds after the
//!   last one they did not choose to leave unplayed, without an opponent, count as draws;
//! - a player's own unplayed round counts against a dummy with the player's own score
//!   (16.4); from 2026 capped by the scheduled opponent's score for a forfeit (16.4.1) and
//!   by a draw in every round otherwise (16.4.2);
//! - a cut takes the least significant value, but a voluntarily unplayed round's first when
//!   it is no more significant (16.5); a median cut also takes the most significant one;
//! - with `/P` a forfeit counts as a game played against its scheduled opponent;
//! - Fore Buchholz (`FB`), after the event's last round, counts every game of that round as
//!   played and drawn (a game still in play too): a player with one counts with every
//!   earlier round as it went and a draw in the last, as opponents count them and as their
//!   own dummy's score; before the last round it is Buchholz;
//! - in a round-robin a forfeit counts as played, a round without an opponent has no
//!   element, and an opponent's rounds after they withdrew count as nothing, not draws.

use super::crosstable::Crosstable;
use super::{Family, Rules, Tiebreak};

/// One round's element: the opponent's (or dummy's) score and the value it adds.
#[derive(Debug, Clone, Copy)]
struct Element {
    /// Tenths of a point.
    score: i64,
    /// Tenths for Buchholz, hundredths (score × result) for Sonneborn-Berger.
    value: i64,
    /// A round the player chose not to play (16.1.2).
    voluntary: bool,
}

/// Player `i`'s score as opponents count it (16.3), in tenths.
pub fn adjusted(crosstable: &Crosstable, i: usize) -> i64 {
    let last_taken = (0..crosstable.rounds)
        .rev()
        .find(|&r| !crosstable.voluntarily_unplayed(i, r));
    (0..crosstable.rounds)
        .map(|r| {
            let counted =
                last_taken.is_some_and(|last| r <= last) || crosstable.opponent(i, r).is_some();
            match (counted, crosstable.round_robin()) {
                (true, _) => crosstable.points_in(i, r),
                // A round-robin's withdrawn player scores nothing more (as gacrux counts).
                (false, true) => 0,
                (false, false) => crosstable.draw(),
            }
        })
        .sum()
}

/// Every player's Buchholz or Sonneborn-Berger (as `tiebreak` says, with its cuts): the
/// opponents' scores in `crosstable`, for Sonneborn-Berger each times the player's result
/// in `results` (the same table, or a team event's other kind of points: 12.3's extended
/// Sonneborn-Berger).
pub fn values(
    crosstable: &Crosstable,
    results: &Crosstable,
    rules: Rules,
    tiebreak: &Tiebreak,
) -> Vec<Option<f64>> {
    let sonneborn = tiebreak.family == Family::SonnebornBerger;
    let scale = if sonneborn { 100.0 } else { 10.0 };
    sums(crosstable, results, rules, tiebreak, sonneborn)
        .into_iter()
        .map(|sum| Some(sum as f64 / scale))
        .collect()
}

/// Every player's elements summed after `tiebreak`'s cuts: tenths for Buchholz, hundredths
/// for Sonneborn-Berger (the results from `results`).
fn sums(
    crosstable: &Crosstable,
    results: &Crosstable,
    rules: Rules,
    tiebreak: &Tiebreak,
    sonneborn: bool,
) -> Vec<i64> {
    let fore = fore_round(crosstable, tiebreak);
    let fore_score = |i| fore.and_then(|last| fore_score(crosstable, i, last));
    let adjusted: Vec<i64> = (0..crosstable.entrants.len())
        .map(|i| fore_score(i).unwrap_or_else(|| adjusted(crosstable, i)))
        .collect();
    (0..crosstable.entrants.len())
        .map(|i| {
            let counted = Counted {
                own: fore_score(i).unwrap_or_else(|| crosstable.points(i)),
                adjusted: &adjusted,
                fore,
            };
            let sonneborn = sonneborn.then_some(results);
            let elements = elements(crosstable, rules, &counted, i, sonneborn, tiebreak);
            cut(elements, tiebreak, crosstable.rounds)
        })
        .collect()
}

/// The scores one player's elements are made of.
struct Counted<'a> {
    /// The player's own score, for their dummies.
    own: i64,
    /// Every player's score as opponents count it.
    adjusted: &'a [i64],
    /// Fore Buchholz's last round, whose games count as played.
    fore: Option<usize>,
}

/// Fore Buchholz's round: the event's last, when the table is after it (0-based).
fn fore_round(crosstable: &Crosstable, tiebreak: &Tiebreak) -> Option<usize> {
    let last = crosstable.rounds.checked_sub(1)?;
    (tiebreak.family == Family::ForeBuchholz && crosstable.scheduled == Some(crosstable.rounds))
        .then_some(last)
}

/// Player `i`'s score as Fore Buchholz counts it, for a player with a game in round `last`:
/// every earlier round as it went, that game a draw.
fn fore_score(crosstable: &Crosstable, i: usize, last: usize) -> Option<i64> {
    crosstable.paired_with(i, last)?;
    let before: i64 = (0..last).map(|r| crosstable.points_in(i, r)).sum();
    Some(before + crosstable.draw())
}

/// Every player's average of their opponents' Buchholz (8.2), over games played, rounded as
/// gacrux rounds it (half up, to 2 decimals up to 8 rounds, 3 up to 26, 4 up to 72, then 5).
pub fn average_of_opponents(
    crosstable: &Crosstable,
    rules: Rules,
    tiebreak: &Tiebreak,
) -> Vec<Option<f64>> {
    // The opponents' Buchholz with this tie-break's cuts, in tenths.
    let buchholz = sums(crosstable, crosstable, rules, tiebreak, false);
    let decimals: u32 = match crosstable.rounds {
        0..=8 => 2,
        9..=26 => 3,
        27..=72 => 4,
        _ => 5,
    };
    (0..crosstable.entrants.len())
        .map(|i| {
            let opponents: Vec<i64> = crosstable
                .played_opponents(i)
                .map(|o| buchholz[o])
                .collect();
            if opponents.is_empty() {
                return None;
            }
            // The sum is in tenths: to `decimals` places, half up.
            let (sum, n) = (opponents.iter().sum::<i64>(), opponents.len() as i64);
            let scaled = sum * 10_i64.pow(decimals - 1);
            let rounded = (2 * scaled + n).div_euclid(2 * n);
            Some(rounded as f64 / 10_f64.powi(decimals as i32))
        })
        .collect()
}

/// Player `i`'s elements, round by round; for Sonneborn-Berger each times the result in
/// `sonneborn`.
fn elements(
    crosstable: &Crosstable,
    rules: Rules,
    counted: &Counted<'_>,
    i: usize,
    sonneborn: Option<&Crosstable>,
    tiebreak: &Tiebreak,
) -> Vec<Element> {
    let (own, adjusted) = (counted.own, counted.adjusted);
    let fore = |r: usize| counted.fore == Some(r);
    let counted_as_played = |r: usize| {
        tiebreak.predetermined || crosstable.round_robin() || crosstable.played(i, r) || fore(r)
    };
    (0..crosstable.rounds)
        .filter_map(|r| {
            let opponent = if fore(r) {
                crosstable.paired_with(i, r)
            } else {
                crosstable.opponent(i, r)
            };
            // A round-robin's round without an opponent has no element (no dummy).
            if crosstable.round_robin() && opponent.is_none() {
                return None;
            }
            let (score, voluntary) = match opponent {
                Some(opponent) if counted_as_played(r) => (adjusted[opponent], false),
                scheduled => {
                    let dummy = match (rules, scheduled) {
                        (Rules::Fide2024, _) => own,
                        (Rules::Fide2026, Some(opponent)) => own.min(adjusted[opponent]),
                        (Rules::Fide2026, None) => {
                            own.min(crosstable.draw() * crosstable.rounds as i64)
                        }
                    };
                    (dummy, crosstable.voluntarily_unplayed(i, r))
                }
            };
            let value = match sonneborn {
                Some(results) => score * results.points_in(i, r),
                None => score,
            };
            Some(Element {
                score,
                value,
                voluntary,
            })
        })
        .collect()
}

/// The sum of the elements left after `tiebreak`'s cuts (14.1, 14.3, 16.5). Each cut
/// leaves the others in the order it sorted them, as gacrux does, which decides between
/// equal elements in the next cut.
fn cut(mut elements: Vec<Element>, tiebreak: &Tiebreak, rounds: usize) -> i64 {
    let low = tiebreak.cut_low.min(rounds);
    let high = tiebreak.cut_high.min(rounds - low);
    for _ in 0..low {
        if elements.is_empty() {
            break;
        }
        let mut least = elements.clone();
        least.sort_by_key(|e| (e.score, e.value));
        let mut voluntary = elements.clone();
        voluntary.sort_by_key(|e| (!e.voluntary, e.value, e.score));
        // 16.5.1: the voluntarily unplayed round goes first unless the least significant
        // element is worth more (then that one goes).
        elements = if !voluntary[0].voluntary || least[0].value > voluntary[0].value {
            least.split_off(1)
        } else {
            voluntary.split_off(1)
        };
    }
    for _ in 0..high {
        if elements.is_empty() {
            break;
        }
        elements.sort_by_key(|e| (std::cmp::Reverse(e.score), std::cmp::Reverse(e.value)));
        elements.remove(0);
    }
    elements.iter().map(|e| e.value).sum()
}
