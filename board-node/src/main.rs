//! `board-node`: the command line of a board node.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use board_node::dgt::bus::wire::Address;
use board_node::eboard::emulator::{pty, timeline};
use board_node::eboard::Orientation;
use board_node::live;
use board_node::node::{self, NodeConfig};
use board_node::source::Feed;
use board_node::{pgn, replay};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use link::Brokers;
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
    /// Read live DGT e-boards (and the clocks attached to them) on serial ports: one process
    /// for several boards, `--board N --serial PATH` for each, in the same order.
    Dgt {
        #[command(flatten)]
        line: LiveArgs,
        /// Which side of the clock is White's [default: the side to move when the clock is
        /// first seen, as White's clock is started (6.5)].
        #[arg(long, value_enum)]
        white_clock: Option<board_node::eboard::ClockSide>,
        /// The boards have no clock: the hub completes a move once it has stood.
        #[arg(long)]
        no_clock: bool,
        /// Chains in DGT's bus mode: each `--serial` is one chain's port, and the
        /// `--board N --hardware-id SERIAL --key-file F` that follow it (up to the next
        /// `--serial`) are its boards, each e-board named by its serial number.
        #[arg(long)]
        bus: bool,
    },
    /// Read live Millennium ChessLink e-boards (no clock: the hub completes a move once it
    /// has stood) on serial ports, as `dgt` does.
    Chesslink {
        #[command(flatten)]
        line: LiveArgs,
    },
    /// Emulate a DGT e-board with its clock on a pseudo-terminal, playing a PGN game or a
    /// recorded stream: for tests, and to check a node before a round.
    EmulateDgt {
        #[command(flatten)]
        emulation: EmulateArgs,
        /// The board's serial number, as it answers when asked.
        #[arg(long, default_value = "10001")]
        serial: String,
        #[command(flatten)]
        chain: ChainArgs,
    },
    /// Emulate a Millennium ChessLink board on a pseudo-terminal, as `emulate-dgt` does (the
    /// board has no clock: `--unplug-at-ply` and `--clock-off-at-ply` do not apply).
    EmulateChesslink {
        #[command(flatten)]
        emulation: EmulateArgs,
        /// Each move stands this long (game ms) before the next hand comes, as the hub's
        /// completion of moves on boards without a clock needs.
        #[arg(long, default_value_t = 2_500)]
        stand_ms: u64,
    },
}

/// The boards a live node serves.
#[derive(clap::Args)]
struct LiveArgs {
    /// The MQTT broker: mqtts://HOST:PORT (TLS, with --ca-file), HOST:PORT or
    /// mqtt://HOST:PORT (plain: a hub's loopback listener, a lab); a cluster's nodes as
    /// ADDR,ADDR,…, tried in turn.
    #[arg(long)]
    broker: Brokers,
    /// The hall's CA certificate (PEM; the `ca` of the enrolment's answer): an mqtts://
    /// broker is trusted only with a certificate it signed.
    #[arg(long)]
    ca_file: Option<PathBuf>,
    /// The outboxes' directory: each board keeps its own in `board-N` below it. Keep it on
    /// persistent storage.
    #[arg(long)]
    outbox: PathBuf,
    /// A board number in the hall; repeat for each board this node serves.
    #[arg(long = "board", required = true)]
    boards: Vec<u16>,
    /// The board's serial device (a udev symlink such as /dev/zeitnot/board-12 keeps its
    /// name over replugs); one per `--board` (with `--bus`: one per chain, before its
    /// boards).
    #[arg(long = "serial", required = true)]
    serials: Vec<PathBuf>,
    /// The key file of each board's enrolment, one per `--board`.
    #[arg(long = "key-file")]
    key_files: Vec<PathBuf>,
    /// The hardware id each board announces (as enrolled), one per `--board`
    /// [default: dgt-board-N, chesslink-board-N]; with `--bus`, the e-board's serial
    /// number, which gives its address on the chain.
    #[arg(long = "hardware-id")]
    hardware_ids: Vec<String>,
    /// The event (tournament) id used in MQTT topics.
    #[arg(long, default_value = "default")]
    event: String,
}

