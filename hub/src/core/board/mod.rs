//! Everything the hub knows about one board.

use protocol::time_control::TimeControl;
use protocol::{BoardNo, Hello, NodeHealth, NodeMs, Seq, UplinkBody};
use serde::Serialize;
use shakmaty::{Chess, Color, Position};

use super::arbiter::{self, AuditEntry, Decision, DecisionError, DecisionRecord, GameResult, Side};
use super::archive::Standing;
use super::clock::{Adjustment, BoardClock, ClockEvent, Deviation, DeviationKind, MoveCheck};
use super::ending::{Claim, Status};
use super::flag::{self, FlagRuling};
use super::game::{BoardSync, Game, GameEvent, IllegalMove};
use super::ids::RoundNo;
use super::intake::{Admission, Intake};
use super::laws::{Penalty, Rules};
use super::record::Record;
use super::relay::pgn::PgnGame;
use super::time::HubMs;
use super::timebase::{Step, Timebase};

/// A node not heard from for this long counts as disconnected. Nodes send a heartbeat after
/// 5 s of silence, so this allows two missed heartbeats.
pub const NODE_SILENT_MS: u64 = 15_000;

/// Something that happened on a board: in its game or on its clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardEvent {
    Game(GameEvent),
    Clock(ClockEvent),
    /// The node's clock stepped; the step was taken out of its times (see [`Timebase`]).
    NodeTimeStep(Step),
}

/// One board of the hall: its node (the same all event long) and its game in the round it
/// plays. When its next round starts, the game goes to the archive ([`BoardState::finished`])
/// and a new one begins ([`BoardState::new_game`]); the node's sequence numbers go on.
#[derive(Debug, Clone)]
pub struct BoardState {
    number: BoardNo,
    intake: Intake,
    /// The round of the game in play.
    round: RoundNo,
    game: Game,
    /// Events applied since the game began: a game of none was never played.
    game_events: u64,
    /// The board's node, the same all event long.
    node: NodeState,
    clock: BoardClock,
    rules: Rules,
    /// What the flags that fell mean (6.9), worked out when they fell.
    flag_ruling: Option<FlagRuling>,
    /// The arbiter's decisions at this board, in order: the audit trail.
    decisions: Vec<AuditEntry>,
    /// For a node without a clock: how long a successor must stand to complete its move.
    debounce_ms: Option<u64>,
    /// The section's time control, for each new game's clock.
    time_control: Option<TimeControl>,
}

/// What the hub knows of a board's node, whatever game the board plays: kept with a round's
/// start ([`super::rounds::RoundStart`]), so a restart resumes the board there without reading
/// the finished rounds' events again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct NodeState {
    pub events_accepted: u64,
    /// When any message of this board's node last arrived (duplicates included).
    pub last_heard: Option<HubMs>,
    pub hello: Option<Hello>,
    /// What the node last reported of its e-board's and clock's connections.
    pub health: Option<NodeHealth>,
    /// The node's times as one steady timeline: its last is "now" on the board's own clock.
    pub timebase: Timebase,
    /// The node's clock steps taken out, and when the last came.
    pub node_time_steps: u32,
    pub last_node_time_step: Option<(Step, HubMs)>,
    /// The node's time of its last accepted event, on the timeline.
    pub last_node_ms: NodeMs,
    /// When the hub received that event: node time runs on from there.
    pub last_applied_at: HubMs,
}

/// What the archive keeps of a board's game when its round is over.
#[derive(Debug, Clone)]
pub struct FinishedGame {
    pub detail: serde_json::Value,
    pub standing: Standing,
    pub ruled: Standing,
    pub pgn: PgnGame,
    pub flag_result: Option<GameResult>,
}

/// One line of `GET /api/boards`.
#[derive(Debug, Clone, Serialize)]
pub struct BoardSummary {
    pub board: BoardNo,
    /// The round of the game.
    pub round: RoundNo,
    pub last_seq: Seq,
    pub events_accepted: u64,
    pub node_connected: bool,
    pub fen: String,
    pub status: Status,
    pub result: GameResult,
    /// The article that ended the game, `null` while it is played.
    pub article: Option<&'static str>,
    pub ply: usize,
}

