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

use crate::core::pairings::tenths;

pub use crate::core::pairings::Unpaired;
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
    /// The file's lines end in CR LF (as Windows pairing programs write them): written back
    /// so.
    crlf: bool,
}

/// Points a result scores, in tenths, as the file's point system gives them: TRF-2026's
/// `162` record or BBP's `BBW BBD BBL BBZ BBF BBU`, else 1, ½ and 0 ([`PointSystem::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointSystem {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
    /// A zero-point bye, and a round a player was not paired in.
    pub zero_bye: u32,
    pub forfeit_loss: u32,
    /// The pairing-allocated bye (`U`, or `+` without an opponent).
    pub pairing_bye: u32,
}

impl Default for PointSystem {
    fn default() -> PointSystem {
        PointSystem {
            win: 10,
            draw: 5,
            loss: 0,
            zero_bye: 0,
            forfeit_loss: 0,
            pairing_bye: 10,
        }
    }
}

impl PointSystem {
    /// `player`'s points after the first `rounds` rounds, in tenths.
    pub fn score(&self, player: &Player, rounds: usize) -> u32 {
        player
            .rounds
            .iter()
            .take(rounds)
            .map(|entry| self.points(entry))
            .sum()
    }

    /// The points of one round's entry, as the engines count them (BBP's `getPoints`).
    pub fn points(&self, entry: &RoundEntry) -> u32 {
        let paired = entry.opponent.is_some();
        match entry.result {
            Some('1' | 'W') => self.win,
            Some('+') if paired => self.win,
            Some('+' | 'U') => self.pairing_bye,
            Some('F') => self.win,
            Some('=' | 'D' | 'H') => self.draw,
            Some('0' | 'L') => self.loss,
            Some('-') if paired => self.forfeit_loss,
            _ if paired => self.loss,
            _ => self.zero_bye,
        }
    }
}

