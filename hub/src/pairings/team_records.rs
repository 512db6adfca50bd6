//! What a TRF-2025/2026 team file says that the boards do not, for the team standings: the
//! teams (`310`), the match points (`362`: `TW 2  TD 1  TL 0`), the teams' byes (`240`
//! full, half and zero point; `320` the pairing-allocated bye with its match and game
//! points) and the matches decided without games (`330`), read at the columns gacrux (the
//! FIDE Technical Commission's reference reader) reads them.
//!
//! `300` (boards out of order) and `352` (the White team's colours board by board) decide
//! which team of a match is its White team. Not read: `299` (points assigned abnormally).

use super::trf::Trf;
use crate::core::pairings::tenths;
use crate::core::side::Side;
use crate::core::standings::teams::{
    ForfeitResult, ForfeitedMatch, MatchScoring, OutOfOrder, Team, TeamBye, TeamEvent, TeamRecords,
    TeamScoring,
};
use crate::core::standings::Scoring;

/// The team event `trf` describes; `None` for a file without teams.
pub fn team_event(trf: &Trf) -> Option<TeamEvent> {
    if trf.teams.is_empty() {
        return None;
    }
    let teams = trf
        .teams
        .iter()
        .map(|t| Team {
            number: t.number,
            name: t.name.clone(),
            members: t.members.clone(),
        })
        .collect();
    let system = trf.point_system();
    let mut scoring = TeamScoring {
        games: Scoring {
            win: system.win,
            draw: system.draw,
        },
        ..TeamScoring::default()
    };
    if let Some(line) = trf.records("362").next() {
        scoring.matches = match_scoring(line, scoring.matches);
    }
    let mut records: Vec<TeamRecords> = vec![TeamRecords::default(); trf.rounds()];
    for line in trf.records("240") {
        let kind = match line.get(4..5) {
            Some("F") => TeamBye::Full,
            Some("H") => TeamBye::Half,
            _ => TeamBye::Zero,
        };
        let Some(round) = number(line, 6, 9) else {
            continue;
        };
        let teams: Vec<u32> = (14..=line.len())
            .step_by(5)
            .filter_map(|end| number(line, end - 4, end))
            .collect();
        if let Some(round) = at(&mut records, round) {
            round.byes.extend(teams.into_iter().map(|t| (t, kind)));
        }
    }
    if let Some(line) = trf.records("320").next() {
        let points = |from, to| line.get(from..to).and_then(tenths);
        if let (Some(mp), Some(gp)) = (points(4, 8), points(9, 13)) {
            scoring.pairing_bye = (mp, gp);
        }
        for (r, end) in (17..=line.len()).step_by(4).enumerate() {
            if let (Some(team), Some(round)) =
                (number(line, end - 3, end), at(&mut records, r as u32 + 1))
            {
                round.byes.push((team, TeamBye::PairingAllocated));
            }
        }
    }
    for line in trf.records("330") {
        let result = match line.get(4..6) {
            Some("+-" | "10" | "WL" | "WZ") => ForfeitResult::WhiteWins,
            Some("-+" | "01" | "LW" | "ZW") => ForfeitResult::BlackWins,
            _ => ForfeitResult::Neither,
        };
        let (Some(round), Some(white), Some(black)) = (
            number(line, 7, 10),
            number(line, 11, 14),
            number(line, 15, 18),
        ) else {
            continue;
        };
        if let Some(round) = at(&mut records, round) {
            round.forfeits.push(ForfeitedMatch {
                white,
                black,
                result,
            });
        }
    }
    for line in trf.records("300") {
        let (Some(round), Some(team)) = (number(line, 4, 7), number(line, 8, 11)) else {
            continue;
        };
        let order = (20..=line.len())
            .step_by(5)
            .map(|end| number(line, end - 4, end).unwrap_or(0))
            .collect();
        if let Some(round) = at(&mut records, round) {
            round.out_of_order.push(OutOfOrder { team, order });
        }
    }
    Some(TeamEvent {
        teams,
        scoring,
        records,
        sequence: trf.records("352").next().and_then(sequence),
    })
}

/// Record `352`'s colours of the White team's boards (`WBWB`); `None` where it holds
/// anything else.
fn sequence(line: &str) -> Option<Vec<Side>> {
    let colours: Option<Vec<Side>> = line
        .get(4..)?
        .trim()
        .chars()
        .map(|c| match c.to_ascii_uppercase() {
            'W' => Some(Side::White),
            'B' => Some(Side::Black),
            _ => None,
        })
        .collect();
    colours.filter(|c| !c.is_empty())
}

/// Round `round`'s records (1-based; rounds are three columns wide: at most 999).
fn at(records: &mut Vec<TeamRecords>, round: u32) -> Option<&mut TeamRecords> {
    let index = usize::try_from(round).ok()?.checked_sub(1)?;
    if records.len() <= index {
        records.resize(index + 1, TeamRecords::default());
    }
    records.get_mut(index)
}

/// Record `362`'s `TW`, `TD` and `TL` (match won, drawn, lost), over `default`.
fn match_scoring(line: &str, default: MatchScoring) -> MatchScoring {
    let mut scoring = default;
    let words: Vec<&str> = line
        .get(3..)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    for pair in words.windows(2) {
        let Some(points) = tenths(pair[1]) else {
            continue;
        };
        match pair[0] {
            "TW" => scoring.win = points,
            "TD" => scoring.draw = points,
            "TL" => scoring.loss = points,
            _ => {}
        }
    }
    scoring
}

/// The number in bytes `from..to` of `line` (0-based, as gacrux slices), if any.
fn number(line: &str, from: usize, to: usize) -> Option<u32> {
    let text = line.get(from..to.min(line.len()))?.trim();
    text.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grandmommys_cup(file: &str) -> Trf {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/real/trf")
            .join(file);
        Trf::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_real_team_file_s_byes_forfeited_matches_and_match_points() {
        for file in [
            "grandmommys-cup_trf26-adaptation_sharly.trf",
            "grandmommys-cup_fide-tec-trf25-sample.trf",
        ] {
            let event = team_event(&grandmommys_cup(file)).unwrap();
            assert_eq!(event.teams.len(), 50, "{file}");
            assert_eq!(
                (event.scoring.matches.win, event.scoring.matches.draw),
                (20, 10),
                "{file}: 362 TW 2 TD 1"
            );
            // 320: a drawn match and two game points; team 50 got it in round 3.
            assert_eq!(event.scoring.pairing_bye, (10, 20), "{file}");
            assert!(event.records[2]
                .byes
                .contains(&(50, TeamBye::PairingAllocated)));
            // 240 F 1 3, 240 H 2 7 39; 330 -- 6 24 2.
            assert!(event.records[0].byes.contains(&(3, TeamBye::Full)));
            assert!(event.records[1].byes.contains(&(7, TeamBye::Half)));
            assert!(event.records[1].byes.contains(&(39, TeamBye::Half)));
            // 300 5 5 18 0 37 29 0: team 5 against 18 in round 5, boards 1 and 4 empty.
            assert!(event.records[4].out_of_order.contains(&OutOfOrder {
                team: 5,
                order: vec![0, 37, 29, 0]
            }));
            assert_eq!(event.sequence.as_ref().map(Vec::len), Some(4), "352 WBWB");
            assert!(event.records[5].forfeits.contains(&ForfeitedMatch {
                white: 24,
                black: 2,
                result: ForfeitResult::Neither
            }));
        }
    }
}
