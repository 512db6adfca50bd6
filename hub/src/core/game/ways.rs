//! The ways from the game's position to a board several moves on: every sequence of legal
//! moves of the shortest length after which the pieces stand as the board shows them and
//! the side whose clock runs is to move. What the hub makes of them (caught up when there is
//! one, filled in when there are several) is in `catch_up.rs`.
//!
//! The search is bounded: a board that no moves reach (knocked pieces, an illegal move) is
//! given up after [`MAX_VISITS`] positions at most.

use shakmaty::{Bitboard, Board, Chess, Color, Move, Position};

use super::squares_that_differ;

/// The most moves followed at once: five moves in a 10 s power cut of a blitz finish, and
/// the three boots after it. Beyond, the board is better checked by hand.
pub const MAX_PLIES: usize = 6;

/// The most ways kept: the arbiter is shown them, and picks one or types another.
pub const MAX_WAYS: usize = 24;

/// The most positions searched for one board.
const MAX_VISITS: usize = 20_000;

/// The ways to a board, as far as the search went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ways {
    /// Every way of the shortest length found, in the order of the legal moves (at most
    /// [`MAX_WAYS`]).
    pub found: Vec<Vec<Move>>,
    /// The search stopped at a bound: more ways (or a shorter one) may exist.
    pub cut_short: bool,
}

/// The shortest sequences of 2 to [`MAX_PLIES`] legal moves from `position` after which the
/// pieces stand as on `board` and `running` is to move.
///
/// A move leaves a square that differs between the position and the board, or one an
/// earlier move of the way reached: a piece that went away and came back is no part of a
/// way (it explains nothing the board shows, and would make any board look like moves).
pub fn shortest(position: &Chess, board: &Board, running: Color) -> Ways {
    let differ = squares_that_differ(position.board(), board);
    let mut search = Search {
        board,
        differ,
        line: Vec::new(),
        ways: Ways::default(),
        visits: 0,
    };
    for plies in 2..=MAX_PLIES {
        // Whose turn it is after `plies` moves is known in advance: lengths the clock rules
        // out are not searched.
        let to_move = if plies % 2 == 0 {
            position.turn()
        } else {
            position.turn().other()
        };
        if to_move != running {
            continue;
        }
        search.from(position, plies, Bitboard::EMPTY);
        if !search.ways.found.is_empty() || search.ways.cut_short {
            break;
        }
    }
    search.ways
}

struct Search<'a> {
    board: &'a Board,
    /// The squares on which the start and the board differ.
    differ: Bitboard,
    line: Vec<Move>,
    ways: Ways,
    visits: usize,
}

impl Search<'_> {
    /// The ways of `plies` more moves from `position`; `reached`: the squares the line's
    /// moves went to.
    fn from(&mut self, position: &Chess, plies: usize, reached: Bitboard) {
        if plies == 0 {
            if position.board() == self.board {
                self.ways.found.push(self.line.clone());
            }
            return;
        }
        self.visits += 1;
        if self.visits > MAX_VISITS || self.ways.found.len() >= MAX_WAYS {
            self.ways.cut_short = true;
            return;
        }
        if !within_reach(position, self.board, plies) || position.is_game_over() {
            return;
        }
        let may_leave = self.differ | reached;
        for m in position.legal_moves() {
            let leaves = match m {
                // The king may stay on its square (Chess960): its rook left one then.
                Move::Castle { king, rook } => may_leave.contains(king) || may_leave.contains(rook),
                _ => m.from().is_some_and(|from| may_leave.contains(from)),
            };
            if !leaves {
                continue;
            }
            let mut after = position.clone();
            after.play_unchecked(m);
            self.line.push(m);
            self.from(&after, plies - 1, reached.with(m.to()));
            self.line.pop();
            if self.ways.cut_short {
                return;
            }
        }
    }
}

/// Whether `plies` more moves from `position` can make the pieces stand as on `board`: a
/// move of a side changes at most two of its squares (four, castling once), and a move of
/// its opponent one (a capture).
fn within_reach(position: &Chess, board: &Board, plies: usize) -> bool {
    let turn = position.turn();
    let moves_of = |color: Color| {
        if color == turn {
            plies.div_ceil(2)
        } else {
            plies / 2
        }
    };
    let differ = squares_that_differ(position.board(), board);
    Color::ALL.into_iter().all(|color| {
        let changed = (differ & (position.board().by_color(color) | board.by_color(color))).count();
        let castling = if position.castles().has_color(color) {
            2
        } else {
            0
        };
        changed <= 2 * moves_of(color) + moves_of(color.other()) + castling
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn after(ucis: &[&str]) -> Chess {
        let mut position = Chess::default();
        for uci in ucis {
            let m = uci.parse::<UciMove>().unwrap().to_move(&position).unwrap();
            position.play_unchecked(m);
        }
        position
    }

    fn ucis(ways: &Ways) -> Vec<String> {
        ways.found
            .iter()
            .map(|way| {
                way.iter()
                    .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn three_moves_two_of_one_side_have_two_orders() {
        let board = after(&["g1f3", "d7d5", "d2d4"]).board().clone();
        let ways = shortest(&Chess::default(), &board, Color::Black);
        assert_eq!(ucis(&ways), ["d2d4 d7d5 g1f3", "g1f3 d7d5 d2d4"]);
        assert!(!ways.cut_short);
    }

    #[test]
    fn five_opening_moves_are_reached_and_the_clock_rules_out_other_lengths() {
        let board = after(&["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"])
            .board()
            .clone();
        let ways = shortest(&Chess::default(), &board, Color::Black);
        // White's three moves in any order that keeps them legal (Bb5 needs e4 first), with
        // Black's two in either order between.
        assert!(ways.found.len() > 2, "{:?}", ucis(&ways));
        assert!(ways.found.iter().all(|w| w.len() == 5));
        assert!(ucis(&ways).contains(&"e2e4 e7e5 g1f3 b8c6 f1b5".to_owned()));
        assert!(!ways.cut_short);
        // White's clock running says an even number of moves: not these five, but six with
        // Black's pawn in two steps.
        let six = shortest(&Chess::default(), &board, Color::White);
        assert!(six.found.iter().all(|w| w.len() == 6));
        assert!(ucis(&six).contains(&"e2e4 e7e6 g1f3 e6e5 f1b5 b8c6".to_owned()));
    }

    #[test]
    fn a_piece_gone_out_and_back_is_no_way_and_a_knocked_board_is_given_up() {
        // Only White's knight stands elsewhere: Black moving out and back would explain it,
        // but that is no move the board shows.
        let mut board = Board::default();
        board.discard_piece_at(shakmaty::Square::G1);
        board.set_piece_at(
            shakmaty::Square::E5,
            shakmaty::Piece::from_char('N').unwrap(),
        );
        let ways = shortest(&Chess::default(), &board, Color::White);
        assert!(ways.found.is_empty(), "{:?}", ucis(&ways));
        // A queen gone from d1: no moves reach it.
        let mut board = Board::default();
        board.discard_piece_at(shakmaty::Square::D1);
        assert!(shortest(&Chess::default(), &board, Color::Black)
            .found
            .is_empty());
    }
}
