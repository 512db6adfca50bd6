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
//! What the real broadcasts taught (`shared/data/real/pgn-clocks`, see the README): digital
//! clocks add the first increment before move 1; a new period's time often shows one move
//! after the move that earned it (a reporting delay, lila issue 19227), sometimes several
//! moves later (the clock's own move counter is off, which is why the hub never uses it);
//! arbiters correct clocks mid-game. So a period not yet shown is "pending" for
//! [`PERIOD_GRACE_MOVES`] and only then a deviation, and any other jump is a clock
//! adjustment the arbiter should know about.

use protocol::time_control::{Bonus, TimeControl};
use protocol::{ClockReport, NodeMs};
use serde::Serialize;
use shakmaty::{ByColor, Color};

use super::sensed;

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

/// Time the model gave that the clock has not shown yet: a new period's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owed {
    ms: u64,
    /// The player's move that earned it.
    after_move: u32,
    raised: bool,
}

/// The time control applied to the moves the hub counted (6.12.2).
#[derive(Debug, Clone)]
pub struct Model {
    tc: TimeControl,
    remaining: ByColor<u64>,
    moves: ByColor<u32>,
    owed: ByColor<Option<Owed>>,
}

impl Model {
    pub fn new(tc: TimeControl) -> Model {
        let start = tc.initial_ms();
        Model {
            tc,
            remaining: ByColor::new_with(|_| start),
            moves: ByColor::default(),
            owed: ByColor::default(),
        }
    }

    pub fn time_control(&self) -> &TimeControl {
        &self.tc
    }

    pub fn remaining(&self, side: Color) -> u64 {
        self.remaining[side]
    }

    /// The period `side`'s next move is played in (0 = the first).
    pub fn period(&self, side: Color) -> usize {
        self.tc.period_of_move(self.moves[side] + 1).0
    }

    /// The bonus of the period `side`'s next move is played in.
    pub fn bonus(&self, side: Color) -> Bonus {
        self.tc.period_of_move(self.moves[side] + 1).1.bonus
    }

    /// Whether a period the model added for `side` has not shown on the clock yet.
    pub fn period_pending(&self, side: Color) -> bool {
        self.owed[side].is_some()
    }

    /// Moves `side` must still complete in this period; `None` in sudden death.
    pub fn moves_to_control(&self, side: Color) -> Option<u32> {
        let (index, _) = self.tc.period_of_move(self.moves[side] + 1);
        let periods = self.tc.periods();
        let mut total = 0;
        for period in &periods[..=index] {
            total += period.moves?;
        }
        Some(total - self.moves[side])
    }

    /// `side` completed a move its clock ran `used_ms` for: Fischer, US delay or Bronstein
    /// (6.3), then the next period's time after the move that completes a period.
    /// Returns the time of a period added.
    pub fn complete_move(&mut self, side: Color, used_ms: u64) -> Option<u64> {
        let n = self.moves[side] + 1;
        let (_, period) = self.tc.period_of_move(n);
        let left = self.remaining[side];
        let after = match period.bonus {
            Bonus::None | Bonus::Increment(_) => left.saturating_sub(used_ms),
            // US / simple delay: the main time runs only after the delay (6.3.2).
            Bonus::Delay(delay) => left.saturating_sub(used_ms.saturating_sub(delay)),
            // Bronstein: the time used comes back, up to the delay.
            Bonus::Bronstein(back) => left.saturating_sub(used_ms) + used_ms.min(back),
        };
        // Fischer: the increment for the next move comes with the press (6.3.1), as the
        // clock gave the first one before move 1.
        let after = after + self.tc.increment_at_press(n);
        let added = self.tc.added_after_move(n);
        self.remaining[side] = after + added.unwrap_or(0);
        self.moves[side] = n;
        added
    }
}

/// How a clock differs from what the time control says it should show (6.10.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviationKind {
    /// Before the first move the clock shows other times than the time control gives.
    WrongBase,
    /// The press added no increment.
    IncrementMissing,
    /// The next period's time was not added after the move that completed the period, and
    /// has not shown within [`PERIOD_GRACE_MOVES`].
    PeriodNotAdded,
    /// The clock changed by an amount no rule explains: an arbiter's correction, a reset, a
    /// wrongly set delay.
    ClockAdjusted,
    /// The time added to the opponent after an illegal move or a wrong claim (7.5.5, 9.5)
    /// shows on the clock.
    PenaltyApplied,
    /// An arbiter's correction of a wrongly set clock (6.10.2), entered as a decision, shows
    /// on the clock.
    CorrectionApplied,
}

