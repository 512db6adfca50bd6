//! Who plays whom: pairings read from the pairing program's files, results written back.
//!
//! - [`csv`]: one round's pairings from a spreadsheet.
//! - [`trf`]: FIDE Tournament Report Files (TRF-2006/16, TRF-2025/26).
//! - [`teams`]: team matches from a TRF-2025/26 team file.

pub mod csv;
pub mod team_records;
pub mod teams;
pub mod trf;

use std::collections::BTreeMap;

use crate::core::arbiter::GameResult;
use crate::core::hub::Hub;
use crate::core::ids::{BoardNo, RoundNo};
use crate::core::pairings::{Bye, Pairing, Rounds, Seat};

use trf::{Player, RoundEntry, Trf};

pub(super) fn seat(player: &Player) -> Seat {
    Seat {
        name: crate::core::names::printable(&player.name),
        fide_id: player.fide_id,
        rating: player.rating,
        title: player.title.clone(),
        federation: player.federation.clone(),
        start_rank: player.start_rank,
    }
}

/// White's result as a PGN-like string.
pub(super) fn result_text(white: Option<char>, black: Option<char>) -> String {
    match (white, black) {
        (Some('1' | 'W'), _) => "1-0",
        (Some('0' | 'L'), _) => "0-1",
        (Some('=' | 'D'), _) => "1/2-1/2",
        (Some('+'), _) => "+-",
        (Some('-'), Some('+')) => "-+",
        (Some('-'), _) => "--",
        _ => "*",
    }
    .to_owned()
}

/// The games of `round` (1-based), boards numbered as FIDE's rules for publishing pairings
/// and the engines (JaVaFo, BBP Pairings' `sortResults`) number them: the pair whose
/// higher player (more points before the round, ties to the lower pairing number) has more
/// points first, then the pair with more points for its other player, then the pair whose
/// higher player has the lower pairing number. Forfeited games are boards (they were
/// paired); byes get none ([`round_byes`]). A team file's games go match by match
/// ([`teams`]).
pub fn round_pairings(trf: &Trf, round: usize) -> Vec<Pairing> {
    if let Some(games) = teams::round_pairings(trf, round) {
        return games;
    }
    let (order, system) = (trf.tie_order(), trf.point_system());
    let place = |p: &Player| order.get(&p.start_rank).copied().unwrap_or(u32::MAX);
    // The published order: (the higher player's points, the other's, both descending; the
    // higher player's place in the tie order).
    type Order = (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>, u32);
    let mut games: Vec<(Order, Pairing)> = Vec::new();
    for (white, white_entry, black, black_entry) in trf.pairs(round) {
        let scores = (
            system.score(white, round - 1),
            system.score(black, round - 1),
        );
        let white_higher = (scores.0, std::cmp::Reverse(place(white)))
            > (scores.1, std::cmp::Reverse(place(black)));
        let (higher, lower, higher_place) = if white_higher {
            (scores.0, scores.1, place(white))
        } else {
            (scores.1, scores.0, place(black))
        };
        let key = (
            std::cmp::Reverse(higher),
            std::cmp::Reverse(lower),
            higher_place,
        );
        games.push((
            key,
            Pairing {
                board: BoardNo(0),
                white: seat(white),
                black: seat(black),
                result: result_text(white_entry.result, black_entry.result),
                white_team: None,
                black_team: None,
                section: None,
            },
        ));
    }
    games.sort_by_key(|(order, _)| *order);
    games
        .into_iter()
        .enumerate()
        .map(|(i, (_, mut pairing))| {
            pairing.board = BoardNo(u16::try_from(i + 1).unwrap_or(u16::MAX));
            pairing
        })
        .collect()
}

