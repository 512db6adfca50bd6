//! All boards of the hall, routed by board number.
//!
//! The hall is the fold of the journal: [`Hall::apply`] is called with every journaled
//! [`Record`] in order, live and on replay alike, so a restarted hub ends in the same state.
//!
//! ```
//! use hub::core::{hall::Hall, intake::Admission, record::Record, time::HubMs};
//! use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};
//!
//! let mut hall = Hall::default();
//! let event = Uplink::new(BoardNo(5), Seq(1), NodeMs(0), UplinkBody::Heartbeat);
//! assert_eq!(hall.admit(HubMs(10), &event), Admission::Accept);
//! let effects = hall.apply(&Record { at: HubMs(10), event });
//! assert!(effects.is_empty());
//! assert_eq!(hall.summaries(HubMs(10))[0].last_seq, Seq(1));
//! ```

use std::collections::BTreeMap;

use protocol::time_control::TimeControl;
use protocol::{BoardNo, Seq, Uplink};

use super::arbiter::{DecisionError, DecisionRecord};
use super::board::{BoardDetail, BoardEvent, BoardState, BoardSummary, NodeState, Urgency};
use super::claim::{ClaimCheck, ClaimRequest};
use super::effect::Effect;
use super::ids::RoundNo;
use super::intake::Admission;
use super::laws::Rules;
use super::parked::Parked;
use super::record::Record;
use super::rounds::{RoundBook, RoundStart, UndoClosed};
use super::sections::Sections;
use super::time::HubMs;

/// How long a board without a clock must show a move before it counts, by default: longer
/// than a hand pauses while sliding a piece, shorter than a reply takes.
pub const DEFAULT_DEBOUNCE_MS: u64 = 2_000;

/// What happened at `board`, as effects for the shell.
fn effects(board: BoardNo, events: Vec<BoardEvent>) -> Vec<Effect> {
    events
        .into_iter()
        .map(|event| match event {
            BoardEvent::Game(event) => Effect::Game { board, event },
            BoardEvent::Clock(event) => Effect::Clock { board, event },
            BoardEvent::NodeTimeStep(step) => Effect::NodeTimeStep { board, step },
        })
        .collect()
}

#[derive(Debug)]
pub struct Hall {
    /// Boxed: a B-tree's nodes are half full after boards arrive in order, and a board's
    /// state is over a kilobyte; a box costs the tree's slack a pointer, not a board.
    boards: BTreeMap<BoardNo, Box<BoardState>>,
    /// Each board's rules and time control.
    sections: Sections,
    /// Which round each section plays: a board first heard of begins in its section's.
    rounds: RoundBook,
    /// Boards whose node reports no clock: how long a move must stand to count; `None`
    /// waits for presses that never come.
    debounce_ms: Option<u64>,
    /// The games the last forced start took off its boards, while it may be undone.
    parked: Parked,
}

/// A board given back its game when a forced start is undone.
#[derive(Debug, Clone)]
pub struct GivenBack {
    pub board: BoardNo,
    /// The round of the game given back.
    pub round: RoundNo,
    /// What the board's events since the start did in that game, each at its time: for the
    /// relay, which has the game only as the start left it.
    pub effects: Vec<(HubMs, Effect)>,
}

impl Default for Hall {
    fn default() -> Hall {
        Hall::new(Rules::default())
    }
}

impl Hall {
    /// A hall whose games follow `rules`.
    pub fn new(rules: Rules) -> Hall {
        Hall {
            boards: BTreeMap::new(),
            sections: Sections::one(rules, None),
            rounds: RoundBook::default(),
            debounce_ms: Some(DEFAULT_DEBOUNCE_MS),
            parked: Parked::default(),
        }
    }

    /// A restart resumes `board` where `round` started, its node as the start kept it and
    /// its events up to `mark` not read again.
    pub fn resume(&mut self, board: BoardNo, round: RoundNo, node: NodeState, mark: Seq) {
        let section = self.sections.of(board);
        let state = BoardState::resumed(
            board,
            round,
            section.rules,
            section.time_control.clone(),
            self.debounce_ms,
            node,
            mark,
        );
        self.boards.insert(board, Box::new(state));
    }

    /// `board`, if never heard of, begins in `round` (a restart: the round its first event
    /// was in).
    pub fn ensure(&mut self, board: BoardNo, round: RoundNo) {
        let Hall {
            boards,
            sections,
            debounce_ms,
            ..
        } = self;
        boards
            .entry(board)
            .or_insert_with(|| new_board(sections, *debounce_ms, board, round));
    }

    /// The hall's boards play in `sections`, each under its rules and time control.
    #[must_use]
    pub fn with_sections(mut self, sections: Sections) -> Hall {
        self.sections = sections;
        self
    }

    /// Boards without a clock complete a move that stood `debounce_ms` (`None`: never).
    #[must_use]
    pub fn with_debounce(mut self, debounce_ms: Option<u64>) -> Hall {
        self.debounce_ms = debounce_ms;
        self
    }

