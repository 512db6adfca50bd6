//! A chain of emulated DGT boards on one pseudo-terminal, as one USB-to-RS-232 adapter
//! carries a chain: the boards' answers leave at 9,600 baud, one after another; each board
//! plays its own game from the moment a node first reads its changes; and the chain
//! misbehaves as a hall's chains do: a board pulled from its splitter, the chain's power
//! cut, a board whose line stalls, noise on the line.

use std::io::{ErrorKind, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serialport::SerialPort;

use super::{BusBoard, Chain};
use crate::dgt::bus::wire::Address;
use crate::eboard::emulator::pty::Device;
use crate::eboard::emulator::timeline::Moment;

/// Bytes per second at 9,600 baud, 8N1 (10 bits a byte).
pub const BYTES_PER_S: u64 = 960;

/// How long the games stay at real pace after the power comes back: the boards boot, and a
/// node finds them again.
const AFTER_POWER: Duration = Duration::from_millis(super::BOOT_MS + 1_000);
/// ... and after a stalled line moves again.
const AFTER_STALL: Duration = Duration::from_millis(1_000);

/// Something that goes wrong on one board of the chain after `ply` of its presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardFault {
    pub board: usize,
    pub ply: usize,
    pub for_: Duration,
}

/// How the chain misbehaves, and how fast its games go.
#[derive(Debug, Clone)]
pub struct ChainEmulation {
    pub link: PathBuf,
    /// Game time runs this many times faster than real time, except while a fault lasts.
    pub speed: f64,
    /// A board pulled out of the chain (its power and line gone), then put back.
    pub unplug: Option<BoardFault>,
    /// The chain's power cut (every board), counted on the board given.
    pub power_cut: Option<BoardFault>,
    /// A board's line passes nothing (its answers are lost).
    pub stall: Option<BoardFault>,
    /// Every n-th answer garbled: a flipped bit (a checksum error) or noise before it,
    /// in turn.
    pub noise_every: Option<usize>,
    /// Seeds the moments at which boards answer a ping to all.
    pub seed: u64,
}

/// What the emulation did, printed as its line on stdout when every game is over.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct ChainPlayed {
    pub boards: usize,
    pub plies: Vec<usize>,
    pub unplugged: usize,
    pub power_cuts: usize,
    pub stalls: usize,
    pub noise_bursts: usize,
    pub garbled: usize,
    pub collisions: usize,
}

/// The line's outgoing bytes, leaving at 9,600 baud.
struct Outgoing {
    queue: std::collections::VecDeque<u8>,
    /// Bytes the line could have sent by now and did not need.
    sent_until: Instant,
}

impl Outgoing {
    fn push(&mut self, bytes: &[u8], now: Instant) {
        if self.queue.is_empty() {
            self.sent_until = now;
        }
        self.queue.extend(bytes);
    }

    /// The bytes whose time has come.
    fn due(&mut self, now: Instant) -> Vec<u8> {
        let per_byte = Duration::from_micros(1_000_000 / BYTES_PER_S);
        let mut out = Vec::new();
        while !self.queue.is_empty() && self.sent_until + per_byte <= now {
            self.sent_until += per_byte;
            out.extend(self.queue.pop_front());
        }
        out
    }

    fn busy(&self) -> bool {
        !self.queue.is_empty()
    }
}

/// However fast the games go, a player thinks at least this long (real time): faster than
/// that, a chain of a dozen boards at 9,600 baud (a board read every 0.3 s or so) cannot
/// follow, nor can any hall's.
pub const MIN_THINK_MS: f64 = 800.0;

/// Real time between a board's position and clock set up and the rest of its game.
pub const LEAD_IN: Duration = Duration::from_secs(2);

/// The game times of a game's presses.
fn press_times(moments: &[Moment]) -> Vec<u64> {
    let mut presses = Vec::new();
    let mut ply = 0;
    for moment in moments {
        if moment.ply > ply {
            ply = moment.ply;
            presses.push(moment.game_ms);
        }
    }
    presses
}

/// How fast a game's time runs at `game_ms` (game ms per real ms): `pace`, unless the
/// think under way is shorter than [`MIN_THINK_MS`] would allow at it.
fn think_pace(presses: &[u64], game_ms: f64, pace: f64) -> f64 {
    let next = presses.partition_point(|p| (*p as f64) <= game_ms);
    let Some(until) = presses.get(next) else {
        return pace;
    };
    let from = next.checked_sub(1).map_or(0, |k| presses[k]);
    let think = until.saturating_sub(from) as f64;
    pace.min((think / MIN_THINK_MS).max(1.0))
}

