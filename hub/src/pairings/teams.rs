//! Team matches from a TRF-2025/2026 team file: each `310` record lists a team's players in
//! board order, and a round's games between two teams' players are their match.
//!
//! The hall's boards go match by match: the matches in the order of their better team's
//! number (the pairing program numbers teams by strength), each match's games in board order
//! (the better placed of the two players in their team's list first). The colours are as
//! the players' records give them (`352 WBWB`: the first team has White on boards 1 and 3).

use std::collections::{BTreeMap, HashMap};

use super::trf::{Player, RoundEntry, Trf};
use super::{result_text, seat};
use crate::core::ids::BoardNo;
use crate::core::pairings::Pairing;

/// One match of a round: two teams and their boards, the first team's first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Match {
    /// The team with White on the match's first board, and its opponent.
    pub teams: [String; 2],
    pub boards: Vec<BoardNo>,
}

/// The games of `round` (1-based) as team matches, numbered from board 1; `None` for a file
/// without teams.
pub fn round_pairings(trf: &Trf, round: usize) -> Option<Vec<Pairing>> {
    if trf.teams.is_empty() {
        return None;
    }
    // Each player's team (its number and index) and place in its list.
    let mut place: HashMap<u32, (u32, usize, usize)> = HashMap::new();
    for (index, team) in trf.teams.iter().enumerate() {
        for (board, rank) in team.members.iter().enumerate() {
            place.insert(*rank, (team.number, index, board));
        }
    }
    // The games, by the two teams that play them (the better team first): each with the
    // better place of its two players in their lists.
    type Game<'a> = (usize, &'a Player, RoundEntry, &'a Player);
    let mut matches: BTreeMap<(u32, u32), Vec<Game>> = BTreeMap::new();
    for (white, entry, black) in trf.games(round) {
        let (Some(w), Some(b)) = (place.get(&white.start_rank), place.get(&black.start_rank))
        else {
            continue;
        };
        let key = (w.0.min(b.0), w.0.max(b.0));
        matches
            .entry(key)
            .or_default()
            .push((w.2.min(b.2), white, entry, black));
    }
    let mut games = Vec::new();
    for (_, mut boards) in matches {
        boards.sort_by_key(|(order, ..)| *order);
        for (_, white, entry, black) in boards {
            let team = |p: &Player| {
                place
                    .get(&p.start_rank)
                    .map(|(_, i, _)| trf.teams[*i].name.clone())
            };
            let black_entry = black.rounds.get(round - 1).copied();
            games.push(Pairing {
                board: BoardNo(u16::try_from(games.len() + 1).unwrap_or(u16::MAX)),
                white: seat(white),
                black: seat(black),
                result: result_text(entry.result, black_entry.and_then(|e| e.result)),
                white_team: team(white),
                black_team: team(black),
                section: None,
            });
        }
    }
    Some(games)
}

/// The matches among `games` (a round's pairings): the runs of boards two teams play.
pub fn matches(games: &[Pairing]) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    for game in games {
        let (Some(white), Some(black)) = (&game.white_team, &game.black_team) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.teams.contains(white) && last.teams.contains(black) => {
                last.boards.push(game.board);
            }
            _ => out.push(Match {
                teams: [white.clone(), black.clone()],
                boards: vec![game.board],
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grandmommys_cup() -> Trf {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/real/trf/grandmommys-cup_trf26-adaptation_sharly.trf");
        Trf::parse(&std::fs::read_to_string(path).expect("the real TRF-26 file")).unwrap()
    }

    #[test]
    fn a_real_team_rounds_games_are_its_matches_board_by_board() {
        let trf = grandmommys_cup();
        assert_eq!(trf.teams[0].name, "India");
        assert_eq!(trf.teams[0].members, [1, 5, 15, 28, 44]);
        let games = round_pairings(&trf, 1).unwrap();
        let matches = matches(&games);
        // Four boards a match (352 WBWB), every game in one.
        assert!(matches.iter().all(|m| m.boards.len() <= 4), "{matches:?}");
        assert_eq!(
            matches.iter().map(|m| m.boards.len()).sum::<usize>(),
            games.len()
        );
        // India's first match: its players on their boards in their team's order, the colours
        // alternating as the records give them.
        let india = matches
            .iter()
            .find(|m| m.teams.contains(&"India".to_owned()))
            .unwrap();
        let boards: Vec<&Pairing> = india
            .boards
            .iter()
            .map(|b| &games[usize::from(b.0) - 1])
            .collect();
        let colours: Vec<bool> = boards
            .iter()
            .map(|p| p.white_team.as_deref() == Some("India"))
            .collect();
        assert_eq!(colours.len(), 4);
        assert!(colours.windows(2).all(|w| w[0] != w[1]), "{colours:?}");
        let ranks: Vec<u32> = boards
            .iter()
            .map(|p| {
                if p.white_team.as_deref() == Some("India") {
                    p.white.start_rank
                } else {
                    p.black.start_rank
                }
            })
            .collect();
        let mut sorted = ranks.clone();
        sorted.sort_by_key(|r| trf.teams[0].members.iter().position(|m| m == r));
        assert_eq!(ranks, sorted, "India's players in board order");
    }

    #[test]
    fn a_file_without_teams_has_no_matches() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/real/trf/karl-mala-gedenkturnier-2005_trf06.trf");
        let trf = Trf::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(round_pairings(&trf, 1).is_none());
    }
}
