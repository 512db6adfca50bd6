//! Completed illegal moves (7.5): which kind, the ruling the edition prescribes, and, in
//! unsupervised rapid and blitz, the move that stands once the opponent moved (A.5.2).

use protocol::NodeMs;
use serde::{Deserialize, Serialize};
use shakmaty::{
    Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Piece, Position,
    PositionError, Role,
};

use super::signal::board_zeroes;
use super::{Game, GameEvent};
use crate::core::arbiter::GameResult;
use crate::core::laws::{Article, IllegalMoveRuling, Penalty};
use crate::core::mating::{self, MatingChances};
use crate::core::side::Side;

/// Which kind of completed illegal move (Art. 7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IllegalKind {
    /// 7.5.1: the board shows no legal successor of the position at the press.
    IllegalMove,
    /// 7.5.2: a pawn reached the last rank and the clock was pressed without a new piece;
    /// the pawn becomes a queen.
    PromotionWithoutPiece,
    /// 7.5.3: the clock was pressed without a move.
    PressWithoutMove,
}

impl IllegalKind {
    pub fn article(self) -> &'static str {
        match self {
            IllegalKind::IllegalMove => "7.5.1",
            IllegalKind::PromotionWithoutPiece => "7.5.2",
            IllegalKind::PressWithoutMove => "7.5.3",
        }
    }
}

/// A completed illegal move and what the hub proposes to the arbiter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IllegalMove {
    /// Moves completed in the game before it.
    pub ply: usize,
    pub by: Side,
    pub kind: IllegalKind,
    /// The article that makes it illegal.
    pub article: Article,
    /// This player's count of completed illegal moves, this one included.
    pub nth: u32,
    /// What the tournament's edition prescribes.
    pub ruling: IllegalMoveRuling,
    /// For a game lost: the result, a draw when the opponent cannot checkmate (7.5.5).
    pub result_if_applied: Option<GameResult>,
    /// The position to reinstate (7.5.1): the one before the irregularity.
    pub reinstate_fen: String,
    /// What the board showed at the press.
    pub board_fen: String,
    /// The node's time of the press.
    pub at: u64,
    /// The move stood: nobody acted before the opponent's next move (2023 A.5.2, 2018
    /// A.4.2) and the game went on from the position it left (`board_fen`). It is not in
    /// the list of moves, which stays a legal sequence from the last start.
    pub stood: bool,
}

/// An illegal move the arbiter may only act on before the opponent's next move.
#[derive(Debug, Clone)]
pub(super) struct Lapsing {
    pub(super) by: Color,
    /// What the board showed at the illegal press.
    pub(super) board: Board,
    /// Its record in `illegal_moves`.
    pub(super) index: usize,
}

impl Game {
    /// The opponent completed his next move after an illegal move that only an action
    /// before it could undo (2023 A.5.2, 2018 A.4.2): the illegal move stands and the game
    /// goes on from the position it left, if that position can stand at all (A.5.4 covers
    /// those that cannot: the hub leaves them to the arbiter).
    pub(super) fn let_stand(&mut self) -> Option<GameEvent> {
        let lapsing = self.lapsing.take()?;
        let before = &self.position;
        let mut setup = before.to_setup(EnPassantMode::Legal);
        let zeroing = board_zeroes(before.board(), &lapsing.board);
        setup.board = lapsing.board;
        setup.turn = lapsing.by.other();
        setup.ep_square = None;
        setup.halfmoves = if zeroing { 0 } else { before.halfmoves() + 1 };
        if lapsing.by == Color::Black {
            setup.fullmoves = setup.fullmoves.saturating_add(1);
        }
        let mode = if self.rules.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let stood = Chess::from_setup(setup, mode)
            .or_else(PositionError::ignore_invalid_castling_rights)
            .ok()?;
        let ply = self.moves.len();
        self.illegal_moves[lapsing.index].stood = true;
        self.repetitions.record(&stood);
        *self.history.last_mut().expect("history holds the start") = stood.clone();
        self.starts.push((ply, stood.clone()));
        self.position = stood;
        self.pending_ending = None;
        Some(GameEvent::IllegalMoveStood { ply })
    }

    /// Records a completed illegal move by the side to move; the position stays the one
    /// before it (7.5.1), which is the position to reinstate.
    pub(super) fn illegal(&mut self, at: NodeMs, kind: IllegalKind, board: &Board) -> GameEvent {
        let by = self.position.turn();
        let nth = self
            .illegal_moves
            .iter()
            .filter(|i| i.by == Side::from(by))
            .count() as u32
            + 1;
        let ruling = self.rules.illegal_move(nth);
        let result_if_applied = (ruling.penalty == Penalty::GameLost).then(|| {
            match mating::mating_chances(&self.position, by.other()) {
                MatingChances::CannotMate => GameResult::Draw,
                MatingChances::CanMate | MatingChances::Undetermined => {
                    GameResult::win_for(by.other())
                }
            }
        });
        let record = IllegalMove {
            ply: self.moves.len(),
            by: by.into(),
            kind,
            article: kind.article().into(),
            nth,
            ruling,
            result_if_applied,
            reinstate_fen: self.fen(),
            board_fen: board.to_string(),
            at: at.0,
            stood: false,
        };
        self.lapsing =
            (ruling.until_opponents_next_move && kind == IllegalKind::IllegalMove).then(|| {
                Lapsing {
                    by,
                    board: board.clone(),
                    index: self.illegal_moves.len(),
                }
            });
        self.illegal_moves.push(record.clone());
        GameEvent::IllegalMove(Box::new(record))
    }

    /// The queen promotion whose board equals `board` except that the pawn still stands on
    /// the last rank (7.5.2).
    pub(super) fn promotion_without_piece(&self, board: &Board) -> Option<Move> {
        self.position.legal_moves().into_iter().find(|m| {
            if m.promotion() != Some(Role::Queen) {
                return false;
            }
            let mut after = self.position.clone();
            after.play_unchecked(*m);
            let mut expected = after.board().clone();
            expected.set_piece_at(
                m.to(),
                Piece {
                    color: self.position.turn(),
                    role: Role::Pawn,
                },
            );
            expected == *board
        })
    }
}
