//! Moves the node could not see: its line to the board was down (a cable pulled and put
//! back) or it restarted, and the players went on. When it reads the board again, the board
//! shows the position a few moves on. If exactly one sequence of legal moves leads there,
//! and the clock runs for the side whose turn it is after them, each of those moves was
//! completed by its press (6.2.1): the hub completes them, so no move of the game is lost.
//! Anything else (two ways there, a clock that disagrees) stays out of sync for the arbiter.

use shakmaty::{Board, Chess, Color, Move, Position};

use super::{Game, GameEvent};
use protocol::NodeMs;

/// The most moves caught up at once. One is an ordinary press; a few seconds without the
/// board in a blitz finish are two or three. Further, the board is better checked by hand.
pub const MAX_CAUGHT_UP: usize = 3;

impl Game {
    /// Completes the moves the node missed if the board (as last sensed) shows where they
    /// lead and `running` (the side whose clock runs now) agrees; `None` otherwise.
    pub(super) fn catch_up(&mut self, at: NodeMs, running: Color) -> Option<Vec<GameEvent>> {
        let board = self.sensed.clone()?;
        if !self.playing() || board == *self.position.board() {
            return None;
        }
        let moves = only_way(&self.position, &board, running)?;
        let mut events = Vec::new();
        for m in moves {
            events.extend(self.complete(at, m));
            if !self.playing() {
                break;
            }
        }
        events.extend(self.resync(at, true));
        Some(events)
    }
}

/// The one sequence of 2 to [`MAX_CAUGHT_UP`] legal moves from `position` after which the
/// pieces stand as on `board` and `running` is to move; `None` if there is none or more.
fn only_way(position: &Chess, board: &Board, running: Color) -> Option<Vec<Move>> {
    let mut found: Vec<Vec<Move>> = Vec::new();
    let mut line = Vec::new();
    for plies in 2..=MAX_CAUGHT_UP {
        // Whose turn it is after `plies` moves is known in advance: skip lengths the clock
        // rules out.
        let to_move = if plies % 2 == 0 {
            position.turn()
        } else {
            position.turn().other()
        };
        if to_move == running {
            search(position, board, plies, &mut line, &mut found);
        }
        if found.len() > 1 {
            return None;
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

fn search(
    position: &Chess,
    board: &Board,
    plies: usize,
    line: &mut Vec<Move>,
    found: &mut Vec<Vec<Move>>,
) {
    if plies == 0 {
        if position.board() == board {
            found.push(line.clone());
        }
        return;
    }
    // A move changes at most four squares (castling): a board further away than the moves
    // left can change is not reached this way.
    let differ = squares_differing(position.board(), board);
    if differ > 4 * plies || found.len() > 1 || position.is_game_over() {
        return;
    }
    for m in position.legal_moves() {
        let mut after = position.clone();
        after.play_unchecked(m);
        line.push(m);
        search(&after, board, plies - 1, line, found);
        line.pop();
    }
}

fn squares_differing(a: &Board, b: &Board) -> usize {
    shakmaty::Square::ALL
        .iter()
        .filter(|sq| a.piece_at(**sq) != b.piece_at(**sq))
        .count()
}
