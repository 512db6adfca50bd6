//! The one detail an alert's facts may carry, typed: how a game ended, what is wrong with a
//! clock or a set-up, the result the players signalled, a number. The texts give each kind
//! its words in every language by an exhaustive match, so a detail without words does not
//! compile. It is written as the string it always was (`checkmate`, `clock_adjusted`, `1-0`,
//! `42`), and a string this hub does not know (another version's journal) reads as
//! [`Detail::Other`] and is shown as it is.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::arbiter::GameResult;
use crate::core::ending::Status;

/// How a game ended by the rules, as the desk reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    Checkmate,
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    SeventyfiveMoves,
}

/// What is wrong with a clock (6.10.2): the deviations the arbiter is paged for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockFault {
    WrongBase,
    IncrementMissing,
    PeriodNotAdded,
    ClockAdjusted,
}

/// What is wrong with a board's set-up before the first move (7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setup {
    InitialPosition,
    /// The board turned the wrong way (contrary to 2.1).
    Orientation,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Detail {
    Ending(Ending),
    Clock(ClockFault),
    Setup(Setup),
    /// The result the players signalled with the kings.
    Signal(GameResult),
    /// A number: the event the journal lost, the messages refused.
    Number(u64),
    /// Orders of moves in SAN (`Nd7 h3 Be6`), the one the hub follows first: written with
    /// ` | ` between them.
    Orders(Vec<String>),
    /// A detail this hub does not know, shown as it is.
    Other(String),
}

impl Ending {
    /// The ending of a game over by the rules; `None` while it is played or declared.
    pub fn of(status: Status) -> Option<Ending> {
        Some(match status {
            Status::Checkmate => Ending::Checkmate,
            Status::Stalemate => Ending::Stalemate,
            Status::DeadPosition => Ending::DeadPosition,
            Status::FivefoldRepetition => Ending::FivefoldRepetition,
            Status::SeventyfiveMoves => Ending::SeventyfiveMoves,
            Status::Playing | Status::Declared(_) => return None,
        })
    }
}

const ENDINGS: [(Ending, &str); 5] = [
    (Ending::Checkmate, "checkmate"),
    (Ending::Stalemate, "stalemate"),
    (Ending::DeadPosition, "dead_position"),
    (Ending::FivefoldRepetition, "fivefold_repetition"),
    (Ending::SeventyfiveMoves, "seventyfive_moves"),
];

const CLOCK_FAULTS: [(ClockFault, &str); 4] = [
    (ClockFault::WrongBase, "wrong_base"),
    (ClockFault::IncrementMissing, "increment_missing"),
    (ClockFault::PeriodNotAdded, "period_not_added"),
    (ClockFault::ClockAdjusted, "clock_adjusted"),
];

const SETUPS: [(Setup, &str); 2] = [
    (Setup::InitialPosition, "initial_position"),
    (Setup::Orientation, "orientation"),
];

const SIGNALS: [GameResult; 6] = [
    GameResult::WhiteWins,
    GameResult::BlackWins,
    GameResult::Draw,
    GameResult::WhiteWinsByForfeit,
    GameResult::BlackWinsByForfeit,
    GameResult::DoubleForfeit,
];

fn name_of<T: PartialEq + Copy>(table: &[(T, &'static str)], value: T) -> &'static str {
    table
        .iter()
        .find(|(v, _)| *v == value)
        .map_or("", |(_, name)| name)
}

fn value_of<T: Copy>(table: &[(T, &'static str)], name: &str) -> Option<T> {
    table.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
}

impl Detail {
    /// The detail written as `text`.
    pub fn parse(text: &str) -> Detail {
        if let Some(ending) = value_of(&ENDINGS, text) {
            return Detail::Ending(ending);
        }
        if let Some(fault) = value_of(&CLOCK_FAULTS, text) {
            return Detail::Clock(fault);
        }
        if let Some(setup) = value_of(&SETUPS, text) {
            return Detail::Setup(setup);
        }
        if let Some(result) = SIGNALS.into_iter().find(|r| r.code() == text) {
            return Detail::Signal(result);
        }
        match text.parse::<u64>() {
            Ok(n) if n.to_string() == text => Detail::Number(n),
            _ if is_orders(text) => {
                Detail::Orders(text.split(ORDERS_APART).map(str::to_owned).collect())
            }
            _ => Detail::Other(text.to_owned()),
        }
    }
}

/// What stands between two orders of moves.
const ORDERS_APART: &str = " | ";

/// Whether `text` is orders of two or more moves in SAN, as [`Detail::Orders`] writes them.
fn is_orders(text: &str) -> bool {
    let san = |word: &str| word.parse::<shakmaty::san::SanPlus>().is_ok();
    text.split(ORDERS_APART).all(|order| {
        let moves: Vec<&str> = order.split(' ').collect();
        moves.len() >= 2 && moves.iter().all(|m| san(m))
    })
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Ending(ending) => f.write_str(name_of(&ENDINGS, *ending)),
            Detail::Clock(fault) => f.write_str(name_of(&CLOCK_FAULTS, *fault)),
            Detail::Setup(setup) => f.write_str(name_of(&SETUPS, *setup)),
            Detail::Signal(result) => f.write_str(result.code()),
            Detail::Number(n) => write!(f, "{n}"),
            Detail::Orders(orders) => f.write_str(&orders.join(ORDERS_APART)),
            Detail::Other(text) => f.write_str(text),
        }
    }
}

impl Serialize for Detail {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Detail, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Detail::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_detail_reads_back_as_it_is_written() {
        let details = ENDINGS
            .iter()
            .map(|(e, _)| Detail::Ending(*e))
            .chain(CLOCK_FAULTS.iter().map(|(c, _)| Detail::Clock(*c)))
            .chain(SETUPS.iter().map(|(s, _)| Detail::Setup(*s)))
            .chain(SIGNALS.iter().map(|r| Detail::Signal(*r)))
            .chain([
                Detail::Number(42),
                Detail::Orders(vec!["Nd7 h3 Be6".into(), "Be6 h3 Nd7".into()]),
                Detail::Orders(vec!["e4 e5 Nf3 Nc6 Bb5".into()]),
                Detail::Other("a later hub's".into()),
                Detail::Other("two words".into()),
            ]);
        for detail in details {
            let json = serde_json::to_string(&detail).unwrap();
            assert_eq!(
                serde_json::from_str::<Detail>(&json).unwrap(),
                detail,
                "{json}"
            );
        }
    }

    #[test]
    fn details_are_written_as_the_journal_and_the_api_always_had_them() {
        let json = |d: Detail| serde_json::to_string(&d).unwrap();
        assert_eq!(
            json(Detail::Clock(ClockFault::ClockAdjusted)),
            r#""clock_adjusted""#
        );
        assert_eq!(
            json(Detail::Ending(Ending::SeventyfiveMoves)),
            r#""seventyfive_moves""#
        );
        assert_eq!(json(Detail::Setup(Setup::Orientation)), r#""orientation""#);
        assert_eq!(json(Detail::Signal(GameResult::Draw)), r#""1/2-1/2""#);
        assert_eq!(json(Detail::Number(17)), r#""17""#);
        for status in [Status::Checkmate, Status::Stalemate, Status::DeadPosition] {
            let ending = Ending::of(status).expect("an ending by the rules");
            assert_eq!(Detail::Ending(ending).to_string(), status.name());
        }
    }
}
