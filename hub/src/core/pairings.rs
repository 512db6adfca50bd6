//! Who plays whom: each round's pairings and scheduled start, as the pairing program and the
//! regulations give them. The files are read and written by the shell (`pairings/`);
//! which round is in play is the hall's to say (the journaled round starts).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::core::ids::{BoardNo, RoundNo};

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

/// How a player who plays no game in a round stands in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unpaired {
    /// `H`: a half-point bye the player asked for.
    HalfPointBye,
    /// `F`: a full-point bye.
    FullPointBye,
    /// `U`, or `+` without an opponent: the pairing-allocated bye.
    PairingAllocatedBye,
    /// `Z`, or `-` without an opponent: a zero-point bye.
    ZeroPointBye,
    /// No entry for the round: absent, or withdrawn from the tournament.
    NotPaired,
}

/// A player without a board in a round: `GET /api/rounds/{r}/byes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bye {
    pub player: Seat,
    #[serde(rename = "bye")]
    pub kind: Unpaired,
    /// The points it gives, as the pairing program's point system counts them (`1.0`).
    pub points: String,
    pub section: Option<String>,
}

/// Points as the pairing files write them (`2.5`, ` 1.0`, `3`), in tenths: a bye's
/// [`Bye::points`], a TRF's point system; the reverse of `pairings::trf::points_text`.
pub fn tenths(text: &str) -> Option<u32> {
    let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), "0"));
    let frac = frac
        .chars()
        .next()
        .and_then(|c| c.to_digit(10))
        .unwrap_or(0);
    Some(whole.trim().parse::<u32>().ok()? * 10 + frac)
}

/// The event's rounds: each round's games on the hall's boards (every section's), and each
/// round's scheduled start.
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    /// Each round's games, on the hall's boards, every section's.
    pub pairings: BTreeMap<RoundNo, Vec<Pairing>>,
    /// The round a new hub begins in (`[event] round`); by default the last with pairings.
    pub first: Option<RoundNo>,
    /// Each round's scheduled start (Unix ms), as the regulations give it.
    pub starts: BTreeMap<RoundNo, u64>,
    /// Each round's players without a board: byes, absent and withdrawn players.
    pub byes: BTreeMap<RoundNo, Vec<Bye>>,
}

impl Rounds {
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

    /// The players of `round` without a board.
    pub fn byes(&self, round: RoundNo) -> &[Bye] {
        self.byes.get(&round).map_or(&[], Vec::as_slice)
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
    /// How it started, each time (a section at a time, or the hall): the audit of who
    /// started it and whether they forced it over games without a result.
    pub started: Vec<Started>,
}

/// One start of a round, as `GET /api/rounds` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Started {
    /// Hub time, Unix ms.
    pub at: u64,
    pub by: String,
    /// Started over games of the round before without a result, or without pairings.
    pub forced: bool,
    pub section: Option<String>,
    /// The chief arbiter took this start back (a forced start by mistake): when, and who.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone: Option<Undone>,
}

/// Who took a start back, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Undone {
    /// Hub time, Unix ms.
    pub at: u64,
    pub by: String,
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
            started: Vec::new(),
        }
    }
}
