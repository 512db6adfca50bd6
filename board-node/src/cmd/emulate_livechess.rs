//! `board-node emulate-livechess`: a stand-in for DGT LiveChess's local API serving boards
//! that replay real games, for tests and a technician's rehearsal of `board-node livechess`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use protocol::time_control::TimeControl;

use super::stopped::stopped;
use crate::livechess::emulator::{self, EmulatedBoard, Emulation, Stall};
use crate::{pgn, replay};

#[derive(clap::Args)]
pub struct EmulateLiveChessArgs {
    /// Where the API listens (its path is any, as /api/v1.0).
    #[arg(long, default_value = "127.0.0.1:1982")]
    listen: String,
    /// The PGN file the boards' games come from.
    #[arg(long)]
    pgn: PathBuf,
    /// Each board: SERIAL:GAME, the game of the file it replays (from 1), comma separated.
    #[arg(long, value_delimiter = ',', required = true)]
    games: Vec<String>,
    /// The games' real time control when their `TimeControl` tags are missing or wrong.
    #[arg(long, value_parser = TimeControl::parse_any)]
    time_control: Option<TimeControl>,
    /// Game time runs this many times faster than real time.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Game time 0, Unix ms [default: now]. A stand-in started again with the epoch the
    /// first one printed goes on where that one was (LiveChess restarted mid-round).
    #[arg(long)]
    epoch_ms: Option<u64>,
    /// Hold back this board's feed (its serial number) ...
    #[arg(long)]
    stall_serial: Option<String>,
    /// ... once it has had this many presses ...
    #[arg(long, default_value_t = 1)]
    stall_at_ply: usize,
    /// ... for this long (real ms).
    #[arg(long, default_value_t = 5_000)]
    stall_ms: u64,
}

/// Serves the boards until stopped; prints `{"listen", "epoch_ms"}` once listening and
/// `{"played": true}` once every game has been played.
pub async fn run(args: EmulateLiveChessArgs) -> anyhow::Result<()> {
    let text =
        std::fs::read(&args.pgn).with_context(|| format!("reading {}", args.pgn.display()))?;
    let mut boards = Vec::new();
    for entry in &args.games {
        let (serial, game) = entry
            .split_once(':')
            .with_context(|| format!("--games {entry:?}: SERIAL:GAME, as 7425:3"))?;
        let game: usize = game
            .parse()
            .with_context(|| format!("--games {entry:?}: the game's number"))?;
        let parsed =
            pgn::read_game(&text, game).with_context(|| format!("in {}", args.pgn.display()))?;
        boards.push(EmulatedBoard {
            serial: serial.to_owned(),
            script: replay::script(&parsed, args.time_control.as_ref()),
        });
    }
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let epoch_ms = args.epoch_ms.unwrap_or_else(crate::node::unix_ms);
    let emulation = Emulation {
        epoch_ms,
        speed: args.speed,
        stall: args.stall_serial.map(|serial| Stall {
            serial,
            at_ply: args.stall_at_ply,
            real: Duration::from_millis(args.stall_ms),
        }),
    };
    println!(
        "{}",
        serde_json::json!({"listen": listener.local_addr()?.to_string(), "epoch_ms": epoch_ms})
    );
    let (played, mut done) = tokio::sync::watch::channel(false);
    let served = tokio::spawn(emulator::serve(listener, boards, emulation, played));
    tokio::spawn(async move {
        if done.wait_for(|d| *d).await.is_ok() {
            println!("{}", serde_json::json!({"played": true}));
        }
    });
    stopped().await;
    served.abort();
    Ok(())
}