/// What an emulated board plays, and how it misbehaves.
#[derive(clap::Args)]
struct EmulateArgs {
    /// The PGN file to play.
    #[arg(
        long,
        conflicts_with = "recording",
        required_unless_present = "recording"
    )]
    pgn: Option<PathBuf>,
    /// Which game of the file, counting from 1.
    #[arg(long, default_value_t = 1)]
    game: usize,
    /// The game's real time control when its `TimeControl` tag is missing or wrong.
    #[arg(long, value_parser = protocol::time_control::TimeControl::parse_any)]
    time_control: Option<protocol::time_control::TimeControl>,
    /// A recorded DGT stream (Base64 lines, as in data/real/dgt/dgtdriver) to play at the
    /// pace of its clock.
    #[arg(long)]
    recording: Option<PathBuf>,
    /// Game time runs this many times faster than real time.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Where to put the symlink to the emulated board's device.
    #[arg(long)]
    link: PathBuf,
    /// Unplug the board after this many clock presses ...
    #[arg(long)]
    unplug_at_ply: Option<usize>,
    /// ... for this long (real ms), then plug it back in under another device name.
    #[arg(long, default_value_t = 3_000)]
    unplug_ms: u64,
    /// Switch the clock off after this many presses ...
    #[arg(long)]
    clock_off_at_ply: Option<usize>,
    /// ... for this long (real ms).
    #[arg(long, default_value_t = 3_000)]
    clock_off_ms: u64,
    /// Line noise before every N-th message.
    #[arg(long)]
    noise_every: Option<usize>,
    /// Stall the line after this many clock presses (nothing passes either way) ...
    #[arg(long)]
    stall_at_ply: Option<usize>,
    /// ... for this long (real ms), then let what was held back through ...
    #[arg(long, default_value_t = 4_000)]
    stall_ms: u64,
    /// ... or lose it (the line dropped the bytes).
    #[arg(long)]
    stall_drops: bool,
}

/// A chain of DGT boards in bus mode on one pseudo-terminal.
#[derive(clap::Args)]
struct ChainArgs {
    /// Emulate a chain of boards in bus mode, one `--chain-board` each (the faults' plies
    /// count on the board they name).
    #[arg(long, requires = "chain_boards", conflicts_with = "recording")]
    bus: bool,
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
async fn emulate_chain(emulation: EmulateArgs, chain: ChainArgs) -> anyhow::Result<()> {
    use board_node::dgt::bus::emulator::pty::{self as chain_pty, BoardFault, ChainEmulation};
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
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let emulator = {
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || chain_pty::run(&addresses, &games, &settings, &stop))
    };
    stopped().await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    emulator.await?
}

