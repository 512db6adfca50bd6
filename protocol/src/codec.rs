//! postcard encoding of [`Uplink`] and [`Downlink`].
//!
//! Decoding reads the version first, so a message of an unknown version is reported as such
//! rather than as garbage, and it rejects trailing bytes, so a truncated or padded message is
//! never mistaken for a good one.

use alloc::vec::Vec;
use core::fmt;

use serde::de::DeserializeOwned;

use crate::{Downlink, Uplink, PROTOCOL_VERSION};

/// Why bytes are not a message of this protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The message starts with a version this build does not speak.
    UnknownVersion(u16),
    /// The bytes are not a well-formed message (truncated, bad tag, bad piece code).
    Malformed,
    /// A well-formed message followed by this many extra bytes.
    TrailingBytes(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownVersion(v) => {
                write!(f, "protocol version {v}, expected {PROTOCOL_VERSION}")
            }
            DecodeError::Malformed => f.write_str("malformed message"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} bytes after the message"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

pub fn encode_uplink(message: &Uplink) -> Vec<u8> {
    // Serializing these types into a Vec cannot fail: no maps, no unsized sequences.
    postcard::to_allocvec(message).expect("uplink encodes")
}

pub fn encode_downlink(message: &Downlink) -> Vec<u8> {
    postcard::to_allocvec(message).expect("downlink encodes")
}

pub fn decode_uplink(bytes: &[u8]) -> Result<Uplink, DecodeError> {
    decode(bytes)
}

pub fn decode_downlink(bytes: &[u8]) -> Result<Downlink, DecodeError> {
    decode(bytes)
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    let (version, _) =
        postcard::take_from_bytes::<u16>(bytes).map_err(|_| DecodeError::Malformed)?;
    if version != PROTOCOL_VERSION {
        return Err(DecodeError::UnknownVersion(version));
    }
    let (message, rest) = postcard::take_from_bytes(bytes).map_err(|_| DecodeError::Malformed)?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes(rest.len()));
    }
    Ok(message)
}
