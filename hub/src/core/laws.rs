//! Which Laws a tournament plays under, and what they make of an illegal move.
//!
//! The tournament chooses the edition (2023 is the default; 2018, 2014 and 2009 are still
//! chosen), the game type, and for rapid and blitz whether every game is supervised (2023
//! A.4 / B.2, 2014 A.3 / B.3) or not (2023 A.5 / B.3, 2014 A.4 / B.4). The table of
//! consequences follows `shared/LAWS.md` and the texts in `shared/seeds/`.

use std::fmt;
use std::str::FromStr;

use protocol::time_control::TimeControl;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Edition {
    #[serde(rename = "2009")]
    Laws2009,
    #[serde(rename = "2014")]
    Laws2014,
    #[serde(rename = "2018")]
    Laws2018,
    #[default]
    #[serde(rename = "2023")]
    Laws2023,
}

impl Edition {
    pub const ALL: [Edition; 4] = [
        Edition::Laws2009,
        Edition::Laws2014,
        Edition::Laws2018,
        Edition::Laws2023,
    ];

    /// The 2009 and 2014 Laws number their sub-articles with letters (`5.1b`, `9.6a`); the
    /// 2018 and 2023 Laws with digits (`5.1.2`, `9.6.1`).
    pub fn lettered(self) -> bool {
        matches!(self, Edition::Laws2009 | Edition::Laws2014)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown edition {0:?}: use 2023, 2018, 2014 or 2009")]
pub struct UnknownEdition(String);

impl FromStr for Edition {
    type Err = UnknownEdition;

    fn from_str(s: &str) -> Result<Edition, UnknownEdition> {
        match s {
            "2009" => Ok(Edition::Laws2009),
            "2014" => Ok(Edition::Laws2014),
            "2018" => Ok(Edition::Laws2018),
            "2023" => Ok(Edition::Laws2023),
            other => Err(UnknownEdition(other.to_owned())),
        }
    }
}

impl fmt::Display for Edition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edition::Laws2009 => "2009",
            Edition::Laws2014 => "2014",
            Edition::Laws2018 => "2018",
            Edition::Laws2023 => "2023",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameType {
    #[default]
    Standard,
    Rapid,
    Blitz,
}

/// Art. A.1/B.1 by edition: base + 60 × the per-move time of the first period decides
/// rapid or blitz. 2014 on: blitz ≤ 10 min, rapid < 60 min; 2009: blitz < 15, rapid < 60.
pub fn speed(tc: &TimeControl, edition: Edition) -> GameType {
    let first = tc.periods()[0];
    let minutes = (first.base_ms + 60 * first.bonus.per_move_ms()) as f64 / 60_000.0;
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

/// Whether the standard rules apply to rapid and blitz games because each is watched (2023
/// A.4: one arbiter for at most three rapid games; B.2: one per blitz game).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Supervision {
    #[default]
    Full,
    Partial,
}

/// The rules of one tournament.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Rules {
    pub edition: Edition,
    pub game_type: GameType,
    pub supervision: Supervision,
    /// Chess960 (2023 Guidelines II): the start position is read off the board.
    pub chess960: bool,
}

/// What the Laws prescribe for a player's completed illegal move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Penalty {
    /// Add this much time to the opponent's clock.
    TimeToOpponent { seconds: u32 },
    /// The game is lost for the player, or drawn when the opponent cannot checkmate.
    GameLost,
    /// The opponent may claim the win; the arbiter does not act by himself (2009 A4c/B3c).
    WinClaimable,
}

/// An article of the Laws as the edition numbers it (`"6.9"`, `"A.4c"`, `"III.4"`): short
/// text kept inline, so an article is copied freely (a clock's deviations and rulings are
/// made on every press and carry one) and one read back from the journal needs no table.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Article {
    len: u8,
    text: [u8; Article::MAX_LEN],
}

