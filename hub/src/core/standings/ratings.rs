//! The tie-breaks of ratings (Article 10): the player's own rating (`RTNG`), the average
//! rating of opponents (10.1), the tournament performance rating (10.2), the perfect
//! tournament performance (`PTP`) and the opponents' averages of the two (`APRO`, `APPO`),
//! over games played, as gacrux computes them: only where every player has a rating (or
//! the event or the code gives unrated players one), averages rounded half up, the
//! performance from FIDE's table of percentages (B.02, 8.1a), the perfect performance the
//! lowest rating whose expected score (B.02, 8.1b) reaches the score.

use super::crosstable::Crosstable;
use super::{Family, Tiebreak};

/// FIDE's rating difference for each percentage scored, 0 % to 100 % (B.02, 8.1a).
const SCORE_TO_DP: [i64; 101] = [
    -800, -677, -589, -538, -501, -470, -444, -422, -401, -383, -366, -351, -336, -322, -309, -296,
    -284, -273, -262, -251, -240, -230, -220, -211, -202, -193, -184, -175, -166, -158, -149, -141,
    -133, -125, -117, -110, -102, -95, -87, -80, -72, -65, -57, -50, -43, -36, -29, -21, -14, -7,
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65, 72, 80, 87, 95, 102, 110, 117, 125, 133, 141, 149, 158,
    166, 175, 184, 193, 202, 211, 220, 230, 240, 251, 262, 273, 284, 296, 309, 322, 336, 351, 366,
    383, 401, 422, 444, 470, 501, 538, 589, 677, 800,
];

/// FIDE's expected score in percent of the better rated for each rating difference, 0 to
/// 800 (B.02, 8.1b).
#[rustfmt::skip]
const DIFF_TO_PD: [u8; 801] = [
    50, 50, 50, 50, 51, 51, 51, 51, 51, 51, 51, 52, 52, 52, 52, 52, 52, 52, 53, 53,
    53, 53, 53, 53, 53, 53, 54, 54, 54, 54, 54, 54, 54, 55, 55, 55, 55, 55, 55, 55,
    56, 56, 56, 56, 56, 56, 56, 57, 57, 57, 57, 57, 57, 57, 58, 58, 58, 58, 58, 58,
    58, 58, 59, 59, 59, 59, 59, 59, 59, 60, 60, 60, 60, 60, 60, 60, 60, 61, 61, 61,
    61, 61, 61, 61, 62, 62, 62, 62, 62, 62, 62, 62, 63, 63, 63, 63, 63, 63, 63, 64,
    64, 64, 64, 64, 64, 64, 64, 65, 65, 65, 65, 65, 65, 65, 66, 66, 66, 66, 66, 66,
    66, 66, 67, 67, 67, 67, 67, 67, 67, 67, 68, 68, 68, 68, 68, 68, 68, 68, 69, 69,
    69, 69, 69, 69, 69, 69, 70, 70, 70, 70, 70, 70, 70, 70, 71, 71, 71, 71, 71, 71,
    71, 71, 71, 72, 72, 72, 72, 72, 72, 72, 72, 73, 73, 73, 73, 73, 73, 73, 73, 73,
    74, 74, 74, 74, 74, 74, 74, 74, 74, 75, 75, 75, 75, 75, 75, 75, 75, 75, 76, 76,
    76, 76, 76, 76, 76, 76, 76, 77, 77, 77, 77, 77, 77, 77, 77, 77, 78, 78, 78, 78,
    78, 78, 78, 78, 78, 78, 79, 79, 79, 79, 79, 79, 79, 79, 79, 79, 80, 80, 80, 80,
    80, 80, 80, 80, 80, 80, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 82, 82, 82,
    82, 82, 82, 82, 82, 82, 82, 82, 83, 83, 83, 83, 83, 83, 83, 83, 83, 83, 83, 84,
    84, 84, 84, 84, 84, 84, 84, 84, 84, 84, 84, 85, 85, 85, 85, 85, 85, 85, 85, 85,
    85, 85, 85, 86, 86, 86, 86, 86, 86, 86, 86, 86, 86, 86, 86, 86, 87, 87, 87, 87,
    87, 87, 87, 87, 87, 87, 87, 87, 87, 88, 88, 88, 88, 88, 88, 88, 88, 88, 88, 88,
    88, 88, 88, 88, 88, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 90, 90,
    90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 91, 91, 91, 91, 91,
    91, 91, 91, 91, 91, 91, 91, 91, 91, 91, 91, 91, 92, 92, 92, 92, 92, 92, 92, 92,
    92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 93, 93, 93, 93, 93, 93, 93, 93,
    93, 93, 93, 93, 93, 93, 93, 93, 93, 93, 93, 93, 93, 94, 94, 94, 94, 94, 94, 94,
    94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 94, 95, 95, 95,
    95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95, 95,
    95, 95, 95, 95, 95, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96,
    96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 97, 97,
    97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97,
    97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97, 97,
    98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98,
    98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98,
    98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98, 98,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 100, 100, 100, 100,
    100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
    100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
    100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
    100,
];

