//! One node process serving several live boards: each board its own outbox and sequence,
//! its own MQTT session under its own enrolment, so that a board that fails (or a key that
//! is wrong) touches no other.
//!
//! The transports meet here: a serial port a board ([`serve`]), a chain on one port
//! ([`serve_chains`]), DGT LiveChess's WebSocket ([`serve_livechess`]), a Chessnut board's
//! Bluetooth LE link ([`serve_chessnut`]). Each gives every
//! board a stream of readings; what follows (the node's health, outbox, catch-up and
//! sealing) is [`run_nodes`]'s, the same for all. A new transport is a file that makes those
//! streams, and a function here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;

use crate::dgt::bus::master::Chain;
use crate::dgt::bus::wire::Address;
use crate::eboard::Orientation;
use crate::line::serial::{self, SerialBoard};
use crate::line::LineSession;
use crate::node::{self, NodeConfig};
use crate::source::{Feed, Timed};

/// Serves each `(config, serial port)` until `shutdown`, then delivers what it can within
/// [`node::DRAIN`] and prints each board's report as a line of JSON. `session` makes each
/// board's line session from the orientation an earlier run kept.
pub async fn serve<S: LineSession>(
    boards: Vec<(NodeConfig, PathBuf)>,
    session: impl Fn(Orientation) -> S,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut fed = Vec::new();
    for (config, path) in boards {
        let orientation_file = orientation_file(&config)?;
        let session = session(serial::kept_orientation(&orientation_file));
        let serial_board = SerialBoard {
            orientation_file: Some(orientation_file),
            ..SerialBoard::new(path)
        };
        let readings = serial::spawn(serial_board, session, stop.clone())
            .with_context(|| format!("starting board {}'s serial thread", config.board))?;
        fed.push((config, readings));
    }
    run_nodes(fed, stop, shutdown).await
}

/// One chain of DGT boards on one port: each board's node configuration and bus address.
pub struct ChainPort {
    pub path: PathBuf,
    pub boards: Vec<(NodeConfig, Address)>,
}

/// Serves each chain of boards in bus mode, as [`serve`] serves boards on ports of their
/// own; `oriented` completes the orientation each board kept from an earlier run.
pub async fn serve_chains(
    chains: Vec<ChainPort>,
    oriented: impl Fn(Orientation) -> Orientation,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut fed = Vec::new();
    for ChainPort { path, boards } in chains {
        let mut files = Vec::new();
        let mut enrolled = Vec::new();
        for (config, address) in &boards {
            let file = orientation_file(config)?;
            enrolled.push((*address, oriented(serial::kept_orientation(&file))));
            files.push(file);
        }
        let readings = serial::spawn_chain(
            SerialBoard::new(path.clone()),
            Chain::new(enrolled),
            files,
            stop.clone(),
        )
        .with_context(|| {
            format!(
                "starting the serial thread of the chain on {}",
                path.display()
            )
        })?;
        fed.extend(boards.into_iter().map(|(config, _)| config).zip(readings));
    }
    run_nodes(fed, stop, shutdown).await
}

/// Serves the boards DGT LiveChess at `url` drives, each `(config, LiveChess serial
/// number)`, as [`serve`] serves boards on serial ports.
pub async fn serve_livechess(
    url: String,
    boards: Vec<(NodeConfig, String)>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let (configs, serials): (Vec<NodeConfig>, Vec<String>) = boards.into_iter().unzip();
    let readings = crate::livechess::socket::spawn(url, serials, stop.clone());
    run_nodes(configs.into_iter().zip(readings).collect(), stop, shutdown).await
}

/// Serves a Chessnut board over Bluetooth LE, reached as `reach` says, as [`serve`] serves
/// boards on serial ports.
pub async fn serve_chessnut(
    config: NodeConfig,
    reach: crate::chessnut::ble::Reach,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let file = orientation_file(&config)?;
    let session = crate::chessnut::session::Session::new(serial::kept_orientation(&file));
    let readings = crate::chessnut::ble::spawn(reach, session, file, stop.clone());
    run_nodes(vec![(config, readings)], stop, shutdown).await
}

/// Where a board's orientation is kept: beside its outbox (`board-N.orientation.json`),
/// since sled owns the outbox's directory.
fn orientation_file(config: &NodeConfig) -> anyhow::Result<PathBuf> {
    let file = config.outbox.with_extension("orientation.json");
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    Ok(file)
}

/// Runs each board's node on its readings until `shutdown`; then stops the transports
/// (`stop`), delivers what it can and prints each board's report.
pub async fn run_nodes(
    fed: Vec<(
        NodeConfig,
        tokio::sync::mpsc::Receiver<crate::source::Reading>,
    )>,
    stop: Arc<AtomicBool>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let mut nodes = Vec::new();
    for (config, readings) in fed {
        let board = config.board;
        let mut stopped = stopped.clone();
        let until_stopped = async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        let node = async move {
            let result = node::run::<Vec<Timed>>(config, Feed::Live(readings), until_stopped).await;
            if let Err(e) = &result {
                // Said at once: the other boards go on.
                tracing::error!(board = board.0, error = %e, "board stopped");
            }
            result
        };
        nodes.push(tokio::spawn(node));
    }
    shutdown.await;
    tracing::info!("stopping: delivering what the hub has not acknowledged");
    let _ = stopping.send(true);
    stop.store(true, Ordering::Relaxed);
    let mut failed = 0;
    for node in nodes {
        match node.await.context("a board's task panicked")? {
            Ok(report) => println!("{}", serde_json::to_string(&report)?),
            Err(_) => failed += 1,
        }
    }
    anyhow::ensure!(failed == 0, "{failed} boards stopped with an error");
    Ok(())
}
