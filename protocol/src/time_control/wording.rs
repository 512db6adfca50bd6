//! Time controls as tournament regulations and broadcasts write them in words:
//!
//! ```text
//! 90 minutes for the first 40 moves, followed by 30 minutes for the rest of the game with
//!   an increment of 30 seconds per move starting from move 1          40/5400+30:1800+30
//! 120 minutes for 40 moves, then 60 minutes for 20 moves, then 15 minutes for the rest of
//!   the game with 30 seconds per move from move 61                    40/7200:20/3600:900+30
//! 15 min/game + 10 sec/move                                           900+10
//! 90 min + 30 s delay                                                 5400+30d
//! ```
//! The text is cut into clauses (at `,` `;` `+` `&`, "followed by", "then", "with"). A clause
//! with minutes (or hours) is a period; a number before "moves" in it is the period's move
//! count, otherwise the period is for the rest of the game. Seconds are the bonus per move:
//! an increment, or a delay where the text says "delay" ("Bronstein" for Bronstein's);
//! "from move N" starts it with the period that begins at move N. What this cannot read is
//! refused with the reason, never guessed.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{TimeControl, TimeControlError};

/// Reads a time control written in words; see the module documentation.
pub fn parse(text: &str) -> Result<TimeControl, TimeControlError> {
    let lower = text
        .to_lowercase()
        .replace('\'', " min ")
        .replace('"', " sec ");
    let bad = |why: String| TimeControlError::Wording {
        text: text.to_string(),
        why,
    };
    let bonus_kind = if lower.contains("bronstein") {
        "b"
    } else if lower.contains("delay") {
        "d"
    } else {
        ""
    };
    let mut periods: Vec<(Option<u32>, u64)> = Vec::new();
    let mut bonus_s: Option<u64> = None;
    let mut bonus_from: u32 = 1;
    for clause in clauses(&lower) {
        let words = tokens(clause);
        let mut minutes: Option<u64> = None;
        let mut moves: Option<u32> = None;
        for (i, word) in words.iter().enumerate() {
            let Ok(n) = word.parse::<u64>() else {
                continue;
            };
            let unit = words.get(i + 1).map(String::as_str).unwrap_or("");
            let before = if i > 0 { words[i - 1].as_str() } else { "" };
            if before == "move" || before == "moves" {
                // "from move 61": where the bonus starts.
                bonus_from = u32::try_from(n).map_err(|_| bad(format!("move {n}")))?;
            } else if is_minutes(unit) {
                minutes = Some(n);
            } else if is_hours(unit) {
                minutes = Some(n.saturating_mul(60));
            } else if is_seconds(unit) {
                bonus_s = Some(n);
            } else if is_moves(unit) {
                moves = Some(u32::try_from(n).map_err(|_| bad(format!("{n} moves")))?);
            } else {
                return Err(bad(format!(
                    "the number {n} has no unit (minutes, seconds, moves)"
                )));
            }
        }
        match (minutes, moves) {
            (Some(m), moves) => periods.push((moves, m.saturating_mul(60))),
            (None, Some(n)) => return Err(bad(format!("{n} moves in no time"))),
            (None, None) => {}
        }
    }
    if periods.is_empty() {
        return Err(bad("no period: give its time in minutes".into()));
    }
    // The bonus applies from the period that starts at `bonus_from` on.
    let mut first_move = 1u32;
    let mut bonus_starts = None;
    for (index, (moves, _)) in periods.iter().enumerate() {
        if first_move == bonus_from {
            bonus_starts = Some(index);
        }
        first_move = first_move.saturating_add(moves.unwrap_or(0));
    }
    let bonus_starts = match (bonus_s, bonus_starts) {
        (None, _) => periods.len(),
        (Some(_), Some(index)) => index,
        (Some(_), None) => {
            return Err(bad(format!(
                "the bonus starts at move {bonus_from}, which begins no period"
            )))
        }
    };
    let pgn: Vec<String> = periods
        .iter()
        .enumerate()
        .map(|(index, (moves, seconds))| {
            let mut field = match moves {
                Some(n) => format!("{n}/{seconds}"),
                None => seconds.to_string(),
            };
            if let Some(bonus) = bonus_s.filter(|_| index >= bonus_starts) {
                field.push_str(&format!("+{bonus}{bonus_kind}"));
            }
            field
        })
        .collect();
    pgn.join(":").parse()
}

