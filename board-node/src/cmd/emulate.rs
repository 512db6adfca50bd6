//! `board-node emulate-dgt` and `emulate-chesslink`: an e-board on a pseudo-terminal,
//! playing a PGN game or a recorded stream, for tests and to check a node before a round.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::emulate_chain::{self, ChainArgs};
use super::emulation::EmulateArgs;
use super::stopped::stopped;
use crate::eboard::emulator::timeline::Moment;
use crate::eboard::emulator::{pty, EmulatedDevice};
use crate::{chesslink, dgt};

/// A DGT board, alone or a chain of them.
#[derive(clap::Args)]
pub struct EmulateDgtArgs {
    #[command(flatten)]
    emulation: EmulateArgs,
    /// The board's serial number, as it answers when asked.
    #[arg(long, default_value = "10001")]
    serial: String,
    #[command(flatten)]
    chain: ChainArgs,
}

/// A ChessLink board.
#[derive(clap::Args)]
pub struct EmulateChesslinkArgs {
    #[command(flatten)]
    emulation: EmulateArgs,
    /// Each move stands this long (game ms) before the next hand comes, as the hub's
    /// completion of moves on boards without a clock needs.
    #[arg(long, default_value_t = 2_500)]
    stand_ms: u64,
}

/// Emulates the DGT board (or chain) until stopped.
pub async fn dgt(args: EmulateDgtArgs) -> anyhow::Result<()> {
    if args.chain.bus {
        return emulate_chain::run(args.emulation, args.chain).await;
    }
    let device = dgt::emulator::EmulatedBoard::new(&args.serial);
    emulate(device, args.emulation.play(None)?).await
}

/// Emulates the ChessLink board until stopped.
pub async fn chesslink(args: EmulateChesslinkArgs) -> anyhow::Result<()> {
    let device = chesslink::emulator::EmulatedChessLink::default();
    emulate(device, args.emulation.play(Some(args.stand_ms))?).await
}

/// Runs an emulated board until stopped.
async fn emulate(
    device: impl EmulatedDevice + Send + 'static,
    (moments, emulation): (Vec<Moment>, pty::Emulation),
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let emulator = {
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || pty::run(device, &moments, &emulation, &stop))
    };
    stopped().await;
    stop.store(true, Ordering::Relaxed);
    emulator.await?
}
