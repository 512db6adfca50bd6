//! The standings as the API and the pages show them: a section's players after a round, from
//! the rounds' results as the audience sees them (an arbiter the hub's, anyone else what the
//! broadcast delay has released), ranked by the event's tie-breaks.

use serde::Serialize;

use crate::core::hub::Hub;
use crate::core::ids::RoundNo;
use crate::core::standings::teams::{TeamEvent, TeamRow, TeamTiebreak};
use crate::core::standings::{
    self, Row, Scoring, Settings, System, Tiebreak, DEFAULT_ROUND_ROBIN_TIEBREAKS,
    DEFAULT_TEAM_TIEBREAKS, DEFAULT_TIEBREAKS,
};
use crate::core::time::HubMs;
use crate::view::public_rounds;
use crate::view::tiles::Audience;

/// `GET /api/standings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standings {
    pub section: Option<String>,
    pub round: RoundNo,
    /// A game of the round is still in play (or its result not yet released).
    pub provisional: bool,
    pub rules: &'static str,
    pub tiebreaks: Vec<String>,
    pub rows: Vec<Row>,
}

/// `GET /api/standings/teams`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamStandings {
    pub section: Option<String>,
    pub round: RoundNo,
    /// A board of the round is still in play (or its result not yet released).
    pub provisional: bool,
    pub rules: &'static str,
    pub tiebreaks: Vec<String>,
    pub rows: Vec<TeamRow>,
}

/// How the event ranks: its settings, and what its pairing file says (its point system, its
/// own list of tie-breaks: TRF-2026's `202` record).
pub struct Ranking<'a> {
    pub settings: &'a Settings,
    pub scoring: Scoring,
    pub file_list: Option<&'a str>,
    /// The event's rounds, where its file says (Fore Buchholz counts the last one's games
    /// as draws).
    pub scheduled: Option<usize>,
    /// How the players are paired: the configuration's word, else their file's.
    pub system: System,
    /// How a team event's teams are paired, as [`Ranking::system`].
    pub team_system: System,
}

/// `section`'s standings after `round` (by default the round in play) as `audience` sees
/// them; `None` where the round has no pairings.
pub fn standings(
    hub: &Hub,
    now: HubMs,
    ranking: &Ranking<'_>,
    round: Option<RoundNo>,
    section: Option<&str>,
    audience: Audience,
) -> Option<Standings> {
    let seen = Seen::of(hub, now, round, section, audience)?;
    let settings = ranking.settings;
    let list = tiebreak_list(settings, ranking.file_list, ranking.system);
    let mut crosstable = standings::from_pairings::crosstable(&seen.rounds, ranking.scoring);
    crosstable.unrated = settings.unrated;
    crosstable.scheduled = ranking.scheduled;
    crosstable.system = ranking.system;
    Some(Standings {
        section: section.map(str::to_owned),
        round: seen.round,
        provisional: seen.provisional,
        rules: settings.rules.name(),
        tiebreaks: list.iter().map(|t| t.text.clone()).collect(),
        rows: standings::standings(&crosstable, settings.rules, &list),
    })
}

/// `section`'s team standings after `round` (its teams and their records: `event`), as
/// [`standings`] has the players'; `None` where the round has no pairings.
pub fn team_standings(
    hub: &Hub,
    now: HubMs,
    ranking: &Ranking<'_>,
    event: &TeamEvent,
    round: Option<RoundNo>,
    section: Option<&str>,
    audience: Audience,
) -> Option<TeamStandings> {
    let seen = Seen::of(hub, now, round, section, audience)?;
    let settings = ranking.settings;
    let list = team_tiebreak_list(settings, ranking.file_list);
    Some(TeamStandings {
        section: section.map(str::to_owned),
        round: seen.round,
        provisional: seen.provisional,
        rules: settings.rules.name(),
        tiebreaks: list.iter().map(|t| t.text.clone()).collect(),
        rows: standings::teams::standings(
            event,
            &seen.rounds,
            settings.rules,
            ranking.team_system,
            &list,
        ),
    })
}

/// The rounds up to one as an audience sees them: each round's games and players without
/// a board.
struct Seen {
    round: RoundNo,
    rounds: Vec<standings::Round>,
    /// A game of the last round is still in play (or its result not yet released).
    provisional: bool,
}

impl Seen {
    /// `None` where the round has no pairings.
    fn of(
        hub: &Hub,
        now: HubMs,
        round: Option<RoundNo>,
        section: Option<&str>,
        audience: Audience,
    ) -> Option<Seen> {
        let round = round.unwrap_or_else(|| hub.round_in_play());
        let mut rounds = Vec::new();
        for r in (1..=round.index() as u64).filter_map(RoundNo::new) {
            let mut games = match audience {
                Audience::Arbiters => hub.section_pairings(r, section),
                Audience::Spectators => public_rounds::pairings(hub, now, r, section),
            };
            // Without a section named, the hall's own players only: the sections' start
            // ranks are each their own file's, and one table of them all would mix them up.
            if let Some(games) = &mut games {
                games.retain(|g| g.section.as_deref() == section);
            }
            let byes = hub
                .rounds()
                .byes(r)
                .iter()
                .filter(|b| b.section.as_deref() == section)
                .cloned()
                .collect();
            rounds.push((games.unwrap_or_default(), byes));
        }
        let (games, _) = rounds.last()?;
        if games.is_empty() {
            return None;
        }
        let provisional = games.iter().any(|g| g.result == "*");
        Some(Seen {
            round,
            rounds,
            provisional,
        })
    }
}

