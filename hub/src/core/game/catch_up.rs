//! Moves the node could not see: its line to the board was down (a cable pulled and put
//! back, a stall), it restarted, or the power was cut, and the players went on. When it
//! reads the board again, the board shows the position a few moves on; each of those moves
//! was completed by its press (6.2.1).
//!
//! - One way there ([`ways::shortest`]) of at most [`MAX_CAUGHT_UP`] moves, the clock
//!   running for the side to move after them: the moves are completed as they were made.
//! - Several ways (the order not told by the board), or more moves: the game is followed at
//!   once in the most likely order and the moves are marked as filled in
//!   ([`super::filled_in`]) for the arbiter to confirm or correct (7.4).
//! - No way: the board stays out of sync (or the press is an illegal move) for the arbiter.

use shakmaty::{Board, Chess, Color, Move, Position};

use super::filled_in::FilledIn;
use super::{ways, Game, GameEvent};
use protocol::NodeMs;

/// The most moves completed at once without asking the arbiter: one is an ordinary press; a
/// few seconds without the board in a blitz finish are two or three.
pub const MAX_CAUGHT_UP: usize = 3;

/// The most boards remembered between two moves, for the order of moves filled in.
const MAX_SEEN: usize = 64;

impl Game {
    /// Completes the moves the node missed if the board (as last sensed) shows where they
    /// lead and `running` (the side whose clock runs now) agrees; `None` otherwise.
    pub(super) fn catch_up(&mut self, at: NodeMs, running: Color) -> Option<Vec<GameEvent>> {
        let board = self.sensed.clone()?;
        if !self.playing() || board == *self.position.board() {
            return None;
        }
        let ways = ways::shortest(&self.position, &board, running);
        let mut orders = ways.found;
        if orders.is_empty() {
            return None;
        }
        let certain = orders.len() == 1 && orders[0].len() <= MAX_CAUGHT_UP && !ways.cut_short;
        if !certain && self.moves.is_empty() && !self.start_seen {
            // A board that never showed this game's start shows another game (the round
            // before's, left on it when a round was started over it), not moves unseen.
            return None;
        }
        if !certain {
            rank(&mut orders, &self.position, &self.seen);
        }
        let from_ply = self.moves.len() + 1;
        let mut events = Vec::new();
        for m in orders[0].clone() {
            events.extend(self.complete(at, m));
            if !self.playing() {
                break;
            }
        }
        if !certain {
            let to_ply = self.moves.len();
            self.filled_in.push(FilledIn {
                from_ply,
                to_ply,
                orders,
                more_orders: ways.cut_short,
                confirmed: false,
            });
            events.push(GameEvent::MovesFilledIn { from_ply, to_ply });
        }
        events.extend(self.resync(at, true));
        Some(events)
    }

    /// Remembers a board the node read between two moves: a way through it is likelier.
    pub(super) fn saw(&mut self, board: &Board) {
        if self.seen.last() == Some(board) {
            return;
        }
        if self.seen.len() == MAX_SEEN {
            self.seen.remove(0);
        }
        self.seen.push(board.clone());
    }
}

/// Puts the likeliest order first: the one that passes through the most boards the node read
/// on the way (a stall that let some readings through, a hand seen between two presses).
/// Orders the readings do not tell apart keep the order of the legal moves.
fn rank(orders: &mut [Vec<Move>], start: &Chess, seen: &[Board]) {
    let passes = |way: &Vec<Move>| {
        let mut position = start.clone();
        let mut passed = 0;
        for m in &way[..way.len() - 1] {
            position.play_unchecked(*m);
            passed += usize::from(seen.contains(position.board()));
        }
        passed
    };
    orders.sort_by_cached_key(|way| std::cmp::Reverse(passes(way)));
}
