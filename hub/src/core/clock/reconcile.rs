//! The reading at each press against the model: what differs, recorded once with the
//! evidence (6.10.2), held until the player's next press shows whether the clock kept it.

use serde::{Deserialize, Serialize};
use shakmaty::Color;

use super::PERIOD_GRACE_MOVES;
use super::{near, near_signed, BoardClock, ClockEvent, MoveCheck, Reading, Verdict};
use crate::core::laws::Article;
use crate::core::side::Side;

/// How a clock differs from what the time control says it should show (6.10.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    pub article: Article,
}

/// What became of a recorded deviation at the player's next press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deviation {
    pub kind: DeviationKind,
    pub side: Side,
    /// The side's completed moves when it was seen.
    pub moves: u32,
    pub expected_ms: u64,
    pub shown_ms: u64,
    pub at: u64,
    pub article: Article,
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

impl BoardClock {
    /// Whether `shown` is `expected` plus the adjustment due on `side`; takes it if so.
    pub(super) fn take_adjustment(
        &mut self,
        side: Color,
        shown: u64,
        expected: u64,
    ) -> Option<Adjustment> {
        let due = self.adjustment_due[side]
            .filter(|due| near(shown, expected.saturating_add_signed(due.ms)))?;
        self.adjustment_due[side] = None;
        Some(due)
    }

    pub(super) fn check_base(&mut self, reading: &Reading) -> Vec<ClockEvent> {
        let Some(model) = &mut self.model else {
            return Vec::new();
        };
        let mut deviations = Vec::new();
        for side in Color::ALL {
            let expected = model.remaining[side];
            if !near(reading.ms[side], expected) {
                deviations.push(Deviation {
                    kind: DeviationKind::WrongBase,
                    side: side.into(),
                    moves: 0,
                    expected_ms: expected,
                    shown_ms: reading.ms[side],
                    at: reading.at.0,
                    article: "6.10.2".into(),
                    outcome: Outcome::Held,
                });
                model.remaining[side] = reading.ms[side];
            }
        }
        self.raise(deviations)
    }

    /// The mover's time at the press that completed `by`'s move, checked against the
    /// model's `expected` (`None` without a time control).
    pub(super) fn check_press(
        &mut self,
        by: Color,
        expected: Option<u64>,
        reading: &Reading,
    ) -> (MoveCheck, Vec<ClockEvent>) {
        let shown = reading.ms[by];
        if self.model.is_none() {
            let check = MoveCheck {
                by: by.into(),
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
            side: by.into(),
            moves,
            expected_ms: expected,
            shown_ms: shown,
            at: reading.at.0,
            article: "6.10.2".into(),
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
            by: by.into(),
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
    pub(super) fn check_standing(&mut self, side: Color, reading: &Reading) -> Vec<ClockEvent> {
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
            Some((DeviationKind::ClockAdjusted, "6.10.2".into()))
        };
        let model = self.model.as_mut().expect("a model");
        let still_owed = model.owed[side].map_or(0, |o| o.ms);
        model.remaining[side] = shown + still_owed;
        let Some((kind, article)) = raised else {
            return Vec::new();
        };
        self.raise(vec![Deviation {
            kind,
            side: side.into(),
            moves,
            expected_ms: expected,
            shown_ms: shown,
            at: reading.at.0,
            article,
            outcome: Outcome::Held,
        }])
    }

    pub(super) fn check_flags(&mut self, reading: &Reading) -> Vec<ClockEvent> {
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

    pub(super) fn check_pause(&mut self, reading: &Reading) -> Vec<ClockEvent> {
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
    pub(super) fn raise(&mut self, deviations: Vec<Deviation>) -> Vec<ClockEvent> {
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
            if let Some(i) = self.held[Color::from(side)].take() {
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
            self.held[Color::from(side)] = Some(self.deviations.len());
            self.deviations.push(deviation);
        }
        events
    }

    /// `side` pressed with `verdict`, recording `new`: what the deviation held for the side
    /// comes to. A period shown meanwhile was late; an increment missed once and then added
    /// again was missed once; otherwise the clock kept it.
    pub(super) fn settle(
        &mut self,
        side: Color,
        verdict: Verdict,
        new: &[Deviation],
    ) -> Vec<ClockEvent> {
        let Some(i) = self.held[side] else {
            return Vec::new();
        };
        if new.iter().any(|d| d.side == Side::from(side)) {
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
    pub(super) fn close(&mut self, i: usize, outcome: Outcome) -> Option<ClockEvent> {
        let deviation = &mut self.deviations[i];
        deviation.outcome = outcome;
        (outcome == Outcome::Confirmed).then(|| ClockEvent::Deviation(deviation.clone()))
    }
}