fn clauses(text: &str) -> Vec<&str> {
    let mut parts = Vec::from([text]);
    for separator in [",", ";", "+", "&", "followed by", "then", "with"] {
        parts = parts.iter().flat_map(|p| p.split(separator)).collect();
    }
    parts
}

/// Numbers and words, lower case; `15min` reads as `15 min`, `/` and `.` separate.
fn tokens(clause: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut digits = false;
    for c in clause.chars() {
        let kind = if c.is_ascii_digit() {
            Some(true)
        } else if c.is_alphabetic() {
            Some(false)
        } else {
            None
        };
        match kind {
            Some(d) if current.is_empty() || d == digits => {
                digits = d;
                current.push(c);
            }
            Some(d) => {
                tokens.push(core::mem::take(&mut current));
                digits = d;
                current.push(c);
            }
            None => {
                if !current.is_empty() {
                    tokens.push(core::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn is_minutes(word: &str) -> bool {
    matches!(
        word,
        "min" | "mins" | "minute" | "minutes" | "minuten" | "minutter"
    )
}

fn is_hours(word: &str) -> bool {
    matches!(word, "h" | "hr" | "hrs" | "hour" | "hours")
}

fn is_seconds(word: &str) -> bool {
    matches!(
        word,
        "s" | "sec" | "secs" | "second" | "seconds" | "sek" | "sekunder"
    )
}

fn is_moves(word: &str) -> bool {
    matches!(
        word,
        "move" | "moves" | "mv" | "zug" | "züge" | "træk" | "drag"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn read(text: &str) -> String {
        parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .to_string()
    }

    #[test]
    fn the_wordings_of_real_broadcasts_read_as_their_controls() {
        // The TimeControl tags of shared/data/real (the World Cup's with its missing space),
        // and the DGT LiveChess sample's.
        for (text, pgn) in [
            (
                ": 90 minutes for the first 40 moves, followed by 30 minutes for the rest of \
                 the gamewith an increment of 30 seconds per move starting from move 1",
                "40/5400+30:1800+30",
            ),
            (
                "15 minutes + 10 seconds increment per move, starting from move 1",
                "900+10",
            ),
            ("15 min. + 10 s. per move", "900+10"),
            ("15 min/game + 10 sec/move", "900+10"),
            (
                "120 minutes for 40 moves, then 60 minutes for 20 moves, then 15 minutes for \
                 the rest of the game with 30 seconds per move from move 61",
                "40/7200:20/3600:900+30",
            ),
            ("90 min + 30 s delay", "5400+30d"),
            ("2 hours for 40 moves, then 1 hour", "40/7200:3600"),
            ("5 minutes + 5 seconds Bronstein", "300+5b"),
        ] {
            assert_eq!(read(text), pgn, "{text}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_refused_not_guessed() {
        for text in [
            // The Candidates 2022 tag: "120'/60" cannot be 60 moves in 120 minutes there.
            "120'/60 +, 60'/20m + 15'/end & 30\"/m from move 61",
            "rapid",
            "30 seconds per move",
            "90 minutes + 30 seconds from move 20",
            // Numbers past any game: refused, where they overflowed once.
            "18446744073709551615 hours",
            "307445734561825861 minutes + 10 seconds",
            "4294967295 moves in 90 minutes, then 30 minutes",
        ] {
            assert!(parse(text).is_err(), "{text}: {:?}", parse(text));
        }
    }
}
