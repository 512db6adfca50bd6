//! The boards a live node serves: the flags `dgt` and `chesslink` share, read into each
//! board's node configuration (and, for DGT's bus mode, into chains).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use link::Brokers;
use protocol::BoardNo;

use super::broker::{broker_tls, check_event, read_key};
use crate::dgt::bus::wire::Address;
use crate::live;
use crate::node::NodeConfig;

/// What every live node takes, whatever its boards' transport: the broker, the outboxes,
/// each board's key and hardware id, the event.
#[derive(clap::Args)]
pub struct NodeArgs {
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
    /// The key file of each board's enrolment, one per board, in the boards' order.
    #[arg(long = "key-file")]
    key_files: Vec<PathBuf>,
    /// The hardware id each board announces (as enrolled), one per board [default: the
    /// family's: dgt-board-N, chesslink-board-N, the LiveChess serial number]; with `--bus`,
    /// the e-board's serial number, which gives its address on the chain.
    #[arg(long = "hardware-id")]
    hardware_ids: Vec<String>,
    /// The event (tournament) id used in MQTT topics.
    #[arg(long, default_value = "default")]
    event: String,
}

impl NodeArgs {
    /// Each board's node configuration, in the order of `boards`; `default_hw` names a
    /// board's hardware where `--hardware-id` does not, `clock_hw` the clock the boards
    /// report (empty: none).
    pub fn configs(
        &self,
        boards: &[u16],
        default_hw: impl Fn(usize, u16) -> String,
        clock_hw: &str,
    ) -> anyhow::Result<Vec<NodeConfig>> {
        let NodeArgs {
            broker,
            ca_file,
            outbox,
            key_files,
            hardware_ids,
            event,
        } = self;
        check_event(event)?;
        for (what, given) in [
            ("--key-file", key_files.len()),
            ("--hardware-id", hardware_ids.len()),
        ] {
            anyhow::ensure!(
                given == 0 || given == boards.len(),
                "{given} {what} for {} boards: give one for each board, or none",
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
                    .unwrap_or_else(|| default_hw(i, *board)),
                clock_hw: clock_hw.to_owned(),
                key,
                tls: tls.clone(),
            });
        }
        Ok(configs)
    }
}

/// The boards a live node serves on serial ports.
#[derive(clap::Args)]
pub struct LiveArgs {
    #[command(flatten)]
    node: NodeArgs,
    /// A board number in the hall; repeat for each board this node serves.
    #[arg(long = "board", required = true)]
    boards: Vec<u16>,
    /// The board's serial device (a udev symlink such as /dev/zeitnot/board-12 keeps its
    /// name over replugs); one per `--board` (with `--bus`: one per chain, before its
    /// boards).
    #[arg(long = "serial", required = true)]
    serials: Vec<PathBuf>,
}

impl LiveArgs {
    fn configs(&self, family: &str, clock_hw: &str) -> anyhow::Result<Vec<NodeConfig>> {
        self.node.configs(
            &self.boards,
            |_, board| format!("{family}-board-{board}"),
            clock_hw,
        )
    }

    /// Boards on ports of their own: each board's configuration and serial port.
    pub fn boards(
        self,
        family: &str,
        clock_hw: &str,
    ) -> anyhow::Result<Vec<(NodeConfig, PathBuf)>> {
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
    pub fn chains(
        self,
        clock_hw: &str,
        serial_at: &[usize],
        board_at: &[usize],
    ) -> anyhow::Result<Vec<live::ChainPort>> {
        anyhow::ensure!(
            self.node.hardware_ids.len() == self.boards.len(),
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
