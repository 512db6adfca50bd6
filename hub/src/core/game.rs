//! One game, reconstructed from what the board and the clock report.
//!
//! ```text
//!             placement (any)                    press by the side to move
//!   Playing ───────────────────► Playing ─────────────────────────────────────┐
//!      ▲      (only remembered)                                               │
//!      │                            placement = the one legal successor       │
//!      │◄── move completed (6.2.1) ◄── at the press ─────────────────────────┘
//!      │
//!      └──► game over: a placement equal to a successor that ends the game
//!           (mate, stalemate, dead position, fivefold, 75 moves: see `ending`)
//!           completes the move at once, without a press (6.2.1)
//! ```
//!
//! The board is the source of truth: a move is the legal successor whose pieces equal the
//! board's at the moment the player presses the clock (Art. 6.2.1). Placements in between
//! (a lifted piece, a captured piece taken off first, a castling half done) are only
//! remembered. The clock's press is the moment; which move was made is read off the board.

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{
    Bitboard, Board, ByColor, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Piece,
    Position, PositionError, Role, Square,
};

use protocol::{ClockReport, NodeMs, Placement};

use super::arbiter::{Cause, DecisionError, GameResult};
use super::chess960;
use super::claim::{self, ClaimCheck, ClaimRequest};
use super::ending::{self, Claim, Occurrences, Status};
use super::laws::{IllegalMoveRuling, Penalty, Rules};
use super::mating::{self, MatingChances};
use super::repetition::Repetitions;
use super::sensed;

/// DGT's result signal: both kings on the centre squares, everything else as in the game,
/// except that pieces on the centre squares may have been taken off to make room (the real
/// recording `johan` clears a pawn from d4 first). Both kings on light squares (d5, e4) =
/// 1-0, both on dark squares (d4, e5) = 0-1, one of each = draw.
fn result_signal(game: &Board, sensed: &Board) -> Option<&'static str> {
    let centre = Bitboard::from(Square::D4) | Square::D5 | Square::E4 | Square::E5;
    let kings = sensed.kings();
    let white = sensed.king_of(Color::White)?;
    let black = sensed.king_of(Color::Black)?;
    if kings.count() != 2 || !centre.contains(white) || !centre.contains(black) {
        return None;
    }
    if game.king_of(Color::White) == Some(white) && game.king_of(Color::Black) == Some(black) {
        return None; // the kings stand there in the game itself
    }
    // Apart from the kings and the centre, nothing moved.
    let untouched = !(game.kings() | centre);
    let same = Square::ALL
        .into_iter()
        .filter(|sq| untouched.contains(*sq))
        .all(|sq| game.piece_at(sq) == sensed.piece_at(sq));
    if !same {
        return None;
    }
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => "1-0",
        (false, false) => "0-1",
        _ => "1/2-1/2",
    })
}

/// Whether going from `before` to `after` took a pawn move or a capture (9.3): fewer pieces,
/// or pawns elsewhere.
fn board_zeroes(before: &Board, after: &Board) -> bool {
    after.occupied().count() < before.occupied().count() || after.pawns() != before.pawns()
}

/// A completed move.
#[derive(Debug, Clone)]
pub struct CompletedMove {
    pub m: Move,
    pub san: SanPlus,
    pub by: Color,
    /// The node's time of the press (or of the placement, for a move that ended the game).
    pub at: NodeMs,
}

/// Which kind of completed illegal move (Art. 7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IllegalMove {
    /// Moves completed in the game before it.
    pub ply: usize,
    #[serde(serialize_with = "super::serialize_color")]
    pub by: Color,
    pub kind: IllegalKind,
    /// The article that makes it illegal.
    pub article: &'static str,
    /// This player's count of completed illegal moves, this one included.
    pub nth: u32,
    /// What the tournament's edition prescribes.
    pub ruling: IllegalMoveRuling,
    /// For a game lost: the result, a draw when the opponent cannot checkmate (7.5.5).
    pub result_if_applied: Option<&'static str>,
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
struct Lapsing {
    by: Color,
    /// What the board showed at the illegal press.
    board: Board,
    /// Its record in `illegal_moves`.
    index: usize,
}

/// Something the game noticed that others may act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameEvent {
    MoveCompleted {
        ply: usize,
        san: String,
    },
    GameOver {
        status: Status,
    },
    IllegalMove(Box<IllegalMove>),
    /// The players put both kings on the centre squares: DGT's result signal (never a move).
    ResultSignal {
        result: &'static str,
    },
    /// For [`OUT_OF_SYNC_MS`] the board has shown neither the game's position nor a legal
    /// successor of it (knocked pieces 7.4, a sensor fault, a move half made and left).
    OutOfSync {
        since: u64,
    },
    /// The board shows the game's position (or a legal successor) again.
    BackInSync,
    /// The arbiter reinstated the position after `ply` completed moves.
    Reinstated {
        ply: usize,
    },
    /// The illegal move after `ply` completed moves stood (A.5.2): the game goes on from the
    /// position it left.
    IllegalMoveStood {
        ply: usize,
    },
}

/// How long a board may show something else than the position or a legal successor (a
/// lifted piece, a capture half made) before it counts as out of sync.
pub const OUT_OF_SYNC_MS: u64 = 10_000;

/// Whether the board shows the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardSync {
    /// The board shows the position, or a legal successor waiting for the press.
    InSync,
    /// It has shown something else for less than [`OUT_OF_SYNC_MS`]: a hand at work.
    Unsettled,
    /// It has shown something else for longer.
    OutOfSync,
}

