//! The hub's rounds: a round starts (the chief arbiter, the schedule, or the configuration
//! for a new hub), every board it covers archives its game and begins the next, and what
//! was played stays served.
//!
//! ```text
//!  POST /api/rounds/{r}/start ─┐
//!  [[rounds]] start, when due ─┼─► start_round ──► Write(RoundStart) ──► each board covered:
//!  a new hub's first round  ───┘                   switch: its game ──► Write(Game), archive
//!                                                          the board ──► a new game of r
//!  restart: each board's events, and before the event after a start's mark, the switch
//! ```

use std::collections::{BTreeMap, VecDeque};

use protocol::BoardNo;

use super::durable::Deferred;
use super::output::{Reply, RequestId, Write};
use super::Hub;
use crate::core::arbiter::GameResult;
use crate::core::archive::PlayedGame;
use crate::core::board::BoardDetail;
use crate::core::ids::{RoundNo, Seq};
use crate::core::pairings::{Pairing, RoundState, Rounds, Started, Undone};
use crate::core::relay::public;
use crate::core::rounds::{Resume, RoundStart, StartError, BY_CONFIGURATION, BY_SCHEDULE};
use crate::core::time::HubMs;

/// How a round is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRequest {
    pub round: RoundNo,
    /// One section only; `None`: every section.
    pub section: Option<String>,
    /// Start it although the round before is still being played (its games are archived as
    /// they stand).
    pub force: bool,
    /// Who starts it.
    pub by: String,
    /// The arbiter whose own login asks, held to their role; `None` for the hall's token
    /// (and the schedule).
    pub login: Option<String>,
}

/// Each board's round starts still to fold in on a restart: before the event after the
/// mark, the board goes on to the round.
#[derive(Debug, Default)]
pub(super) struct Marks {
    pending: BTreeMap<BoardNo, VecDeque<(Seq, RoundNo)>>,
}

impl Hub {
    /// A round starts on an arbiter's request: answered with the rounds once durable, or at
    /// once with why not. Starting the round in play again changes nothing.
    pub fn handle_round_start(&mut self, now: HubMs, request: RequestId, start: StartRequest) {
        self.now = self.now.max(now);
        if let Err(e) = self.may_start(&start) {
            return self.reply(request, Reply::RoundStarted(Err(e)));
        }
        match self.start_round(now, start) {
            Ok(Some(at)) => self.pending.wait(at, Deferred::RoundStarted(request)),
            Ok(None) => {
                let rounds = self.round_states();
                self.reply(request, Reply::RoundStarted(Ok(rounds)));
            }
            Err(e) => self.reply(request, Reply::RoundStarted(Err(e))),
        }
    }

    /// Why a person's start may not go ahead: only the chief arbiter starts rounds (a start
    /// ends every game it covers, forced or not), and only the round in play or the one
    /// after it, in every section the start covers. Before any round started, any round
    /// may (a hub that joins an event late).
    fn may_start(&self, start: &StartRequest) -> Result<(), StartError> {
        self.chief_only(start.login.as_deref())?;
        let book = self.hall.rounds();
        let covered: Vec<Option<String>> = match &start.section {
            Some(section) => vec![Some(section.clone())],
            None => self.section_names(),
        };
        for in_play in covered.iter().filter_map(|s| book.in_play(s.as_deref())) {
            let next = RoundNo(in_play.0.saturating_add(1));
            if start.round != in_play && start.round != next {
                return Err(StartError::NotNext {
                    round: start.round,
                    in_play,
                    next,
                });
            }
        }
        Ok(())
    }

    /// Only the chief arbiter starts a round or undoes a start: the hall's token (`login`
    /// `None`), or an arbiter the configuration makes `chief`.
    pub(super) fn chief_only(&self, login: Option<&str>) -> Result<(), StartError> {
        match login {
            Some(name) if !self.desk.routing().arbiter(name).is_some_and(|a| a.chief) => {
                Err(StartError::NotChief(name.to_owned()))
            }
            _ => Ok(()),
        }
    }

