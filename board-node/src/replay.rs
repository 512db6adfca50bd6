//! The `replay` source: a real game from PGN, reported as an e-board and a clock would.
//!
//! For each move: the piece lifted, the captured piece taken off, the piece set down
//! (castling king first, then the rook, as Art. 3.8.2 asks; a promotion as the new piece set
//! down), then the clock press with the mover's remaining time from the move's `[%clk]`.
//! Think time comes from consecutive `%clk` values and the increment; a move without `%clk`
//! (or one where a new period was added) gets a plausible think time instead.
//!
//! Every reading is stamped in game time (ms since the game started), so a replay at any
//! speed reports the think times of the real game.

use protocol::{ClockReport, Color as Side};
use shakmaty::{Board, Color, Move, Position, Square};

use crate::pgn::PgnGame;
use crate::sensors;
use crate::source::{Reading, Timed};

/// Game time between two hand actions within one move.
const HAND_STEP_MS: u64 = 200;

/// Used when neither the `TimeControl` tag nor the clocks tell the initial time.
const DEFAULT_BASE_MS: u64 = 90 * 60 * 1000;

/// Every reading of `game`, in order.
pub fn script(game: &PgnGame) -> Vec<Timed> {
    let (base_ms, increment_ms) = time_control(game);
    let mut remaining = [base_ms, base_ms]; // [white, black]
    let mut readings = Vec::new();
    let mut position = game.start.clone();
    let mut now = 0;

    readings.push(Timed::at(
        now,
        Reading::Placement(sensors::placement(position.board())),
    ));
    readings.push(Timed::at(
        now,
        Reading::Clock(report(remaining, position.turn(), None)),
    ));

    for (index, ply) in game.plies.iter().enumerate() {
        let mover = position.turn();
        let side = usize::from(mover == Color::Black);
        let previous = remaining[side];
        let think = ply
            .clk_ms
            .and_then(|clk| (previous + increment_ms).checked_sub(clk))
            .filter(|think| *think >= HAND_STEP_MS)
            .unwrap_or_else(|| plausible_think_ms(index));
        remaining[side] = ply
            .clk_ms
            .unwrap_or_else(|| (previous + increment_ms).saturating_sub(think));

        let hands = hand_boards(&position, &ply.m);
        let press_at = now + think.max(HAND_STEP_MS * hands.len() as u64);
        for (i, board) in hands.iter().enumerate() {
            let before_press = HAND_STEP_MS * (hands.len() - i) as u64;
            readings.push(Timed::at(
                press_at - before_press,
                Reading::Placement(sensors::placement(board)),
            ));
        }
        position.play_unchecked(ply.m);
        readings.push(Timed::at(
            press_at,
            Reading::Clock(report(remaining, position.turn(), Some(mover))),
        ));
        now = press_at;
    }

    if let Some(signal) = game.stopped_at.as_deref().filter(|s| is_king_signal(s)) {
        tracing::debug!(signal, "game ends with the DGT result signal");
        for (i, board) in king_signal(position.board(), game.result())
            .iter()
            .enumerate()
        {
            readings.push(Timed::at(
                now + 2_000 + HAND_STEP_MS * i as u64,
                Reading::Placement(sensors::placement(board)),
            ));
        }
    }
    readings
}

fn report(remaining: [u64; 2], running: Color, pressed_by: Option<Color>) -> ClockReport {
    let side = |c: Color| match c {
        Color::White => Side::White,
        Color::Black => Side::Black,
    };
    let ms = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    ClockReport {
        white_ms: ms(remaining[0]),
        black_ms: ms(remaining[1]),
        running: Some(side(running)),
        white_flag: false,
        black_flag: false,
        pressed_by: pressed_by.map(side),
    }
}

/// Deterministic think times between 2 and 27 s for moves whose clock tells nothing.
fn plausible_think_ms(ply_index: usize) -> u64 {
    2_000 + (ply_index as u64 * 7_919) % 25_000
}

