//! Standings an arbiter can sign: points and FIDE's tie-breaks (Handbook C.07) from the
//! rounds' typed results, as FIDE's reference tool (the Technical Commission's gacrux)
//! computes them, under the rules the event names (`fide-2024`, `fide-2026`).
//!
//! - [`code`]: a tie-break as the regulations and TRF-2026 write it (`BH-C1`, `SB`, `DE`).
//! - [`crosstable`]: what the standings are computed from: each player's rounds;
//!   [`from_pairings`] builds it from the rounds' pairings, results and byes.
//! - [`buchholz`]: Buchholz, Sonneborn-Berger and the average of opponents' Buchholz, with
//!   unplayed rounds as Article 16 counts them and the cuts of Article 14.
//! - [`counts`]: wins, games with Black, rounds elected to play, progressive scores, Koya.
//! - [`ratings`]: the average rating of opponents and the performance (Article 10).
//! - [`encounter`]: the direct encounter among tied players (Article 6).
//! - [`rank`]: the order and the ranks, tie-break after tie-break.
//!
//! A game still in play counts as not yet played (its round an unplayed one without an
//! opponent), and its players' rows are marked `running`.

pub mod buchholz;
pub mod code;
pub mod counts;
pub mod crosstable;
pub mod encounter;
pub mod from_pairings;
pub mod rank;
pub mod ratings;
pub mod teams;

use serde::Serialize;

pub use code::{CodeError, Family, KoyaLimit, Tiebreak};
pub use crosstable::{Crosstable, Entrant, Outcome, Scoring, System};

/// A round as the standings read it: its games and its players without a board.
pub type Round = (
    Vec<crate::core::pairings::Pairing>,
    Vec<crate::core::pairings::Bye>,
);

/// The edition of C.07 whose Article 16 counts unplayed rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rules {
    /// 2024-08-01: an unplayed round's dummy scores the player's own points.
    Fide2024,
    /// 2026-03-01: the dummy capped by the scheduled opponent's score (a forfeit, 16.4.1) or
    /// by a draw in every round (any other unplayed round, 16.4.2).
    #[default]
    Fide2026,
}

impl Rules {
    pub fn name(self) -> &'static str {
        match self {
            Rules::Fide2024 => "fide-2024",
            Rules::Fide2026 => "fide-2026",
        }
    }
}

impl std::str::FromStr for Rules {
    type Err = String;
    fn from_str(text: &str) -> Result<Rules, String> {
        match text {
            "fide-2024" => Ok(Rules::Fide2024),
            "fide-2026" => Ok(Rules::Fide2026),
            other => Err(format!(
                "{other:?}: the tie-break rules are \"fide-2026\" or \"fide-2024\""
            )),
        }
    }
}

/// How the event ranks its players (`[standings]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub rules: Rules,
    /// The tie-breaks in order; `None`: the pairing file's own list (TRF-2026's `202`
    /// record), else [`DEFAULT_TIEBREAKS`].
    pub tiebreaks: Option<Vec<Tiebreak>>,
    /// A team event's, where the configured list reads as team codes (`BH` is `BH:MP`);
    /// `None`: the file's own, else [`DEFAULT_TEAM_TIEBREAKS`].
    pub team_tiebreaks: Option<Vec<teams::TeamTiebreak>>,
    /// The rating unrated players count with in ARO and TPR (C.07 10: the regulations may
    /// give one); `None`: those tie-breaks have values only where every player is rated.
    pub unrated: Option<u16>,
    /// `[standings] system`: how the event is paired, where the pairing file does not say
    /// or says it wrongly; `None`: as the file reads.
    pub system: Option<System>,
}

/// The list where neither the configuration nor the pairing file names one: the order most
/// FIDE-rated Swiss events' regulations give.
pub const DEFAULT_TIEBREAKS: [&str; 5] = ["BH-C1", "BH", "DE", "WIN", "BPG"];

/// A round-robin's list where neither the configuration nor the pairing file names one: no
/// Buchholz (C.07 8's note keeps it out of round-robins), the encounter first, as
/// round-robin regulations commonly order them.
pub const DEFAULT_ROUND_ROBIN_TIEBREAKS: [&str; 4] = ["DE", "SB", "WIN", "KS"];

/// A team event's list where neither the configuration nor the file names one: game points,
/// the extended direct encounter and the match points' Buchholz (C.07 13's order).
pub const DEFAULT_TEAM_TIEBREAKS: [&str; 4] = ["MPvGP", "EDE", "BH:MP/C1", "BH:MP"];