    /// Starts a round: journaled, then every board it covers goes on to it. `Ok(None)` for
    /// the round already in play (nothing changes).
    fn start_round(
        &mut self,
        now: HubMs,
        request: StartRequest,
    ) -> Result<Option<super::Position>, StartError> {
        let section = request.section.as_deref();
        if section.is_some() && self.hall.sections().named(section).is_none() {
            return Err(StartError::UnknownSection(
                request.section.clone().unwrap_or_default(),
            ));
        }
        let book = self.hall.rounds();
        let covered_rounds: Vec<Option<RoundNo>> = match section {
            Some(_) => vec![book.in_play(section)],
            None => self
                .section_names()
                .iter()
                .map(|s| book.in_play(s.as_deref()))
                .collect(),
        };
        if covered_rounds.iter().all(|r| *r == Some(request.round)) {
            return Ok(None);
        }
        if book.started(request.round, section) {
            return Err(StartError::StartedBefore(request.round));
        }
        if !request.force {
            let paired_event = !self.rounds.pairings.is_empty();
            if paired_event && self.rounds.games(request.round).is_empty() {
                return Err(StartError::NoPairings(request.round));
            }
            let still = self.still_played(section);
            if let Some(&(round, _)) = still.first() {
                return Err(StartError::StillPlayed {
                    round,
                    boards: still.into_iter().map(|(_, b)| b).collect(),
                });
            }
        }
        let covers = |hub: &Hub, board: BoardNo| {
            section.is_none() || hub.hall.sections().of(board).name.as_deref() == section
        };
        let boards: Vec<BoardNo> = self
            .hall
            .boards()
            .into_iter()
            .filter(|b| covers(self, *b))
            .collect();
        let start = RoundStart {
            ordinal: book.next_ordinal(),
            round: request.round,
            section: request.section.clone(),
            at: now,
            by: request.by,
            forced: request.force,
            after: boards
                .iter()
                .filter_map(|b| Some((*b, self.hall.board(*b)?.last_seq())))
                .collect(),
            nodes: boards
                .iter()
                .filter_map(|b| Some((*b, self.hall.board(*b)?.node().clone())))
                .collect(),
            undoes: None,
        };
        tracing::warn!(round = start.round.0, section = ?start.section, by = %start.by, forced = start.forced, "round started");
        let at = self.write(Write::RoundStart(start.clone()));
        self.hall.round_started(start);
        for board in boards {
            self.switch(now, board, request.round, true);
        }
        self.round_changed();
        Ok(Some(at))
    }

    /// The rounds' names of every section, the hall's own (`None`) first.
    fn section_names(&self) -> Vec<Option<String>> {
        std::iter::once(None)
            .chain(self.hall.sections().all().iter().map(|s| s.name.clone()))
            .collect()
    }

    /// The games of the round in play (in `section`, or every section) not yet over: by the
    /// pairings where there are some, else every board whose game began.
    fn still_played(&self, section: Option<&str>) -> Vec<(RoundNo, BoardNo)> {
        let sections = self.hall.sections();
        let in_section =
            |board: BoardNo| section.is_none() || sections.of(board).name.as_deref() == section;
        let mut still = Vec::new();
        for board in self.hall.boards().into_iter().filter(|b| in_section(*b)) {
            let Some(state) = self.hall.board(board) else {
                continue;
            };
            let round = state.round();
            let paired = self.rounds.games(round);
            let to_play = if paired.is_empty() {
                state.played() && !state.game().moves().is_empty()
            } else {
                paired.iter().any(|p| p.board == board && p.result == "*")
            };
            if to_play && !state.game().result().is_decided() {
                still.push((round, board));
            }
        }
        // Paired boards the hub never heard from (no e-board): their results are the
        // arbiters' to enter.
        for round in self
            .section_names()
            .iter()
            .filter(|s| section.is_none() || s.as_deref() == section)
            .filter_map(|s| self.hall.rounds().in_play(s.as_deref()))
        {
            for game in self.rounds.games(round) {
                let unheard = self.hall.board(game.board).is_none();
                if unheard && game.result == "*" && in_section(game.board) {
                    still.push((round, game.board));
                }
            }
        }
        still.sort_unstable();
        still.dedup();
        still
    }

