//! What an alert says, in the languages of our Laws texts: English, Norwegian, Swedish,
//! Danish, Finnish and Hungarian. Each arbiter reads his own (the pager's `--lang`, the
//! arbiter's `language` in the configuration, `?lang=` on `GET /api/alerts`).
//!
//! A text is built from the alert's [`Facts`] at the time it is shown, so a stored alert
//! renders in any language. Texts speak to the arbiter only (12.6).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

mod phrases;

use self::phrases::{detail_words, phrases, Phrase};
use super::{AlertKind, Deadline, Facts};
use crate::core::arbiter::GameResult;
use crate::core::side::Side;
use protocol::BoardNo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Language {
    #[default]
    #[serde(rename = "en")]
    English,
    #[serde(rename = "nb")]
    Norwegian,
    #[serde(rename = "sv")]
    Swedish,
    #[serde(rename = "da")]
    Danish,
    #[serde(rename = "fi")]
    Finnish,
    #[serde(rename = "hu")]
    Hungarian,
}

impl Language {
    pub const ALL: [Language; 6] = [
        Language::English,
        Language::Norwegian,
        Language::Swedish,
        Language::Danish,
        Language::Finnish,
        Language::Hungarian,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::Norwegian => "nb",
            Language::Swedish => "sv",
            Language::Danish => "da",
            Language::Finnish => "fi",
            Language::Hungarian => "hu",
        }
    }

    /// Where the language's phrase stands in a table of the six, in the order of
    /// [`Language::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown language {0:?}: use en, nb, sv, da, fi or hu")]
