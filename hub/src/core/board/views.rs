//! What the API and the pages show of a board, as of a time: its summary and detail, its
//! clock as the arbiters see it and as a screen ticks it, its place in the time-trouble
//! ranking. Views only: nothing here changes the board.

use protocol::{BoardNo, NodeMs, Seq};
use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use shakmaty::san::SanPlus;
use shakmaty::{Color, Position};

use super::BoardState;
use crate::core::arbiter::{AuditEntry, GameResult};
use crate::core::clock::{Deviation, MoveCheck};
use crate::core::ending::{Claim, Status};
use crate::core::flag::{Flag, FlagRuling};
use crate::core::game::{BoardSync, IllegalMove};
use crate::core::ids::RoundNo;
use crate::core::laws::Article;
use crate::core::side::Side;
use crate::core::time::HubMs;

/// One line of `GET /api/boards`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardSummary {
    pub board: BoardNo,
    /// The round of the game (absent in games archived before it was shown: the archive
    /// knows it).
    #[serde(default)]
    pub round: RoundNo,
    pub last_seq: Seq,
    pub events_accepted: u64,
    pub node_connected: bool,
    pub fen: String,
    pub status: Status,
    pub result: GameResult,
    /// The article that ended the game, `null` while it is played.
    pub article: Option<Article>,
    pub ply: usize,
}

/// `GET /api/boards/{n}`: the summary and the moves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardDetail {
    #[serde(flatten)]
    pub summary: BoardSummary,
    /// The completed moves in SAN.
    pub moves: Vec<SanPlus>,
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
    /// The result the hub's own rules give the game (`null`: none): a declared result that
    /// departs from it needs the arbiter's reason.
    pub ruling: Option<Ruling>,
    /// The stretches of `moves` the hub filled in, in an order the board did not show.
    #[serde(default)]
    pub filled_in: Vec<FilledInView>,
    /// The clock's battery as the node last reported it: low, or not; `null`: not reported.
    #[serde(default)]
    pub battery_low: Option<bool>,
}

/// Moves `from_ply` to `to_ply` (plies from 1) filled in: how many orders reach the board
/// (`orders`, the ones found in `candidates`, the one followed first), and whether the
/// arbiter confirmed the order (or chose another).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilledInView {
    pub from_ply: usize,
    pub to_ply: usize,
    pub orders: usize,
    /// The search stopped at its bound: more orders may reach the board.
    pub more_orders: bool,
    pub confirmed: bool,
    pub candidates: Vec<Vec<SanPlus>>,
}

/// The hub's own ruling on a game: its result, the article, and why (`flag_fall`, or how
/// the rules ended it: `checkmate`, `stalemate`, `dead_position`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ruling {
    pub result: GameResult,
    pub article: Article,
    pub cause: Cow<'static, str>,
}

/// Whether each player is in time trouble (8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeTrouble {
    pub white: bool,
    pub black: bool,
}

/// The clock as `GET /api/boards/{n}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockView {
    /// What the clock shows now: its last reading, the running side counted down.
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<Side>,
    /// The period (1 = the first) of the side to move, by the hub's count of moves.
    pub period: Option<usize>,
    /// Moves the side to move must still complete in the period; `null` in sudden death.
    pub moves_to_control: Option<u32>,
    /// A flag the clock showed: `"white"`, `"black"` or `"both"`.
    pub flag: Option<Flag>,
    pub time_trouble: TimeTrouble,
    pub time_control: Option<String>,
    /// ms until the running side's flag falls if the player keeps thinking.
    pub time_to_flag_ms: Option<u64>,
    /// The running side's time ran out by the hub's count since the node's last report, but
    /// no reading showed the flag: probable, not seen (the node may be silent).
    pub flag_probable: Option<Side>,
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quickplay {
    pub side: Side,
    pub article: Article,
}

/// Whether a wrong set-up may still be claimed (rapid and blitz).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupClaimsView {
    /// Open until each player has completed `until_moves_each` moves.
    pub open: bool,
    pub until_moves_each: u32,
    pub article: Article,
}

/// The clock as a screen that ticks it itself needs it: the last reading and the hub's
/// time it stands for. It changes only when the clock reports or time trouble begins, so a
/// page is sent it once, not every second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockFace {
    pub white_ms: u64,
    pub black_ms: u64,
    /// The side whose time runs down from `at`; `null` while both clocks stand.
    pub running: Option<Side>,
    /// Hub time (Unix ms) of the reading.
    pub at: u64,
    /// How fast the running side's time goes per second of hub time, in ms: 1000 at real
    /// time; a replay's pace (the demo's 10× is 10,000), so a screen counts it down as the
    /// board does.
    pub pace: u32,
    pub time_trouble: TimeTrouble,
    /// A flag the clock showed: `"white"`, `"black"` or `"both"`.
    pub flag: Option<Flag>,
}

