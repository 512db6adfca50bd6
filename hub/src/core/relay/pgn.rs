//! A board's game as broadcast PGN: the seven tags and the event's, every move with the
//! mover's clock after it (`[%clk h:mm:ss]`) and the time it took (`[%emt h:mm:ss]`).
//!
//! What the feed never shows: the DGT kings' result signal (it is never a move), and an
//! illegal move the arbiter reinstated (it never entered the move list). An illegal move
//! that stood (A.5.2) makes the rest of the game illegal from the start, which stops
//! importers such as lichess; the feed then starts the game at the position the illegal move
//! left (`[SetUp "1"]`, `[FEN …]`) and lists the moves before it in a comment.

use std::fmt::Write;

use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode, Position};

use super::Visible;
use crate::core::arbiter::GameResult;
use crate::core::clock::MoveCheck;
use crate::core::game::Game;

/// A player as the feed names one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Player {
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u16>,
    pub fide_id: Option<u64>,
    pub federation: Option<String>,
}

/// The tags of one broadcast game.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

fn tag(out: &mut String, name: &str, value: &str) {
    let value = value.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = writeln!(out, "[{name} \"{value}\"]");
}

/// `h:mm:ss` of `ms`, whole seconds.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The game at `visible` with its `result` (`*` while it goes on), with `checks[i]` the
/// clock at move `i + 1`: `[%clk]` is what the clock showed ([`MoveCheck::time_ms`]),
/// `[%emt]` how long the mover's clock ran (where no clock reported, the time between the
/// presses).
pub fn render(
    tags: &Tags,
    game: &Game,
    checks: &[MoveCheck],
    visible: Visible,
    result: GameResult,
) -> String {
    let clock_ms = |i: usize| checks.get(i).and_then(MoveCheck::time_ms);
    let moves = game.moves();
    let plies = visible.plies.min(moves.len());
    // The moves before an illegal move that stood cannot be part of a legal game.
    let (from, start) = game.start_of(plies);
    let start = start.clone();

    let mut out = String::new();
    tag(&mut out, "Event", &tags.event);
    tag(&mut out, "Site", &tags.site);
    tag(&mut out, "Date", &tags.date);
    tag(&mut out, "Round", &tags.round);
    let name = |p: &Option<Player>| p.as_ref().map_or("?".to_owned(), |p| p.name.clone());
    tag(&mut out, "White", &name(&tags.white));
    tag(&mut out, "Black", &name(&tags.black));
    tag(&mut out, "Result", result.pgn());
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
    if let Some(tc) = &tags.time_control {
        tag(&mut out, "TimeControl", tc);
    }
    tag(&mut out, "GameId", &tags.game_id);
    // The clocks as of the last move each side made.
    for (side, color) in [
        ("WhiteClock", shakmaty::Color::White),
        ("BlackClock", shakmaty::Color::Black),
    ] {
        let last = (0..plies)
            .rev()
            .find(|i| moves[*i].by == color)
            .and_then(clock_ms);
        if let Some(ms) = last {
            tag(&mut out, side, &clock(ms));
        }
    }
    if start != Chess::default() {
        tag(&mut out, "SetUp", "1");
        let fen = Fen::from_position(&start, EnPassantMode::Legal);
        tag(&mut out, "FEN", &fen.to_string());
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
    let mut position = start;
    for i in from..plies {
        let m = &moves[i];
        let number = position.fullmoves();
        if position.turn() == shakmaty::Color::White {
            tokens.push(format!("{number}."));
        } else if i == from {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.to_string());
        let mut comment = Vec::new();
        if let Some(ms) = clock_ms(i) {
            comment.push(format!("[%clk {}]", clock(ms)));
        }
        let between_presses = i
            .checked_sub(1)
            .map(|before| m.at.0.saturating_sub(moves[before].at.0));
        if let Some(emt) = checks.get(i).and_then(|c| c.used_ms).or(between_presses) {
            comment.push(format!("[%emt {}]", clock(emt)));
        }
        if !comment.is_empty() {
            tokens.push(format!("{{{}}}", comment.join(" ")));
        }
        position.play_unchecked(m.m);
    }
    tokens.push(result.pgn().to_owned());
    out.push_str(&wrap(&tokens, 79));
    out.push_str("\n\n");
    out
}

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
}