    /// `board` goes on to its game of `round`: the game in play is archived if anything
    /// happened in it (and journaled when `live`: on a restart it is in the journal already).
    pub(super) fn switch(&mut self, now: HubMs, board: BoardNo, round: RoundNo, live: bool) {
        let Some(state) = self.hall.board(board) else {
            return;
        };
        if state.round() == round {
            return;
        }
        let old_round = state.round();
        if state.played() {
            let finished = state.finished(now);
            let timeline = self.relay.take(board);
            let tags = public::tags(
                &self.hall,
                &self.rounds,
                &self.broadcast,
                &self.event,
                old_round,
                board,
            );
            let game = PlayedGame {
                round: old_round,
                board,
                detail: finished.detail,
                standing: finished.standing,
                ruled: finished.ruled,
                pgn: finished.pgn,
                timeline,
                tags,
                flag_result: finished.flag_result,
            };
            if live {
                let _ = self.write(Write::Game(Box::new(game.clone())));
            }
            self.archive.insert(game);
            self.archive_changes += 1;
        } else {
            let _ = self.relay.take(board);
        }
        self.hall.new_game(board, round);
        let changes = self.desk.new_game(now, board, round);
        self.record_alerts(changes, None);
        if live {
            // What the desk watched in the old game is no more; the new game's, from now.
            self.watch(now, board);
        }
    }

    /// The round in play changed: the desk learns its players, its boards and its start.
    pub(super) fn round_changed(&mut self) {
        let round = self.round_in_play();
        // White's clocks start at the scheduled start (6.5); a round started without one
        // began when it was started.
        let started = self
            .hall
            .rounds()
            .starts()
            .iter()
            .rev()
            .find(|s| s.round == round && s.by != BY_CONFIGURATION)
            .map(|s| s.at);
        self.desk.set_players(self.rounds.seating(round));
        self.desk.set_round(
            round,
            self.rounds.start(round).map(HubMs).or(started),
            self.rounds.boards_to_play(round),
        );
        self.round_start_watched = false;
    }

    /// The round a hub begins in: the configuration's, until the journal says otherwise.
    pub(super) fn first_start(rounds: &Rounds) -> RoundStart {
        RoundStart {
            ordinal: 1,
            round: rounds.first_round(),
            section: None,
            at: HubMs(0),
            by: BY_CONFIGURATION.to_owned(),
            forced: false,
            after: BTreeMap::new(),
            nodes: BTreeMap::new(),
            undoes: None,
        }
    }

    /// The journal's rounds; a journal with none (a new hub, or one from before rounds were
    /// kept) begins in the configuration's, which is journaled now.
    pub(super) fn restore_rounds(&mut self, starts: Vec<RoundStart>) {
        if starts.is_empty() {
            let first = Hub::first_start(&self.rounds);
            let _ = self.write(Write::RoundStart(first));
        } else {
            self.hall
                .set_rounds(crate::core::rounds::RoundBook::new(starts));
        }
    }

    /// The pairings and the scheduled starts as the pairing files now give them; a result
    /// the files correct stands ([`Hub::take_corrections`]).
    pub fn set_rounds(&mut self, now: HubMs, rounds: Rounds) {
        self.now = self.now.max(now);
        self.rounds = rounds;
        self.round_changed();
        self.take_corrections(now);
    }

    /// The round the hall plays (the hall's own boards'; a section may play another).
    pub fn round_in_play(&self) -> RoundNo {
        self.hall.rounds().in_play(None).unwrap_or(RoundNo::FIRST)
    }

    /// Where a restart may resume each board without reading its finished rounds' events
    /// again: the journal's round starts that kept the board's node.
    pub fn resume_points(starts: &[RoundStart]) -> BTreeMap<BoardNo, Resume> {
        crate::core::rounds::RoundBook::new(starts.to_vec()).resume_points()
    }

