//! DGT LiveChess's local API as the node speaks it, sans-IO: the calls it sends (JSON text)
//! and what each message LiveChess sends gives (each board's readings).
//!
//! LiveChess holds the boards' ports and serves them on a WebSocket,
//! `ws://HOST:1982/api/v1.0` (as its open clients use it, `../shared/NOTES.md`):
//! `{"call": "eboards", "id": N}` lists the boards (`serialnr`, `state`, `board` as a FEN
//! placement, `flipped`, `clock`); `{"call": "subscribe", "id": N, "param": {"feed":
//! "eboardevent", "id": F, "param": {"serialnr": "…"}}}` is answered with the call's id, then
//! a feed message for the board at once and at every change: `{"response": "feed", "id": F,
//! "param": {"serialnr", "flipped", "board", "clock": {"white", "black", "run", "time"}}}`.
//! Clock values are seconds remaining; `run` says which side's clock runs (`true` White's,
//! `false` Black's, `null` stopped).
//!
//! Each board's position is a placement whenever it changes, its clock a report whenever it
//! changes, a press when the running side changes (the player whose clock ran pressed), as
//! the DGT path reports them; the board's health follows LiveChess's connection and the
//! board's presence in its list.

use std::collections::BTreeMap;

use protocol::{ClockReport, Color, NodeMs, Placement, Square};
use serde::Deserialize;
use serde_json::json;

use crate::line::health::HealthWatch;
use crate::source::Reading;

/// A message LiveChess sends.
#[derive(Debug, Deserialize)]
struct Incoming {
    response: String,
    id: Option<u64>,
    #[serde(default)]
    param: serde_json::Value,
}

/// A board as the `eboards` list and the `eboardevent` feed describe it.
#[derive(Debug, Clone, Deserialize)]
struct EBoard {
    serialnr: String,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    flipped: bool,
    board: Option<String>,
    clock: Option<LiveClock>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
struct LiveClock {
    white: f64,
    black: f64,
    run: Option<bool>,
}

/// Feed ids are the board's index plus this, call ids below it.
const FEED_BASE: u64 = 1_000;
/// The id of the `eboards` call.
const EBOARDS_CALL: u64 = 1;

/// One board LiveChess serves, as the node follows it.
#[derive(Debug, Default)]
struct Followed {
    placement: Option<Placement>,
    clock: Option<LiveClock>,
    watch: HealthWatch,
    /// In LiveChess's last list of boards.
    listed: bool,
}

/// The node's side of a LiveChess API session for the boards it serves, by serial number.
#[derive(Debug)]
pub struct Session {
    serials: Vec<String>,
    boards: Vec<Followed>,
    /// The calls sent and not answered yet, by id, to tell an error's call.
    pending: BTreeMap<u64, &'static str>,
    next_id: u64,
    /// Boards that dropped out of LiveChess's list since last asked ([`Session::take_gone`]).
    gone: Vec<String>,
}

/// Why a message from LiveChess was not taken.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApiError {
    #[error("not a LiveChess message: {0}")]
    Malformed(String),
    #[error("LiveChess refused the {call} call: {message}")]
    Refused { call: &'static str, message: String },
}

impl Session {
    /// A session for the boards whose serial numbers are `serials`, in the node's order.
    pub fn new(serials: Vec<String>) -> Session {
        let boards = serials.iter().map(|_| Followed::default()).collect();
        Session {
            serials,
            boards,
            pending: BTreeMap::new(),
            next_id: EBOARDS_CALL + 1,
            gone: Vec::new(),
        }
    }

    /// The socket opened: the calls to send (the list of boards, then each board's feed),
    /// and each board's health.
    pub fn opened(&mut self, now: NodeMs) -> (Vec<String>, Vec<(usize, Reading)>) {
        self.pending.clear();
        let mut calls = vec![self.list_call()];
        for (index, serial) in self.serials.iter().enumerate() {
            let id = self.next_id;
            self.next_id += 1;
            self.pending.insert(id, "subscribe");
            calls.push(
                json!({
                    "call": "subscribe",
                    "id": id,
                    "param": {
                        "feed": "eboardevent",
                        "id": FEED_BASE + index as u64,
                        "param": {"serialnr": serial},
                    },
                })
                .to_string(),
            );
        }
        let mut readings = Vec::new();
        for (index, board) in self.boards.iter_mut().enumerate() {
            // The clock as it stands now is news: a press LiveChess saw while the node was
            // away shows in it.
            board.clock = None;
            readings.extend(board.watch.opened(now).into_iter().map(|r| (index, r)));
        }
        (calls, readings)
    }

    /// `{"call": "eboards"}`: asked at the start and every few seconds, it tells boards that
    /// came and went, and brings a board's position and clock if its feed stalled.
    pub fn list_call(&mut self) -> String {
        self.pending.insert(EBOARDS_CALL, "eboards");
        json!({"call": "eboards", "id": EBOARDS_CALL, "param": null}).to_string()
    }