/// One line of `GET /api/time-trouble`.
#[derive(Debug, Clone, Serialize)]
pub struct Urgency {
    pub board: BoardNo,
    pub running: Option<Side>,
    /// ms until the running side's flag falls if the player keeps thinking; 0 once fallen.
    pub time_to_flag_ms: Option<u64>,
    pub white_ms: u64,
    pub black_ms: u64,
    pub flag: Option<Flag>,
    pub time_trouble: TimeTrouble,
    pub ply: usize,
}

/// Under this a player in a last period without increment may ask for 5 s a move or claim
/// a draw (Guidelines III.4, III.5).
pub const QUICKPLAY_MS: u64 = 120_000;

impl BoardState {
    pub(super) fn time_trouble(&self, node_now: NodeMs) -> TimeTrouble {
        TimeTrouble {
            white: self.clock.time_trouble(Color::White, node_now),
            black: self.clock.time_trouble(Color::Black, node_now),
        }
    }

    pub(super) fn flag_shown(&self) -> Option<Flag> {
        let fell = |side| self.clock.flag(side).is_some();
        Flag::shown(fell(Color::White), fell(Color::Black))
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
            .map(|(side, _)| Side::from(side));
        Some(ClockView {
            white_ms: shown.white,
            black_ms: shown.black,
            running: running.map(Side::from),
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
    pub(super) fn quickplay_finish(
        &self,
        to_move: Color,
        shown: u64,
        playing: bool,
    ) -> Option<Quickplay> {
        let article = self.rules.quickplay_finish()?;
        let model = self.clock.model()?;
        let periods = model.time_control().periods();
        let last = periods.len() - 1;
        let sudden_death = periods[last].bonus == protocol::time_control::Bonus::None;
        (playing && sudden_death && model.period(to_move) == last && shown < QUICKPLAY_MS).then(
            || Quickplay {
                side: Side::from(to_move),
                article: article.into(),
            },
        )
    }

    /// How far set-up claims are still open (rapid and blitz: 10 moves each, A.5.1).
    pub(super) fn setup_claims(&self) -> Option<SetupClaimsView> {
        let limit = self.rules.setup_claims()?;
        let moves = self.game.moves_by_side();
        Some(SetupClaimsView {
            open: moves.white < limit.until_moves_each || moves.black < limit.until_moves_each,
            until_moves_each: limit.until_moves_each,
            article: limit.article.into(),
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
        // Node time maps onto hub time by the offset of the board's last event, at the
        // node's pace (a replay at 10× runs ten node ms to a hub ms).
        let pace = self.node.timebase.pace();
        let behind_node_ms = self.node.last_node_ms.0.saturating_sub(node_at.0);
        let behind = behind_node_ms.saturating_mul(1000) / u64::from(pace.max(1));
        Some(ClockFace {
            white_ms: ms.white,
            black_ms: ms.black,
            running: running.map(Side::from),
            at: self.node.last_applied_at.0.saturating_sub(behind),
            pace,
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
            running: self.clock.running().map(Side::from),
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
            article: self.game.article().map(Into::into),
            ply: self.game.moves().len(),
        }
    }

    pub fn detail(&self, now: HubMs) -> BoardDetail {
        BoardDetail {
            summary: self.summary(now),
            moves: self.game.moves().iter().map(|m| m.san).collect(),
            claimable: self.game.claimable(),
            node_software: self.node.hello.as_ref().map(|h| h.software.clone()),
            illegal_moves: self.game.illegal_moves().to_vec(),
            result_signal: self.game.result_signal(),
            board_sync: self.game.sync(self.node.last_node_ms),
            clock: self.clock_view(now),
            decisions: self.decisions.clone(),
            setup_claims: self.setup_claims(),
            clock_ms: self.clock.checks().iter().map(MoveCheck::time_ms).collect(),
            ruling: self.ruling(),
            filled_in: self
                .game
                .filled_in()
                .iter()
                .map(|f| FilledInView {
                    from_ply: f.from_ply,
                    to_ply: f.to_ply,
                    orders: f.orders.len(),
                    more_orders: f.more_orders,
                    confirmed: f.confirmed,
                    candidates: self.game.orders_in_san(f),
                })
                .collect(),
            battery_low: self.battery_low(),
        }
    }
}