/// Tenths of a point as the TRF writes points: `2.5`, `10.0`.
pub fn points_text(tenths: u32) -> String {
    format!("{}.{}", tenths / 10, tenths % 10)
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
            crlf: text.contains("\r\n"),
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

    /// Every record `code` of the file, whole: the team records' columns (`240`, `330`).
    pub fn records<'a>(&'a self, code: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.lines.iter().filter_map(move |line| match line {
            Line::Other(text) if text.starts_with(code) => Some(text.as_str()),
            _ => None,
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

    /// How the players' event is paired, as gacrux reads a file: record `092` naming a
    /// round-robin (`RR`, `ROBIN`, `BERGER`) and not a Swiss; without either, a field that
    /// fits one (as many players as rounds or one more; or twice as many, as gacrux counts a
    /// double round-robin).
    pub fn system(&self) -> crate::core::standings::System {
        self.system_of(self.players.len())
    }

    /// How a team file's teams are paired: as [`Trf::system`], the field its teams.
    pub fn team_system(&self) -> crate::core::standings::System {
        self.system_of(self.teams.len())
    }

    fn system_of(&self, field: usize) -> crate::core::standings::System {
        use crate::core::standings::System;
        let kind = self.header("092").unwrap_or_default().to_uppercase();
        if kind.contains("SWISS") {
            return System::Swiss;
        }
        if ["RR", "ROBIN", "BERGER"].iter().any(|k| kind.contains(k)) {
            return System::RoundRobin;
        }
        let rounds = self.rounds();
        let fits =
            field == rounds || field == rounds + 1 || [rounds, rounds + 1].contains(&(2 * field));
        if fits && field > 0 {
            System::RoundRobin
        } else {
            System::Swiss
        }
    }

    /// The time control of record `222` (TRF-2025/2026, PGN syntax).
    pub fn time_control(&self) -> Option<TimeControl> {
        self.header("222").and_then(|t| t.parse().ok())
    }

    /// The point system of records `162` (TRF-2026: `W 1.0    D 0.5 …`, a letter and four
    /// columns every nine from column 6) and `BBW`/`BBD`/`BBL`/`BBZ`/`BBF`/`BBU` (BBP's), over
    /// 1, ½ and 0. `BBU` and `162`'s `P` give the pairing-allocated bye, else it scores a win.
    pub fn point_system(&self) -> PointSystem {
        let mut system = PointSystem::default();
        let mut pairing_bye = None;
        for line in &self.lines {
            let Line::Other(text) = line else { continue };
            let code = text.get(..3).unwrap_or_default();
            if code == "162" {
                let chars: Vec<char> = text.chars().collect();
                for start in (5..chars.len()).step_by(9) {
                    let value: String = chars.iter().skip(start + 1).take(4).collect();
                    let Some(points) = tenths(&value) else {
                        continue;
                    };
                    match chars[start] {
                        'W' => system.win = points,
                        'D' => system.draw = points,
                        'L' => system.loss = points,
                        'Z' => (system.zero_bye, system.forfeit_loss) = (points, points),
                        'P' => pairing_bye = Some(points),
                        _ => {}
                    }
                }
                continue;
            }
            let Some(points) = text.get(3..).and_then(tenths) else {
                continue;
            };
            match code {
                "BBW" => system.win = points,
                "BBD" => system.draw = points,
                "BBL" => system.loss = points,
                "BBZ" => system.zero_bye = points,
                "BBF" => system.forfeit_loss = points,
                "BBU" => pairing_bye = Some(points),
                _ => {}
            }
        }
        system.pairing_bye = pairing_bye.unwrap_or(system.win);
        system
    }

    /// Each player's place in the order the engines break ties by: the pairing number
    /// (start rank), or the order of the records where `XXC` says `rank`.
    pub fn tie_order(&self) -> std::collections::HashMap<u32, u32> {
        let by_position = self.lines.iter().any(|line| {
            matches!(line, Line::Other(text) if text.starts_with("XXC")
                && text.split_whitespace().any(|word| word == "rank"))
        });
        self.players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let order = if by_position {
                    i as u32 + 1
                } else {
                    p.start_rank
                };
                (p.start_rank, order)
            })
            .collect()
    }

    /// The games of `round` (1-based) as pairs of players, each once: White (the player
    /// whose entry says `w`, or whose opponent's says `b`; else the lower start rank) with
    /// his entry, and Black with his. Forfeited games are games here: they were paired.
    pub fn pairs(&self, round: usize) -> Vec<(&Player, RoundEntry, &Player, RoundEntry)> {
        let mut pairs = Vec::new();
        let entry = |p: &Player| round.checked_sub(1).and_then(|i| p.rounds.get(i)).copied();
        for player in &self.players {
            let Some(mine) = entry(player) else { continue };
            let Some(opponent) = mine.opponent.filter(|o| *o != player.start_rank) else {
                continue;
            };
            let Some(other) = self.player(opponent) else {
                continue;
            };
            let theirs = entry(other).unwrap_or(RoundEntry {
                opponent: Some(player.start_rank),
                color: None,
                result: None,
            });
            let player_white = match (mine.color, theirs.color) {
                (Some('w'), _) | (_, Some('b')) => true,
                (Some('b'), _) | (_, Some('w')) => false,
                _ => player.start_rank < other.start_rank,
            };
            if player_white {
                pairs.push((player, mine, other, theirs));
            }
        }
        pairs
    }

    /// The players who play no game in `round` (1-based) and how each stands in it; empty
    /// for a round nobody is paired in.
    pub fn unpaired(&self, round: usize) -> Vec<(&Player, Unpaired)> {
        let index = round.wrapping_sub(1);
        let paired_round = self
            .players
            .iter()
            .any(|p| p.rounds.get(index).is_some_and(|e| e.opponent.is_some()));
        if !paired_round {
            return Vec::new();
        }
        self.players
            .iter()
            .filter_map(|p| {
                let entry = p.rounds.get(index);
                if entry.is_some_and(|e| e.opponent.is_some_and(|o| o != p.start_rank)) {
                    return None;
                }
                let how = match entry.and_then(|e| e.result) {
                    Some('H') => Unpaired::HalfPointBye,
                    Some('F') => Unpaired::FullPointBye,
                    Some('U' | '+') => Unpaired::PairingAllocatedBye,
                    Some('Z' | '-') => Unpaired::ZeroPointBye,
                    _ => Unpaired::NotPaired,
                };
                Some((p, how))
            })
            .collect()
    }

    /// Points (columns 81–84) as the results give them under the file's point system, and,
    /// where any changed, ranks (86–89) as the engines write them: by points, ties by
    /// [`Trf::tie_order`]. Points that already agree keep their bytes.
    pub fn recount(&mut self) {
        let (rounds, system) = (self.rounds(), self.point_system());
        let scores: Vec<u32> = self
            .players
            .iter()
            .map(|p| system.score(p, rounds))
            .collect();
        let mut changed = false;
        for (player, score) in self.players.iter_mut().zip(&scores) {
            let written = player.points.as_deref().and_then(tenths);
            if written != Some(*score) {
                let text = points_text(*score);
                player.raw = with_columns(&player.raw, 81, &format!("{text:>4}"));
                player.points = Some(text);
                changed = true;
            }
        }
        if !changed {
            return;
        }
        let order = self.tie_order();
        let mut ranked: Vec<(u32, u32, usize)> = scores
            .iter()
            .enumerate()
            .map(|(i, score)| (*score, order[&self.players[i].start_rank], i))
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (place, (.., i)) in ranked.into_iter().enumerate() {
            write_rank(&mut self.players[i], place as u32 + 1);
        }
    }

    /// Writes `rank` into the rank column (86–89) of the player numbered `start_rank`.
    pub fn set_rank(&mut self, start_rank: u32, rank: u32) {
        if let Some(player) = self.players.iter_mut().find(|p| p.start_rank == start_rank) {
            write_rank(player, rank);
        }
    }

    /// Sets the header record `code` (`202`) to `value`: the first such record rewritten,
    /// else one added before the first player.
    pub fn set_header(&mut self, code: &str, value: &str) {
        let text = format!("{code} {value}");
        let is_record = |t: &str| {
            t.strip_prefix(code)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        };
        let existing = self
            .lines
            .iter_mut()
            .find(|line| matches!(line, Line::Other(t) if is_record(t)));
        match existing {
            Some(line) => *line = Line::Other(text),
            None => {
                let at = self
                    .lines
                    .iter()
                    .position(|line| matches!(line, Line::Player(_)))
                    .unwrap_or(self.lines.len());
                self.lines.insert(at, Line::Other(text));
            }
        }
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

    /// The player a pairing's seat names: by start rank, else by FIDE id, else by the exact
    /// name (a CSV round's seats carry no start rank).
    pub fn find(&self, start_rank: u32, fide_id: Option<u64>, name: &str) -> Option<&Player> {
        self.player(start_rank)
            .filter(|_| start_rank > 0)
            .or_else(|| {
                let id = fide_id?;
                self.players.iter().find(|p| p.fide_id == Some(id))
            })
            .or_else(|| {
                let mut named = self.players.iter().filter(|p| p.name == name);
                named.next().filter(|_| named.next().is_none())
            })
    }

    /// Enters `start_rank`'s game of `round` (1-based): the result, and the opponent and
    /// colour where the file does not pair them so already (a round the pairing program
    /// exported as CSV).
    pub fn set_game(
        &mut self,
        start_rank: u32,
        round: usize,
        opponent: u32,
        color: char,
        result: char,
    ) {
        let paired = self
            .player(start_rank)
            .and_then(|p| p.rounds.get(round.wrapping_sub(1)))
            .is_some_and(|e| e.opponent == Some(opponent));
        if !paired {
            let Some(player) = self.players.iter_mut().find(|p| p.start_rank == start_rank) else {
                return;
            };
            let column = ROUND_COLUMN + ROUND_WIDTH * (round - 1);
            let entry = format!("{opponent:>4} {color}");
            player.raw = with_columns(&player.raw, column, &entry);
            while player.rounds.len() < round {
                player.rounds.push(RoundEntry {
                    opponent: None,
                    color: None,
                    result: None,
                });
            }
            player.rounds[round - 1].opponent = Some(opponent);
            player.rounds[round - 1].color = Some(color);
        }
        self.set_result(start_rank, round, result);
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
                player.raw = with_columns(&player.raw, column, &result.to_string());
                true
            }
            None => false,
        }
    }
}

