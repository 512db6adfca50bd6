//! The live edge of an e-board: its serial port (USB, RS-232 or Bluetooth), set up as its
//! protocol's [`LineSession`] says, read on a thread of its own, each read handed to the
//! session and its readings sent to the node.
//!
//! A port that goes (a cable pulled, a board switched off) is opened again with jittered
//! backoff, by its path: a udev symlink (`deploy/udev/`) finds the board under whatever
//! device name it comes back as.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use link::backoff::Backoff;
use protocol::NodeMs;
use serialport::SerialPort;
use tokio::sync::mpsc::Sender;

use super::LineSession;
use crate::eboard::Orientation;
use crate::source::Reading;

/// How long one read waits: also how soon a stop is noticed.
const READ_TIMEOUT: Duration = Duration::from_millis(100);

/// One board's serial line.
#[derive(Debug, Clone)]
pub struct SerialBoard {
    pub path: PathBuf,
    /// Where the board's orientation is kept once decided ([`Orientation`]), so that a
    /// node restarted mid-game does not decide it again from the game in play.
    pub orientation_file: Option<PathBuf>,
    /// Backoff between attempts to open a port that is gone.
    pub reopen_min: Duration,
    pub reopen_max: Duration,
}

impl SerialBoard {
    pub fn new(path: PathBuf) -> SerialBoard {
        SerialBoard {
            path,
            orientation_file: None,
            reopen_min: Duration::from_millis(200),
            reopen_max: Duration::from_secs(1),
        }
    }
}

/// The node's wall clock, as the node stamps the readings it is sent.
fn now() -> NodeMs {
    NodeMs(crate::node::unix_ms())
}

/// Reads the board until `stop` is set or the node stops listening. Blocking: run it on a
/// thread of its own ([`spawn`]).
pub fn read_board<S: LineSession>(
    board: &SerialBoard,
    mut session: S,
    readings: &Sender<Reading>,
    stop: &AtomicBool,
) {
    let path = board.path.display().to_string();
    let seed = board.path.as_os_str().len() as u64 ^ now().0;
    let mut backoff = Backoff::new(board.reopen_min, board.reopen_max, seed);
    let send = |batch: Vec<Reading>| batch.into_iter().all(|r| readings.blocking_send(r).is_ok());
    let mut reported_gone = false;
    let mut kept = session.orientation();
    while !stop.load(Ordering::Relaxed) {
        let mut port = match open(&board.path, &session) {
            Ok(port) => port,
            Err(e) => {
                if !reported_gone {
                    tracing::warn!(port = %path, error = %e, "the board's serial port cannot be opened; trying again");
                    reported_gone = true;
                }
                if !send(session.open_failed(now())) {
                    return;
                }
                sleep_unless_stopped(backoff.next_wait(), stop);
                continue;
            }
        };
        tracing::info!(port = %path, "the board's serial port is open");
        reported_gone = false;
        backoff.reset();
        let (commands, health) = session.opened(now());
        if !send(health) {
            return;
        }
        if let Err(e) = port.write_all(&commands) {
            tracing::warn!(port = %path, error = %e, "writing to the board failed");
            if !send(session.closed(now())) {
                return;
            }
            continue;
        }
        let mut buffer = [0u8; 512];
        while !stop.load(Ordering::Relaxed) {
            let batch = match port.read(&mut buffer) {
                Ok(0) => {
                    if !send(session.closed(now())) {
                        return;
                    }
                    break;
                }
                Ok(n) => {
                    let batch = session.read(&buffer[..n], now());
                    let commands = session.to_send();
                    if !commands.is_empty() {
                        // A failed write is noticed by the silence that follows.
                        let _ = port.write_all(&commands);
                    }
                    batch
                }
                Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::Interrupted => {
                    let (probe, health) = session.idle(now());
                    if let Some(commands) = probe {
                        // A failed probe is noticed by the silence that follows.
                        let _ = port.write_all(&commands);
                    }
                    health
                }
                Err(e) => {
                    tracing::warn!(port = %path, error = %e, "the board's serial line failed");
                    let batch = session.closed(now());
                    if !send(batch) {
                        return;
                    }
                    break;
                }
            };
            if !send(batch) {
                return;
            }
            let orientation = session.orientation();
            if orientation != kept {
                kept = orientation;
                if let Some(file) = &board.orientation_file {
                    if let Err(e) = keep_orientation(file, &kept) {
                        tracing::warn!(file = %file.display(), error = %e, "the board's orientation could not be kept");
                    }
                }
            }
        }
    }
}

fn open(path: &Path, session: &impl LineSession) -> serialport::Result<serialport::TTYPort> {
    let line = session.settings();
    let port = serialport::new(path.to_string_lossy(), line.baud)
        .data_bits(line.data_bits)
        .parity(line.parity)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(READ_TIMEOUT)
        .open_native()?;
    // Whatever the line held before we came (a board in update mode talking to nobody) is
    // not news: the dump we ask for is.
    port.clear(serialport::ClearBuffer::Input)?;
    Ok(port)
}

/// The orientation kept in `file` by an earlier run; the default (undecided) if none.
pub fn kept_orientation(file: &Path) -> Orientation {
    std::fs::read(file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn keep_orientation(file: &Path, orientation: &Orientation) -> std::io::Result<()> {
    let temporary = file.with_extension("tmp");
    std::fs::write(&temporary, serde_json::to_vec(orientation)?)?;
    std::fs::rename(&temporary, file)
}

fn sleep_unless_stopped(wait: Duration, stop: &AtomicBool) {
    let until = std::time::Instant::now() + wait;
    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < until {
        std::thread::sleep(READ_TIMEOUT.min(until - std::time::Instant::now()));
    }
}

/// Reads `board` on a thread of its own; the readings come on the returned channel, which
/// closes once `stop` is set.
pub fn spawn<S: LineSession>(
    board: SerialBoard,
    session: S,
    stop: Arc<AtomicBool>,
) -> std::io::Result<tokio::sync::mpsc::Receiver<Reading>> {
    // A few seconds of a busy board: a node that cannot keep up makes the thread wait, and
    // the serial driver's buffer holds the bytes meanwhile.
    let (sender, receiver) = tokio::sync::mpsc::channel(1_024);
    std::thread::Builder::new()
        .name(format!("board {}", board.path.display()))
        .spawn(move || read_board(&board, session, &sender, &stop))?;
    Ok(receiver)
}