/// `GET /api/boards/{n}`: the summary and the moves.
#[derive(Debug, Clone, Serialize)]
pub struct BoardDetail {
    #[serde(flatten)]
    pub summary: BoardSummary,
    /// The completed moves in SAN.
    pub moves: Vec<String>,
    /// Draw claims by the player to move that would be correct now.
    pub claimable: Vec<Claim>,
    pub node_software: Option<String>,
    /// Completed illegal moves (7.5) with the ruling the edition prescribes.
    pub illegal_moves: Vec<IllegalMove>,
    /// The result the players signalled by setting both kings on the centre squares.
    pub result_signal: Option<GameResult>,
    /// `in_sync`, `unsettled` (a hand at work) or `out_of_sync` (for 10 s or more), as of
    /// the node's last event.
    pub board_sync: BoardSync,
    /// The clock, `null` before it reported and without a time control.
    pub clock: Option<ClockView>,
    /// The arbiter's decisions at this board, in order (the audit trail).
    pub decisions: Vec<AuditEntry>,
    /// Rapid and blitz: whether a wrong set-up may still be claimed; `null` in standard.
    pub setup_claims: Option<SetupClaimsView>,
    /// Parallel to `moves`: the mover's remaining time after each move as the hub models it
    /// (the clock's reading where there is no time control; `null` where neither is known).
    pub clock_ms: Vec<Option<u64>>,
}

/// Whether each player is in time trouble (8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeTrouble {
    pub white: bool,
    pub black: bool,
}

/// The clock as `GET /api/boards/{n}` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ClockView {
    /// What the clock shows now: its last reading, the running side counted down.
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<&'static str>,
    /// The period (1 = the first) of the side to move, by the hub's count of moves.
    pub period: Option<usize>,
    /// Moves the side to move must still complete in the period; `null` in sudden death.
    pub moves_to_control: Option<u32>,
    /// A flag the clock showed: `"white"`, `"black"` or `"both"`.
    pub flag: Option<&'static str>,
    pub time_trouble: TimeTrouble,
    pub time_control: Option<String>,
    /// ms until the running side's flag falls if the player keeps thinking.
    pub time_to_flag_ms: Option<u64>,
    /// The running side's time ran out by the hub's count since the node's last report, but
    /// no reading showed the flag: probable, not seen (the node may be silent).
    pub flag_probable: Option<&'static str>,
    /// Node time of the last reading: the node's last contact with the clock.
    pub last_reading_at: Option<u64>,
    /// Since when both clocks stand (6.11.2), node time.
    pub paused_since: Option<u64>,
    pub paused_ms: u64,
    /// What the Laws make of the flags that fell (6.9, III.3.1, 6.4).
    pub flag_fall: Option<FlagRuling>,
    /// Where the clock differs from the time control (6.10.2), each raised once.
    pub deviations: Vec<Deviation>,
    /// The player to move is in a quickplay finish (III.4; 2014 G.4; 2009 10.2).
    pub quickplay_finish: Option<Quickplay>,
}

/// Under this a player in a last period without increment may ask for 5 s a move or claim
/// a draw (Guidelines III.4, III.5).
pub const QUICKPLAY_MS: u64 = 120_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quickplay {
    pub side: &'static str,
    pub article: &'static str,
}

/// Whether a wrong set-up may still be claimed (rapid and blitz).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupClaimsView {
    /// Open until each player has completed `until_moves_each` moves.
    pub open: bool,
    pub until_moves_each: u32,
    pub article: &'static str,
}