/// The base time and increment of the first period, from the `TimeControl` tag
/// (`900+10`, `40/5400+30:1800+30`), else from the first clock readings.
fn time_control(game: &PgnGame) -> (u64, u64) {
    let first_period = game
        .tag("TimeControl")
        .and_then(|tc| tc.split(':').next())
        .map(|p| p.rsplit('/').next().unwrap_or(p));
    if let Some(period) = first_period {
        let (base, inc) = period.split_once('+').unwrap_or((period, "0"));
        if let (Ok(base), Ok(inc)) = (base.trim().parse::<u64>(), inc.trim().parse::<u64>()) {
            return (base * 1000, inc * 1000);
        }
    }
    // The first readings already include one increment and some thinking: round the larger
    // of the two up to a whole minute.
    let first = game.plies.iter().take(2).filter_map(|p| p.clk_ms).max();
    let base = first.map_or(DEFAULT_BASE_MS, |ms| ms.div_ceil(60_000) * 60_000);
    (base, 0)
}

/// What the sensors see while a hand makes move `m`, ending with the position after it.
fn hand_boards(position: &shakmaty::Chess, m: &Move) -> Vec<Board> {
    let mut board = position.board().clone();
    let mut steps = Vec::new();
    match m {
        Move::Castle { king, rook } => {
            let side = m.castling_side().expect("a castling move has a side");
            let color = position.turn();
            let king_to = side.king_to(color);
            let rook_to = side.rook_to(color);
            let king_piece = board.remove_piece_at(*king).expect("king on its square");
            steps.push(board.clone());
            if *rook == king_to || *king == rook_to {
                // Chess960: king and rook need each other's squares; both come off first.
                let rook_piece = board.remove_piece_at(*rook).expect("rook on its square");
                steps.push(board.clone());
                board.set_piece_at(king_to, king_piece);
                steps.push(board.clone());
                board.set_piece_at(rook_to, rook_piece);
            } else {
                board.set_piece_at(king_to, king_piece);
                steps.push(board.clone());
                let rook_piece = board.remove_piece_at(*rook).expect("rook on its square");
                steps.push(board.clone());
                board.set_piece_at(rook_to, rook_piece);
            }
        }
        _ => {
            let from = m.from().expect("only drops have no from-square");
            board.discard_piece_at(from);
            steps.push(board.clone());
            let captured_on = match m {
                Move::EnPassant { to, .. } => Some(Square::from_coords(to.file(), from.rank())),
                Move::Normal {
                    capture: Some(_),
                    to,
                    ..
                } => Some(*to),
                _ => None,
            };
            if let Some(square) = captured_on {
                board.discard_piece_at(square);
                steps.push(board.clone());
            }
        }
    }
    let mut after = position.clone();
    after.play_unchecked(*m);
    steps.push(after.board().clone());
    steps
}

/// A king "move" to a centre square: DGT's result signal as it reaches a PGN.
pub fn is_king_signal(san: &str) -> bool {
    let san = san.trim_end_matches(['+', '#']);
    matches!(
        san.strip_prefix('K').map(|s| s.trim_start_matches('x')),
        Some("d4" | "d5" | "e4" | "e5")
    )
}

