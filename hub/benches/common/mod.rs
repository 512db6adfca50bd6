//! What the process benchmarks share: free ports, real game readings, percentiles, links.

#![allow(dead_code)] // each bench uses its own part

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use board_node::link::LinkEvent;
use board_node::{pgn, replay};
use protocol::UplinkBody;

const GAMES: &[u8] = include_bytes!("../../demo/world-cup-2025-rapid.pgn");

pub fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// Each node's events: the readings of a real game, as the replay source reports them.
pub fn node_events(board: u16, events: usize) -> Vec<UplinkBody> {
    let games = pgn::read_games(GAMES).expect("demo games");
    let game = &games[usize::from(board) % games.len()];
    replay::script(game, None)
        .into_iter()
        .map(|t| t.reading.body())
        .cycle()
        .take(events)
        .collect()
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub async fn connected(events: &mut tokio::sync::mpsc::Receiver<LinkEvent>) {
    while let Some(event) = events.recv().await {
        if matches!(event, LinkEvent::Connected) {
            return;
        }
    }
}

/// Lets the subscriptions queued at connect reach the broker.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}