/// The clock as a screen that ticks it itself needs it: the last reading and the hub's
/// time it stands for. It changes only when the clock reports or time trouble begins, so a
/// page is sent it once, not every second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockFace {
    pub white_ms: u64,
    pub black_ms: u64,
    /// The side whose time runs down from `at`; `null` while both clocks stand.
    pub running: Option<&'static str>,
    /// Hub time (Unix ms) of the reading.
    pub at: u64,
    pub time_trouble: TimeTrouble,
    /// A flag the clock showed: `"white"`, `"black"` or `"both"`.
    pub flag: Option<&'static str>,
}

/// One line of `GET /api/time-trouble`.
#[derive(Debug, Clone, Serialize)]
pub struct Urgency {
    pub board: BoardNo,
    pub running: Option<&'static str>,
    /// ms until the running side's flag falls if the player keeps thinking; 0 once fallen.
    pub time_to_flag_ms: Option<u64>,
    pub white_ms: u64,
    pub black_ms: u64,
    pub flag: Option<&'static str>,
    pub time_trouble: TimeTrouble,
    pub ply: usize,
}

impl BoardState {
    /// Board `number`, first heard of in `round`, playing under `rules` and `time_control`.
    pub fn new(
        number: BoardNo,
        round: RoundNo,
        rules: Rules,
        time_control: Option<TimeControl>,
        debounce_ms: Option<u64>,
    ) -> BoardState {
        BoardState {
            debounce_ms,
            number,
            round,
            game_events: 0,
            node: NodeState::default(),
            clock: BoardClock::new(time_control.clone()),
            time_control,
            rules,
            flag_ruling: None,
            decisions: Vec::new(),
            intake: Intake::default(),
            game: Game::new(Chess::default(), rules),
        }
    }

    pub fn admit(&mut self, now: HubMs, seq: Seq) -> Admission {
        self.node.last_heard = Some(now);
        self.intake.admit(now, seq)
    }

    /// Applies a journaled event. `None` if it is out of sequence (a damaged journal).
    /// The journal lost event `seq`: the sequence goes on after it, nothing is applied.
    pub fn skip_damaged(&mut self, seq: Seq) -> bool {
        self.intake.accept(seq)
    }

    pub fn apply(&mut self, record: &Record) -> Option<Vec<BoardEvent>> {
        let event = &record.event;
        if !self.intake.accept(event.seq) {
            return None;
        }
        self.node.events_accepted += 1;
        self.game_events += 1;
        if let UplinkBody::Pace { node_ms_per_s } = event.body {
            self.node.timebase.set_pace(node_ms_per_s);
        }
        let (at, step) = self.node.timebase.place(record.at, event.node_ms);
        if let Some(step) = step {
            self.node.node_time_steps += 1;
            self.node.last_node_time_step = Some((step, record.at));
        }
        self.node.last_node_ms = self.node.last_node_ms.max(at);
        self.node.last_applied_at = self.node.last_applied_at.max(record.at);
        self.node.last_heard = Some(self.node.last_heard.map_or(record.at, |t| t.max(record.at)));
        let mut clock_events = Vec::new();
        let mut game_events = Vec::new();
        // Moves completed without a press (a game-ending move set down, 6.2.1; a board
        // without a clock) still count on the clock model.
        let unpressed = match &event.body {
            UplinkBody::Hello(hello) => {
                self.node.hello = Some(hello.clone());
                // A node (re)started: it did not see the board meanwhile.
                self.game.node_blind();
                // A node that reports no clock: moves are inferred from a stable board.
                let debounce = self.debounce_ms.filter(|_| hello.clock_hw.is_empty());
                self.game.infer_moves_after(debounce);
                self.game.observe(at)
            }
            UplinkBody::Placement(placement) => self.game.placement(at, placement),
            UplinkBody::Clock(report) => {
                let events = self.game.clock(at, report);
                self.expect_penalties(&events);
                let mut completions = self.completed_at(&events);
                let completed = completions.pop().map(|(by, _)| by);
                // Moves caught up at once (the node missed their presses): the clock shows
                // the last press only; the others count as moves without a reading.
                for (by, completed_at) in completions {
                    self.clock.move_without_press(by, completed_at);
                }
                let playing = self.game.status() == Status::Playing;
                clock_events = self.clock.report(at, report, completed, playing);
                game_events = events;
                self.game.observe(at)
            }
            UplinkBody::Health(health) => {
                if health.board_connected && !self.node.health.is_some_and(|h| h.board_connected) {
                    // The board is back after the node could not read it.
                    self.game.node_blind();
                }
                self.node.health = Some(*health);
                self.game.observe(at)
            }
            UplinkBody::Heartbeat | UplinkBody::Pace { .. } => self.game.observe(at),
        };
        for (by, completed_at) in self.completed_at(&unpressed) {
            self.clock.move_without_press(by, completed_at);
        }
        game_events.extend(unpressed);
        if clock_events
            .iter()
            .any(|e| matches!(e, ClockEvent::FlagFall { .. }))
        {
            self.flag_ruling = flag::rule(self.game.position(), &self.clock, self.rules);
        }
        let mut events: Vec<BoardEvent> = step.into_iter().map(BoardEvent::NodeTimeStep).collect();
        events.extend(game_events.into_iter().map(BoardEvent::Game));
        events.extend(clock_events.into_iter().map(BoardEvent::Clock));
        Some(events)
    }

