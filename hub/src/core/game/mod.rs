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
//!
//! - `catch_up`: moves made while the node could not see the board; `ways`: the sequences
//!   of moves that reach a board; [`filled_in`]: moves followed in an order the board did
//!   not show, and the arbiter's order.
//! - [`illegal`]: completed illegal moves (7.5) and what the arbiter may do.
//! - [`signal`]: DGT's result signal, both kings on the centre squares.
//! - [`sync`]: whether the board shows the game; boards without a clock (a move that stood
//!   long enough counts).

mod catch_up;
mod filled_in;
mod illegal;
mod signal;
mod sync;
#[cfg(test)]
mod tests;
mod ways;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Bitboard, Board, ByColor, Chess, Color, EnPassantMode, Move, Position, Role};

use protocol::{ClockReport, NodeMs, Placement};

pub use self::filled_in::FilledIn;
use self::illegal::Lapsing;
pub use self::illegal::{IllegalKind, IllegalMove};
use self::signal::result_signal;
pub use self::sync::{BoardSync, OUT_OF_SYNC_MS};
use super::arbiter::{Cause, DecisionError, GameResult};
use super::chess960;
use super::claim::{self, ClaimCheck, ClaimRequest};
use super::ending::{self, Claim, Occurrences, Status};
use super::laws::Rules;
use super::mating;
use super::repetition::Repetitions;
use super::sensed;

/// `position` in FEN, written into a string of its size at once: the live feed writes one
/// at every move of the hall, and formatting grew the string character by character.
pub fn fen_of(position: &Chess) -> String {
    let mut fen = String::with_capacity(90);
    Fen::from_position(position, EnPassantMode::Legal).append_to_string(&mut fen);
    fen
}

