//! Message authentication: every uplink and downlink on the wire is the message followed by
//! a tag, the first [`TAG_LEN`] bytes of HMAC-SHA-256 under the node's key over the event id,
//! the direction and the message's bytes (as LoRaWAN authenticates each frame with its
//! device's key). The sequence number inside the message is the replay counter: a replayed
//! uplink is a duplicate the hub already has, and a forged one fails its tag.
//!
//! Protocol 3 binds each downlink to the node's boot ([`Boot`]): every uplink frame carries
//! the boot the node drew when it started, and the tag of a downlink covers the boot of the
//! node it is for, so a downlink sealed for one boot fails in another (a recorded `Ack` or
//! `ContinueAt` played to a rebooted node).
//!
//! ```text
//! uplink   = encode(message) ‖ boot ‖ tag(encode(message) ‖ boot)
//! downlink = encode(message) ‖ tag(encode(message) ‖ boot of the node it is for)
//! tag(m)   = HMAC-SHA-256(key, "zeitnot/up\0" or "zeitnot/down\0" ‖ event ‖ "\0" ‖ m)[..16]
//! boot     = 8 bytes, big-endian
//! ```
//!
//! A node without a key (a hall the organiser opened, [`NodeKey`] absent) sends a tag of
//! zeros; only a hub that accepts unauthenticated boards takes its events.
//!
//! ```
//! use protocol::seal::{self, NodeKey};
//! use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};
//!
//! let key = NodeKey::from_bytes([7; 32]);
//! let event = Uplink::new(BoardNo(12), Seq(1), NodeMs(1_700_000_000_000), UplinkBody::Heartbeat);
//! let frame = seal::seal_uplink(Some(&key), "open-2026", seal::Boot(42), &event);
//! let sealed = seal::open_uplink(&frame).unwrap();
//! assert!(sealed.verify(&key, "open-2026"));
//! assert_eq!(sealed.boot, seal::Boot(42));
//! assert!(!sealed.verify(&key, "another-event"));
//! assert_eq!(sealed.message, event);
//! ```

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::codec::{self, DecodeError};
use crate::{Downlink, Uplink};

/// Bytes of the tag after each message: 128 bits, as LoRaWAN's session MIC is 32 and TLS's
/// truncated HMACs 80; a forger's chance per try is 2^-128.
pub const TAG_LEN: usize = 16;

/// Bytes of a node key.
pub const KEY_LEN: usize = 32;

/// A node's boot: a number it draws at random each time it starts. Every uplink frame
/// carries it; a downlink's tag covers it, so only the boot it was sealed for takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Boot(pub u64);

impl Boot {
    /// No boot known (a hub that has not heard the node since it started).
    pub const NONE: Boot = Boot(0);
    /// Bytes of a boot on the wire.
    pub const LEN: usize = 8;

    fn bytes(self) -> [u8; Boot::LEN] {
        self.0.to_be_bytes()
    }
}

/// A node's secret: 32 random bytes the hub issues when it enrols the node, written as 64
/// lowercase hex digits in the node's key file.
#[derive(Clone)]
pub struct NodeKey {
    bytes: [u8; KEY_LEN],
    /// HMAC's keyed state, computed once: each tag then costs two compressions, not four.
    keyed: Hmac<Sha256>,
}

/// Why a key's text is not a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyError {
    /// Not 64 hex digits (surrounding white space is allowed).
    NotHex,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a node key is 64 hex digits")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for KeyError {}

impl NodeKey {
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> NodeKey {
        let keyed = Hmac::<Sha256>::new_from_slice(&bytes).expect("HMAC takes any key length");
        NodeKey { bytes, keyed }
    }