impl Article {
    /// The longest article number kept (the Laws' longest is `6.10.1`-like, 6 to 8 bytes).
    pub const MAX_LEN: usize = 15;

    /// The article `text` names; `None` where it is longer than [`Article::MAX_LEN`].
    pub fn new(text: &str) -> Option<Article> {
        let bytes = text.as_bytes();
        if bytes.len() > Article::MAX_LEN {
            return None;
        }
        let mut inline = [0; Article::MAX_LEN];
        inline[..bytes.len()].copy_from_slice(bytes);
        Some(Article {
            len: bytes.len() as u8,
            text: inline,
        })
    }

    pub fn as_str(&self) -> &str {
        // Built from a `&str` only, cut nowhere: always UTF-8.
        std::str::from_utf8(&self.text[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl From<&'static str> for Article {
    /// An article the code cites: every one is short (a test holds them to it).
    fn from(text: &'static str) -> Article {
        Article::new(text).unwrap_or_else(|| {
            debug_assert!(false, "article {text:?} is longer than Article::MAX_LEN");
            let cut = (0..=Article::MAX_LEN)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            Article::new(&text[..cut]).unwrap_or_default()
        })
    }
}

impl Default for Article {
    fn default() -> Article {
        Article {
            len: 0,
            text: [0; Article::MAX_LEN],
        }
    }
}

impl PartialOrd for Article {
    fn partial_cmp(&self, other: &Article) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Article {
    fn cmp(&self, other: &Article) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::ops::Deref for Article {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Article {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Article {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Article {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Article {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Article {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Article {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Article {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Article, D::Error> {
        let text = String::deserialize(deserializer)?;
        Article::new(&text).ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "article {text:?}: longer than {} bytes",
                Article::MAX_LEN
            ))
        })
    }
}

/// The ruling the hub proposes to the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IllegalMoveRuling {
    pub penalty: Penalty,
    pub article: Article,
    /// Only until the opponent completes his next move: after that the illegal move stands
    /// (2023 A.5.2, 2018 A.4.2, 2014 A.4b, 2009 A4c/B3c).
    pub until_opponents_next_move: bool,
}

/// Rapid and blitz: until when a wrong set-up (initial position, board orientation, clock
/// setting) may still be claimed or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SetupClaims {
    /// Closed once each player has completed this many moves.
    pub until_moves_each: u32,
    pub article: &'static str,
}

impl Rules {
    /// Rapid and blitz only: claims about the set-up end once each player has completed 10
    /// moves (2023 and 2018 A.5.1, 2014 A.4a), 3 under 2009 (A4a). `None` in standard chess, where 7.2 has no such limit.
    pub fn setup_claims(&self) -> Option<SetupClaims> {
        if self.game_type == GameType::Standard {
            return None;
        }
        let (until_moves_each, article) = match self.edition {
            Edition::Laws2009 => (3, "A4a"),
            Edition::Laws2014 => (10, "A.4a"),
            Edition::Laws2018 | Edition::Laws2023 => (10, "A.5.1"),
        };
        Some(SetupClaims {
            until_moves_each,
            article,
        })
    }

    /// The quickplay finish's article (2023/2018 Guidelines III.4, 2014 G.4, 2009 10.2):
    /// under 2 minutes in a last period without increment, the player to move may ask for
    /// 5 s a move or claim a draw. Not in blitz (III.2.2).
    pub fn quickplay_finish(&self) -> Option<&'static str> {
        if self.game_type == GameType::Blitz {
            return None;
        }
        Some(match self.edition {
            Edition::Laws2009 => "10.2",
            Edition::Laws2014 => "G.4",
            Edition::Laws2018 | Edition::Laws2023 => "III.4",
        })
    }

    /// Time added to the opponent after an incorrect draw claim, and the article: 2 minutes
    /// (2023 9.5.3, 2014 9.5b), 1 in rapid and blitz (A.3 / B.2), 3 in 2009 (9.5b).
    pub fn wrong_claim(&self) -> (u32, &'static str) {
        match (self.edition, self.game_type) {
            (Edition::Laws2009, _) => (180, "9.5b"),
            (Edition::Laws2014, GameType::Blitz) => (60, "9.5b"),
            (Edition::Laws2014, _) => (120, "9.5b"),
            (_, GameType::Standard) => (120, "9.5.3"),
            (_, _) => (60, "9.5.3"),
        }
    }

    /// The ruling for a player's `nth` completed illegal move (1 = the first).
    pub fn illegal_move(&self, nth: u32) -> IllegalMoveRuling {
        let partial =
            self.game_type != GameType::Standard && self.supervision == Supervision::Partial;
        let one_minute = self.game_type != GameType::Standard;
        let ruling = |penalty, article: &'static str, until| IllegalMoveRuling {
            penalty,
            article: article.into(),
            until_opponents_next_move: until,
        };
        let time = |seconds| Penalty::TimeToOpponent { seconds };
        match self.edition {
            Edition::Laws2023 | Edition::Laws2018 => {
                let (first, article) = match (one_minute, partial, self.edition) {
                    (true, true, Edition::Laws2023) => (time(60), "A.5.2"),
                    (true, true, _) => (time(60), "A.4.2"),
                    (true, false, _) => (time(60), "7.5.5"),
                    (false, ..) => (time(120), "7.5.5"),
                };
                let penalty = if nth == 1 { first } else { Penalty::GameLost };
                ruling(penalty, article, partial)
            }
            Edition::Laws2014 => match (self.game_type, partial) {
                (_, true) => ruling(Penalty::GameLost, "A.4b", true),
                (GameType::Blitz, false) if nth == 1 => ruling(time(60), "7.5b", false),
                (_, false) if nth == 1 => ruling(time(120), "7.5b", false),
                (_, false) => ruling(Penalty::GameLost, "7.5b", false),
            },
            Edition::Laws2009 => match (self.game_type, partial) {
                (GameType::Blitz, true) => ruling(Penalty::WinClaimable, "B3c", true),
                (_, true) => ruling(Penalty::WinClaimable, "A4c", true),
                (_, false) if nth <= 2 => ruling(time(120), "7.4b", false),
                (_, false) => ruling(Penalty::GameLost, "7.4b", false),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_article_reads_back_as_written_and_a_long_text_is_no_article() {
        let cited = Article::from("6.10.1");
        let bytes = postcard::to_allocvec(&cited).unwrap();
        assert_eq!(
            bytes,
            postcard::to_allocvec("6.10.1").unwrap(),
            "written as text"
        );
        let read: Article = postcard::from_bytes(&bytes).unwrap();
        assert_eq!((read, read.as_str()), (cited, "6.10.1"));
        assert!(Article::from("A.4c") < Article::from("A.5.1"));
        let long = postcard::to_allocvec("6.10.1 and a great deal more").unwrap();
        assert!(postcard::from_bytes::<Article>(&long).is_err());
    }

    fn tc(text: &str) -> TimeControl {
        text.parse().unwrap()
    }

    #[test]
    fn an_article_read_back_from_json_is_its_text() {
        let read = |json: &str| serde_json::from_str::<Article>(json).unwrap();
        let (first, again) = (read(r#""7.5.5""#), read(r#""7.5.5""#));
        assert_eq!(first, Article::from("7.5.5"));
        assert_eq!(first, again);
        assert_eq!(serde_json::to_string(&first).unwrap(), r#""7.5.5""#);
        assert!(
            serde_json::from_str::<Article>("7").is_err(),
            "an article is text"
        );
    }

    #[test]
    fn speed_follows_base_plus_sixty_increments_by_edition() {
        // A.1 / B.1: 2014 on, blitz ≤ 10 min and rapid < 60; 2009: blitz < 15.
        assert_eq!(speed(&tc("600"), Edition::Laws2023), GameType::Blitz);
        assert_eq!(speed(&tc("180+2"), Edition::Laws2023), GameType::Blitz); // 5 min
        assert_eq!(speed(&tc("600+5"), Edition::Laws2023), GameType::Rapid); // 15 min
        assert_eq!(speed(&tc("900+10"), Edition::Laws2023), GameType::Rapid); // 25 min
        assert_eq!(speed(&tc("840"), Edition::Laws2009), GameType::Blitz); // 14 min
        assert_eq!(speed(&tc("840"), Edition::Laws2014), GameType::Rapid);
        assert_eq!(speed(&tc("3000+10"), Edition::Laws2023), GameType::Standard); // 60 min
        let classical = tc("40/5400+30:1800+30");
        assert_eq!(speed(&classical, Edition::Laws2023), GameType::Standard);
    }

    fn rules(edition: Edition, game_type: GameType, supervision: Supervision) -> Rules {
        Rules {
            edition,
            game_type,
            supervision,
            chess960: false,
        }
    }

    /// Every row of the "illegal move" lines of the editions table in LAWS.md.
    #[test]
    fn each_edition_and_game_type_gets_its_ruling() {
        use Edition::*;
        use GameType::*;
        use Penalty::*;
        use Supervision::*;
        let two = TimeToOpponent { seconds: 120 };
        let one = TimeToOpponent { seconds: 60 };
        let cases = [
            // 2023 7.5.5: 2 minutes, then the game is lost.
            (Laws2023, Standard, Full, 1, two, "7.5.5", false),
            (Laws2023, Standard, Full, 2, GameLost, "7.5.5", false),
            // 2023 A.3: one minute in rapid and blitz.
            (Laws2023, Rapid, Full, 1, one, "7.5.5", false),
            (Laws2023, Blitz, Full, 2, GameLost, "7.5.5", false),
            // 2023 A.5.2: the same, but only before the opponent's next move.
            (Laws2023, Rapid, Partial, 1, one, "A.5.2", true),
            (Laws2023, Blitz, Partial, 2, GameLost, "A.5.2", true),
            (Laws2018, Blitz, Partial, 1, one, "A.4.2", true),
            (Laws2018, Standard, Full, 1, two, "7.5.5", false),
            // 2014 7.5b: 2 minutes for the first (1 in blitz, B.2), the second loses.
            (Laws2014, Standard, Full, 1, two, "7.5b", false),
            (Laws2014, Standard, Full, 2, GameLost, "7.5b", false),
            (Laws2014, Blitz, Full, 1, one, "7.5b", false),
            // 2014 A.4b: without full supervision the first illegal move loses.
            (Laws2014, Rapid, Partial, 1, GameLost, "A.4b", true),
            (Laws2014, Blitz, Partial, 1, GameLost, "A.4b", true),
            // 2009 7.4b: 2 minutes for the first and the second, the third loses.
            (Laws2009, Standard, Full, 2, two, "7.4b", false),
            (Laws2009, Standard, Full, 3, GameLost, "7.4b", false),
            // 2009 A4c / B3c: the opponent may claim the win before his own move.
            (Laws2009, Rapid, Partial, 1, WinClaimable, "A4c", true),
            (Laws2009, Blitz, Partial, 1, WinClaimable, "B3c", true),
        ];
        for (edition, game_type, supervision, nth, penalty, article, until) in cases {
            let ruling = rules(edition, game_type, supervision).illegal_move(nth);
            assert_eq!(
                ruling,
                IllegalMoveRuling {
                    penalty,
                    article: article.into(),
                    until_opponents_next_move: until
                },
                "{edition} {game_type:?} {supervision:?} #{nth}"
            );
        }
    }

    #[test]
    fn editions_parse_from_their_years() {
        assert_eq!("2014".parse::<Edition>().unwrap(), Edition::Laws2014);
        assert!("2020".parse::<Edition>().is_err());
        assert_eq!(Rules::default().edition, Edition::Laws2023);
    }
}
