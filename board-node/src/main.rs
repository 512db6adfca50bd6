//! `board-node`: the command line of a board node. Every command is one call into the
//! library (`board_node::cmd`).

use board_node::cmd;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    version,
    about = "Zeitnot board node: publishes an e-board and clock to the hub"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a real game from a PGN file as an e-board and clock would report it.
    Replay(cmd::replay::ReplayArgs),
    /// Read live DGT e-boards (and the clocks attached to them) on serial ports: one process
    /// for several boards, `--board N --serial PATH` for each, in the same order.
    Dgt(cmd::dgt::DgtArgs),
    /// Read live Millennium ChessLink e-boards (no clock: the hub completes a move once it
    /// has stood) on serial ports, as `dgt` does.
    Chesslink(cmd::chesslink::ChesslinkArgs),
    /// Emulate a DGT e-board with its clock on a pseudo-terminal, playing a PGN game or a
    /// recorded stream: for tests, and to check a node before a round.
    EmulateDgt(cmd::emulate::EmulateDgtArgs),
    /// Emulate a Millennium ChessLink board on a pseudo-terminal, as `emulate-dgt` does (the
    /// board has no clock: `--unplug-at-ply` and `--clock-off-at-ply` do not apply).
    EmulateChesslink(cmd::emulate::EmulateChesslinkArgs),
    /// Read the boards DGT LiveChess drives, through its local API (ws://HOST:1982/api/v1.0):
    /// LiveChess keeps their ports; each LiveChess board (by serial number) is a hall board.
    Livechess(cmd::livechess::LiveChessArgs),
    /// Read a Chessnut board (Air, Air+, Go, Pro, Move) over Bluetooth LE, found by its
    /// address or its advertised name.
    Chessnut(cmd::chessnut::ChessnutArgs),
    /// A stand-in for DGT LiveChess's API serving boards that replay real games: for tests,
    /// and to rehearse `board-node livechess` before a round.
    EmulateLivechess(cmd::emulate_livechess::EmulateLiveChessArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The outbox and whatever the node writes: its user's only.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours for a terminal only: a journal or a log file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,board_node=info".into()),
        )
        .init();
    // Kept: bus mode reads where each flag stands on the command line.
    let matches = Cli::command().get_matches();
    match Cli::from_arg_matches(&matches)?.command {
        Command::Replay(args) => cmd::replay::run(args).await,
        Command::Dgt(args) => {
            let own = matches.subcommand_matches("dgt").expect("the dgt command");
            cmd::dgt::run(args, own).await
        }
        Command::Chesslink(args) => cmd::chesslink::run(args).await,
        Command::EmulateDgt(args) => cmd::emulate::dgt(args).await,
        Command::EmulateChesslink(args) => cmd::emulate::chesslink(args).await,
        Command::Livechess(args) => cmd::livechess::run(args).await,
        Command::Chessnut(args) => cmd::chessnut::run(args).await,
        Command::EmulateLivechess(args) => cmd::emulate_livechess::run(args).await,
    }
}
