//! A stand-in for DGT LiveChess's local API (`board-node emulate-livechess`): boards that
//! replay real games (their positions and clocks as the replay script has them) served on
//! a WebSocket the way LiveChess's open clients read it ([`super::api`]): `eboards`
//! answered with every board, `subscribe` to a board's `eboardevent` answered, then a feed
//! message at once and at every change (the clock's display each second while it runs).
//!
//! Game time runs from `epoch_ms` (Unix ms) at `speed`, each move taking [`MIN_MOVE_MS`] of
//! real time at least: a stand-in started again with the same epoch goes on where the first
//! one was, as LiveChess restarted mid-round finds its
//! boards where they stand. A board's feed can stall for a while once it reaches a ply
//! (its list entry stays current, as LiveChess's does).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use protocol::{ClockReport, Color, Placement, Role, Square};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

use crate::source::{Reading, Timed};

/// A move takes at least this long in real time, whatever the speed (a player's hand; the
/// feed then tells one move from the next).
pub const MIN_MOVE_MS: u64 = 800;
/// Nothing on a board follows a press sooner than this (real ms): the next hand comes after
/// the feed has told the press.
const AFTER_PRESS_MS: u64 = 150;

/// When (real ms from the epoch) each reading of `script` happens at `speed`: each press at
/// least [`MIN_MOVE_MS`] after the one before, and what happens between two presses spread
/// over the time between them as it was in the game.
pub fn paced(script: &[Timed], speed: f64) -> Vec<u64> {
    let is_press = |t: &Timed| matches!(&t.reading, Reading::Clock(c) if c.pressed_by.is_some());
    // The presses: their game times and real times.
    let mut presses: Vec<(u64, u64)> = vec![(0, 0)];
    for timed in script.iter().filter(|t| is_press(t)) {
        let (game, real) = *presses.last().expect("one at least");
        let at = real + (timed.game_ms.saturating_sub(game) as f64 / speed) as u64;
        presses.push((timed.game_ms, at.max(real + MIN_MOVE_MS)));
    }
    let mut since = 0; // the last press before the reading, in `presses`
    script
        .iter()
        .map(|timed| {
            if is_press(timed) {
                since += 1;
                return presses[since].1;
            }
            let (game, real) = presses[since];
            match presses.get(since + 1) {
                Some(&(next_game, next_real)) => {
                    let share = timed.game_ms.saturating_sub(game) as f64
                        / next_game.saturating_sub(game).max(1) as f64;
                    let at = real + (share.min(1.0) * next_real.saturating_sub(real) as f64) as u64;
                    let first = if since == 0 {
                        real
                    } else {
                        real + AFTER_PRESS_MS
                    };
                    at.max(first).min(next_real)
                }
                None => {
                    real + AFTER_PRESS_MS
                        + (timed.game_ms.saturating_sub(game) as f64 / speed) as u64
                }
            }
        })
        .collect()
}

/// A board the stand-in serves: its serial number and the game it replays.
pub struct EmulatedBoard {
    pub serial: String,
    pub script: Vec<Timed>,
}

/// A board's feed held back for a while once it reaches a ply.
#[derive(Debug, Clone)]
pub struct Stall {
    pub serial: String,
    pub at_ply: usize,
    pub real: Duration,
}

/// How the stand-in runs its boards.
#[derive(Debug, Clone)]
pub struct Emulation {
    /// Game time 0, Unix ms.
    pub epoch_ms: u64,
    /// Game time runs this many times faster than real time.
    pub speed: f64,
    pub stall: Option<Stall>,
}

/// What a board shows at a game time.
#[derive(Debug, Clone, Default)]
struct Shown {
    serial: String,
    placement: Option<Placement>,
    /// The clock as last set, and the game time it was set at.
    clock: Option<(u64, ClockReport)>,
    ply: usize,
    /// The script's readings applied so far.
    next: usize,
    /// Its feed is held back until then.
    stalled_until: Option<Instant>,
    stalled: bool,
    /// The game's time now.
    game_ms: u64,
}

