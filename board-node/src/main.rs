//! `board-node`: the command line of a board node.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use board_node::node::{self, NodeConfig};
use board_node::{pgn, replay};
use clap::{Parser, Subcommand};
use link::BrokerAddr;
use protocol::BoardNo;

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
    Replay {
        /// The MQTT broker: HOST:PORT or mqtt://HOST:PORT.
        #[arg(long)]
        broker: BrokerAddr,
        /// The board number in the hall.
        #[arg(long)]
        board: u16,
        /// The PGN file.
        #[arg(long)]
        pgn: PathBuf,
        /// Which game of the file, counting from 1.
        #[arg(long, default_value_t = 1)]
        game: usize,
        /// Game time runs this many times faster than real time.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// The game's real time control (PGN syntax or words) when its `TimeControl` tag is
        /// missing or wrong; it decides the clock's start and the think times read off `%clk`.
        #[arg(long, value_parser = protocol::time_control::TimeControl::parse_any)]
        time_control: Option<protocol::time_control::TimeControl>,
        /// Directory of the durable outbox; reuse it after a restart to resume.
        #[arg(long)]
        outbox: PathBuf,
        /// The event (tournament) id used in MQTT topics.
        #[arg(long, default_value = "default")]
        event: String,
        /// Report no clock: the board alone, each move left standing for `--stand-ms` before
        /// the next hand comes, as the hub's move inference for boards without a clock needs.
        #[arg(long)]
        no_clock: bool,
        /// With `--no-clock`: how long each move stands at least (ms); longer than the hub's
        /// debounce interval.
        #[arg(long, default_value_t = 2_500)]
        stand_ms: u64,
        /// Start from the position after this many completed moves, as a node swapped in
        /// mid-game reads the board and the clock as they stand.
        #[arg(long, default_value_t = 0)]
        from_ply: usize,
        /// The e-board's hardware id the node announces (a DGT serial number, say)
        /// [default: replay-BOARD, one per board, as real e-boards have].
        #[arg(long)]
        hardware_id: Option<String>,
        /// The file holding the key the hub issued when it enrolled this node
        /// (`hub enrol`, `POST /api/nodes/enrol`): 64 hex digits. Without it the node's
        /// events are unauthenticated, and only a hall opened to such boards takes them.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
}

/// The key in `path`, with the file named in the error.
fn read_key(path: &std::path::Path) -> anyhow::Result<protocol::seal::NodeKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the key file {}", path.display()))?;
    protocol::seal::NodeKey::parse(&text).with_context(|| format!("in {}", path.display()))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,board_node=info".into()),
        )
        .init();
    match Cli::parse().command {
        Command::Replay {
            broker,
            board,
            pgn: path,
            game,
            speed,
            time_control,
            outbox,
            event,
            no_clock,
            stand_ms,
            from_ply,
            hardware_id,
            key_file,
        } => {
            let key = key_file.as_deref().map(read_key).transpose()?;
            anyhow::ensure!(
                protocol::topic::is_valid_event(&event),
                "event id {event:?}: use letters, digits, '-', '_' or '.'"
            );
            let text =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let game =
                pgn::read_game(&text, game).with_context(|| format!("in {}", path.display()))?;
            let mut script =
                replay::from_ply(replay::script(&game, time_control.as_ref()), from_ply);
            if no_clock {
                script = replay::without_clock(script, stand_ms);
            }
            let config = NodeConfig {
                board: BoardNo(board),
                event,
                broker,
                outbox,
                speed,
                heartbeat: Some(Duration::from_secs(5)),
                exit_when_done: true,
                board_hw: hardware_id.unwrap_or_else(|| format!("replay-{board}")),
                // An empty clock id tells the hub the board has no clock.
                clock_hw: if no_clock {
                    String::new()
                } else {
                    "replay".into()
                },
                key,
            };
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            let report = node::run(config, script, shutdown).await?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
    }
}
