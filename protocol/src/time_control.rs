//! Time controls in PGN syntax (PGN standard 9.6.1), with the delays of Art. 6.3.2.
//!
//! ```text
//! 40/5400+30:1800+30        90 min for 40 moves, then 30 min; +30 s a move from move 1
//! 40/7200:20/3600:900+30    120 min / 40, 60 min / 20, 15 min; +30 s only in the last period
//! 900+10                    15 min + 10 s (Fischer increment)
//! 5400+30d                  90 min with a 30 s delay (US / simple: the main time starts after it)
//! 5400+30b                  90 min with a 30 s Bronstein delay (at most the time used comes back)
//! ```
//! Each period's bonus applies in that period. `?` (unknown), `-` (none) and `*` (sandclock)
//! are refused: a hall's clocks need a time control they can run.
//!
//! ```
//! use protocol::time_control::TimeControl;
//! let tc: TimeControl = "40/5400+30:1800+30".parse().unwrap();
//! assert_eq!(tc.periods().len(), 2);
//! assert_eq!(tc.to_string(), "40/5400+30:1800+30");
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod wording;

/// What a player gets per move in a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "ms")]
pub enum Bonus {
    None,
    /// Fischer: added after each move (6.3.1).
    Increment(u64),
    /// US / simple delay: the main time starts running only after this (6.3.2).
    Delay(u64),
    /// Bronstein: the time used, up to this, is given back after the move.
    Bronstein(u64),
}

impl Bonus {
    /// The Fischer increment, zero for the other kinds.
    pub fn increment_ms(self) -> u64 {
        match self {
            Bonus::Increment(ms) => ms,
            _ => 0,
        }
    }

    /// Time per move of any kind (increment or delay), for the speed class (A.1, B.1).
    pub fn per_move_ms(self) -> u64 {
        match self {
            Bonus::None => 0,
            Bonus::Increment(ms) | Bonus::Delay(ms) | Bonus::Bronstein(ms) => ms,
        }
    }
}

/// The longest period, increment or delay a time control may give, in seconds: a day. Times
/// in ms below it can be summed over any game without overflow, whatever a configuration or
/// a PGN tag says.
pub const MAX_SECONDS: u64 = 86_400;

/// The most moves a period may count: no game reaches it, and sums of periods stay far from
/// overflow.
pub const MAX_MOVES: u32 = 1000;

/// One period of a time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    /// Moves to complete in this period; `None`: the rest of the game (sudden death).
    pub moves: Option<u32>,
    /// Time given for the period, in ms (saved time carries over, 6.3.2).
    pub base_ms: u64,
    pub bonus: Bonus,
}

/// A whole time control: periods in order, the last one for the rest of the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    periods: Vec<Period>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeControlError {
    Empty,
    BadPeriod {
        index: usize,
        text: String,
        why: &'static str,
    },
    SuddenDeathNotLast(usize),
    LastPeriodHasMoves,
    /// A time control in words that [`wording::parse`] cannot read.
    Wording {
        text: String,
        why: String,
    },
}

impl fmt::Display for TimeControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControlError::Empty => f.write_str("empty time control"),
            TimeControlError::BadPeriod { index, text, why } => {
                write!(f, "period {index} {text:?}: {why}")
            }
            TimeControlError::SuddenDeathNotLast(i) => write!(
                f,
                "only the last period may be for the rest of the game (period {i} has no move count)"
            ),
            TimeControlError::LastPeriodHasMoves => f.write_str(
                "the last period must be for the rest of the game, not a number of moves",
            ),
            TimeControlError::Wording { text, why } => write!(f, "{text:?}: {why}"),
        }
    }
}

impl core::error::Error for TimeControlError {}

