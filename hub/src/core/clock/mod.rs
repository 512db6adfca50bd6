//! One board's clock: what it shows, what it should show, and where the two part.
//!
//! - The clock's own readings are definitive (6.10.1). Between readings the running side is
//!   counted down from the last one, in the node's time.
//! - The hub's model of what the clock should show applies the time control to the moves the
//!   hub counted itself (never the clock's move counter, 6.12.2), with the think time the
//!   readings say each side's clock ran.
//! - At every press the two are reconciled. A difference is recorded with the evidence
//!   (6.10.2), and then the model follows the clock: the display is what counts.
//! - A difference is held until the player's next press shows whether it stays: a clock
//!   that keeps the changed time (or misses the increment again) confirms it, and only then
//!   is it raised for the arbiter; a clock that goes back to the time it should have shown
//!   had one wrong reading (a stale or misread display), a glitch for the technician; a
//!   period that shows meanwhile was only late.
//!
//! ```text
//!            recorded                  the player's next press
//!  press ──► Held ──┬── the same time kept / increment missing again ──► Confirmed (raised)
//!                   ├── back to the time it should have shown ─────────► Glitch
//!                   └── a late period or a single missed increment ────► Passed
//! ```
//!
//! What the real broadcasts taught (`shared/data/real/pgn-clocks`, see
//! `docs/laws-and-clocks.md`): digital clocks add the first increment before move 1; a new
//! period's time often shows one move after the move that earned it (a reporting delay, lila
//! issue 19227), sometimes several moves later (the clock's own move counter is off, which
//! is why the hub never uses it); arbiters correct clocks mid-game. So a period not yet
//! shown is "pending" for [`PERIOD_GRACE_MOVES`] and only then a deviation, and any other
//! jump is a clock adjustment the arbiter should know about.
//!
//! - [`model`]: the time control applied to the moves the hub counted.
//! - [`reconcile`]: the reading at each press against the model: deviations, held until
//!   the player's next press confirms them.

mod model;
mod reconcile;
#[cfg(test)]
mod tests;

use protocol::time_control::{Bonus, TimeControl};
use protocol::{ClockReport, NodeMs};
use serde::Serialize;
use shakmaty::{ByColor, Color};

pub use self::model::Model;
use self::model::Owed;
pub use self::reconcile::{Adjustment, Deviation, DeviationKind, Outcome};
use super::sensed;
use super::side::Side;

/// Two readings agree within this: the display's resolution (whole seconds) plus the node's
/// sampling of the press (the DGT clock reports about once a second).
pub const READING_TOLERANCE_MS: u64 = 2_000;

/// Whether two times agree within [`READING_TOLERANCE_MS`].
fn near(a: u64, b: u64) -> bool {
    a.abs_diff(b) <= READING_TOLERANCE_MS
}

/// Whether a signed difference is nothing within [`READING_TOLERANCE_MS`].
fn near_signed(difference_ms: i64) -> bool {
    difference_ms.unsigned_abs() <= READING_TOLERANCE_MS
}

/// Moves a new period's time may show late before it counts as not added. Broadcasts show
/// it one move late as a rule (the clock adds the time after the press it reported), and
/// often a few more when the clock's move counter is behind the game and catches up: of
/// the late periods in the real broadcasts 92% (Grand Swiss 2025) to 97% (World Cup 2025)
/// showed within five moves. Not shown by then (the next press confirms it), the counter
/// will not catch up by itself: the arbiter adjusts times and counter (6.10.2).
pub const PERIOD_GRACE_MOVES: u32 = 4;

/// Art. 8.4: under five minutes in a period, without an increment of 30 s or more, a player
/// need not record the moves.
pub const TIME_TROUBLE_MS: u64 = 5 * 60 * 1000;
const TIME_TROUBLE_INCREMENT_MS: u64 = 30 * 1000;

/// A clock report as the core keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub at: NodeMs,
    pub ms: ByColor<u64>,
    pub running: Option<Color>,
    pub flags: ByColor<bool>,
}

impl Reading {
    pub fn from_report(at: NodeMs, report: &ClockReport) -> Reading {
        Reading {
            at,
            ms: ByColor {
                white: u64::from(report.white_ms),
                black: u64::from(report.black_ms),
            },
            running: report.running.map(sensed::color),
            flags: ByColor {
                white: report.white_flag,
                black: report.black_flag,
            },
        }
    }

