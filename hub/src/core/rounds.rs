//! The event's rounds as the hall plays them: which round each board's game belongs to.
//!
//! A round starts for the whole hall or for one section (the chief arbiter over the API, or
//! the configuration's scheduled start). The start is journaled (tree `rounds`) with every
//! board it covers that the hall knew then and that board's last event: the board's events
//! after it are its next game's. A board first heard of later begins in the round its
//! section plays. So a restart folds each board's events into the same games: before the
//! event after a start's mark, the board goes on to that round.
//!
//! ```text
//!  board 7's events:  1 2 3 … 212 │ 213 … 455 │ 456 …
//!  starts:         round 1 (after 0)  round 2 (after 212)  round 3 (after 455)
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::board::NodeState;
use super::ids::{BoardNo, RoundNo, Seq};
use super::sections::Sections;
use super::time::HubMs;

/// Who started the round a new hub begins in.
pub const BY_CONFIGURATION: &str = "configuration";
/// Who starts a round at its scheduled time.
pub const BY_SCHEDULE: &str = "schedule";

/// A round started: journaled, and folded on every restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundStart {
    /// In the order rounds started, from 1.
    pub ordinal: u32,
    pub round: RoundNo,
    /// The section it starts in; `None`: every section.
    pub section: Option<String>,
    pub at: HubMs,
    /// Who started it: an arbiter, [`BY_SCHEDULE`], or [`BY_CONFIGURATION`] (the round a
    /// new hub begins in).
    pub by: String,
    /// Started while the round before was still being played.
    pub forced: bool,
    /// Every board it covers that the hall knew then, and the board's last event: the
    /// board's next game begins after it.
    pub after: BTreeMap<BoardNo, Seq>,
    /// Those boards' nodes as they stood then: a restart resumes each board here, without
    /// reading the events of the rounds before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<BoardNo, NodeState>,
    /// This record takes back the start with this ordinal (the chief arbiter's undo of a
    /// forced start): that start's boards play on the games it took off them, as if it had
    /// never been made. `round` and `section` are the start's; `after` and `nodes` empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u32>,
}

impl RoundStart {
    /// Whether it starts `board`'s next game (the board is in its section).
    pub fn covers(&self, sections: &Sections, board: BoardNo) -> bool {
        self.section.is_none() || sections.of(board).name == self.section
    }

    /// Where `board`'s next game begins: after this event of the board's.
    pub fn mark(&self, board: BoardNo) -> Seq {
        self.after.get(&board).copied().unwrap_or(Seq(0))
    }
}

/// Why a round cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// A round that was started before cannot start again: its games are kept as they were.
    #[error("round {0} was started before")]
    StartedBefore(RoundNo),
    /// Boards still play the round in play; `force` starts the next one all the same.
    #[error("round {round} has boards without a result: {}; enter them (e-board or not), or start with \"force\": true", board_list(boards))]
    StillPlayed {
        round: RoundNo,
        boards: Vec<BoardNo>,
    },
    /// The event's pairing files pair other rounds but not this one; `force` starts it all
    /// the same (its boards then play without players named).
    #[error("round {0} has no pairings yet: export them from the pairing program, or start with \"force\": true")]
    NoPairings(RoundNo),
    /// The configuration names no such section.
    #[error("no section {0:?}")]
    UnknownSection(String),
    /// Rounds are numbered 1 to [`RoundNo::MAX`].
    #[error("round {0} is not a round number (1 to 999)")]
    NotARound(u64),
    /// The pairing files could not be read again before the start.
    #[error("the pairings cannot be read: {0}")]
    Pairings(String),
    /// Only the chief arbiter starts a round (the hall's token, or an arbiter the
    /// configuration makes `chief`): a start ends every game it covers.
    #[error("{0} may not start a round: only the chief arbiter (the hall's token, or an arbiter configured with chief = true) starts rounds")]
    NotChief(String),
    /// Only the last start is taken back, and only a forced one: a start made in order
    /// ended no game in play.
    #[error("round {0} is not the last round started by force: only that start can be undone")]
    NotUndoable(RoundNo),
    /// The forced start's boards went on: its games can no longer be given back as they
    /// stood.
    #[error("the start of round {round} can no longer be undone: {why}")]
    UndoClosed { round: RoundNo, why: UndoClosed },
    /// A round is started in order: the one after the round in play.
    #[error("round {round} is not next: round {in_play} is in play, so round {next} starts next")]
    NotNext {
        round: RoundNo,
        in_play: RoundNo,
        next: RoundNo,
    },
}

