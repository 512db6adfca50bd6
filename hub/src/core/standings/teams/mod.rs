//! A team event's standings (C.07 Articles 11–13): match points first, then the event's
//! team tie-breaks, each as gacrux computes it.
//!
//! - [`matches`]: each team's round from the boards and the file's team records.
//! - `colours`: which team of a match is its White team.
//! - `roster`: a player's team and place, a team by its number.
//! - [`code`]: the team codes (`BH:MP/C1`, `EDE`, `EMGSB`, `MPvGP`).
//! - `tables`: the teams' rounds as the crosstables the individual tie-breaks run on.

pub mod code;
mod colours;
pub mod matches;
mod roster;
mod tables;

use serde::Serialize;

use super::crosstable::{Scoring, System};
use super::{rank, Rules};
pub use code::{Kind, TeamFamily, TeamTiebreak};
use matches::TeamRound;

/// A team and its players, first board first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub number: u32,
    pub name: String,
    /// The players' start ranks in board order.
    pub members: Vec<u32>,
}

/// The team event's point systems, in tenths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamScoring {
    /// A match won, drawn and lost (record `362`: `TW`, `TD`, `TL`).
    pub matches: MatchScoring,
    /// A game won and drawn (record `162`).
    pub games: Scoring,
    /// The pairing-allocated bye's match and game points (record `320`).
    pub pairing_bye: (u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchScoring {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

impl Default for TeamScoring {
    /// 2, 1 and 0 a match, 1 and ½ a game; the pairing-allocated bye a drawn match.
    fn default() -> TeamScoring {
        TeamScoring {
            matches: MatchScoring {
                win: 20,
                draw: 10,
                loss: 0,
            },
            games: Scoring::default(),
            pairing_bye: (10, 0),
        }
    }
}

/// A team's bye in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamBye {
    Full,
    Half,
    Zero,
    PairingAllocated,
}

/// Who won a match decided without games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForfeitResult {
    WhiteWins,
    BlackWins,
    Neither,
}

/// A match decided without games (record `330`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForfeitedMatch {
    pub white: u32,
    pub black: u32,
    pub result: ForfeitResult,
}

/// A team's boards out of its list's order in a round (record `300`): the player on each
/// board, 0 for none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfOrder {
    pub team: u32,
    pub order: Vec<u32>,
}

/// A round's team records: the teams' byes (by team number), the matches decided without
/// games and the boards out of order (in the file's order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamRecords {
    pub byes: Vec<(u32, TeamBye)>,
    pub forfeits: Vec<ForfeitedMatch>,
    pub out_of_order: Vec<OutOfOrder>,
}

/// What a team event's standings are computed from, besides its rounds' boards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamEvent {
    pub teams: Vec<Team>,
    pub scoring: TeamScoring,
    /// Round 1's first.
    pub records: Vec<TeamRecords>,
    /// The colours of the White team's boards (record `352`: `WBWB`); `None`: White,
    /// Black, … on as many boards as a match has.
    pub sequence: Option<Vec<crate::core::side::Side>>,
}

/// One team's line of the standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamRow {
    pub rank: u32,
    /// The team's pairing number.
    pub number: u32,
    pub team: String,
    pub match_points: f64,
    pub game_points: f64,
    pub tiebreaks: Vec<Option<f64>>,
    /// A board of the team's match is still in play (the match counted as not yet played).
    pub running: bool,
}

/// The teams' standings after `rounds` (each round's boards and players without one).
pub fn standings(
    event: &TeamEvent,
    rounds: &[super::Round],
    rules: Rules,
    system: System,
    list: &[TeamTiebreak],
) -> Vec<TeamRow> {
    let board_count = board_count(event, rounds);
    let no_records = TeamRecords::default();
    let per_round: Vec<Vec<TeamRound>> = rounds
        .iter()
        .enumerate()
        .map(|(r, (games, byes))| {
            let records = event.records.get(r).unwrap_or(&no_records);
            matches::team_rounds(event, board_count, games, byes, records)
        })
        .collect();
    let tables = tables::Tables::new(event, &per_round, board_count, system);
    let criteria = list
        .iter()
        .map(|tiebreak| tables.criterion(rules, tiebreak))
        .collect();
    let points: Vec<Option<f64>> = (0..event.teams.len())
        .map(|t| Some(tables.matches.points(t) as f64 / 10.0))
        .collect();
    let numbers: Vec<u32> = event.teams.iter().map(|t| t.number).collect();
    let ranked = rank::rank(&points, &numbers, criteria);
    ranked
        .order
        .iter()
        .map(|&t| TeamRow {
            rank: ranked.ranks[t],
            number: event.teams[t].number,
            team: event.teams[t].name.clone(),
            match_points: tables.matches.points(t) as f64 / 10.0,
            game_points: tables.games.points(t) as f64 / 10.0,
            tiebreaks: ranked.values.iter().map(|v| v[t]).collect(),
            running: tables.matches.running(t),
        })
        .collect()
}

