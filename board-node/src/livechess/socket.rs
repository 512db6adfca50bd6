//! The WebSocket to DGT LiveChess, as a transport of the node: it keeps the connection
//! (opened again with jittered backoff when LiveChess restarts or the socket stalls), hands
//! every message to the [`Session`] and each board's readings to that board's node.
//!
//! LiveChess speaks only when a board changes, so silence is no failure; the node asks for
//! the list of boards every [`LIST_EVERY`] (boards that came and went, and a board whose
//! feed stalled brought up to date), and a socket that answers nothing for [`STALLED`] is
//! dropped and opened again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use link::backoff::Backoff;
use protocol::NodeMs;
use tokio::sync::mpsc::{self, Receiver, Sender};
use tokio_tungstenite::tungstenite::Message;

use super::api::Session;
use crate::source::Reading;

/// How often the list of boards is asked for.
pub const LIST_EVERY: Duration = Duration::from_secs(2);
/// A socket silent this long (it answers the list every [`LIST_EVERY`]) has stalled.
pub const STALLED: Duration = Duration::from_secs(6);
/// How long connecting may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);
/// Readings a board's channel holds before the socket waits for its node.
const READINGS_BACKLOG: usize = 1_024;
/// A message longer than this is no LiveChess message (a list of a few hundred boards is
/// well under it).
const MAX_MESSAGE: usize = 4 << 20;

fn now() -> NodeMs {
    NodeMs(crate::node::unix_ms())
}

/// Starts the socket to LiveChess at `url` for the boards `serials`: each board's readings,
/// in the order of `serials`, until `stop`.
pub fn spawn(url: String, serials: Vec<String>, stop: Arc<AtomicBool>) -> Vec<Receiver<Reading>> {
    let (senders, receivers): (Vec<Sender<Reading>>, Vec<Receiver<Reading>>) = serials
        .iter()
        .map(|_| mpsc::channel(READINGS_BACKLOG))
        .unzip();
    tokio::spawn(run(url, Session::new(serials), senders, stop));
    receivers
}

/// Hands each reading to its board's node; `false` once no node listens.
async fn deliver(senders: &[Sender<Reading>], readings: Vec<(usize, Reading)>) -> bool {
    for (index, reading) in readings {
        if senders[index].send(reading).await.is_err() {
            return false;
        }
    }
    true
}

async fn run(
    url: String,
    mut session: Session,
    senders: Vec<Sender<Reading>>,
    stop: Arc<AtomicBool>,
) {
    let seed = url.len() as u64 ^ now().0;
    let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(2), seed);
    let mut reported_gone = false;
    while !stop.load(Ordering::Relaxed) {
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let connect =
            tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), false);
        let socket = match tokio::time::timeout(CONNECT_WITHIN, connect).await {
            Ok(Ok((socket, _))) => socket,
            failed => {
                let why = match failed {
                    Ok(Err(e)) => e.to_string(),
                    _ => format!("no answer within {CONNECT_WITHIN:?}"),
                };
                if !reported_gone {
                    tracing::warn!(%url, %why, "DGT LiveChess cannot be reached; trying again");
                    reported_gone = true;
                }
                if !deliver(&senders, session.closed(now())).await {
                    return;
                }
                tokio::time::sleep(backoff.next_wait()).await;
                continue;
            }
        };
        tracing::info!(%url, "connected to DGT LiveChess");
        reported_gone = false;
        backoff.reset();
        let (mut write, mut read) = socket.split();
        let (calls, readings) = session.opened(now());
        if !deliver(&senders, readings).await {
            return;
        }
        let mut sent = true;
        for call in calls {
            sent &= write.send(Message::text(call)).await.is_ok();
        }
        let mut list = tokio::time::interval(LIST_EVERY);
        list.tick().await; // the list was just asked for
        let why = loop {
            if !sent {
                break "the socket refused a call".to_owned();
            }
            if stop.load(Ordering::Relaxed) {
                break "stopping".to_owned();
            }
            tokio::select! {
                message = tokio::time::timeout(STALLED, read.next()) => match message {
                    Err(_) => break format!("nothing for {STALLED:?}: the socket stalled"),
                    Ok(None) => break "LiveChess closed the socket".to_owned(),
                    Ok(Some(Err(e))) => break e.to_string(),
                    Ok(Some(Ok(Message::Text(text)))) => match session.read(&text, now()) {
                        Ok(readings) => {
                            for serial in session.take_gone() {
                                tracing::warn!(%url, %serial, "LiveChess does not list this board (switched off, unplugged, or another serial number)");
                            }
                            if !deliver(&senders, readings).await {
                                return;
                            }
                        }
                        Err(e) => tracing::warn!(%url, error = %e, "a LiveChess message not taken"),
                    },
                    Ok(Some(Ok(Message::Close(_)))) => break "LiveChess closed the socket".to_owned(),
                    Ok(Some(Ok(_))) => {} // pings are answered by the socket itself
                },
                _ = list.tick() => {
                    sent = write.send(Message::text(session.list_call())).await.is_ok();
                }
            }
        };
        tracing::warn!(%url, %why, "the LiveChess socket is down; connecting again");
        if !deliver(&senders, session.closed(now())).await {
            return;
        }
        tokio::time::sleep(backoff.next_wait()).await;
    }
}