    /// Every board's clock runs `time_control` (a hall of one section): the hub models and
    /// checks it.
    #[must_use]
    pub fn with_time_control(mut self, time_control: Option<TimeControl>) -> Hall {
        let rules = self.sections.hall().rules;
        self.sections = Sections::one(rules, time_control);
        self
    }

    pub fn sections(&self) -> &Sections {
        &self.sections
    }

    /// The rounds started, and which round each section plays.
    pub fn rounds(&self) -> &RoundBook {
        &self.rounds
    }

    /// The rounds a restart found in the journal, in place of the one a new hall begins in.
    pub fn set_rounds(&mut self, rounds: RoundBook) {
        self.rounds = rounds;
    }

    /// A round started: boards first heard of from now on begin in it. The boards in play
    /// go on to it one by one ([`Hall::new_game`]), where their events say.
    pub fn round_started(&mut self, start: RoundStart) {
        if !start.forced {
            self.parked.clear();
        }
        self.rounds.push(start);
    }

    /// `board` goes on to its game of `round`; `false` for a board never heard of. When the
    /// last start, forced, moves it there, the game it leaves is kept in the shadow for an
    /// undo ([`Parked`]).
    pub fn new_game(&mut self, board: BoardNo, round: RoundNo) -> bool {
        let forced = self
            .rounds
            .last()
            .filter(|s| s.forced && s.round == round && s.covers(&self.sections, board))
            .map(|s| s.ordinal);
        match self.boards.get_mut(&board) {
            Some(state) => {
                if let Some(ordinal) = forced {
                    self.parked.park(ordinal, state);
                }
                state.new_game(round);
                true
            }
            None => false,
        }
    }

    /// Whether `board` plays a game the last start, forced, began while it may be undone.
    fn in_undoable_round(&self, board: BoardNo) -> bool {
        self.parked.holds(board)
            || self.rounds.last().is_some_and(|s| {
                s.forced
                    && self.parked.closed(s.ordinal).is_none()
                    && s.covers(&self.sections, board)
                    && self
                        .boards
                        .get(&board)
                        .is_some_and(|b| b.round() == s.round)
            })
    }

    /// An arbiter decided at `board` (its game in play or one archived): a forced start
    /// that began its game can no longer be undone.
    pub fn decided_at(&mut self, board: BoardNo) {
        if self.in_undoable_round(board) {
            self.parked.close(UndoClosed::Decided(board));
        }
    }

    /// Why the last start, forced, can no longer be undone; `None` while it can.
    pub fn undo_closed(&self, ordinal: u32) -> Option<UndoClosed> {
        self.parked.closed(ordinal)
    }

    /// The forced start `record` names is taken back: every board it took a game off plays
    /// that game again as its shadow kept it, and a board first heard of since plays its
    /// game in the round before, as a restart folds them once the start is taken back.
    pub fn round_undone(&mut self, record: RoundStart) -> Vec<GivenBack> {
        let Some(start) = self
            .rounds
            .last()
            .filter(|s| Some(s.ordinal) == record.undoes)
            .cloned()
        else {
            return Vec::new();
        };
        let mut shadows = self.parked.take(start.ordinal);
        self.rounds.undo(record);
        let mut given = Vec::new();
        for (number, state) in &mut self.boards {
            if !start.covers(&self.sections, *number) || state.round() != start.round {
                continue;
            }
            match shadows.remove(number) {
                Some(shadow) => {
                    **state = shadow.state;
                    let effects = shadow
                        .events
                        .into_iter()
                        .flat_map(|(at, event)| {
                            effects(*number, vec![event])
                                .into_iter()
                                .map(move |e| (at, e))
                        })
                        .collect();
                    given.push(GivenBack {
                        board: *number,
                        round: state.round(),
                        effects,
                    });
                }
                None => {
                    let before = round_in_play(&self.rounds, &self.sections, *number);
                    state.renumber(before);
                    given.push(GivenBack {
                        board: *number,
                        round: before,
                        effects: Vec::new(),
                    });
                }
            }
        }
        given
    }

    /// The round `board` plays now: its game's, or for a board never heard of, its
    /// section's.
    pub fn round_of(&self, board: BoardNo) -> RoundNo {
        self.boards.get(&board).map_or_else(
            || round_in_play(&self.rounds, &self.sections, board),
            |b| b.round(),
        )
    }

    /// Decides what to do with an event off the wire; notes that its node was heard. The
    /// game is not touched: only journaled events change it, through [`Hall::apply`].
    pub fn admit(&mut self, now: HubMs, event: &Uplink) -> Admission {
        self.board_mut(event.board).admit(now, event.seq)
    }

    /// The fold step: applies one journaled record.
    pub fn apply(&mut self, record: &Record) -> Vec<Effect> {
        let board = record.event.board;
        let effects = match self.board_mut(board).apply(record) {
            Some(events) => effects(board, events),
            None => vec![Effect::OutOfSequence {
                board,
                seq: record.event.seq,
            }],
        };
        if self.parked.is_open() {
            self.parked.follow(record);
            let moved = self
                .boards
                .get(&board)
                .is_some_and(|b| !b.game().moves().is_empty());
            if moved && self.in_undoable_round(board) {
                self.parked.close(UndoClosed::Moved(board));
            }
        }
        effects
    }

