//! The emulator's edge: a pseudo-terminal pair whose device a symlink names, so that a node
//! opens it as it opens a board's serial port (the symlink stands for the udev rule a hall
//! uses). The game plays at its pace whether or not a node listens; unplugging closes the
//! device and plugs a new one in under another name, as a USB adapter comes back; a stall
//! holds the line's bytes back, both ways, and lets them through late and in order.

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serialport::{SerialPort, TTYPort};

use super::timeline::Moment;
use super::EmulatedDevice;
use crate::eboard::message::{ClockStatus, Message};

/// How the emulated board misbehaves, and how fast its game goes.
#[derive(Debug, Clone)]
pub struct Emulation {
    /// Where the symlink to the device goes.
    pub link: PathBuf,
    /// Game time runs this many times faster than real time.
    pub speed: f64,
    /// After this many presses, the board is unplugged for `unplug` (real time).
    pub unplug_at_ply: Option<usize>,
    pub unplug: Duration,
    /// After this many presses, the clock is switched off for `clock_off` (real time).
    pub clock_off_at_ply: Option<usize>,
    pub clock_off: Duration,
    /// Before every n-th message, a burst of line noise and a broken header.
    pub noise_every: Option<usize>,
    /// After this many presses, the line stalls for `stall` (real time): nothing passes
    /// either way, then what was held back arrives at once.
    pub stall_at_ply: Option<usize>,
    pub stall: Duration,
    /// A stall loses what the board sent meanwhile instead of holding it back.
    pub stall_drops: bool,
    /// From this many presses on, the clock warns that its battery is low.
    pub battery_low_at_ply: Option<usize>,
}

/// What the emulation did, printed as its line on stdout when the game is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Played {
    pub moments: usize,
    pub plies: usize,
    pub unplugged: usize,
    pub noise_bursts: usize,
    pub stalls: usize,
    /// Times the clock was switched off (`--clock-off-at-ply`).
    pub clock_offs: usize,
}

/// A plugged-in device: our end, and its other end held open so that our end stays usable
/// while no node has it open.
pub(crate) struct Device {
    pub(crate) ours: TTYPort,
    _theirs: TTYPort,
}

/// Bytes the board sent while its line stalled, and until when it stalls.
struct Stall {
    until: Instant,
    held: Vec<u8>,
}

impl Device {
    pub(crate) fn plug(link: &Path) -> anyhow::Result<Device> {
        let (mut ours, theirs) = TTYPort::pair().context("opening a pseudo-terminal")?;
        ours.set_timeout(Duration::from_millis(5))?;
        let name = theirs.name().context("the pseudo-terminal has no name")?;
        // Replace the link in one step: a node never sees it half made.
        let temporary = link.with_extension("plugging");
        let _ = std::fs::remove_file(&temporary);
        std::os::unix::fs::symlink(&name, &temporary)
            .with_context(|| format!("linking {} to {name}", temporary.display()))?;
        std::fs::rename(&temporary, link)
            .with_context(|| format!("moving the link to {}", link.display()))?;
        tracing::info!(device = %name, link = %link.display(), "board plugged in");
        Ok(Device {
            ours,
            _theirs: theirs,
        })
    }

    /// Writes what the board sends; a node that does not read loses it, as on a real line.
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Err(e) = self.ours.write_all(bytes) {
            tracing::debug!(error = %e, "nobody reads the board: bytes lost");
        }
    }
}

