//! The catalogue of alerts: what each kind is about, how urgent it is, and the article of
//! each edition that applies. Where the article depends on the ruling (a flag fall, an
//! illegal move) the desk takes it from the ruling the core worked out.

use serde::{Deserialize, Serialize};

use crate::core::laws::Edition;

/// Declares the alert kinds once: the enum, and [`AlertKind::ALL`] from the same list, so a
/// kind added is in both.
macro_rules! alert_kinds {
    ($($(#[$doc:meta])* $kind:ident,)*) => {
        /// What an arbiter must handle. Each kind answers, in exhaustive matches the compiler
        /// checks, how urgent it is ([`AlertKind::severity`]), the article it cites
        /// ([`AlertKind::article`]) and when it ends without an arbiter
        /// ([`AlertKind::lifetime`]): a new kind is answered for in this file.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum AlertKind {
            $($(#[$doc])* $kind,)*
        }

        impl AlertKind {
            /// Every kind, in the order declared.
            pub const ALL: [AlertKind; [$(AlertKind::$kind),*].len()] = [$(AlertKind::$kind),*];
        }
    };
}

alert_kinds! {
    /// A flag fell (6.8, 6.9): result to confirm.
    FlagFall,
    /// Both flags fell, the order unknown (Guidelines III.3.1).
    BothFlags,
    /// A completed illegal move with a time penalty (7.5.1, 7.5.5).
    IllegalMove,
    /// A second completed illegal move: the game is lost, or drawn (7.5.5).
    SecondIllegalMove,
    /// The clock pressed with a pawn on the last rank and no new piece (7.5.2).
    PromotionWithoutPiece,
    /// The clock pressed without a move (7.5.3).
    PressWithoutMove,
    /// The rules ended the game: mate, stalemate, dead position, fivefold, 75 moves.
    GameOver,
    /// A player stopped both clocks: the arbiter is called (6.11.2).
    ClockPaused,
    /// The clock shows other times than the time control gives (6.10.2).
    ClockSetWrong,
    /// A player is short of time: the arbiter should be present (12.3).
    TimeTrouble,
    /// Several boards of one zone are short of time: appoint assistants (12.4).
    ZoneTimeTrouble,
    /// A flag will fall within seconds if the player keeps thinking (6.8).
    FlagForecast,
    /// The board has shown neither the game nor a legal move for a while (7.4).
    OutOfSync,
    /// The board's node went silent during the game.
    NodeOffline,
    /// The node is heard but its clock has not reported while it runs.
    ClockSilent,
    /// Another node's events arrived under numbers the hub holds: the board's node was
    /// replaced, or came back without its outbox. The hub tells it to continue after the
    /// journal's last event.
    NodeGap,
    /// The round started, the player's clock runs, no move after the allowed lateness (6.7.1).
    LateArrival,
    /// The round's scheduled start passed and a paired board's clock has not been started
    /// (6.5: White's clock starts at the time determined for the start).
    ClockNotStarted,
    /// Before the first move the board shows a wrong set-up or is turned (7.2).
    WrongSetup,
    /// The players signalled a result other than the one the hub has.
    ResultSignalMismatch,
    /// Every game of the round in play has a result: the results go to the pairing program.
    RoundFinished,
    /// The players signalled a result in a game the rules have not ended (resignation or
    /// agreement): the arbiter confirms it.
    ResultSignalled,
    /// A record of the board's events in the hub's journal cannot be read (a damaged disk):
    /// the game goes on from the board's next readings, and the arbiter checks what it lost.
    JournalDamaged,
    /// Messages in this board's name that fail their node's key (a forged or altered event,
    /// a stranger's replay of another board's), refused again and again: someone on the
    /// hall's network forges them. Nothing they said was taken.
    ForgedMessage,
    /// Forged messages in the names of many boards at once (a flood): one alert for the
    /// hall instead of one per board, naming the boards.
    ForgedFlood,
    /// The pairing program's file gives a game another result than the one decided in the
    /// hall (an appeal, a correction entered there, or someone who can write the file): the
    /// hub's stands until an arbiter declares a result at the game.
    ResultCorrected,
    /// A board's e-board shows a game the round's pairings do not give it (no pairing on
    /// that board, or one the list scored without play): its node is bound to the wrong
    /// board, or the boards are not numbered as the list on the wall. Its result would
    /// credit nobody, or the wrong players.
    UnpairedBoard,
    /// Records in the clustered hall's journal stream that the hall's hubs did not seal (a
    /// stranger with a NATS login appended them): refused, nothing in them taken.
    StrangersRecords,
    /// The board showed several moves at once, made while the node could not see it, in an
    /// order it does not tell: the hub follows the likeliest, the arbiter confirms or
    /// corrects it (7.4).
    MovesFilledIn,
    /// The clock warns that its battery is low: replace it before it dies and stops the game
    /// (6.11). High while its game is played, info between games.
    BatteryLow,
}

/// How soon an arbiter must act; escalation times are set per severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Go now: a flag, an illegal move, a player waiting at a stopped clock.
    Urgent,
    /// Go soon: a result to confirm, a node down, a wrong clock.
    High,
    /// Be aware: time trouble coming.
    Normal,
    /// Recorded for the arbiter's information; nobody is sent (a flag in unsupervised
    /// rapid under the 2014 Laws, which only a player's claim makes count).
    Info,
}

impl AlertKind {
    /// The kind's usual severity; the desk lowers a flag the arbiter may not call to info.
    pub fn severity(self) -> Severity {
        use AlertKind::*;
        match self {
            FlagFall
            | BothFlags
            | IllegalMove
            | SecondIllegalMove
            | PromotionWithoutPiece
            | PressWithoutMove
            | ClockPaused
            | FlagForecast => Severity::Urgent,
            GameOver | ClockSetWrong | ZoneTimeTrouble | OutOfSync | NodeOffline | ClockSilent
            | NodeGap | LateArrival | ClockNotStarted | WrongSetup | ResultSignalMismatch
            | ResultSignalled | JournalDamaged | ForgedMessage | ForgedFlood | UnpairedBoard
            | StrangersRecords | ResultCorrected | MovesFilledIn | BatteryLow => Severity::High,
            TimeTrouble | RoundFinished => Severity::Normal,
        }
    }

    /// The article that applies in `edition`, where it does not depend on a ruling; `None`
    /// for technical alerts, which no Law covers.
    pub fn article(self, edition: Edition) -> Option<&'static str> {
        use AlertKind::*;
        use Edition::*;
        Some(match (self, edition) {
            (FlagFall | FlagForecast, _) => "6.8",
            (BothFlags, Laws2023 | Laws2018) => "III.3.1",
            (BothFlags, Laws2014 | Laws2009) => "6.11",
            (IllegalMove | SecondIllegalMove, Laws2023 | Laws2018) => "7.5.5",
            (IllegalMove | SecondIllegalMove, Laws2014) => "7.5b",
            (IllegalMove | SecondIllegalMove, Laws2009) => "7.4b",
            (PromotionWithoutPiece, Laws2023 | Laws2018) => "7.5.2",
            (PressWithoutMove, Laws2023 | Laws2018) => "7.5.3",
            (PromotionWithoutPiece | PressWithoutMove, Laws2014) => "7.5b",
            (PromotionWithoutPiece | PressWithoutMove, Laws2009) => "7.4b",
            (ClockPaused, Laws2023 | Laws2018) => "6.11.2",
            (ClockPaused, Laws2014 | Laws2009) => "6.12b",
            (ClockSetWrong, Laws2023 | Laws2018) => "6.10.2",
            (ClockSetWrong, Laws2014 | Laws2009) => "6.10b",
            (TimeTrouble, Laws2009) | (ZoneTimeTrouble, Laws2009) => "13.3",
            (TimeTrouble, _) => "12.3",
            (ZoneTimeTrouble, _) => "12.4",
            (LateArrival, Laws2023 | Laws2018) => "6.7.1",
            (LateArrival, Laws2014) => "6.7a",
            (LateArrival, Laws2009) => "6.6a",
            (ClockNotStarted, Laws2014) => "6.6",
            (ClockNotStarted, _) => "6.5",
            (OutOfSync | MovesFilledIn, Laws2023 | Laws2018 | Laws2014) => "7.4",
            (OutOfSync | MovesFilledIn, Laws2009) => "7.3",
            (WrongSetup, Laws2023 | Laws2018) => "7.2.1",
            (WrongSetup, Laws2014) => "7.2a",
            (WrongSetup, Laws2009) => "7.1a",
            (
                GameOver | ResultSignalMismatch | ResultSignalled | RoundFinished | ResultCorrected,
                _,
            ) => return None,
            (
                NodeOffline | ClockSilent | NodeGap | JournalDamaged | ForgedMessage | ForgedFlood
                | UnpairedBoard | StrangersRecords | BatteryLow,
                _,
            ) => return None,
        })
    }

    /// When an open alert of this kind ends without an arbiter's word.
    pub fn lifetime(self) -> Lifetime {
        use AlertKind::*;
        let watched = Lifetime {
            watched: true,
            ..Lifetime::UNTIL_RESOLVED
        };
        match self {
            // The arbiter's to handle, whatever the board does next.
            FlagFall
            | BothFlags
            | IllegalMove
            | SecondIllegalMove
            | PromotionWithoutPiece
            | PressWithoutMove
            | GameOver
            | ClockPaused
            | ClockSetWrong
            | NodeGap
            | LateArrival
            | ResultSignalMismatch
            | ResultSignalled
            | RoundFinished
            | JournalDamaged
            | ForgedMessage
            | ForgedFlood
            | ResultCorrected
            | UnpairedBoard
            | StrangersRecords
            | MovesFilledIn => Lifetime::UNTIL_RESOLVED,
            // Watched while the game is played, and only then.
            TimeTrouble | FlagForecast | ClockSilent => Lifetime {
                game_over: true,
                next_game: true,
                ..watched
            },
            NodeOffline => Lifetime {
                game_over: true,
                ..watched
            },
            // Until the battery is changed, whatever game the clock serves.
            ZoneTimeTrouble | BatteryLow => watched,
            OutOfSync => Lifetime {
                back_in_sync: true,
                game_over: true,
                next_game: true,
                ..Lifetime::UNTIL_RESOLVED
            },
            WrongSetup => Lifetime {
                back_in_sync: true,
                ..Lifetime::UNTIL_RESOLVED
            },
            ClockNotStarted => Lifetime {
                next_game: true,
                ..Lifetime::UNTIL_RESOLVED
            },
        }
    }

    /// Whether the incident can clear by itself (the node comes back, the clock reports, a
    /// player gets out of time trouble): then the alert expires.
    pub fn clears_by_itself(self) -> bool {
        let Lifetime {
            watched,
            back_in_sync,
            game_over,
            next_game,
        } = self.lifetime();
        watched || back_in_sync || game_over || next_game
    }
}

/// When an open alert ends without an arbiter's word: each moment that expires it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    /// The desk's watchers raise it and end it when the condition clears: one open alert per
    /// condition watched (a side's flag forecast, a board's time trouble, a silent node).
    pub watched: bool,
    /// The board shows the game again.
    pub back_in_sync: bool,
    /// The board's game ends.
    pub game_over: bool,
    /// The board begins its game of another round.
    pub next_game: bool,
}

