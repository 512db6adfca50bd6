//! Who plays whom: pairings read from the pairing program's files, results written back.
//!
//! - [`csv`]: one round's pairings from a spreadsheet.
//! - [`trf`]: FIDE Tournament Report Files (TRF-2006/16, TRF-2025/26).

pub mod csv;
pub mod trf;

use protocol::BoardNo;

use crate::core::arbiter::GameResult;
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
}

fn seat(player: &Player) -> Seat {
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
fn result_text(white: Option<char>, black: Option<char>) -> String {
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
/// start rank. TRF files hold no board numbers; byes get no board.
pub fn round_pairings(trf: &Trf, round: usize) -> Vec<Pairing> {
    let before = |p: &Player| -> f32 {
        p.rounds
            .iter()
            .take(round.saturating_sub(1))
            .map(|e| score(e.result))
            .sum()
    };
    let mut games: Vec<(f32, u16, u32, Pairing)> = Vec::new();
    for white in &trf.players {
        let Some(entry) = white.rounds.get(round.wrapping_sub(1)) else {
            continue;
        };
        if entry.color != Some('w') {
            continue;
        }
        let Some(black) = entry.opponent.and_then(|o| trf.player(o)) else {
            continue;
        };
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

/// The event's rounds: each round's pairings (from the pairing program's TRF, or a CSV per
/// round), and the round in play, whose players sit at the boards.
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    pub pairings: std::collections::BTreeMap<usize, Vec<Pairing>>,
    /// The tournament file, for results back out.
    pub trf: Option<Trf>,
    /// The round in play; by default the last with pairings.
    pub in_play: Option<usize>,
    /// Each round's scheduled start (Unix ms), as the regulations give it.
    pub starts: std::collections::BTreeMap<usize, u64>,
}

impl Rounds {
    /// From a TRF file (every round it pairs) and CSV rounds, which take precedence.
    pub fn new(
        trf: Option<Trf>,
        csv: Vec<(usize, Vec<Pairing>)>,
        in_play: Option<usize>,
    ) -> Rounds {
        let mut pairings = std::collections::BTreeMap::new();
        if let Some(trf) = &trf {
            for round in 1..=trf.rounds() {
                let games = round_pairings(trf, round);
                if !games.is_empty() {
                    pairings.insert(round, games);
                }
            }
        }
        pairings.extend(csv);
        Rounds {
            pairings,
            trf,
            in_play,
            starts: Default::default(),
        }
    }

    pub fn in_play(&self) -> Option<usize> {
        self.in_play
            .or_else(|| self.pairings.keys().last().copied())
    }

    /// The games of the round in play; none before pairings are known.
    pub fn games_in_play(&self) -> &[Pairing] {
        self.in_play()
            .and_then(|r| self.pairings.get(&r))
            .map_or(&[], Vec::as_slice)
    }

    /// The boards of the round in play whose games are to be played: those the file has
    /// not scored already (forfeits, byes).
    pub fn boards_to_play(&self) -> Vec<BoardNo> {
        self.games_in_play()
            .iter()
            .filter(|p| p.result == "*")
            .map(|p| p.board)
            .collect()
    }

    /// When the round in play is scheduled to start.
    pub fn start_in_play(&self) -> Option<u64> {
        self.starts.get(&self.in_play()?).copied()
    }

    /// Every board's players in the round in play.
    pub fn seating(&self) -> std::collections::BTreeMap<BoardNo, String> {
        self.games_in_play()
            .iter()
            .map(|p| (p.board, format!("{} – {}", p.white.name, p.black.name)))
            .collect()
    }

    /// The TRF with the hub's `results` by board entered for the round in play, for the
    /// pairing program; `None` without a TRF.
    pub fn trf_with_results(
        &self,
        results: &std::collections::BTreeMap<BoardNo, GameResult>,
    ) -> Option<String> {
        let mut trf = self.trf.clone()?;
        let round = self.in_play()?;
        for pairing in self.pairings.get(&round).into_iter().flatten() {
            let codes = match results.get(&pairing.board) {
                Some(GameResult::WhiteWins) => ('1', '0'),
                Some(GameResult::BlackWins) => ('0', '1'),
                Some(GameResult::Draw) => ('=', '='),
                _ => continue,
            };
            trf.set_result(pairing.white.start_rank, round, codes.0);
            trf.set_result(pairing.black.start_rank, round, codes.1);
        }
        Some(trf.to_string())
    }
}

/// Where a round stands: `GET /api/rounds/{r}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundState {
    pub round: usize,
    pub in_play: bool,
    pub games: usize,
    /// Games with a result (the hub's in the round in play, else the pairing file's).
    pub finished: usize,
    /// Every game has a result: the round is over and its results can go back out.
    pub complete: bool,
}

impl RoundState {
    pub fn of(round: usize, in_play: bool, games: &[Pairing]) -> RoundState {
        let finished = games.iter().filter(|p| p.result != "*").count();
        RoundState {
            round,
            in_play,
            games: games.len(),
            finished,
            complete: !games.is_empty() && finished == games.len(),
        }
    }
}