/// The squares on which `a` and `b` show different pieces (or a piece and none).
fn squares_that_differ(a: &Board, b: &Board) -> Bitboard {
    let by_color = Color::ALL
        .into_iter()
        .fold(Bitboard::EMPTY, |d, c| d | (a.by_color(c) ^ b.by_color(c)));
    Role::ALL
        .into_iter()
        .fold(by_color, |d, r| d | (a.by_role(r) ^ b.by_role(r)))
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
        result: GameResult,
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
    /// Moves `from_ply` to `to_ply` were completed in an order the board did not show: the
    /// hub follows the likeliest, the arbiter confirms or corrects it (7.4).
    MovesFilledIn {
        from_ply: usize,
        to_ply: usize,
    },
    /// The arbiter confirmed or chose the order of moves `from_ply` to `to_ply`.
    OrderChosen {
        from_ply: usize,
        to_ply: usize,
    },
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
    result_signal: Option<GameResult>,
    /// Since when (node time) the board has not shown the game, if it has not.
    unsettled_since: Option<NodeMs>,
    /// The node could not see the board since the last clock report ([`Game::node_blind`]).
    blind: bool,
    /// The node came back and has not read the board since: a press then says nothing of
    /// whether a move was made (a chain's clock is read before the board after a power cut).
    board_unread: bool,
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
    /// The boards read since the last move: which order of moves filled in is likelier.
    seen: Vec<Board>,
    /// The moves completed in an order the board did not show.
    filled_in: Vec<FilledIn>,
    /// The board has shown the game's start since the game began: a board several moves on
    /// before the first move is then the game's, not another game's left on it. Only what
    /// this game's events show counts (a restart resumes a board at its round's start), so a
    /// board whose start its node never sent again is not filled in before the first move.
    start_seen: bool,
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
            blind: false,
            board_unread: false,
            out_of_sync_raised: false,
            pending_ending: None,
            declared: None,
            debounce_ms: None,
            shown_successor: None,
            lapsing: None,
            seen: Vec::new(),
            filled_in: Vec::new(),
            start_seen: false,
        }
    }

    /// The board has no clock: a move is completed when its position has stood on the board
    /// for `debounce_ms` (`None`: presses complete moves, as 6.2.1 says). A slid piece that
    /// pauses on a square, or a piece set down and picked up again, stands for less.
    pub fn infer_moves_after(&mut self, debounce_ms: Option<u64>) {
        self.debounce_ms = debounce_ms;
        self.shown_successor = None;
    }

    /// Where each stretch of legal moves starts: the game's start at ply 0, then the
    /// position an illegal move left where it stood (A.5.2).
    pub fn starts(&self) -> &[(usize, Chess)] {
        &self.starts
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

    /// Where the game stands by the rules, an arbiter's declaration aside, and the result
    /// that gives.
    pub fn ruled(&self) -> (Status, GameResult) {
        (self.status, self.status.result(self.position.turn()))
    }

    pub fn result(&self) -> GameResult {
        match self.declared {
            Some((result, _)) => result,
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
        self.rewind(ply);
        self.filled_in.retain(|f| f.from_ply <= ply);
        if let Some(cut) = self.filled_in.last_mut().filter(|f| f.to_ply > ply) {
            // The moves of the stretch that stay are the order followed, as far as it goes.
            cut.to_ply = ply;
            cut.orders.truncate(1);
            cut.orders[0].truncate(ply + 1 - cut.from_ply);
        }
        self.starts.retain(|(from, _)| *from <= ply);
        self.lapsing = None;
        let mut events = vec![GameEvent::Reinstated { ply }];
        let shows_game = self.sensed.as_ref().is_none_or(|board| {
            board == self.position.board() || self.successor_with(board).is_some()
        });
        events.extend(self.resync(at, shows_game));
        Ok(events)
    }

    /// The game back at the position after `ply` completed moves, as it stood then: the
    /// moves after it gone, the repetitions counted again, play going on.
    fn rewind(&mut self, ply: usize) {
        self.moves.truncate(ply);
        self.history.truncate(ply + 1);
        self.position = self.history[ply].clone();
        self.repetitions = Repetitions::default();
        for position in &self.history {
            self.repetitions.record(position);
        }
        self.status = Status::Playing;
        self.pending_ending = None;
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
    pub fn result_signal(&self) -> Option<GameResult> {
        self.result_signal
    }

    /// Every completed illegal move, in order.
    pub fn illegal_moves(&self) -> &[IllegalMove] {
        &self.illegal_moves
    }

    /// The FEN after `ply` completed moves (0: the start); `None` past the last move.
    pub fn fen_after(&self, ply: usize) -> Option<String> {
        self.history.get(ply).map(fen_of)
    }

    pub fn fen(&self) -> String {
        fen_of(&self.position)
    }

    /// The board reports its pieces. Only a placement that ends the game completes a move
    /// by itself (6.2.1); anything else waits for the press.
    pub fn placement(&mut self, at: NodeMs, placement: &Placement) -> Vec<GameEvent> {
        let board = sensed::board(placement);
        self.board_unread = false;
        self.saw(&board);
        if self.moves.is_empty() && board == *self.position.board() {
            self.start_seen = true;
        }
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
        self.start_seen = true;
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
        // The position before was not dead (play went on), so after a reversible move
        // neither is this one; at the game's first move the start was never searched.
        let may_be_dead = self.moves.is_empty() || mating::may_become_dead(&self.position, &m);
        let ending = ending::ending(&after, occurrences, self.rules.edition, may_be_dead);
        self.pending_ending = Some((m, ending));
        ending
    }

    /// The clock reports. A press by the side to move completes the move on the board.
    ///
    /// The first report after the node was blind ([`Game::node_blind`]) may tell of presses
    /// it did not see: the clock running for the opponent of the side to move while the
    /// board shows a legal move of that side is the press that completed it (6.2.1); a board
    /// several moves on is caught up (`catch_up.rs`). A press catches up the moves the board
    /// shows whether or not the node knew it missed any: a line can lose presses unnoticed.
    pub fn clock(&mut self, at: NodeMs, report: &ClockReport) -> Vec<GameEvent> {
        let blind = std::mem::take(&mut self.blind);
        let Some(by) = report
            .pressed_by
            .map(sensed::color)
            .or_else(|| self.unseen_press(report).filter(|_| blind))
        else {
            return match report.running.map(sensed::color) {
                Some(running) if blind && self.unsettled_since.is_some() => {
                    self.catch_up(at, running).unwrap_or_default()
                }
                _ => Vec::new(),
            };
        };
        let mut events = Vec::new();
        if self.lapsing.as_ref().is_some_and(|l| l.by == by.other()) {
            events.extend(self.let_stand());
        }
        if !self.playing() {
            return events;
        }
        if by != self.position.turn() {
            // The side that moved last pressed again: its opponent's press came unseen (a
            // line that lost it). The board, if it shows both moves one way only, says
            // which; otherwise a press out of turn is no move.
            if self.sensed.as_ref() != Some(self.position.board()) {
                events.extend(self.catch_up(at, by.other()).unwrap_or_default());
            }
            return events;
        }
        events.extend(self.press(at));
        events
    }

    /// The node could not see the board for a while (it restarted, or its line to the
    /// board was down): the next clock report may tell of presses it missed. Only then,
    /// because in play a hand at work can show the board as moves further on would (a
    /// knight lifted from c6 and a pawn taken off d4 look like ...Nxe5 dxe5).
    pub fn node_blind(&mut self) {
        self.blind = true;
        self.board_unread = true;
    }

    /// The side to move, when `report` (without a press) shows that it pressed unseen.
    fn unseen_press(&self, report: &ClockReport) -> Option<Color> {
        let mover = self.position.turn();
        let shows_move = self
            .sensed
            .as_ref()
            .is_some_and(|board| self.successor_with(board).is_some());
        (self.playing() && shows_move && report.running.map(sensed::color) == Some(mover.other()))
            .then_some(mover)
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
            if self.board_unread {
                // The board shown is from before the node lost sight of it: the move may
                // be there. The next press, with the board read, catches it up.
                return Vec::new();
            }
            return vec![self.illegal(at, IllegalKind::PressWithoutMove, &board)];
        }
        if let Some(m) = self.promotion_without_piece(&board) {
            // 7.5.2: illegal, and the pawn becomes a queen: the move stands as =Q.
            let mut events = vec![self.illegal(at, IllegalKind::PromotionWithoutPiece, &board)];
            events.extend(self.complete(at, m));
            return events;
        }
        // A press after moves the node did not see, this one included: a line can lose
        // presses without the node knowing (a stall), and at a press the hand has left the
        // board, so the board shows where the moves led.
        if let Some(events) = self.catch_up(at, self.position.turn().other()) {
            return events;
        }
        vec![self.illegal(at, IllegalKind::IllegalMove, &board)]
    }

    /// The legal move after which the pieces stand exactly as on `board`.
    fn successor_with(&self, board: &Board) -> Option<Move> {
        // Cheap filter first: no move (castling included) changes the occupancy of more than
        // four squares, and an unchanged board is no move. (Occupancy alone can stay the
        // same: in Chess960 king and rook may swap squares when castling.)
        let before = self.position.board();
        let changed = (before.occupied() ^ board.occupied()).count();
        if changed > 4 || board == before {
            return None;
        }
        // Every move changes what stands on two squares at least: a piece lifted (one
        // square) is no move, and no move is generated for it.
        let differ = squares_that_differ(before, board);
        if differ.count() < 2 {
            return None;
        }
        let shows = |m: &Move| {
            let mut after = self.position.clone();
            after.play_unchecked(*m);
            after.board() == board
        };
        let turn = self.position.turn();
        // Castling moves the king or a rook with castling rights (in Chess960 either may
        // stay on its square): only then are all legal moves played to compare.
        let castling_pieces = before.kings() & before.by_color(turn)
            | self.position.castles().castling_rights() & before.by_color(turn);
        if (differ & castling_pieces).any() {
            // A move other than castling changes what stands on its square of departure
            // and on its square of arrival: only the moves that do are played.
            let may_be = |m: &Move| {
                m.is_castle()
                    || (m.from().is_some_and(|from| differ.contains(from))
                        && differ.contains(m.to()))
            };
            return self
                .position
                .legal_moves()
                .into_iter()
                .filter(may_be)
                .find(shows);
        }
        // Otherwise the move ends on a changed square that shows a piece of the side to
        // move: the moves of that piece's kind to it (a pawn's too, on the last rank: a
        // promotion) are the only ones played. Generating all legal moves at every lift and
        // placement took a seventh of the hub's loop's instructions in a saturated hall.
        (differ & board.by_color(turn)).into_iter().find_map(|to| {
            let role = board.role_at(to)?;
            let promoted_from =
                (Bitboard::BACKRANKS.contains(to) && role != Role::Pawn).then_some(Role::Pawn);
            std::iter::once(role)
                .chain(promoted_from)
                .flat_map(|role| self.position.san_candidates(role, to))
                .filter(|m| m.from().is_some_and(|from| differ.contains(from)))
                .find(shows)
        })
    }

    fn complete(&mut self, at: NodeMs, m: Move) -> Vec<GameEvent> {
        let ending = self.ending_after(m);
        self.pending_ending = None; // the position changes now
        self.shown_successor = None;
        self.lapsing = None;
        self.seen.clear();
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