/// `sum / n` rounded half up.
fn rounded(sum: i64, n: i64) -> i64 {
    (2 * sum + n).div_euclid(2 * n)
}

/// A player's games a rating tie-break counts, after its cuts: (the opponent's rating, the
/// rating points scored against them in tenths: 10, 5 or 0 whatever the event's point
/// system).
type Games = Vec<(i64, i64)>;

/// Every player's value of `tiebreak` (RTNG, ARO, TPR, PTP, APRO or APPO, with its cuts);
/// none where a player of the event has no rating.
pub fn values(crosstable: &Crosstable, tiebreak: &Tiebreak) -> Vec<Option<f64>> {
    // The code's own rating for the unrated (`/U1400`) over the event's.
    let rating = |i: usize| {
        crosstable.entrants[i]
            .rating
            .or(tiebreak.unrated)
            .or(crosstable.unrated)
    };
    let n = crosstable.entrants.len();
    if !(0..n).all(|i| rating(i).is_some()) {
        return vec![None; n];
    }
    let games: Vec<Games> = (0..n)
        .map(|i| counted_games(crosstable, tiebreak, i, &rating))
        .collect();
    let each =
        |f: &dyn Fn(&Games) -> Option<i64>| -> Vec<Option<i64>> { games.iter().map(f).collect() };
    let values = match tiebreak.family {
        Family::Rating => (0..n).map(|i| rating(i).map(i64::from)).collect(),
        Family::AverageRatingOfOpponents => each(&|g| average(g)),
        Family::Performance => each(&|g| performance(g)),
        Family::PerfectPerformance => each(&|g| perfect_performance(g)),
        Family::AverageOfPerformances => opponents_average(crosstable, &each(&|g| performance(g))),
        Family::AverageOfPerfectPerformances => {
            opponents_average(crosstable, &each(&|g| perfect_performance(g)))
        }
        _ => vec![None; n],
    };
    values.into_iter().map(|v| v.map(|v| v as f64)).collect()
}

/// Player `i`'s games played, the lowest ratings cut first, then the highest (equal
/// ratings in round order).
fn counted_games(
    crosstable: &Crosstable,
    tiebreak: &Tiebreak,
    i: usize,
    rating: &impl Fn(usize) -> Option<u16>,
) -> Games {
    let mut games: Games = (0..crosstable.rounds)
        .filter(|&r| crosstable.played(i, r))
        .filter_map(|r| {
            let opponent = crosstable.opponent(i, r)?;
            let rating = i64::from(rating(opponent)?);
            let points = crosstable.points_in(i, r);
            let scored = if points == crosstable.win() {
                10
            } else if points == crosstable.draw() {
                5
            } else {
                0
            };
            Some((rating, scored))
        })
        .collect();
    let low = tiebreak.cut_low.min(crosstable.rounds);
    let high = tiebreak.cut_high.min(crosstable.rounds - low);
    games.sort_by_key(|(rating, _)| *rating);
    let start = low.min(games.len());
    let end = games.len().saturating_sub(high).max(start);
    games[start..end].to_vec()
}

