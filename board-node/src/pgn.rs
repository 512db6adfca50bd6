//! Reading real games from PGN: the moves, and the clock after each move.

use std::io;
use std::ops::ControlFlow;

use pgn_reader::{RawComment, RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

/// One half-move of a game as recorded.
#[derive(Debug, Clone)]
pub struct Ply {
    pub m: Move,
    /// The move as the PGN wrote it.
    pub san: String,
    /// `[%clk]` after the move: the mover's remaining time, in ms.
    pub clk_ms: Option<u64>,
    /// `[%emt]`: the time the move took, as the broadcast measured it, in ms.
    pub emt_ms: Option<u64>,
}

/// A game read from PGN, its moves checked legal with shakmaty.
#[derive(Debug, Clone)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub start: Chess,
    pub plies: Vec<Ply>,
    /// A move that is not legal where it stands, and everything after it, is not part of
    /// `plies`. DGT boards put both kings on the centre squares to signal a result, which
    /// reaches broadcasts as an illegal king move such as `Ke4` at the end.
    pub stopped_at: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PgnError {
    #[error("reading PGN: {0}")]
    Io(#[from] io::Error),
    #[error("the PGN has {found} games, game {wanted} was asked for")]
    NoSuchGame { wanted: usize, found: usize },
    #[error("bad FEN tag: {0}")]
    BadFen(String),
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `Result` tag, `*` if there is none.
    pub fn result(&self) -> &str {
        self.tag("Result").unwrap_or("*")
    }
}

/// All games of a PGN text, in order.
pub fn read_games(pgn: &[u8]) -> Result<Vec<PgnGame>, PgnError> {
    let mut reader = Reader::new(io::Cursor::new(pgn));
    let mut games = Vec::new();
    while let Some(game) = reader.read_game(&mut GameVisitor)? {
        games.push(game?);
    }
    Ok(games)
}

/// Game `number` (1-based) of a PGN text.
pub fn read_game(pgn: &[u8], number: usize) -> Result<PgnGame, PgnError> {
    let mut games = read_games(pgn)?;
    let found = games.len();
    if number == 0 || number > found {
        return Err(PgnError::NoSuchGame {
            wanted: number,
            found,
        });
    }
    Ok(games.swap_remove(number - 1))
}

/// `h:mm:ss` or `h:mm:ss.f` as in `[%clk 1:30:54]`, in ms.
pub fn parse_clock(text: &str) -> Option<u64> {
    let mut parts = text.trim().split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let h: u64 = h.parse().ok()?;
    let m: u64 = m.parse().ok()?;
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = secs.parse().ok()?;
    let frac_ms = match frac.len() {
        0 => 0,
        n => {
            let digits: u64 = frac.get(..n.min(3))?.parse().ok()?;
            digits * 10u64.pow(3 - n.min(3) as u32)
        }
    };
    (m < 60 && secs < 60).then_some(((h * 60 + m) * 60 + secs) * 1000 + frac_ms)
}

/// The time of a `[%clk …]` or `[%emt …]` command in a comment.
fn time_in_comment(comment: &[u8], command: &str) -> Option<u64> {
    let text = std::str::from_utf8(comment).ok()?;
    let start = text.find(command)? + command.len();
    let end = text[start..].find(']')? + start;
    parse_clock(&text[start..end])
}

struct GameVisitor;

struct Movetext {
    position: Chess,
    start: Chess,
    tags: Vec<(String, String)>,
    plies: Vec<Ply>,
    stopped_at: Option<String>,
    error: Option<PgnError>,
}

impl Visitor for GameVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, PgnError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let mut error = None;
        let chess960 = tags
            .iter()
            .any(|(n, v)| n == "Variant" && v.eq_ignore_ascii_case("chess960"));
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let start = match tags.iter().find(|(n, _)| n == "FEN") {
            None => Chess::default(),
            Some((_, fen)) => match Fen::from_ascii(fen.as_bytes())
                .map_err(|e| e.to_string())
                .and_then(|f| f.into_position(mode).map_err(|e| e.to_string()))
            {
                Ok(position) => position,
                Err(e) => {
                    error = Some(PgnError::BadFen(e));
                    Chess::default()
                }
            },
        };
        ControlFlow::Continue(Movetext {
            position: start.clone(),
            start,
            tags,
            plies: Vec::new(),
            stopped_at: None,
            error,
        })
    }

    fn san(&mut self, movetext: &mut Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if movetext.stopped_at.is_some() {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&movetext.position) {
            Ok(m) => {
                movetext.position.play_unchecked(m);
                movetext.plies.push(Ply {
                    m,
                    san: san_plus.to_string(),
                    clk_ms: None,
                    emt_ms: None,
                });
            }
            Err(_) => movetext.stopped_at = Some(san_plus.to_string()),
        }
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        movetext: &mut Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        if movetext.stopped_at.is_none() {
            if let Some(ply) = movetext.plies.last_mut() {
                let comment = comment.as_bytes();
                if let Some(clk) = time_in_comment(comment, "[%clk") {
                    ply.clk_ms = Some(clk);
                }
                if let Some(emt) = time_in_comment(comment, "[%emt") {
                    ply.emt_ms = Some(emt);
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Movetext) -> Self::Output {
        if let Some(error) = movetext.error {
            return Err(error);
        }
        Ok(PgnGame {
            tags: movetext.tags,
            start: movetext.start,
            plies: movetext.plies,
            stopped_at: movetext.stopped_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_parse_with_and_without_fractions() {
        assert_eq!(parse_clock("1:30:54"), Some(5_454_000));
        assert_eq!(parse_clock(" 0:00:09.5"), Some(9_500));
        assert_eq!(parse_clock("00:15:17"), Some(917_000));
        assert_eq!(parse_clock("1:61:00"), None);
        assert_eq!(parse_clock("12:00"), None);
    }

    #[test]
    fn moves_carry_their_clock_and_a_king_signal_stops_the_game() {
        let pgn = br#"[Event "t"]
[Result "1-0"]

1. e4 { [%clk 0:15:07] [%emt 0:00:03] } 1... e5 { [%clk 0:15:08] } 2. Nf3 2... Ke4 3. d4 1-0
"#;
        let game = read_game(pgn, 1).unwrap();
        let sans: Vec<_> = game.plies.iter().map(|p| p.san.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        assert_eq!(game.plies[0].clk_ms, Some(907_000));
        assert_eq!(game.plies[1].clk_ms, Some(908_000));
        assert_eq!(game.plies[2].clk_ms, None);
        assert_eq!(game.plies[0].emt_ms, Some(3_000));
        assert_eq!(game.stopped_at.as_deref(), Some("Ke4"));
        assert_eq!(game.result(), "1-0");
    }

    #[test]
    fn asking_for_a_game_past_the_end_is_an_error() {
        assert!(matches!(
            read_game(b"1. e4 *", 2),
            Err(PgnError::NoSuchGame {
                wanted: 2,
                found: 1
            })
        ));
    }
}
