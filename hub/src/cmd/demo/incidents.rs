//! What the demo hall lets happen at a few boards, so that arbiters' alerts show: a flag
//! falls, a player moves illegally, a player stops the clock, a node drops out. Each takes a
//! board's real game as the replay source reports it and changes it after a given move.

use board_node::source::{Reading, Timed};
use protocol::{ClockReport, Color as SensedColor};
use shakmaty::{Board, Color, Square};

use crate::core::sensed;

/// The index of the press that completes move `ply` (1-based).
fn press(script: &[Timed], ply: usize) -> Option<usize> {
    script
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(&t.reading, Reading::Clock(c) if c.pressed_by.is_some()))
        .nth(ply.checked_sub(1)?)
        .map(|(i, _)| i)
}

fn clock_at(script: &[Timed], i: usize) -> ClockReport {
    match &script[i].reading {
        Reading::Clock(report) => *report,
        _ => unreachable!("a press is a clock reading"),
    }
}

fn ms(report: &mut ClockReport, side: SensedColor) -> &mut u32 {
    match side {
        SensedColor::White => &mut report.white_ms,
        SensedColor::Black => &mut report.black_ms,
    }
}

/// The later readings `by` ms later.
fn shifted(rest: &[Timed], by: u64) -> impl Iterator<Item = Timed> + '_ {
    rest.iter()
        .map(move |t| Timed::at(t.game_ms + by, t.reading.clone()))
}

/// After move `ply` the player to move thinks until the flag falls (6.9).
pub fn flag_fall_after(script: Vec<Timed>, ply: usize) -> Vec<Timed> {
    let Some(i) = press(&script, ply) else {
        return script;
    };
    let mut flag = clock_at(&script, i);
    let Some(side) = flag.running else {
        return script;
    };
    let left = u64::from(*ms(&mut flag, side));
    *ms(&mut flag, side) = 0;
    flag.running = None;
    flag.pressed_by = None;
    match side {
        SensedColor::White => flag.white_flag = true,
        SensedColor::Black => flag.black_flag = true,
    }
    let at = script[i].game_ms + left;
    let mut out = script[..=i].to_vec();
    out.push(Timed::at(at, Reading::Clock(flag)));
    out
}

/// After move `ply` a player stops both clocks for `pause_ms` to call the arbiter (6.11.2),
/// then the game goes on.
pub fn pause_after(script: Vec<Timed>, ply: usize, pause_ms: u64) -> Vec<Timed> {
    let Some(i) = press(&script, ply) else {
        return script;
    };
    let pressed = clock_at(&script, i);
    let Some(side) = pressed.running else {
        return script;
    };
    let t = script[i].game_ms;
    let mut stopped = pressed;
    *ms(&mut stopped, side) = ms(&mut stopped, side).saturating_sub(2_000);
    stopped.running = None;
    stopped.pressed_by = None;
    let mut resumed = stopped;
    resumed.running = Some(side);
    let mut out = script[..=i].to_vec();
    out.push(Timed::at(t + 2_000, Reading::Clock(stopped)));
    out.push(Timed::at(t + 2_000 + pause_ms, Reading::Clock(resumed)));
    out.extend(shifted(&script[i + 1..], 2_000 + pause_ms));
    out
}

/// After move `ply` the player to move takes his king two ranks and presses (7.5.1); the
/// players put the position back and the game goes on as it was played.
pub fn illegal_move_after(script: Vec<Timed>, ply: usize) -> Vec<Timed> {
    let Some(i) = press(&script, ply) else {
        return script;
    };
    let pressed = clock_at(&script, i);
    let Some(side) = pressed.running else {
        return script;
    };
    let Some(board) = script[..i].iter().rev().find_map(|t| match &t.reading {
        Reading::Placement(p) => Some(sensed::board(p)),
        _ => None,
    }) else {
        return script;
    };
    let color = match side {
        SensedColor::White => Color::White,
        SensedColor::Black => Color::Black,
    };
    let Some(illegal) = king_two_ranks(&board, color) else {
        return script;
    };
    let t = script[i].game_ms;
    let mut press = pressed;
    *ms(&mut press, side) = ms(&mut press, side).saturating_sub(3_000);
    press.pressed_by = Some(side);
    press.running = Some(match side {
        SensedColor::White => SensedColor::Black,
        SensedColor::Black => SensedColor::White,
    });
    let mut out = script[..=i].to_vec();
    out.push(Timed::at(
        t + 1_500,
        Reading::Placement(board_node::sensors::placement(&illegal)),
    ));
    out.push(Timed::at(t + 3_000, Reading::Clock(press)));
    out.push(Timed::at(
        t + 6_000,
        Reading::Placement(board_node::sensors::placement(&board)),
    ));
    out.extend(shifted(&script[i + 1..], 6_000));
    out
}