impl Shown {
    /// The board as the API describes it now.
    fn param(&self) -> Value {
        let game_ms = self.game_ms;
        let clock = self.clock.map(|(at, report)| {
            let elapsed = game_ms.saturating_sub(at);
            let shown = |side: Color, ms: u32| {
                let ms = u64::from(ms);
                let left = if report.running == Some(side) {
                    ms.saturating_sub(elapsed)
                } else {
                    ms
                };
                left / 1000
            };
            json!({
                "white": shown(Color::White, report.white_ms),
                "black": shown(Color::Black, report.black_ms),
                "run": report.running.map(|c| c == Color::White),
                "time": game_ms,
            })
        });
        json!({
            "serialnr": self.serial,
            "source": "emulated",
            "state": "ACTIVE",
            "flipped": false,
            "board": self.placement.map(|p| fen_of(&p)),
            "clock": clock,
        })
    }
}

/// A placement as a FEN board.
pub fn fen_of(placement: &Placement) -> String {
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            let square = Square::from_coords(file, rank).expect("a square");
            match placement.piece_at(square) {
                None => empty += 1,
                Some(piece) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let c = match piece.role {
                        Role::Pawn => 'p',
                        Role::Knight => 'n',
                        Role::Bishop => 'b',
                        Role::Rook => 'r',
                        Role::Queen => 'q',
                        Role::King => 'k',
                    };
                    fen.push(if piece.color == Color::White {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen
}

struct Hall {
    boards: Vec<Shown>,
    scripts: Vec<Vec<Timed>>,
    /// When each script's readings happen, real ms from the epoch ([`paced`]).
    paced: Vec<Vec<u64>>,
    emulation: Emulation,
    /// The boards were brought up to the time the stand-in started.
    started: bool,
}

impl Hall {
    /// Every board brought to real time now.
    fn advance(&mut self) {
        let real = crate::node::unix_ms().saturating_sub(self.emulation.epoch_ms);
        let speed = self.emulation.speed;
        for ((board, script), paced) in self.boards.iter_mut().zip(&self.scripts).zip(&self.paced) {
            while let Some(timed) = script.get(board.next).filter(|_| paced[board.next] <= real) {
                match &timed.reading {
                    Reading::Placement(p) => board.placement = Some(*p),
                    Reading::Clock(c) => {
                        if c.pressed_by.is_some() {
                            board.ply += 1;
                        }
                        board.clock = Some((timed.game_ms, *c));
                    }
                    _ => {}
                }
                board.next += 1;
            }
            // The game's time now: from its last reading, at the speed, up to its next.
            board.game_ms = match board.next.checked_sub(1) {
                None => 0,
                Some(last) => {
                    let since = real.saturating_sub(paced[last]) as f64 * speed;
                    // After the last reading the clock stands (the arbiter stopped it).
                    let next = script
                        .get(board.next)
                        .map_or(script[last].game_ms, |t| t.game_ms);
                    (script[last].game_ms + since as u64).min(next)
                }
            };
            if let Some(stall) = &self.emulation.stall {
                // A stand-in started again past the ply does not stall again.
                if !self.started && board.ply >= stall.at_ply {
                    board.stalled = true;
                }
                if stall.serial == board.serial && board.ply >= stall.at_ply && !board.stalled {
                    board.stalled = true;
                    board.stalled_until = Some(Instant::now() + stall.real);
                    tracing::info!(serial = %board.serial, ply = board.ply, "the board's feed stalls");
                }
            }
        }
        self.started = true;
    }

    /// Whether every game has been played to its end.
    fn played(&self) -> bool {
        self.boards
            .iter()
            .zip(&self.scripts)
            .all(|(b, s)| b.next >= s.len())
    }
}

/// Serves the boards on `listener` until `stop` resolves; `played` is told once every game
/// has been played to its end.
pub async fn serve(
    listener: TcpListener,
    boards: Vec<EmulatedBoard>,
    emulation: Emulation,
    played: tokio::sync::watch::Sender<bool>,
) -> anyhow::Result<()> {
    let hall = Arc::new(Mutex::new(Hall {
        boards: boards
            .iter()
            .map(|b| Shown {
                serial: b.serial.clone(),
                ..Shown::default()
            })
            .collect(),
        paced: boards
            .iter()
            .map(|b| paced(&b.script, emulation.speed))
            .collect(),
        scripts: boards.into_iter().map(|b| b.script).collect(),
        emulation,
        started: false,
    }));
    {
        let hall = hall.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(50));
            loop {
                tick.tick().await;
                let done = {
                    let mut hall = hall.lock().unwrap_or_else(|p| p.into_inner());
                    hall.advance();
                    hall.played()
                };
                if done {
                    played.send_replace(true);
                }
            }
        });
    }
    loop {
        let (stream, _) = listener.accept().await?;
        let hall = hall.clone();
        tokio::spawn(async move {
            if let Err(e) = client(stream, hall).await {
                tracing::debug!(error = %e, "a LiveChess client left");
            }
        });
    }
}