/// Plays `moments` on an emulated board until they are over, then goes on answering the
/// node until `stop` is set. The game starts when a node first puts the board in update
/// mode, as a round starts once the boards are read; from then on it goes on at its pace,
/// whether a node listens or not.
pub fn run(
    mut board: impl EmulatedDevice,
    moments: &[Moment],
    emulation: &Emulation,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut device = Some(Device::plug(&emulation.link)?);
    let speed = if emulation.speed > 0.0 {
        emulation.speed
    } else {
        1.0
    };
    let mut start: Option<Instant> = None;
    let due = |start: Instant, game_ms: u64| {
        start + Duration::from_secs_f64(game_ms as f64 / 1000.0 / speed)
    };
    let mut next = 0;
    let mut plugged_again_at: Option<Instant> = None;
    let mut clock_on_at: Option<Instant> = None;
    let mut played = Played {
        moments: moments.len(),
        plies: 0,
        unplugged: 0,
        noise_bursts: 0,
        stalls: 0,
        clock_offs: 0,
    };
    let mut stall: Option<Stall> = None;
    let mut reported = false;
    let mut commands = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        if stall.as_ref().is_some_and(|s| Instant::now() >= s.until) {
            let held = stall.take().map(|s| s.held).unwrap_or_default();
            tracing::info!(
                bytes = held.len(),
                lost = emulation.stall_drops,
                "the line moves again"
            );
            if let Some(device) = device.as_mut().filter(|_| !emulation.stall_drops) {
                device.send(&held);
            }
        }
        // The node's commands, answered at once (a stalled line passes nothing: they wait
        // in the line's buffer).
        if let Some(device) = device.as_mut().filter(|_| stall.is_none()) {
            match device.ours.read(&mut commands) {
                Ok(n) => {
                    let answer = board.commands(&commands[..n]);
                    device.send(&answer);
                }
                Err(e) if e.kind() == ErrorKind::TimedOut => {}
                Err(e) => tracing::debug!(error = %e, "reading the node's commands"),
            }
        } else {
            std::thread::sleep(Duration::from_millis(5));
        }
        let now = Instant::now();
        if plugged_again_at.is_some_and(|at| now >= at) {
            plugged_again_at = None;
            device = Some(Device::plug(&emulation.link)?);
        }
        if clock_on_at.is_some_and(|at| now >= at) {
            clock_on_at = None;
            let bytes = board.switch_clock(true);
            if let Some(device) = device.as_mut() {
                device.send(&bytes);
            }
        }
        if start.is_none() && board.reporting() {
            start = Some(now);
        }
        while let Some(moment) = moments
            .get(next)
            .filter(|m| start.is_some_and(|start| due(start, m.game_ms) <= now))
        {
            next += 1;
            if moment.ply > played.plies {
                played.plies = moment.ply;
                if emulation.unplug_at_ply == Some(moment.ply) && device.is_some() {
                    tracing::info!(ply = moment.ply, "board unplugged");
                    device = None;
                    let _ = std::fs::remove_file(&emulation.link);
                    board.unplugged();
                    played.unplugged += 1;
                    plugged_again_at = Some(now + emulation.unplug);
                }
                if emulation.stall_at_ply == Some(moment.ply) && stall.is_none() {
                    tracing::info!(ply = moment.ply, "the line stalls");
                    stall = Some(Stall {
                        until: now + emulation.stall,
                        held: Vec::new(),
                    });
                    played.stalls += 1;
                }
                if emulation.clock_off_at_ply == Some(moment.ply) {
                    tracing::info!(ply = moment.ply, "clock switched off");
                    let bytes = board.switch_clock(false);
                    if let Some(device) = device.as_mut() {
                        device.send(&bytes);
                    }
                    clock_on_at = Some(now + emulation.clock_off);
                    played.clock_offs += 1;
                }
            }
            let bytes = match &moment.message {
                Message::Clock(status)
                    if emulation
                        .battery_low_at_ply
                        .is_some_and(|ply| moment.ply >= ply) =>
                {
                    board.happen(&Message::Clock(ClockStatus {
                        battery_low: true,
                        ..*status
                    }))
                }
                message => board.happen(message),
            };
            if let Some(stall) = stall.as_mut() {
                stall.held.extend_from_slice(&bytes);
                continue;
            }
            let Some(device) = device.as_mut() else {
                continue;
            };
            if emulation
                .noise_every
                .is_some_and(|n| n > 0 && next % n == 0)
                && !bytes.is_empty()
            {
                // Seven-bit garbage and a header whose length is impossible: the decoder
                // skips both, and the message after them arrives whole.
                device.send(&[0x13, 0x37, 0x00, 0x55, 0x8e, 0x00, 0x01, 0x7f]);
                played.noise_bursts += 1;
            }
            device.send(&bytes);
        }
        if next == moments.len() && !reported {
            reported = true;
            println!("{}", serde_json::to_string(&played)?);
        }
    }
    let _ = std::fs::remove_file(&emulation.link);
    Ok(())
}
