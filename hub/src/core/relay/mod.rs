//! The broadcast relay's view of the games: what the public may see of each board, and
//! since when.
//!
//! The relay is fed the same effects as the rest of the shell, with the hub's time they
//! happened at (live, and again on replay, so a restarted hub shows the same feed). It keeps
//! for each board when each move was completed and when the game ended; with a broadcast
//! delay (anti-cheat) the public sees each game as it was `delay` ago, while arbiters' views
//! are never delayed. Rendering is in [`pgn`]; the settings, tags and the live feed's
//! message in [`public`]; the board ranges a slice of a round is, in [`slices`].

pub mod pgn;
pub mod public;
pub mod slices;

use std::collections::BTreeMap;

use super::arbiter::{Decision, DecisionRecord, GameResult};
use super::clock::ClockEvent;
use super::effect::Effect;
use super::game::GameEvent;
use super::ids::BoardNo;
use super::time::HubMs;

/// When a game's moves and its end happened (hub time).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    /// When move `i + 1` was completed.
    completed_at: Vec<HubMs>,
    /// When the game ended (the rules, or the arbiter's result).
    ended_at: Option<HubMs>,
    /// When the first flag fell (the result then waits for the arbiter, 6.8).
    flagged_at: Option<HubMs>,
    /// When anything the feed shows last changed (a reinstatement, an illegal move that
    /// stood, a withdrawn result).
    changed_at: HubMs,
}

/// What the public sees of a board at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Visible {
    /// Moves shown.
    pub plies: usize,
    /// Whether the result is shown.
    pub ended: bool,
    /// Whether a flag had fallen, after every move shown.
    pub flagged: bool,
    /// When what is shown last changed: `Last-Modified`.
    pub as_of: HubMs,
}

#[derive(Debug, Clone, Default)]
pub struct Relay {
    timelines: BTreeMap<BoardNo, Timeline>,
}

impl Relay {
    /// Takes in what happened at a board at `at`.
    pub fn on_effect(&mut self, at: HubMs, effect: &Effect) {
        if let Effect::Clock {
            board,
            event: ClockEvent::FlagFall { .. },
        } = effect
        {
            let timeline = self.timelines.entry(*board).or_default();
            timeline.flagged_at.get_or_insert(at);
            return;
        }
        let Effect::Game { board, event } = effect else {
            return;
        };
        let timeline = self.timelines.entry(*board).or_default();
        match event {
            GameEvent::MoveCompleted { ply, .. } => {
                timeline.completed_at.truncate(ply - 1);
                timeline.completed_at.push(at);
            }
            GameEvent::Reinstated { ply } => {
                timeline.completed_at.truncate(*ply);
                timeline.ended_at = None;
                timeline.changed_at = at;
            }
            GameEvent::GameOver { .. } => timeline.ended_at = Some(at),
            GameEvent::IllegalMoveStood { .. } | GameEvent::OrderChosen { .. } => {
                timeline.changed_at = at;
            }
            _ => {}
        }
    }

    /// Takes in an arbiter's decision: a declared result ends the game for the feed; `*`
    /// withdraws it.
    pub fn on_decision(&mut self, record: &DecisionRecord) {
        let timeline = self.timelines.entry(record.board).or_default();
        match &record.action.decision {
            Decision::Result {
                result: GameResult::Ongoing,
                ..
            } => {
                timeline.ended_at = None;
                timeline.changed_at = record.at;
            }
            Decision::Result { .. } => timeline.ended_at = Some(record.at),
            Decision::Reinstate { ply } => {
                timeline.completed_at.truncate(*ply);
                timeline.ended_at = None;
                timeline.changed_at = record.at;
            }
            // The game's events say what an order changed.
            Decision::ClaimRejected { .. }
            | Decision::AdjustTime { .. }
            | Decision::Order { .. } => {}
        }
    }

    /// What the public sees of `board` at `now` with a delay of `delay_ms`.
    pub fn visible(&self, board: BoardNo, now: HubMs, delay_ms: u64) -> Visible {
        self.timelines
            .get(&board)
            .map_or(Visible::NOTHING, |t| t.visible(now, delay_ms))
    }

    /// When the first move of `board` was completed: the game's date.
    pub fn started_at(&self, board: BoardNo) -> Option<HubMs> {
        self.timelines.get(&board)?.started_at()
    }

    /// When move `ply` (from 1) of `board` was completed.
    pub fn completed_at(&self, board: BoardNo, ply: usize) -> Option<HubMs> {
        self.timelines
            .get(&board)?
            .completed_at
            .get(ply.checked_sub(1)?)
            .copied()
    }

