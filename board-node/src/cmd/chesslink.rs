//! `board-node chesslink`: live Millennium ChessLink e-boards on serial ports (no clock:
//! the hub completes a move once it has stood).

use super::boards::LiveArgs;
use super::stopped::stopped;
use crate::{chesslink, live};

/// The boards.
#[derive(clap::Args)]
pub struct ChesslinkArgs {
    #[command(flatten)]
    line: LiveArgs,
}

/// Serves the boards until stopped.
pub async fn run(args: ChesslinkArgs) -> anyhow::Result<()> {
    let boards = args.line.boards("chesslink", "")?;
    live::serve(boards, chesslink::session::Session::new, stopped()).await
}
