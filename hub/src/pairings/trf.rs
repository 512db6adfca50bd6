//! FIDE Tournament Report Files: reading and writing.
//!
//! TRF-2006/TRF-16 and the TRF-2025/2026 revisions share the player record `001`, fixed
//! columns (1-based): start rank 5–8, sex 10, title 11–13, name 15–47, rating 49–52,
//! federation 54–56, FIDE id 58–68, birth date 70–79, points 81–84, rank 86–89, then one
//! 10-column block per round from column 92: opponent 92–95, colour 97 (`w`, `b`, `-`),
//! result 99 (`1 0 = + - W D L H F U Z`). Other records (`012` name … `122` time control,
//! `222` time control as PGN, `310` teams with their players in board order, `XXR` rounds,
//! …) are kept as they are, and a player's record is written back as read with only the
//! results the hub set changed, so the pairing program reads back exactly what it wrote plus
//! the results.

use std::fmt;

use protocol::time_control::TimeControl;
use serde::Serialize;

/// A round's entry of one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RoundEntry {
    /// The opponent's start rank; `None` for a bye or an unpaired round.
    pub opponent: Option<u32>,
    /// `'w'`, `'b'`, `'-'` (none), or blank.
    pub color: Option<char>,
    /// The result code, `None` while the game is not over (a new round's pairing).
    pub result: Option<char>,
}

impl RoundEntry {
    /// A game lost or won without play (`+`, `-`).
    pub fn is_forfeit(&self) -> bool {
        matches!(self.result, Some('+' | '-'))
    }

    /// A bye: half, full, pairing-allocated or zero point (`H F U Z`), or a forfeit win
    /// without an opponent.
    pub fn is_bye(&self) -> bool {
        matches!(self.result, Some('H' | 'F' | 'U' | 'Z'))
    }
}

/// A player record (`001`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Player {
    pub start_rank: u32,
    pub sex: Option<char>,
    pub title: Option<String>,
    pub name: String,
    pub rating: Option<u16>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    pub birth: Option<String>,
    /// As written (`6.0`, `5.5`): the pairing program's count, kept exact.
    pub points: Option<String>,
    pub rank: Option<u32>,
    pub rounds: Vec<RoundEntry>,
    /// The record as read; results set later are written into its columns.
    #[serde(skip)]
    raw: String,
}

/// A team record (`310`, TRF-2025/2026): number, name, and its players in board order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Team {
    pub number: u32,
    pub name: String,
    /// The players' start ranks, first board first (columns 74–77, then every 5).
    pub members: Vec<u32>,
}