    /// A restart resumes every board a round's start kept the node of: its finished games
    /// from `games` (the journal's archive), its first events for its stream (`heads`), its
    /// node as the start kept it, and from there the rounds that started after.
    pub(super) fn resume_boards(
        &mut self,
        games: Vec<PlayedGame>,
        heads: Vec<crate::core::record::Record>,
    ) -> BTreeMap<BoardNo, Resume> {
        let resumed = self.hall.rounds().resume_points();
        for game in games {
            // A board replayed whole archives its games again as it goes.
            if resumed
                .get(&game.board)
                .is_some_and(|r| game.round < r.round)
            {
                self.archive.insert(game);
                self.archive_changes += 1;
            }
        }
        for record in heads
            .iter()
            .filter(|r| resumed.contains_key(&r.event.board))
        {
            self.streams.journaled(&record.event);
        }
        for (board, resume) in &resumed {
            let marks =
                self.hall
                    .rounds()
                    .marks(self.hall.sections(), *board, Some(resume.ordinal));
            self.marks.pending.insert(*board, marks.into());
            self.hall
                .resume(*board, resume.round, resume.node.clone(), resume.mark);
            self.streams.resume(*board, resume.mark);
        }
        resumed
    }

    /// On a restart, before `board`'s event `seq` (or, with `None`, after its last): the
    /// rounds that started before it.
    pub(super) fn catch_up_rounds(&mut self, at: HubMs, board: BoardNo, seq: Option<Seq>) {
        if !self.marks.pending.contains_key(&board) {
            let marks = self.hall.rounds().marks(self.hall.sections(), board, None);
            self.marks.pending.insert(board, marks.into());
        }
        let pending = self.marks.pending.get_mut(&board).expect("inserted");
        if self.hall.board(board).is_none() {
            // The board was first heard of in the round of the last start before its first
            // event.
            let mut first = None;
            while let Some(&(mark, round)) = pending.front() {
                if mark.0 > 0 {
                    break;
                }
                first = Some(round);
                pending.pop_front();
            }
            self.hall.ensure(board, first.unwrap_or(RoundNo::FIRST));
        }
        loop {
            let Some(pending) = self.marks.pending.get_mut(&board) else {
                return;
            };
            let due = pending
                .front()
                .is_some_and(|(mark, _)| seq.is_none_or(|seq| *mark < seq));
            if !due {
                return;
            }
            let (_, round) = pending.pop_front().expect("a front");
            self.switch(at, board, round, false);
        }
    }

    /// On a restart, a board that reported nothing takes a decision of `round` (a board
    /// without an e-board, scored by the arbiter): it plays `round`, having gone through the
    /// rounds that started before, and goes on with those that started after.
    pub(super) fn catch_up_unheard(&mut self, at: HubMs, board: BoardNo, round: RoundNo) {
        if self.hall.board(board).is_none() {
            let marks = self.hall.rounds().marks(self.hall.sections(), board, None);
            let later = marks.into_iter().skip_while(|(_, r)| *r <= round).collect();
            self.marks.pending.insert(board, later);
            self.hall.ensure(board, round);
            return;
        }
        while let Some(pending) = self.marks.pending.get_mut(&board) {
            match pending.front() {
                Some(&(_, next)) if next <= round => {
                    pending.pop_front();
                    self.switch(at, board, next, false);
                }
                _ => return,
            }
        }
    }

    /// Every round with pairings or started: how far each is.
    pub fn round_states(&self) -> Vec<RoundState> {
        let mut rounds: Vec<RoundNo> = self.rounds.pairings.keys().copied().collect();
        rounds.extend(self.hall.rounds().rounds());
        // A start taken back stays listed, with who took it back.
        rounds.extend(self.hall.rounds().undone().iter().map(|(s, _)| s.round));
        rounds.extend(self.archive.rounds());
        rounds.sort_unstable();
        rounds.dedup();
        let in_play: Vec<RoundNo> = self
            .section_names()
            .iter()
            .filter_map(|s| self.hall.rounds().in_play(s.as_deref()))
            .collect();
        rounds
            .into_iter()
            .map(|round| {
                let in_play = in_play.contains(&round);
                let mut state = match self.pairings(round) {
                    Some(games) => {
                        RoundState::of(round, in_play, games.iter().map(|p| p.result.as_str()))
                    }
                    None => {
                        let results = self.results_of(round);
                        RoundState::of(round, in_play, results.values().map(|r| r.code()))
                    }
                };
                let book = self.hall.rounds();
                let undone = book.undone().iter().map(|(s, undo)| (s, Some(undo)));
                let mut started: Vec<(&RoundStart, Option<&RoundStart>)> = book
                    .starts()
                    .iter()
                    .map(|s| (s, None))
                    .chain(undone)
                    .filter(|(s, _)| s.round == round)
                    .collect();
                started.sort_by_key(|(s, _)| s.ordinal);
                state.started = started
                    .into_iter()
                    .map(|(s, undo)| Started {
                        at: s.at.0,
                        by: s.by.clone(),
                        forced: s.forced,
                        section: s.section.clone(),
                        undone: undo.map(|u| Undone {
                            at: u.at.0,
                            by: u.by.clone(),
                        }),
                    })
                    .collect();
                state
            })
            .collect()
    }