/// The players of `round` (1-based) without a board: byes, absent and withdrawn players,
/// with the points each gets.
pub fn round_byes(trf: &Trf, round: usize) -> Vec<Bye> {
    let system = trf.point_system();
    trf.unpaired(round)
        .into_iter()
        .map(|(player, kind)| {
            let entry = player.rounds.get(round - 1).copied().unwrap_or(RoundEntry {
                opponent: None,
                color: None,
                result: None,
            });
            Bye {
                player: seat(player),
                kind,
                points: trf::points_text(system.points(&entry)),
                section: None,
            }
        })
        .collect()
}

/// The tournament files, for results back out: the hall's (`None`) and each section's.
pub type Trfs = BTreeMap<Option<String>, Trf>;

/// The event's pairing files as read: the rounds they give the hall (each round's pairings,
/// from the pairing program's TRF or a CSV per round, and scheduled starts), and the TRFs
/// the hub's results go back into.
#[derive(Debug, Clone, Default)]
pub struct Tournament {
    pub rounds: Rounds,
    pub trfs: Trfs,
}

impl Tournament {
    /// From a TRF file (every round it pairs) and CSV rounds, which take precedence.
    pub fn new(
        trf: Option<Trf>,
        csv: Vec<(RoundNo, Vec<Pairing>)>,
        first: Option<RoundNo>,
    ) -> Tournament {
        let mut pairings = BTreeMap::new();
        let mut byes = BTreeMap::new();
        if let Some(trf) = &trf {
            for round in (1..=trf.rounds()).filter_map(|r| RoundNo::new(r as u64)) {
                let games = round_pairings(trf, round.index());
                if !games.is_empty() {
                    pairings.insert(round, games);
                    byes.insert(round, round_byes(trf, round.index()));
                }
            }
        }
        pairings.extend(csv);
        Tournament {
            rounds: Rounds {
                pairings,
                first,
                starts: BTreeMap::new(),
                byes,
            },
            trfs: trf.map(|trf| (None, trf)).into_iter().collect(),
        }
    }

    /// Adds `section`'s own pairings, their boards numbered within the section (`boards`,
    /// in order: its first board is their board 1).
    pub fn add_section(&mut self, section: &str, boards: &[BoardNo], files: Tournament) {
        for (round, games) in files.rounds.pairings {
            let hall = self.rounds.pairings.entry(round).or_default();
            for mut game in games {
                let Some(board) = boards.get(usize::from(game.board.0).wrapping_sub(1)) else {
                    tracing::warn!(
                        section,
                        board = game.board.0,
                        "a pairing past the section's boards: left out"
                    );
                    continue;
                };
                game.board = *board;
                game.section = Some(section.to_owned());
                hall.retain(|g| g.board != game.board);
                hall.push(game);
            }
            hall.sort_by_key(|g| g.board);
        }
        for (round, byes) in files.rounds.byes {
            let hall = self.rounds.byes.entry(round).or_default();
            hall.extend(byes.into_iter().map(|mut bye| {
                bye.section = Some(section.to_owned());
                bye
            }));
        }
        for (_, trf) in files.trfs {
            self.trfs.insert(Some(section.to_owned()), trf);
        }
    }
}

/// What a section's TRF says about ranking it.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileRanking<'a> {
    /// Its point system's win and draw.
    pub scoring: crate::core::standings::Scoring,
    /// Its own list of tie-breaks (TRF-2026's `202` record).
    pub list: Option<&'a str>,
    /// The event's rounds (`142`/`XXR`, or the most any player has).
    pub rounds: Option<usize>,
    /// How the players are paired (record `092`, else their number against the rounds).
    pub system: crate::core::standings::System,
    /// How the teams are paired (record `092`, else their number against the rounds).
    pub team_system: crate::core::standings::System,
}

/// What `section`'s TRF (`None`: the hall's) says about ranking (the defaults without one).
pub fn ranking_of<'a>(trfs: &'a Trfs, section: Option<&str>) -> FileRanking<'a> {
    let Some(trf) = trfs.get(&section.map(str::to_owned)) else {
        return FileRanking::default();
    };
    let system = trf.point_system();
    FileRanking {
        scoring: crate::core::standings::Scoring {
            win: system.win,
            draw: system.draw,
        },
        list: trf.header("202"),
        rounds: Some(trf.rounds()),
        system: trf.system(),
        team_system: trf.team_system(),
    }
}