/// One line of the file: a player, or any other record kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Player(usize),
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trf {
    pub players: Vec<Player>,
    pub teams: Vec<Team>,
    lines: Vec<Line>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TRF line {line}: {why}")]
pub struct TrfError {
    pub line: usize,
    pub why: String,
}

/// Characters `from..=to` (1-based columns) of `line`, trimmed; `None` when blank.
///
/// Columns count characters, not bytes, in reading as in writing ([`Trf::set_result`]): a
/// name such as `Åström` or `Bőr` takes as many columns as its letters, as the pairing
/// program laid it out, so the columns after it stay where they are.
fn field(line: &str, from: usize, to: usize) -> Option<&str> {
    let start = line.char_indices().nth(from - 1)?.0;
    let end = line.char_indices().nth(to).map_or(line.len(), |(i, _)| i);
    let text = line[start..end].trim();
    (!text.is_empty()).then_some(text)
}

const ROUND_COLUMN: usize = 92;
/// Where a team record (`310`) lists its first player.
const TEAM_MEMBERS_COLUMN: usize = 74;
const ROUND_WIDTH: usize = 10;

impl Trf {
    pub fn parse(text: &str) -> Result<Trf, TrfError> {
        let mut trf = Trf {
            players: Vec::new(),
            teams: Vec::new(),
            lines: Vec::new(),
        };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim_end_matches('\r');
            let number = i + 1;
            let bad = |why: String| TrfError { line: number, why };
            if line.starts_with("001") {
                let player = player(line).map_err(bad)?;
                trf.lines.push(Line::Player(trf.players.len()));
                trf.players.push(player);
            } else {
                if line.starts_with("310") {
                    let number = field(line, 5, 7)
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| bad("310: no team number in columns 5-7".into()))?;
                    let name = field(line, 9, 40).unwrap_or_default().to_owned();
                    let mut members = Vec::new();
                    for column in (TEAM_MEMBERS_COLUMN..).step_by(5) {
                        let Some(rank) = field(line, column, column + 3) else {
                            break;
                        };
                        let rank = rank.parse().map_err(|_| {
                            bad(format!(
                                "310: team {number}'s player {rank:?} is not a start rank"
                            ))
                        })?;
                        members.push(rank);
                    }
                    trf.teams.push(Team {
                        number,
                        name,
                        members,
                    });
                }
                trf.lines.push(Line::Other(line.to_owned()));
            }
        }
        let ranks: std::collections::HashSet<u32> =
            trf.players.iter().map(|p| p.start_rank).collect();
        if ranks.len() != trf.players.len() {
            return Err(TrfError {
                line: 0,
                why: "two players with the same start rank".into(),
            });
        }
        Ok(trf)
    }

    /// A header record's text (`012` → the tournament's name).
    pub fn header(&self, code: &str) -> Option<&str> {
        self.lines.iter().find_map(|line| match line {
            Line::Other(text) => text
                .strip_prefix(code)
                .filter(|_| text.len() > code.len())
                .map(str::trim)
                .filter(|t| !t.is_empty()),
            Line::Player(_) => None,
        })
    }

    /// The number of rounds: the `142`/`XXR` record, else the most round columns any
    /// player has.
    pub fn rounds(&self) -> usize {
        let declared = self
            .header("142")
            .or_else(|| self.header("XXR"))
            .and_then(|n| n.parse().ok());
        let played = self
            .players
            .iter()
            .map(|p| p.rounds.len())
            .max()
            .unwrap_or(0);
        declared.unwrap_or(0).max(played)
    }

    /// The time control of record `222` (TRF-2025/2026, PGN syntax).
    pub fn time_control(&self) -> Option<TimeControl> {
        self.header("222").and_then(|t| t.parse().ok())
    }

    /// The games of `round` (1-based): each White player with his round's entry, and his
    /// opponent. Byes and unpaired rounds have none.
    pub fn games(&self, round: usize) -> impl Iterator<Item = (&Player, RoundEntry, &Player)> {
        self.players.iter().filter_map(move |white| {
            let entry = *white.rounds.get(round.checked_sub(1)?)?;
            if entry.color != Some('w') {
                return None;
            }
            let black = self.player(entry.opponent?)?;
            Some((white, entry, black))
        })
    }

    pub fn player(&self, start_rank: u32) -> Option<&Player> {
        self.players.iter().find(|p| p.start_rank == start_rank)
    }

    /// Sets the result of `round` (1-based) for the player `start_rank`.
    pub fn set_result(&mut self, start_rank: u32, round: usize, result: char) -> bool {
        let Some(player) = self.players.iter_mut().find(|p| p.start_rank == start_rank) else {
            return false;
        };
        match player.rounds.get_mut(round.wrapping_sub(1)) {
            Some(entry) => {
                entry.result = Some(result);
                let column = ROUND_COLUMN + ROUND_WIDTH * (round - 1) + 7;
                let mut raw: Vec<char> = player.raw.chars().collect();
                if raw.len() < column {
                    raw.resize(column, ' ');
                }
                raw[column - 1] = result;
                player.raw = raw.into_iter().collect();
                true
            }
            None => false,
        }
    }
}

fn player(line: &str) -> Result<Player, String> {
    let number = |from, to, what: &str| -> Result<Option<u64>, String> {
        field(line, from, to)
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| format!("{what} {t:?} is not a number"))
            })
            .transpose()
    };
    let start_rank = number(5, 8, "start rank")?.ok_or("no start rank in columns 5-8")? as u32;
    let mut rounds = Vec::new();
    let mut column = ROUND_COLUMN;
    let columns = line.chars().count();
    while columns >= column {
        let opponent = number(column, column + 3, "opponent")?
            .filter(|n| *n > 0)
            .map(|n| n as u32);
        let color = field(line, column + 5, column + 5).and_then(|c| c.chars().next());
        let result = field(line, column + 7, column + 7).and_then(|c| c.chars().next());
        if let Some(r) = result {
            if !"10=+-WDLHFUZ".contains(r) {
                return Err(format!("round {}: result {r:?}", rounds.len() + 1));
            }
        }
        rounds.push(RoundEntry {
            opponent,
            color,
            result,
        });
        column += ROUND_WIDTH;
    }
    // A trailing round with nothing in it is the line's padding.
    while rounds
        .last()
        .is_some_and(|r| r.opponent.is_none() && r.result.is_none() && r.color.is_none())
    {
        rounds.pop();
    }
    Ok(Player {
        start_rank,
        sex: field(line, 10, 10).and_then(|s| s.chars().next()),
        title: field(line, 11, 13).map(str::to_owned),
        name: field(line, 15, 47)
            .ok_or("no name in columns 15-47")?
            .to_owned(),
        rating: number(49, 52, "rating")?
            .map(|r| r as u16)
            .filter(|r| *r > 0),
        federation: field(line, 54, 56).map(str::to_owned),
        fide_id: number(58, 68, "FIDE id")?.filter(|id| *id > 0),
        birth: field(line, 70, 79).map(str::to_owned),
        points: field(line, 81, 84).map(str::to_owned),
        rank: number(86, 89, "rank")?.map(|r| r as u32),
        rounds,
        raw: line.to_owned(),
    })
}

impl fmt::Display for Trf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.lines {
            match line {
                Line::Player(i) => writeln!(f, "{}", self.players[*i].raw)?,
                Line::Other(text) => writeln!(f, "{text}")?,
            }
        }
        Ok(())
    }
}
