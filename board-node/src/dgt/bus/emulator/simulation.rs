//! A chain's master ([`crate::dgt::bus::master::Chain`]) and its emulated boards on one
//! line, in simulated time: the line carries a byte a ms (9,600 baud is 1.04 ms a byte),
//! each board answers `turnaround_ms` after a command, and every board plays its game at
//! the pace it was played. For tests (every move of a real game through faults, in a
//! second) and the latency benchmark (when a piece set down reaches the node's readings).

use std::collections::VecDeque;

use protocol::NodeMs;

use super::{BusBoard, Chain as Boards};
use crate::dgt::bus::master::{Chain, ChainOut};
use crate::dgt::bus::wire::Address;
use crate::eboard::emulator::timeline::Moment;
use crate::eboard::message::Message;
use crate::source::Timed;

/// What a simulation gave.
#[derive(Debug, Default)]
pub struct Simulated {
    /// Each board's readings as the node stamps them (ms of simulated time).
    pub readings: Vec<Vec<Timed>>,
    /// Each board's moments as they happened on the board (ms of simulated time).
    pub happened: Vec<Vec<(u64, Message)>>,
}

/// How long a board waits before a move's first moment after a node first reads it (the
/// board set up, the clock set).
pub const LEAD_IN_MS: u64 = 2_000;

/// Plays each `(address, moments)` board on one chain until every game is over and 3 s
/// more; `faults` is called every ms with the boards to misbehave.
pub fn simulate(
    games: &[(Address, Vec<Moment>)],
    turnaround_ms: u64,
    mut faults: impl FnMut(u64, &mut Boards),
) -> Simulated {
    let mut master = Chain::new(
        games
            .iter()
            .map(|(a, _)| (*a, Default::default()))
            .collect(),
    );
    let mut boards = Boards::new(games.iter().map(|(a, _)| BusBoard::new(*a)).collect(), 5);
    let mut line: VecDeque<(u64, u8)> = VecDeque::new();
    let mut out = Simulated {
        readings: vec![Vec::new(); games.len()],
        happened: vec![Vec::new(); games.len()],
    };
    let keep = |now: u64, batch: Vec<ChainOut>, readings: &mut Vec<Vec<Timed>>| {
        for o in batch {
            if let ChainOut::Board(slot, reading) = o {
                readings[slot].push(Timed::at(now, reading));
            }
        }
    };
    keep(0, master.opened(NodeMs(0)), &mut out.readings);
    let mut starts: Vec<Option<u64>> = vec![None; games.len()];
    let mut next = vec![0; games.len()];
    let mut commands: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    let mut now = 0;
    let mut over_at = None;
    while over_at.is_none_or(|at| now < at + 3_000) {
        now += 1;
        if over_at.is_none() && next.iter().zip(games).all(|(n, (_, g))| *n == g.len()) {
            over_at = Some(now);
        }
        let mut arrived = Vec::new();
        while line.front().is_some_and(|(t, _)| *t <= now) {
            arrived.extend(line.pop_front().map(|(_, b)| b));
        }
        keep(now, master.read(&arrived, NodeMs(now)), &mut out.readings);
        let (bytes, batch) = master.turn(NodeMs(now));
        keep(now, batch, &mut out.readings);
        if !bytes.is_empty() {
            commands.push_back((now + turnaround_ms, bytes));
        }
        let mut answer = Vec::new();
        while commands.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = commands.pop_front().expect("a command");
            answer.extend(boards.commands(&bytes, now));
        }
        for (_, more) in boards.due(now) {
            answer.extend(more);
        }
        let mut at = line.back().map_or(now, |(t, _)| *t).max(now);
        for byte in answer {
            at += 1;
            line.push_back((at, byte));
        }
        faults(now, &mut boards);
        for (i, (_, moments)) in games.iter().enumerate() {
            if starts[i].is_none() && boards.boards()[i].polled() {
                starts[i] = Some(now + LEAD_IN_MS);
            }
            let Some(start) = starts[i] else { continue };
            while let Some(m) = moments
                .get(next[i])
                .filter(|m| m.game_ms == 0 || start + m.game_ms <= now)
            {
                next[i] += 1;
                boards.board(i).happen(&m.message, now);
                out.happened[i].push((now, m.message.clone()));
            }
        }
    }
    out
}
