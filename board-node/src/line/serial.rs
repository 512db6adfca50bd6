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
use tokio::sync::mpsc::Receiver;

use super::{Line, LineSession};
use crate::dgt::bus::master::{Chain, ChainOut};
use crate::eboard::Orientation;
use crate::source::Reading;

/// How long one wait for the line lasts at most, besides the line's own read timeout.
const READ_TIMEOUT: Duration = Duration::from_millis(100);
/// Readings a board's channel holds before its serial thread waits for the node.
const READINGS_BACKLOG: usize = 1_024;

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

/// Reads `line` on the port until `stop` is set or `deliver` says nobody listens any more;
/// `kept` is called after every turn (to keep what the line decided, an orientation).
/// Blocking: run it on a thread of its own ([`spawn`], [`spawn_chain`]).
pub fn read_line<L: Line>(
    board: &SerialBoard,
    mut line: L,
    mut deliver: impl FnMut(Vec<L::Out>) -> bool,
    mut kept: impl FnMut(&L),
    stop: &AtomicBool,
) {
    let path = board.path.display().to_string();
    let seed = board.path.as_os_str().len() as u64 ^ now().0;
    let mut backoff = Backoff::new(board.reopen_min, board.reopen_max, seed);
    let mut reported_gone = false;
    while !stop.load(Ordering::Relaxed) {
        let mut port = match open(&board.path, &line) {
            Ok(port) => port,
            Err(e) => {
                if !reported_gone {
                    tracing::warn!(port = %path, error = %e, "the board's serial port cannot be opened; trying again");
                    reported_gone = true;
                }
                if !deliver(line.open_failed(now())) {
                    return;
                }
                sleep_unless_stopped(backoff.next_wait(), stop);
                continue;
            }
        };
        tracing::info!(port = %path, "the board's serial port is open");
        reported_gone = false;
        backoff.reset();
        let (commands, health) = line.opened(now());
        if !deliver(health) {
            return;
        }
        if let Err(e) = port.write_all(&commands) {
            tracing::warn!(port = %path, error = %e, "writing to the board failed");
            if !deliver(line.closed(now())) {
                return;
            }
            continue;
        }
        let mut buffer = [0u8; 512];
        while !stop.load(Ordering::Relaxed) {
            let (commands, batch) = match port.read(&mut buffer) {
                Ok(0) => {
                    if !deliver(line.closed(now())) {
                        return;
                    }
                    break;
                }
                Ok(n) => line.read(&buffer[..n], now()),
                Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::Interrupted => {
                    line.quiet(now())
                }
                Err(e) => {
                    tracing::warn!(port = %path, error = %e, "the board's serial line failed");
                    let batch = line.closed(now());
                    if !deliver(batch) {
                        return;
                    }
                    break;
                }
            };
            if !commands.is_empty() {
                // A failed write is noticed by the silence that follows.
                let _ = port.write_all(&commands);
            }
            if !deliver(batch) {
                return;
            }
            kept(&line);
        }
    }
}

/// Keeps `orientation` in `file` when it changed from `kept`.
pub(crate) fn keep_if_changed(file: &Path, kept: &mut Orientation, orientation: Orientation) {
    if orientation != *kept {
        *kept = orientation;
        if let Err(e) = keep_orientation(file, kept) {
            tracing::warn!(file = %file.display(), error = %e, "the board's orientation could not be kept");
        }
    }
}

fn open(path: &Path, line: &impl Line) -> serialport::Result<serialport::TTYPort> {
    let timeout = line.read_timeout();
    let line = line.settings();
    let port = serialport::new(path.to_string_lossy(), line.baud)
        .data_bits(line.data_bits)
        .parity(line.parity)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(timeout)
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

/// Reads one board on a port of its own, on a thread of its own; the readings come on the
/// returned channel, which closes once `stop` is set.
pub fn spawn<S: LineSession>(
    board: SerialBoard,
    session: S,
    stop: Arc<AtomicBool>,
) -> std::io::Result<Receiver<Reading>> {
    // A few seconds of a busy board: a node that cannot keep up makes the thread wait, and
    // the serial driver's buffer holds the bytes meanwhile.
    let (sender, receiver) = tokio::sync::mpsc::channel(READINGS_BACKLOG);
    std::thread::Builder::new()
        .name(format!("board {}", board.path.display()))
        .spawn(move || {
            let deliver =
                |batch: Vec<Reading>| batch.into_iter().all(|r| sender.blocking_send(r).is_ok());
            let mut kept_now = session.orientation();
            let file = board.orientation_file.clone();
            let kept = |session: &S| {
                if let Some(file) = &file {
                    keep_if_changed(file, &mut kept_now, session.orientation());
                }
            };
            read_line(&board, session, deliver, kept, &stop)
        })?;
    Ok(receiver)
}

/// Reads a chain of boards on one port, on a thread of its own: each board's readings on
/// its own channel (in the chain's slot order), each board's orientation kept in its file.
/// The boards found on the chain that nobody enrolled are reported by the chain's first
/// board, every one found so far, for the technician.
pub fn spawn_chain(
    port: SerialBoard,
    chain: Chain,
    orientation_files: Vec<PathBuf>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<Vec<Receiver<Reading>>> {
    let (senders, receivers): (Vec<_>, Vec<_>) = orientation_files
        .iter()
        .map(|_| tokio::sync::mpsc::channel(READINGS_BACKLOG))
        .unzip();
    let chain_name = port.path.display().to_string();
    std::thread::Builder::new()
        .name(format!("chain {chain_name}"))
        .spawn(move || {
            let mut strangers: Vec<u16> = Vec::new();
            let deliver = |batch: Vec<ChainOut>| {
                batch.into_iter().all(|out| {
                    let (slot, reading) = match out {
                        ChainOut::Board(slot, reading) => (slot, reading),
                        ChainOut::Stranger(address) => {
                            tracing::warn!(chain = %chain_name, board = %address, "a board on the chain that nobody enrolled: enrol it, or take it off the chain");
                            if strangers.len() < protocol::UplinkBody::MAX_STRANGERS {
                                strangers.push(address.get());
                            }
                            (0, Reading::Strangers(strangers.clone()))
                        }
                    };
                    senders
                        .get(slot)
                        .is_some_and(|s| s.blocking_send(reading).is_ok())
                })
            };
            let mut kept_now = chain.orientations();
            let kept = |chain: &Chain| {
                for ((file, kept), orientation) in orientation_files
                    .iter()
                    .zip(kept_now.iter_mut())
                    .zip(chain.orientations())
                {
                    keep_if_changed(file, kept, orientation);
                }
            };
            read_line(&port, chain, deliver, kept, &stop)
        })?;
    Ok(receivers)
}
