//! What an arbiter decides at a board, and the audit record of it.
//!
//! The hub detects and proposes; the arbiter decides. A decision is journaled like a board
//! event, at its place among the board's events (after the event numbered `after_seq`), so a
//! restarted hub folds it in at the same point and ends in the same state. Every decision
//! stays in the board's audit trail with who took it and when, corrections of corrections
//! included.
//!
//! ```
//! use hub::core::arbiter::{ArbiterAction, Decision};
//!
//! let action: ArbiterAction = serde_json::from_str(
//!     r#"{"arbiter": "IA Berg", "decision": "result", "result": "1-0", "cause": "flag_fall"}"#,
//! ).unwrap();
//! assert!(matches!(action.decision, Decision::Result { .. }));
//! ```

use serde::{Deserialize, Serialize};
use shakmaty::san::SanPlus;
use shakmaty::Color;

use super::ids::{BoardNo, DecisionId, RoundNo, Seq};
use super::laws::{Article, Edition, Rules};
use super::side::Side;
use super::time::HubMs;

/// A game's result, as PGN writes it; an arbiter's `*` withdraws an earlier declaration
/// (the game goes on). A game not played is a forfeit, as pairing programs and the TRF
/// write it: `+-` White wins, `-+` Black wins, `--` both lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
    #[serde(rename = "*")]
    Ongoing,
    #[serde(rename = "+-")]
    WhiteWinsByForfeit,
    #[serde(rename = "-+")]
    BlackWinsByForfeit,
    #[serde(rename = "--")]
    DoubleForfeit,
}

impl GameResult {
    /// As PGN writes it: `1-0`, `0-1`, `1/2-1/2`, `*`; a forfeit as the points it gives
    /// (`1-0`, `0-1`, and `0-0` for a double forfeit, as lichess's broadcasts write it),
    /// with `[Termination "forfeit"]` beside it.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins | GameResult::WhiteWinsByForfeit => "1-0",
            GameResult::BlackWins | GameResult::BlackWinsByForfeit => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Ongoing => "*",
            GameResult::DoubleForfeit => "0-0",
        }
    }

    /// As the pairings and the API write it: PGN's, and forfeits as `+-`, `-+`, `--`.
    pub fn code(self) -> &'static str {
        match self {
            GameResult::WhiteWinsByForfeit => "+-",
            GameResult::BlackWinsByForfeit => "-+",
            GameResult::DoubleForfeit => "--",
            played => played.pgn(),
        }
    }

    /// From [`GameResult::code`]'s text.
    pub fn from_code(code: &str) -> Option<GameResult> {
        [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::Ongoing,
            GameResult::WhiteWinsByForfeit,
            GameResult::BlackWinsByForfeit,
            GameResult::DoubleForfeit,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }

    /// A game not played: won or lost by forfeit.
    pub fn is_forfeit(self) -> bool {
        matches!(
            self,
            GameResult::WhiteWinsByForfeit
                | GameResult::BlackWinsByForfeit
                | GameResult::DoubleForfeit
        )
    }

    /// The same points given by forfeit: `1-0` → `+-`, `0-1` → `-+`; others as they are.
    pub fn by_forfeit(self) -> GameResult {
        match self {
            GameResult::WhiteWins => GameResult::WhiteWinsByForfeit,
            GameResult::BlackWins => GameResult::BlackWinsByForfeit,
            other => other,
        }
    }

    /// `winner` wins.
    pub fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// Whether the game has its result.
    pub fn is_decided(self) -> bool {
        self != GameResult::Ongoing
    }
}

