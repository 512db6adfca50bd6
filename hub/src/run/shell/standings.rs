//! The shell's answers about the standings and the results file: the event's settings, the
//! pairing files' players and results, and the hub's own results, put together.

use super::Shell;
use crate::core::standings::Tiebreak;
use crate::core::time::HubMs;
use crate::edge::http::api::StandingsRead;
use crate::pairings as tournament;

impl StandingsRead {
    pub(super) fn answer(self, shell: &mut Shell, now: HubMs) {
        let (trfs, settings, hub) = (&shell.trfs, &shell.standings, &shell.hub);
        match self {
            StandingsRead::Players {
                round,
                section,
                audience,
                reply,
            } => {
                let ranking = ranking(trfs, settings, section.as_deref());
                let table = crate::view::standings::standings(
                    hub,
                    now,
                    &ranking,
                    round,
                    section.as_deref(),
                    audience,
                );
                drop(reply.send(table));
            }
            StandingsRead::Teams {
                round,
                section,
                audience,
                reply,
            } => {
                let ranking = ranking(trfs, settings, section.as_deref());
                // Only a team event's file is read for its teams, and only when asked.
                let event = trfs
                    .get(&section.clone())
                    .and_then(tournament::team_records::team_event);
                let table = event.and_then(|event| {
                    crate::view::standings::team_standings(
                        hub,
                        now,
                        &ranking,
                        &event,
                        round,
                        section.as_deref(),
                        audience,
                    )
                });
                drop(reply.send(table));
            }
            StandingsRead::ResultsTrf { section, reply } => {
                let file = results_file(trfs, settings, hub, now, section.as_deref());
                drop(reply.send(file));
            }
        }
    }
}

/// How `section` ranks: the event's settings and what its pairing file says.
fn ranking<'a>(
    trfs: &'a tournament::Trfs,
    settings: &'a crate::core::standings::Settings,
    section: Option<&str>,
) -> crate::view::standings::Ranking<'a> {
    let file = tournament::ranking_of(trfs, section);
    crate::view::standings::Ranking {
        settings,
        scoring: file.scoring,
        file_list: file.list,
        scheduled: file.rounds,
        system: settings.system.unwrap_or(file.system),
        team_system: settings.system.unwrap_or(file.team_system),
    }
}

/// `GET /api/results.trf`: `section`'s file with the hub's results, its players placed as
/// the standings after the last complete round place them.
fn results_file(
    trfs: &tournament::Trfs,
    settings: &crate::core::standings::Settings,
    hub: &crate::core::hub::Hub,
    now: crate::core::time::HubMs,
    section: Option<&str>,
) -> Option<String> {
    let section = tournament::file_section(trfs, section);
    let ranking = ranking(trfs, settings, section);
    let table = crate::view::standings::after_last_complete_round(hub, now, &ranking, section);
    // The list is recorded where it is not the file's own already.
    let own_list = settings.tiebreaks.is_none() && ranking.file_list.is_some();
    let placings = table.map(|table| tournament::Placings {
        places: table.rows.iter().map(|r| (r.start_rank, r.rank)).collect(),
        tiebreaks: (!own_list).then(|| {
            let trf_spelling = |code: &String| match code.parse::<Tiebreak>() {
                Ok(tiebreak) => tiebreak.trf_spelling(),
                Err(_) => code.clone(),
            };
            table.tiebreaks.iter().map(trf_spelling).collect()
        }),
    });
    tournament::results_trf(trfs, hub, section, placings.as_ref())
}