/// The section whose file `section` means: itself, or where none is named and only one
/// section has a file, that one.
pub fn file_section<'a>(trfs: &'a Trfs, section: Option<&'a str>) -> Option<&'a str> {
    match section {
        None if !trfs.contains_key(&None) && trfs.len() == 1 => {
            trfs.keys().next().and_then(Option::as_deref)
        }
        other => other,
    }
}

/// What the exported file says of the standings (TRF-2026): each player's place, written
/// into the rank column, and the tie-break list, written as the `202` (tie-breaks) and `212`
/// (the standings' order) records where the file's own list is not the one used.
#[derive(Debug, Clone, Default)]
pub struct Placings {
    /// (start rank, place).
    pub places: Vec<(u32, u32)>,
    /// The list in TRF-2026's spelling (`BH/C1`), or `None` to leave the file's records.
    pub tiebreaks: Option<Vec<String>>,
}

/// The TRF of `section` among `trfs` (`None`: the hall's own, or the one section's when only
/// a section has one) with the hub's results of every round, for the pairing program, and
/// the standings' `placings` where there are any.
pub fn results_trf(
    trfs: &Trfs,
    hub: &Hub,
    section: Option<&str>,
    placings: Option<&Placings>,
) -> Option<String> {
    let section = file_section(trfs, section);
    let mut results = BTreeMap::new();
    for round in hub.rounds().pairings.keys() {
        for (board, result) in hub.results_of(*round) {
            results.insert((*round, board), result);
        }
    }
    let mut trf = trf_with_results(trfs, hub.rounds(), section, &results)?;
    if let Some(placings) = placings {
        for &(start_rank, place) in &placings.places {
            trf.set_rank(start_rank, place);
        }
        if let Some(list) = &placings.tiebreaks {
            trf.set_header("202", &list.join(","));
            let order: Vec<&str> = std::iter::once("PTS")
                .chain(list.iter().map(String::as_str))
                .collect();
            trf.set_header("212", &order.join(","));
        }
    }
    Some(trf.to_string())
}

/// `section`'s TRF (`None`: the hall's) with `results` (by round and board) entered and
/// the points counted again; `None` without one.
fn trf_with_results(
    trfs: &Trfs,
    rounds: &Rounds,
    section: Option<&str>,
    results: &BTreeMap<(RoundNo, BoardNo), GameResult>,
) -> Option<Trf> {
    let mut trf = trfs.get(&section.map(str::to_owned))?.clone();
    for (round, games) in &rounds.pairings {
        for pairing in games.iter().filter(|p| p.section.as_deref() == section) {
            let codes = match results.get(&(*round, pairing.board)) {
                Some(GameResult::WhiteWins) => ('1', '0'),
                Some(GameResult::BlackWins) => ('0', '1'),
                Some(GameResult::Draw) => ('=', '='),
                Some(GameResult::WhiteWinsByForfeit) => ('+', '-'),
                Some(GameResult::BlackWinsByForfeit) => ('-', '+'),
                Some(GameResult::DoubleForfeit) => ('-', '-'),
                Some(GameResult::Ongoing) | None => continue,
            };
            let rank = |seat: &Seat| trf.find(seat.start_rank, seat.fide_id, &seat.name);
            let (Some(white), Some(black)) = (rank(&pairing.white), rank(&pairing.black)) else {
                continue;
            };
            let (white, black) = (white.start_rank, black.start_rank);
            trf.set_game(white, round.index(), black, 'w', codes.0);
            trf.set_game(black, round.index(), white, 'b', codes.1);
        }
    }
    trf.recount();
    Some(trf)
}