    /// What the clock shows at `now`: the running side counted down since the reading.
    pub fn shown_at(&self, now: NodeMs) -> ByColor<u64> {
        let mut ms = self.ms;
        if let Some(side) = self.running {
            ms[side] = ms[side].saturating_sub(now.0.saturating_sub(self.at.0));
        }
        ms
    }
}

/// What the reconciliation made of one completed move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The clock shows what the model says, within [`READING_TOLERANCE_MS`].
    Agrees,
    /// The clock does not show a new period's time yet.
    PeriodPending,
    IncrementMissing,
    /// The mover's flag was down at the press: a clock adds no increment after a flag fall.
    Flagged,
    /// The clock changed by something no rule explains; the model follows it.
    Adjusted,
    /// No reading at the press (a move that ended the game, a silent clock).
    NoReading,
    /// No time control: nothing to compare with.
    Unmodelled,
}

/// One completed move, as the clock and the model saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MoveCheck {
    pub by: Side,
    pub expected_ms: Option<u64>,
    pub shown_ms: Option<u64>,
    pub verdict: Verdict,
    /// How long the mover's clock ran for this move, by the readings (a pause not counted);
    /// `None` when no clock reported.
    pub used_ms: Option<u64>,
}

impl MoveCheck {
    /// The mover's time after the move as the hub shows it: what the clock showed at the
    /// press, which is definitive (6.10.1); the time control's model only where the clock
    /// reported nothing (a move that ended the game before its press). `None` where neither
    /// is known.
    pub fn time_ms(&self) -> Option<u64> {
        self.shown_ms.or(self.expected_ms)
    }
}

/// Something the clock did that others may act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockEvent {
    Deviation(Deviation),
    /// `side`'s flag is down (6.1). `first` is `None` when both fell between two readings,
    /// so the order cannot be established (Guidelines III.3.1).
    FlagFall {
        side: Color,
        at: NodeMs,
        first: Option<bool>,
    },
    /// Both clocks stopped during the game: a player called the arbiter (6.11.2).
    Paused {
        since: NodeMs,
    },
    Resumed {
        paused_ms: u64,
    },
}

/// Everything the hub knows about one board's clock.
#[derive(Debug, Clone, Default)]
pub struct BoardClock {
    model: Option<Model>,
    reading: Option<Reading>,
    /// What the clock showed when it first reported: the times the game started with (a
    /// digital clock shows the first increment before move 1).
    first_shown: Option<ByColor<u64>>,
    /// How long each side's clock has run since its last completed move.
    ran: ByColor<u64>,
    /// Node time up to which `ran` is charged.
    charged_until: NodeMs,
    checks: Vec<MoveCheck>,
    deviations: Vec<Deviation>,
    /// When each flag was first seen, and whether it was the first to fall.
    flags: ByColor<Option<(NodeMs, Option<bool>)>>,
    paused_since: Option<NodeMs>,
    paused_total_ms: u64,
    /// Time an arbiter is to add or take off (a penalty, a correction), not yet shown.
    adjustment_due: ByColor<Option<Adjustment>>,
    /// Per side, the index in `deviations` of the one waiting for the player's next press.
    held: ByColor<Option<usize>>,
    /// A missing increment was confirmed for the side: it is not recorded again.
    increment_missing_confirmed: ByColor<bool>,
    /// Seen reporting between presses, at most [`STREAM_GAP_MS`] apart.
    streams: bool,
}

/// Readings of a running clock at most this far apart (node time) show a clock that reports
/// as it runs.
pub const STREAM_GAP_MS: u64 = 2_000;

impl BoardClock {
    pub fn new(tc: Option<TimeControl>) -> BoardClock {
        BoardClock {
            model: tc.map(Model::new),
            ..BoardClock::default()
        }
    }

    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    pub fn reading(&self) -> Option<&Reading> {
        self.reading.as_ref()
    }

    /// What the clock showed when it first reported; the model's start where no clock
    /// reported yet.
    pub fn first_shown(&self) -> Option<ByColor<u64>> {
        self.first_shown.or_else(|| {
            let start = self.model.as_ref()?.tc.initial_ms();
            Some(ByColor::new_with(|_| start))
        })
    }

    /// Per completed move: the model's time for the mover and what the clock showed.
    pub fn checks(&self) -> &[MoveCheck] {
        &self.checks
    }