/// Boards a match: the most games a team played against one opponent in any round.
fn board_count(event: &TeamEvent, rounds: &[super::Round]) -> usize {
    let team_of: std::collections::HashMap<u32, u32> = event
        .teams
        .iter()
        .flat_map(|t| t.members.iter().map(move |m| (*m, t.number)))
        .collect();
    let mut most = 1;
    for (games, _) in rounds {
        let mut per_team: std::collections::HashMap<u32, usize> = Default::default();
        for game in games {
            for rank in [game.white.start_rank, game.black.start_rank] {
                if let Some(team) = team_of.get(&rank) {
                    let n = per_team.entry(*team).or_default();
                    *n += 1;
                    most = most.max(*n);
                }
            }
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ids::BoardNo;
    use crate::core::pairings::{Bye, Pairing, Seat, Unpaired};

    pub(super) fn seat(start_rank: u32) -> Seat {
        Seat {
            name: format!("P{start_rank}"),
            fide_id: None,
            rating: None,
            title: None,
            federation: None,
            start_rank,
        }
    }

    pub(super) fn game(board: u16, white: u32, black: u32, result: &str) -> Pairing {
        Pairing {
            board: BoardNo(board),
            white: seat(white),
            black: seat(black),
            result: result.into(),
            white_team: None,
            black_team: None,
            section: None,
        }
    }

    fn bye(player: u32, kind: Unpaired) -> Bye {
        Bye {
            player: seat(player),
            kind,
            points: "0.0".into(),
            section: None,
        }
    }

    /// Three teams of two boards. Round 1: team 1 beats team 2 on board 1 and has board 2
    /// unopposed (`0000 - +`); team 3 gets the pairing-allocated bye (320: one match point,
    /// one game point). Round 2: team 1 against team 3, a board still in play.
    fn event() -> (TeamEvent, Vec<super::super::Round>) {
        let team = |number: u32, members: [u32; 2]| Team {
            number,
            name: format!("T{number}"),
            members: members.to_vec(),
        };
        let event = TeamEvent {
            teams: vec![team(1, [1, 2]), team(2, [3, 4]), team(3, [5, 6])],
            scoring: TeamScoring {
                pairing_bye: (10, 10),
                ..TeamScoring::default()
            },
            records: vec![TeamRecords {
                byes: vec![(3, TeamBye::PairingAllocated)],
                ..TeamRecords::default()
            }],
            sequence: None,
        };
        let rounds = vec![
            (
                vec![game(1, 1, 3, "1-0")],
                vec![
                    bye(2, Unpaired::PairingAllocatedBye),
                    bye(4, Unpaired::ZeroPointBye),
                    bye(5, Unpaired::NotPaired),
                    bye(6, Unpaired::NotPaired),
                ],
            ),
            (
                vec![game(1, 1, 5, "1/2-1/2"), game(2, 6, 2, "*")],
                vec![bye(3, Unpaired::NotPaired), bye(4, Unpaired::NotPaired)],
            ),
        ];
        (event, rounds)
    }

    fn list(codes: &[&str]) -> Vec<TeamTiebreak> {
        codes.iter().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn an_unopposed_board_counts_in_its_team_s_match_and_the_pab_is_a_round_played_16_2_1() {
        let (event, rounds) = event();
        let rows = standings(
            &event,
            &rounds[..1],
            Rules::Fide2026,
            System::Swiss,
            &list(&["REP:MP"]),
        );
        let row = |n: u32| rows.iter().find(|r| r.number == n).unwrap();
        // Team 1: the game won and the unopposed board, 2–0: the match (2 match points).
        assert_eq!((row(1).match_points, row(1).game_points), (2.0, 2.0));
        assert_eq!((row(2).match_points, row(2).game_points), (0.0, 0.0));
        // The pairing-allocated bye: the record's points, and a round the team was there to
        // play (not one it chose to miss).
        assert_eq!((row(3).match_points, row(3).game_points), (1.0, 1.0));
        assert_eq!(row(3).tiebreaks, [Some(1.0)]);
        assert_eq!(rows.iter().map(|r| r.number).collect::<Vec<_>>(), [1, 3, 2]);
    }

    #[test]
    fn a_match_with_a_board_in_play_counts_as_not_yet_played() {
        let (event, rounds) = event();
        let rows = standings(
            &event,
            &rounds,
            Rules::Fide2026,
            System::Swiss,
            &list(&["BH:MP"]),
        );
        let row = |n: u32| rows.iter().find(|r| r.number == n).unwrap();
        assert!(row(1).running && row(3).running && !row(2).running);
        // Round 2's drawn board is not counted while the other is in play.
        assert_eq!((row(1).match_points, row(1).game_points), (2.0, 2.0));
        assert_eq!((row(3).match_points, row(3).game_points), (1.0, 1.0));
    }
}
