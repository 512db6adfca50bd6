//! What an emulated board plays (a PGN game or a recorded DGT stream) and how it misbehaves:
//! the flags `emulate-dgt` and `emulate-chesslink` share, read into the emulator's timeline.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use protocol::time_control::TimeControl;

use crate::eboard::emulator::pty;
use crate::eboard::emulator::timeline::{self, Moment};
use crate::{dgt, pgn, replay};

/// What an emulated board plays, and how it misbehaves.
#[derive(clap::Args)]
pub struct EmulateArgs {
    /// The PGN file to play.
    #[arg(
        long,
        conflicts_with = "recording",
        required_unless_present = "recording"
    )]
    pub pgn: Option<PathBuf>,
    /// Which game of the file, counting from 1.
    #[arg(long, default_value_t = 1)]
    pub game: usize,
    /// The game's real time control when its `TimeControl` tag is missing or wrong.
    #[arg(long, value_parser = TimeControl::parse_any)]
    pub time_control: Option<TimeControl>,
    /// A recorded DGT stream (Base64 lines, as in data/real/dgt/dgtdriver) to play at the
    /// pace of its clock.
    #[arg(long)]
    pub recording: Option<PathBuf>,
    /// Game time runs this many times faster than real time.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Where to put the symlink to the emulated board's device.
    #[arg(long)]
    pub link: PathBuf,
    /// Unplug the board after this many clock presses ...
    #[arg(long)]
    pub unplug_at_ply: Option<usize>,
    /// ... for this long (real ms), then plug it back in under another device name.
    #[arg(long, default_value_t = 3_000)]
    pub unplug_ms: u64,
    /// Switch the clock off after this many presses ...
    #[arg(long)]
    pub clock_off_at_ply: Option<usize>,
    /// ... for this long (real ms).
    #[arg(long, default_value_t = 3_000)]
    pub clock_off_ms: u64,
    /// Line noise before every N-th message.
    #[arg(long)]
    pub noise_every: Option<usize>,
    /// Stall the line after this many clock presses (nothing passes either way) ...
    #[arg(long)]
    pub stall_at_ply: Option<usize>,
    /// ... for this long (real ms), then let what was held back through ...
    #[arg(long, default_value_t = 4_000)]
    pub stall_ms: u64,
    /// ... or lose it (the line dropped the bytes).
    #[arg(long)]
    pub stall_drops: bool,
    /// The clock warns that its battery is low from this many presses on.
    #[arg(long)]
    pub battery_low_at_ply: Option<usize>,
}

impl EmulateArgs {
    /// What happens on the board, and how the emulation misbehaves; `stand_ms`: a board
    /// without a clock, each move left standing that long.
    pub fn play(self, stand_ms: Option<u64>) -> anyhow::Result<(Vec<Moment>, pty::Emulation)> {
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
                let messages = dgt::recording::messages(&text)
                    .with_context(|| format!("in {}", path.display()))?;
                timeline::from_recording(dgt::recording::timed_messages(&messages))
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
            battery_low_at_ply: self.battery_low_at_ply,
        };
        Ok((moments, emulation))
    }
}
