//! What happens on an emulated board over a game, in game time.
//!
//! A PGN game comes through the replay script ([`crate::replay::script`]): each placement
//! becomes the field updates that change the board into it, each clock reading a clock
//! message with White on the left, and while a clock runs it sends a message each second
//! its display changes, as a DGT clock does. A recorded stream keeps its messages and the
//! pace its clock gives them ([`crate::dgt::recording::timed_messages`]).

use protocol::{ClockReport, Color, Placement, Square};

use crate::eboard::message::{ClockStatus, Face, Field, Message};
use crate::source::{Reading, Timed};

/// One thing that happens, at `game_ms`, after `ply` presses of the clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moment {
    pub game_ms: u64,
    pub ply: usize,
    pub message: Message,
}

/// The moments of a replay script (of a PGN game).
pub fn from_script(script: &[Timed]) -> Vec<Moment> {
    let mut moments = Vec::new();
    let mut placement = Placement::EMPTY;
    let mut ply = 0;
    // The clock as last set, when, and whose side ran (for the display each second).
    let mut clock: Option<(u64, ClockReport)> = None;
    let mut to_move = Color::White;
    for timed in script {
        if let Some((since, report)) = clock {
            moments.extend(ticks(since, &report, to_move, timed.game_ms, ply));
        }
        match &timed.reading {
            Reading::Placement(next) => {
                for square in Square::all() {
                    if placement.piece_at(square) != next.piece_at(square) {
                        moments.push(Moment {
                            game_ms: timed.game_ms,
                            ply,
                            message: Message::FieldUpdate {
                                field: Field::of(square),
                                piece: next.piece_at(square),
                            },
                        });
                    }
                }
                placement = *next;
            }
            // Scripts are games: their clocks' batteries last.
            Reading::Battery(_) => {}
            Reading::Clock(report) => {
                if report.pressed_by.is_some() {
                    ply += 1;
                }
                to_move = report.running.unwrap_or(to_move);
                moments.push(Moment {
                    game_ms: timed.game_ms,
                    ply,
                    message: Message::Clock(status(report, to_move)),
                });
                clock = Some((timed.game_ms, *report));
            }
            Reading::Heartbeat | Reading::Health(_) | Reading::Strangers(_) => {}
        }
    }
    moments
}

/// A recorded stream's messages at their game times; a press is a change of the side to
/// move.
pub fn from_recording(messages: Vec<(u64, Message)>) -> Vec<Moment> {
    let mut ply = 0;
    let mut to_move: Option<(bool, bool)> = None;
    messages
        .into_iter()
        .map(|(game_ms, message)| {
            if let Message::Clock(s) = &message {
                let now = (s.left_to_move, s.right_to_move);
                if now.0 != now.1 {
                    if to_move.is_some_and(|before| before != now) {
                        ply += 1;
                    }
                    to_move = Some(now);
                }
            }
            Moment {
                game_ms,
                ply,
                message,
            }
        })
        .collect()
}

/// The clock's display each whole second after `since` while one side runs, up to `until`.
fn ticks(since: u64, report: &ClockReport, to_move: Color, until: u64, ply: usize) -> Vec<Moment> {
    let Some(running) = report.running else {
        return Vec::new();
    };
    (1..)
        .map(|k: u64| since + k * 1000)
        .take_while(|at| *at < until)
        .map(|at| {
            let mut shown = *report;
            let elapsed = u32::try_from(at - since).unwrap_or(u32::MAX);
            match running {
                Color::White => shown.white_ms = shown.white_ms.saturating_sub(elapsed),
                Color::Black => shown.black_ms = shown.black_ms.saturating_sub(elapsed),
            }
            shown.pressed_by = None;
            Moment {
                game_ms: at,
                ply,
                message: Message::Clock(status(&shown, to_move)),
            }
        })
        .collect()
}

/// A clock reading as a DGT clock with White on the left sends it.
fn status(report: &ClockReport, to_move: Color) -> ClockStatus {
    let face = |ms: u32, flag: bool| Face {
        ms,
        flag,
        final_flag: flag && ms < 1000,
        time_per_move: false,
    };
    ClockStatus {
        left: face(report.white_ms, report.white_flag),
        right: face(report.black_ms, report.black_flag),
        running: report.running.is_some(),
        // The lever is up on the side that pressed last: the one not to move.
        right_high: to_move == Color::White,
        battery_low: false,
        left_to_move: to_move == Color::White,
        right_to_move: to_move == Color::Black,
        no_clock: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eboard::Adapter;

    const SCHOLARS: &[u8] = b"[Event \"t\"]\n[TimeControl \"300+2\"]\n\n1. e4 { [%clk 0:05:01] } e5 { [%clk 0:05:00] } 2. Qh5 { [%clk 0:04:55] } Nc6 { [%clk 0:04:58] } 3. Bc4 { [%clk 0:04:50] } Nf6 { [%clk 0:04:40] } 4. Qxf7# { [%clk 0:04:45] } 1-0\n";

    #[test]
    fn the_board_read_back_through_the_adapter_gives_the_script_s_placements_and_presses() {
        let game = crate::pgn::read_game(SCHOLARS, 1).unwrap();
        let script = crate::replay::script(&game, None);
        let moments = from_script(&script);
        let mut adapter = Adapter::new(None);
        let mut fields = Box::new([None; 64]);
        let mut placements = Vec::new();
        let mut presses = Vec::new();
        for moment in &moments {
            if let Message::FieldUpdate { field, piece } = &moment.message {
                fields[usize::from(field.index())] = *piece;
            }
            match adapter.message(&moment.message) {
                Some(Reading::Placement(p)) => placements.push(p),
                Some(Reading::Clock(c)) if c.pressed_by.is_some() => presses.push(c),
                _ => {}
            }
        }
        let final_script = script
            .iter()
            .rev()
            .find_map(|t| match t.reading {
                Reading::Placement(p) => Some(p),
                _ => None,
            })
            .unwrap();
        assert_eq!(placements.last(), Some(&final_script));
        let scripted: Vec<(u32, u32)> = script
            .iter()
            .filter_map(|t| match t.reading {
                Reading::Clock(c) if c.pressed_by.is_some() => Some((c.white_ms, c.black_ms)),
                _ => None,
            })
            .collect();
        let read: Vec<(u32, u32)> = presses.iter().map(|c| (c.white_ms, c.black_ms)).collect();
        assert_eq!(read, scripted, "every press, with the display at it");
        assert_eq!(moments.last().unwrap().ply, 7);
        // Between presses the running side's display goes down a second at a time.
        let ticks = moments
            .windows(2)
            .filter(|w| {
                matches!((&w[0].message, &w[1].message), (Message::Clock(a), Message::Clock(b))
                    if a.left.ms == b.left.ms + 1000 && a.right.ms == b.right.ms)
            })
            .count();
        assert!(ticks > 5, "{ticks} ticks of White's clock");
    }
}