    /// Carries out an arbiter's decision (live, or folded in again on replay). A decision
    /// that does not fit the game changes nothing and comes back as the error.
    pub fn decide(&mut self, record: &DecisionRecord) -> Result<Vec<BoardEvent>, DecisionError> {
        let at = self.node_now(record.at);
        let edition = self.rules.edition;
        let mut expects: Option<(Side, Adjustment)> = None;
        let (events, article) = match &record.action.decision {
            Decision::Reinstate { ply } => {
                let events = self.game.reinstate(at, *ply)?;
                self.clock.reinstate(*ply, self.game.moves_by_side());
                (events, Some(arbiter::reinstate_article(edition)))
            }
            Decision::Result { result, cause } => {
                let events = self.game.declare(*result, *cause)?;
                (events, cause.map(|c| c.article(edition)))
            }
            Decision::ClaimRejected { by } => {
                let (ms, article) = arbiter::claim_penalty(self.rules);
                let opponent = match by {
                    Side::White => Side::Black,
                    Side::Black => Side::White,
                };
                let kind = DeviationKind::PenaltyApplied;
                expects = Some((opponent, Adjustment { ms, kind, article }));
                (Vec::new(), Some(article))
            }
            Decision::AdjustTime { side, ms, reason } => {
                if *ms == 0 {
                    return Err(DecisionError::NothingToAdjust);
                }
                let article = arbiter::time_article(*reason, edition);
                let kind = match reason {
                    arbiter::TimeReason::ClockCorrection => DeviationKind::CorrectionApplied,
                    arbiter::TimeReason::Penalty => DeviationKind::PenaltyApplied,
                };
                expects = Some((
                    *side,
                    Adjustment {
                        ms: *ms,
                        kind,
                        article,
                    },
                ));
                (Vec::new(), Some(article))
            }
        };
        if let Some((side, adjustment)) = expects {
            self.clock.set_adjustment(side.into(), adjustment);
        }
        self.decisions.push(AuditEntry {
            record: record.clone(),
            article,
            clock_expects_ms: expects.map(|(_, a)| a.ms),
            clock_side: expects.map(|(side, _)| side),
        });
        Ok(events.into_iter().map(BoardEvent::Game).collect())
    }

    /// Board `number` as a restart resumes it where round `round` started: its node as the
    /// start kept it, its events up to `mark` journaled and durable (not read again), and a
    /// new game.
    pub fn resumed(
        number: BoardNo,
        round: RoundNo,
        rules: Rules,
        time_control: Option<TimeControl>,
        debounce_ms: Option<u64>,
        node: NodeState,
        mark: Seq,
    ) -> BoardState {
        let mut board = BoardState::new(number, round, rules, time_control, debounce_ms);
        board.node = node;
        board.intake = Intake::resumed(mark);
        board.new_game(round);
        board
    }