/// The opponents' average rating (10.1).
fn average(games: &Games) -> Option<i64> {
    let n = games.len() as i64;
    (n > 0).then(|| rounded(games.iter().map(|(rating, _)| rating).sum(), n))
}

/// The tournament performance rating (10.2): the average and the difference the
/// percentage scored gives.
fn performance(games: &Games) -> Option<i64> {
    let n = games.len() as i64;
    let scored: i64 = games.iter().map(|(_, s)| s).sum();
    // The percentage: the score in hundredths over the games, half up.
    let percent = rounded(scored * 10, n.max(1)) as usize;
    Some(average(games)? + SCORE_TO_DP[percent.min(100)])
}

/// A player of `player`'s rating's expected score against `opponent`, in percent.
fn expected_percent(player: i64, opponent: i64) -> i64 {
    let diff = (opponent - player).clamp(-800, 800);
    let pd = i64::from(DIFF_TO_PD[diff.unsigned_abs() as usize]);
    if diff > 0 {
        100 - pd
    } else {
        pd
    }
}

/// The perfect tournament performance: the lowest rating whose expected score against the
/// opponents reaches the score (a score of 0: the lowest rating less 800), searched as
/// gacrux searches it (from the performance rating, steps doubling from 16, then halved).
fn perfect_performance(games: &Games) -> Option<i64> {
    let ratings = games.iter().map(|(rating, _)| *rating);
    let (lowest, highest) = (ratings.clone().min()?, ratings.clone().max()?);
    let scored: i64 = games.iter().map(|(_, s)| s).sum();
    if scored == 0 {
        return Some(lowest - 800);
    }
    if scored > 10 * games.len() as i64 {
        return Some(highest + 800);
    }
    // In hundredths of a point, as the percentages are.
    let target = scored * 10;
    let expected = |rating: i64| -> i64 {
        games
            .iter()
            .map(|(opponent, _)| expected_percent(rating, *opponent))
            .sum()
    };
    let start = performance(games)?;
    let mut step = 16;
    let (mut low, mut high);
    if expected(start) >= target {
        high = start;
        while expected(start - step) >= target {
            high = start - step;
            step *= 2;
        }
        low = start - step;
    } else {
        low = start;
        while expected(start + step) < target {
            low = start + step;
            step *= 2;
        }
        high = start + step;
    }
    step = high - low;
    while high - low > 1 {
        step /= 2;
        if expected(low + step) >= target {
            high -= step;
        } else {
            low += step;
        }
    }
    Some(high)
}

/// Each player's average, rounded half up, of their opponents' `values` over the games they
/// played (opponents without a value left out).
fn opponents_average(crosstable: &Crosstable, values: &[Option<i64>]) -> Vec<Option<i64>> {
    (0..crosstable.entrants.len())
        .map(|i| {
            let opponents: Vec<i64> = crosstable
                .played_opponents(i)
                .filter_map(|o| values[o])
                .collect();
            let n = opponents.len() as i64;
            (n > 0).then(|| rounded(opponents.iter().sum(), n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_scores_of_both_players_make_one_game() {
        for diff in -900..=900 {
            assert_eq!(
                expected_percent(2000, 2000 + diff) + expected_percent(2000 + diff, 2000),
                100
            );
        }
        assert_eq!(expected_percent(2000, 2000), 50);
        assert_eq!(
            expected_percent(2400, 2000),
            92,
            "B.02 8.1b: 400 points, 92 %"
        );
    }

    #[test]
    fn a_perfect_performance_is_the_lowest_rating_that_expects_the_score() {
        let games: Games = vec![(2000, 10), (2000, 5), (2000, 0)];
        let ptp = perfect_performance(&games).unwrap();
        let expected = |r: i64| {
            games
                .iter()
                .map(|(o, _)| expected_percent(r, *o))
                .sum::<i64>()
        };
        assert!(expected(ptp) >= 150 && expected(ptp - 1) < 150, "{ptp}");
        assert_eq!(perfect_performance(&vec![(1800, 0), (2100, 0)]), Some(1000));
        assert_eq!(perfect_performance(&Vec::new()), None);
    }
}
