//! The `replay` source: a real game from PGN, reported as an e-board and a clock would.
//!
//! For each move: the piece lifted, the captured piece taken off, the piece set down
//! (castling king first, then the rook, as Art. 3.8.2 asks; a promotion as the new piece set
//! down), then the clock press with the mover's remaining time from the move's `[%clk]`.
//!
//! Think times ([`ThinkTimes`]): as a node beside the board measures them, what the clock
//! lost (given the time control's increment and any period added) where the broadcast's
//! `[%emt]` agrees within its stamping error, the `%emt` where the clock changed by more than
//! thinking explains (an arbiter's correction); or the `%emt` wherever there is one, to test
//! the hub's clock model independently of the readings. Without either (no `%clk`, a clock
//! that rose), a plausible think time.
//! The clock starts with the first period and its first increment, as digital clocks do.
//!
//! A game lost on time (`Termination "Time forfeit"`, or a decisive result whose loser is to
//! move with at most 1 s left) ends as a DGT clock ends it: the loser's time runs down to
//! zero, the flag shows and the clock stops.
//!
//! Every reading is stamped in game time (ms since the game started), so a replay at any
//! speed reports the think times of the real game.

use protocol::time_control::TimeControl;
use protocol::{ClockReport, Color as Side};
use shakmaty::{Board, Color, Move, Outcome, Position, Square};

use crate::pgn::PgnGame;
use crate::sensors;
use crate::source::{Reading, Timed};

/// Game time between two hand actions within one move.
const HAND_STEP_MS: u64 = 200;

/// Used when neither the `TimeControl` tag nor the clocks tell the initial time.
const DEFAULT_BASE_MS: u64 = 90 * 60 * 1000;

/// A loser with this much left at the last move, to move, lost on time.
const FLAG_MARGIN_MS: u64 = 1_000;

/// A broadcast stamps `%emt` when it sees the move on the board, not at the press: it lies up
/// to this far from what the clock lost (`hub/tests/real_clocks.rs` measures it).
pub const EMT_STAMPING_MS: u64 = 5_000;

/// Where a replayed move's think time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThinkTimes {
    /// As a node beside the board measures it, at the press: what the clock lost, unless the
    /// broadcast's `%emt` says the clock changed by more than the thinking (by more than
    /// [`EMT_STAMPING_MS`]), then the `%emt`.
    #[default]
    AsNode,
    /// The broadcast's `%emt` wherever it has one: independent of the clock's readings, so
    /// the hub's model of the clock is tested against them.
    Broadcast,
}

/// Every reading of `game`, with think times as a node measures them. `time_control` is the
/// game's real control when its `TimeControl` tag is missing or wrong (broadcast tags often
/// are).
pub fn script(game: &PgnGame, time_control: Option<&TimeControl>) -> Vec<Timed> {
    script_with(game, time_control, ThinkTimes::AsNode)
}

