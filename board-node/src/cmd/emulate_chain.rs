//! `board-node emulate-dgt --bus`: a chain of DGT boards in bus mode on one
//! pseudo-terminal, each board playing its game of the PGN file.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::emulation::EmulateArgs;
use super::stopped::stopped;
use crate::dgt::bus::emulator::pty::{self as chain_pty, BoardFault, ChainEmulation};
use crate::dgt::bus::wire::Address;
use crate::eboard::emulator::timeline;
use crate::{pgn, replay};

/// A chain of DGT boards in bus mode on one pseudo-terminal.
#[derive(clap::Args)]
pub struct ChainArgs {
    /// Emulate a chain of boards in bus mode, one `--chain-board` each (the faults' plies
    /// count on the board they name).
    #[arg(long, requires = "chain_boards", conflicts_with = "recording")]
    pub bus: bool,
    /// A board of the chain: its serial number and the game of `--pgn` it plays
    /// (`SERIAL:GAME`; game 0: none), in chain order.
    #[arg(long = "chain-board", value_name = "SERIAL:GAME")]
    chain_boards: Vec<String>,
    /// The board `--unplug-at-ply` pulls out of the chain (its serial) [default: the first].
    #[arg(long)]
    unplug_board: Option<String>,
    /// Cut the chain's power after this many presses of `--power-cut-board` ...
    #[arg(long)]
    power_cut_at_ply: Option<usize>,
    /// ... for this long (real ms).
    #[arg(long, default_value_t = 10_000)]
    power_cut_ms: u64,
    /// [default: the first board]
    #[arg(long)]
    power_cut_board: Option<String>,
    /// The board whose line `--stall-at-ply` stalls (its answers are lost) [default: the
    /// first].
    #[arg(long)]
    stall_board: Option<String>,
    /// Seeds the moments at which boards answer a ping to all.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl ChainArgs {
    /// Each board's serial and game number.
    fn boards(&self) -> anyhow::Result<Vec<(String, usize)>> {
        self.chain_boards
            .iter()
            .map(|spec| {
                let (serial, game) = spec
                    .split_once(':')
                    .with_context(|| format!("--chain-board {spec:?}: give SERIAL:GAME"))?;
                let game = game
                    .parse()
                    .with_context(|| format!("--chain-board {spec:?}: GAME is a number"))?;
                Ok((serial.to_owned(), game))
            })
            .collect()
    }
}

/// Runs an emulated chain until stopped.
pub async fn run(emulation: EmulateArgs, chain: ChainArgs) -> anyhow::Result<()> {
    let boards = chain.boards()?;
    let path = emulation.pgn.as_ref().context("--bus: give --pgn")?;
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut addresses = Vec::new();
    let mut games = Vec::new();
    for (serial, game) in &boards {
        addresses.push(
            Address::of_serial(serial)
                .with_context(|| format!("--chain-board {serial}: not a DGT serial number"))?,
        );
        if *game == 0 {
            // A board on the chain with nothing to play (one nobody enrolled, say).
            games.push(Vec::new());
            continue;
        }
        let game =
            pgn::read_game(&text, *game).with_context(|| format!("in {}", path.display()))?;
        games.push(timeline::from_script(&replay::script(
            &game,
            emulation.time_control.as_ref(),
        )));
    }
    let slot = |serial: &Option<String>| -> anyhow::Result<usize> {
        match serial {
            None => Ok(0),
            Some(serial) => boards
                .iter()
                .position(|(s, _)| s == serial)
                .with_context(|| format!("{serial} is not a --chain-board")),
        }
    };
    let fault = |ply: Option<usize>, board: usize, ms: u64| {
        ply.map(|ply| BoardFault {
            board,
            ply,
            for_: Duration::from_millis(ms),
        })
    };
    let settings = ChainEmulation {
        link: emulation.link.clone(),
        speed: emulation.speed,
        unplug: fault(
            emulation.unplug_at_ply,
            slot(&chain.unplug_board)?,
            emulation.unplug_ms,
        ),
        power_cut: fault(
            chain.power_cut_at_ply,
            slot(&chain.power_cut_board)?,
            chain.power_cut_ms,
        ),
        stall: fault(
            emulation.stall_at_ply,
            slot(&chain.stall_board)?,
            emulation.stall_ms,
        ),
        noise_every: emulation.noise_every,
        seed: chain.seed,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let emulator = {
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || chain_pty::run(&addresses, &games, &settings, &stop))
    };
    stopped().await;
    stop.store(true, Ordering::Relaxed);
    emulator.await?
}