/// `board` with `color`'s king moved two ranks to an empty square: never a legal move.
fn king_two_ranks(board: &Board, color: Color) -> Option<Board> {
    let king = board.king_of(color)?;
    let target = Square::ALL.into_iter().find(|s| {
        board.piece_at(*s).is_none()
            && s.rank().distance(king.rank()) == 2
            && s.file().distance(king.file()) <= 1
    })?;
    let mut moved = board.clone();
    let piece = moved.remove_piece_at(king)?;
    moved.set_piece_at(target, piece);
    Some(moved)
}

/// The game time of the press that completes move `ply`, if the game gets that far.
pub fn time_of(script: &[Timed], ply: usize) -> Option<u64> {
    press(script, ply).map(|i| script[i].game_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::effect::Effect;
    use crate::core::hall::Hall;
    use crate::core::record::Record;
    use crate::core::time::HubMs;
    use protocol::{BoardNo, NodeMs, Seq, Uplink};

    fn game() -> Vec<Timed> {
        let games = board_node::pgn::read_games(super::super::GAMES).unwrap();
        board_node::replay::script(&games[0], None)
    }

    /// What the hall makes of a script at board 1.
    fn effects(script: &[Timed]) -> Vec<Effect> {
        let mut hall = Hall::new(crate::core::laws::Rules::default())
            .with_time_control(Some("900+10".parse().unwrap()));
        let mut all = Vec::new();
        for (n, t) in script.iter().enumerate() {
            let event = Uplink::new(
                BoardNo(1),
                Seq(n as u64 + 1),
                NodeMs(t.game_ms),
                t.reading.body(),
            );
            let record = Record {
                at: HubMs(t.game_ms),
                event,
            };
            let _ = hall.admit(record.at, &record.event);
            all.extend(hall.apply(&record));
        }
        all
    }

    fn count(effects: &[Effect], what: impl Fn(&Effect) -> bool) -> usize {
        effects.iter().filter(|e| what(e)).count()
    }

    #[test]
    fn each_incident_is_what_the_hall_sees() {
        use crate::core::clock::ClockEvent;
        use crate::core::game::GameEvent;
        let flag = effects(&flag_fall_after(game(), 20));
        assert_eq!(
            count(&flag, |e| matches!(
                e,
                Effect::Clock {
                    event: ClockEvent::FlagFall { .. },
                    ..
                }
            )),
            1
        );
        let paused = effects(&pause_after(game(), 20, 30_000));
        assert_eq!(
            count(&paused, |e| matches!(
                e,
                Effect::Clock {
                    event: ClockEvent::Paused { .. },
                    ..
                }
            )),
            1
        );
        let illegal = effects(&illegal_move_after(game(), 20));
        assert_eq!(
            count(&illegal, |e| matches!(
                e,
                Effect::Game {
                    event: GameEvent::IllegalMove(_),
                    ..
                }
            )),
            1
        );
        // And the game is played to its end after the illegal move and the pause.
        let moves = |effects: &[Effect]| {
            count(effects, |e| {
                matches!(
                    e,
                    Effect::Game {
                        event: GameEvent::MoveCompleted { .. },
                        ..
                    }
                )
            })
        };
        let whole = moves(&effects(&game()));
        assert_eq!(moves(&illegal), whole);
        assert_eq!(moves(&paused), whole);
        assert_eq!(moves(&flag), 20);
    }
}