impl LiveArgs {
    /// Each board's node configuration, in the order of `--board`; `family` names the
    /// default hardware ids, `clock_hw` the clock the boards report (empty: none).
    fn configs(&self, family: &str, clock_hw: &str) -> anyhow::Result<Vec<NodeConfig>> {
        let LiveArgs {
            broker,
            ca_file,
            outbox,
            boards,
            key_files,
            hardware_ids,
            event,
            ..
        } = self;
        anyhow::ensure!(
            protocol::topic::is_valid_event(event),
            "event id {event:?}: use letters, digits, '-', '_' or '.'"
        );
        for (what, given) in [
            ("--key-file", key_files.len()),
            ("--hardware-id", hardware_ids.len()),
        ] {
            anyhow::ensure!(
                given == 0 || given == boards.len(),
                "{given} {what} for {} boards: give one for each --board, or none",
                boards.len()
            );
        }
        let tls = broker_tls(broker, ca_file.as_deref())?;
        let mut configs = Vec::new();
        for (i, board) in boards.iter().enumerate() {
            let key = key_files.get(i).map(|f| read_key(f)).transpose()?;
            configs.push(NodeConfig {
                board: BoardNo(*board),
                event: event.clone(),
                broker: broker.clone(),
                outbox: outbox.join(format!("board-{board}")),
                speed: 1.0,
                heartbeat: Some(Duration::from_secs(5)),
                exit_when_done: false,
                script: None,
                board_hw: hardware_ids
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("{family}-board-{board}")),
                clock_hw: clock_hw.to_owned(),
                key,
                tls: tls.clone(),
            });
        }
        Ok(configs)
    }

    /// Boards on ports of their own: each board's configuration and serial port.
    fn boards(self, family: &str, clock_hw: &str) -> anyhow::Result<Vec<(NodeConfig, PathBuf)>> {
        anyhow::ensure!(
            self.serials.len() == self.boards.len(),
            "{} boards but {} serial ports: give one --serial for each --board (or --bus for a chain)",
            self.boards.len(),
            self.serials.len()
        );
        let configs = self.configs(family, clock_hw)?;
        Ok(configs.into_iter().zip(self.serials).collect())
    }

    /// Chains in bus mode: each `--serial` is a chain, and the `--board`s after it (up to
    /// the next `--serial`) are its boards, each named by its serial number
    /// (`--hardware-id`). `serial_at` and `board_at` are where each `--serial` and
    /// `--board` stand on the command line.
    fn chains(
        self,
        clock_hw: &str,
        serial_at: &[usize],
        board_at: &[usize],
    ) -> anyhow::Result<Vec<live::ChainPort>> {
        anyhow::ensure!(
            self.hardware_ids.len() == self.boards.len(),
            "--bus: give each --board the serial number of its e-board (--hardware-id), as the technician enrolled it"
        );
        let configs = self.configs("dgt", clock_hw)?;
        let mut chains: Vec<live::ChainPort> = self
            .serials
            .iter()
            .map(|path| live::ChainPort {
                path: path.clone(),
                boards: Vec::new(),
            })
            .collect();
        for (config, at) in configs.into_iter().zip(board_at) {
            let chain = serial_at
                .iter()
                .rposition(|serial| serial < at)
                .with_context(|| format!("--bus: board {} comes before any --serial: give the chain's --serial first, then its boards", config.board))?;
            let address = Address::of_serial(&config.board_hw).with_context(|| {
                format!(
                    "board {}: --hardware-id {:?} is not a DGT serial number (the digits on the board)",
                    config.board, config.board_hw
                )
            })?;
            let chain = &mut chains[chain];
            if let Some((other, _)) = chain.boards.iter().find(|(_, a)| *a == address) {
                anyhow::bail!(
                    "boards {} and {} have the same bus address {address} on {}: DGT addresses are the serial number's last 14 bits; put one on another chain",
                    other.board,
                    config.board,
                    chain.path.display()
                );
            }
            chain.boards.push((config, address));
        }
        if let Some(empty) = chains.iter().find(|c| c.boards.is_empty()) {
            anyhow::bail!("--bus: no --board after --serial {}", empty.path.display());
        }
        Ok(chains)
    }
}

impl EmulateArgs {
    /// What happens on the board, and how the emulation misbehaves; `stand_ms`: a board
    /// without a clock, each move left standing that long.
    fn play(
        self,
        stand_ms: Option<u64>,
    ) -> anyhow::Result<(
        Vec<board_node::eboard::emulator::timeline::Moment>,
        pty::Emulation,
    )> {
        let moments = match (&self.pgn, &self.recording) {
            (Some(path), _) => {
                let text =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                let game = pgn::read_game(&text, self.game)
                    .with_context(|| format!("in {}", path.display()))?;
                let mut script = replay::script(&game, self.time_control.as_ref());
                if let Some(stand_ms) = stand_ms {
                    script = replay::without_clock(script, stand_ms);
                }
                timeline::from_script(&script)
            }
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let messages = board_node::dgt::recording::messages(&text)
                    .with_context(|| format!("in {}", path.display()))?;
                timeline::from_recording(board_node::dgt::recording::timed_messages(&messages))
            }
            (None, None) => anyhow::bail!("give --pgn or --recording"),
        };
        let emulation = pty::Emulation {
            link: self.link,
            speed: self.speed,
            unplug_at_ply: self.unplug_at_ply,
            unplug: Duration::from_millis(self.unplug_ms),
            clock_off_at_ply: self.clock_off_at_ply,
            clock_off: Duration::from_millis(self.clock_off_ms),
            noise_every: self.noise_every,
            stall_at_ply: self.stall_at_ply,
            stall: Duration::from_millis(self.stall_ms),
            stall_drops: self.stall_drops,
        };
        Ok((moments, emulation))
    }
}