/// `line` with `text` written over its characters from column `from` (1-based), padded
/// with blanks where the line is shorter. Columns count characters, as [`field`] reads them.
/// The rank column (86–89): the player's place in the standings.
fn write_rank(player: &mut Player, rank: u32) {
    player.raw = with_columns(&player.raw, 86, &format!("{rank:>4}"));
    player.rank = Some(rank);
}

fn with_columns(line: &str, from: usize, text: &str) -> String {
    let mut chars: Vec<char> = line.chars().collect();
    let end = from - 1 + text.chars().count();
    if chars.len() < end {
        chars.resize(end, ' ');
    }
    for (i, c) in text.chars().enumerate() {
        chars[from - 1 + i] = c;
    }
    chars.into_iter().collect()
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
        let end = if self.crlf { "\r\n" } else { "\n" };
        for line in &self.lines {
            match line {
                Line::Player(i) => write!(f, "{}{end}", self.players[*i].raw)?,
                Line::Other(text) => write!(f, "{text}{end}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four players, two rounds: 1–3 and 2–4 played, then 1–2 and 3–4 paired.
    fn file(extra: &str, end: &str) -> String {
        let lines = [
            "012 Test".to_owned(),
            extra.to_owned(),
            "001    1 m    Åström, Ingrid                    2400 SWE             1990/01/01  1.0    1     3 w 1     2 w  ".to_owned(),
            "001    2 m    Bőr, Anna                         2300 HUN             1990/01/01  0.5    2     4 b =     1 b  ".to_owned(),
            "001    3 m    Carlsen, Magnus                   2200 NOR             1990/01/01  0.0    3     1 b 0     4 w  ".to_owned(),
            "001    4 m    Dvořák, Jiří                      2100 CZE             1990/01/01  0.5    4     2 w =     3 b  ".to_owned(),
        ];
        lines.map(|l| l.trim_end().to_owned()).join(end) + end
    }

    #[test]
    fn a_round_robin_is_read_from_092_else_from_the_field_against_the_rounds() {
        use crate::core::standings::System::{RoundRobin, Swiss};
        let system = |extra: &str| Trf::parse(&file(extra, "\n")).unwrap().system();
        // Four players, two rounds: a Swiss by its size.
        assert_eq!(system(""), Swiss);
        // Three rounds for four players: all play all, as gacrux reads it.
        assert_eq!(system("XXR 3"), RoundRobin);
        assert_eq!(
            system("XXR 6"),
            Swiss,
            "gacrux's double: 2 × 4 is 7 or 8 rounds"
        );
        assert_eq!(system("XXR 7"), RoundRobin);
        // The file's word first.
        assert_eq!(system("092 Individual: Swiss-System\nXXR 3"), Swiss);
        assert_eq!(system("092 Double Round Robin"), RoundRobin);
        assert_eq!(system("092 Berger"), RoundRobin);
        // A team file's teams are their own field: two teams, two rounds.
        let teams = Trf::parse(&file("310   1 A\n310   2 B", "\n")).unwrap();
        assert_eq!((teams.system(), teams.team_system()), (Swiss, RoundRobin));
    }

    #[test]
    fn the_point_system_comes_from_162_or_bbp_records() {
        let default = Trf::parse(&file("", "\n")).unwrap();
        assert_eq!(default.point_system(), PointSystem::default());
        let three = Trf::parse(&file("BBW  3.0\nBBD  1.0", "\n")).unwrap();
        assert_eq!(
            (three.point_system().win, three.point_system().draw),
            (30, 10)
        );
        assert_eq!(
            three.point_system().pairing_bye,
            30,
            "BBU defaults to a win"
        );
        let tec = Trf::parse(&file("162  W 3.0    D 1.5    L 0.0", "\n")).unwrap();
        assert_eq!((tec.point_system().win, tec.point_system().draw), (30, 15));
    }

    #[test]
    fn tie_break_records_are_rewritten_or_added_before_the_players_and_ranks_placed() {
        let mut trf = Trf::parse(&file("202 BH", "\n")).unwrap();
        trf.set_header("202", "BH/C1,SB");
        trf.set_header("212", "PTS,BH/C1,SB");
        trf.set_rank(3, 1);
        let out = trf.to_string();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1..3], ["202 BH/C1,SB", "212 PTS,BH/C1,SB"]);
        assert!(lines[3].starts_with("001    1"));
        let reread = Trf::parse(&out).unwrap();
        assert_eq!(reread.player(3).unwrap().rank, Some(1));
        assert_eq!(reread.header("202"), Some("BH/C1,SB"));
    }

    #[test]
    fn points_are_recounted_and_ranks_follow_only_when_they_change() {
        let text = file("", "\r\n");
        let mut trf = Trf::parse(&text).unwrap();
        trf.recount();
        assert_eq!(
            trf.to_string(),
            text,
            "points that agree keep the file's bytes"
        );
        assert!(trf.set_result(1, 2, '0') && trf.set_result(2, 2, '1'));
        assert!(trf.set_result(3, 2, '=') && trf.set_result(4, 2, '='));
        trf.recount();
        let out = trf.to_string();
        assert!(
            out.ends_with("\r\n") && !out.replace("\r\n", "").contains('\n'),
            "CR LF kept"
        );
        let back = Trf::parse(&out).unwrap();
        let points: Vec<_> = back
            .players
            .iter()
            .map(|p| p.points.clone().unwrap())
            .collect();
        assert_eq!(points, ["1.0", "1.5", "0.5", "1.0"]);
        // Ranks by points, ties to the lower pairing number.
        let ranks: Vec<_> = back.players.iter().map(|p| p.rank.unwrap()).collect();
        assert_eq!(ranks, [2, 1, 4, 3]);
        // Columns count characters: Bőr's record keeps its layout.
        assert_eq!(back.player(2).unwrap().rounds[1].result, Some('1'));
    }

    #[test]
    fn a_round_the_file_does_not_pair_is_entered_whole() {
        let mut trf = Trf::parse(&file("", "\n")).unwrap();
        trf.set_game(1, 3, 4, 'w', '+');
        trf.set_game(4, 3, 1, 'b', '-');
        let back = Trf::parse(&trf.to_string()).unwrap();
        let entry = back.player(1).unwrap().rounds[2];
        assert_eq!(
            (entry.opponent, entry.color, entry.result),
            (Some(4), Some('w'), Some('+'))
        );
        assert_eq!(back.player(4).unwrap().rounds[2].result, Some('-'));
        assert_eq!(
            back.unpaired(3).len(),
            2,
            "players 2 and 3 not paired in round 3"
        );
        assert_eq!(back.unpaired(3)[0].1, Unpaired::NotPaired);
        assert_eq!(back.find(0, None, "Carlsen, Magnus").unwrap().start_rank, 3);
    }
}
