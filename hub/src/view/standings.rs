//! The standings as the API and the pages show them: a section's players after a round, from
//! the rounds' results as the audience sees them (an arbiter the hub's, anyone else what the
//! broadcast delay has released), ranked by the event's tie-breaks.

use serde::Serialize;

use crate::core::hub::Hub;
use crate::core::ids::RoundNo;
use crate::core::standings::{self, Row, Scoring, Settings, Tiebreak, DEFAULT_TIEBREAKS};
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

/// How the event ranks: its settings, and what its pairing file says (its point system, its
/// own list of tie-breaks: TRF-2026's `202` record).
pub struct Ranking<'a> {
    pub settings: &'a Settings,
    pub scoring: Scoring,
    pub file_list: Option<&'a str>,
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
    let round = round.unwrap_or_else(|| hub.round_in_play());
    let mut rounds = Vec::new();
    for r in (1..=round.index() as u64).filter_map(RoundNo::new) {
        let mut games = match audience {
            Audience::Arbiters => hub.section_pairings(r, section),
            Audience::Spectators => public_rounds::pairings(hub, now, r, section),
        };
        // Without a section named, the hall's own players only: the sections' start ranks
        // are each their own file's, and one table of them all would mix them up.
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
    let settings = ranking.settings;
    let list = tiebreak_list(settings, ranking.file_list);
    let mut crosstable = standings::from_pairings::crosstable(&rounds, ranking.scoring);
    crosstable.unrated = settings.unrated;
    Some(Standings {
        section: section.map(str::to_owned),
        round,
        provisional,
        rules: settings.rules.name(),
        tiebreaks: list.iter().map(|t| t.text.clone()).collect(),
        rows: standings::standings(&crosstable, settings.rules, &list),
    })
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
/// code of it is one the hub computes; else [`DEFAULT_TIEBREAKS`].
fn tiebreak_list(settings: &Settings, from_file: Option<&str>) -> Vec<Tiebreak> {
    if let Some(list) = &settings.tiebreaks {
        return list.clone();
    }
    let file: Option<Vec<Tiebreak>> = from_file.and_then(|record| {
        record
            .split(',')
            .map(str::trim)
            .filter(|code| !code.is_empty())
            .map(|code| code.parse().ok())
            .collect()
    });
    file.filter(|list| !list.is_empty()).unwrap_or_else(|| {
        DEFAULT_TIEBREAKS
            .iter()
            .map(|code| code.parse().expect("the default list parses"))
            .collect()
    })
}

/// The standings as CSV: rank, start rank, name, points, each tie-break, running.
pub fn csv(standings: &Standings) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "rank".to_owned(),
        "start_rank".into(),
        "name".into(),
        "points".into(),
    ];
    header.extend(standings.tiebreaks.iter().cloned());
    header.push("running".into());
    let _ = out.write_record(&header);
    for row in &standings.rows {
        let mut record = vec![
            row.rank.to_string(),
            row.start_rank.to_string(),
            row.name.clone(),
            row.points.to_string(),
        ];
        record.extend(
            row.tiebreaks
                .iter()
                .map(|v| v.map(|v| v.to_string()).unwrap_or_default()),
        );
        record.push(row.running.to_string());
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
            unrated: None,
        };
        let texts = |list: Vec<Tiebreak>| list.into_iter().map(|t| t.text).collect::<Vec<_>>();
        assert_eq!(texts(tiebreak_list(&configured, Some("BH"))), ["SB"]);
        let silent = Settings::default();
        assert_eq!(
            texts(tiebreak_list(&silent, Some("BH/C1,BH, DE"))),
            ["BH/C1", "BH", "DE"]
        );
        // A team file's list (not computed here yet) gives way to the default.
        assert_eq!(
            texts(tiebreak_list(&silent, Some("EDET/P,BH:MP/C1/P"))),
            DEFAULT_TIEBREAKS
        );
    }
}
