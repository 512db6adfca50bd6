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
//! use hub::core::time_control::TimeControl;
//! let tc: TimeControl = "40/5400+30:1800+30".parse().unwrap();
//! assert_eq!(tc.periods().len(), 2);
//! assert_eq!(tc.to_string(), "40/5400+30:1800+30");
//! ```

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::laws::{Edition, GameType};

/// What a player gets per move in a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// One period of a time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Period {
    /// Moves to complete in this period; `None`: the rest of the game (sudden death).
    pub moves: Option<u32>,
    /// Time given for the period, in ms (saved time carries over, 6.3.2).
    pub base_ms: u64,
    pub bonus: Bonus,
}

/// A whole time control: periods in order, the last one for the rest of the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeControl {
    periods: Vec<Period>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlError {
    #[error("empty time control")]
    Empty,
    #[error("period {index} {text:?}: {why}")]
    BadPeriod {
        index: usize,
        text: String,
        why: &'static str,
    },
    #[error("only the last period may be for the rest of the game (period {0} has no move count)")]
    SuddenDeathNotLast(usize),
    #[error("the last period must be for the rest of the game, not a number of moves")]
    LastPeriodHasMoves,
}

impl TimeControl {
    pub fn periods(&self) -> &[Period] {
        &self.periods
    }

    /// Art. A.1/B.1 by edition: base + 60 × increment of the first period decides rapid or
    /// blitz. 2014 on: blitz ≤ 10 min, rapid < 60 min; 2009: blitz < 15 min, rapid < 60.
    pub fn speed(&self, edition: Edition) -> GameType {
        let first = self.periods[0];
        let per_move = match first.bonus {
            Bonus::None => 0,
            Bonus::Increment(ms) | Bonus::Delay(ms) | Bonus::Bronstein(ms) => ms,
        };
        let minutes = (first.base_ms + 60 * per_move) as f64 / 60_000.0;
        let blitz = match edition {
            Edition::Laws2009 => minutes < 15.0,
            _ => minutes <= 10.0,
        };
        if blitz {
            GameType::Blitz
        } else if minutes < 60.0 {
            GameType::Rapid
        } else {
            GameType::Standard
        }
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
                    .filter(|m| *m > 0)
                    .ok_or_else(|| bad("moves must be a positive number"))?,
            ),
            rest,
        ),
        None => (None, field),
    };
    let (base, bonus) = rest.split_once('+').unwrap_or((rest, ""));
    let seconds = |s: &str| {
        s.parse::<u64>()
            .map(|s| s * 1000)
            .map_err(|_| bad("seconds must be a whole number"))
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
    fn speed_follows_base_plus_sixty_increments_by_edition() {
        // A.1 / B.1: 2014 on, blitz ≤ 10 min and rapid < 60; 2009: blitz < 15.
        assert_eq!(tc("600").speed(Edition::Laws2023), GameType::Blitz);
        assert_eq!(tc("180+2").speed(Edition::Laws2023), GameType::Blitz); // 5 min
        assert_eq!(tc("600+5").speed(Edition::Laws2023), GameType::Rapid); // 15 min
        assert_eq!(tc("900+10").speed(Edition::Laws2023), GameType::Rapid); // 25 min
        assert_eq!(tc("840").speed(Edition::Laws2009), GameType::Blitz); // 14 min
        assert_eq!(tc("840").speed(Edition::Laws2014), GameType::Rapid);
        assert_eq!(tc("3000+10").speed(Edition::Laws2023), GameType::Standard); // 60 min
        assert_eq!(
            tc("40/5400+30:1800+30").speed(Edition::Laws2023),
            GameType::Standard
        );
    }
}