impl std::fmt::Display for GameResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// Why the game ended, as the arbiter records it; each names its article by edition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// 6.9: the flag fell (the hub's ruling says loss or draw).
    FlagFall,
    Resignation,
    DrawAgreement,
    /// A correct claim (9.2).
    ThreefoldRepetition,
    /// A correct claim (9.3).
    FiftyMoves,
    /// The illegal move that loses (7.5.5).
    IllegalMove,
    /// A player arrived after the allowed lateness (6.7.1).
    LateArrival,
    /// A dead position the arbiter established (5.2.2).
    DeadPosition,
    /// A penalty declaring the game lost (12.9).
    ArbiterPenalty,
    /// A game not played (a player absent at the default time, 6.7.1, or withdrawn):
    /// scored, never rated, no meeting for the pairing program.
    Forfeit,
    /// The pairing program's file gives another result (an appeal, a correction entered
    /// there): its word stands.
    Correction,
}

impl Cause {
    /// The status name `GET /api/boards/{n}` shows for a game ended this way.
    pub fn name(self) -> &'static str {
        match self {
            Cause::FlagFall => "flag_fall",
            Cause::Resignation => "resignation",
            Cause::DrawAgreement => "draw_agreement",
            Cause::ThreefoldRepetition => "threefold_repetition",
            Cause::FiftyMoves => "fifty_moves",
            Cause::IllegalMove => "illegal_move",
            Cause::LateArrival => "late_arrival",
            Cause::DeadPosition => "dead_position",
            Cause::ArbiterPenalty => "arbiter_penalty",
            Cause::Forfeit => "forfeit",
            Cause::Correction => "correction",
        }
    }

    /// The article of `edition` under which the game ends this way; none for a result the
    /// pairing program corrected (an appeal's or the organiser's word, not the Laws').
    pub fn article(self, edition: Edition) -> Option<&'static str> {
        Some(match (self, edition.lettered(), edition) {
            (Cause::FlagFall, _, _) => "6.9",
            (Cause::Resignation, false, _) => "5.1.2",
            (Cause::Resignation, true, _) => "5.1b",
            (Cause::DrawAgreement, false, _) => "5.2.3",
            (Cause::DrawAgreement, true, _) => "5.2c",
            (Cause::ThreefoldRepetition, _, _) => "9.2",
            (Cause::FiftyMoves, _, _) => "9.3",
            (Cause::IllegalMove, false, _) => "7.5.5",
            (Cause::IllegalMove, _, Edition::Laws2009) => "7.4b",
            (Cause::IllegalMove, _, _) => "7.5b",
            (Cause::LateArrival, false, _) => "6.7.1",
            (Cause::LateArrival, true, _) => "6.7a",
            (Cause::DeadPosition, false, _) => "5.2.2",
            (Cause::DeadPosition, true, _) => "5.2b",
            (Cause::ArbiterPenalty, _, Edition::Laws2009) => "13.4",
            (Cause::ArbiterPenalty, _, _) => "12.9",
            (Cause::Forfeit, false, _) => "6.7.1",
            (Cause::Forfeit, true, _) => "6.7a",
            (Cause::Correction, _, _) => return None,
        })
    }
}

/// Why time is added to or taken from a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeReason {
    /// A clock set wrongly (6.10.2): the arbiter corrects it.
    ClockCorrection,
    /// A penalty: time to the opponent of a player who broke a rule (12.9, 7.5.5, 9.5.3).
    Penalty,
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The game goes on from the position after `ply` completed moves, the one before the
    /// irregularity (7.5.1; 7.4 knocked pieces; 7.2 a wrong set-up found later). Moves after
    /// it are withdrawn.
    Reinstate { ply: usize },
    /// The arbiter declares the result, or withdraws a declaration with `*`.
    Result {
        result: GameResult,
        cause: Option<Cause>,
    },
    /// `by`'s draw claim was wrong (9.5.3): the opponent gets the edition's time.
    ClaimRejected { by: Side },
    /// `ms` added to `side`'s clock (negative: taken off).
    AdjustTime {
        side: Side,
        ms: i64,
        reason: TimeReason,
    },
    /// The order of the moves the hub filled in from ply `from_ply` (7.4): `moves` in SAN
    /// from the position before it, the one the hub followed (a confirmation) or another
    /// that reaches the same board.
    Order {
        from_ply: usize,
        moves: Vec<SanPlus>,
    },
}