    pub fn deviations(&self) -> &[Deviation] {
        &self.deviations
    }

    /// Readings the clock showed once and took back at the player's next press (each a
    /// pair of [`Outcome::Glitch`] deviations): a stale or misread display, for the
    /// technician.
    pub fn glitches(&self) -> usize {
        let glitched = self
            .deviations
            .iter()
            .filter(|d| d.outcome == Outcome::Glitch)
            .count();
        glitched / 2
    }

    /// When `side`'s flag was seen down.
    pub fn flag(&self, side: Color) -> Option<NodeMs> {
        self.flags[side].map(|(at, _)| at)
    }

    /// Whose flag fell first: `None` if none fell or both fell unseen in between readings.
    pub fn first_flag(&self) -> Option<Color> {
        Color::ALL.into_iter().find(|side| {
            self.flags[*side].is_some_and(|(_, first)| first == Some(true))
                || (self.flags[*side].is_some() && self.flags[side.other()].is_none())
        })
    }

    pub fn paused_since(&self) -> Option<NodeMs> {
        self.paused_since
    }

    pub fn paused_total_ms(&self) -> u64 {
        self.paused_total_ms
    }

    /// An arbiter is to add `adjustment.ms` to `side`'s clock on top of anything already due
    /// (the penalty of an illegal move, 7.5.5): a jump by that much is then expected, not a
    /// deviation.
    pub fn expect_adjustment(&mut self, side: Color, adjustment: Adjustment) {
        let due = self.adjustment_due[side].map_or(0, |a| a.ms);
        self.adjustment_due[side] = Some(Adjustment {
            ms: due + adjustment.ms,
            ..adjustment
        });
    }

    /// The arbiter decided what `side`'s clock is to gain: this replaces what was due (his
    /// decision includes any penalty the hub proposed).
    pub fn set_adjustment(&mut self, side: Color, adjustment: Adjustment) {
        self.adjustment_due[side] = Some(adjustment);
    }

    /// The adjustment still expected on `side`'s clock.
    pub fn adjustment_due(&self, side: Color) -> Option<Adjustment> {
        self.adjustment_due[side]
    }

    /// The arbiter reinstated the position after `ply` completed moves, `moves` of them by
    /// each side: the model counts from there. The clock shows what the arbiter set; the
    /// next press reconciles.
    pub fn reinstate(&mut self, ply: usize, moves: ByColor<u32>) {
        self.checks.truncate(ply);
        if let Some(model) = &mut self.model {
            model.moves = moves;
            model.owed = ByColor::default();
        }
        self.ran = ByColor::default();
    }

    /// A move completed without a press (it ended the game, 6.2.1): the model counts it.
    pub fn move_without_press(&mut self, by: Color, at: NodeMs) {
        self.run_until(at);
        let (expected, used_ms) = self.count_move(by);
        self.checks.push(MoveCheck {
            by: by.into(),
            expected_ms: expected,
            shown_ms: None,
            verdict: if expected.is_some() {
                Verdict::NoReading
            } else {
                Verdict::Unmodelled
            },
            used_ms,
        });
    }