/// Runs an emulated board until stopped.
async fn emulate(
    device: impl board_node::eboard::emulator::EmulatedDevice + Send + 'static,
    (moments, emulation): (
        Vec<board_node::eboard::emulator::timeline::Moment>,
        pty::Emulation,
    ),
) -> anyhow::Result<()> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let emulator = {
        let stop = stop.clone();
        tokio::task::spawn_blocking(move || pty::run(device, &moments, &emulation, &stop))
    };
    stopped().await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    emulator.await?
}

/// The key in `path`, with the file named in the error.
fn read_key(path: &std::path::Path) -> anyhow::Result<protocol::seal::NodeKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the key file {}", path.display()))?;
    protocol::seal::NodeKey::parse(&text).with_context(|| format!("in {}", path.display()))
}

/// The TLS configuration of `broker`: for an mqtts:// broker, the hall CA in `ca_file`
/// pinned; `None` for a plain one.
fn broker_tls(
    broker: &Brokers,
    ca_file: Option<&std::path::Path>,
) -> anyhow::Result<Option<std::sync::Arc<rustls::ClientConfig>>> {
    if !broker.any_tls() {
        return Ok(None);
    }
    let ca_file = ca_file.with_context(|| {
        format!("{broker} is TLS: give the hall's CA certificate with --ca-file (the `ca` of the enrolment's answer)")
    })?;
    let pem = std::fs::read(ca_file).with_context(|| format!("reading {}", ca_file.display()))?;
    let config =
        link::tls::client_config(&pem).with_context(|| format!("in {}", ca_file.display()))?;
    Ok(Some(config))
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
    let matches = Cli::command().get_matches();
    match Cli::from_arg_matches(&matches)?.command {
        Command::Replay {
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
        } => {
            let key = key_file.as_deref().map(read_key).transpose()?;
            let tls = broker_tls(&broker, ca_file.as_deref())?;
            anyhow::ensure!(
                protocol::topic::is_valid_event(&event),
                "event id {event:?}: use letters, digits, '-', '_' or '.'"
            );
            let text =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let game_no = game;
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
        Command::Dgt {
            line,
            white_clock,
            no_clock,
            bus: true,
        } => {
            let clock_hw = if no_clock { "" } else { "dgt-clock" };
            let dgt = matches.subcommand_matches("dgt").expect("the dgt command");
            let at = |id: &str| -> Vec<usize> {
                dgt.indices_of(id)
                    .map(Iterator::collect)
                    .unwrap_or_default()
            };
            let chains = line.chains(clock_hw, &at("serials"), &at("boards"))?;
            let oriented = |kept: Orientation| Orientation {
                white_clock: white_clock.or(kept.white_clock),
                reversed: kept.reversed,
            };
            live::serve_chains(chains, oriented, stopped()).await
        }
        Command::Dgt {
            line,
            white_clock,
            no_clock,
            bus: false,
        } => {
            let clock_hw = if no_clock { "" } else { "dgt-clock" };
            let boards = line.boards("dgt", clock_hw)?;
            let session = |kept: Orientation| {
                board_node::dgt::session::Session::oriented(Orientation {
                    white_clock: white_clock.or(kept.white_clock),
                    reversed: kept.reversed,
                })
            };
            live::serve(boards, session, stopped()).await
        }
        Command::Chesslink { line } => {
            let boards = line.boards("chesslink", "")?;
            live::serve(
                boards,
                board_node::chesslink::session::Session::new,
                stopped(),
            )
            .await
        }
        Command::EmulateDgt {
            emulation, chain, ..
        } if chain.bus => emulate_chain(emulation, chain).await,
        Command::EmulateDgt {
            emulation, serial, ..
        } => {
            let device = board_node::dgt::emulator::EmulatedBoard::new(&serial);
            emulate(device, emulation.play(None)?).await
        }
        Command::EmulateChesslink {
            emulation,
            stand_ms,
        } => {
            let device = board_node::chesslink::emulator::EmulatedChessLink::default();
            emulate(device, emulation.play(Some(stand_ms))?).await
        }
    }
}

/// Resolves at SIGTERM (systemd stopping the node) or Ctrl-C.
async fn stopped() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            tracing::warn!(error = %e, "SIGTERM cannot be caught; Ctrl-C still stops the node");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