    /// `board`'s game in play as the feed follows it.
    pub fn timeline(&self, board: BoardNo) -> Option<&Timeline> {
        self.timelines.get(&board)
    }

    /// `board`'s game is over for the relay (its round ended): its timeline, for the
    /// archive; the board's next game starts with none.
    pub fn take(&mut self, board: BoardNo) -> Timeline {
        self.timelines.remove(&board).unwrap_or_default()
    }

    /// `board` plays again the game whose timeline [`Relay::take`] took.
    pub fn put_back(&mut self, board: BoardNo, timeline: Timeline) {
        self.timelines.insert(board, timeline);
    }
}

impl Visible {
    /// A game nobody has seen anything of.
    pub const NOTHING: Visible = Visible {
        plies: 0,
        ended: false,
        flagged: false,
        as_of: HubMs(0),
    };
}

impl Timeline {
    /// What the public sees of the game at `now` with a delay of `delay_ms`.
    pub fn visible(&self, now: HubMs, delay_ms: u64) -> Visible {
        let horizon = HubMs(now.0.saturating_sub(delay_ms));
        let plies = self
            .completed_at
            .iter()
            .take_while(|at| **at <= horizon)
            .count();
        let all_moves = plies == self.completed_at.len();
        let ended = self.ended_at.is_some_and(|at| at <= horizon) && all_moves;
        let flagged = self.flagged_at.is_some_and(|at| at <= horizon) && all_moves;
        let last_move = plies.checked_sub(1).map(|i| self.completed_at[i]);
        let as_of = [
            last_move,
            ended.then_some(self.ended_at).flatten(),
            flagged.then_some(self.flagged_at).flatten(),
            Some(self.changed_at).filter(|at| *at <= horizon),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(HubMs(0));
        Visible {
            plies,
            ended,
            flagged,
            as_of,
        }
    }

    /// When the first move was completed: the game's date.
    pub fn started_at(&self) -> Option<HubMs> {
        self.completed_at.first().copied()
    }

    /// A result declared or withdrawn for the game at `at` (after it was archived).
    pub fn result_changed(&mut self, at: HubMs, ended: bool) {
        self.ended_at = ended.then_some(at);
        self.changed_at = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::BoardNo;

    fn moved(relay: &mut Relay, at: u64, ply: usize) {
        relay.on_effect(
            HubMs(at),
            &Effect::Game {
                board: BoardNo(1),
                event: GameEvent::MoveCompleted {
                    ply,
                    san: String::new(),
                },
            },
        );
    }

    #[test]
    fn with_a_delay_the_public_sees_the_game_as_it_was() {
        let mut relay = Relay::default();
        for (ply, at) in [(1, 1_000), (2, 5_000), (3, 9_000)] {
            moved(&mut relay, at, ply);
        }
        relay.on_effect(
            HubMs(9_000),
            &Effect::Game {
                board: BoardNo(1),
                event: GameEvent::GameOver {
                    status: crate::core::ending::Status::Checkmate,
                },
            },
        );
        let seen = |now, delay| relay.visible(BoardNo(1), HubMs(now), delay);
        assert_eq!(seen(10_000, 0).plies, 3);
        assert!(seen(10_000, 0).ended);
        // 5 s delay at 10 s: what was there at 5 s.
        let delayed = seen(10_000, 5_000);
        assert_eq!(
            (delayed.plies, delayed.ended, delayed.as_of),
            (2, false, HubMs(5_000))
        );
        assert_eq!(seen(14_000, 5_000).plies, 3);
        assert!(seen(14_000, 5_000).ended);
        assert_eq!(seen(2_000, 5_000).plies, 0);
    }

    #[test]
    fn a_reinstatement_takes_moves_back_from_the_feed() {
        let mut relay = Relay::default();
        for (ply, at) in [(1, 1_000), (2, 2_000), (3, 3_000)] {
            moved(&mut relay, at, ply);
        }
        relay.on_effect(
            HubMs(4_000),
            &Effect::Game {
                board: BoardNo(1),
                event: GameEvent::Reinstated { ply: 1 },
            },
        );
        let now = relay.visible(BoardNo(1), HubMs(5_000), 0);
        assert_eq!((now.plies, now.as_of), (1, HubMs(4_000)));
        moved(&mut relay, 6_000, 2);
        assert_eq!(relay.visible(BoardNo(1), HubMs(7_000), 0).plies, 2);
    }
}