    /// The board's node, as a round's start keeps it.
    pub fn node(&self) -> &NodeState {
        &self.node
    }

    /// The board's number.
    pub fn number(&self) -> BoardNo {
        self.number
    }

    /// The rules the board plays under (its section's).
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The round of the game in play.
    pub fn round(&self) -> RoundNo {
        self.round
    }

    /// Whether anything happened in the game in play: an event, a decision.
    pub fn played(&self) -> bool {
        self.game_events > 0 || !self.decisions.is_empty()
    }

    /// What the archive keeps of the game in play at `now`: its detail, how it stands now
    /// and by the rules, its moves for the feed, and a flag fall's result.
    pub fn finished(&self, now: HubMs) -> FinishedGame {
        let edition = self.rules.edition;
        let (status, result) = self.game.ruled();
        FinishedGame {
            detail: serde_json::to_value(self.detail(now)).unwrap_or_default(),
            standing: Standing {
                status: self.game.status().name().to_owned(),
                result: self.game.result(),
                article: self.game.article().map(str::to_owned),
            },
            ruled: Standing {
                status: status.name().to_owned(),
                result,
                article: status.article(edition).map(str::to_owned),
            },
            pgn: PgnGame::of(&self.game, self.clock.checks()),
            flag_result: self.flag_ruling.as_ref().and_then(|r| r.result),
        }
    }

    /// The board's next game, of `round`: the position, the clock, the flags and the
    /// decisions start afresh; the node (its sequence, its hello, its health, its timeline)
    /// goes on. Take what is kept of the old game ([`BoardState::finished`]) first.
    pub fn new_game(&mut self, round: RoundNo) {
        let mut game = Game::new(Chess::default(), self.rules);
        if let Some(hello) = &self.node.hello {
            game.infer_moves_after(self.debounce_ms.filter(|_| hello.clock_hw.is_empty()));
        }
        self.game = game;
        self.round = round;
        self.game_events = 0;
        self.clock = BoardClock::new(self.time_control.clone());
        self.flag_ruling = None;
        self.decisions.clear();
    }

    /// The arbiter's decisions at this board, in order.
    pub fn decisions(&self) -> &[AuditEntry] {
        &self.decisions
    }

    /// The sequence number of the board's last applied event.
    pub fn last_seq(&self) -> Seq {
        self.intake.accepted().unwrap_or(Seq(0))
    }

    /// Who completed the moves among `events`, and when.
    fn completed_at(&self, events: &[GameEvent]) -> Vec<(Color, NodeMs)> {
        events
            .iter()
            .filter_map(|e| match e {
                GameEvent::MoveCompleted { ply, .. } => {
                    let m = &self.game.moves()[ply - 1];
                    Some((m.by, m.at))
                }
                _ => None,
            })
            .collect()
    }

    /// After an illegal move the opponent gets time (7.5.5): the clock will show it.
    fn expect_penalties(&mut self, events: &[GameEvent]) {
        for event in events {
            if let GameEvent::IllegalMove(illegal) = event {
                if let Penalty::TimeToOpponent { seconds } = illegal.ruling.penalty {
                    let adjustment = Adjustment {
                        ms: i64::from(seconds) * 1000,
                        kind: DeviationKind::PenaltyApplied,
                        article: illegal.ruling.article,
                    };
                    self.clock.expect_adjustment(illegal.by.other(), adjustment);
                }
            }
        }
    }

    /// The board's own time now: its last event's, plus what passed at the hub since.
    pub fn node_now(&self, now: HubMs) -> NodeMs {
        NodeMs(
            self.node
                .last_node_ms
                .0
                .saturating_add(now.since(self.node.last_applied_at)),
        )
    }

    /// How often the node's clock stepped (taken out of its times), and the last step with
    /// when it came.
    pub fn node_time_steps(&self) -> (u32, Option<(Step, HubMs)>) {
        (self.node.node_time_steps, self.node.last_node_time_step)
    }

