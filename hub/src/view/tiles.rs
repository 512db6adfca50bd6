//! The supervision page's view of the hall: a tile per board, and which tiles changed since
//! the pages were last told. Arbiters see every board live, with its open alerts and its
//! node; spectators see what the broadcast delay lets the public see, and no alerts.
//!
//! Pure, like [`crate::view::feed`]: the shell rebuilds the tiles on its tick and sends only
//! those that differ, so a page's traffic follows what happens in the hall, not its size.

use std::collections::BTreeMap;

use serde::Serialize;

use protocol::BoardNo;

use crate::core::alerts::{Alert, Severity};
use crate::core::arbiter::GameResult;
use crate::core::board::{BoardState, ClockFace, TimeTrouble};
use crate::core::clock::MoveCheck;
use crate::core::hall::Hall;
use crate::core::pairings::{Pairing, Rounds, Seat};
use crate::core::relay::public::BroadcastSettings;
use crate::core::relay::Relay;
use crate::core::side::Side;
use crate::core::time::HubMs;
use crate::view::feed;

/// Who a view is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Audience {
    Arbiters,
    Spectators,
}

/// One board on the hall map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tile {
    pub board: BoardNo,
    pub white: Option<Seat>,
    pub black: Option<Seat>,
    /// In a team match: the teams White and Black play for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub white_team: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub black_team: Option<String>,
    /// Completed moves shown.
    pub ply: usize,
    /// `"24. Nf3"` or `"24… Nf3"`.
    pub last_move: Option<String>,
    /// `*` while the game is played (for spectators: until the feed shows the end).
    pub result: GameResult,
    pub clock: Option<ClockFace>,
    /// Arbiters only: the board's open alerts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alerts: Option<AlertBadge>,
    /// Arbiters only: whether the board's node is heard from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_connected: Option<bool>,
    /// Arbiters only, from a live node's health: whether its e-board answers (a pulled cable
    /// or a board without power shows here while the node is still heard).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_connected: Option<bool>,
}

/// A board's open alerts as its tile shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AlertBadge {
    pub open: usize,
    /// Not yet acknowledged by anyone.
    pub unacknowledged: usize,
    /// The most urgent open alert's.
    pub severity: Severity,
}

/// Each board's open alerts.
pub fn alert_badges<'a>(alerts: impl Iterator<Item = &'a Alert>) -> BTreeMap<BoardNo, AlertBadge> {
    let mut badges: BTreeMap<BoardNo, AlertBadge> = BTreeMap::new();
    for alert in alerts.filter(|a| a.state.is_open()) {
        let Some(board) = alert.board else { continue };
        let unacknowledged = usize::from(alert.acknowledged.is_none());
        badges
            .entry(board)
            .and_modify(|b| {
                b.open += 1;
                b.unacknowledged += unacknowledged;
                b.severity = b.severity.min(alert.severity);
            })
            .or_insert(AlertBadge {
                open: 1,
                unacknowledged,
                severity: alert.severity,
            });
    }
    badges
}

/// `"24. Nf3"` for White's 24th move, `"24… Nf3"` for Black's: the `ply`th completed move.
fn numbered(ply: usize, san: &str) -> String {
    let number = ply.div_ceil(2);
    if !ply.is_multiple_of(2) {
        format!("{number}. {san}")
    } else {
        format!("{number}… {san}")
    }
}

fn last_move(state: &BoardState, plies: usize) -> Option<String> {
    let san = state
        .game()
        .moves()
        .get(plies.checked_sub(1)?)?
        .san
        .to_string();
    Some(numbered(plies, &san))
}

/// What the arbiters see of a board at `now`.
pub fn arbiter_tile(
    board: BoardNo,
    state: Option<&BoardState>,
    pairing: Option<&Pairing>,
    alerts: Option<AlertBadge>,
    now: HubMs,
) -> Tile {
    let ply = state.map_or(0, |s| s.game().moves().len());
    Tile {
        board,
        white: pairing.map(|p| p.white.clone()),
        white_team: pairing.and_then(|p| p.white_team.clone()),
        black_team: pairing.and_then(|p| p.black_team.clone()),
        black: pairing.map(|p| p.black.clone()),
        ply,
        last_move: state.and_then(|s| last_move(s, ply)),
        result: state.map_or(GameResult::Ongoing, |s| s.game().result()),
        clock: state.and_then(|s| s.clock_face(now)),
        alerts,
        node_connected: Some(state.is_some_and(|s| s.node_connected(now))),
        board_connected: state
            .and_then(|s| s.health(now))
            .map(|(health, _)| health.board_connected),
    }
}

