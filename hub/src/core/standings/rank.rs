//! The order and the ranks: points first, then each tie-break in the list's order, as gacrux
//! ranks them. After each criterion the players are sorted by (rank so far, the criterion's
//! value, start rank), and a player keeps a rank of their own where the value differs from
//! the one above; a direct encounter is computed among the players tied at that point.

use super::crosstable::Crosstable;
use super::{encounter, Family, Row, Tiebreak};

pub fn rank(
    crosstable: &Crosstable,
    list: &[Tiebreak],
    mut values: Vec<Vec<Option<f64>>>,
) -> Vec<Row> {
    let n = crosstable.entrants.len();
    let start_rank = |i: usize| crosstable.entrants[i].start_rank;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| start_rank(i));
    let mut ranks = vec![1_u32; n];
    let points: Vec<Option<f64>> = (0..n)
        .map(|i| Some(crosstable.points(i) as f64 / 10.0))
        .collect();
    apply(&mut order, &mut ranks, &points, false, &start_rank);
    for (k, tiebreak) in list.iter().enumerate() {
        if tiebreak.family == Family::DirectEncounter {
            let de = encounter::values(crosstable, &ranks, &order, tiebreak.predetermined);
            values[k] = de.into_iter().map(Some).collect();
        }
        // The places of a direct encounter and the pairing numbers: the lower first.
        let ascending = matches!(
            tiebreak.family,
            Family::DirectEncounter | Family::PairingNumber
        );
        apply(&mut order, &mut ranks, &values[k], ascending, &start_rank);
    }
    order
        .into_iter()
        .map(|i| Row {
            rank: ranks[i],
            start_rank: start_rank(i),
            name: crosstable.entrants[i].name.clone(),
            points: crosstable.points(i) as f64 / 10.0,
            tiebreaks: values.iter().map(|v| v[i]).collect(),
            running: crosstable.running(i),
        })
        .collect()
}

/// Sorts by (rank, `values`, start rank) and ranks again: higher values first (a direct
/// encounter's places, `ascending`, lower first), a missing value last.
fn apply(
    order: &mut [usize],
    ranks: &mut [u32],
    values: &[Option<f64>],
    ascending: bool,
    start_rank: &impl Fn(usize) -> u32,
) {
    order.sort_by(|&a, &b| {
        let by_value = match (values[a], values[b]) {
            (Some(x), Some(y)) if ascending => x.total_cmp(&y),
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        ranks[a]
            .cmp(&ranks[b])
            .then(by_value)
            .then(start_rank(a).cmp(&start_rank(b)))
    });
    let mut value = values[order[0]];
    for position in 1..order.len() {
        let i = order[position];
        let place = position as u32 + 1;
        if ranks[i] == place || values[i] != value {
            ranks[i] = place;
            value = values[i];
        } else {
            ranks[i] = ranks[order[position - 1]];
        }
    }
}
