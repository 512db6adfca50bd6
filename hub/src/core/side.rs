//! A side of the board as the hub writes it, `"white"` or `"black"`: the one spelling of a
//! side in every answer, alert, feed and journal record. The rules play with shakmaty's
//! `Color`; what leaves the core, or is kept, is a `Side`.

use serde::{Deserialize, Serialize};
use shakmaty::Color;

/// A player, as the arbiter names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    /// The other player.
    #[must_use]
    pub fn other(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// `"white"` or `"black"`.
    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }
}

impl From<Color> for Side {
    fn from(color: Color) -> Side {
        match color {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }
}

impl From<Side> for Color {
    fn from(side: Side) -> Color {
        match side {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_written_as_the_hub_always_wrote_it() {
        for (side, json) in [(Side::White, "\"white\""), (Side::Black, "\"black\"")] {
            assert_eq!(serde_json::to_string(&side).unwrap(), json);
            assert_eq!(serde_json::from_str::<Side>(json).unwrap(), side);
            assert_eq!(format!("\"{}\"", side.name()), json);
            assert_eq!(Side::from(Color::from(side)), side);
            assert_ne!(side.other(), side);
        }
        assert!(serde_json::from_str::<Side>("\"White\"").is_err());
    }
}