impl Decision {
    /// A forfeit written either way the same: `"result": "+-"` (its cause is the forfeit),
    /// or `"1-0"` with `"cause": "forfeit"` (the result is `+-`).
    pub fn normalized(self) -> Result<Decision, DecisionError> {
        match self {
            Decision::Result { result, cause } if result.is_forfeit() => Ok(Decision::Result {
                result,
                cause: Some(cause.unwrap_or(Cause::Forfeit)),
            }),
            Decision::Result {
                result,
                cause: Some(Cause::Forfeit),
            } => match result.by_forfeit() {
                GameResult::Draw => Err(DecisionError::DrawnForfeit),
                result => Ok(Decision::Result {
                    result,
                    cause: Some(Cause::Forfeit),
                }),
            },
            other => Ok(other),
        }
    }
}

/// What the arbiter submits (`POST /api/boards/{n}/decisions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArbiterAction {
    /// Who decides: the arbiter's name or id, kept in the audit trail.
    pub arbiter: String,
    #[serde(flatten)]
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why a declared result departs from the hub's own ruling on the board (a flag's 6.9
    /// result, a checkmate, a dead position): without it such a result is refused.
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    pub override_reason: Option<String>,
}

/// A decision as journaled: the action, and where it stands among the board's events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// Numbers every decision of the hall, from 1.
    pub id: DecisionId,
    pub board: BoardNo,
    /// When the hub took it.
    pub at: HubMs,
    /// The board's last event before it: replay applies it right after that one.
    pub after_seq: Seq,
    /// The round of the game it was taken for (absent in decisions taken before rounds were
    /// kept: the board's game then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<RoundNo>,
    #[serde(flatten)]
    pub action: ArbiterAction,
}

/// A decision in the board's audit trail: the record and what it meant under the Laws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    #[serde(flatten)]
    pub record: DecisionRecord,
    /// The article the decision applies, in the tournament's edition.
    pub article: Option<Article>,
    /// Time the clock is now expected to gain (ms, negative: lose), if any.
    pub clock_expects_ms: Option<i64>,
    pub clock_side: Option<Side>,
}

/// The longest arbiter's name a decision or an alert's handling keeps, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest note, in characters: a few sentences. Names and notes travel in every alert
/// change and in the zone's retained open list; unbounded, one could outgrow the MQTT packet
/// limit and cut the hub's own session.
pub const MAX_NOTE_CHARS: usize = 500;

/// An arbiter's name or note past its bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} has {chars} characters: at most {max}")]
pub struct TextTooLong {
    pub what: &'static str,
    pub chars: usize,
    pub max: usize,
}

/// Holds an arbiter's name and note to [`MAX_NAME_CHARS`] and [`MAX_NOTE_CHARS`].
pub fn check_signature(name: &str, note: Option<&str>) -> Result<(), TextTooLong> {
    check_text("the arbiter's name", name, MAX_NAME_CHARS)?;
    note.map_or(Ok(()), |note| check_text("the note", note, MAX_NOTE_CHARS))
}

/// `text` (`what`) within `max` characters.
pub fn check_text(what: &'static str, text: &str, max: usize) -> Result<(), TextTooLong> {
    let chars = text.chars().count();
    (chars <= max)
        .then_some(())
        .ok_or(TextTooLong { what, chars, max })
}

