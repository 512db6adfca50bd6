//! A recorded DGT byte stream, played back as a node's readings.
//!
//! The format is the one the recordings in `shared/data/real/dgt/dgtdriver/` use: one serial
//! read per line, Base64-encoded, in order. Reads carry no timestamps, so the time is read off
//! the clock itself: a running clock sends a message each time its display changes, and each
//! second a face loses is a second of game time. Board changes between two clock messages
//! take the time of the earlier one.

use base64::Engine;
use thiserror::Error;

use super::wire::{Decoder, WireError};
use crate::eboard::message::{ClockStatus, Message};
use crate::eboard::{Adapter, ClockSide};
use crate::source::Timed;

#[derive(Debug, Error)]
pub enum RecordingError {
    /// A line that is not Base64.
    #[error("line {line}: not Base64: {source}")]
    Base64 {
        line: usize,
        source: base64::DecodeError,
    },
}

/// Every message of a recording, in order, with the ones the decoder refused.
pub fn messages(text: &str) -> Result<Vec<Result<Message, WireError>>, RecordingError> {
    let mut decoder = Decoder::default();
    let mut messages = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(line)
            .map_err(|source| RecordingError::Base64 {
                line: i + 1,
                source,
            })?;
        decoder.push(&bytes);
        messages.extend(std::iter::from_fn(|| decoder.next_message()));
    }
    Ok(messages)
}

/// The readings a node would make of `messages`, stamped in game time read off the clock.
/// Messages the decoder refused are left out, as a live node leaves them out.
pub fn readings(
    messages: &[Result<Message, WireError>],
    white_clock: Option<ClockSide>,
) -> Vec<Timed> {
    let mut adapter = Adapter::new(white_clock);
    timed_messages(messages)
        .into_iter()
        .filter_map(|(game_ms, message)| Some(Timed::at(game_ms, adapter.message(&message)?)))
        .collect()
}

/// The decoded messages, each with the game time (ms) at which the board sent it, read off
/// the clock as [`readings`] reads it: the pace at which an emulated board replays them.
pub fn timed_messages(messages: &[Result<Message, WireError>]) -> Vec<(u64, Message)> {
    let mut game_ms = 0;
    let mut last_clock: Option<ClockStatus> = None;
    let mut timed = Vec::new();
    for message in messages.iter().flatten() {
        if let Message::Clock(status) = message {
            if let Some(last) = last_clock {
                game_ms += seconds_lost(&last, status) * 1000;
            }
            last_clock = Some(*status);
        }
        timed.push((game_ms, message.clone()));
    }
    timed
}

/// The whole seconds a face lost between two clock messages (an increment at a press adds,
/// it does not count).
fn seconds_lost(before: &ClockStatus, after: &ClockStatus) -> u64 {
    let lost = |b: u32, a: u32| u64::from(b.saturating_sub(a) / 1000);
    lost(before.left.ms, after.left.ms).max(lost(before.right.ms, after.right.ms))
}