impl TimeControl {
    /// A time control in PGN syntax or in words (`90 minutes for the first 40 moves, …`, as
    /// tournament regulations write it; see [`wording`]).
    ///
    /// ```
    /// use protocol::time_control::TimeControl;
    /// let tc = TimeControl::parse_any("15 min/game + 10 sec/move").unwrap();
    /// assert_eq!(tc, "900+10".parse().unwrap());
    /// ```
    pub fn parse_any(text: &str) -> Result<TimeControl, TimeControlError> {
        let pgn_like = text
            .trim()
            .chars()
            .all(|c| c.is_ascii_digit() || "/+:db?-*".contains(c));
        if pgn_like {
            text.parse()
        } else {
            wording::parse(text)
        }
    }

    pub fn periods(&self) -> &[Period] {
        &self.periods
    }

    /// The period a player's `n`-th move (1 = the first) is played in, with its index.
    pub fn period_of_move(&self, n: u32) -> (usize, Period) {
        let mut before = 0u32;
        for (index, period) in self.periods.iter().enumerate() {
            match period.moves {
                Some(moves) if n > before + moves => before += moves,
                _ => return (index, *period),
            }
        }
        let last = self.periods.len() - 1;
        (last, self.periods[last])
    }

    /// The time of the next period, added when a player completes their `n`-th move (the
    /// last move a period prescribes); `None` after any other move.
    pub fn added_after_move(&self, n: u32) -> Option<u64> {
        let mut total = 0u32;
        for window in self.periods.windows(2) {
            total += window[0].moves?;
            if n == total {
                return Some(window[1].base_ms);
            }
        }
        None
    }

    /// The increment a digital clock adds at the press that completes a player's `n`-th
    /// move: the one for the player's next move, as it adds the first before move 1. Where
    /// the increment starts with a later period (the Candidates' "30 s from move 61"), the
    /// press of move 60 adds it (the real broadcasts show it there).
    pub fn increment_at_press(&self, n: u32) -> u64 {
        self.period_of_move(n.saturating_add(1))
            .1
            .bonus
            .increment_ms()
    }

    /// The time a clock shows before the first move: the first period, with its first
    /// increment already added as digital clocks do (real broadcasts show `1:30:54` after a
    /// 6 s first move at 90 min + 30 s).
    pub fn initial_ms(&self) -> u64 {
        let first = self.periods[0];
        first.base_ms + first.bonus.increment_ms()
    }
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(TimeControlError::Empty);
        }
        let periods = text
            .split(':')
            .enumerate()
            .map(|(index, field)| parse_period(index + 1, field.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        let last = periods.len() - 1;
        if let Some(i) = periods[..last].iter().position(|p| p.moves.is_none()) {
            return Err(TimeControlError::SuddenDeathNotLast(i + 1));
        }
        if periods[last].moves.is_some() {
            return Err(TimeControlError::LastPeriodHasMoves);
        }
        Ok(TimeControl { periods })
    }
}

