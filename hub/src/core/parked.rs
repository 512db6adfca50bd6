//! The games a forced round start took off its boards, played on in the shadow while the
//! chief arbiter may still undo the start: a forced start by mistake (a wrong round, the
//! wrong moment) ends every game it covers, and the chief must be able to give them back.
//!
//! At the switch, the board's state is kept as it stood; from then on it takes the board's
//! events as the board does ([`BoardState::apply`]), its effects kept for the relay. An undo
//! puts it back: the old game with every event since, exactly what a restart folds once the
//! start is taken back (the board's events, none of them a new game's). The window closes
//! for the whole start at the first move of a game it began, at an arbiter's decision at one
//! of its boards, or when a board's shadow holds [`SHADOW_EFFECTS`] effects.
//!
//! ```text
//!  forced start r+1 ──► board 7: park(state of r) ──► events: board 7 (game of r+1)
//!                                                        └──► shadow (game of r), effects kept
//!  undo ──► board 7 = shadow, the relay gets the effects ── a move in r+1: closed for good
//! ```

use std::collections::BTreeMap;

use protocol::BoardNo;

use super::board::{BoardEvent, BoardState};
use super::record::Record;
use super::rounds::UndoClosed;
use super::time::HubMs;

/// The most effects a board's shadow keeps (about an hour of a clock's reports): past it,
/// the start can no longer be undone.
pub const SHADOW_EFFECTS: usize = 4_096;

/// A board's old game, kept going since the forced start.
#[derive(Debug, Clone)]
pub struct Shadow {
    /// The board as the old game goes on.
    pub state: BoardState,
    /// What its events since did, for the relay, each at its record's time.
    pub events: Vec<(HubMs, BoardEvent)>,
}

/// The shadows of the last forced start's boards.
#[derive(Debug, Default)]
pub struct Parked {
    /// The start's ordinal, while its window is open.
    ordinal: Option<u32>,
    boards: BTreeMap<BoardNo, Shadow>,
    /// Why the last forced start's window closed.
    closed: Option<(u32, UndoClosed)>,
}

impl Parked {
    /// The forced start `ordinal` takes `state`'s game off its board: kept in the shadow. A
    /// shadow of an earlier start is dropped: only the last start can be undone.
    pub fn park(&mut self, ordinal: u32, state: &BoardState) {
        if self.closed(ordinal).is_some() {
            // A restart folds the start's switches board by board: one closed it already.
            return;
        }
        if self.ordinal != Some(ordinal) {
            self.boards.clear();
            self.ordinal = Some(ordinal);
        }
        let shadow = Shadow {
            state: state.clone(),
            events: Vec::new(),
        };
        self.boards.insert(state.number(), shadow);
    }

    /// Another start: no shadow is kept any longer.
    pub fn clear(&mut self) {
        self.ordinal = None;
        self.boards.clear();
    }

    /// `record` of a board, after the board took it: its shadow takes it too.
    pub fn follow(&mut self, record: &Record) {
        let board = record.event.board;
        let Some(shadow) = self.boards.get_mut(&board) else {
            return;
        };
        if let Some(events) = shadow.state.apply(record) {
            shadow
                .events
                .extend(events.into_iter().map(|e| (record.at, e)));
        }
        if shadow.events.len() > SHADOW_EFFECTS {
            self.close(UndoClosed::Full(board));
        }
    }

    /// The start's window closes for good.
    pub fn close(&mut self, why: UndoClosed) {
        if let Some(ordinal) = self.ordinal.take() {
            tracing::info!(ordinal, %why, "a forced start can no longer be undone");
            self.closed = Some((ordinal, why));
        }
        self.boards.clear();
    }

    /// Whether a forced start's games are kept.
    pub fn is_open(&self) -> bool {
        self.ordinal.is_some()
    }

    /// Whether `board`'s old game is kept in the shadow.
    pub fn holds(&self, board: BoardNo) -> bool {
        self.boards.contains_key(&board)
    }

    /// Why start `ordinal` can no longer be undone: its window closed, or it parked nothing
    /// (a start this hub did not see the boards of).
    pub fn closed(&self, ordinal: u32) -> Option<UndoClosed> {
        match self.closed {
            Some((closed, why)) if closed == ordinal => Some(why),
            _ => None,
        }
    }

    /// The shadows of start `ordinal`, taken for an undo.
    pub fn take(&mut self, ordinal: u32) -> BTreeMap<BoardNo, Shadow> {
        if self.ordinal != Some(ordinal) {
            return BTreeMap::new();
        }
        self.ordinal = None;
        std::mem::take(&mut self.boards)
    }
}
