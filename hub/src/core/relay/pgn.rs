//! A board's game as broadcast PGN: the seven tags and the event's, every move with the
//! mover's clock after it (`[%clk h:mm:ss]`) and the time it took (`[%emt h:mm:ss]`).
//!
//! What the feed never shows: the DGT kings' result signal (it is never a move), and an
//! illegal move the arbiter reinstated (it never entered the move list). An illegal move
//! that stood (A.5.2) makes the rest of the game illegal from the start, which stops
//! importers such as lichess; the feed then starts the game at the position the illegal move
//! left (`[SetUp "1"]`, `[FEN …]`) and lists the moves before it in a comment.

use std::fmt::Write;

use serde::{Deserialize, Serialize};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Position};

use crate::core::arbiter::GameResult;
use crate::core::clock::MoveCheck;
use crate::core::game::{fen_of, Game};
use crate::core::side::Side;

/// A player as the feed names one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u16>,
    pub fide_id: Option<u64>,
    pub federation: Option<String>,
}

/// The tags of one broadcast game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tags {
    pub event: String,
    pub site: String,
    /// `YYYY.MM.DD`, or `????.??.??`.
    pub date: String,
    /// `round.board`.
    pub round: String,
    pub white: Option<Player>,
    pub black: Option<Player>,
    pub time_control: Option<String>,
    /// Stable across polls and restarts: the event, round and board.
    pub game_id: String,
    /// The teams of a team match (`WhiteTeam`, `BlackTeam`, as lichess's broadcasts read
    /// them).
    pub white_team: Option<String>,
    pub black_team: Option<String>,
}

/// The marker that ends the movetext. PGN has none for a double forfeit: its `0-0` is in
/// the `Result` tag (lichess's broadcasts read it there), while in the movetext readers
/// take `0-0` for castling (python-chess, pgn-extract), so the movetext ends with `*`.
fn termination_marker(result: GameResult) -> &'static str {
    match result {
        GameResult::DoubleForfeit => "*",
        other => other.pgn(),
    }
}

/// One tag; its value stays on the tag's line whatever a name holds.
fn tag(out: &mut String, name: &str, value: &str) {
    let value = crate::core::names::printable(value)
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let _ = writeln!(out, "[{name} \"{value}\"]");
}

/// `h:mm:ss` of `ms`, whole seconds.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// One move as the feed shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgnMove {
    pub san: SanPlus,
    pub by: Side,
    /// The move's number (the position's full move number before it).
    pub number: u32,
    /// What the mover's clock showed after it ([`MoveCheck::time_ms`]).
    pub clock_ms: Option<u64>,
    /// How long the mover's clock ran (where no clock reported, the time between presses).
    pub emt_ms: Option<u64>,
    /// The hub filled the move in, in an order the board did not show.
    #[serde(default, skip_serializing_if = "Filled::is_seen")]
    pub filled: Filled,
}

/// Whether a move was seen in its place, or filled in (`core/game/filled_in.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Filled {
    #[default]
    Seen,
    /// Filled in; the arbiter has not confirmed the order.
    Unconfirmed,
    /// Filled in; the arbiter confirmed the order or chose it.
    Confirmed,
}

impl Filled {
    fn is_seen(&self) -> bool {
        *self == Filled::Seen
    }

    /// The comment the feed gives a filled-in move.
    fn comment(self) -> Option<&'static str> {
        match self {
            Filled::Seen => None,
            Filled::Unconfirmed => {
                Some("{Filled in: the board did not show the order of these moves.}")
            }
            Filled::Confirmed => Some("{Filled in: the arbiter confirmed the order.}"),
        }
    }
}

/// What a game's PGN is rendered from: its moves with their clocks, and where each stretch
/// of legal moves starts. Built from a game in play ([`PgnGame::of`]) and kept as it is when
/// the game is archived, so a finished round's feed is rendered by the same code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgnGame {
    /// Where each stretch starts: the ply and the position (FEN), the game's start first,
    /// then the position an illegal move left where it stood (A.5.2).
    pub starts: Vec<(usize, String)>,
    pub moves: Vec<PgnMove>,
}

