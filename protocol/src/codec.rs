//! postcard encoding of [`Uplink`] and [`Downlink`].
//!
//! Decoding reads the version first, so a message of an unknown version is reported as such
//! rather than as garbage, and it rejects trailing bytes, so a truncated or padded message is
//! never mistaken for a good one.

use alloc::vec::Vec;
use core::fmt;

use serde::de::DeserializeOwned;

use crate::{
    BoardNo, Downlink, DownlinkBody, Hello, NodeMs, Seq, Uplink, UplinkBody, PROTOCOL_VERSION,
};

/// Why bytes are not a message of this protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The message starts with a version this build does not speak.
    UnknownVersion(u16),
    /// The bytes are not a well-formed message (truncated, bad tag, bad piece code).
    Malformed,
    /// A well-formed message followed by this many extra bytes.
    TrailingBytes(usize),
    /// A well-formed message with a number or text beyond the protocol's bounds
    /// ([`BoardNo::MAX`], [`Seq::LIMIT`], [`NodeMs::LIMIT`], [`Hello::MAX_TEXT`]): named here.
    OutOfRange(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownVersion(v) => {
                write!(f, "protocol version {v}, expected {PROTOCOL_VERSION}")
            }
            DecodeError::Malformed => f.write_str("malformed message"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} bytes after the message"),
            DecodeError::OutOfRange(what) => write!(f, "{what} out of range"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// Room for a message on the stack: every uplink a board sends in play fits (a placement
/// takes about 40 bytes), and every downlink (a few bytes each).
const MESSAGE_ON_STACK: usize = 256;

pub fn encode_uplink(message: &Uplink) -> Vec<u8> {
    with_encoded_uplink(message, <[u8]>::to_vec)
}

/// `f` given `message`'s bytes as [`encode_uplink`] makes them, encoded on the stack when
/// they fit (a larger message into a growing Vec): postcard's growing Vec reallocates four or
/// five times for a placement, on the hub's path of every event.
pub fn with_encoded_uplink<R>(message: &Uplink, f: impl FnOnce(&[u8]) -> R) -> R {
    let mut buf = [0u8; MESSAGE_ON_STACK];
    match postcard::to_slice(message, &mut buf) {
        Ok(bytes) => f(bytes),
        // Serializing these types into a Vec cannot fail: no maps, no unsized sequences.
        Err(_) => f(&postcard::to_allocvec(message).expect("uplink encodes")),
    }
}

/// A downlink's bytes.
pub fn encode_downlink(message: &Downlink) -> Vec<u8> {
    encode_downlink_with_room(message, 0)
}

/// A downlink's bytes, in a Vec with room for `room` more bytes after them (the seal's
/// tag). Encoded on the stack when they fit: postcard's growing Vec reallocated three times
/// for an Ack and the tag a fourth, on the hub's path of every acknowledgement.
pub fn encode_downlink_with_room(message: &Downlink, room: usize) -> Vec<u8> {
    let mut buf = [0u8; MESSAGE_ON_STACK];
    match postcard::to_slice(message, &mut buf) {
        Ok(bytes) => {
            let mut encoded = Vec::with_capacity(bytes.len() + room);
            encoded.extend_from_slice(bytes);
            encoded
        }
        Err(_) => postcard::to_allocvec(message).expect("downlink encodes"),
    }
}

/// Decodes an uplink and holds it to the protocol's bounds, so that nothing a node (or a
/// stranger) sends can overflow the receiver's arithmetic or fill its memory.
pub fn decode_uplink(bytes: &[u8]) -> Result<Uplink, DecodeError> {
    let message: Uplink = decode(bytes)?;
    if message.board.0 == 0 || message.board > BoardNo::MAX {
        return Err(DecodeError::OutOfRange("board number"));
    }
    if message.seq >= Seq::LIMIT {
        return Err(DecodeError::OutOfRange("sequence number"));
    }
    if message.node_ms >= NodeMs::LIMIT {
        return Err(DecodeError::OutOfRange("node time"));
    }
    if let UplinkBody::Hello(hello) = &message.body {
        let texts = [&hello.software, &hello.board_hw, &hello.clock_hw];
        if texts.iter().any(|t| t.len() > Hello::MAX_TEXT) {
            return Err(DecodeError::OutOfRange("hello text"));
        }
        if hello.highest_seq >= Seq::LIMIT {
            return Err(DecodeError::OutOfRange("sequence number"));
        }
    }
    if let UplinkBody::Health(health) = &message.body {
        if health.since >= NodeMs::LIMIT {
            return Err(DecodeError::OutOfRange("node time"));
        }
    }
    if let UplinkBody::Strangers(addresses) = &message.body {
        if addresses.len() > UplinkBody::MAX_STRANGERS || addresses.iter().any(|a| *a >= 1 << 14) {
            return Err(DecodeError::OutOfRange("strangers"));
        }
    }
    if let UplinkBody::Pace { node_ms_per_s } = message.body {
        if node_ms_per_s == 0 || node_ms_per_s > UplinkBody::MAX_PACE {
            return Err(DecodeError::OutOfRange("pace"));
        }
    }
    Ok(message)
}

/// Decodes a downlink and holds its sequence number to [`Seq::LIMIT`].
pub fn decode_downlink(bytes: &[u8]) -> Result<Downlink, DecodeError> {
    let message: Downlink = decode(bytes)?;
    if message.board.0 == 0 || message.board > BoardNo::MAX {
        return Err(DecodeError::OutOfRange("board number"));
    }
    let (DownlinkBody::Ack { up_to_seq: seq }
    | DownlinkBody::ResendFrom { seq }
    | DownlinkBody::ContinueAt { seq }) = message.body;
    if seq >= Seq::LIMIT {
        return Err(DecodeError::OutOfRange("sequence number"));
    }
    Ok(message)
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    let (version, _) =
        postcard::take_from_bytes::<u16>(bytes).map_err(|_| DecodeError::Malformed)?;
    if !(crate::envelope::OLDEST_READ_VERSION..=PROTOCOL_VERSION).contains(&version) {
        return Err(DecodeError::UnknownVersion(version));
    }
    let (message, rest) = postcard::take_from_bytes(bytes).map_err(|_| DecodeError::Malformed)?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes(rest.len()));
    }
    Ok(message)
}