pub struct UnknownLanguage(String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Language, UnknownLanguage> {
        let code = match s {
            "no" | "nn" => "nb",
            other => other,
        };
        Language::ALL
            .into_iter()
            .find(|l| l.code() == code)
            .ok_or_else(|| UnknownLanguage(s.to_owned()))
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

const WHITE: Phrase = ["White", "Hvit", "Vit", "Hvid", "Valkea", "Világos"];
const BLACK: Phrase = ["Black", "Svart", "Svart", "Sort", "Musta", "Sötét"];
const BOARD: Phrase = ["Board", "Bord", "Bord", "Bord", "Pöytä", "Tábla"];
const ZONE: Phrase = ["Zone", "Sone", "Zon", "Zone", "Alue", "Zóna"];
const PLAY_ON: Phrase = [
    "the game continues",
    "partiet fortsetter",
    "partiet fortsätter",
    "partiet fortsætter",
    "peli jatkuu",
    "a játszma folytatódik",
];
const BEFORE_NEXT_MOVE: Phrase = [
    "Only before the opponent's next move.",
    "Kun før motstanderens neste trekk.",
    "Endast före motståndarens nästa drag.",
    "Kun før modstanderens næste træk.",
    "Vain ennen vastustajan seuraavaa siirtoa.",
    "Csak az ellenfél következő lépése előtt.",
];

/// " after move {n}" in each language.
const AFTER_MOVE: Phrase = [
    " after move {n}",
    " etter trekk {n}",
    " efter drag {n}",
    " efter træk {n}",
    " siirron {n} jälkeen",
    " a(z) {n}. lépés után",
];

/// A signed difference of a clock, `+1:05`, `−0:30`, `+1:02:03`.
fn signed_clock(seconds: i64) -> String {
    let sign = if seconds < 0 { '−' } else { '+' };
    let s = seconds.unsigned_abs();
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{sign}{}:{:02}", s / 60, s % 60)
    }
}

/// `(text, action)` for an alert in `language`.
pub fn render(
    kind: AlertKind,
    facts: &Facts,
    board: Option<BoardNo>,
    zone: &str,
    deadline: Option<Deadline>,
    language: Language,
) -> (String, String) {
    let i = language.index();
    let (what, todo) = phrases(kind);
    let side = facts.side.map_or("", |s| match s {
        Side::White => WHITE[i],
        Side::Black => BLACK[i],
    });
    let result = facts.result.map_or(PLAY_ON[i], GameResult::pgn);
    let detail = facts.detail.as_ref().map_or(String::new(), |d| {
        detail_words(d).map_or_else(|| d.to_string(), |words| words[i].to_owned())
    });
    let boards: Vec<String> = facts.boards.iter().map(|b| b.0.to_string()).collect();
    let filled = what[i]
        .replace("{side}", side)
        .replace("{result}", result)
        .replace("{s}", &facts.seconds.unwrap_or(0).to_string())
        .replace("{move}", &facts.move_number.unwrap_or(0).to_string())
        .replace("{diff}", &signed_clock(facts.difference_s.unwrap_or(0)))
        .replace(
            "{since}",
            &facts.move_number.map_or(String::new(), |n| {
                AFTER_MOVE[i].replace("{n}", &n.to_string())
            }),
        )
        .replace("{detail}", &detail)
        .replace("{n}", &facts.boards.len().to_string())
        .replace("{boards}", &boards.join(", "));
    let text = match board {
        Some(n) => format!("{} {n}: {filled}", BOARD[i]),
        None => format!("{} {zone}: {filled}", ZONE[i]),
    };
    let mut action = todo[i].to_owned();
    if deadline == Some(Deadline::OpponentsNextMove) {
        action = format!("{action} {}", BEFORE_NEXT_MOVE[i]);
    }
    (text, action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alerts::detail::{ClockFault, Detail, Ending};

    #[test]
    fn a_clock_alert_says_how_much_and_since_when() {
        let facts = Facts {
            side: Some(Side::Black),
            move_number: Some(19),
            detail: Some(Detail::Clock(ClockFault::ClockAdjusted)),
            difference_s: Some(65),
            ..Facts::default()
        };
        let (text, _) = render(
            AlertKind::ClockSetWrong,
            &facts,
            Some(BoardNo(3)),
            "A",
            None,
            Language::English,
        );
        assert_eq!(
            text,
            "Board 3: Black's clock shows +1:05 against the time control after move 19: \
             changed without a reason the hub knows."
        );
        assert_eq!(signed_clock(-1800), "−30:00");
        assert_eq!(signed_clock(3723), "+1:02:03");
    }

    #[test]
    fn every_kind_speaks_every_language_without_a_placeholder_left() {
        let facts = Facts {
            side: Some(Side::White),
            result: Some(GameResult::BlackWins),
            seconds: Some(12),
            move_number: Some(31),
            detail: Some(Detail::Ending(Ending::Checkmate)),
            difference_s: Some(-65),
            boards: vec![BoardNo(3), BoardNo(4), BoardNo(5)],
        };
        for kind in AlertKind::ALL {
            for language in Language::ALL {
                let (text, action) = render(kind, &facts, Some(BoardNo(7)), "A", None, language);
                assert!(
                    !text.contains('{') && !action.contains('{'),
                    "{kind:?} {language}: {text}"
                );
                assert!(!text.is_empty() && !action.is_empty());
            }
        }
    }

    #[test]
    fn a_flag_fall_reads_in_norwegian_with_the_side_and_result() {
        let facts = Facts {
            side: Some(Side::Black),
            result: Some(GameResult::WhiteWins),
            ..Facts::default()
        };
        let (text, _) = render(
            AlertKind::FlagFall,
            &facts,
            Some(BoardNo(12)),
            "A",
            None,
            Language::Norwegian,
        );
        assert_eq!(
            text,
            "Bord 12: Svarts klaff har falt. Resultat etter reglene: 1-0."
        );
    }

    #[test]
    fn an_illegal_move_under_a_5_2_says_before_the_next_move() {
        let (_, action) = render(
            AlertKind::IllegalMove,
            &Facts::default(),
            Some(BoardNo(1)),
            "A",
            Some(Deadline::OpponentsNextMove),
            Language::Swedish,
        );
        assert!(
            action.ends_with("Endast före motståndarens nästa drag."),
            "{action}"
        );
    }

    #[test]
    fn languages_parse_by_their_codes() {
        assert_eq!("nb".parse::<Language>().unwrap(), Language::Norwegian);
        assert_eq!("no".parse::<Language>().unwrap(), Language::Norwegian);
        assert!("de".parse::<Language>().is_err());
    }
}