/// A configured list as the players' and as the teams' (`None` where it is not one).
pub type Lists = (Option<Vec<Tiebreak>>, Option<Vec<teams::TeamTiebreak>>);

/// The configured list (`[standings] tiebreaks`) read for the players and for the teams:
/// each code read as one or both; `Err` with the index of the first code that reads as
/// neither, or that mixes the two.
pub fn read_list(codes: &[&str]) -> Result<Lists, (usize, CodeError)> {
    let players: Vec<Result<Tiebreak, CodeError>> = codes.iter().map(|c| c.parse()).collect();
    let teams: Vec<Result<teams::TeamTiebreak, CodeError>> =
        codes.iter().map(|c| c.parse()).collect();
    let all_players = players.iter().all(Result::is_ok);
    let all_teams = teams.iter().all(Result::is_ok);
    if all_players || all_teams {
        let players = all_players.then(|| players.into_iter().flatten().collect());
        let teams = all_teams.then(|| teams.into_iter().flatten().collect());
        return Ok((players, teams));
    }
    // The first code neither reads; else the first team code among players' codes.
    let (index, why) = players
        .iter()
        .zip(&teams)
        .enumerate()
        .find_map(|(i, (p, t))| match (p, t) {
            (Err(CodeError::Team(_)), Err(why)) | (Err(why), Err(_)) => Some((i, why.clone())),
            _ => None,
        })
        .unwrap_or_else(|| {
            let i = players.iter().position(Result::is_err).unwrap_or(0);
            let code = codes[i];
            (
                i,
                CodeError::Team(format!(
                    "{code:?} is a team code in a list with codes teams are not ranked by"
                )),
            )
        });
    Err((index, why))
}

/// One player's line of the standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Shared by players whom neither points nor any tie-break separates.
    pub rank: u32,
    pub start_rank: u32,
    pub name: String,
    pub points: f64,
    /// The tie-breaks' values in the list's order; `null` where one has no value (a rating
    /// average where not every player is rated).
    pub tiebreaks: Vec<Option<f64>>,
    /// A game of the player's is still in play (counted as not yet played).
    pub running: bool,
}

/// The standings after `rounds` rounds, best first.
pub fn standings(crosstable: &Crosstable, rules: Rules, list: &[Tiebreak]) -> Vec<Row> {
    let criteria = list
        .iter()
        .map(|tiebreak| criterion(crosstable, rules, tiebreak))
        .collect();
    let ranked = rank::rank(&primary(crosstable), &start_ranks(crosstable), criteria);
    ranked
        .order
        .iter()
        .map(|&i| Row {
            rank: ranked.ranks[i],
            start_rank: crosstable.entrants[i].start_rank,
            name: crosstable.entrants[i].name.clone(),
            points: tenths(crosstable.points(i)),
            tiebreaks: ranked.values.iter().map(|v| v[i]).collect(),
            running: crosstable.running(i),
        })
        .collect()
}

/// Every entrant's points, the score ranked on first.
fn primary(crosstable: &Crosstable) -> Vec<Option<f64>> {
    (0..crosstable.entrants.len())
        .map(|i| Some(tenths(crosstable.points(i))))
        .collect()
}

fn start_ranks(crosstable: &Crosstable) -> Vec<u32> {
    crosstable.entrants.iter().map(|e| e.start_rank).collect()
}

/// How one tie-break orders the players: its values, or (the direct encounter) the
/// places it gives among the players still tied.
fn criterion<'a>(
    crosstable: &'a Crosstable,
    rules: Rules,
    tiebreak: &Tiebreak,
) -> rank::Criterion<'a> {
    if tiebreak.family == Family::DirectEncounter {
        let forfeits = tiebreak.predetermined;
        return rank::Criterion::Encounter(Box::new(move |ranks, order| {
            encounter::values(
                &[encounter::Pass::every_group(crosstable)],
                ranks,
                order,
                forfeits,
            )
        }));
    }
    rank::Criterion::Values {
        values: value_of(crosstable, rules, tiebreak),
        // The pairing number: the lower first.
        ascending: tiebreak.family == Family::PairingNumber,
    }
}