/// The standings after the last round whose every game has a result (as the arbiters see
/// them): the places a results file records. `None` before a round is complete.
pub fn after_last_complete_round(
    hub: &Hub,
    now: HubMs,
    ranking: &Ranking<'_>,
    section: Option<&str>,
) -> Option<Standings> {
    let in_play = hub.round_in_play().index() as u64;
    (1..=in_play)
        .rev()
        .filter_map(RoundNo::new)
        .filter_map(|r| standings(hub, now, ranking, Some(r), section, Audience::Arbiters))
        .find(|table| !table.provisional)
}

/// The configured list; else the pairing file's own (TRF-2026's `202` record) where every
/// code of it is one the hub computes; else [`DEFAULT_TIEBREAKS`] (a round-robin's:
/// [`DEFAULT_ROUND_ROBIN_TIEBREAKS`]).
fn tiebreak_list(settings: &Settings, from_file: Option<&str>, system: System) -> Vec<Tiebreak> {
    let default: &[&str] = match system {
        System::Swiss => &DEFAULT_TIEBREAKS,
        System::RoundRobin => &DEFAULT_ROUND_ROBIN_TIEBREAKS,
    };
    list_of(settings.tiebreaks.as_ref(), from_file, default)
}

/// The team list as [`tiebreak_list`] finds the players', else [`DEFAULT_TEAM_TIEBREAKS`].
fn team_tiebreak_list(settings: &Settings, from_file: Option<&str>) -> Vec<TeamTiebreak> {
    list_of(
        settings.team_tiebreaks.as_ref(),
        from_file,
        &DEFAULT_TEAM_TIEBREAKS,
    )
}

/// `configured`; else `from_file`'s codes where every one reads; else `default`.
fn list_of<T: Clone + std::str::FromStr>(
    configured: Option<&Vec<T>>,
    from_file: Option<&str>,
    default: &[&str],
) -> Vec<T> {
    if let Some(list) = configured {
        return list.clone();
    }
    let read = |codes: &mut dyn Iterator<Item = &str>| -> Option<Vec<T>> {
        codes
            .map(str::trim)
            .filter(|code| !code.is_empty())
            .map(|code| code.parse().ok())
            .collect()
    };
    from_file
        .and_then(|record| read(&mut record.split(',')))
        .filter(|list| !list.is_empty())
        .or_else(|| read(&mut default.iter().copied()))
        .unwrap_or_default()
}

/// The standings as CSV: rank, start rank, name, points, each tie-break, running.
pub fn csv(standings: &Standings) -> String {
    let rows = standings.rows.iter().map(|row| {
        let first = [
            row.rank.to_string(),
            row.start_rank.to_string(),
            row.name.clone(),
            row.points.to_string(),
        ];
        (first, row.tiebreaks.as_slice(), row.running)
    });
    csv_table(
        ["rank", "start_rank", "name", "points"],
        &standings.tiebreaks,
        rows,
    )
}

/// The team standings as CSV: rank, number, team, match points, game points, each
/// tie-break, running.
pub fn team_csv(standings: &TeamStandings) -> String {
    let rows = standings.rows.iter().map(|row| {
        let first = [
            row.rank.to_string(),
            row.number.to_string(),
            row.team.clone(),
            row.match_points.to_string(),
            row.game_points.to_string(),
        ];
        (first, row.tiebreaks.as_slice(), row.running)
    });
    csv_table(
        ["rank", "number", "team", "match_points", "game_points"],
        &standings.tiebreaks,
        rows,
    )
}

/// A standings table as CSV: the `first` columns, each tie-break, `running`.
fn csv_table<'a, const N: usize>(
    first: [&str; N],
    tiebreaks: &[String],
    rows: impl Iterator<Item = ([String; N], &'a [Option<f64>], bool)>,
) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = first.map(str::to_owned).to_vec();
    header.extend(tiebreaks.iter().cloned());
    header.push("running".into());
    let _ = out.write_record(&header);
    for (columns, values, running) in rows {
        let mut record = columns.to_vec();
        record.extend(
            values
                .iter()
                .map(|v| v.map(|v| v.to_string()).unwrap_or_default()),
        );
        record.push(running.to_string());
        let _ = out.write_record(&record);
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::standings::Rules;

    #[test]
    fn the_list_is_the_configuration_s_then_the_file_s_then_the_default() {
        let configured = Settings {
            rules: Rules::Fide2024,
            tiebreaks: Some(vec!["SB".parse().unwrap()]),
            team_tiebreaks: None,
            unrated: None,
            system: None,
        };
        let texts = |list: Vec<Tiebreak>| list.into_iter().map(|t| t.text).collect::<Vec<_>>();
        assert_eq!(
            texts(tiebreak_list(&configured, Some("BH"), System::Swiss)),
            ["SB"]
        );
        let silent = Settings::default();
        // A round-robin's default has no Buchholz (C.07 8's note).
        assert_eq!(
            texts(tiebreak_list(&silent, None, System::RoundRobin)),
            DEFAULT_ROUND_ROBIN_TIEBREAKS
        );
        assert_eq!(
            texts(tiebreak_list(&silent, Some("BH/C1,BH, DE"), System::Swiss)),
            ["BH/C1", "BH", "DE"]
        );
        // A team file's list ranks the teams; the players' is the default.
        assert_eq!(
            texts(tiebreak_list(
                &silent,
                Some("EDET/P,BH:MP/C1/P"),
                System::Swiss
            )),
            DEFAULT_TIEBREAKS
        );
        let teams = team_tiebreak_list(&silent, Some("EDET/P,BH:MP/C1/P"));
        assert_eq!(
            teams.into_iter().map(|t| t.text).collect::<Vec<_>>(),
            ["EDET/P", "BH:MP/C1/P"]
        );
    }
}