#[derive(Debug, Clone)]
pub struct Game {
    /// Where each stretch of legal moves starts: the game's start at ply 0, then the
    /// position an illegal move left where it stood (A.5.2).
    starts: Vec<(usize, Chess)>,
    position: Chess,
    moves: Vec<CompletedMove>,
    /// The last placement the board reported.
    sensed: Option<Board>,
    /// Where the game stands under the rules (an arbiter's declaration aside).
    status: Status,
    repetitions: Repetitions,
    /// Every position of the game, the start first: for repetitions by consecutive
    /// alternate moves (2014 9.6a).
    history: Vec<Chess>,
    rules: Rules,
    illegal_moves: Vec<IllegalMove>,
    /// The result the players signalled with the kings, if they did.
    result_signal: Option<&'static str>,
    /// Since when (node time) the board has not shown the game, if it has not.
    unsettled_since: Option<NodeMs>,
    /// Whether [`GameEvent::OutOfSync`] was raised for the current unsettled stretch.
    out_of_sync_raised: bool,
    /// The ending a successor set down on the board would give, worked out at the placement
    /// and reused at the press (the position cannot change in between).
    pending_ending: Option<(Move, Option<Status>)>,
    /// The result the arbiter declared and its cause; it takes the place of `status` (which
    /// stays what the rules say, and returns if the declaration is withdrawn).
    declared: Option<(GameResult, Cause)>,
    /// A board without a clock: a legal successor that stays on the board this long (node
    /// time) completes its move. `None`: only a press completes a move (6.2.1).
    debounce_ms: Option<u64>,
    /// The legal successor the board shows, and since when (boards without a clock).
    shown_successor: Option<(Move, NodeMs)>,
    /// An illegal move that stands unless someone acts before the opponent's next move.
    lapsing: Option<Lapsing>,
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Chess::default(), Rules::default())
    }
}

impl Game {
    pub fn new(start: Chess, rules: Rules) -> Game {
        let mut repetitions = Repetitions::default();
        repetitions.record(&start);
        Game {
            starts: vec![(0, start.clone())],
            position: start.clone(),
            moves: Vec::new(),
            sensed: None,
            status: Status::Playing,
            repetitions,
            history: vec![start.clone()],
            rules,
            illegal_moves: Vec::new(),
            result_signal: None,
            unsettled_since: None,
            out_of_sync_raised: false,
            pending_ending: None,
            declared: None,
            debounce_ms: None,
            shown_successor: None,
            lapsing: None,
        }
    }

    /// The board has no clock: a move is completed when its position has stood on the board
    /// for `debounce_ms` (`None`: presses complete moves, as 6.2.1 says). A slid piece that
    /// pauses on a square, or a piece set down and picked up again, stands for less.
    pub fn infer_moves_after(&mut self, debounce_ms: Option<u64>) {
        self.debounce_ms = debounce_ms;
        self.shown_successor = None;
    }

    /// Where the stretch of legal moves holding move `ply` starts: the game's start (0), or
    /// the position an illegal move left where it stood (A.5.2), with the moves before it.
    pub fn start_of(&self, ply: usize) -> (usize, &Chess) {
        let (from, start) = self
            .starts
            .iter()
            .rev()
            .find(|(from, _)| *from <= ply)
            .unwrap_or(&self.starts[0]);
        (*from, start)
    }

    /// The last placement the board reported.
    pub fn sensed(&self) -> Option<&Board> {
        self.sensed.as_ref()
    }

    pub fn position(&self) -> &Chess {
        &self.position
    }

    pub fn moves(&self) -> &[CompletedMove] {
        &self.moves
    }

    /// How many of the completed moves each side made.
    pub fn moves_by_side(&self) -> ByColor<u32> {
        let mut moves = ByColor::default();
        for m in &self.moves {
            moves[m.by] += 1;
        }
        moves
    }

    /// Where the game stands: the arbiter's declared result, else what the rules say.
    pub fn status(&self) -> Status {
        match self.declared {
            Some((_, cause)) => Status::Declared(cause),
            None => self.status,
        }
    }

    fn playing(&self) -> bool {
        self.status() == Status::Playing
    }