/// [`script`] with think times from `thinks`.
pub fn script_with(
    game: &PgnGame,
    time_control: Option<&TimeControl>,
    thinks: ThinkTimes,
) -> Vec<Timed> {
    let tc = time_control
        .cloned()
        .unwrap_or_else(|| game_time_control(game));
    let mut remaining = [tc.initial_ms(); 2]; // [white, black]
    let mut moves = [0u32; 2];
    let mut owed = [0u64; 2];
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
        moves[side] += 1;
        let previous = remaining[side];
        let increment = tc.increment_at_press(moves[side]);
        // A new period's time, owed until the recorded clock shows it (often a move or more
        // late in broadcasts).
        owed[side] += tc.added_after_move(moves[side]).unwrap_or(0);
        // A move the broadcast recorded no `%clk` for: the clock showed what the side's next
        // recorded reading and that move's think time say it must have (a hall's clock
        // always reports; an invented time would make the next move look like a correction).
        let clk = ply.clk_ms.or_else(|| {
            shown_before(game, &tc, index, moves[side], owed[side])
                .filter(|shown| *shown <= previous + increment)
        });
        let lost = |gain: u64| clk.and_then(|clk| (previous + gain).checked_sub(clk));
        // Without the owed period first: a clock that shows it late would otherwise read as a
        // move that took the whole period.
        let clock_lost = lost(increment).or_else(|| lost(increment + owed[side]));
        // As a node measures it, a reading filled in from the next one is the clock's: the
        // move took what the clock lost.
        let emt = ply
            .emt_ms
            .filter(|_| ply.clk_ms.is_some() || thinks == ThinkTimes::Broadcast);
        let think = match (emt, clock_lost) {
            (Some(emt), Some(lost))
                if thinks == ThinkTimes::AsNode && emt.abs_diff(lost) <= EMT_STAMPING_MS =>
            {
                lost
            }
            (Some(emt), _) => emt,
            (None, Some(lost)) => lost,
            // The clock rose by more than the rules give: how long the move took cannot be
            // told, and the rise is all the hub can see; a made-up think time would add to it.
            (None, None) if clk.is_some() => 0,
            (None, None) => plausible_think_ms(index),
        };
        remaining[side] = match clk {
            Some(clk) => {
                if clk > previous + increment {
                    owed[side] = 0; // the clock rose: the owed period shows
                }
                clk
            }
            // A made-up reading includes the owed period.
            None => (previous + increment + std::mem::take(&mut owed[side])).saturating_sub(think),
        };

        let hands = hand_boards(&position, &ply.m);
        // A premove takes no time: the hand's steps share what the move took.
        let step = HAND_STEP_MS.min(think / (hands.len() as u64 + 1));
        let press_at = now + think;
        for (i, board) in hands.iter().enumerate() {
            let before_press = step * (hands.len() - i) as u64;
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
    } else if lost_on_time(game, &position, remaining) {
        let loser = position.turn();
        let side = usize::from(loser == Color::Black);
        let flag_at = now + remaining[side];
        remaining[side] = 0;
        let mut flag = report(remaining, loser, None);
        flag.running = None; // the clock stops at the flag
        match loser {
            Color::White => flag.white_flag = true,
            Color::Black => flag.black_flag = true,
        }
        readings.push(Timed::at(flag_at, Reading::Clock(flag)));
    }
    readings
}

/// What the clock showed after the move at `index` (the mover's `n`-th), which has no
/// `%clk`: the mover's next recorded reading with the think times (`%emt`) and increments of
/// the mover's moves in between taken back. `None` where one of them is not recorded or a
/// period comes in between.
fn shown_before(game: &PgnGame, tc: &TimeControl, index: usize, n: u32, owed: u64) -> Option<u64> {
    if owed > 0 {
        return None;
    }
    let mut spent: i64 = 0;
    for (step, later) in game.plies.iter().skip(index + 2).step_by(2).enumerate() {
        let move_no = n + 1 + u32::try_from(step).ok()?;
        if tc.added_after_move(move_no).is_some() {
            return None;
        }
        let increment = i64::try_from(tc.increment_at_press(move_no)).ok()?;
        spent += i64::try_from(later.emt_ms?).ok()? - increment;
        if let Some(clk) = later.clk_ms {
            return u64::try_from(i64::try_from(clk).ok()? + spent).ok();
        }
    }
    None
}

/// When the clock is pressed in `script` (game ms): where the emulators' faults (`--…-at-ply`)
/// and a test's spells between moves are counted.
pub fn press_times(script: &[Timed]) -> Vec<u64> {
    script
        .iter()
        .filter(|t| matches!(&t.reading, Reading::Clock(c) if c.pressed_by.is_some()))
        .map(|t| t.game_ms)
        .collect()
}

/// `script` from the position after `ply` completed moves, as a node started then reports
/// it (a node swapped in mid-game): first the board as it stands and the clock as it shows,
/// then the rest of the game at its own times.
pub fn from_ply(script: Vec<Timed>, ply: usize) -> Vec<Timed> {
    if ply == 0 {
        return script;
    }
    let press = script
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(&t.reading, Reading::Clock(c) if c.pressed_by.is_some()))
        .nth(ply - 1)
        .map(|(i, _)| i);
    let Some(press) = press else {
        return Vec::new();
    };
    let standing = script[..press]
        .iter()
        .rev()
        .find(|t| matches!(t.reading, Reading::Placement(_)))
        .cloned();
    let mut clock = script[press].clone();
    if let Reading::Clock(report) = &mut clock.reading {
        report.pressed_by = None; // the node sees the clock as it stands
    }
    let mut rest: Vec<Timed> = standing.into_iter().collect();
    rest.push(clock);
    rest.extend(script.into_iter().skip(press + 1));
    rest
}

