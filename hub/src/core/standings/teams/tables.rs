//! The teams' rounds as three kinds of crosstable the individual tie-breaks run on: match
//! points, game points (a win worth a game's win on every board, 16.3's draw the same), and
//! each board's game points (for `EDET`). Whether a round was one a team chose not to play
//! is its match's, in all three; then each team code as a criterion of the ranking.

use super::super::crosstable::{Crosstable, Entrant, Outcome, Scoring, System};
use super::super::{buchholz, encounter, rank, Rules};
use super::matches::TeamRound;
use super::{Kind, TeamEvent, TeamFamily, TeamTiebreak};
use crate::core::side::Side;

/// The crosstables the team tie-breaks run on.
pub(super) struct Tables {
    pub(super) matches: Crosstable,
    pub(super) games: Crosstable,
    /// Each board's game points.
    boards: Vec<Crosstable>,
}

impl Tables {
    pub(super) fn new(
        event: &TeamEvent,
        per_round: &[Vec<TeamRound>],
        board_count: usize,
        system: System,
    ) -> Tables {
        let scoring = &event.scoring;
        let matches = Scoring {
            win: scoring.matches.win,
            draw: scoring.matches.draw,
        };
        let all = board_count as u32;
        let games = Scoring {
            win: scoring.games.win * all,
            draw: scoring.games.draw * all,
        };
        let match_table = table(event, per_round, system, matches, |round| match round {
            TeamRound::Match { match_points, .. } | TeamRound::Bye { match_points, .. } => {
                *match_points
            }
            TeamRound::Running { .. } => 0,
        });
        let won: Vec<Vec<bool>> = (0..event.teams.len())
            .map(|t| {
                (0..per_round.len())
                    .map(|r| match_table.won(t, r))
                    .collect()
            })
            .collect();
        let mut game_table = table(event, per_round, system, games, |round| match round {
            TeamRound::Match { game_points, .. } | TeamRound::Bye { game_points, .. } => {
                *game_points
            }
            TeamRound::Running { .. } => 0,
        });
        game_table.won = Some(won.clone());
        let boards = (0..board_count)
            .map(|k| {
                let mut board = table(
                    event,
                    per_round,
                    system,
                    scoring.games,
                    |round| match round {
                        TeamRound::Match { boards, .. } => boards.get(k).copied().unwrap_or(0),
                        _ => 0,
                    },
                );
                board.won = Some(won.clone());
                board
            })
            .collect();
        Tables {
            matches: match_table,
            games: game_table,
            boards,
        }
    }

    fn of(&self, kind: Kind) -> &Crosstable {
        match kind {
            Kind::Match => &self.matches,
            Kind::Game => &self.games,
        }
    }

    /// How one team tie-break orders the teams.
    pub(super) fn criterion<'a>(
        &'a self,
        rules: Rules,
        tiebreak: &TeamTiebreak,
    ) -> rank::Criterion<'a> {
        let values = |values| rank::Criterion::Values {
            values,
            ascending: false,
        };
        match &tiebreak.family {
            TeamFamily::On(kind, individual) => {
                super::super::criterion(self.of(*kind), rules, individual)
            }
            TeamFamily::GamePoints => values(
                (0..self.games.entrants.len())
                    .map(|t| Some(self.games.points(t) as f64 / 10.0))
                    .collect(),
            ),
            TeamFamily::ExtendedSonnebornBerger {
                scores,
                results,
                tiebreak,
            } => values(buchholz::values(
                self.of(*scores),
                self.of(*results),
                rules,
                tiebreak,
            )),
            TeamFamily::ExtendedEncounter { boards, forfeits } => {
                let mut passes = vec![
                    encounter::Pass::every_group(&self.matches),
                    encounter::Pass::every_group(&self.games),
                ];
                if *boards {
                    passes.extend(self.boards.iter().map(|table| encounter::Pass {
                        table,
                        pairs_only: true,
                    }));
                }
                let forfeits = *forfeits;
                rank::Criterion::Encounter(Box::new(move |ranks, order| {
                    encounter::values(&passes, ranks, order, forfeits)
                }))
            }
        }
    }
}

/// A crosstable of the teams' rounds with the points `points` gives each.
fn table(
    event: &TeamEvent,
    per_round: &[Vec<TeamRound>],
    system: System,
    scoring: Scoring,
    points: impl Fn(&TeamRound) -> u32,
) -> Crosstable {
    let number = |t: usize| event.teams[t].number;
    let entrants = event
        .teams
        .iter()
        .enumerate()
        .map(|(t, team)| Entrant {
            start_rank: team.number,
            name: team.name.clone(),
            rating: None,
            outcomes: per_round
                .iter()
                .map(|round| {
                    let this = &round[t];
                    let side = |white: bool| if white { Side::White } else { Side::Black };
                    match this {
                        TeamRound::Match {
                            opponent,
                            white,
                            played,
                            ..
                        } => {
                            let (opponent, side, points) =
                                (number(*opponent), side(*white), points(this));
                            if *played {
                                Outcome::Played {
                                    opponent,
                                    side,
                                    points,
                                }
                            } else {
                                Outcome::Forfeited {
                                    opponent,
                                    side,
                                    points,
                                }
                            }
                        }
                        TeamRound::Running { opponent, white } => Outcome::Running {
                            opponent: number(*opponent),
                            side: side(*white),
                        },
                        TeamRound::Bye {
                            pairing_allocated: true,
                            ..
                        } => Outcome::PairingBye {
                            points: points(this),
                        },
                        TeamRound::Bye { .. } => Outcome::Unpaired {
                            points: points(this),
                        },
                    }
                })
                .collect(),
        })
        .collect();
    let mut table = Crosstable::new(per_round.len(), scoring, entrants);
    table.system = system;
    table
}
