//! Who plays whom: pairings read from the pairing program's files, results written back.
//!
//! - [`csv`]: one round's pairings from a spreadsheet.
//! - [`trf`]: FIDE Tournament Report Files (TRF-2006/16, TRF-2025/26).
//! - [`teams`]: team matches from a TRF-2025/26 team file.

pub mod csv;
pub mod teams;
pub mod trf;

use std::collections::BTreeMap;

use crate::core::arbiter::GameResult;
use crate::core::ids::{BoardNo, RoundNo};
use serde::Serialize;

use trf::{Player, Trf};

/// A player as pairings show one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seat {
    pub name: String,
    pub fide_id: Option<u64>,
    pub rating: Option<u16>,
    pub title: Option<String>,
    pub federation: Option<String>,
    /// The start rank in the pairing program's list.
    pub start_rank: u32,
}

/// One board of a round: `GET /api/rounds/{r}/pairings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pairing {
    pub board: BoardNo,
    pub white: Seat,
    pub black: Seat,
    /// `1-0`, `0-1`, `1/2-1/2`, forfeits as `+-`, `-+`, `--`; `*` while not over.
    pub result: String,
    /// In a team match: the teams White and Black play for.
    pub white_team: Option<String>,
    pub black_team: Option<String>,
    /// The section it is played in; `null` in a hall without sections.
    pub section: Option<String>,
}

pub(super) fn seat(player: &Player) -> Seat {
    Seat {
        name: player.name.clone(),
        fide_id: player.fide_id,
        rating: player.rating,
        title: player.title.clone(),
        federation: player.federation.clone(),
        start_rank: player.start_rank,
    }
}