/// Every player's value of one tie-break other than the direct encounter.
fn value_of(crosstable: &Crosstable, rules: Rules, tiebreak: &Tiebreak) -> Vec<Option<f64>> {
    let each = |f: &dyn Fn(usize) -> Option<f64>| (0..crosstable.entrants.len()).map(f).collect();
    match tiebreak.family {
        Family::Points => each(&|i| Some(tenths(crosstable.points(i)))),
        Family::Buchholz | Family::ForeBuchholz | Family::SonnebornBerger => {
            buchholz::values(crosstable, crosstable, rules, tiebreak)
        }
        Family::AverageOfBuchholz => buchholz::average_of_opponents(crosstable, rules, tiebreak),
        Family::DirectEncounter => vec![None; crosstable.entrants.len()],
        Family::Wins
        | Family::WonOverTheBoard
        | Family::GamesWithBlack
        | Family::WonWithBlack
        | Family::RoundsElected => {
            each(&|i| Some(counts::count(crosstable, i, tiebreak.family) as f64))
        }
        Family::Progressive => {
            each(&|i| Some(tenths(counts::progressive(crosstable, i, tiebreak.cut_low))))
        }
        Family::Koya => each(&|i| Some(tenths(counts::koya(crosstable, i, tiebreak.koya_limit)))),
        Family::AverageRatingOfOpponents
        | Family::Performance
        | Family::PerfectPerformance
        | Family::AverageOfPerformances
        | Family::AverageOfPerfectPerformances
        | Family::Rating => ratings::values(crosstable, tiebreak),
        Family::Standard => each(&|i| Some(tenths(counts::standard(crosstable, i)))),
        Family::PairingNumber => each(&|i| Some(f64::from(crosstable.entrants[i].start_rank))),
    }
}