    /// The results the hub has of `round`, by board: over by the rules or declared, or
    /// still `*`, for every board that played it.
    pub fn results_of(&self, round: RoundNo) -> BTreeMap<BoardNo, GameResult> {
        let mut results: BTreeMap<BoardNo, GameResult> = self
            .archive
            .round(round)
            .map(|g| (g.board, g.standing.result))
            .collect();
        for board in self.hall.boards() {
            let Some(state) = self.hall.board(board) else {
                continue;
            };
            if state.round() == round && state.played() {
                results.insert(board, state.game().result());
            }
        }
        results
    }

    /// A round's pairings with the hub's results where it has them (a game over by the
    /// rules, or declared), else the file's.
    pub fn pairings(&self, round: RoundNo) -> Option<Vec<Pairing>> {
        let mut games = self.rounds.pairings.get(&round)?.clone();
        let results = self.results_of(round);
        for game in &mut games {
            if let Some(result) = results.get(&game.board).filter(|r| r.is_decided()) {
                result.code().clone_into(&mut game.result);
            }
        }
        Some(games)
    }

    /// A round's pairings of `section` (`None`: every section's); `None` for a section or
    /// a round without any.
    pub fn section_pairings(&self, round: RoundNo, section: Option<&str>) -> Option<Vec<Pairing>> {
        let mut games = self.pairings(round)?;
        if let Some(name) = section {
            self.hall.sections().named(Some(name))?;
            games.retain(|p| p.section.as_deref() == Some(name));
        }
        Some(games)
    }

    /// The board's game of `round`: in play, or archived.
    pub fn board_detail(&self, now: HubMs, round: RoundNo, board: BoardNo) -> Option<BoardDetail> {
        match self.hall.board(board) {
            Some(state) if state.round() == round => Some(state.detail(now)),
            _ => self.archive.get(round, board).map(PlayedGame::detail),
        }
    }

    /// A scheduled round start that is due starts the round, unless the round before is
    /// still played: then it waits until a game ends ([`Hub::game_ended`]).
    pub(super) fn start_when_due(&mut self, now: HubMs) {
        let Some(round) = self.due_round(now) else {
            return;
        };
        let request = StartRequest {
            round,
            section: None,
            force: false,
            by: BY_SCHEDULE.to_owned(),
            login: None,
        };
        match self.start_round(now, request) {
            Ok(_) => {}
            Err(StartError::StillPlayed {
                round: playing,
                boards,
            }) => {
                tracing::info!(
                    round = round.0,
                    playing = playing.0,
                    ?boards,
                    "a round is due; it starts when the one before is over"
                );
            }
            Err(e) => {
                tracing::warn!(round = round.0, error = %e, "a scheduled round could not start")
            }
        }
    }

    /// The first round after the one in play whose scheduled start has come.
    fn due_round(&self, now: HubMs) -> Option<RoundNo> {
        let in_play = self.round_in_play();
        self.rounds
            .starts
            .iter()
            .find(|(round, at)| **round > in_play && HubMs(**at) <= now)
            .map(|(round, _)| *round)
    }

    /// A game ended: a round that is due may start now.
    pub(super) fn game_ended(&mut self, now: HubMs) {
        if self.due_round(now).is_some() {
            self.start_when_due(now);
        }
    }

    /// When the next round's scheduled start comes, if it has not.
    pub(super) fn next_scheduled_start(&self) -> Option<HubMs> {
        let in_play = self.round_in_play();
        self.rounds
            .starts
            .iter()
            .filter(|(round, _)| **round > in_play)
            .map(|(_, at)| HubMs(*at))
            .find(|at| *at > self.schedule_checked)
    }
}
