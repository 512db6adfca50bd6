//! `board-node chessnut`: a Chessnut board (Air, Air+, Go, Pro, Move) over Bluetooth LE, found
//! by its address or its advertised name (no clock: the hub completes a move once it has
//! stood).

use std::time::Duration;

use anyhow::Context;

use super::boards::NodeArgs;
use super::stopped::stopped;
use crate::chessnut::ble::{Reach, Target, RECONNECT_AFTER};
use crate::live;

/// The board and how to reach it.
#[derive(clap::Args)]
pub struct ChessnutArgs {
    #[command(flatten)]
    node: NodeArgs,
    /// The hall board it is.
    #[arg(long)]
    board: u16,
    /// The board's Bluetooth address (AA:BB:CC:DD:EE:FF, as `bluetoothctl devices` lists
    /// it): the one board of that name in a room of many.
    #[arg(long, conflicts_with = "name", required_unless_present = "name")]
    address: Option<String>,
    /// Or the name it advertises ("Chessnut Air"): the first board seen with it, for a
    /// lone board at home or in a lab.
    #[arg(long)]
    name: Option<String>,
    /// The Bluetooth adapter to use (hci0, hci1, …) [default: BlueZ's default].
    #[arg(long)]
    adapter: Option<String>,
    /// Seconds to leave the board alone after its link went before connecting again: a
    /// Chessnut takes no new connection until its last one timed out.
    #[arg(long, default_value_t = RECONNECT_AFTER.as_secs_f64())]
    reconnect_after: f64,
}

/// The board named on the command line.
fn target(address: Option<&str>, name: Option<&str>) -> anyhow::Result<Target> {
    match (address, name) {
        (Some(address), _) => Ok(Target::Address(address.parse().with_context(|| {
            format!("--address {address:?} is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        })?)),
        (None, Some(name)) => {
            anyhow::ensure!(
                !name.trim().is_empty() && name.len() <= 248,
                "--name {name:?}: the name the board advertises, as \"Chessnut Air\""
            );
            Ok(Target::Name(name.to_owned()))
        }
        (None, None) => anyhow::bail!("give the board's --address or its --name"),
    }
}

/// Serves the board until stopped.
pub async fn run(args: ChessnutArgs) -> anyhow::Result<()> {
    let target = target(args.address.as_deref(), args.name.as_deref())?;
    let hardware = match &target {
        Target::Address(address) => format!("chessnut-{address}"),
        Target::Name(_) => format!("chessnut-board-{}", args.board),
    };
    let mut configs = args
        .node
        .configs(&[args.board], |_, _| hardware.clone(), "")?;
    let config = configs.pop().context("one board")?;
    anyhow::ensure!(
        (0.0..=600.0).contains(&args.reconnect_after),
        "--reconnect-after {}: seconds, 0 to 600",
        args.reconnect_after
    );
    let reach = Reach {
        adapter: args.adapter,
        target,
        reconnect_after: Duration::from_secs_f64(args.reconnect_after),
    };
    live::serve_chessnut(config, reach, stopped()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_is_named_by_its_address_or_its_name() {
        assert!(matches!(
            target(Some("C0:FF:EE:00:11:22"), None).unwrap(),
            Target::Address(_)
        ));
        assert!(target(Some("C0:FF:EE"), None).is_err());
        assert_eq!(
            target(None, Some("Chessnut Air")).unwrap(),
            Target::Name("Chessnut Air".into())
        );
        assert!(target(None, Some(" ")).is_err());
        assert!(target(None, None).is_err());
    }
}
