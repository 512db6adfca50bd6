//! The catalogue of alerts: what each kind is about, how urgent it is, and the article of
//! each edition that applies. Where the article depends on the ruling (a flag fall, an
//! illegal move) the desk takes it from the ruling the core worked out.

use serde::{Deserialize, Serialize};

use crate::core::laws::Edition;

/// What an arbiter must handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
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
    pub const ALL: [AlertKind; 28] = [
        AlertKind::FlagFall,
        AlertKind::BothFlags,
        AlertKind::IllegalMove,
        AlertKind::SecondIllegalMove,
        AlertKind::PromotionWithoutPiece,
        AlertKind::PressWithoutMove,
        AlertKind::GameOver,
        AlertKind::ClockPaused,
        AlertKind::ClockSetWrong,
        AlertKind::TimeTrouble,
        AlertKind::ZoneTimeTrouble,
        AlertKind::FlagForecast,
        AlertKind::OutOfSync,
        AlertKind::NodeOffline,
        AlertKind::ClockSilent,
        AlertKind::NodeGap,
        AlertKind::LateArrival,
        AlertKind::ClockNotStarted,
        AlertKind::WrongSetup,
        AlertKind::ResultSignalMismatch,
        AlertKind::ResultSignalled,
        AlertKind::RoundFinished,
        AlertKind::JournalDamaged,
        AlertKind::ForgedMessage,
        AlertKind::ForgedFlood,
        AlertKind::ResultCorrected,
        AlertKind::UnpairedBoard,
        AlertKind::StrangersRecords,
    ];

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
            | StrangersRecords | ResultCorrected => Severity::High,
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
            (OutOfSync, Laws2023 | Laws2018 | Laws2014) => "7.4",
            (OutOfSync, Laws2009) => "7.3",
            (WrongSetup, Laws2023 | Laws2018) => "7.2.1",
            (WrongSetup, Laws2014) => "7.2a",
            (WrongSetup, Laws2009) => "7.1a",
            (
                GameOver | ResultSignalMismatch | ResultSignalled | RoundFinished | ResultCorrected,
                _,
            ) => return None,
            (
                NodeOffline | ClockSilent | NodeGap | JournalDamaged | ForgedMessage | ForgedFlood
                | UnpairedBoard | StrangersRecords,
                _,
            ) => return None,
        })
    }

    /// Whether the incident can clear by itself (the node comes back, the clock reports, a
    /// player gets out of time trouble): then the alert expires.
    pub fn clears_by_itself(self) -> bool {
        use AlertKind::*;
        matches!(
            self,
            TimeTrouble
                | ZoneTimeTrouble
                | FlagForecast
                | OutOfSync
                | NodeOffline
                | ClockSilent
                | WrongSetup
                | ClockNotStarted
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
