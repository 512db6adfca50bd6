//! `board-node dgt`: live DGT e-boards (and their clocks) on serial ports, each board on a
//! port of its own or chains of them in bus mode.

use clap::ArgMatches;

use super::boards::LiveArgs;
use super::stopped::stopped;
use crate::eboard::{ClockSide, Orientation};
use crate::{dgt, live};

/// The boards and how their clocks are read.
#[derive(clap::Args)]
pub struct DgtArgs {
    #[command(flatten)]
    line: LiveArgs,
    /// Which side of the clock is White's [default: the side to move when the clock is
    /// first seen, as White's clock is started (6.5)].
    #[arg(long, value_enum)]
    white_clock: Option<ClockSide>,
    /// The boards have no clock: the hub completes a move once it has stood.
    #[arg(long)]
    no_clock: bool,
    /// Chains in DGT's bus mode: each `--serial` is one chain's port, and the
    /// `--board N --hardware-id SERIAL --key-file F` that follow it (up to the next
    /// `--serial`) are its boards, each e-board named by its serial number.
    #[arg(long)]
    bus: bool,
}

/// Serves the boards until stopped; `matches` are the command's own (bus mode reads where
/// each `--serial` and `--board` stand).
pub async fn run(args: DgtArgs, matches: &ArgMatches) -> anyhow::Result<()> {
    let DgtArgs {
        line,
        white_clock,
        no_clock,
        bus,
    } = args;
    let clock_hw = if no_clock { "" } else { "dgt-clock" };
    let oriented = move |kept: Orientation| Orientation {
        white_clock: white_clock.or(kept.white_clock),
        reversed: kept.reversed,
    };
    if bus {
        let at = |id: &str| -> Vec<usize> {
            matches
                .indices_of(id)
                .map(Iterator::collect)
                .unwrap_or_default()
        };
        let chains = line.chains(clock_hw, &at("serials"), &at("boards"))?;
        return live::serve_chains(chains, oriented, stopped()).await;
    }
    let boards = line.boards("dgt", clock_hw)?;
    let session = |kept: Orientation| dgt::session::Session::oriented(oriented(kept));
    live::serve(boards, session, stopped()).await
}
