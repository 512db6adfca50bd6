//! Everything the hub knows about one board.

use protocol::time_control::TimeControl;
use protocol::{BoardNo, Hello, NodeHealth, NodeMs, Seq, UplinkBody};
use serde::Serialize;
use shakmaty::{Chess, Color};

use super::arbiter::{self, AuditEntry, Decision, DecisionError, DecisionRecord, GameResult};
use super::clock::{Adjustment, BoardClock, ClockEvent, DeviationKind};
use super::ending::Status;
use super::flag::{self, FlagRuling};
use super::game::{Game, GameEvent};
use super::ids::RoundNo;
use super::intake::{Admission, Intake};
use super::laws::{Penalty, Rules};
use super::record::Record;
use super::relay::pgn::PgnGame;
use super::side::Side;
use super::standing::Standing;
use super::time::HubMs;
use super::timebase::{Step, Timebase};
pub use views::Ruling;

mod views;

pub use views::{
    BoardDetail, BoardSummary, ClockFace, ClockView, Quickplay, SetupClaimsView, TimeTrouble,
    Urgency, QUICKPLAY_MS,
};

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
    /// E-boards on the node's chain that nobody enrolled, as it last reported them.
    pub strangers: Vec<u16>,
    /// The clock's battery as the node last reported it: low, or not; `None`: never reported
    /// (a board without a clock, a node that does not read it).
    #[serde(default)]
    pub battery_low: Option<bool>,
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
    pub detail: BoardDetail,
    pub standing: Standing,
    pub ruled: Standing,
    pub pgn: PgnGame,
    pub flag_result: Option<GameResult>,
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
            UplinkBody::Strangers(addresses) => {
                self.node.strangers = addresses.clone();
                self.game.observe(at)
            }
            UplinkBody::Battery { low } => {
                self.node.battery_low = Some(*low);
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
            Decision::Order { from_ply, moves } => {
                let events = self.game.choose_order(*from_ply, moves)?;
                (events, Some(arbiter::order_article(edition)))
            }
            Decision::Result { result, cause } => {
                let events = self.game.declare(*result, *cause)?;
                (events, cause.and_then(|c| c.article(edition)))
            }
            Decision::ClaimRejected { by } => {
                let (ms, article) = arbiter::claim_penalty(self.rules);
                let opponent = match by {
                    Side::White => Side::Black,
                    Side::Black => Side::White,
                };
                let kind = DeviationKind::PenaltyApplied;
                expects = Some((
                    opponent,
                    Adjustment {
                        ms,
                        kind,
                        article: article.into(),
                    },
                ));
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
                        article: article.into(),
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
            article: article.map(Into::into),
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
            detail: self.detail(now),
            standing: Standing {
                status: self.game.status(),
                result: self.game.result(),
                article: self.game.article().map(Into::into),
            },
            ruled: Standing {
                status,
                result,
                article: status.article(edition).map(Into::into),
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

    /// The game in play is of `round`: a forced start taken back leaves a game begun since
    /// in the round before, as a restart would have begun it.
    pub fn renumber(&mut self, round: RoundNo) {
        self.round = round;
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
                    self.clock
                        .expect_adjustment(illegal.by.other().into(), adjustment);
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

    /// Whether the clock's battery is low, as the node last reported; `None`: never reported.
    pub fn battery_low(&self) -> Option<bool> {
        self.node.battery_low
    }

    /// E-boards on this board's chain that nobody enrolled (bus addresses).
    pub fn strangers(&self) -> &[u16] {
        &self.node.strangers
    }

    /// When any message of the board's node last arrived.
    pub fn last_heard(&self) -> Option<HubMs> {
        self.node.last_heard
    }

    /// What the flags that fell mean, once one fell.
    pub fn flag_ruling(&self) -> Option<&FlagRuling> {
        self.flag_ruling.as_ref()
    }

    /// The result the hub's own rules give this game: the rules ended it (checkmate,
    /// stalemate, a dead position, fivefold, 75 moves), else a flag's ruling (6.9) with a
    /// result. What an arbiter's declared result must match or override, and what the
    /// page's and the phone's forms start from.
    pub fn ruling(&self) -> Option<Ruling> {
        let status = self.game.status();
        if !matches!(status, Status::Playing | Status::Declared(_)) {
            return Some(Ruling {
                result: self.game.result(),
                article: status.article(self.rules().edition)?.into(),
                cause: status.name().into(),
            });
        }
        let flag = self.flag_ruling.as_ref()?;
        Some(Ruling {
            result: flag.result?,
            article: flag.article,
            cause: "flag_fall".into(),
        })
    }

    pub fn game(&self) -> &Game {
        &self.game
    }
}