    /// The boards LiveChess stopped listing since last asked: for the technician's log.
    pub fn take_gone(&mut self) -> Vec<String> {
        std::mem::take(&mut self.gone)
    }

    /// The socket closed or failed: every board's line is down.
    pub fn closed(&mut self, now: NodeMs) -> Vec<(usize, Reading)> {
        let mut readings = Vec::new();
        for (index, board) in self.boards.iter_mut().enumerate() {
            board.listed = false;
            readings.extend(board.watch.closed(now).into_iter().map(|r| (index, r)));
        }
        readings
    }

    /// A message from LiveChess: the readings it gives, by board index.
    pub fn read(&mut self, text: &str, now: NodeMs) -> Result<Vec<(usize, Reading)>, ApiError> {
        let message: Incoming =
            serde_json::from_str(text).map_err(|e| ApiError::Malformed(e.to_string()))?;
        match message.response.as_str() {
            "feed" => {
                let board: EBoard = serde_json::from_value(message.param)
                    .map_err(|e| ApiError::Malformed(format!("feed: {e}")))?;
                let index = message
                    .id
                    .and_then(|id| id.checked_sub(FEED_BASE))
                    .map(|i| i as usize)
                    .filter(|i| self.serials.get(*i) == Some(&board.serialnr))
                    .or_else(|| self.serials.iter().position(|s| *s == board.serialnr));
                Ok(index.map_or_else(Vec::new, |index| self.seen(index, &board, now)))
            }
            "call" if message.id == Some(EBOARDS_CALL) => {
                self.pending.remove(&EBOARDS_CALL);
                let listed: Vec<EBoard> = serde_json::from_value(message.param)
                    .map_err(|e| ApiError::Malformed(format!("eboards: {e}")))?;
                Ok(self.listed(&listed, now))
            }
            "call" => {
                message.id.map(|id| self.pending.remove(&id));
                Ok(Vec::new())
            }
            "error" => {
                let call = message
                    .id
                    .and_then(|id| self.pending.remove(&id))
                    .unwrap_or("unknown");
                let said = message
                    .param
                    .as_str()
                    .map_or_else(|| message.param.to_string(), str::to_owned);
                Err(ApiError::Refused {
                    call,
                    message: said,
                })
            }
            other => Err(ApiError::Malformed(format!("response {other:?}"))),
        }
    }

    /// LiveChess's list of its boards: each of ours seen (or gone).
    fn listed(&mut self, listed: &[EBoard], now: NodeMs) -> Vec<(usize, Reading)> {
        let mut readings = Vec::new();
        for index in 0..self.serials.len() {
            let found = listed.iter().find(|b| b.serialnr == self.serials[index]);
            match found {
                Some(board) if board.state.as_deref() != Some("INACTIVE") => {
                    readings.extend(self.seen(index, board, now));
                }
                _ => {
                    let followed = &mut self.boards[index];
                    if followed.listed || followed.watch.health().board_connected {
                        followed.listed = false;
                        self.gone.push(self.serials[index].clone());
                        readings.extend(
                            followed
                                .watch
                                .lost_sight(now)
                                .into_iter()
                                .map(|r| (index, r)),
                        );
                    }
                }
            }
        }
        readings
    }