/// Why a forced start can no longer be undone (see [`super::parked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UndoClosed {
    /// A move was made in a game the start began.
    #[error("a move was made on board {0} in the new round")]
    Moved(BoardNo),
    /// An arbiter decided at a board in the new round.
    #[error("an arbiter decided at board {0} in the new round")]
    Decided(BoardNo),
    /// More happened at a board since than the hub keeps to give back.
    #[error("board {0} reported more since the start than the hub keeps to give it back")]
    Full(BoardNo),
}

/// Boards as a person reads them: `2, 3, 5`.
fn board_list(boards: &[BoardNo]) -> String {
    let numbers: Vec<String> = boards.iter().map(|b| b.0.to_string()).collect();
    numbers.join(", ")
}

/// Every round start in force, in order, and those taken back.
#[derive(Debug, Clone, Default)]
pub struct RoundBook {
    starts: Vec<RoundStart>,
    /// Each start taken back, with the record that took it back.
    undone: Vec<(RoundStart, RoundStart)>,
    /// The highest ordinal of any record, start or undo.
    last_ordinal: u32,
}

impl RoundBook {
    /// The records the journal holds: the starts and the undos, in order.
    pub fn new(mut records: Vec<RoundStart>) -> RoundBook {
        records.sort_by_key(|s| s.ordinal);
        let mut book = RoundBook::default();
        for record in records {
            match record.undoes {
                Some(_) => book.undo(record),
                None => book.push(record),
            }
        }
        book
    }

    /// The starts in force, in order.
    pub fn starts(&self) -> &[RoundStart] {
        &self.starts
    }

    /// The last start in force: the only one that can be undone.
    pub fn last(&self) -> Option<&RoundStart> {
        self.starts.last()
    }

