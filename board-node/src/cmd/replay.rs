//! `board-node replay`: a real game from a PGN file, as an e-board and clock would report it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use link::Brokers;
use protocol::time_control::TimeControl;
use protocol::BoardNo;

use super::broker::{broker_tls, check_event, read_key};
use super::stopped::stopped;
use crate::node::{self, NodeConfig};
use crate::source::Feed;
use crate::{pgn, replay};

/// The game, the board it plays on and the broker it reports to.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The MQTT broker: mqtts://HOST:PORT (TLS, with --ca-file), HOST:PORT or
    /// mqtt://HOST:PORT (plain: a hub's loopback listener, a lab); a cluster's nodes
    /// as ADDR,ADDR,…, tried in turn.
    #[arg(long)]
    broker: Brokers,
    /// The hall's CA certificate (PEM; the `ca` of the enrolment's answer): an mqtts://
    /// broker is trusted only with a certificate it signed.
    #[arg(long)]
    ca_file: Option<PathBuf>,
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
    #[arg(long, value_parser = TimeControl::parse_any)]
    time_control: Option<TimeControl>,
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
}

/// Plays the game to its end (or until stopped) and prints the node's report as JSON.
pub async fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let ReplayArgs {
        broker,
        ca_file,
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
    } = args;
    let key = key_file.as_deref().map(read_key).transpose()?;
    let tls = broker_tls(&broker, ca_file.as_deref())?;
    check_event(&event)?;
    let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let game_no = game;
    let game = pgn::read_game(&text, game).with_context(|| format!("in {}", path.display()))?;
    let mut script = replay::from_ply(replay::script(&game, time_control.as_ref()), from_ply);
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
        // A board's node plays each round's game through one outbox.
        script: Some(format!("{}#{game_no}+{from_ply}", path.display())),
        board_hw: hardware_id.unwrap_or_else(|| format!("replay-{board}")),
        // An empty clock id tells the hub the board has no clock.
        clock_hw: if no_clock {
            String::new()
        } else {
            "replay".into()
        },
        key,
        tls,
    };
    let report = node::run(config, Feed::Script(script), stopped()).await?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