    /// A board's event `seq` whose record the journal cannot read: the board's sequence goes
    /// on after it. `false` when it is not the board's next event (nothing changes).
    pub fn skip_damaged(&mut self, board: BoardNo, seq: Seq) -> bool {
        self.board_mut(board).skip_damaged(seq)
    }

    /// Forgets `board` if nothing happened on it (no event, no decision): a board made for a
    /// decision that was refused.
    pub fn forget_unplayed(&mut self, board: BoardNo) {
        if self.boards.get(&board).is_some_and(|b| !b.played()) {
            self.boards.remove(&board);
        }
    }

    /// The fold step for an arbiter's decision: carried out at `record.board`, after the
    /// board's event `record.after_seq`. A decision that does not fit changes nothing. A
    /// board that reported nothing takes one only when `paired` (a board without an
    /// e-board: its result is the arbiter's to enter).
    pub fn decide(
        &mut self,
        record: &DecisionRecord,
        paired: bool,
    ) -> Result<Vec<Effect>, DecisionError> {
        let board = record.board;
        let state = self
            .boards
            .get_mut(&board)
            .filter(|b| paired || b.last_seq().0 > 0)
            .ok_or(DecisionError::UnknownBoard(record.board))?;
        let events = state.decide(record)?;
        self.decided_at(board);
        Ok(effects(board, events))
    }

    /// The journal flushed `board`'s events up to `seq`.
    pub fn flushed(&mut self, board: BoardNo, seq: Seq) -> Option<Effect> {
        self.board_mut(board)
            .flushed(seq)
            .map(|up_to| Effect::Ack { board, up_to })
    }

    /// After a replay every applied event is durable: duplicates of them get acknowledged.
    pub fn replayed(&mut self) {
        for board in self.boards.values_mut() {
            board.replayed();
        }
    }

    pub fn summaries(&self, now: HubMs) -> Vec<BoardSummary> {
        self.boards.values().map(|b| b.summary(now)).collect()
    }

    pub fn detail(&self, board: BoardNo, now: HubMs) -> Option<BoardDetail> {
        self.boards.get(&board).map(|b| b.detail(now))
    }

    /// Checks a draw claim on `board` for the arbiter; `None` for a board never heard of.
    pub fn check_claim(&self, board: BoardNo, request: &ClaimRequest) -> Option<ClaimCheck> {
        self.boards
            .get(&board)
            .map(|b| b.game().check_claim(request))
    }

    /// The hall's boards in play with a clock, the most urgent first: fallen flags, then the
    /// shortest time to the running side's flag; boards whose clock stands last.
    pub fn time_trouble(&self, now: HubMs) -> Vec<Urgency> {
        let mut ranking: Vec<Urgency> = self
            .boards
            .values()
            .filter_map(|b| b.urgency(now))
            .collect();
        ranking.sort_by_key(|u| (u.time_to_flag_ms.is_none(), u.time_to_flag_ms, u.board));
        ranking
    }

    /// The numbers of every board heard of, in order.
    pub fn boards(&self) -> Vec<BoardNo> {
        self.boards.keys().copied().collect()
    }

    pub fn board(&self, board: BoardNo) -> Option<&BoardState> {
        self.boards.get(&board).map(|b| &**b)
    }

    pub fn len(&self) -> usize {
        self.boards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.boards.is_empty()
    }

    /// Boards whose node was heard within [`super::board::NODE_SILENT_MS`].
    pub fn connected_nodes(&self, now: HubMs) -> usize {
        self.boards
            .values()
            .filter(|b| b.node_connected(now))
            .count()
    }

    /// `board`, begun in the round in play if never heard of: one search of the boards, for
    /// this runs twice at every event of the hall.
    fn board_mut(&mut self, board: BoardNo) -> &mut BoardState {
        let Hall {
            boards,
            sections,
            rounds,
            debounce_ms,
            ..
        } = self;
        boards.entry(board).or_insert_with(|| {
            let round = round_in_play(rounds, sections, board);
            new_board(sections, *debounce_ms, board, round)
        })
    }
}

/// The round a board never heard of begins in: its section's round in play, else the first.
fn round_in_play(rounds: &RoundBook, sections: &Sections, board: BoardNo) -> RoundNo {
    rounds.of_board(sections, board).unwrap_or(RoundNo::FIRST)
}

/// A board never heard of, begun in `round` under its section's rules and time control.
fn new_board(
    sections: &Sections,
    debounce_ms: Option<u64>,
    board: BoardNo,
    round: RoundNo,
) -> Box<BoardState> {
    let section = sections.of(board);
    Box::new(BoardState::new(
        board,
        round,
        section.rules,
        section.time_control.clone(),
        debounce_ms,
    ))
}