    /// A board's position and clock as LiveChess has them now.
    fn seen(&mut self, index: usize, board: &EBoard, now: NodeMs) -> Vec<(usize, Reading)> {
        let followed = &mut self.boards[index];
        followed.listed = true;
        let mut readings: Vec<Reading> = followed.watch.heard(now, board.clock.is_some());
        if let Some(placement) = board
            .board
            .as_deref()
            .and_then(|fen| placement(fen, board.flipped))
        {
            if followed.placement != Some(placement) {
                followed.placement = Some(placement);
                readings.push(Reading::Placement(placement));
            }
        }
        if let Some(clock) = board.clock {
            if followed.clock != Some(clock) {
                let ran_before = followed.clock.and_then(|c| c.run);
                let running = clock.run.map(color);
                let pressed_by = ran_before
                    .map(color)
                    .filter(|before| running.is_some_and(|now| now != *before));
                followed.clock = Some(clock);
                readings.push(Reading::Clock(ClockReport {
                    white_ms: seconds_ms(clock.white),
                    black_ms: seconds_ms(clock.black),
                    running,
                    white_flag: false,
                    black_flag: false,
                    pressed_by,
                }));
            }
        }
        readings.into_iter().map(|r| (index, r)).collect()
    }
}

/// `run` as the side whose clock runs.
fn color(white_runs: bool) -> Color {
    if white_runs {
        Color::White
    } else {
        Color::Black
    }
}

/// Seconds remaining as the clock's ms (whole seconds: the display's), never negative.
fn seconds_ms(seconds: f64) -> u32 {
    (seconds.max(0.0).min(f64::from(u32::MAX / 1000)) as u32) * 1000
}

/// A FEN placement as the board stands; `flipped`: LiveChess reads the board turned round
/// (White on its ranks 7 and 8), so the squares are turned back.
fn placement(fen: &str, flipped: bool) -> Option<Placement> {
    let board: shakmaty::Board = fen.split(' ').next()?.parse().ok()?;
    let placement = crate::sensors::placement(&board);
    if !flipped {
        return Some(placement);
    }
    let mut turned = Placement::EMPTY;
    for square in Square::all() {
        let (file, rank) = (7 - square.file(), 7 - square.rank());
        let to = Square::from_coords(file, rank).expect("a square turned is a square");
        turned.set(to, placement.piece_at(square));
    }
    Some(turned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";

    fn feed(serial: &str, fen: &str, clock: serde_json::Value) -> String {
        json!({"response": "feed", "id": FEED_BASE, "param": {"serialnr": serial, "flipped": false, "board": fen, "clock": clock}, "time": 1}).to_string()
    }

    #[test]
    fn the_calls_list_the_boards_and_subscribe_to_each() {
        let mut session = Session::new(vec!["7425".into(), "7426".into()]);
        let (calls, health) = session.opened(NodeMs(0));
        assert_eq!(calls.len(), 3);
        let subscribe: serde_json::Value = serde_json::from_str(&calls[2]).unwrap();
        assert_eq!(subscribe["param"]["feed"], "eboardevent");
        assert_eq!(subscribe["param"]["param"]["serialnr"], "7426");
        assert_eq!(health.len(), 2, "each board's line reported");
    }

    #[test]
    fn a_feed_gives_placements_clocks_and_presses_as_the_dgt_path_does() {
        let mut session = Session::new(vec!["7425".into()]);
        session.opened(NodeMs(0));
        let clock = |w: f64, b: f64, run: Option<bool>| json!({"white": w, "black": b, "run": run, "time": 5});
        let first = session
            .read(
                &feed("7425", START, clock(900.0, 900.0, Some(true))),
                NodeMs(10),
            )
            .unwrap();
        assert!(first
            .iter()
            .any(|(_, r)| matches!(r, Reading::Placement(_))));
        assert!(first.iter().any(
            |(_, r)| matches!(r, Reading::Health(h) if h.board_connected && h.clock_connected)
        ));
        // White plays e4 and presses: Black's clock runs.
        let e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR";
        let pressed = session
            .read(
                &feed("7425", e4, clock(897.0, 900.0, Some(false))),
                NodeMs(3_000),
            )
            .unwrap();
        let report = pressed.iter().find_map(|(_, r)| match r {
            Reading::Clock(c) => Some(*c),
            _ => None,
        });
        let report = report.expect("a clock report");
        assert_eq!((report.white_ms, report.black_ms), (897_000, 900_000));
        assert_eq!(
            (report.running, report.pressed_by),
            (Some(Color::Black), Some(Color::White))
        );
        // The same again is no news.
        let again = session
            .read(
                &feed("7425", e4, clock(897.0, 900.0, Some(false))),
                NodeMs(3_100),
            )
            .unwrap();
        assert!(again.iter().all(|(_, r)| matches!(r, Reading::Health(_))));
    }

    #[test]
    fn a_flipped_board_is_turned_back_and_a_board_gone_from_the_list_is_lost() {
        let flipped = "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr";
        assert_eq!(placement(flipped, true), placement(START, false));
        let mut session = Session::new(vec!["7425".into()]);
        session.opened(NodeMs(0));
        let listed = json!({"response": "call", "id": EBOARDS_CALL, "param": [{"serialnr": "7425", "state": "ACTIVE", "board": START, "flipped": false, "clock": null}]});
        let readings = session.read(&listed.to_string(), NodeMs(100)).unwrap();
        assert!(readings
            .iter()
            .any(|(_, r)| matches!(r, Reading::Placement(_))));
        let gone = json!({"response": "call", "id": EBOARDS_CALL, "param": []});
        let readings = session.read(&gone.to_string(), NodeMs(200)).unwrap();
        assert!(readings
            .iter()
            .any(|(_, r)| matches!(r, Reading::Health(h) if !h.board_connected)));
        let refused = json!({"response": "error", "id": EBOARDS_CALL, "param": "no such feed"});
        session.list_call();
        assert!(matches!(
            session.read(&refused.to_string(), NodeMs(300)),
            Err(ApiError::Refused {
                call: "eboards",
                ..
            })
        ));
        assert!(session.read("{not json", NodeMs(400)).is_err());
    }
}