    pub fn clock(&self) -> &BoardClock {
        &self.clock
    }

    fn time_trouble(&self, node_now: NodeMs) -> TimeTrouble {
        TimeTrouble {
            white: self.clock.time_trouble(Color::White, node_now),
            black: self.clock.time_trouble(Color::Black, node_now),
        }
    }

    fn flag_shown(&self) -> Option<&'static str> {
        match (self.clock.flag(Color::White), self.clock.flag(Color::Black)) {
            (Some(_), Some(_)) => Some("both"),
            (Some(_), None) => Some("white"),
            (None, Some(_)) => Some("black"),
            (None, None) => None,
        }
    }

    pub fn clock_view(&self, now: HubMs) -> Option<ClockView> {
        let node_now = self.node_now(now);
        let model = self.clock.model();
        let shown = self.clock.shown_at(node_now).or_else(|| {
            model.map(|m| shakmaty::ByColor {
                white: m.remaining(Color::White),
                black: m.remaining(Color::Black),
            })
        })?;
        let to_move = self.game.position().turn();
        let running = self.clock.running();
        let time_to_flag = self.clock.time_to_flag(node_now);
        let playing = self.game.status() == Status::Playing;
        let flag_probable = time_to_flag
            .filter(|(_, ms)| *ms == 0 && playing)
            .map(|(side, _)| super::color_name(side));
        Some(ClockView {
            white_ms: shown.white,
            black_ms: shown.black,
            running: running.map(super::color_name),
            period: model.map(|m| m.period(to_move) + 1),
            moves_to_control: model.and_then(|m| m.moves_to_control(to_move)),
            flag: self.flag_shown(),
            time_trouble: self.time_trouble(node_now),
            time_control: model.map(|m| m.time_control().to_string()),
            time_to_flag_ms: time_to_flag.map(|(_, ms)| ms),
            flag_probable,
            last_reading_at: self.clock.reading().map(|r| r.at.0),
            paused_since: self.clock.paused_since().map(|t| t.0),
            paused_ms: self.clock.paused_total_ms(),
            flag_fall: self.flag_ruling.clone(),
            deviations: self.clock.deviations().to_vec(),
            quickplay_finish: self.quickplay_finish(to_move, shown[to_move], playing),
        })
    }

    /// The player to move is in a quickplay finish (Guidelines III.4/III.5): under 2 minutes
    /// in the last period, which has no increment or delay. He may ask for 5 s a move or claim
    /// a draw; the arbiter learns it here, the player is never told (12.6).
    fn quickplay_finish(&self, to_move: Color, shown: u64, playing: bool) -> Option<Quickplay> {
        let article = self.rules.quickplay_finish()?;
        let model = self.clock.model()?;
        let periods = model.time_control().periods();
        let last = periods.len() - 1;
        let sudden_death = periods[last].bonus == protocol::time_control::Bonus::None;
        (playing && sudden_death && model.period(to_move) == last && shown < QUICKPLAY_MS).then(
            || Quickplay {
                side: super::color_name(to_move),
                article,
            },
        )
    }

    /// How far set-up claims are still open (rapid and blitz: 10 moves each, A.5.1).
    fn setup_claims(&self) -> Option<SetupClaimsView> {
        let limit = self.rules.setup_claims()?;
        let moves = self.game.moves_by_side();
        Some(SetupClaimsView {
            open: moves.white < limit.until_moves_each || moves.black < limit.until_moves_each,
            until_moves_each: limit.until_moves_each,
            article: limit.article,
        })
    }

    /// The clock for a screen to tick (see [`ClockFace`]); `None` before it reported and
    /// without a time control.
    pub fn clock_face(&self, now: HubMs) -> Option<ClockFace> {
        let (ms, running, node_at) = match self.clock.reading() {
            Some(r) => (
                r.ms,
                r.running.filter(|_| self.clock.paused_since().is_none()),
                r.at,
            ),
            None => {
                let model = self.clock.model()?;
                let ms = shakmaty::ByColor {
                    white: model.remaining(Color::White),
                    black: model.remaining(Color::Black),
                };
                (ms, None, self.node.last_node_ms)
            }
        };
        // Node time maps onto hub time by the offset of the board's last event.
        let behind = self.node.last_node_ms.0.saturating_sub(node_at.0);
        Some(ClockFace {
            white_ms: ms.white,
            black_ms: ms.black,
            running: running.map(super::color_name),
            at: self.node.last_applied_at.0.saturating_sub(behind),
            time_trouble: self.time_trouble(self.node_now(now)),
            flag: self.flag_shown(),
        })
    }

    /// The board's place in the hall's time-trouble ranking; `None` for a finished game or a
    /// board whose clock never reported.
    pub fn urgency(&self, now: HubMs) -> Option<Urgency> {
        if self.game.status() != Status::Playing {
            return None;
        }
        let node_now = self.node_now(now);
        let shown = self.clock.shown_at(node_now)?;
        let flag = self.flag_shown();
        Some(Urgency {
            board: self.number,
            running: self.clock.running().map(super::color_name),
            time_to_flag_ms: if flag.is_some() {
                Some(0)
            } else {
                self.clock.time_to_flag(node_now).map(|(_, ms)| ms)
            },
            white_ms: shown.white,
            black_ms: shown.black,
            flag,
            time_trouble: self.time_trouble(node_now),
            ply: self.game.moves().len(),
        })
    }

    pub fn replayed(&mut self) {
        if let Some(seq) = self.intake.accepted() {
            let _ = self.intake.flushed(seq);
        }
    }

    pub fn flushed(&mut self, seq: Seq) -> Option<Seq> {
        self.intake.flushed(seq)
    }

    pub fn node_connected(&self, now: HubMs) -> bool {
        self.node
            .last_heard
            .is_some_and(|t| now.since(t) < NODE_SILENT_MS)
    }

    /// What the board's node said about itself when it started.
    pub fn hello(&self) -> Option<&Hello> {
        self.node.hello.as_ref()
    }

    /// What the node last reported of its e-board's and clock's connections, and since when
    /// (ms before `now` on the board's own clock).
    pub fn health(&self, now: HubMs) -> Option<(NodeHealth, u64)> {
        let health = self.node.health?;
        Some((health, self.node_now(now).0.saturating_sub(health.since.0)))
    }

    /// When any message of the board's node last arrived.
    pub fn last_heard(&self) -> Option<HubMs> {
        self.node.last_heard
    }

    /// What the flags that fell mean, once one fell.
    pub fn flag_ruling(&self) -> Option<&FlagRuling> {
        self.flag_ruling.as_ref()
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn summary(&self, now: HubMs) -> BoardSummary {
        BoardSummary {
            board: self.number,
            round: self.round,
            last_seq: self.last_seq(),
            events_accepted: self.node.events_accepted,
            node_connected: self.node_connected(now),
            fen: self.game.fen(),
            status: self.game.status(),
            result: self.game.result(),
            article: self.game.article(),
            ply: self.game.moves().len(),
        }
    }

    pub fn detail(&self, now: HubMs) -> BoardDetail {
        BoardDetail {
            summary: self.summary(now),
            moves: self
                .game
                .moves()
                .iter()
                .map(|m| m.san.to_string())
                .collect(),
            claimable: self.game.claimable(),
            node_software: self.node.hello.as_ref().map(|h| h.software.clone()),
            illegal_moves: self.game.illegal_moves().to_vec(),
            result_signal: self.game.result_signal(),
            board_sync: self.game.sync(self.node.last_node_ms),
            clock: self.clock_view(now),
            decisions: self.decisions.clone(),
            setup_claims: self.setup_claims(),
            clock_ms: self.clock.checks().iter().map(MoveCheck::time_ms).collect(),
        }
    }
}
