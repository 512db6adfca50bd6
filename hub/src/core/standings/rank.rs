//! The order and the ranks: the points first, then each tie-break in the list's order, as
//! gacrux ranks them. After each criterion the players are sorted by (rank so far, the
//! criterion's value, start rank), and a player keeps a rank of their own where the value
//! differs from the one above; a direct encounter is computed among the players tied at
//! that point.

/// An encounter's places among the players still tied, from each one's rank and the
/// order so far.
pub type Places<'a> = Box<dyn Fn(&[u32], &[usize]) -> Vec<f64> + 'a>;

/// What orders the players after their points.
pub enum Criterion<'a> {
    /// Values known beforehand: the higher first, or with `ascending` the lower (a pairing
    /// number); a missing value last.
    Values {
        values: Vec<Option<f64>>,
        ascending: bool,
    },
    /// Places among the players still tied (the lower first), computed from the ranks and
    /// the order so far: a direct encounter.
    Encounter(Places<'a>),
}

/// The players ranked: their order (best first), each one's rank, and each criterion's
/// values (an encounter's as it was computed).
pub struct Ranked {
    pub order: Vec<usize>,
    pub ranks: Vec<u32>,
    pub values: Vec<Vec<Option<f64>>>,
}

/// Ranks the players by `points`, then by each of `criteria`, ties by `start_ranks`.
pub fn rank(points: &[Option<f64>], start_ranks: &[u32], criteria: Vec<Criterion<'_>>) -> Ranked {
    let n = points.len();
    let start_rank = |i: usize| start_ranks[i];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| start_rank(i));
    let mut ranks = vec![1_u32; n];
    let mut all = Vec::with_capacity(criteria.len());
    apply(&mut order, &mut ranks, points, false, &start_rank);
    for criterion in criteria {
        let (values, ascending) = match criterion {
            Criterion::Values { values, ascending } => (values, ascending),
            Criterion::Encounter(places) => {
                let places = places(&ranks, &order);
                (places.into_iter().map(Some).collect(), true)
            }
        };
        apply(&mut order, &mut ranks, &values, ascending, &start_rank);
        all.push(values);
    }
    Ranked {
        order,
        ranks,
        values: all,
    }
}

/// Sorts by (rank, `values`, start rank) and ranks again: higher values first (`ascending`:
/// lower first), a missing value last.
fn apply(
    order: &mut [usize],
    ranks: &mut [u32],
    values: &[Option<f64>],
    ascending: bool,
    start_rank: &impl Fn(usize) -> u32,
) {
    if order.is_empty() {
        return;
    }
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
