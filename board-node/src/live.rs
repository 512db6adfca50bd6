//! One node process serving several live boards: each board its own serial thread, its own
//! outbox and sequence, its own MQTT session under its own enrolment, so that a board that
//! fails (or a key that is wrong) touches no other.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;

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
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let mut nodes = Vec::new();
    for (config, path) in boards {
        let board = config.board;
        // Beside the outbox (`board-N.orientation.json`): sled owns the outbox's directory.
        let orientation_file = config.outbox.with_extension("orientation.json");
        if let Some(parent) = orientation_file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let session = session(serial::kept_orientation(&orientation_file));
        let serial_board = SerialBoard {
            orientation_file: Some(orientation_file),
            ..SerialBoard::new(path)
        };
        let readings = serial::spawn(serial_board, session, stop.clone())
            .with_context(|| format!("starting board {board}'s serial thread"))?;
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