/// A change of a clock's time the hub expects because the Laws or the arbiter prescribe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjustment {
    pub ms: i64,
    /// [`DeviationKind::PenaltyApplied`] or [`DeviationKind::CorrectionApplied`].
    pub kind: DeviationKind,
    pub article: &'static str,
}

/// What became of a recorded deviation at the player's next press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Waiting for the player's next press.
    Held,
    /// The clock kept it: raised for the arbiter.
    Confirmed,
    /// The clock went back to the time it should have shown: one wrong reading.
    Glitch,
    /// A period shown late, or an increment missed once: for the record.
    Passed,
}

/// A deviation, recorded once, with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deviation {
    pub kind: DeviationKind,
    #[serde(serialize_with = "super::serialize_color")]
    pub side: Color,
    /// The side's completed moves when it was seen.
    pub moves: u32,
    pub expected_ms: u64,
    pub shown_ms: u64,
    pub at: u64,
    pub article: &'static str,
    pub outcome: Outcome,
}

impl Deviation {
    /// What the clock showed minus what it should have shown (positive: the player has
    /// more time than the time control gives).
    pub fn difference_ms(&self) -> i64 {
        let signed = |ms: u64| i64::try_from(ms).unwrap_or(i64::MAX);
        signed(self.shown_ms) - signed(self.expected_ms)
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
    #[serde(serialize_with = "super::serialize_color")]
    pub by: Color,
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

/// Where a flag fall was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagSource {
    /// The clock's flag, or a zero reading.
    Clock,
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

    /// Whether `shown` is `expected` plus the adjustment due on `side`; takes it if so.
    fn take_adjustment(&mut self, side: Color, shown: u64, expected: u64) -> Option<Adjustment> {
        let due = self.adjustment_due[side]
            .filter(|due| near(shown, expected.saturating_add_signed(due.ms)))?;
        self.adjustment_due[side] = None;
        Some(due)
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
            by,
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
            .filter(|c| c.verdict == Verdict::NoReading && Some(c.by) == presser)
            .copied();
        if let Some(by) = completed {
            let (expected, used_ms) = self.count_move(by);
            let (check, raised) = self.check_press(by, expected, &reading);
            self.checks.push(MoveCheck { used_ms, ..check });
            events.extend(raised);
            events.extend(self.check_standing(by.other(), &reading));
        } else if let Some(last) = awaiting {
            // The press after a move that ended the game (6.2.1): its reading belongs to it.
            let (check, raised) = self.check_press(last.by, last.expected_ms, &reading);
            // The mover's clock ran on until the press.
            let ran_on = std::mem::take(&mut self.ran[last.by]);
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

    fn check_base(&mut self, reading: &Reading) -> Vec<ClockEvent> {
        let Some(model) = &mut self.model else {
            return Vec::new();
        };
        let mut deviations = Vec::new();
        for side in Color::ALL {
            let expected = model.remaining[side];
            if !near(reading.ms[side], expected) {
                deviations.push(Deviation {
                    kind: DeviationKind::WrongBase,
                    side,
                    moves: 0,
                    expected_ms: expected,
                    shown_ms: reading.ms[side],
                    at: reading.at.0,
                    article: "6.10.2",
                    outcome: Outcome::Held,
                });
                model.remaining[side] = reading.ms[side];
            }
        }
        self.raise(deviations)
    }

    /// The mover's time at the press that completed `by`'s move, checked against the
    /// model's `expected` (`None` without a time control).
    fn check_press(
        &mut self,
        by: Color,
        expected: Option<u64>,
        reading: &Reading,
    ) -> (MoveCheck, Vec<ClockEvent>) {
        let shown = reading.ms[by];
        if self.model.is_none() {
            let check = MoveCheck {
                by,
                expected_ms: None,
                shown_ms: Some(shown),
                verdict: Verdict::Unmodelled,
                used_ms: None,
            };
            return (check, Vec::new());
        }
        let expected = expected.unwrap_or(shown);
        // An adjustment due is taken only by a clock that does not show the model's time.
        let adjusted = if near(shown, expected) {
            None
        } else {
            self.take_adjustment(by, shown, expected)
        };
        let model = self.model.as_mut().expect("checked above");
        let moves = model.moves[by];
        let owed = model.owed[by].map_or(0, |o| o.ms);
        let increment = model.tc.increment_at_press(moves);
        let deviation = |kind| Deviation {
            kind,
            side: by,
            moves,
            expected_ms: expected,
            shown_ms: shown,
            at: reading.at.0,
            article: "6.10.2",
            outcome: Outcome::Held,
        };
        let mut raised = Vec::new();
        let flagged = shown == 0 || reading.flags[by];
        let verdict = if near(shown, expected) {
            model.owed[by] = None; // a pending period, if any, has arrived
            Verdict::Agrees
        } else if flagged {
            Verdict::Flagged
        } else if let Some(adjustment) = adjusted {
            raised.push(Deviation {
                article: adjustment.article,
                ..deviation(adjustment.kind)
            });
            Verdict::Adjusted
        } else if owed > 0 && near(shown + owed, expected) {
            let owed = model.owed[by].as_mut().expect("owed is set");
            if moves - owed.after_move >= PERIOD_GRACE_MOVES && !owed.raised {
                owed.raised = true;
                raised.push(deviation(DeviationKind::PeriodNotAdded));
            }
            Verdict::PeriodPending
        } else if increment > 0 && near(shown + increment, expected) {
            // Recorded until a second press in a row confirms it (`settle`), then not again.
            let held_missing = self.held[by]
                .is_some_and(|i| self.deviations[i].kind == DeviationKind::IncrementMissing);
            if !self.increment_missing_confirmed[by] && !held_missing {
                raised.push(deviation(DeviationKind::IncrementMissing));
            }
            Verdict::IncrementMissing
        } else {
            raised.push(deviation(DeviationKind::ClockAdjusted));
            model.owed[by] = None;
            Verdict::Adjusted
        };
        let still_owed = model.owed[by].map_or(0, |o| o.ms);
        model.remaining[by] = shown + still_owed;
        let check = MoveCheck {
            by,
            expected_ms: Some(expected),
            shown_ms: Some(shown),
            verdict,
            used_ms: None,
        };
        let mut events = self.settle(by, verdict, &raised);
        events.extend(self.raise(raised));
        (check, events)
    }

    /// The side whose clock stood: it shows what it showed, unless the arbiter changed it.
    fn check_standing(&mut self, side: Color, reading: &Reading) -> Vec<ClockEvent> {
        let Some(model) = &self.model else {
            return Vec::new();
        };
        let shown = reading.ms[side];
        let expected = model.remaining[side];
        let moves = model.moves[side];
        let owed = model.owed[side].map_or(0, |o| o.ms);
        let raised = if near(shown, expected) {
            None
        } else if owed > 0 && near(shown + owed, expected) {
            return Vec::new(); // the period is still pending; the mover's check raises it
        } else if owed > 0 && near(shown, expected + owed) {
            // Shown late on the opponent's press (one side's period shows a move early).
            self.model.as_mut().expect("a model").owed[side] = None;
            None
        } else if let Some(due) = self.take_adjustment(side, shown, expected) {
            Some((due.kind, due.article))
        } else {
            Some((DeviationKind::ClockAdjusted, "6.10.2"))
        };
        let model = self.model.as_mut().expect("a model");
        let still_owed = model.owed[side].map_or(0, |o| o.ms);
        model.remaining[side] = shown + still_owed;
        let Some((kind, article)) = raised else {
            return Vec::new();
        };
        self.raise(vec![Deviation {
            kind,
            side,
            moves,
            expected_ms: expected,
            shown_ms: shown,
            at: reading.at.0,
            article,
            outcome: Outcome::Held,
        }])
    }

    fn check_flags(&mut self, reading: &Reading) -> Vec<ClockEvent> {
        let fallen: Vec<Color> = Color::ALL
            .into_iter()
            .filter(|side| {
                self.flags[*side].is_none() && (reading.flags[*side] || reading.ms[*side] == 0)
            })
            .collect();
        let other_down = |side: Color| self.flags[side.other()].is_some();
        let mut events = Vec::new();
        for &side in &fallen {
            let first = match fallen.len() {
                2 => None,
                _ => Some(!other_down(side)),
            };
            events.push(ClockEvent::FlagFall {
                side,
                at: reading.at,
                first,
            });
        }
        for event in &events {
            if let ClockEvent::FlagFall { side, at, first } = event {
                self.flags[*side] = Some((*at, *first));
            }
        }
        events
    }

    fn check_pause(&mut self, reading: &Reading) -> Vec<ClockEvent> {
        let started = self.reading.is_some_and(|r| r.running.is_some()) || !self.checks.is_empty();
        let flag_down = Color::ALL.into_iter().any(|s| self.flags[s].is_some());
        match (reading.running, self.paused_since) {
            (None, None) if started && !flag_down => {
                self.paused_since = Some(reading.at);
                vec![ClockEvent::Paused { since: reading.at }]
            }
            (Some(_), Some(since)) => {
                self.paused_since = None;
                let paused_ms = reading.at.0.saturating_sub(since.0);
                self.paused_total_ms += paused_ms;
                vec![ClockEvent::Resumed { paused_ms }]
            }
            _ => Vec::new(),
        }
    }

    /// Records `deviations`. The arbiter's own prescribed changes (a penalty, a correction)
    /// are raised at once; any other is held until the player's next press
    /// ([`BoardClock::settle`]), which confirms one held before it that it does not undo.
    fn raise(&mut self, deviations: Vec<Deviation>) -> Vec<ClockEvent> {
        let mut events = Vec::new();
        for mut deviation in deviations {
            let side = deviation.side;
            let prescribed = matches!(
                deviation.kind,
                DeviationKind::PenaltyApplied | DeviationKind::CorrectionApplied
            );
            if prescribed {
                deviation.outcome = Outcome::Confirmed;
                self.deviations.push(deviation.clone());
                events.push(ClockEvent::Deviation(deviation));
                continue;
            }
            if let Some(i) = self.held[side].take() {
                let undone =
                    near_signed(self.deviations[i].difference_ms() + deviation.difference_ms());
                if undone {
                    // Back to what it should have shown: the earlier reading was wrong. The
                    // model already follows the clock again.
                    self.deviations[i].outcome = Outcome::Glitch;
                    deviation.outcome = Outcome::Glitch;
                    self.deviations.push(deviation);
                    continue;
                }
                events.extend(self.close(i, Outcome::Confirmed));
            }
            self.held[side] = Some(self.deviations.len());
            self.deviations.push(deviation);
        }
        events
    }

    /// `side` pressed with `verdict`, recording `new`: what the deviation held for the side
    /// comes to. A period shown meanwhile was late; an increment missed once and then added
    /// again was missed once; otherwise the clock kept it.
    fn settle(&mut self, side: Color, verdict: Verdict, new: &[Deviation]) -> Vec<ClockEvent> {
        let Some(i) = self.held[side] else {
            return Vec::new();
        };
        if new.iter().any(|d| d.side == side) {
            return Vec::new(); // `raise` weighs the new one against it
        }
        let outcome = match (self.deviations[i].kind, verdict) {
            (DeviationKind::PeriodNotAdded, Verdict::PeriodPending) => Outcome::Confirmed,
            (DeviationKind::PeriodNotAdded, _) => Outcome::Passed,
            (DeviationKind::IncrementMissing, Verdict::IncrementMissing) => {
                self.increment_missing_confirmed[side] = true;
                Outcome::Confirmed
            }
            (DeviationKind::IncrementMissing, _) => Outcome::Passed,
            _ => Outcome::Confirmed,
        };
        self.held[side] = None;
        self.close(i, outcome).into_iter().collect()
    }

    /// Closes held deviation `i` with `outcome`: raised for others if confirmed.
    fn close(&mut self, i: usize, outcome: Outcome) -> Option<ClockEvent> {
        let deviation = &mut self.deviations[i];
        deviation.outcome = outcome;
        (outcome == Outcome::Confirmed).then(|| ClockEvent::Deviation(deviation.clone()))
    }

    /// Whether `side` is in time trouble at `now` (8.4): under five minutes in the period,
    /// without an increment of 30 s or more.
    pub fn time_trouble(&self, side: Color, now: NodeMs) -> bool {
        let Some(shown) = self.shown_at(now) else {
            return false;
        };
        let increment = self
            .model
            .as_ref()
            .map_or(0, |m| m.bonus(side).increment_ms());
        shown[side] < TIME_TROUBLE_MS && increment < TIME_TROUBLE_INCREMENT_MS
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

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::Color as Side;

    fn tc(text: &str) -> TimeControl {
        text.parse().unwrap()
    }

    fn side(color: Color) -> Side {
        match color {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }

    /// A reading: `[white, black]` in ms, the side now running, who pressed.
    fn report(ms: [u64; 2], running: Option<Color>, pressed_by: Option<Color>) -> ClockReport {
        ClockReport {
            white_ms: ms[0] as u32,
            black_ms: ms[1] as u32,
            running: running.map(side),
            white_flag: false,
            black_flag: false,
            pressed_by: pressed_by.map(side),
        }
    }

    /// Plays `moves` think times (white first) on a clock that runs exactly by `control`,
    /// with `clock_tc` the clock's actual setting; returns the clock.
    fn play(control: &str, clock_tc: &str, thinks: &[u64]) -> BoardClock {
        let mut clock = BoardClock::new(Some(tc(control)));
        let mut real = Model::new(tc(clock_tc));
        let mut now = 0;
        let ms = |m: &Model| [m.remaining(Color::White), m.remaining(Color::Black)];
        let _ = clock.report(
            NodeMs(now),
            &report(ms(&real), Some(Color::White), None),
            None,
            true,
        );
        for (i, think) in thinks.iter().enumerate() {
            let by = if i % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            now += think;
            real.complete_move(by, *think);
            let r = report(ms(&real), Some(by.other()), Some(by));
            let _ = clock.report(NodeMs(now), &r, Some(by), true);
        }
        clock
    }

    #[test]
    fn fischer_increment_from_move_one() {
        // 6.3.1: 15 min + 10 s; the clock starts with the first increment already added.
        let mut model = Model::new(tc("900+10"));
        assert_eq!(model.remaining(Color::White), 910_000);
        model.complete_move(Color::White, 4_000);
        assert_eq!(model.remaining(Color::White), 916_000);
    }

    #[test]
    fn us_delay_spends_main_time_only_after_the_delay() {
        // 6.3.2 (US / simple delay): 5 s delay; 3 s of thought costs nothing, 8 s costs 3.
        let mut model = Model::new(tc("300+5d"));
        model.complete_move(Color::White, 3_000);
        assert_eq!(model.remaining(Color::White), 300_000);
        model.complete_move(Color::White, 8_000);
        assert_eq!(model.remaining(Color::White), 297_000);
    }

    #[test]
    fn bronstein_gives_back_the_time_used_up_to_the_delay() {
        let mut model = Model::new(tc("300+5b"));
        model.complete_move(Color::White, 3_000);
        assert_eq!(model.remaining(Color::White), 300_000);
        model.complete_move(Color::White, 8_000);
        assert_eq!(model.remaining(Color::White), 297_000);
    }

    #[test]
    fn the_next_period_comes_after_the_prescribed_move() {
        // Candidates 2022: 120 min / 40, 60 min / 20, 15 min + 30 s from move 61 (6.3.2:
        // saved time carries over).
        let mut model = Model::new(tc("40/7200:20/3600:900+30"));
        for n in 1..=40 {
            assert_eq!(model.moves_to_control(Color::White), Some(41 - n));
            model.complete_move(Color::White, 60_000);
        }
        assert_eq!(
            model.remaining(Color::White),
            7_200_000 - 2_400_000 + 3_600_000
        );
        assert_eq!(model.period(Color::White), 1);
        for _ in 41..=60 {
            model.complete_move(Color::White, 60_000);
        }
        // The press of move 60 adds the 15 minutes and the increment for move 61, as the
        // Candidates' clocks did (the broadcast shows it at move 60).
        assert_eq!(model.remaining(Color::White), 8_100_000 + 30_000);
        assert_eq!(model.moves_to_control(Color::White), None);
        model.complete_move(Color::White, 10_000);
        assert_eq!(model.remaining(Color::White), 8_150_000);
    }

    #[test]
    fn a_clock_that_runs_by_the_time_control_agrees_on_every_move() {
        let thinks: Vec<u64> = (0..100).map(|i| 1_000 + (i * 7_919) % 90_000).collect();
        let clock = play("40/5400+30:1800+30", "40/5400+30:1800+30", &thinks);
        assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
        assert!(clock.checks().iter().all(|c| c.verdict == Verdict::Agrees));
        assert_eq!(clock.checks().len(), 100);
    }

    #[test]
    fn what_is_shown_of_a_move_is_what_the_clock_showed_6_10_1() {
        // The clock was set without the increment: the model expects 30 s more after every
        // move, but the display is definitive; the model only checks it (6.10.2).
        let clock = play("5400+30", "5400", &[20_000, 25_000, 20_000]);
        let shown: Vec<_> = clock.checks().iter().map(MoveCheck::time_ms).collect();
        assert_eq!(
            shown,
            [Some(5_380_000), Some(5_375_000), Some(5_360_000)],
            "{:?}",
            clock.checks()
        );
        assert!(clock.checks().iter().all(|c| c.expected_ms != c.shown_ms));
        // How long each move took, by the readings.
        let used: Vec<_> = clock.checks().iter().map(|c| c.used_ms).collect();
        assert_eq!(used, [Some(20_000), Some(25_000), Some(20_000)]);
    }

    #[test]
    fn a_move_that_ended_the_game_shows_the_model_until_the_press_then_the_clock() {
        let mut clock = BoardClock::new(Some(tc("900+10")));
        let start = report([910_000, 910_000], Some(Color::White), None);
        let _ = clock.report(NodeMs(0), &start, None, true);
        // Mate on the board after 4 s; the press comes half a second later.
        clock.move_without_press(Color::White, NodeMs(4_000));
        assert_eq!(clock.checks()[0].time_ms(), Some(916_000), "the model");
        let press = report([915_000, 910_000], Some(Color::Black), Some(Color::White));
        let _ = clock.report(NodeMs(4_500), &press, None, false);
        assert_eq!(clock.checks()[0].time_ms(), Some(915_000), "the clock");
        assert_eq!(
            clock.checks()[0].used_ms,
            Some(4_500),
            "it ran until the press"
        );
    }

    #[test]
    fn a_clock_without_the_increment_is_raised_once_per_player() {
        // 6.10.2: the clock was set to 90 min without the 30 s increment.
        let thinks = vec![20_000; 20];
        let clock = play("5400+30", "5400", &thinks);
        let kinds: Vec<_> = clock
            .deviations()
            .iter()
            .map(|d| (d.kind, d.side))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (DeviationKind::WrongBase, Color::White),
                (DeviationKind::WrongBase, Color::Black),
                (DeviationKind::IncrementMissing, Color::White),
                (DeviationKind::IncrementMissing, Color::Black),
            ]
        );
        let missing = &clock.deviations()[2];
        assert_eq!(missing.expected_ms - missing.shown_ms, 30_000);
        // Each kept by the clock at the player's next press: confirmed.
        assert!(clock
            .deviations()
            .iter()
            .all(|d| d.outcome == Outcome::Confirmed));
    }

    /// A clock under `control` that first shows `shown` with White's side running; what the
    /// reading raised.
    fn started(control: &str, shown: [u64; 2]) -> (BoardClock, Vec<ClockEvent>) {
        let mut clock = BoardClock::new(Some(tc(control)));
        let start = report(shown, Some(Color::White), None);
        let events = clock.report(NodeMs(0), &start, None, true);
        (clock, events)
    }

    /// 40/90+30 with 30 min more after move 40, 10 s a move; Black's clock adds the period
    /// after move 40, White's only at White's move `white_gets_it`. The clock and the
    /// events it raised.
    fn period_shown_at(white_gets_it: u32) -> (BoardClock, Vec<ClockEvent>) {
        let mut shown = [5_430_000u64, 5_430_000];
        let (mut clock, mut events) = started("40/5400+30:1800+30", shown);
        let mut now = 0;
        for n in 1..=50u32 {
            for by in [Color::White, Color::Black] {
                let i = usize::from(by == Color::Black);
                now += 10_000;
                shown[i] = shown[i] - 10_000 + 30_000;
                let late = by == Color::White && n == white_gets_it;
                if late || (by == Color::Black && n == 40) {
                    shown[i] += 1_800_000;
                }
                let r = report(shown, Some(by.other()), Some(by));
                events.extend(clock.report(NodeMs(now), &r, Some(by), true));
            }
        }
        (clock, events)
    }

    #[test]
    fn a_period_shown_a_few_moves_late_is_a_counter_catching_up() {
        // The clock adds the 30 min at move 42 (its move counter two behind): pending at 40
        // and 41, then agreeing again; nothing recorded, nothing raised.
        let (clock, events) = period_shown_at(42);
        let white: Vec<_> = clock
            .checks()
            .iter()
            .filter(|c| c.by == Color::White)
            .map(|c| c.verdict)
            .collect();
        assert_eq!(white[38], Verdict::Agrees);
        assert_eq!(white[39], Verdict::PeriodPending);
        assert_eq!(white[40], Verdict::PeriodPending);
        assert_eq!(white[41], Verdict::Agrees);
        assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
        assert!(events.is_empty(), "{events:?}");
    }

    #[test]
    fn a_period_not_shown_past_the_grace_is_raised_once_the_next_press_confirms_6_10_2() {
        // Not added by move 44 (40 + the grace): recorded then, raised at move 45 when it
        // still has not shown, once.
        let (clock, events) = period_shown_at(48);
        let recorded: Vec<_> = clock
            .deviations()
            .iter()
            .map(|d| (d.kind, d.side, d.moves, d.outcome))
            .collect();
        assert_eq!(
            recorded,
            vec![(
                DeviationKind::PeriodNotAdded,
                Color::White,
                40 + PERIOD_GRACE_MOVES,
                Outcome::Confirmed
            )]
        );
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(clock.deviations()[0].difference_ms(), -1_800_000);
        // Shown at move 46, a move after the grace: recorded, but only late.
        let (clock, events) = period_shown_at(40 + PERIOD_GRACE_MOVES + 1);
        assert_eq!(clock.deviations()[0].outcome, Outcome::Passed);
        assert!(events.is_empty(), "{events:?}");
    }

    /// 15+10 from the start, White's clock showing `white_after[k]` after White's move
    /// `k + 1` (each move 5 s); Black's clock runs by the rules. The clock and what it raised.
    fn white_shows(white_after: &[u64]) -> (BoardClock, Vec<ClockEvent>) {
        let mut shown = [910_000u64, 910_000];
        let (mut clock, mut events) = started("900+10", shown);
        let mut now = 0;
        for white in white_after {
            for by in [Color::White, Color::Black] {
                now += 5_000;
                match by {
                    Color::White => shown[0] = *white,
                    Color::Black => shown[1] += 5_000,
                }
                let r = report(shown, Some(by.other()), Some(by));
                events.extend(clock.report(NodeMs(now), &r, Some(by), true));
            }
        }
        (clock, events)
    }

    #[test]
    fn a_clock_changed_and_kept_is_raised_at_the_players_next_press() {
        // After move 2 White's clock shows a minute more and keeps it: recorded at move 2,
        // raised at move 3, when the clock still counts from there.
        let (_, events) = white_shows(&[915_000, 920_000]);
        assert!(events.is_empty(), "held until the next press: {events:?}");
        let (clock, events) = white_shows(&[915_000, 980_000, 985_000]);
        let [ClockEvent::Deviation(raised)] = events.as_slice() else {
            panic!("one deviation raised: {events:?}");
        };
        assert_eq!(
            (raised.kind, raised.moves, raised.difference_ms()),
            (DeviationKind::ClockAdjusted, 2, 60_000)
        );
        assert_eq!(clock.deviations()[0].outcome, Outcome::Confirmed);
    }

    #[test]
    fn a_clock_that_goes_back_at_the_next_press_had_one_wrong_reading() {
        // White's display read a minute high once, then the time it should show again.
        let (clock, events) = white_shows(&[915_000, 980_000, 925_000, 930_000]);
        assert!(events.is_empty(), "{events:?}");
        let outcomes: Vec<_> = clock.deviations().iter().map(|d| d.outcome).collect();
        assert_eq!(outcomes, [Outcome::Glitch, Outcome::Glitch]);
        assert_eq!(clock.glitches(), 1);
        assert_eq!(clock.checks()[6].verdict, Verdict::Agrees);
    }

    #[test]
    fn an_increment_missed_once_is_recorded_missed_twice_is_raised() {
        // 10 s missing at move 2 only: for the record.
        let (clock, events) = white_shows(&[915_000, 910_000, 915_000]);
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(clock.deviations()[0].kind, DeviationKind::IncrementMissing);
        assert_eq!(clock.deviations()[0].outcome, Outcome::Passed);
        // Missing from move 2 on: raised once, at move 3.
        let (clock, events) = white_shows(&[915_000, 910_000, 905_000, 900_000, 895_000]);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(clock.deviations().len(), 1);
    }

    #[test]
    fn a_press_with_the_flag_down_is_a_flag_fall_not_a_missing_increment() {
        let (clock, _) = white_shows(&[915_000, 0]);
        assert_eq!(clock.checks()[2].verdict, Verdict::Flagged);
        assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
        assert!(clock.flag(Color::White).is_some());
    }

    /// A 90 min + 30 s clock that showed its start (1:30:30 each) and runs White's time.
    fn classical_started() -> BoardClock {
        let mut clock = BoardClock::new(Some(tc("5400+30")));
        let _ = clock.report(
            NodeMs(0),
            &report([5_430_000, 5_430_000], Some(Color::White), None),
            None,
            true,
        );
        clock
    }

    #[test]
    fn a_penalty_on_the_standing_clock_is_expected_not_a_deviation() {
        // 7.5.5: two minutes to the opponent after an illegal move.
        let mut clock = classical_started();
        let penalty = Adjustment {
            ms: 120_000,
            kind: DeviationKind::PenaltyApplied,
            article: "7.5.5",
        };
        clock.expect_adjustment(Color::Black, penalty);
        let r = report(
            [5_450_000, 5_550_000],
            Some(Color::Black),
            Some(Color::White),
        );
        let events = clock.report(NodeMs(10_000), &r, Some(Color::White), true);
        assert!(matches!(
            &events[..],
            [ClockEvent::Deviation(Deviation {
                kind: DeviationKind::PenaltyApplied,
                side: Color::Black,
                article: "7.5.5",
                ..
            })]
        ));
        assert_eq!(clock.adjustment_due(Color::Black), None, "taken");
    }

    #[test]
    fn an_arbiters_adjustment_replaces_what_was_due_and_the_mover_may_show_it() {
        // 6.10.2: the arbiter takes 30 s off White's clock (an increment the clock gave
        // twice); the press that shows it is the correction, not an unexplained jump.
        let mut clock = classical_started();
        let correction = Adjustment {
            ms: -30_000,
            kind: DeviationKind::CorrectionApplied,
            article: "6.10.2",
        };
        clock.expect_adjustment(
            Color::White,
            Adjustment {
                ms: 60_000,
                ..correction
            },
        );
        clock.set_adjustment(Color::White, correction);
        // White used 10 s and gained 30 s: the model expects 5:30:50 - 30 s.
        let r = report(
            [5_420_000, 5_430_000],
            Some(Color::Black),
            Some(Color::White),
        );
        let events = clock.report(NodeMs(10_000), &r, Some(Color::White), true);
        assert!(
            matches!(
                &events[..],
                [ClockEvent::Deviation(Deviation {
                    kind: DeviationKind::CorrectionApplied,
                    side: Color::White,
                    expected_ms: 5_450_000,
                    shown_ms: 5_420_000,
                    ..
                })]
            ),
            "{events:?}"
        );
    }

    #[test]
    fn flags_are_seen_once_and_in_order() {
        let mut clock = BoardClock::new(Some(tc("180+2")));
        let _ = clock.report(
            NodeMs(0),
            &report([182_000, 182_000], Some(Color::White), None),
            None,
            true,
        );
        let mut down = report([0, 5_000], Some(Color::White), None);
        down.white_flag = true;
        let events = clock.report(NodeMs(182_000), &down, None, true);
        assert_eq!(
            events,
            vec![ClockEvent::FlagFall {
                side: Color::White,
                at: NodeMs(182_000),
                first: Some(true)
            }]
        );
        assert!(clock.report(NodeMs(183_000), &down, None, true).is_empty());
        assert_eq!(clock.first_flag(), Some(Color::White));
    }

    #[test]
    fn both_flags_in_one_reading_leave_the_order_open() {
        // Guidelines III.3.1: impossible to establish which flag fell first.
        let mut clock = BoardClock::new(None);
        let both = report([0, 0], None, None);
        let events = clock.report(NodeMs(5), &both, None, true);
        assert!(events
            .iter()
            .all(|e| matches!(e, ClockEvent::FlagFall { first: None, .. })));
        assert_eq!(events.len(), 2);
        assert_eq!(clock.first_flag(), None);
    }

    #[test]
    fn a_stopped_clock_mid_game_is_a_pause_until_it_runs_again() {
        // 6.11.2: a player stops the clock to call the arbiter.
        let mut clock = BoardClock::new(None);
        let _ = clock.report(
            NodeMs(0),
            &report([60_000, 60_000], Some(Color::White), None),
            None,
            true,
        );
        let events = clock.report(
            NodeMs(5_000),
            &report([55_000, 60_000], None, None),
            None,
            true,
        );
        assert_eq!(
            events,
            vec![ClockEvent::Paused {
                since: NodeMs(5_000)
            }]
        );
        assert_eq!(
            clock.shown_at(NodeMs(50_000)).unwrap()[Color::White],
            55_000
        );
        let events = clock.report(
            NodeMs(65_000),
            &report([55_000, 60_000], Some(Color::White), None),
            None,
            true,
        );
        assert_eq!(events, vec![ClockEvent::Resumed { paused_ms: 60_000 }]);
        assert_eq!(
            clock.time_to_flag(NodeMs(70_000)),
            Some((Color::White, 50_000))
        );
    }

    #[test]
    fn time_trouble_is_under_five_minutes_without_a_thirty_second_increment() {
        // 8.4
        let mut clock = BoardClock::new(Some(tc("900+10")));
        let _ = clock.report(
            NodeMs(0),
            &report([299_000, 301_000], Some(Color::White), None),
            None,
            true,
        );
        assert!(clock.time_trouble(Color::White, NodeMs(0)));
        assert!(!clock.time_trouble(Color::Black, NodeMs(0)));
        let mut classical = BoardClock::new(Some(tc("5400+30")));
        let _ = classical.report(
            NodeMs(0),
            &report([100_000, 100_000], Some(Color::White), None),
            None,
            true,
        );
        assert!(
            !classical.time_trouble(Color::White, NodeMs(0)),
            "30 s increment: 8.4 does not apply"
        );
    }
}
