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

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Board, Chess, Color, EnPassantMode, Move, Position};

use protocol::{ClockReport, NodeMs, Placement};

use super::ending::{self, Claim, Status};
use super::repetition::Repetitions;
use super::sensed;

/// A completed move.
#[derive(Debug, Clone)]
pub struct CompletedMove {
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
    /// The side to move pressed the clock, but the board shows no legal successor of the
    /// position. The next issue turns this into the Laws' cases (7.5.1, 7.5.3, 7.5.2).
    UnmatchedPress {
        by: Color,
        board_fen: String,
    },
}

#[derive(Debug, Clone)]
pub struct Game {
    position: Chess,
    moves: Vec<CompletedMove>,
    /// The last placement the board reported.
    sensed: Option<Board>,
    status: Status,
    repetitions: Repetitions,
    unmatched_presses: u32,
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Chess::default())
    }
}

impl Game {
    pub fn new(start: Chess) -> Game {
        let mut repetitions = Repetitions::default();
        repetitions.record(&start);
        Game {
            position: start,
            moves: Vec::new(),
            sensed: None,
            status: Status::Playing,
            repetitions,
            unmatched_presses: 0,
        }
    }

    pub fn position(&self) -> &Chess {
        &self.position
    }

    pub fn moves(&self) -> &[CompletedMove] {
        &self.moves
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn result(&self) -> &'static str {
        self.status.result(self.position.turn())
    }

    /// The draw claims the player to move could make correctly now (9.2, 9.3). The hub
    /// never offers them to a player (12.6); the arbiter checks a claim against them.
    pub fn claimable(&self) -> Vec<Claim> {
        if self.status != Status::Playing {
            return Vec::new();
        }
        ending::claimable(&self.position, &self.repetitions)
    }

    pub fn unmatched_presses(&self) -> u32 {
        self.unmatched_presses
    }

    pub fn fen(&self) -> String {
        Fen::from_position(&self.position, EnPassantMode::Legal).to_string()
    }

    /// The board reports its pieces. Only a placement that ends the game completes a move
    /// by itself (6.2.1); anything else waits for the press.
    pub fn placement(&mut self, at: NodeMs, placement: &Placement) -> Vec<GameEvent> {
        let board = sensed::board(placement);
        let mut events = Vec::new();
        if self.status == Status::Playing {
            if let Some(m) = self.successor_with(&board) {
                let after = self.position.clone().play(m);
                if after.is_ok_and(|p| p.is_checkmate() || p.is_stalemate()) {
                    events = self.complete(at, m);
                }
            }
        }
        self.sensed = Some(board);
        events
    }

    /// The clock reports. A press by the side to move completes the move on the board.
    pub fn clock(&mut self, at: NodeMs, report: &ClockReport) -> Vec<GameEvent> {
        let Some(by) = report.pressed_by.map(sensed::color) else {
            return Vec::new();
        };
        if self.status != Status::Playing || by != self.position.turn() {
            return Vec::new();
        }
        let Some(board) = self.sensed.clone() else {
            return Vec::new();
        };
        match self.successor_with(&board) {
            Some(m) => self.complete(at, m),
            None => {
                self.unmatched_presses += 1;
                vec![GameEvent::UnmatchedPress {
                    by,
                    board_fen: board.to_string(),
                }]
            }
        }
    }

    /// The legal move after which the pieces stand exactly as on `board`.
    fn successor_with(&self, board: &Board) -> Option<Move> {
        // Cheap filter first: every move empties its from-square, and none (castling
        // included) changes the occupancy of more than four squares.
        let changed = (self.position.board().occupied() ^ board.occupied()).count();
        if changed == 0 || changed > 4 {
            return None;
        }
        self.position.legal_moves().into_iter().find(|m| {
            let mut after = self.position.clone();
            after.play_unchecked(*m);
            after.board() == board
        })
    }

    fn complete(&mut self, at: NodeMs, m: Move) -> Vec<GameEvent> {
        let by = self.position.turn();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, m);
        let mut events = vec![GameEvent::MoveCompleted {
            ply: self.moves.len() + 1,
            san: san.to_string(),
        }];
        self.moves.push(CompletedMove { san, by, at });
        let occurrences = self.repetitions.record(&self.position);
        self.status = ending::ending(&self.position, occurrences).unwrap_or(Status::Playing);
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
        assert!(matches!(events[..], [GameEvent::UnmatchedPress { .. }]));
        assert_eq!(game.unmatched_presses(), 1);
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
}