    /// The clock reports. `completed` is the side whose move this press completed, as the
    /// hub's rules decided; `playing` is false once the game is over (a flag after mate does
    /// not count, 6.2.1 / 5.1.1).
    pub fn report(
        &mut self,
        at: NodeMs,
        report: &ClockReport,
        completed: Option<Color>,
        playing: bool,
    ) -> Vec<ClockEvent> {
        let reading = Reading::from_report(at, report);
        let mut events = Vec::new();
        self.run_until(at);
        if self.reading.is_none() && self.checks.is_empty() {
            events.extend(self.check_base(&reading));
        }
        self.first_shown.get_or_insert(reading.ms);
        let presser = report.pressed_by.map(sensed::color);
        let awaiting = self
            .checks
            .last()
            .filter(|c| c.verdict == Verdict::NoReading && Some(c.by) == presser.map(Side::from))
            .copied();
        if let Some(by) = completed {
            let (expected, used_ms) = self.count_move(by);
            let (check, raised) = self.check_press(by, expected, &reading);
            self.checks.push(MoveCheck { used_ms, ..check });
            events.extend(raised);
            events.extend(self.check_standing(by.other(), &reading));
        } else if let Some(last) = awaiting {
            // The press after a move that ended the game (6.2.1): its reading belongs to it.
            let (check, raised) = self.check_press(last.by.into(), last.expected_ms, &reading);
            // The mover's clock ran on until the press.
            let ran_on = std::mem::take(&mut self.ran[Color::from(last.by)]);
            *self.checks.last_mut().expect("awaiting a press") = MoveCheck {
                used_ms: last.used_ms.map(|used| used + ran_on),
                ..check
            };
            events.extend(raised);
        } else if let Some(side) = presser {
            // A press the rules did not count (an illegal move, 7.5): the clock is what it
            // is; follow it and let the arbiter restore it.
            if let Some(model) = &mut self.model {
                model.remaining = reading.ms;
            }
            self.ran[side] = 0;
        }
        if playing {
            events.extend(self.check_flags(&reading));
            events.extend(self.check_pause(&reading));
        }
        let between_presses = presser.is_none()
            && reading.running.is_some()
            && self
                .reading
                .is_some_and(|last| last.running == reading.running);
        if between_presses
            && self
                .reading
                .is_some_and(|last| at.0.saturating_sub(last.at.0) <= STREAM_GAP_MS)
        {
            self.streams = true;
        }
        self.reading = Some(reading);
        events
    }

    /// Whether this clock reports while it runs (a DGT clock on a board sends its times
    /// every second), not only at presses: only then is its silence news.
    pub fn streams(&self) -> bool {
        self.streams
    }

    /// Charges the time since the last charge to the side whose clock ran by the last
    /// reading.
    fn run_until(&mut self, at: NodeMs) {
        if let Some(side) = self.running() {
            self.ran[side] += at.0.saturating_sub(self.charged_until.0);
        }
        self.charged_until = self.charged_until.max(at);
    }

    /// Counts `by`'s move in the model: the model's time for the mover after it, and how long
    /// the mover's clock ran for it (`None` before any reading).
    fn count_move(&mut self, by: Color) -> (Option<u64>, Option<u64>) {
        let used = std::mem::take(&mut self.ran[by]);
        let used_ms = self.reading.is_some().then_some(used);
        let Some(model) = self.model.as_mut() else {
            return (None, used_ms);
        };
        if let Some(added) = model.complete_move(by, used) {
            let after_move = model.moves[by];
            model.owed[by] = Some(Owed {
                ms: added,
                after_move,
                raised: false,
            });
        }
        (Some(model.remaining[by]), used_ms)
    }

    /// Whether `side` is in time trouble at `now` (8.4): under five minutes in the period,
    /// without an increment of 30 s or more.
    pub fn time_trouble(&self, side: Color, now: NodeMs) -> bool {
        self.under_limit(side, now, TIME_TROUBLE_MS)
    }

    /// Whether `side` has under `limit_ms` at `now` in a period without an increment of
    /// 30 s or more: [`BoardClock::time_trouble`] with another limit.
    pub fn under_limit(&self, side: Color, now: NodeMs, limit_ms: u64) -> bool {
        let Some(shown) = self.shown_at(now) else {
            return false;
        };
        let increment = self
            .model
            .as_ref()
            .map_or(0, |m| m.bonus(side).increment_ms());
        shown[side] < limit_ms && increment < TIME_TROUBLE_INCREMENT_MS
    }

    /// What the clock shows at `now`, counted down from the last reading.
    pub fn shown_at(&self, now: NodeMs) -> Option<ByColor<u64>> {
        self.reading.map(|r| {
            if self.paused_since.is_some() {
                r.ms
            } else {
                r.shown_at(now)
            }
        })
    }

    /// The side whose clock runs, if one does.
    pub fn running(&self) -> Option<Color> {
        self.reading.and_then(|r| r.running)
    }

    /// When the running side's flag will fall if the player keeps thinking: ms from `now`
    /// (a delay not yet used up counts before the main time).
    pub fn time_to_flag(&self, now: NodeMs) -> Option<(Color, u64)> {
        let side = self.running()?;
        if self.flags[side].is_some() || self.paused_since.is_some() {
            return None;
        }
        let shown = self.shown_at(now)?[side];
        let delay = match self.model.as_ref().map(|m| m.bonus(side)) {
            Some(Bonus::Delay(d)) => d.saturating_sub(self.ran[side]),
            _ => 0,
        };
        Some((side, shown + delay))
    }
}