/// Why a decision cannot be carried out; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    /// A board the hub never heard from.
    #[error("board {0} has reported nothing")]
    UnknownBoard(BoardNo),
    /// Reinstating a position after more moves than the game has.
    #[error("the game has {moves} completed moves; cannot reinstate the position after {ply}")]
    PlyBeyondGame { ply: usize, moves: usize },
    /// Reinstating in a game whose result the arbiter declared: withdraw it first (`*`).
    #[error("the arbiter declared this game's result; withdraw it (result \"*\") first")]
    ResultDeclared,
    /// A declared result needs its cause.
    #[error("a result needs a cause")]
    CauseMissing,
    /// A declared result that departs from the hub's own ruling on the board, without the
    /// arbiter's stated reason (`"override"`).
    #[error("the hub ruled {ruling} here ({article}); a result that departs from it needs \"override\": the arbiter's reason")]
    ContradictsRuling {
        ruling: GameResult,
        article: Article,
    },
    /// A forfeit scores a win or a double loss, never a draw.
    #[error("a forfeit is \"+-\", \"-+\" or \"--\": a game not played is never drawn")]
    DrawnForfeit,
    /// A time adjustment of zero.
    #[error("a time adjustment of 0 ms changes nothing")]
    NothingToAdjust,
    /// The arbiter's name or note is too long to keep.
    #[error(transparent)]
    TooLong(#[from] TextTooLong),
    /// A game of a round that is over takes only a result (declared or withdrawn).
    #[error("round {0} is over: its games take only a result")]
    RoundOver(RoundNo),
    /// The board played no game in that round.
    #[error("board {0} played no game in round {1}")]
    NoGame(BoardNo, RoundNo),
    /// An order for moves the hub did not fill in.
    #[error("the hub filled in no moves from ply {ply}: see the board's filled_in")]
    NothingFilledIn { ply: usize },
    /// An order of another number of moves than were filled in.
    #[error("plies {from_ply} to {to_ply} were filled in: give {} moves, not {given}", to_ply - from_ply + 1)]
    OrderLength {
        from_ply: usize,
        to_ply: usize,
        given: usize,
    },
    /// A move of the order (or a later move of the game after it) is not legal there.
    #[error("{san} is not a legal move at ply {ply} in that order")]
    OrderIllegal { ply: usize, san: String },
    /// An order that does not reach the position the board showed.
    #[error("that order does not reach the position the board showed after ply {to_ply}")]
    OrderMissesBoard { from_ply: usize, to_ply: usize },
    /// An illegal move stood after the moves filled in: the game goes on from the position it
    /// left, which no order changes.
    #[error(
        "an illegal move stood after ply {ply}: reinstate the position before choosing an order"
    )]
    OrderAfterIllegalMove { ply: usize },
    /// An arbiter's own login acts only in the zones they watch; the chief's token anywhere.
    #[error("board {board} is in zone {zone}, not one of {arbiter}'s: an arbiter of that zone, or the chief arbiter, decides there")]
    OutOfZone {
        board: BoardNo,
        zone: String,
        arbiter: String,
    },
}

/// The article a time adjustment applies under `rules`.
pub fn time_article(reason: TimeReason, edition: Edition) -> &'static str {
    match (reason, edition.lettered(), edition) {
        (TimeReason::ClockCorrection, false, _) => "6.10.2",
        (TimeReason::ClockCorrection, true, _) => "6.10b",
        (TimeReason::Penalty, _, Edition::Laws2009) => "13.4",
        (TimeReason::Penalty, _, _) => "12.9",
    }
}

/// The article under which the arbiter reinstates a position (7.5.1 illegal move; 7.4
/// knocked pieces are restored the same way).
pub fn reinstate_article(edition: Edition) -> &'static str {
    match edition {
        Edition::Laws2009 => "7.4a",
        Edition::Laws2014 => "7.5a",
        Edition::Laws2018 | Edition::Laws2023 => "7.5.1",
    }
}

/// The article under which the arbiter restores the order of moves the board did not show:
/// displaced pieces, the position restored (7.4; 7.3 in 2009).
pub fn order_article(edition: Edition) -> &'static str {
    match edition {
        Edition::Laws2009 => "7.3",
        Edition::Laws2014 | Edition::Laws2018 | Edition::Laws2023 => "7.4",
    }
}

/// The time a rejected claim gives the opponent, in ms, with its article (9.5.3).
pub fn claim_penalty(rules: Rules) -> (i64, &'static str) {
    let (seconds, article) = rules.wrong_claim();
    (i64::from(seconds) * 1000, article)
}