    /// The starts taken back, each with its undo.
    pub fn undone(&self) -> &[(RoundStart, RoundStart)] {
        &self.undone
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The next start's ordinal.
    pub fn next_ordinal(&self) -> u32 {
        self.last_ordinal + 1
    }

    pub fn push(&mut self, start: RoundStart) {
        self.last_ordinal = self.last_ordinal.max(start.ordinal);
        self.starts.push(start);
    }

    /// `record` takes back the start it names: the start leaves the book, kept with it.
    pub fn undo(&mut self, record: RoundStart) {
        self.last_ordinal = self.last_ordinal.max(record.ordinal);
        let Some(at) = self
            .starts
            .iter()
            .position(|s| Some(s.ordinal) == record.undoes)
        else {
            return;
        };
        let start = self.starts.remove(at);
        self.undone.push((start, record));
    }

    /// The round `section` plays (`None`: the hall's own boards); `None` before any round
    /// started.
    pub fn in_play(&self, section: Option<&str>) -> Option<RoundNo> {
        self.starts
            .iter()
            .rev()
            .find(|s| s.section.is_none() || s.section.as_deref() == section)
            .map(|s| s.round)
    }

    /// The round `board` plays now.
    pub fn of_board(&self, sections: &Sections, board: BoardNo) -> Option<RoundNo> {
        self.in_play(sections.of(board).name.as_deref())
    }

    /// Whether `round` started in `section` (`None`: in any).
    pub fn started(&self, round: RoundNo, section: Option<&str>) -> bool {
        self.starts.iter().any(|s| {
            s.round == round
                && (section.is_none() || s.section.is_none() || s.section.as_deref() == section)
        })
    }

    /// Every round that started, in order, without repeats.
    pub fn rounds(&self) -> Vec<RoundNo> {
        let mut rounds: Vec<RoundNo> = self.starts.iter().map(|s| s.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
    }

    /// For a restart: the rounds `board` goes on to, each with the event after which it
    /// does, in order; only those after the start with ordinal `after` (the one it resumes
    /// at), if any.
    pub fn marks(
        &self,
        sections: &Sections,
        board: BoardNo,
        after: Option<u32>,
    ) -> Vec<(Seq, RoundNo)> {
        self.starts
            .iter()
            .filter(|s| s.covers(sections, board) && after.is_none_or(|o| s.ordinal > o))
            .map(|s| (s.mark(board), s.round))
            .collect()
    }

    /// For a restart: where each board resumes without reading its events again: the last
    /// start that kept the board's node, its round, ordinal and mark. A board's events up to
    /// the mark are its finished games', which the archive holds. A forced start that is
    /// the last may still be undone: its boards resume before it, so a restart rebuilds the
    /// games it took off them, and the journal keeps the events before it in sled.
    pub fn resume_points(&self) -> BTreeMap<BoardNo, Resume> {
        let settled = match self.starts.split_last() {
            Some((last, before)) if last.forced => before,
            _ => &self.starts[..],
        };
        let mut points = BTreeMap::new();
        for start in settled {
            for (board, node) in &start.nodes {
                points.insert(
                    *board,
                    Resume {
                        round: start.round,
                        ordinal: start.ordinal,
                        mark: start.mark(*board),
                        node: node.clone(),
                    },
                );
            }
        }
        points
    }
}

/// Where a restart resumes a board: a round's start that kept its node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub round: RoundNo,
    pub ordinal: u32,
    /// The board's last event before the round: its earlier events are not read again.
    pub mark: Seq,
    pub node: NodeState,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::laws::Rules;
    use crate::core::sections::Section;

    fn start(ordinal: u32, round: u16, section: Option<&str>, after: &[(u16, u64)]) -> RoundStart {
        RoundStart {
            ordinal,
            round: RoundNo(round),
            section: section.map(str::to_owned),
            at: HubMs(u64::from(ordinal) * 1000),
            by: "IA Berg".into(),
            forced: false,
            after: after.iter().map(|(b, s)| (BoardNo(*b), Seq(*s))).collect(),
            nodes: BTreeMap::new(),
            undoes: None,
        }
    }

    #[test]
    fn each_section_plays_its_own_round_and_boards_go_on_after_their_marks() {
        let sections = Sections::new(
            vec![Section {
                name: Some("rapid".into()),
                boards: vec![BoardNo(11)..=BoardNo(20)],
                rules: Rules::default(),
                time_control: None,
            }],
            Rules::default(),
            None,
        );
        let book = RoundBook::new(vec![
            start(3, 3, Some("rapid"), &[(11, 300)]),
            start(1, 1, None, &[]),
            start(2, 2, None, &[(1, 212), (11, 250)]),
        ]);
        assert_eq!(book.in_play(None), Some(RoundNo(2)));
        assert_eq!(book.of_board(&sections, BoardNo(1)), Some(RoundNo(2)));
        // The rapid section plays two rounds a day.
        assert_eq!(book.of_board(&sections, BoardNo(11)), Some(RoundNo(3)));
        assert_eq!(
            book.marks(&sections, BoardNo(1), None),
            [(Seq(0), RoundNo(1)), (Seq(212), RoundNo(2))]
        );
        // Board 11 is in the rapid section: the hall's start and the section's.
        assert_eq!(
            book.marks(&sections, BoardNo(11), None),
            [
                (Seq(0), RoundNo(1)),
                (Seq(250), RoundNo(2)),
                (Seq(300), RoundNo(3))
            ]
        );
        // A board the hall first heard of in round 2 begins there.
        assert_eq!(
            book.marks(&sections, BoardNo(5), None),
            [(Seq(0), RoundNo(1)), (Seq(0), RoundNo(2))]
        );
        assert!(book.started(RoundNo(3), Some("rapid")));
        assert!(!book.started(RoundNo(3), None.or(Some("other"))));
        assert_eq!(book.rounds(), [RoundNo(1), RoundNo(2), RoundNo(3)]);
        assert_eq!(book.next_ordinal(), 4);
    }
}