/// Both kings set on centre squares: both light (d5, e4) = 1-0, both dark (d4, e5) = 0-1,
/// one of each = draw.
fn king_signal(board: &Board, result: &str) -> Vec<Board> {
    let (white_to, black_to) = match result {
        "1-0" => (Square::E4, Square::D5),
        "0-1" => (Square::D4, Square::E5),
        _ => (Square::E4, Square::E5),
    };
    let mut board = board.clone();
    let mut steps = Vec::new();
    for (color, to) in [(Color::White, white_to), (Color::Black, black_to)] {
        if let Some(from) = board.king_of(color) {
            let king = board.remove_piece_at(from).expect("king found");
            steps.push(board.clone());
            board.discard_piece_at(to);
            board.set_piece_at(to, king);
            steps.push(board.clone());
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::read_game;

    fn placements(readings: &[Timed]) -> Vec<String> {
        readings
            .iter()
            .filter_map(|t| match &t.reading {
                Reading::Placement(p) => Some(p.board_fen()),
                Reading::Clock(_) => None,
            })
            .collect()
    }

    fn presses(readings: &[Timed]) -> Vec<(u64, ClockReport)> {
        readings
            .iter()
            .filter_map(|t| match &t.reading {
                Reading::Clock(c) if c.pressed_by.is_some() => Some((t.game_ms, *c)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn castling_is_reported_king_first_then_rook() {
        let game = read_game(b"1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *", 1).unwrap();
        let boards = placements(&script(&game));
        let last = &boards[boards.len() - 4..];
        assert_eq!(
            last,
            [
                "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ3R",
                "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ2KR",
                "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ2K1",
                "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1",
            ]
        );
    }

    #[test]
    fn a_capture_lifts_then_removes_then_places() {
        let game = read_game(b"1. e4 d5 2. exd5 *", 1).unwrap();
        let boards = placements(&script(&game));
        let last = &boards[boards.len() - 3..];
        assert_eq!(
            last,
            [
                "rnbqkbnr/ppp1pppp/8/3p4/8/8/PPPP1PPP/RNBQKBNR",
                "rnbqkbnr/ppp1pppp/8/8/8/8/PPPP1PPP/RNBQKBNR",
                "rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR",
            ]
        );
    }

    #[test]
    fn presses_carry_the_recorded_clock_and_think_time_follows_it() {
        let pgn = br#"[TimeControl "900+10"]

1. e4 { [%clk 0:15:05] } 1... e5 { [%clk 0:14:50] } 2. Nf3 { [%clk 0:14:00] } *"#;
        let game = read_game(pgn, 1).unwrap();
        let presses = presses(&script(&game));
        assert_eq!(presses.len(), 3);
        // White: 900 + 10 - 905 = 5 s; Black: 900 + 10 - 890 = 20 s; White: 905 + 10 - 840 = 75 s.
        assert_eq!(presses[0].0, 5_000);
        assert_eq!(presses[1].0, 25_000);
        assert_eq!(presses[2].0, 100_000);
        assert_eq!(presses[2].1.white_ms, 840_000);
        assert_eq!(presses[2].1.black_ms, 890_000);
        assert_eq!(presses[2].1.pressed_by, Some(Side::White));
        assert_eq!(presses[2].1.running, Some(Side::Black));
    }

    #[test]
    fn a_dgt_king_signal_becomes_placements_without_a_press() {
        let game = read_game(b"[Result \"1-0\"]\n\n1. e4 e5 2. Ke4 1-0", 1).unwrap();
        let readings = script(&game);
        assert_eq!(presses(&readings).len(), 2);
        let boards = placements(&readings);
        assert_eq!(
            boards.last().unwrap(),
            "rnbq1bnr/pppp1ppp/8/3kp3/4K3/8/PPPP1PPP/RNBQ1BNR"
        );
    }

    #[test]
    fn promotion_sets_down_the_new_piece() {
        let fen = "[FEN \"8/4P3/8/8/8/8/k7/4K3 w - - 0 1\"]\n\n1. e8=N *";
        let game = read_game(fen.as_bytes(), 1).unwrap();
        let boards = placements(&script(&game));
        assert_eq!(boards.last().unwrap(), "4N3/8/8/8/8/8/k7/4K3");
        assert_eq!(boards[boards.len() - 2], "8/8/8/8/8/8/k7/4K3");
    }

    #[test]
    fn chess960_castling_lifts_king_and_rook_when_they_swap_squares() {
        let pgn = b"[Variant \"Chess960\"]\n[FEN \"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1\"]\n\n1. O-O *";
        let game = read_game(pgn, 1).unwrap();
        let boards = placements(&script(&game));
        let last = &boards[boards.len() - 4..];
        assert_eq!(
            last,
            [
                "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBR1RN",
                "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBR2N",
                "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBR1KN",
                "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRRKN",
            ]
        );
    }
}
