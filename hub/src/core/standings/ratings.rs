//! The tie-breaks of ratings (Article 10): the average rating of opponents (10.1) and the
//! tournament performance rating (10.2), over games played, as gacrux computes them: only
//! where every player has a rating (or the event gives unrated players one), averages
//! rounded half up, the performance from FIDE's
//! table of percentages (B.02, 8.1a).

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

/// `sum / n` rounded half up.
fn rounded(sum: i64, n: i64) -> i64 {
    (2 * sum + n).div_euclid(2 * n)
}

/// Every player's value of `tiebreak` (ARO or TPR, with its cuts); none where a player of
/// the event has no rating.
pub fn values(crosstable: &Crosstable, tiebreak: &Tiebreak) -> Vec<Option<f64>> {
    // The code's own rating for the unrated (`/U1400`) over the event's.
    let rating = |i: usize| {
        crosstable.entrants[i]
            .rating
            .or(tiebreak.unrated)
            .or(crosstable.unrated)
    };
    let all_rated = (0..crosstable.entrants.len()).all(|i| rating(i).is_some());
    (0..crosstable.entrants.len())
        .map(|i| {
            if !all_rated {
                return None;
            }
            // (opponent's rating, the rating points scored against them in tenths: 10,
            // 5 or 0 whatever the event's point system)
            let mut games: Vec<(i64, i64)> = (0..crosstable.rounds)
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
            // The lowest ratings cut first, then the highest (equal ratings in round order).
            games.sort_by_key(|(rating, _)| *rating);
            let start = low.min(games.len());
            let end = games.len().saturating_sub(high).max(start);
            let games = &games[start..end];
            if games.is_empty() {
                return None;
            }
            let n = games.len() as i64;
            let average = rounded(games.iter().map(|(rating, _)| rating).sum(), n);
            let value = match tiebreak.family {
                Family::Performance => {
                    let scored: i64 = games.iter().map(|(_, s)| s).sum();
                    // The percentage: the score in hundredths over the games, half up.
                    let percent = rounded(scored * 10, n) as usize;
                    average + SCORE_TO_DP[percent.min(100)]
                }
                _ => average,
            };
            Some(value as f64)
        })
        .collect()
}