/// What spectators see of a board at `now`: the moves, clocks and result the broadcast
/// delay has released. The clock of the side to move runs from its move's release.
pub fn spectator_tile(
    board: BoardNo,
    state: Option<&BoardState>,
    pairing: Option<&Pairing>,
    relay: &Relay,
    settings: &BroadcastSettings,
    now: HubMs,
) -> Tile {
    let visible = relay.visible(board, now, settings.delay_ms);
    let result = feed::shown_result(state, visible, settings);
    let plies = visible.plies;
    let clock = state.and_then(|s| {
        let checks = s.clock().checks();
        // The last time each side's clock showed after its own move among those released.
        let after = |first: usize| {
            (first..plies)
                .step_by(2)
                .filter_map(|i| checks.get(i).and_then(MoveCheck::time_ms))
                .next_back()
        };
        // Before a side's first move: what its clock showed at the start.
        let start = s.clock().first_shown();
        let white_ms = after(0).or(start.map(|s| s.white))?;
        let black_ms = after(1).or(start.map(|s| s.black))?;
        let released = relay
            .completed_at(board, plies)
            .map(|at| at.0 + settings.delay_ms);
        let to_move = if plies.is_multiple_of(2) {
            Side::White
        } else {
            Side::Black
        };
        Some(ClockFace {
            white_ms,
            black_ms,
            running: released.filter(|_| !result.is_decided()).map(|_| to_move),
            at: released.unwrap_or(0),
            pace: s.node().timebase.pace(),
            time_trouble: TimeTrouble {
                white: false,
                black: false,
            },
            flag: None,
        })
    });
    Tile {
        board,
        white: pairing.map(|p| p.white.clone()),
        white_team: pairing.and_then(|p| p.white_team.clone()),
        black_team: pairing.and_then(|p| p.black_team.clone()),
        black: pairing.map(|p| p.black.clone()),
        ply: plies,
        last_move: state.and_then(|s| last_move(s, plies)),
        result,
        clock,
        alerts: None,
        node_connected: None,
        board_connected: None,
    }
}

/// A board as spectators see it in the board view (`GET /api/public/boards/{n}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpectatorBoard {
    #[serde(flatten)]
    pub tile: Tile,
    /// The position after the moves shown.
    pub fen: String,
    /// The moves shown, in SAN.
    pub moves: Vec<String>,
    /// Parallel to `moves`: the mover's time after each move, where known.
    pub clock_ms: Vec<Option<u64>>,
}

/// The board view of a board for spectators: what the broadcast delay has released.
pub fn spectator_board(
    board: BoardNo,
    state: &BoardState,
    pairing: Option<&Pairing>,
    relay: &Relay,
    settings: &BroadcastSettings,
    now: HubMs,
) -> SpectatorBoard {
    let tile = spectator_tile(board, Some(state), pairing, relay, settings, now);
    let moves = state
        .game()
        .moves()
        .iter()
        .take(tile.ply)
        .map(|m| m.san.to_string())
        .collect();
    let clock_ms = (0..tile.ply)
        .map(|i| state.clock().checks().get(i).and_then(MoveCheck::time_ms))
        .collect();
    SpectatorBoard {
        fen: state
            .game()
            .fen_after(tile.ply)
            .unwrap_or_else(|| state.game().fen()),
        moves,
        clock_ms,
        tile,
    }
}

/// Every board's tile for `audience`: the boards of the round in play and every board a
/// node reported, by number.
pub fn tiles(
    audience: Audience,
    hall: &Hall,
    relay: &Relay,
    rounds: &Rounds,
    alerts: &BTreeMap<BoardNo, AlertBadge>,
    settings: &BroadcastSettings,
    now: HubMs,
) -> Vec<Tile> {
    let mut boards: Vec<BoardNo> = hall.boards();
    // The boards paired in the round they play whose node has not reported yet.
    boards.extend(
        rounds
            .pairings
            .values()
            .flatten()
            .map(|p| p.board)
            .filter(|b| hall.board(*b).is_none() && pairing(hall, rounds, *b).is_some()),
    );
    boards.sort_unstable();
    boards.dedup();
    boards
        .into_iter()
        .map(|b| {
            let state = hall.board(b);
            let pairing = pairing(hall, rounds, b);
            match audience {
                Audience::Arbiters => arbiter_tile(b, state, pairing, alerts.get(&b).copied(), now),
                Audience::Spectators => spectator_tile(b, state, pairing, relay, settings, now),
            }
        })
        .collect()
}