impl PgnGame {
    /// `game` with `checks[i]` the clock at move `i + 1`.
    pub fn of(game: &Game, checks: &[MoveCheck]) -> PgnGame {
        let starts: Vec<(usize, String)> = game
            .starts()
            .iter()
            .map(|(from, position)| (*from, fen_of(position)))
            .collect();
        let moves = game.moves();
        let mut out = Vec::with_capacity(moves.len());
        let mut position = Chess::default();
        for (i, m) in moves.iter().enumerate() {
            if let Some((_, start)) = game.starts().iter().rev().find(|(from, _)| *from == i) {
                position = start.clone();
            }
            let between_presses = i
                .checked_sub(1)
                .map(|before| m.at.0.saturating_sub(moves[before].at.0));
            let check = checks.get(i);
            let filled = match game.filled_in().iter().find(|f| f.holds(i + 1)) {
                None => Filled::Seen,
                Some(f) if f.confirmed => Filled::Confirmed,
                Some(_) => Filled::Unconfirmed,
            };
            out.push(PgnMove {
                san: m.san,
                by: m.by.into(),
                number: position.fullmoves().get(),
                clock_ms: check.and_then(MoveCheck::time_ms),
                emt_ms: check.and_then(|c| c.used_ms).or(between_presses),
                filled,
            });
            position.play_unchecked(m.m);
        }
        PgnGame { starts, moves: out }
    }

    /// Where the stretch holding move `ply` starts: its first ply and position.
    fn start_of(&self, ply: usize) -> (usize, Option<&str>) {
        self.starts
            .iter()
            .rev()
            .find(|(from, _)| *from <= ply)
            .map_or((0, None), |(from, fen)| (*from, Some(fen.as_str())))
    }
}

/// The game's first `plies` moves with its `result` (`*` while it goes on): `[%clk]` is
/// what the clock showed, `[%emt]` how long the mover's clock ran.
pub fn render(tags: &Tags, game: &PgnGame, plies: usize, result: GameResult) -> String {
    let moves = &game.moves;
    // A forfeit is a game not played: whatever the board showed is no part of it.
    let plies = if result.is_forfeit() {
        0
    } else {
        plies.min(moves.len())
    };
    // The moves before an illegal move that stood cannot be part of a legal game.
    let (from, start) = game.start_of(plies);

    let mut out = String::new();
    tag(&mut out, "Event", &tags.event);
    tag(&mut out, "Site", &tags.site);
    tag(&mut out, "Date", &tags.date);
    tag(&mut out, "Round", &tags.round);
    let name = |p: &Option<Player>| p.as_ref().map_or("?".to_owned(), |p| p.name.clone());
    tag(&mut out, "White", &name(&tags.white));
    tag(&mut out, "Black", &name(&tags.black));
    tag(&mut out, "Result", result.pgn());
    if result.is_forfeit() {
        tag(&mut out, "Termination", "forfeit");
    }
    for (side, player) in [("White", &tags.white), ("Black", &tags.black)] {
        let Some(player) = player else { continue };
        if let Some(title) = &player.title {
            tag(&mut out, &format!("{side}Title"), &title.to_uppercase());
        }
        if let Some(rating) = player.rating {
            tag(&mut out, &format!("{side}Elo"), &rating.to_string());
        }
        if let Some(id) = player.fide_id {
            tag(&mut out, &format!("{side}FideId"), &id.to_string());
        }
        if let Some(federation) = &player.federation {
            tag(&mut out, &format!("{side}Federation"), federation);
        }
    }
    for (side, team) in [
        ("WhiteTeam", &tags.white_team),
        ("BlackTeam", &tags.black_team),
    ] {
        if let Some(team) = team {
            tag(&mut out, side, team);
        }
    }
    if let Some(tc) = &tags.time_control {
        tag(&mut out, "TimeControl", tc);
    }
    tag(&mut out, "GameId", &tags.game_id);
    // The clocks as of the last move each side made.
    for (side, color) in [("WhiteClock", Color::White), ("BlackClock", Color::Black)] {
        let last = moves[..plies]
            .iter()
            .rev()
            .find(|m| m.by == Side::from(color))
            .and_then(|m| m.clock_ms);
        if let Some(ms) = last {
            tag(&mut out, side, &clock(ms));
        }
    }
    if let Some(fen) = start.filter(|fen| *fen != INITIAL_FEN) {
        tag(&mut out, "SetUp", "1");
        tag(&mut out, "FEN", fen);
    }
    out.push('\n');

    // Tokens a line may break between: a move number, a move, a move's whole comment (so a
    // `[%clk …]` command never spans lines), each word of a text comment.
    let mut tokens: Vec<String> = Vec::new();
    if from > 0 {
        let earlier: Vec<String> = moves[..from].iter().map(|m| m.san.to_string()).collect();
        let note = format!(
            "{{An illegal move stood (A.5.2) after these moves: {}. The game goes on from the position it left.}}",
            earlier.join(" ")
        );
        tokens.extend(note.split(' ').map(str::to_owned));
    }
    for (i, m) in moves.iter().enumerate().take(plies).skip(from) {
        if m.by == Side::White {
            tokens.push(format!("{}.", m.number));
        } else if i == from {
            tokens.push(format!("{}...", m.number));
        }
        tokens.push(m.san.to_string());
        let mut comment = Vec::new();
        if let Some(ms) = m.clock_ms {
            comment.push(format!("[%clk {}]", clock(ms)));
        }
        if let Some(emt) = m.emt_ms {
            comment.push(format!("[%emt {}]", clock(emt)));
        }
        if !comment.is_empty() {
            tokens.push(format!("{{{}}}", comment.join(" ")));
        }
        if let Some(note) = m.filled.comment() {
            // One token: a reader keeps a line break inside a comment as part of its text.
            tokens.push(note.to_owned());
        }
    }
    tokens.push(termination_marker(result).to_owned());
    out.push_str(&wrap(&tokens, 79));
    out.push_str("\n\n");
    out
}