impl Lifetime {
    /// Open until an arbiter resolves it.
    pub const UNTIL_RESOLVED: Lifetime = Lifetime {
        watched: false,
        back_in_sync: false,
        game_over: false,
        next_game: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_ends_an_alert_without_an_arbiter() {
        use AlertKind::*;
        let kinds = |moment: fn(Lifetime) -> bool| -> Vec<AlertKind> {
            AlertKind::ALL
                .into_iter()
                .filter(|k| moment(k.lifetime()))
                .collect()
        };
        assert_eq!(
            kinds(|l| l.watched),
            [
                TimeTrouble,
                ZoneTimeTrouble,
                FlagForecast,
                NodeOffline,
                ClockSilent,
                BatteryLow
            ]
        );
        assert_eq!(kinds(|l| l.back_in_sync), [OutOfSync, WrongSetup]);
        assert_eq!(
            kinds(|l| l.game_over),
            [
                TimeTrouble,
                FlagForecast,
                OutOfSync,
                NodeOffline,
                ClockSilent
            ]
        );
        assert_eq!(
            kinds(|l| l.next_game),
            [
                TimeTrouble,
                FlagForecast,
                OutOfSync,
                ClockSilent,
                ClockNotStarted
            ]
        );
        // A flag, an illegal move, a result: only an arbiter ends them.
        for kind in [FlagFall, IllegalMove, ResultSignalled, ForgedMessage] {
            assert!(!kind.clears_by_itself(), "{kind:?}");
        }
        assert_eq!(AlertKind::ALL.len(), 30);
    }

    #[test]
    fn every_law_alert_has_an_article_in_every_edition() {
        let technical = [
            AlertKind::GameOver,
            AlertKind::ResultSignalMismatch,
            AlertKind::ResultSignalled,
            AlertKind::RoundFinished,
            AlertKind::NodeOffline,
            AlertKind::ClockSilent,
            AlertKind::NodeGap,
            AlertKind::JournalDamaged,
            AlertKind::ForgedMessage,
            AlertKind::ForgedFlood,
            AlertKind::ResultCorrected,
            AlertKind::UnpairedBoard,
            AlertKind::StrangersRecords,
            AlertKind::BatteryLow,
        ];
        for kind in AlertKind::ALL {
            for edition in Edition::ALL {
                let article = kind.article(edition);
                assert_eq!(
                    article.is_none(),
                    technical.contains(&kind),
                    "{kind:?} {edition:?}"
                );
            }
        }
    }

    #[test]
    fn the_articles_follow_each_editions_numbering() {
        // 6.11.2 (2023) was 6.12b in 2014 and 2009; 12.3 was 13.3 in 2009.
        assert_eq!(
            AlertKind::ClockPaused.article(Edition::Laws2023),
            Some("6.11.2")
        );
        assert_eq!(
            AlertKind::ClockPaused.article(Edition::Laws2014),
            Some("6.12b")
        );
        assert_eq!(
            AlertKind::TimeTrouble.article(Edition::Laws2009),
            Some("13.3")
        );
        assert_eq!(
            AlertKind::LateArrival.article(Edition::Laws2009),
            Some("6.6a")
        );
        // White's clock at the scheduled start: 6.5, but 6.6 in 2014 (6.5 placed the clock).
        assert_eq!(
            AlertKind::ClockNotStarted.article(Edition::Laws2014),
            Some("6.6")
        );
        assert_eq!(
            AlertKind::ClockNotStarted.article(Edition::Laws2009),
            Some("6.5")
        );
    }
}