/// Who plays at `board` in the round it plays, by the pairings.
pub fn pairing<'a>(hall: &Hall, rounds: &'a Rounds, board: BoardNo) -> Option<&'a Pairing> {
    rounds
        .games(hall.round_of(board))
        .iter()
        .find(|p| p.board == board)
}

/// The tiles an audience's pages were last sent.
#[derive(Debug, Default)]
pub struct SentTiles {
    tiles: BTreeMap<BoardNo, Tile>,
}

impl SentTiles {
    /// Takes the fresh tiles; returns those that differ from what was sent.
    pub fn changed(&mut self, fresh: Vec<Tile>) -> Vec<Tile> {
        fresh
            .into_iter()
            .filter(|tile| {
                if self.tiles.get(&tile.board) == Some(tile) {
                    return false;
                }
                self.tiles.insert(tile.board, tile.clone());
                true
            })
            .collect()
    }

    /// Every tile as last sent: a page that connects starts from these.
    pub fn all(&self) -> impl Iterator<Item = &Tile> {
        self.tiles.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_whose_node_is_heard_but_whose_e_board_is_not_shows_it_to_arbiters() {
        use crate::core::record::Record;
        use protocol::{NodeHealth, NodeMs, Seq, Uplink, UplinkBody};
        let mut hall = Hall::default();
        let board = BoardNo(7);
        let health = |board_connected| {
            UplinkBody::Health(NodeHealth {
                board_connected,
                clock_connected: board_connected,
                serial_errors: 1,
                since: NodeMs(1_000),
            })
        };
        let tile = |hall: &Hall, at| arbiter_tile(board, hall.board(board), None, None, HubMs(at));
        let bodies = [UplinkBody::Heartbeat, health(false), health(true)];
        let mut shown = Vec::new();
        for (i, body) in (1..).zip(bodies) {
            let event = Uplink::new(board, Seq(i), NodeMs(1_000 * i), body);
            let _ = hall.admit(HubMs(1_000 * i), &event);
            let _ = hall.apply(&Record {
                at: HubMs(1_000 * i),
                event,
            });
            let tile = tile(&hall, 1_000 * i);
            assert_eq!(tile.node_connected, Some(true));
            shown.push(tile.board_connected);
        }
        // A node without health (a replay) says nothing of its board.
        assert_eq!(shown, [None, Some(false), Some(true)]);
        let json = serde_json::to_value(spectator_tile(
            board,
            hall.board(board),
            None,
            &Relay::default(),
            &BroadcastSettings::default(),
            HubMs(5_000),
        ))
        .unwrap();
        assert!(
            json.get("board_connected").is_none(),
            "not for spectators: {json}"
        );
    }

    #[test]
    fn moves_are_numbered_as_a_scoresheet_does() {
        assert_eq!(numbered(1, "e4"), "1. e4");
        assert_eq!(numbered(2, "e5"), "1… e5");
        assert_eq!(numbered(47, "Qxf7#"), "24. Qxf7#");
    }

    #[test]
    fn only_changed_tiles_are_sent_again() {
        let tile = |board, ply| Tile {
            board: BoardNo(board),
            white: None,
            black: None,
            white_team: None,
            black_team: None,
            ply,
            last_move: None,
            result: GameResult::Ongoing,
            clock: None,
            alerts: None,
            node_connected: Some(true),
            board_connected: None,
        };
        let mut sent = SentTiles::default();
        assert_eq!(sent.changed(vec![tile(1, 0), tile(2, 0)]).len(), 2);
        assert!(sent.changed(vec![tile(1, 0), tile(2, 0)]).is_empty());
        let changed = sent.changed(vec![tile(1, 0), tile(2, 1)]);
        assert_eq!(changed, vec![tile(2, 1)]);
        assert_eq!(sent.all().map(|t| t.ply).collect::<Vec<_>>(), vec![0, 1]);
    }
}