    /// Reads a key file's text: 64 hex digits, white space around them ignored.
    pub fn parse(text: &str) -> Result<NodeKey, KeyError> {
        let text = text.trim();
        if text.len() != 2 * KEY_LEN || !text.is_ascii() {
            return Err(KeyError::NotHex);
        }
        let mut bytes = [0u8; KEY_LEN];
        for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
            let digits = core::str::from_utf8(pair).map_err(|_| KeyError::NotHex)?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| KeyError::NotHex)?;
        }
        Ok(NodeKey::from_bytes(bytes))
    }

    /// The key as a key file holds it: 64 lowercase hex digits.
    pub fn to_text(&self) -> String {
        hex(&self.bytes)
    }

    pub fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.bytes
    }

    /// A value derived from the key for `purpose` (the MQTT password, say), as 32 hex
    /// digits: knowing it tells nothing about the key.
    pub fn derive(&self, purpose: &str) -> String {
        let mac = self
            .keyed
            .clone()
            .chain_update(b"zeitnot/derive\0")
            .chain_update(purpose);
        hex(&mac.finalize().into_bytes()[..16])
    }

    /// A key derived from this one for `purpose` (an arbiter's key from the hall's secret):
    /// the whole HMAC output, so it is as strong as this one.
    pub fn derive_key(&self, purpose: &str) -> NodeKey {
        let mac = self
            .keyed
            .clone()
            .chain_update(b"zeitnot/key\0")
            .chain_update(purpose);
        NodeKey::from_bytes(mac.finalize().into_bytes().into())
    }

    /// Whether `text` is what [`NodeKey::derive`] gives for `purpose`: compared in constant
    /// time.
    pub fn derives(&self, purpose: &str, text: &str) -> bool {
        same_secret(self.derive(purpose).as_bytes(), text.as_bytes())
    }

    fn tag(&self, direction: Direction, event: &str, message: &[u8]) -> Hmac<Sha256> {
        self.keyed
            .clone()
            .chain_update(direction.label())
            .chain_update(event.as_bytes())
            .chain_update([0])
            .chain_update(message)
    }
}

impl PartialEq for NodeKey {
    fn eq(&self, other: &NodeKey) -> bool {
        same_secret(&self.bytes, &other.bytes)
    }
}

/// Whether two secrets (keys, passwords, tokens) are equal, in a time that depends on their
/// length only, never on where they first differ: the one way every secret is compared.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

impl Eq for NodeKey {}

impl fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret itself: keys end up in logs through `{:?}`.
        f.write_str("NodeKey(…)")
    }
}

fn hex(bytes: &[u8]) -> String {
    use core::fmt::Write;
    let mut text = String::with_capacity(2 * bytes.len());
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

/// Which way a message travels: a tag made for one direction never verifies in the other,
/// so an uplink cannot be reflected as a downlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

impl Direction {
    fn label(self) -> &'static [u8] {
        match self {
            Direction::Up => b"zeitnot/up\0",
            Direction::Down => b"zeitnot/down\0",
        }
    }
}

/// A message off the wire with its tag, not yet verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed<T> {
    pub message: T,
    /// The boot the tag covers: an uplink's, as its frame carries it; a downlink's, the
    /// receiving node's own.
    pub boot: Boot,
    /// The message's bytes as they came, which the tag covers.
    signed: Vec<u8>,
    tag: [u8; TAG_LEN],
    direction: Direction,
}

impl<T> Sealed<T> {
    /// Whether `key` made the tag for `event` and the boot: compared in constant time.
    pub fn verify(&self, key: &NodeKey, event: &str) -> bool {
        key.tag(self.direction, event, &self.signed)
            .chain_update(self.boot.bytes())
            .verify_truncated_left(&self.tag)
            .is_ok()
    }

    /// A tag of zeros: the sender had no key.
    pub fn is_unkeyed(&self) -> bool {
        self.tag == [0; TAG_LEN]
    }
}