    pub fn result(&self) -> &'static str {
        match self.declared {
            Some((result, _)) => result.pgn(),
            None => self.status.result(self.position.turn()),
        }
    }

    /// The draw claims the player to move could make correctly now (9.2, 9.3). The hub
    /// never offers them to a player (12.6); the arbiter checks a claim against them.
    pub fn claimable(&self) -> Vec<Claim> {
        if !self.playing() {
            return Vec::new();
        }
        ending::claimable(&self.position, &self.repetitions)
    }

    /// How many times `next`, the position after the last one in `history`, stands in an
    /// unbroken run of alternate moves: itself, then every fourth half-move back.
    fn consecutive(&self, next: &Chess) -> u8 {
        let behind = self.history.iter().rev().skip(3).step_by(4);
        1 + behind.take_while(|p| *p == next).count().min(254) as u8
    }

    /// The article that ended the game under the tournament's edition.
    pub fn article(&self) -> Option<&'static str> {
        self.status().article(self.rules.edition)
    }

    /// Checks a draw claim for the arbiter (9.2, 9.3).
    pub fn check_claim(&self, request: &ClaimRequest) -> ClaimCheck {
        let (from, start) = self.starts.last().expect("a game has a start");
        let moves: Vec<Move> = self.moves[*from..].iter().map(|c| c.m).collect();
        claim::check(
            start,
            &moves,
            &self.position,
            request,
            self.rules.wrong_claim(),
        )
    }

    /// The arbiter reinstates the position after `ply` completed moves (7.5.1, 7.4): the
    /// moves after it are withdrawn and the game goes on from there.
    pub fn reinstate(&mut self, at: NodeMs, ply: usize) -> Result<Vec<GameEvent>, DecisionError> {
        if self.declared.is_some() {
            return Err(DecisionError::ResultDeclared);
        }
        if ply > self.moves.len() {
            return Err(DecisionError::PlyBeyondGame {
                ply,
                moves: self.moves.len(),
            });
        }
        self.moves.truncate(ply);
        self.history.truncate(ply + 1);
        self.starts.retain(|(from, _)| *from <= ply);
        self.lapsing = None;
        self.position = self.history[ply].clone();
        self.repetitions = Repetitions::default();
        for position in &self.history {
            self.repetitions.record(position);
        }
        self.status = Status::Playing;
        self.pending_ending = None;
        let mut events = vec![GameEvent::Reinstated { ply }];
        let shows_game = self.sensed.as_ref().is_none_or(|board| {
            board == self.position.board() || self.successor_with(board).is_some()
        });
        events.extend(self.resync(at, shows_game));
        Ok(events)
    }

    /// The arbiter declares the result (`*` withdraws a declaration: the rules' status
    /// returns).
    pub fn declare(
        &mut self,
        result: GameResult,
        cause: Option<Cause>,
    ) -> Result<Vec<GameEvent>, DecisionError> {
        if result == GameResult::Ongoing {
            self.declared = None;
            return Ok(Vec::new());
        }
        let cause = cause.ok_or(DecisionError::CauseMissing)?;
        self.declared = Some((result, cause));
        Ok(vec![GameEvent::GameOver {
            status: self.status(),
        }])
    }

    /// The result the players signalled by setting both kings on the centre squares.
    pub fn result_signal(&self) -> Option<&'static str> {
        self.result_signal
    }

    /// Every completed illegal move, in order.
    pub fn illegal_moves(&self) -> &[IllegalMove] {
        &self.illegal_moves
    }

    /// The FEN after `ply` completed moves (0: the start); `None` past the last move.
    pub fn fen_after(&self, ply: usize) -> Option<String> {
        let position = self.history.get(ply)?;
        Some(Fen::from_position(position, EnPassantMode::Legal).to_string())
    }

    pub fn fen(&self) -> String {
        Fen::from_position(&self.position, EnPassantMode::Legal).to_string()
    }

    /// The board reports its pieces. Only a placement that ends the game completes a move
    /// by itself (6.2.1); anything else waits for the press.
    pub fn placement(&mut self, at: NodeMs, placement: &Placement) -> Vec<GameEvent> {
        let board = sensed::board(placement);
        // What stood until now may have stood long enough (a board without a clock).
        let mut events = self.settle(at);
        self.shown_successor = None;
        if self.rules.chess960 && self.moves.is_empty() && board != *self.position.board() {
            if let Some(start) = chess960::start_position(&board) {
                // Guidelines II: the drawn back rank, set up before the first move.
                self.restart_from(start);
                self.sensed = Some(board);
                return events;
            }
        }
        if let Some(result) = result_signal(self.position.board(), &board) {
            if self.result_signal != Some(result) {
                self.result_signal = Some(result);
                events.push(GameEvent::ResultSignal { result });
            }
            self.sensed = Some(board);
            return events;
        }
        let successor = if self.playing() {
            self.successor_with(&board)
        } else {
            None
        };
        if let Some(m) = successor {
            // 6.2.1: a move that ends the game is completed when the piece is set down.
            if self.ending_after(m).is_some() {
                events.extend(self.complete(at, m));
            } else if self.debounce_ms.is_some() {
                self.shown_successor = Some((m, at));
            }
        }
        let shows_game = successor.is_some() || !self.playing() || board == *self.position.board();
        self.sensed = Some(board);
        events.extend(self.resync(at, shows_game));
        events
    }

    /// Starts the game afresh from `start` (a Chess960 set-up before the first move).
    fn restart_from(&mut self, start: Chess) {
        self.repetitions = Repetitions::default();
        self.repetitions.record(&start);
        self.history = vec![start.clone()];
        self.starts = vec![(0, start.clone())];
        self.position = start;
        self.pending_ending = None;
    }

    /// How the game would end after `m`; `None` if play would go on.
    fn ending_after(&mut self, m: Move) -> Option<Status> {
        if let Some((pending, ending)) = self.pending_ending {
            if pending == m {
                return ending;
            }
        }
        let mut after = self.position.clone();
        after.play_unchecked(m);
        let occurrences = Occurrences {
            total: self.repetitions.count(&after).saturating_add(1),
            consecutive: self.consecutive(&after),
        };
        let ending = ending::ending(&after, occurrences, self.rules.edition);
        self.pending_ending = Some((m, ending));
        ending
    }

    /// Time passes on the board (any event, a heartbeat included): on a board without a
    /// clock the successor that stood long enough is completed; raises
    /// [`GameEvent::OutOfSync`] once the board has not shown the game for too long.
    pub fn observe(&mut self, at: NodeMs) -> Vec<GameEvent> {
        let mut events = self.settle(at);
        events.extend(self.check_out_of_sync(at));
        events
    }

    /// Boards without a clock: completes the successor the board has shown for the debounce
    /// interval by `at`. The move counts from the moment the interval ended, so the outcome
    /// does not depend on when the next event arrives.
    fn settle(&mut self, at: NodeMs) -> Vec<GameEvent> {
        let (Some(debounce), Some((m, since))) = (self.debounce_ms, self.shown_successor) else {
            return Vec::new();
        };
        if at.0 < since.0 + debounce || !self.playing() {
            return Vec::new();
        }
        self.shown_successor = None;
        let mut events = self.complete(NodeMs(since.0 + debounce), m);
        events.extend(self.resync(at, true));
        events
    }

    /// Once the game is over the board is no longer the game's (the kings' result signal,
    /// pieces put back for the next round): only a game in play can be out of sync.
    fn check_out_of_sync(&mut self, at: NodeMs) -> Vec<GameEvent> {
        match self.unsettled_since {
            Some(since)
                if self.playing()
                    && !self.out_of_sync_raised
                    && at.0.saturating_sub(since.0) >= OUT_OF_SYNC_MS =>
            {
                self.out_of_sync_raised = true;
                vec![GameEvent::OutOfSync { since: since.0 }]
            }
            _ => Vec::new(),
        }
    }

    /// Whether the board shows the game at node time `now`.
    pub fn sync(&self, now: NodeMs) -> BoardSync {
        match self.unsettled_since {
            None => BoardSync::InSync,
            Some(since) if now.0.saturating_sub(since.0) >= OUT_OF_SYNC_MS => BoardSync::OutOfSync,
            Some(_) => BoardSync::Unsettled,
        }
    }

    /// Notes whether the board now shows the game (its position, a legal successor, or a
    /// game that is over), then checks the time.
    fn resync(&mut self, at: NodeMs, shows_game: bool) -> Vec<GameEvent> {
        if shows_game {
            self.unsettled_since = None;
            if std::mem::take(&mut self.out_of_sync_raised) {
                return vec![GameEvent::BackInSync];
            }
            return Vec::new();
        }
        self.unsettled_since.get_or_insert(at);
        self.check_out_of_sync(at)
    }

    /// The clock reports. A press by the side to move completes the move on the board.
    pub fn clock(&mut self, at: NodeMs, report: &ClockReport) -> Vec<GameEvent> {
        let Some(by) = report.pressed_by.map(sensed::color) else {
            return Vec::new();
        };
        let mut events = Vec::new();
        if self.lapsing.as_ref().is_some_and(|l| l.by == by.other()) {
            events.extend(self.let_stand());
        }
        if !self.playing() || by != self.position.turn() {
            return events;
        }
        events.extend(self.press(at));
        events
    }

    /// The press of the side to move: the board decides which move it completed.
    fn press(&mut self, at: NodeMs) -> Vec<GameEvent> {
        let Some(board) = self.sensed.clone() else {
            return Vec::new();
        };
        if let Some(m) = self.successor_with(&board) {
            let mut events = self.complete(at, m);
            events.extend(self.resync(at, true));
            return events;
        }
        if board == *self.position.board() {
            return vec![self.illegal(at, IllegalKind::PressWithoutMove, &board)];
        }
        if let Some(m) = self.promotion_without_piece(&board) {
            // 7.5.2: illegal, and the pawn becomes a queen: the move stands as =Q.
            let mut events = vec![self.illegal(at, IllegalKind::PromotionWithoutPiece, &board)];
            events.extend(self.complete(at, m));
            return events;
        }
        vec![self.illegal(at, IllegalKind::IllegalMove, &board)]
    }

    /// The opponent completed his next move after an illegal move that only an action
    /// before it could undo (2023 A.5.2, 2018 A.4.2): the illegal move stands and the game
    /// goes on from the position it left, if that position can stand at all (A.5.4 covers
    /// those that cannot: the hub leaves them to the arbiter).
    fn let_stand(&mut self) -> Option<GameEvent> {
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
    fn illegal(&mut self, at: NodeMs, kind: IllegalKind, board: &Board) -> GameEvent {
        let by = self.position.turn();
        let nth = self.illegal_moves.iter().filter(|i| i.by == by).count() as u32 + 1;
        let ruling = self.rules.illegal_move(nth);
        let result_if_applied = (ruling.penalty == Penalty::GameLost).then(|| {
            match mating::mating_chances(&self.position, by.other()) {
                MatingChances::CannotMate => "1/2-1/2",
                MatingChances::CanMate | MatingChances::Undetermined => match by {
                    Color::White => "0-1",
                    Color::Black => "1-0",
                },
            }
        });
        let record = IllegalMove {
            ply: self.moves.len(),
            by,
            kind,
            article: kind.article(),
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
    fn promotion_without_piece(&self, board: &Board) -> Option<Move> {
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

    /// The legal move after which the pieces stand exactly as on `board`.
    fn successor_with(&self, board: &Board) -> Option<Move> {
        // Cheap filter first: no move (castling included) changes the occupancy of more than
        // four squares, and an unchanged board is no move. (Occupancy alone can stay the
        // same: in Chess960 king and rook may swap squares when castling.)
        let changed = (self.position.board().occupied() ^ board.occupied()).count();
        if changed > 4 || board == self.position.board() {
            return None;
        }
        self.position.legal_moves().into_iter().find(|m| {
            let mut after = self.position.clone();
            after.play_unchecked(*m);
            after.board() == board
        })
    }

    fn complete(&mut self, at: NodeMs, m: Move) -> Vec<GameEvent> {
        let ending = self.ending_after(m);
        self.pending_ending = None; // the position changes now
        self.shown_successor = None;
        self.lapsing = None;
        let by = self.position.turn();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, m);
        let mut events = vec![GameEvent::MoveCompleted {
            ply: self.moves.len() + 1,
            san: san.to_string(),
        }];
        self.moves.push(CompletedMove { m, san, by, at });
        self.repetitions.record(&self.position);
        self.history.push(self.position.clone());
        self.status = ending.unwrap_or(Status::Playing);
        if self.status != Status::Playing {
            events.push(GameEvent::GameOver {
                status: self.status,
            });
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use board_node::sensors::placement as placement_of;
    use protocol::Color as Side;

    fn press(by: Side) -> ClockReport {
        ClockReport {
            white_ms: 1,
            black_ms: 1,
            running: Some(by.other()),
            white_flag: false,
            black_flag: false,
            pressed_by: Some(by),
        }
    }

    fn board_after(game: &Game, uci: &str) -> Board {
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(game.position())
            .unwrap();
        let mut after = game.position().clone();
        after.play_unchecked(m);
        after.board().clone()
    }

    #[test]
    fn a_press_completes_the_move_on_the_board() {
        let mut game = Game::default();
        let mut lifted = game.position().board().clone();
        lifted.discard_piece_at(shakmaty::Square::E2);
        assert!(game.placement(NodeMs(1), &placement_of(&lifted)).is_empty());
        let after = board_after(&game, "e2e4");
        assert!(game.placement(NodeMs(2), &placement_of(&after)).is_empty());
        assert_eq!(game.moves().len(), 0, "no move before the press (6.2.1)");
        let events = game.clock(NodeMs(3), &press(Side::White));
        assert_eq!(
            events,
            vec![GameEvent::MoveCompleted {
                ply: 1,
                san: "e4".into()
            }]
        );
        assert_eq!(game.position().turn(), Color::Black);
    }

    #[test]
    fn a_press_by_the_side_not_to_move_is_not_a_move() {
        let mut game = Game::default();
        let after = board_after(&game, "e2e4");
        game.placement(NodeMs(1), &placement_of(&after));
        assert!(game.clock(NodeMs(2), &press(Side::Black)).is_empty());
        assert!(game.moves().is_empty());
    }

    #[test]
    fn a_press_with_an_impossible_board_is_reported_not_applied() {
        let mut game = Game::default();
        let mut board = game.position().board().clone();
        board.discard_piece_at(shakmaty::Square::D1);
        game.placement(NodeMs(1), &placement_of(&board));
        let events = game.clock(NodeMs(2), &press(Side::White));
        assert!(matches!(events[..], [GameEvent::IllegalMove(_)]));
        assert_eq!(game.illegal_moves().len(), 1);
        assert!(game.moves().is_empty());
    }

    #[test]
    fn checkmate_ends_the_game_without_a_press() {
        // Art. 6.2.1 / 5.1.1: the mating move is completed when the piece is set down.
        let mut game = Game::default();
        for (uci, side) in [
            ("f2f3", Side::White),
            ("e7e5", Side::Black),
            ("g2g4", Side::White),
        ] {
            let after = board_after(&game, uci);
            game.placement(NodeMs(1), &placement_of(&after));
            game.clock(NodeMs(2), &press(side));
        }
        let mate = board_after(&game, "d8h4");
        let events = game.placement(NodeMs(3), &placement_of(&mate));
        assert_eq!(
            events.last(),
            Some(&GameEvent::GameOver {
                status: Status::Checkmate
            })
        );
        assert_eq!(game.result(), "0-1");
        assert!(
            game.clock(NodeMs(4), &press(Side::Black)).is_empty(),
            "the press after mate is no move"
        );
    }

    fn game_from(fen: &str, rules: Rules) -> Game {
        Game::new(crate::core::position(fen), rules)
    }

    fn only_illegal(events: &[GameEvent]) -> &IllegalMove {
        match events {
            [GameEvent::IllegalMove(illegal), ..] => illegal,
            other => panic!("expected an illegal move, got {other:?}"),
        }
    }

    #[test]
    fn an_impossible_move_pressed_is_an_illegal_move_and_the_position_is_reinstated() {
        // Art. 7.5.1: completed at the press; the position before it is reinstated;
        // 7.5.5: two minutes to the opponent for the first.
        let mut game = Game::default();
        let start_fen = game.fen();
        let mut board = game.position().board().clone();
        let pawn = board.remove_piece_at(shakmaty::Square::E2).unwrap();
        board.set_piece_at(shakmaty::Square::E5, pawn);
        game.placement(NodeMs(1), &placement_of(&board));
        let events = game.clock(NodeMs(2), &press(Side::White));
        let illegal = only_illegal(&events);
        assert_eq!(
            (illegal.kind, illegal.article, illegal.by, illegal.nth),
            (IllegalKind::IllegalMove, "7.5.1", Color::White, 1)
        );
        assert_eq!(
            illegal.ruling.penalty,
            Penalty::TimeToOpponent { seconds: 120 }
        );
        assert_eq!(illegal.ruling.article, "7.5.5");
        assert_eq!(illegal.reinstate_fen, start_fen);
        assert_eq!(
            game.fen(),
            start_fen,
            "the hub keeps the position before the irregularity"
        );
        // The players restore the position; White plays a legal move and presses again.
        let after = board_after(&game, "e2e4");
        game.placement(NodeMs(3), &placement_of(&after));
        assert!(matches!(
            game.clock(NodeMs(4), &press(Side::White))[..],
            [GameEvent::MoveCompleted { .. }]
        ));
    }

    #[test]
    fn a_press_without_a_move_is_penalised_as_an_illegal_move() {
        // Art. 7.5.3.
        let mut game = Game::default();
        game.placement(NodeMs(1), &placement_of(game.position().board()));
        let events = game.clock(NodeMs(2), &press(Side::White));
        assert_eq!(only_illegal(&events).kind, IllegalKind::PressWithoutMove);
        assert_eq!(only_illegal(&events).article, "7.5.3");
        assert!(game.moves().is_empty());
    }

    #[test]
    fn a_pawn_left_on_the_last_rank_is_illegal_and_becomes_a_queen() {
        // Art. 7.5.2.
        let mut game = game_from("8/4P3/8/8/8/8/k7/4K3 w - - 0 60", Rules::default());
        let mut board = game.position().board().clone();
        let pawn = board.remove_piece_at(shakmaty::Square::E7).unwrap();
        board.set_piece_at(shakmaty::Square::E8, pawn);
        game.placement(NodeMs(1), &placement_of(&board));
        let events = game.clock(NodeMs(2), &press(Side::White));
        assert_eq!(
            only_illegal(&events).kind,
            IllegalKind::PromotionWithoutPiece
        );
        assert_eq!(game.moves().last().unwrap().san.to_string(), "e8=Q");
        assert_eq!(
            game.position()
                .board()
                .piece_at(shakmaty::Square::E8)
                .map(|p| p.role),
            Some(Role::Queen)
        );
    }

    /// White presses with the e-pawn on e5 (impossible from the start position).
    fn white_illegal_press(game: &mut Game) -> Vec<GameEvent> {
        let mut board = game.position().board().clone();
        let pawn = board.remove_piece_at(shakmaty::Square::E2).unwrap();
        board.set_piece_at(shakmaty::Square::E5, pawn);
        game.placement(NodeMs(1), &placement_of(&board));
        game.clock(NodeMs(2), &press(Side::White))
    }

    #[test]
    fn the_second_illegal_move_loses_when_the_opponent_can_mate() {
        // Art. 7.5.5.
        let mut game = Game::default();
        let _ = white_illegal_press(&mut game);
        let events = white_illegal_press(&mut game);
        let second = only_illegal(&events);
        assert_eq!((second.nth, second.ruling.penalty), (2, Penalty::GameLost));
        assert_eq!(second.result_if_applied, Some("0-1"));
        assert_eq!(
            game.status(),
            Status::Playing,
            "the arbiter decides, the hub proposes"
        );
    }

    #[test]
    fn the_second_illegal_move_draws_when_the_opponent_cannot_mate() {
        // Art. 7.5.5: "the game is drawn if the position is such that the opponent cannot
        // checkmate the player's king by any possible series of legal moves".
        let mut game = game_from("8/8/4k3/8/8/3K4/7Q/8 w - - 0 60", Rules::default());
        for _ in 0..2 {
            game.placement(NodeMs(1), &placement_of(game.position().board()));
            let _ = game.clock(NodeMs(2), &press(Side::White));
        }
        let second = &game.illegal_moves()[1];
        assert_eq!(second.ruling.penalty, Penalty::GameLost);
        assert_eq!(second.result_if_applied, Some("1/2-1/2"));
    }

    #[test]
    fn rapid_without_full_supervision_rules_only_before_the_opponents_next_move() {
        // 2023 A.5.2, and 2014 A.4b where the first illegal move already loses.
        use crate::core::laws::{Edition, GameType, Supervision};
        for (edition, penalty, article) in [
            (
                Edition::Laws2023,
                Penalty::TimeToOpponent { seconds: 60 },
                "A.5.2",
            ),
            (Edition::Laws2014, Penalty::GameLost, "A.4b"),
        ] {
            let rules = Rules {
                edition,
                game_type: GameType::Rapid,
                supervision: Supervision::Partial,
                ..Rules::default()
            };
            let mut game = Game::new(Chess::default(), rules);
            let events = white_illegal_press(&mut game);
            let ruling = only_illegal(&events).ruling;
            assert_eq!(
                (
                    ruling.penalty,
                    ruling.article,
                    ruling.until_opponents_next_move
                ),
                (penalty, article, true)
            );
        }
    }

    #[test]
    fn kings_on_the_centre_squares_are_a_result_signal_never_a_move() {
        // Light d5/e4 = 1-0, dark d4/e5 = 0-1, one of each = draw.
        for (white, black, result) in [
            (shakmaty::Square::E4, shakmaty::Square::D5, "1-0"),
            (shakmaty::Square::D4, shakmaty::Square::E5, "0-1"),
            (shakmaty::Square::E4, shakmaty::Square::E5, "1/2-1/2"),
        ] {
            let mut game = game_from("6k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 40", Rules::default());
            let mut board = game.position().board().clone();
            let wk = board.remove_piece_at(shakmaty::Square::G1).unwrap();
            let bk = board.remove_piece_at(shakmaty::Square::G8).unwrap();
            board.set_piece_at(white, wk);
            board.set_piece_at(black, bk);
            let events = game.placement(NodeMs(1), &placement_of(&board));
            assert_eq!(events, [GameEvent::ResultSignal { result }]);
            assert_eq!(game.result_signal(), Some(result));
            assert!(game.moves().is_empty());
            assert_eq!(
                game.status(),
                Status::Playing,
                "the arbiter confirms the result"
            );
        }
    }

    #[test]
    fn an_illegal_move_stands_after_the_opponents_next_move_a_5_2() {
        // 2023 rapid without full supervision: Black's Ke8-e6 is illegal; nobody acts and
        // White answers 2.d4 and presses. The illegal move stands (A.5.2) and the game goes
        // on from the position it left. With full supervision (or in standard chess,
        // 7.5.1) it never stands: the hub waits for the arbiter.
        use crate::core::laws::{GameType, Supervision};
        for (supervision, stands) in [(Supervision::Partial, true), (Supervision::Full, false)] {
            let rules = Rules {
                game_type: GameType::Rapid,
                supervision,
                ..Rules::default()
            };
            let mut game = game_from(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                rules,
            );
            let mut board = game.position().board().clone();
            let king = board.remove_piece_at(shakmaty::Square::E8).unwrap();
            board.set_piece_at(shakmaty::Square::E6, king);
            game.placement(NodeMs(1), &placement_of(&board));
            let illegal = only_illegal(&game.clock(NodeMs(2), &press(Side::Black))).clone();
            assert_eq!(illegal.ruling.until_opponents_next_move, stands);
            let pawn = board.remove_piece_at(shakmaty::Square::D2).unwrap();
            board.set_piece_at(shakmaty::Square::D4, pawn);
            game.placement(NodeMs(3), &placement_of(&board));
            let events = game.clock(NodeMs(4), &press(Side::White));
            if stands {
                assert_eq!(
                    events,
                    [
                        GameEvent::IllegalMoveStood { ply: 0 },
                        GameEvent::MoveCompleted {
                            ply: 1,
                            san: "d4".into()
                        }
                    ]
                );
                assert!(game.illegal_moves()[0].stood);
                assert_eq!(
                    game.fen(),
                    "rnbq1bnr/pppppppp/4k3/8/3PP3/8/PPP2PPP/RNBQKBNR b KQ - 0 2"
                );
            } else {
                assert!(events.is_empty(), "{events:?}");
                assert!(!game.illegal_moves()[0].stood);
                assert!(game.moves().is_empty());
            }
        }
    }

    #[test]
    fn without_a_clock_a_slid_piece_counts_where_it_stands_for_the_debounce() {
        // The rook slides a1-a2-a4 and pauses 1 s on a2 (itself a legal move): only a4,
        // where it stands 2 s, is the move; it counts from the end of the interval.
        let mut game = game_from("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", Rules::default());
        game.infer_moves_after(Some(2_000));
        let mut board = game.position().board().clone();
        let rook = board.remove_piece_at(shakmaty::Square::A1).unwrap();
        let on = |square| {
            let mut b = board.clone();
            b.set_piece_at(square, rook);
            placement_of(&b)
        };
        assert!(game
            .placement(NodeMs(0), &on(shakmaty::Square::A2))
            .is_empty());
        assert!(game
            .placement(NodeMs(1_000), &on(shakmaty::Square::A4))
            .is_empty());
        assert!(game.observe(NodeMs(2_999)).is_empty(), "not yet 2 s");
        let events = game.observe(NodeMs(3_500));
        assert_eq!(
            events,
            [GameEvent::MoveCompleted {
                ply: 1,
                san: "Ra4".into()
            }]
        );
        assert_eq!(game.moves()[0].at, NodeMs(3_000));
        assert!(game.observe(NodeMs(9_000)).is_empty(), "a move counts once");
    }

    #[test]
    fn a_piece_cleared_from_the_centre_for_the_kings_still_signals() {
        // As in the recorded DGT stream `johan`: the d4 pawn is taken off, then the kings go
        // to d5 and e4 (both light: 1-0). A piece gone from elsewhere is no signal.
        for (cleared, signal) in [
            (shakmaty::Square::D4, Some("1-0")),
            (shakmaty::Square::F2, None),
        ] {
            let mut game = game_from("6k1/5ppp/8/8/3P4/8/5PPP/6K1 w - - 0 40", Rules::default());
            let mut board = game.position().board().clone();
            board.remove_piece_at(cleared).unwrap();
            let wk = board.remove_piece_at(shakmaty::Square::G1).unwrap();
            let bk = board.remove_piece_at(shakmaty::Square::G8).unwrap();
            board.set_piece_at(shakmaty::Square::E4, wk);
            board.set_piece_at(shakmaty::Square::D5, bk);
            game.placement(NodeMs(1), &placement_of(&board));
            assert_eq!(game.result_signal(), signal, "{cleared}");
        }
    }

    /// Plays `uci` by setting down the final position and pressing, as a board reports it.
    fn play(game: &mut Game, uci: &str) {
        let side = match game.position().turn() {
            Color::White => Side::White,
            Color::Black => Side::Black,
        };
        let after = board_after(game, uci);
        game.placement(NodeMs(1), &placement_of(&after));
        let events = game.clock(NodeMs(2), &press(side));
        assert!(
            matches!(events[..], [GameEvent::MoveCompleted { .. }, ..]),
            "{uci}: {events:?}"
        );
    }

    #[test]
    fn castling_rook_first_or_king_first_is_the_same_move() {
        // Art. 3.8.2 / 4.4.2: touching the rook first is irregular, but the board shows the
        // same final position at the press, and that is the move.
        for rook_first in [false, true] {
            let mut game = game_from("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Rules::default());
            let mut board = game.position().board().clone();
            let steps: [(shakmaty::Square, shakmaty::Square); 2] = if rook_first {
                [
                    (shakmaty::Square::H1, shakmaty::Square::F1),
                    (shakmaty::Square::E1, shakmaty::Square::G1),
                ]
            } else {
                [
                    (shakmaty::Square::E1, shakmaty::Square::G1),
                    (shakmaty::Square::H1, shakmaty::Square::F1),
                ]
            };
            for (from, to) in steps {
                let piece = board.remove_piece_at(from).unwrap();
                assert!(game.placement(NodeMs(1), &placement_of(&board)).is_empty());
                board.set_piece_at(to, piece);
                assert!(game.placement(NodeMs(1), &placement_of(&board)).is_empty());
            }
            assert!(game.moves().is_empty(), "half a castling is no move");
            let events = game.clock(NodeMs(2), &press(Side::White));
            assert_eq!(
                events,
                [GameEvent::MoveCompleted {
                    ply: 1,
                    san: "O-O".into()
                }]
            );
        }
    }

    #[test]
    fn en_passant_with_the_captured_pawn_taken_off_first() {
        let mut game = game_from("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", Rules::default());
        let mut board = game.position().board().clone();
        board.discard_piece_at(shakmaty::Square::D5);
        game.placement(NodeMs(1), &placement_of(&board));
        let after = board_after(&game, "e5d6");
        game.placement(NodeMs(1), &placement_of(&after));
        let events = game.clock(NodeMs(2), &press(Side::White));
        assert_eq!(
            events,
            [GameEvent::MoveCompleted {
                ply: 1,
                san: "exd6".into()
            }]
        );
    }

    #[test]
    fn knocked_pieces_put_back_before_the_press_change_nothing() {
        // Art. 7.4: a displaced piece restored in the player's own time.
        let mut game = Game::default();
        let mut knocked = game.position().board().clone();
        let queen = knocked.remove_piece_at(shakmaty::Square::D1).unwrap();
        knocked.set_piece_at(shakmaty::Square::D3, queen);
        assert!(game
            .placement(NodeMs(1), &placement_of(&knocked))
            .is_empty());
        play(&mut game, "g1f3");
        assert_eq!(game.moves()[0].san.to_string(), "Nf3");
    }

    #[test]
    fn threefold_counts_only_when_en_passant_rights_are_equal() {
        // Art. 9.2.2: after 1.e4 ... the position with an en passant capture possible is not
        // the same as the one without. Black's d-pawn stands on d4: after c2-c4 Black may
        // take en passant once; the later repetitions of the squares have no such right.
        let mut game = game_from("4k3/8/8/8/3p4/8/2P5/4K1N1 w - - 0 1", Rules::default());
        play(&mut game, "c2c4"); // en passant possible: position A*
        for uci in ["e8d7", "g1f3", "d7e8", "f3g1", "e8d7", "g1f3", "d7e8"] {
            play(&mut game, uci);
        }
        // The squares of A* stood three times (after c4, after ...Ke8, after ...Ke8), but the
        // first had an en passant right: only two count, so no claim yet.
        assert!(!game.claimable().contains(&Claim::ThreefoldRepetition));
        play(&mut game, "f3g1");
        play(&mut game, "e8d7");
        // White to move: Nf3 would bring the position for the third time (9.2.1).
        assert!(game.claimable().contains(&Claim::ThreefoldRepetition));
    }

    #[test]
    fn threefold_counts_only_when_castling_rights_are_equal() {
        // Art. 9.2.2: the same squares, but White could castle the first time.
        let mut game = game_from("4k3/8/8/8/8/8/8/4K2R w K - 0 1", Rules::default());
        for uci in ["h1h2", "e8d8", "h2h1", "d8e8"] {
            play(&mut game, uci);
        }
        // Back on the starting squares, but without the castling right: a new position.
        for uci in ["h1h2", "e8d8", "h2h1"] {
            play(&mut game, uci);
        }
        assert!(!game.claimable().contains(&Claim::ThreefoldRepetition));
        play(&mut game, "d8e8"); // second time without the right
        for uci in ["h1h2", "e8d8", "h2h1"] {
            play(&mut game, uci);
        }
        // Black to move: ...Ke8 makes the third occurrence without castling rights.
        assert!(game.claimable().contains(&Claim::ThreefoldRepetition));
    }

    #[test]
    fn the_fifth_occurrence_ends_the_game_at_once_as_each_edition_says() {
        // 2023 9.6.1 and 2014 9.6a (here the repetitions are consecutive, so both end the
        // game when the last knight is set down, without a press); 2009: play goes on.
        use crate::core::laws::Edition;
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        for (edition, ends) in [
            (Edition::Laws2023, true),
            (Edition::Laws2014, true),
            (Edition::Laws2009, false),
        ] {
            let mut game = Game::new(
                Chess::default(),
                Rules {
                    edition,
                    ..Rules::default()
                },
            );
            for uci in shuffle.iter().cycle().take(15) {
                play(&mut game, uci);
            }
            let last = board_after(&game, "f6g8");
            let events = game.placement(NodeMs(9), &placement_of(&last));
            if ends {
                assert_eq!(game.status(), Status::FivefoldRepetition, "{edition}");
                assert!(events.contains(&GameEvent::GameOver {
                    status: Status::FivefoldRepetition
                }));
                assert_eq!(game.moves().len(), 16);
            } else {
                assert!(events.is_empty(), "{edition}");
                assert_eq!(game.status(), Status::Playing);
                // A claim is still correct (9.2), as the 2009 Laws require.
                assert_eq!(game.moves().len(), 15);
            }
        }
    }

    #[test]
    fn knocked_pieces_left_for_too_long_put_the_board_out_of_sync_until_restored() {
        // Art. 7.4: the arbiter should know; a hand at work for a few seconds is no incident.
        let mut game = Game::default();
        let start = game.position().board().clone();
        let mut knocked = start.clone();
        let queen = knocked.remove_piece_at(shakmaty::Square::D1).unwrap();
        knocked.set_piece_at(shakmaty::Square::D3, queen);
        assert!(game
            .placement(NodeMs(1_000), &placement_of(&knocked))
            .is_empty());
        assert_eq!(game.sync(NodeMs(5_000)), BoardSync::Unsettled);
        assert!(game.observe(NodeMs(5_000)).is_empty());
        assert_eq!(
            game.observe(NodeMs(11_000)),
            [GameEvent::OutOfSync { since: 1_000 }]
        );
        assert!(game.observe(NodeMs(20_000)).is_empty(), "raised once");
        assert_eq!(game.sync(NodeMs(20_000)), BoardSync::OutOfSync);
        assert_eq!(
            game.placement(NodeMs(21_000), &placement_of(&start)),
            [GameEvent::BackInSync]
        );
        assert_eq!(game.sync(NodeMs(21_000)), BoardSync::InSync);
    }

    #[test]
    fn a_move_set_down_but_not_yet_pressed_is_in_sync() {
        let mut game = Game::default();
        let after = board_after(&game, "e2e4");
        game.placement(NodeMs(0), &placement_of(&after));
        assert!(game.observe(NodeMs(60_000)).is_empty());
        assert_eq!(game.sync(NodeMs(60_000)), BoardSync::InSync);
    }

    #[test]
    fn chess960_start_from_the_board_and_castling_onto_the_rooks_square() {
        // Guidelines II.3: after O-O the king stands on g1 and the rook on f1, whatever
        // squares they started on; here the king goes to the rook's own square.
        let rules = Rules {
            chess960: true,
            ..Rules::default()
        };
        let mut game = Game::new(Chess::default(), rules);
        let drawn =
            Board::from_ascii_board_fen(b"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN").unwrap();
        assert!(game.placement(NodeMs(0), &placement_of(&drawn)).is_empty());
        assert_eq!(
            game.fen(),
            "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"
        );
        let castled =
            Board::from_ascii_board_fen(b"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRRKN").unwrap();
        game.placement(NodeMs(1), &placement_of(&castled));
        let events = game.clock(NodeMs(2), &press(Side::White));
        assert_eq!(
            events,
            [GameEvent::MoveCompleted {
                ply: 1,
                san: "O-O".into()
            }]
        );
        // Without Chess960 the same set-up is no start position: a press is an illegal move.
        let mut standard = Game::default();
        standard.placement(NodeMs(0), &placement_of(&drawn));
        assert!(matches!(
            standard.clock(NodeMs(1), &press(Side::White))[..],
            [GameEvent::IllegalMove(_)]
        ));
    }
}