fn parse_period(index: usize, field: &str) -> Result<Period, TimeControlError> {
    let bad = |why| TimeControlError::BadPeriod {
        index,
        text: field.to_owned(),
        why,
    };
    if matches!(field, "?" | "-") || field.starts_with('*') {
        return Err(bad(
            "unknown, none and sandclock cannot be run by a hall's clocks",
        ));
    }
    let (moves, rest) = match field.split_once('/') {
        Some((moves, rest)) => (
            Some(
                moves
                    .parse::<u32>()
                    .ok()
                    .filter(|m| (1..=MAX_MOVES).contains(m))
                    .ok_or_else(|| bad("moves must be a number from 1 to 1000"))?,
            ),
            rest,
        ),
        None => (None, field),
    };
    let (base, bonus) = rest.split_once('+').unwrap_or((rest, ""));
    let seconds = |s: &str| match s.parse::<u64>() {
        Ok(s) if s <= MAX_SECONDS => Ok(s * 1000),
        Ok(_) => Err(bad(
            "at most 86400 seconds (a day) a period, an increment or a delay",
        )),
        Err(_) => Err(bad("seconds must be a whole number")),
    };
    let base_ms = seconds(base)?;
    if base_ms == 0 {
        return Err(bad("a period needs time"));
    }
    let bonus = match bonus.as_bytes().last() {
        None => Bonus::None,
        Some(b'd') => Bonus::Delay(seconds(&bonus[..bonus.len() - 1])?),
        Some(b'b') => Bonus::Bronstein(seconds(&bonus[..bonus.len() - 1])?),
        Some(_) => match seconds(bonus)? {
            0 => Bonus::None,
            ms => Bonus::Increment(ms),
        },
    };
    Ok(Period {
        moves,
        base_ms,
        bonus,
    })
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, period) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if let Some(moves) = period.moves {
                write!(f, "{moves}/")?;
            }
            write!(f, "{}", period.base_ms / 1000)?;
            match period.bonus {
                Bonus::None => {}
                Bonus::Increment(ms) => write!(f, "+{}", ms / 1000)?,
                Bonus::Delay(ms) => write!(f, "+{}d", ms / 1000)?,
                Bonus::Bronstein(ms) => write!(f, "+{}b", ms / 1000)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn tc(text: &str) -> TimeControl {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn the_real_time_controls_parse_and_print_back() {
        // World Cup 2025 classical; Candidates 2022 (+30 s only from move 61); rapid; a TRF
        // 222 line (Grandmommy's Cup); online blitz.
        for text in [
            "40/5400+30:1800+30",
            "40/7200:20/3600:900+30",
            "900+10",
            "40/6000+30:20/3000+30:1500+30",
            "180+2",
            "60",
        ] {
            assert_eq!(tc(text).to_string(), text);
        }
        let candidates = tc("40/7200:20/3600:900+30");
        assert_eq!(
            candidates.periods()[0],
            Period {
                moves: Some(40),
                base_ms: 7_200_000,
                bonus: Bonus::None
            }
        );
        assert_eq!(candidates.periods()[2].bonus, Bonus::Increment(30_000));
        assert_eq!(tc("5400+30d").periods()[0].bonus, Bonus::Delay(30_000));
        assert_eq!(tc("5400+30b").periods()[0].bonus, Bonus::Bronstein(30_000));
        assert_eq!(tc("300+0").periods()[0].bonus, Bonus::None);
    }

    #[test]
    fn bad_time_controls_say_what_is_wrong() {
        assert_eq!("".parse::<TimeControl>(), Err(TimeControlError::Empty));
        assert_eq!(
            "5400:40/1800".parse::<TimeControl>(),
            Err(TimeControlError::SuddenDeathNotLast(1))
        );
        assert_eq!(
            "40/5400".parse::<TimeControl>(),
            Err(TimeControlError::LastPeriodHasMoves)
        );
        for bad in [
            "?",
            "-",
            "*180",
            "0/60",
            "x+3",
            "60+y",
            "0+5",
            "40/5400+30:",
            // Past a day a period: they overflowed the ms arithmetic once.
            "18446744073709551615",
            "40/86401:900",
            "900+18446744073709551615",
            "900+86401d",
            "4294967295/5400:1800",
        ] {
            assert!(
                matches!(
                    bad.parse::<TimeControl>(),
                    Err(TimeControlError::BadPeriod { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn moves_fall_into_their_periods() {
        let candidates = tc("40/7200:20/3600:900+30");
        assert_eq!(candidates.period_of_move(1).0, 0);
        assert_eq!(candidates.period_of_move(40).0, 0);
        assert_eq!(candidates.period_of_move(41).0, 1);
        assert_eq!(candidates.period_of_move(60).0, 1);
        assert_eq!(candidates.period_of_move(61).0, 2);
        assert_eq!(candidates.period_of_move(200).0, 2);
        assert_eq!(candidates.added_after_move(40), Some(3_600_000));
        assert_eq!(candidates.added_after_move(60), Some(900_000));
        assert_eq!(candidates.added_after_move(61), None);
        assert_eq!(candidates.initial_ms(), 7_200_000);
        assert_eq!(tc("40/5400+30:1800+30").initial_ms(), 5_430_000);
        assert_eq!(tc("900+10").added_after_move(40), None);
    }
}
