//! Whether the board shows the game, and boards without a clock: a legal move that stood
//! on the board for the debounce interval counts as completed.

use protocol::NodeMs;
use serde::{Deserialize, Serialize};

use super::{Game, GameEvent};

/// How long a board may show something else than the position or a legal successor (a
/// lifted piece, a capture half made) before it counts as out of sync.
pub const OUT_OF_SYNC_MS: u64 = 10_000;

/// Whether the board shows the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardSync {
    /// The board shows the position, or a legal successor waiting for the press.
    InSync,
    /// It has shown something else for less than [`OUT_OF_SYNC_MS`]: a hand at work.
    Unsettled,
    /// It has shown something else for longer.
    OutOfSync,
}

impl Game {
    /// Time passes on the board (any event, a heartbeat included): on a board without a
    /// clock the successor that stood long enough is completed; raises
    /// [`GameEvent::OutOfSync`] once the board has not shown the game for too long.
    pub fn observe(&mut self, at: NodeMs) -> Vec<GameEvent> {
        let mut events = self.settle(at);
        events.extend(self.check_out_of_sync(at));
        events
    }

    /// Boards without a clock: completes the successor the board has shown for the debounce
    /// interval by `at`. The move counts from the moment the interval ended, so the outcome
    /// does not depend on when the next event arrives.
    pub(super) fn settle(&mut self, at: NodeMs) -> Vec<GameEvent> {
        let (Some(debounce), Some((m, since))) = (self.debounce_ms, self.shown_successor) else {
            return Vec::new();
        };
        if at.0 < since.0 + debounce || !self.playing() {
            return Vec::new();
        }
        self.shown_successor = None;
        let mut events = self.complete(NodeMs(since.0 + debounce), m);
        events.extend(self.resync(at, true));
        events
    }

    /// Once the game is over the board is no longer the game's (the kings' result signal,
    /// pieces put back for the next round): only a game in play can be out of sync.
    pub(super) fn check_out_of_sync(&mut self, at: NodeMs) -> Vec<GameEvent> {
        match self.unsettled_since {
            Some(since)
                if self.playing()
                    && !self.out_of_sync_raised
                    && at.0.saturating_sub(since.0) >= OUT_OF_SYNC_MS =>
            {
                self.out_of_sync_raised = true;
                vec![GameEvent::OutOfSync { since: since.0 }]
            }
            _ => Vec::new(),
        }
    }

    /// Whether the board shows the game at node time `now`.
    pub fn sync(&self, now: NodeMs) -> BoardSync {
        match self.unsettled_since {
            None => BoardSync::InSync,
            Some(since) if now.0.saturating_sub(since.0) >= OUT_OF_SYNC_MS => BoardSync::OutOfSync,
            Some(_) => BoardSync::Unsettled,
        }
    }

    /// Notes whether the board now shows the game (its position, a legal successor, or a
    /// game that is over), then checks the time.
    pub(super) fn resync(&mut self, at: NodeMs, shows_game: bool) -> Vec<GameEvent> {
        if shows_game {
            self.unsettled_since = None;
            if std::mem::take(&mut self.out_of_sync_raised) {
                return vec![GameEvent::BackInSync];
            }
            return Vec::new();
        }
        self.unsettled_since.get_or_insert(at);
        self.check_out_of_sync(at)
    }
}