/// Tenths of a point as a number of points.
fn tenths(value: i64) -> f64 {
    value as f64 / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::side::Side::{Black, White};

    fn played(opponent: u32, side: crate::core::side::Side, points: u32) -> Outcome {
        Outcome::Played {
            opponent,
            side,
            points,
        }
    }

    fn codes(list: &[&str]) -> Vec<Tiebreak> {
        list.iter().map(|c| c.parse().unwrap()).collect()
    }

    /// Four players, two rounds; player 4 took a half-point bye in round 2.
    fn event() -> Crosstable {
        let entrant = |start_rank, outcomes| Entrant {
            start_rank,
            name: format!("P{start_rank}"),
            rating: None,
            outcomes,
        };
        Crosstable::new(
            2,
            Scoring::default(),
            vec![
                entrant(1, vec![played(2, White, 10), played(3, Black, 10)]),
                entrant(2, vec![played(1, Black, 0), played(4, White, 0)]),
                entrant(3, vec![played(4, White, 5), played(1, White, 0)]),
                entrant(
                    4,
                    vec![played(3, Black, 5), Outcome::Unpaired { points: 5 }],
                ),
            ],
        )
    }

    #[test]
    fn an_unplayed_round_counts_against_a_dummy_capped_from_2026_article_16_4() {
        // Player 4 (1 point) got a half-point bye: in 2024 the dummy scores their own 1
        // point; from 2026 it is capped by a draw in every round (1 point): the same here.
        let mut event = event();
        let rows = standings(&event, Rules::Fide2024, &codes(&["BH"]));
        let bh = |rows: &[Row], start: u32| {
            rows.iter()
                .find(|r| r.start_rank == start)
                .unwrap()
                .tiebreaks[0]
        };
        // Player 4's opponents: player 3 (0.5) and the dummy (own 1.0).
        assert_eq!(bh(&rows, 4), Some(1.5));
        // Give player 1 a forfeit win in round 2 instead: their dummy is capped in 2026 by
        // the scheduled opponent's score (16.4.1), not in 2024.
        event.entrants[0].outcomes[1] = Outcome::Forfeited {
            opponent: 3,
            side: Black,
            points: 10,
        };
        event.entrants[2].outcomes[1] = Outcome::Forfeited {
            opponent: 1,
            side: White,
            points: 0,
        };
        let event = Crosstable::new(2, Scoring::default(), event.entrants);
        let old = standings(&event, Rules::Fide2024, &codes(&["BH"]));
        let new = standings(&event, Rules::Fide2026, &codes(&["BH"]));
        // 2024: player 2's score (0) + own 2 points; 2026: 0 + min(2, player 3's 0.5).
        assert_eq!(bh(&old, 1), Some(2.0));
        assert_eq!(bh(&new, 1), Some(0.5));
    }

    #[test]
    fn fore_buchholz_counts_the_last_rounds_games_as_draws_once_it_is_the_events_last() {
        let fb_and_bh = |event: &Crosstable, start: u32| {
            let rows = standings(event, Rules::Fide2024, &codes(&["FB", "BH"]));
            let row = rows.iter().find(|r| r.start_rank == start).unwrap();
            (row.tiebreaks[0], row.tiebreaks[1])
        };
        // A round to go: Fore Buchholz is Buchholz.
        let mut event = event();
        event.scheduled = Some(3);
        for start in 1..=4 {
            let (fb, bh) = fb_and_bh(&event, start);
            assert_eq!(fb, bh, "player {start}");
        }
        // Round 2 is the last: player 1's opponents count with their last game drawn (2:
        // 0 + ½, 3: ½ + ½), not as it went (0 and ½).
        event.scheduled = Some(2);
        assert_eq!(fb_and_bh(&event, 1), (Some(1.5), Some(0.5)));
        // Player 4 had no game in it: their own score as it is, their opponent 3's with
        // the last game drawn (1 point, not ½), and the bye's dummy their own 1 point.
        assert_eq!(fb_and_bh(&event, 4), (Some(2.0), Some(1.5)));
        // A game of the last round still in play is one of its games: a draw too.
        event.entrants[0].outcomes[1] = Outcome::Running {
            opponent: 3,
            side: Black,
        };
        event.entrants[2].outcomes[1] = Outcome::Running {
            opponent: 1,
            side: White,
        };
        assert_eq!(fb_and_bh(&event, 1).0, Some(1.5));
    }

    #[test]
    fn a_configured_list_ranks_the_players_the_teams_or_both() {
        let (players, teams) = read_list(&["BH", "SB/C1"]).unwrap();
        assert_eq!((players.unwrap().len(), teams.unwrap().len()), (2, 2));
        let (players, teams) = read_list(&["EDE", "BH:MP/C1", "BH"]).unwrap();
        assert!(players.is_none() && teams.unwrap().len() == 3);
        // A team code among codes teams are not ranked by, and a code neither reads.
        let (at, why) = read_list(&["ARO", "EDE"]).unwrap_err();
        assert_eq!(at, 1, "{why}");
        assert!(why.to_string().contains("team code"), "{why}");
        let (at, why) = read_list(&["BH", "XYZ"]).unwrap_err();
        assert_eq!(at, 1);
        assert!(matches!(why, CodeError::Unknown(_)), "{why}");
    }

    #[test]
    fn a_voluntarily_unplayed_round_is_cut_first_article_16_5() {
        // Player 4's elements: player 3's 0.5 and the bye's dummy 1.0; the cut takes the bye
        // although it is worth more.
        let rows = standings(&event(), Rules::Fide2024, &codes(&["BH/C1"]));
        let four = rows.iter().find(|r| r.start_rank == 4).unwrap();
        assert_eq!(four.tiebreaks, [Some(0.5)]);
    }

    #[test]
    fn the_direct_encounter_places_the_players_tied_who_met_article_6() {
        let entrant = |start_rank, outcomes| Entrant {
            start_rank,
            name: String::new(),
            rating: None,
            outcomes,
        };
        // Round 1: 1 beats 2, 3 and 4 draw. Round 2: 3 beats 1, 2 beats 4.
        let event = Crosstable::new(
            2,
            Scoring::default(),
            vec![
                entrant(1, vec![played(2, White, 10), played(3, Black, 0)]),
                entrant(2, vec![played(1, Black, 0), played(4, White, 10)]),
                entrant(3, vec![played(4, White, 5), played(1, White, 10)]),
                entrant(4, vec![played(3, Black, 5), played(2, Black, 0)]),
            ],
        );
        let rows = standings(&event, Rules::Fide2026, &codes(&["DE"]));
        let line = |r: &Row| (r.start_rank, r.rank, r.tiebreaks[0]);
        // 1 and 2 tie on a point and met: 1 won, so 1 is placed first of the two; 3 and 4,
        // alone on their scores, are placed by nothing (0).
        assert_eq!(
            rows.iter().map(line).collect::<Vec<_>>(),
            [
                (3, 1, Some(0.0)),
                (1, 2, Some(1.0)),
                (2, 3, Some(2.0)),
                (4, 4, Some(0.0))
            ]
        );
    }
}