/// Plays each board's `games[i]` on a chain of boards at `addresses` until every game is
/// over (a board with an empty game plays none), then goes on answering until `stop` is
/// set.
pub fn run(
    addresses: &[Address],
    games: &[Vec<Moment>],
    emulation: &ChainEmulation,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        addresses.len() == games.len(),
        "{} boards but {} games",
        addresses.len(),
        games.len()
    );
    let mut chain = Chain::new(
        addresses.iter().map(|a| BusBoard::new(*a)).collect(),
        emulation.seed,
    );
    let mut device = Device::plug(&emulation.link)?;
    device.ours.set_timeout(Duration::from_millis(1))?;
    let began = Instant::now();
    let ms = |at: Instant| at.duration_since(began).as_millis() as u64;
    let speed = if emulation.speed > 0.0 {
        emulation.speed
    } else {
        1.0
    };
    // Each board's game time, from when a node first read it. While a fault lasts, the
    // games run at real pace, as a hall's do: a chain's power cut for 10 s costs each game
    // 10 s, not 10 s times the speed.
    let mut game_ms: Vec<Option<f64>> = vec![None; games.len()];
    let mut real_pace_until: Option<Instant> = None;
    let mut lead_in_until = vec![began; games.len()];
    let mut last_turn = began;
    let mut next = vec![0usize; games.len()];
    let mut played = ChainPlayed {
        boards: games.len(),
        plies: vec![0; games.len()],
        ..ChainPlayed::default()
    };
    let mut outgoing = Outgoing {
        queue: Default::default(),
        sent_until: began,
    };
    let mut answers = 0usize;
    let mut power_back: Vec<(Instant, Vec<usize>)> = Vec::new();
    let mut reported = false;
    let mut commands = [0u8; 256];
    let presses: Vec<Vec<u64>> = games.iter().map(|moments| press_times(moments)).collect();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        match device.ours.read(&mut commands) {
            Ok(n) if n > 0 => {
                let mut answer = chain.commands(&commands[..n], ms(now));
                if !answer.is_empty() {
                    answers += 1;
                    if let Some(every) = emulation.noise_every.filter(|n| *n > 0) {
                        if answers.is_multiple_of(every) {
                            played.noise_bursts += 1;
                            if !played.noise_bursts.is_multiple_of(2) {
                                // A bit flipped on the line: the checksum tells.
                                let i = answer.len() / 2;
                                answer[i] ^= 0x01;
                                played.garbled += 1;
                            } else {
                                outgoing.push(&[0x13, 0x37, 0x00, 0x55], now);
                            }
                        }
                    }
                    outgoing.push(&answer, now);
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::TimedOut => {}
            Err(e) => tracing::debug!(error = %e, "reading the master's commands"),
        }
        for (_, mut answer) in chain.due(ms(now)) {
            if outgoing.busy() {
                // Two boards talk at once: the later answer is garbled.
                let last = answer.len() - 1;
                answer[last] ^= 0x40;
                played.collisions += 1;
            }
            outgoing.push(&answer, now);
        }
        device.send(&outgoing.due(now));
        power_back.retain(|(at, boards)| {
            if now < *at {
                return true;
            }
            for board in boards {
                chain.board(*board).power(true, ms(now));
            }
            tracing::info!(boards = ?boards, "power back");
            false
        });
        if let Some(at) = chain.pinged_all() {
            // The games go at real pace while the boards answer a search of the chain:
            // the master listens and reads nobody for that long, as in a hall.
            let until = began + Duration::from_millis(at + super::PING_SPREAD_MS + 300);
            if real_pace_until.is_none_or(|u| u < until) {
                real_pace_until = Some(until);
            }
        }
        let pace = if real_pace_until.is_some_and(|until| now < until) {
            1.0
        } else {
            speed
        };
        let elapsed_ms = now.duration_since(last_turn).as_secs_f64() * 1000.0;
        last_turn = now;
        for (i, moments) in games.iter().enumerate() {
            if game_ms[i].is_none() && chain.boards()[i].polled() {
                // The board set up and the clock set: the game goes on a while later, as
                // a round starts after the node reads the boards.
                game_ms[i] = Some(0.0);
                lead_in_until[i] = now + LEAD_IN;
            }
            let Some(played_ms) = game_ms[i].as_mut() else {
                continue;
            };
            if now >= lead_in_until[i] {
                *played_ms += elapsed_ms * think_pace(&presses[i], *played_ms, pace);
            }
            let played_ms = *played_ms;
            while let Some(moment) = moments
                .get(next[i])
                .filter(|m| m.game_ms as f64 <= played_ms)
            {
                next[i] += 1;
                if moment.ply > played.plies[i] {
                    played.plies[i] = moment.ply;
                    let at = |fault: &Option<BoardFault>| {
                        fault.filter(|f| f.board == i && f.ply == moment.ply)
                    };
                    if let Some(f) = at(&emulation.unplug) {
                        tracing::info!(board = %addresses[i], ply = f.ply, "board pulled out of the chain");
                        chain.board(i).power(false, ms(now));
                        power_back.push((now + f.for_, vec![i]));
                        real_pace_until = Some(now + f.for_ + AFTER_POWER);
                        played.unplugged += 1;
                    }
                    if let Some(f) = at(&emulation.power_cut) {
                        tracing::info!(ply = f.ply, "the chain's power cut");
                        for board in 0..games.len() {
                            chain.board(board).power(false, ms(now));
                        }
                        power_back.push((now + f.for_, (0..games.len()).collect()));
                        real_pace_until = Some(now + f.for_ + AFTER_POWER);
                        played.power_cuts += 1;
                    }
                    if let Some(f) = at(&emulation.stall) {
                        tracing::info!(board = %addresses[i], ply = f.ply, "a board's line stalls");
                        chain.board(i).stall(ms(now + f.for_));
                        real_pace_until = Some(now + f.for_ + AFTER_STALL);
                        played.stalls += 1;
                    }
                }
                chain.board(i).happen(&moment.message, ms(now));
            }
        }
        if !reported && next.iter().zip(games).all(|(n, g)| *n == g.len()) {
            reported = true;
            println!("{}", serde_json::to_string(&played)?);
        }
    }
    let _ = std::fs::remove_file(&emulation.link);
    Ok(())
}
