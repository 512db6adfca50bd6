//! Which team of a match is its White team (what `BPG` and `BWG` count for teams), as gacrux
//! (`games2matches`) decides it:
//!
//! - each team's entries of the round, its players' games and their rounds without an
//!   opponent, in the order of the team's list (a zero-point entry last);
//! - then as the round's out-of-order records (`300`) place them, in the file's order: a
//!   listed player's entry on the board the record gives; the others, in order, on the
//!   boards left. A game's board is the two teams' one, so a record of one team places the
//!   shared games for the other's record too;
//! - the first of the lower-numbered team's boards (up to the match's size) that holds a
//!   game between the two teams: the team whose player has that board's colour in the
//!   event's sequence (`352`, else White, Black, …) is White. A match decided without games
//!   (`330`) has the record's colours.

use std::collections::HashMap;

use super::roster::Roster;
use super::TeamRecords;
use crate::core::pairings::{Bye, Pairing, Unpaired};
use crate::core::side::Side;

/// One entry of a team's round: a game (its index in the round's games) or a player's round
/// without an opponent (its index in the byes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Entry {
    Game(usize),
    Alone(usize),
}

/// For each team (the roster's order) with a match in the round: whether it is the match's White
/// team; `None` without a match, or where no board decides it.
pub fn white_teams(
    roster: &Roster,
    games: &[Pairing],
    byes: &[Bye],
    records: &TeamRecords,
    sequence: &[Side],
    size: usize,
) -> Vec<Option<bool>> {
    let count = roster.len();
    // Each team's entries, with (a zero-point entry, the player's place) to order them by.
    let mut entries: Vec<Vec<((bool, usize), Entry)>> = vec![Vec::new(); count];
    let mut opponents: Vec<Option<usize>> = vec![None; count];
    for (g, game) in games.iter().enumerate() {
        let Some(((w, wp), (b, bp))) = roster.sides(game) else {
            continue;
        };
        entries[w].push(((false, wp), Entry::Game(g)));
        entries[b].push(((false, bp), Entry::Game(g)));
        opponents[w] = Some(b);
        opponents[b] = Some(w);
    }
    for (i, bye) in byes.iter().enumerate() {
        let Some((t, place)) = roster.member(bye.player.start_rank) else {
            continue;
        };
        let zero = match bye.kind {
            // No entry in the file: no game of the team's.
            Unpaired::NotPaired => continue,
            Unpaired::ZeroPointBye => true,
            _ => false,
        };
        entries[t].push(((zero, place), Entry::Alone(i)));
    }
    let mut lists: Vec<Vec<Option<Entry>>> = entries
        .into_iter()
        .map(|mut list| {
            list.sort_by_key(|(key, _)| *key);
            list.into_iter().map(|(_, e)| Some(e)).collect()
        })
        .collect();
    let involves = |entry: Entry, rank: u32| match entry {
        Entry::Game(g) => [games[g].white.start_rank, games[g].black.start_rank].contains(&rank),
        Entry::Alone(i) => byes[i].player.start_rank == rank,
    };
    // The boards the out-of-order records give, shared by both teams of a game.
    let mut boards: HashMap<Entry, usize> = HashMap::new();
    for record in &records.out_of_order {
        let Some(t) = roster.team(record.team) else {
            continue;
        };
        if record.order.len() < size {
            continue; // gacrux refuses such a file
        }
        let list = &lists[t];
        for (i, rank) in record.order.iter().take(size).enumerate() {
            if *rank == 0 {
                continue;
            }
            if let Some(entry) = list.iter().flatten().find(|e| involves(**e, *rank)) {
                boards.insert(*entry, i + 1);
            }
        }
        let mut placed: Vec<Option<Option<Entry>>> = vec![None; size];
        let mut rest: Vec<Option<Entry>> = Vec::new();
        for entry in list {
            match entry.and_then(|e| boards.get(&e)) {
                Some(&board) if board <= size => placed[board - 1] = Some(*entry),
                _ => rest.push(*entry),
            }
        }
        let mut rest = rest.into_iter();
        let mut list: Vec<Option<Entry>> = placed
            .into_iter()
            .map(|slot| slot.unwrap_or_else(|| rest.next().flatten()))
            .collect();
        list.extend(rest);
        lists[t] = list;
    }
    let side_of = |g: usize, side: Side| {
        let player = match side {
            Side::White => &games[g].white,
            Side::Black => &games[g].black,
        };
        roster.member(player.start_rank).map(|(t, _)| t)
    };
    (0..count)
        .map(|t| {
            let o = opponents[t]?;
            let (mine, theirs) = (roster.number(t), roster.number(o));
            if let Some(forfeit) = records.forfeits.iter().find(|f| {
                [f.white, f.black] == [mine, theirs] || [f.white, f.black] == [theirs, mine]
            }) {
                return Some(forfeit.white == mine);
            }
            let (higher, lower) = if mine > theirs { (t, o) } else { (o, t) };
            let first = |list: &[Option<Entry>]| list.iter().take(size).copied().collect();
            let (games1, games2): (Vec<Option<Entry>>, Vec<Option<Entry>>) =
                (first(&lists[higher]), first(&lists[lower]));
            games2.iter().enumerate().find_map(|(k, entry)| {
                let Some(Entry::Game(g)) = *entry else {
                    return None;
                };
                if !games1.contains(entry) || sequence.is_empty() {
                    return None;
                }
                let white = side_of(g, sequence[k % sequence.len()])?;
                Some(white == t)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::seat;
    use super::*;
    use crate::core::standings::teams::OutOfOrder;
    use crate::core::standings::teams::Team;
    use Side::{Black, White};

    /// A board's game won by White (its board number does not count here).
    fn game(white: u32, black: u32) -> Pairing {
        super::super::tests::game(1, white, black, "1-0")
    }

    /// Team 1 (players 1, 2, 3) against team 2 (players 4, 5, 6), three boards.
    fn teams() -> Vec<Team> {
        let team = |number, members: [u32; 3]| Team {
            number,
            name: format!("T{number}"),
            members: members.to_vec(),
        };
        vec![team(1, [1, 2, 3]), team(2, [4, 5, 6])]
    }

    const WBW: [Side; 3] = [White, Black, White];

    #[test]
    fn the_white_team_is_the_one_with_the_sequence_s_colour_on_the_first_board() {
        // Board 1: team 2's player has White, so team 2 is the White team.
        let games = [game(4, 1), game(2, 5), game(6, 3)];
        let white = white_teams(
            &Roster::new(&teams()),
            &games,
            &[],
            &TeamRecords::default(),
            &WBW,
            3,
        );
        assert_eq!(white, [Some(false), Some(true)]);
    }

    #[test]
    fn an_unopposed_first_board_leaves_the_second_to_decide_by_its_colour() {
        // Team 1's first player is unopposed: its second board decides, where the White
        // team has Black (W B W): team 1's player has Black there, so team 1 is White.
        let games = [game(4, 2), game(3, 5)];
        let byes = [Bye {
            player: seat(1),
            kind: Unpaired::PairingAllocatedBye,
            points: "1.0".into(),
            section: None,
        }];
        let white = white_teams(
            &Roster::new(&teams()),
            &games,
            &byes,
            &TeamRecords::default(),
            &WBW,
            3,
        );
        assert_eq!(white, [Some(true), Some(false)]);
    }

    #[test]
    fn boards_out_of_order_change_the_first_board() {
        // Team 1 lists player 3 on board 1 (record 300): its game, where team 1 has White,
        // decides.
        let games = [game(4, 1), game(2, 5), game(3, 6)];
        let records = TeamRecords {
            out_of_order: vec![OutOfOrder {
                team: 1,
                order: vec![3, 1, 2],
            }],
            ..TeamRecords::default()
        };
        let white = white_teams(&Roster::new(&teams()), &games, &[], &records, &WBW, 3);
        assert_eq!(white, [Some(true), Some(false)]);
        // A match decided without games has its record's colours.
        let records = TeamRecords {
            forfeits: vec![crate::core::standings::teams::ForfeitedMatch {
                white: 2,
                black: 1,
                result: crate::core::standings::teams::ForfeitResult::Neither,
            }],
            ..TeamRecords::default()
        };
        let white = white_teams(&Roster::new(&teams()), &games, &[], &records, &WBW, 3);
        assert_eq!(white, [Some(false), Some(true)]);
    }
}
