//! The direct encounter (6): among players still tied, the points they scored against each
//! other decide, as gacrux decides them:
//!
//! - a game counts only if played over the board (6.1.1), a forfeit too with `DE/P` or in
//!   a round-robin; players who met more than once count the average against each other
//!   (6.1.2);
//! - where every tied player met every other (in a round-robin they are taken to have), the
//!   points rank them; where not (a Swiss event, 6.3), a player is placed ahead only if
//!   their points exceed what anyone after could still have scored (the unplayed games
//!   counted as won);
//! - players separated so are ranked again among those still tied with them (6.2).
//!
//! The value is the place the encounter gives within its tied group (1, 2, …), and 0 for
//! every player of a group it does not separate.

use super::crosstable::Crosstable;

/// One way of comparing tied players by their games against each other: the points of a
/// crosstable (a team event's match points, its game points, or one board's), among every
/// tied group or only among two tied players (a team's board results, 13.3.2).
#[derive(Clone, Copy)]
pub struct Pass<'a> {
    pub table: &'a Crosstable,
    pub pairs_only: bool,
}

impl<'a> Pass<'a> {
    pub fn every_group(table: &'a Crosstable) -> Pass<'a> {
        Pass {
            table,
            pairs_only: false,
        }
    }
}

/// Every player's direct-encounter value, given each player's rank so far (`ranks`) and the
/// players in the order ranked so far (`order`, ties by start rank); `forfeits`: a forfeit
/// counts as an encounter (`DE/P`).
///
/// With several passes (a team's extended encounter, `EDE`: match points, then game
/// points, then board by board) each is run until it separates nobody more, then the next,
/// around again until none separates anyone, as gacrux runs them.
pub fn values(passes: &[Pass<'_>], ranks: &[u32], order: &[usize], forfeits: bool) -> Vec<f64> {
    let first = passes[0].table;
    let n = first.entrants.len();
    let start_rank = |i: usize| first.entrants[i].start_rank;
    let mut value: Vec<u32> = ranks.to_vec();
    let mut again = vec![true; n];
    let mut order = order.to_vec();
    let mut current = 0;
    // Whether each pass separated someone the last time it ran.
    let mut separating = vec![true; passes.len()];
    // Each round of the loop splits every tied group it can with the current pass; the
    // next ranks the parts again (gacrux stops after 30).
    for _loop in 1..=30 {
        let pass = passes[current];
        let mut changes = 0;
        let mut start = 0;
        while start < order.len() {
            let group = group_at(&order, start, |i| value[i]);
            let members = &order[start..start + group];
            if again[members[0]] {
                if group == 1 {
                    again[members[0]] = false;
                } else {
                    let changed = if pass.pairs_only && group != 2 {
                        0
                    } else {
                        separate(pass.table, members, &mut value, forfeits)
                    };
                    for &i in members {
                        again[i] = changed > 0;
                    }
                    changes += changed;
                }
            }
            start += group;
        }
        order.sort_by_key(|&i| (ranks[i], value[i], start_rank(i)));
        if changes == 0 {
            separating[current] = false;
            current = (current + 1) % passes.len();
            again.fill(true);
        } else {
            separating.fill(true);
        }
        if !separating.iter().any(|s| *s) {
            break;
        }
    }
    // The place within each group that was tied before: 0 where nothing was decided.
    let mut out = vec![0.0; n];
    let mut start = 0;
    while start < order.len() {
        let group = group_at(&order, start, |i| ranks[i]);
        let members = &order[start..start + group];
        let (first, last) = (value[members[0]], value[members[group - 1]]);
        let offset = if first != last { first - 1 } else { first };
        for &i in members {
            out[i] = f64::from(value[i] - offset);
        }
        start += group;
    }
    out
}

/// How many players from `start` on share `key`.
fn group_at(order: &[usize], start: usize, key: impl Fn(usize) -> u32) -> usize {
    order[start..]
        .iter()
        .take_while(|&&i| key(i) == key(order[start]))
        .count()
}

/// One tied group's encounter: gives separated players new values; how many it separated.
fn separate(
    crosstable: &Crosstable,
    members: &[usize],
    value: &mut [u32],
    forfeits: bool,
) -> usize {
    let tied = value[members[0]];
    let others = members.len() - 1;
    let win = crosstable.win() as f64;
    // (player, points against the group, the most they could have had, start rank)
    let mut scores: Vec<(usize, f64, f64, u32)> = Vec::new();
    let mut all_met = true;
    for &i in members {
        // Each opponent of the group: (games, average points against them).
        let mut against: Vec<(usize, u32, f64)> = Vec::new();
        for r in 0..crosstable.rounds {
            let Some(opponent) = crosstable.opponent(i, r) else {
                continue;
            };
            if !crosstable.met(i, r, forfeits) || value[opponent] != tied {
                continue;
            }
            let points = crosstable.points_in(i, r) as f64;
            match against.iter_mut().find(|(o, _, _)| *o == opponent) {
                Some((_, games, average)) => {
                    *average = (*average * f64::from(*games) + points) / f64::from(*games + 1);
                    *games += 1;
                }
                None => against.push((opponent, 1, points)),
            }
        }
        let points: f64 = against.iter().map(|(_, _, average)| average).sum();
        let unmet = others.saturating_sub(against.len());
        // A round-robin's tied players are all taken as having met (gacrux): the points
        // alone rank them, even before the rounds between them are played.
        if unmet > 0 && !crosstable.round_robin() {
            all_met = false;
        }
        scores.push((
            i,
            points,
            points + unmet as f64 * win,
            crosstable.entrants[i].start_rank,
        ));
    }
    let mut changes = 0;
    let by_points = |a: &(usize, f64, f64, u32), b: &(usize, f64, f64, u32)| {
        b.1.total_cmp(&a.1).then(a.3.cmp(&b.3))
    };
    if all_met {
        scores.sort_by(by_points);
        let (mut place, mut shared) = (tied, tied);
        let mut points = scores[0].1;
        for &(i, p, _, _) in &scores[1..] {
            place += 1;
            if p != points {
                shared = place;
                points = p;
                changes += 1;
            }
            value[i] = shared;
        }
    } else {
        scores.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.total_cmp(&a.2))
                .then(a.3.cmp(&b.3))
        });
        let (mut place, mut shared) = (tied, tied);
        let mut points = scores[0].1;
        let mut unique = true;
        for k in 1..scores.len() {
            place += 1;
            let best_after = scores[k..].iter().map(|s| s.2).fold(f64::MIN, f64::max);
            let i = scores[k].0;
            if unique && points > best_after {
                shared = place;
                changes += 1;
            } else {
                unique = false;
            }
            value[i] = shared;
            points = scores[k].1;
        }
    }
    changes
}