/// One client of the API: its calls answered, its subscriptions fed.
async fn client(stream: tokio::net::TcpStream, hall: Arc<Mutex<Hall>>) -> anyhow::Result<()> {
    let socket = tokio_tungstenite::accept_async(stream).await?;
    let (mut write, mut read) = socket.split();
    // (feed id, board index, the param last sent)
    let mut feeds: Vec<(u64, usize, Option<Value>)> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            message = read.next() => {
                let Some(message) = message else { return Ok(()) };
                let Message::Text(text) = message? else { continue };
                let call: Value = serde_json::from_str(&text)?;
                let id = call["id"].clone();
                let answer = match call["call"].as_str() {
                    Some("eboards") => {
                        let mut hall = hall.lock().unwrap_or_else(|p| p.into_inner());
                        hall.advance();
                        let list: Vec<Value> = hall.boards.iter().map(Shown::param).collect();
                        json!({"response": "call", "id": id, "param": list, "time": crate::node::unix_ms()})
                    }
                    Some("subscribe") if call["param"]["feed"] == "eboardevent" => {
                        let serial = call["param"]["param"]["serialnr"].as_str().unwrap_or_default();
                        let hall = hall.lock().unwrap_or_else(|p| p.into_inner());
                        match hall.boards.iter().position(|b| b.serial == serial) {
                            Some(index) => {
                                feeds.push((call["param"]["id"].as_u64().unwrap_or(0), index, None));
                                json!({"response": "call", "id": id, "param": null})
                            }
                            None => json!({"response": "error", "id": id, "param": format!("no e-board {serial}")}),
                        }
                    }
                    _ => json!({"response": "error", "id": id, "param": "unknown call"}),
                };
                write.send(Message::text(answer.to_string())).await?;
            }
            _ = tick.tick() => {
                let changed: Vec<Value> = {
                    let mut hall = hall.lock().unwrap_or_else(|p| p.into_inner());
                    hall.advance();
                    let now = Instant::now();
                    feeds
                        .iter_mut()
                        .filter_map(|(feed, index, last)| {
                            let board = &hall.boards[*index];
                            if board.stalled_until.is_some_and(|until| now < until) {
                                return None;
                            }
                            let param = board.param();
                            if last.as_ref() == Some(&param) {
                                return None;
                            }
                            *last = Some(param.clone());
                            Some(json!({"response": "feed", "id": *feed, "param": param, "time": crate::node::unix_ms()}))
                        })
                        .collect()
                };
                for message in changed {
                    write.send(Message::text(message.to_string())).await?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moves_hand_comes_after_the_press_before_it_and_readings_keep_their_order() {
        let text = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../hub/demo/world-cup-2025-rapid.pgn"),
        )
        .unwrap();
        let game = crate::pgn::read_game(&text, 1).unwrap();
        let script = crate::replay::script(&game, None);
        let paced = paced(&script, 60.0);
        assert!(paced.windows(2).all(|w| w[0] <= w[1]), "in order");
        let mut last_press: Option<u64> = None;
        for (timed, at) in script.iter().zip(&paced) {
            let press = matches!(&timed.reading, Reading::Clock(c) if c.pressed_by.is_some());
            if let Some(before) = last_press {
                if press {
                    assert!(at - before >= MIN_MOVE_MS);
                } else {
                    assert!(at - before >= AFTER_PRESS_MS);
                }
            }
            if press {
                last_press = Some(*at);
            }
        }
    }

    #[test]
    fn a_placement_reads_back_from_its_fen() {
        let start = crate::sensors::placement(&shakmaty::Board::new());
        assert_eq!(
            fen_of(&start),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
        assert_eq!(fen_of(&Placement::EMPTY), "8/8/8/8/8/8/8/8");
    }
}