/// Points a result code scores.
fn score(code: Option<char>) -> f32 {
    match code {
        Some('1' | '+' | 'W' | 'F' | 'U') => 1.0,
        Some('=' | 'D' | 'H') => 0.5,
        _ => 0.0,
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

/// The games of `round` (1-based), boards numbered as pairing programs list them: the pair
/// with the most points before the round first, then the higher rating, then the better
/// start rank. TRF files hold no board numbers; byes get no board. A team file's games go
/// match by match ([`teams`]).
pub fn round_pairings(trf: &Trf, round: usize) -> Vec<Pairing> {
    if let Some(games) = teams::round_pairings(trf, round) {
        return games;
    }
    let before = |p: &Player| -> f32 {
        p.rounds
            .iter()
            .take(round.saturating_sub(1))
            .map(|e| score(e.result))
            .sum()
    };
    let mut games: Vec<(f32, u16, u32, Pairing)> = Vec::new();
    for (white, entry, black) in trf.games(round) {
        let black_entry = black.rounds.get(round - 1).copied();
        let points = before(white).max(before(black));
        let rating = white.rating.max(black.rating).unwrap_or(0);
        let rank = white.start_rank.min(black.start_rank);
        games.push((
            points,
            rating,
            rank,
            Pairing {
                board: BoardNo(0),
                white: seat(white),
                black: seat(black),
                result: result_text(entry.result, black_entry.and_then(|e| e.result)),
                white_team: None,
                black_team: None,
                section: None,
            },
        ));
    }
    games.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    games
        .into_iter()
        .enumerate()
        .map(|(i, (.., mut pairing))| {
            pairing.board = BoardNo(u16::try_from(i + 1).unwrap_or(u16::MAX));
            pairing
        })
        .collect()
}

/// The event's rounds as the pairing program and the regulations give them: each round's
/// pairings (from the pairing program's TRF, or a CSV per round) and scheduled start. Which
/// round is in play is the hall's to say (the journaled round starts).
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    /// Each round's games, on the hall's boards, every section's.
    pub pairings: BTreeMap<RoundNo, Vec<Pairing>>,
    /// The tournament files, for results back out: the hall's (`None`) and each section's.
    pub trfs: BTreeMap<Option<String>, Trf>,
    /// The round a new hub begins in (`[event] round`); by default the last with pairings.
    pub first: Option<RoundNo>,
    /// Each round's scheduled start (Unix ms), as the regulations give it.
    pub starts: BTreeMap<RoundNo, u64>,
}

impl Rounds {
    /// From a TRF file (every round it pairs) and CSV rounds, which take precedence.
    pub fn new(
        trf: Option<Trf>,
        csv: Vec<(RoundNo, Vec<Pairing>)>,
        first: Option<RoundNo>,
    ) -> Rounds {
        let mut pairings = BTreeMap::new();
        if let Some(trf) = &trf {
            for round in (1..=trf.rounds()).filter_map(|r| RoundNo::new(r as u64)) {
                let games = round_pairings(trf, round.index());
                if !games.is_empty() {
                    pairings.insert(round, games);
                }
            }
        }
        pairings.extend(csv);
        Rounds {
            pairings,
            trfs: trf.map(|trf| (None, trf)).into_iter().collect(),
            first,
            starts: BTreeMap::new(),
        }
    }

    /// Adds `section`'s own pairings, their boards numbered within the section (`boards`,
    /// in order: its first board is their board 1).
    pub fn add_section(&mut self, section: &str, boards: &[BoardNo], rounds: Rounds) {
        for (round, games) in rounds.pairings {
            let hall = self.pairings.entry(round).or_default();
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
        for (_, trf) in rounds.trfs {
            self.trfs.insert(Some(section.to_owned()), trf);
        }
    }

    /// The round a new hub begins in: the configured one, else the last with pairings,
    /// else the first.
    pub fn first_round(&self) -> RoundNo {
        self.first
            .or_else(|| self.pairings.keys().last().copied())
            .unwrap_or(RoundNo::FIRST)
    }

    /// The games of `round`; none without pairings.
    pub fn games(&self, round: RoundNo) -> &[Pairing] {
        self.pairings.get(&round).map_or(&[], Vec::as_slice)
    }

    /// The boards of `round` whose games are to be played: those the file has not scored
    /// already (forfeits, byes).
    pub fn boards_to_play(&self, round: RoundNo) -> Vec<BoardNo> {
        self.games(round)
            .iter()
            .filter(|p| p.result == "*")
            .map(|p| p.board)
            .collect()
    }

    /// The team matches of `round` (none outside a team event).
    pub fn matches(&self, round: RoundNo) -> Vec<teams::Match> {
        teams::matches(self.games(round))
    }

    /// When `round` is scheduled to start.
    pub fn start(&self, round: RoundNo) -> Option<u64> {
        self.starts.get(&round).copied()
    }

    /// Every board's players in `round`.
    pub fn seating(&self, round: RoundNo) -> BTreeMap<BoardNo, String> {
        self.games(round)
            .iter()
            .map(|p| (p.board, format!("{} – {}", p.white.name, p.black.name)))
            .collect()
    }

    /// `section`'s TRF (`None`: the hall's) with the hub's `results` (by round and board)
    /// entered, for the pairing program; `None` without one.
    pub fn trf_with_results(
        &self,
        section: Option<&str>,
        results: &BTreeMap<(RoundNo, BoardNo), GameResult>,
    ) -> Option<String> {
        let mut trf = self.trfs.get(&section.map(str::to_owned))?.clone();
        for (round, games) in &self.pairings {
            for pairing in games.iter().filter(|p| p.section.as_deref() == section) {
                let codes = match results.get(&(*round, pairing.board)) {
                    Some(GameResult::WhiteWins) => ('1', '0'),
                    Some(GameResult::BlackWins) => ('0', '1'),
                    Some(GameResult::Draw) => ('=', '='),
                    _ => continue,
                };
                trf.set_result(pairing.white.start_rank, round.index(), codes.0);
                trf.set_result(pairing.black.start_rank, round.index(), codes.1);
            }
        }
        Some(trf.to_string())
    }
}

/// Where a round stands: `GET /api/rounds/{r}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundState {
    pub round: RoundNo,
    pub in_play: bool,
    pub games: usize,
    /// Games with a result (the hub's in the round in play, else the pairing file's).
    pub finished: usize,
    /// Every game has a result: the round is over and its results can go back out.
    pub complete: bool,
}

impl RoundState {
    /// `round` with its games' results (`*` for one not over).
    pub fn of<'a>(
        round: RoundNo,
        in_play: bool,
        results: impl IntoIterator<Item = &'a str>,
    ) -> RoundState {
        let (mut games, mut finished) = (0, 0);
        for result in results {
            games += 1;
            finished += usize::from(result != "*");
        }
        RoundState {
            round,
            in_play,
            games,
            finished,
            complete: games > 0 && finished == games,
        }
    }
}