fn seal(
    key: Option<&NodeKey>,
    direction: Direction,
    event: &str,
    boot: Boot,
    mut bytes: Vec<u8>,
) -> Vec<u8> {
    let tag = key.map_or([0; TAG_LEN], |key| {
        let full = key
            .tag(direction, event, &bytes)
            .chain_update(boot.bytes())
            .finalize()
            .into_bytes();
        let mut tag = [0; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    });
    if direction == Direction::Up {
        bytes.extend_from_slice(&boot.bytes());
    }
    bytes.extend_from_slice(&tag);
    bytes
}

/// Splits a frame into the message's bytes and its tag.
fn split(frame: &[u8]) -> Result<(&[u8], [u8; TAG_LEN]), DecodeError> {
    let at = frame
        .len()
        .checked_sub(TAG_LEN)
        .ok_or(DecodeError::Malformed)?;
    let (message, tag) = frame.split_at(at);
    Ok((message, tag.try_into().expect("TAG_LEN bytes")))
}

/// An uplink as a node sends it in its `boot`: the message, the boot, and their tag under
/// `key` (zeros without one).
pub fn seal_uplink(key: Option<&NodeKey>, event: &str, boot: Boot, message: &Uplink) -> Vec<u8> {
    seal(
        key,
        Direction::Up,
        event,
        boot,
        codec::encode_uplink(message),
    )
}

/// An uplink's bytes as the node's outbox keeps them ([`codec::encode_uplink`]), sealed in
/// `boot`.
pub fn seal_uplink_bytes(
    key: Option<&NodeKey>,
    event: &str,
    boot: Boot,
    encoded: Vec<u8>,
) -> Vec<u8> {
    seal(key, Direction::Up, event, boot, encoded)
}

/// A downlink as the hub sends it to the node in `boot`: the message and its tag under the
/// node's key.
pub fn seal_downlink(
    key: Option<&NodeKey>,
    event: &str,
    boot: Boot,
    message: &Downlink,
) -> Vec<u8> {
    seal(
        key,
        Direction::Down,
        event,
        boot,
        codec::encode_downlink_with_room(message, TAG_LEN),
    )
}

/// Decodes an uplink frame (held to the protocol's bounds, see [`codec::decode_uplink`]);
/// the caller verifies its tag with the key of the node bound to the board. A frame of an
/// earlier protocol (no boot) is refused as [`DecodeError::UnknownVersion`].
pub fn open_uplink(frame: &[u8]) -> Result<Sealed<Uplink>, DecodeError> {
    let (bytes, tag) = split(frame)?;
    let version = bytes.first().copied().ok_or(DecodeError::Malformed)?;
    if u16::from(version) != crate::PROTOCOL_VERSION {
        return Err(DecodeError::UnknownVersion(version.into()));
    }
    let at = bytes
        .len()
        .checked_sub(Boot::LEN)
        .ok_or(DecodeError::Malformed)?;
    let (bytes, boot) = bytes.split_at(at);
    let boot = Boot(u64::from_be_bytes(
        boot.try_into().expect("Boot::LEN bytes"),
    ));
    Ok(Sealed {
        message: codec::decode_uplink(bytes)?,
        boot,
        signed: bytes.to_vec(),
        tag,
        direction: Direction::Up,
    })
}

/// Decodes a downlink frame for the node in `boot`; the node verifies its tag with its own
/// key, and a downlink sealed for another boot fails.
pub fn open_downlink(frame: &[u8], boot: Boot) -> Result<Sealed<Downlink>, DecodeError> {
    let (bytes, tag) = split(frame)?;
    Ok(Sealed {
        message: codec::decode_downlink(bytes)?,
        boot,
        signed: bytes.to_vec(),
        tag,
        direction: Direction::Down,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BoardNo, DownlinkBody, NodeMs, Seq, UplinkBody};

    fn event() -> Uplink {
        Uplink::new(BoardNo(3), Seq(9), NodeMs(5), UplinkBody::Heartbeat)
    }

    #[test]
    fn a_key_round_trips_through_its_text_and_never_shows_in_debug() {
        let key = NodeKey::from_bytes(core::array::from_fn(|i| i as u8 * 7));
        let text = key.to_text();
        assert_eq!(text.len(), 64);
        assert_eq!(
            NodeKey::parse(&alloc::format!(" {text}\n")),
            Ok(key.clone())
        );
        assert_eq!(alloc::format!("{key:?}"), "NodeKey(…)");
        for bad in ["", "zz", &text[..63], &alloc::format!("{text}0")] {
            assert_eq!(NodeKey::parse(bad), Err(KeyError::NotHex), "{bad}");
        }
    }

    #[test]
    fn any_change_of_byte_key_event_or_direction_fails_the_tag() {
        let key = NodeKey::from_bytes([1; 32]);
        let frame = seal_uplink(Some(&key), "ev", Boot(5), &event());
        assert!(open_uplink(&frame).unwrap().verify(&key, "ev"));
        assert!(!open_uplink(&frame)
            .unwrap()
            .verify(&NodeKey::from_bytes([2; 32]), "ev"));
        assert!(!open_uplink(&frame).unwrap().verify(&key, "ev2"));
        for i in 0..frame.len() {
            let mut changed = frame.clone();
            changed[i] ^= 0x01;
            if let Ok(sealed) = open_uplink(&changed) {
                assert!(
                    !sealed.verify(&key, "ev"),
                    "byte {i} changed, tag still holds"
                );
            }
        }
        // The same bytes as a downlink's tag: a reflected message does not verify.
        let down = Downlink::new(BoardNo(3), DownlinkBody::Ack { up_to_seq: Seq(9) });
        let frame = seal_downlink(Some(&key), "ev", Boot(5), &down);
        let sealed = open_downlink(&frame, Boot(5)).unwrap();
        assert!(sealed.verify(&key, "ev"));
        // Sealed for the node's boot 5: in its next boot it fails.
        assert!(!open_downlink(&frame, Boot(6)).unwrap().verify(&key, "ev"));
        let reflected = Sealed {
            direction: Direction::Up,
            ..sealed
        };
        assert!(!reflected.verify(&key, "ev"));
    }

    #[test]
    fn an_uplink_carries_its_boot_and_an_earlier_protocols_frame_is_refused() {
        let key = NodeKey::from_bytes([1; 32]);
        let frame = seal_uplink(Some(&key), "ev", Boot(0x0102_0304_0506_0708), &event());
        let sealed = open_uplink(&frame).unwrap();
        assert_eq!(sealed.boot, Boot(0x0102_0304_0506_0708));
        assert_eq!(
            &frame[frame.len() - TAG_LEN - Boot::LEN..frame.len() - TAG_LEN],
            &[1, 2, 3, 4, 5, 6, 7, 8]
        );
        // Another boot in the frame: the tag fails.
        let mut other = frame.clone();
        other[frame.len() - TAG_LEN - 1] ^= 1;
        assert!(!open_uplink(&other).unwrap().verify(&key, "ev"));
        // A protocol-2 frame (no boot): refused by its version.
        let mut old = frame.clone();
        old[0] = 2;
        assert_eq!(open_uplink(&old), Err(DecodeError::UnknownVersion(2)));
    }

    #[test]
    fn an_unkeyed_frame_is_recognised_and_verifies_under_no_key() {
        let frame = seal_uplink(None, "ev", Boot(5), &event());
        let sealed = open_uplink(&frame).unwrap();
        assert!(sealed.is_unkeyed());
        assert!(!sealed.verify(&NodeKey::from_bytes([0; 32]), "ev"));
        assert_eq!(
            open_uplink(&frame[..TAG_LEN - 1]),
            Err(DecodeError::Malformed)
        );
    }

    #[test]
    fn derived_values_differ_by_purpose_and_key() {
        let (a, b) = (NodeKey::from_bytes([1; 32]), NodeKey::from_bytes([2; 32]));
        assert_eq!(a.derive("mqtt"), a.derive("mqtt"));
        assert_ne!(a.derive("mqtt"), a.derive("pager"));
        assert_ne!(a.derive("mqtt"), b.derive("mqtt"));
        assert_eq!(a.derive("mqtt").len(), 32);
    }
}
