//! The time control applied to the moves the hub counted (6.12.2: never the clock's own
//! move counter), with the time each side's clock ran: Fischer increment, US delay,
//! Bronstein, periods with saved time carried over (6.3).

use protocol::time_control::{Bonus, TimeControl};
use shakmaty::{ByColor, Color};

/// Time the model gave that the clock has not shown yet: a new period's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owed {
    pub(super) ms: u64,
    /// The player's move that earned it.
    pub(super) after_move: u32,
    pub(super) raised: bool,
}

/// The time control applied to the moves the hub counted (6.12.2).
#[derive(Debug, Clone)]
pub struct Model {
    pub(super) tc: TimeControl,
    pub(super) remaining: ByColor<u64>,
    pub(super) moves: ByColor<u32>,
    pub(super) owed: ByColor<Option<Owed>>,
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