/// The standard start position's FEN, as [`Fen::from_position`] writes it.
const INITIAL_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The tokens in lines of at most `width` characters where they fit.
fn wrap(tokens: &[String], width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for token in tokens {
        if line > 0 && line + 1 + token.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(token);
        line += token.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_read_as_broadcasts_write_them() {
        assert_eq!(clock(5_400_000), "1:30:00");
        assert_eq!(clock(59_999), "0:00:59");
        assert_eq!(clock(3_723_000), "1:02:03");
    }

    #[test]
    fn lines_break_between_tokens_never_inside_a_clock_command() {
        let tokens: Vec<String> = [
            "1.",
            "e4",
            "{[%clk 0:15:00]}",
            "e5",
            "{[%clk 0:15:00] [%emt 0:00:02]}",
            "2.",
            "Nf3",
            "*",
        ]
        .map(str::to_owned)
        .to_vec();
        let wrapped = wrap(&tokens, 40);
        assert!(wrapped.lines().all(|l| l.len() <= 40), "{wrapped}");
        assert!(
            wrapped
                .lines()
                .all(|l| l.matches('{').count() == l.matches('}').count()),
            "{wrapped}"
        );
        assert_eq!(wrapped.replace('\n', " "), tokens.join(" "));
    }

    #[test]
    fn a_double_forfeit_is_in_the_result_tag_never_a_castling_in_the_movetext() {
        let tags = Tags {
            event: "e".into(),
            site: "?".into(),
            date: "????.??.??".into(),
            round: "1.15".into(),
            white: None,
            black: None,
            time_control: None,
            game_id: "e-r1-b15".into(),
            white_team: None,
            black_team: None,
        };
        let pgn = render(&tags, &PgnGame::default(), 0, GameResult::DoubleForfeit);
        assert!(pgn.contains("[Result \"0-0\"]") && pgn.contains("[Termination \"forfeit\"]"));
        assert_eq!(pgn.split("\n\n").nth(1).map(str::trim), Some("*"), "{pgn}");
        let won = render(
            &tags,
            &PgnGame::default(),
            0,
            GameResult::WhiteWinsByForfeit,
        );
        assert_eq!(
            won.split("\n\n").nth(1).map(str::trim),
            Some("1-0"),
            "{won}"
        );
    }
}
