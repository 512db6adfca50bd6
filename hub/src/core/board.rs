//! Everything the hub knows about one board.

use protocol::{BoardNo, Hello, NodeMs, Seq, UplinkBody};
use serde::Serialize;
use shakmaty::Chess;

use super::ending::{Claim, Status};
use super::game::{BoardSync, Game, GameEvent, IllegalMove};
use super::intake::{Admission, Intake};
use super::laws::Rules;
use super::record::Record;
use super::time::HubMs;

/// A node not heard from for this long counts as disconnected. Nodes send a heartbeat after
/// 5 s of silence, so this allows two missed heartbeats.
pub const NODE_SILENT_MS: u64 = 15_000;

#[derive(Debug, Clone)]
pub struct BoardState {
    number: BoardNo,
    intake: Intake,
    game: Game,
    events_accepted: u64,
    /// When any message of this board's node last arrived (duplicates included).
    last_heard: Option<HubMs>,
    hello: Option<Hello>,
    /// The node's time of its last accepted event: "now" on the board's own clock.
    last_node_ms: NodeMs,
}

/// One line of `GET /api/boards`.
#[derive(Debug, Clone, Serialize)]
pub struct BoardSummary {
    pub board: u16,
    pub last_seq: u64,
    pub events_accepted: u64,
    pub node_connected: bool,
    pub fen: String,
    pub status: Status,
    pub result: &'static str,
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
    pub result_signal: Option<&'static str>,
    /// `in_sync`, `unsettled` (a hand at work) or `out_of_sync` (for 10 s or more), as of
    /// the node's last event.
    pub board_sync: BoardSync,
}

impl BoardState {
    pub fn new(number: BoardNo, rules: Rules) -> BoardState {
        BoardState {
            number,
            intake: Intake::default(),
            game: Game::new(Chess::default(), rules),
            events_accepted: 0,
            last_heard: None,
            hello: None,
            last_node_ms: NodeMs(0),
        }
    }

    pub fn admit(&mut self, now: HubMs, seq: Seq) -> Admission {
        self.last_heard = Some(now);
        self.intake.admit(now, seq)
    }

    /// Applies a journaled event. `None` if it is out of sequence (a damaged journal).
    pub fn apply(&mut self, record: &Record) -> Option<Vec<GameEvent>> {
        let event = &record.event;
        if !self.intake.accept(event.seq) {
            return None;
        }
        self.events_accepted += 1;
        self.last_node_ms = self.last_node_ms.max(event.node_ms);
        self.last_heard = Some(self.last_heard.map_or(record.at, |t| t.max(record.at)));
        Some(match &event.body {
            UplinkBody::Hello(hello) => {
                self.hello = Some(hello.clone());
                self.game.observe(event.node_ms)
            }
            UplinkBody::Placement(placement) => self.game.placement(event.node_ms, placement),
            UplinkBody::Clock(report) => {
                let mut events = self.game.clock(event.node_ms, report);
                events.extend(self.game.observe(event.node_ms));
                events
            }
            UplinkBody::Heartbeat => self.game.observe(event.node_ms),
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
        self.last_heard
            .is_some_and(|t| now.since(t) < NODE_SILENT_MS)
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn summary(&self, now: HubMs) -> BoardSummary {
        BoardSummary {
            board: self.number.0,
            last_seq: self.intake.accepted().map_or(0, |s| s.0),
            events_accepted: self.events_accepted,
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
            node_software: self.hello.as_ref().map(|h| h.software.clone()),
            illegal_moves: self.game.illegal_moves().to_vec(),
            result_signal: self.game.result_signal(),
            board_sync: self.game.sync(self.last_node_ms),
        }
    }
}