/// `script` as a board without a clock reports it: no clock readings, and each move's final
/// placement left standing at least `stand_ms` before the next hand touches a piece (later
/// readings move later if the real reply came sooner). After the last move the node reports
/// a heartbeat once the board has stood `stand_ms`, as a clockless node does, so the hub
/// sees the last move stand. `stand_ms` must exceed the hub's debounce interval.
pub fn without_clock(script: Vec<Timed>, stand_ms: u64) -> Vec<Timed> {
    let mut readings: Vec<Timed> = Vec::new();
    let mut shift = 0;
    // After a move's final placement: nothing changes on the board before this time.
    let mut stands_until: Option<u64> = None;
    for timed in script {
        match timed.reading {
            Reading::Clock(report) => {
                if report.pressed_by.is_some() {
                    stands_until = readings.last().map(|t| t.game_ms + stand_ms);
                }
            }
            reading => {
                let mut at = timed.game_ms + shift;
                if let Some(until) = stands_until.take().filter(|until| at < *until) {
                    shift += until - at;
                    at = until;
                }
                readings.push(Timed::at(at, reading));
            }
        }
    }
    if let Some(until) = stands_until {
        readings.push(Timed::at(until, Reading::Heartbeat));
    }
    readings
}

/// Whether the game was lost on time by the side to move at its end.
fn lost_on_time(game: &PgnGame, position: &shakmaty::Chess, remaining: [u64; 2]) -> bool {
    if position.outcome() != Outcome::Unknown {
        return false; // mate or stalemate ended it
    }
    let loser = position.turn();
    let lost = match loser {
        Color::White => game.result() == "0-1",
        Color::Black => game.result() == "1-0",
    };
    let time_forfeit = game.tag("Termination") == Some("Time forfeit");
    let last_clk = game
        .plies
        .iter()
        .rev()
        .nth(1)
        .and_then(|p| p.clk_ms)
        .unwrap_or(remaining[usize::from(loser == Color::Black)]);
    lost && (time_forfeit || last_clk <= FLAG_MARGIN_MS)
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

/// The game's time control from its `TimeControl` tag, in PGN syntax (`900+10`,
/// `40/5400+30:1800+30`) or in the words broadcasts use (`15 min. + 10 s. per move`,
/// [`TimeControl::parse_any`]), else the first period read off the first clock readings,
/// without increment.
fn game_time_control(game: &PgnGame) -> TimeControl {
    if let Some(tc) = game
        .tag("TimeControl")
        .and_then(|tc| TimeControl::parse_any(tc).ok())
    {
        return tc;
    }
    // The first readings already include one increment and some thinking: round the larger
    // of the two up to a whole minute.
    let first = game.plies.iter().take(2).filter_map(|p| p.clk_ms).max();
    let base = first.map_or(DEFAULT_BASE_MS, |ms| ms.div_ceil(60_000) * 60_000);
    format!("{}", base / 1000)
        .parse()
        .expect("whole seconds are a time control")
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
                _ => None,
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
    fn without_a_clock_each_move_stands_before_the_next_hand_comes() {
        let text = b"[Event \"t\"]\n\n1. e4 {[%clk 0:05:00]} e5 {[%clk 0:05:00]} 2. Nf3 {[%clk 0:05:00]} 1-0\n";
        let game = read_game(text, 1).unwrap();
        let clocked = script(&game, Some(&"300".parse().unwrap()));
        let readings = without_clock(clocked.clone(), 2_500);
        assert!(readings
            .iter()
            .all(|t| !matches!(t.reading, Reading::Clock(_))));
        assert_eq!(placements(&readings), placements(&clocked));
        // Premoves (no time used): every final placement still stands 2.5 s.
        let finals = ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"];
        let at = |fen: &str| {
            readings
                .iter()
                .position(|t| matches!(&t.reading, Reading::Placement(p) if p.board_fen() == fen))
                .unwrap()
        };
        let i = at(finals[0]);
        assert!(readings[i + 1].game_ms - readings[i].game_ms >= 2_500);
        let last = readings.last().unwrap();
        assert_eq!(last.reading, Reading::Heartbeat);
        assert_eq!(last.game_ms - readings[readings.len() - 2].game_ms, 2_500);
    }

    #[test]
    fn a_node_swapped_in_mid_game_reports_the_board_and_clock_as_they_stand() {
        let text = b"[Event \"t\"]\n\n1. e4 {[%clk 0:04:50]} e5 {[%clk 0:04:40]} 2. Nf3 {[%clk 0:04:30]} 1-0\n";
        let game = read_game(text, 1).unwrap();
        let whole = script(&game, Some(&"300".parse().unwrap()));
        let rest = from_ply(whole.clone(), 2);
        let after_two = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR";
        assert_eq!(placements(&rest)[0], after_two);
        match &rest[1].reading {
            Reading::Clock(c) => {
                assert_eq!(c.pressed_by, None);
                assert_eq!((c.white_ms, c.black_ms), (290_000, 280_000));
            }
            other => panic!("{other:?}"),
        }
        // Then only the third move, at its own time.
        assert_eq!(presses(&rest).len(), 1);
        assert_eq!(presses(&rest)[0], *presses(&whole).last().unwrap());
        assert!(from_ply(whole.clone(), 9).is_empty());
        assert_eq!(from_ply(whole.clone(), 0), whole);
    }

    #[test]
    fn castling_is_reported_king_first_then_rook() {
        let game = read_game(b"1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *", 1).unwrap();
        let boards = placements(&script(&game, None));
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
    fn think_time_comes_from_emt_where_the_broadcast_measured_it() {
        let pgn = br#"[TimeControl "900+10"]

1. e4 { [%clk 0:15:05] } { [%emt 0:00:07] } 1... e5 { [%clk 0:14:50] } *"#;
        let game = read_game(pgn, 1).unwrap();
        let presses = presses(&script_with(&game, None, ThinkTimes::Broadcast));
        assert_eq!(presses[0].0, 7_000, "emt, not the 15 s the clock lost");
        assert_eq!(presses[1].0, 37_000);
    }

    #[test]
    fn a_node_measures_what_the_clock_lost_unless_the_clock_changed_more() {
        // White's clock lost 15 s, the broadcast stamped 12 s (within its error): the node
        // measured 15 s. Black's lost 150 s, the broadcast says 20 s: an arbiter took 130 s
        // off (a penalty); the node measured the 20 s of thinking.
        let pgn = br#"[TimeControl "900+10"]

1. e4 { [%clk 0:15:05] } { [%emt 0:00:12] } 1... e5 { [%clk 0:12:40] } { [%emt 0:00:20] } *"#;
        let game = read_game(pgn, 1).unwrap();
        let presses = presses(&script(&game, None));
        assert_eq!(presses[0].0, 15_000);
        assert_eq!(presses[1].0 - presses[0].0, 20_000);
    }

    #[test]
    fn a_time_control_tag_in_words_starts_the_clock_and_gives_the_increment() {
        // Both wordings of the Women's World Rapid 2024 broadcast: 15 minutes + 10 s.
        for tag in [
            "15 min. + 10 s. per move",
            "15 minutes + 10 seconds increment per move, starting from move 1",
        ] {
            let pgn = format!(
                "[TimeControl \"{tag}\"]\n\n1. d4 {{ [%clk 0:15:08] }} 1... d5 {{ [%clk 0:15:02] }} *"
            );
            let game = read_game(pgn.as_bytes(), 1).unwrap();
            let readings = script(&game, None);
            let Reading::Clock(start) = &readings[1].reading else {
                panic!("the clock reports at the start");
            };
            assert_eq!(
                (start.white_ms, start.black_ms),
                (910_000, 910_000),
                "{tag}"
            );
            // Think times read off the clock with the increment: 910 + 10 - 908 = 12 s.
            let presses = presses(&readings);
            assert_eq!(presses[0].0, 12_000, "{tag}");
            assert_eq!(presses[1].0 - presses[0].0, 18_000, "{tag}");
        }
    }

    #[test]
    fn a_move_without_a_clock_time_shows_what_the_next_reading_says_it_must_have() {
        // White's 2nd move has no %clk; White's 3rd shows 0:14:30 after 25 s (+10): the
        // clock showed 14:45 after move 2.
        let pgn = br#"[TimeControl "900+10"]

1. e4 { [%clk 0:15:05] } { [%emt 0:00:15] } 1... e5 { [%clk 0:15:00] } { [%emt 0:00:20] }
2. Nf3 { [%emt 0:00:30] } 2... Nc6 { [%clk 0:14:50] } { [%emt 0:00:20] }
3. Bb5 { [%clk 0:14:30] } { [%emt 0:00:25] } *"#;
        let game = read_game(pgn, 1).unwrap();
        let presses = presses(&script(&game, None));
        assert_eq!(presses[2].1.white_ms, 885_000);
        assert_eq!(presses[2].0 - presses[1].0, 30_000, "905 + 10 - 885");
        assert_eq!(presses[4].1.white_ms, 870_000);
    }

    #[test]
    fn a_game_lost_on_time_ends_with_the_losers_flag() {
        // White to move with 1 s left, 0-1: the clock runs down and shows White's flag.
        let pgn = br#"[TimeControl "180+2"]
[Result "0-1"]

1. e4 { [%clk 0:00:01] } 1... e5 { [%clk 0:03:00] } 0-1"#;
        let game = read_game(pgn, 1).unwrap();
        let readings = script(&game, None);
        let last = readings.last().unwrap();
        let Reading::Clock(flag) = &last.reading else {
            panic!("the game ends with a clock reading");
        };
        assert!(flag.white_flag && !flag.black_flag);
        assert_eq!((flag.white_ms, flag.running), (0, None));
        let presses = presses(&readings);
        assert_eq!(last.game_ms, presses[1].0 + 1_000);
        // Had White won, nobody lost on time: the last reading is the last press.
        let won = String::from_utf8_lossy(pgn).replace("0-1", "1-0");
        let readings = script(&read_game(won.as_bytes(), 1).unwrap(), None);
        let last = &readings.last().unwrap().reading;
        assert!(matches!(last, Reading::Clock(c) if c.pressed_by.is_some()));
    }

    #[test]
    fn a_capture_lifts_then_removes_then_places() {
        let game = read_game(b"1. e4 d5 2. exd5 *", 1).unwrap();
        let boards = placements(&script(&game, None));
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
        let presses = presses(&script(&game, None));
        assert_eq!(presses.len(), 3);
        // The clock starts at 900 + 10 (the first increment); White: 910 + 10 - 905 = 15 s;
        // Black: 910 + 10 - 890 = 30 s; White: 905 + 10 - 840 = 75 s.
        assert_eq!(presses[0].0, 15_000);
        assert_eq!(presses[1].0, 45_000);
        assert_eq!(presses[2].0, 120_000);
        assert_eq!(presses[2].1.white_ms, 840_000);
        assert_eq!(presses[2].1.black_ms, 890_000);
        assert_eq!(presses[2].1.pressed_by, Some(Side::White));
        assert_eq!(presses[2].1.running, Some(Side::Black));
    }

    #[test]
    fn a_dgt_king_signal_becomes_placements_without_a_press() {
        let game = read_game(b"[Result \"1-0\"]\n\n1. e4 e5 2. Ke4 1-0", 1).unwrap();
        let readings = script(&game, None);
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
        let boards = placements(&script(&game, None));
        assert_eq!(boards.last().unwrap(), "4N3/8/8/8/8/8/k7/4K3");
        assert_eq!(boards[boards.len() - 2], "8/8/8/8/8/8/k7/4K3");
    }

    #[test]
    fn chess960_castling_lifts_king_and_rook_when_they_swap_squares() {
        let pgn = b"[Variant \"Chess960\"]\n[FEN \"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1\"]\n\n1. O-O *";
        let game = read_game(pgn, 1).unwrap();
        let boards = placements(&script(&game, None));
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
