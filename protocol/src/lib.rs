//! The Zeitnot wire protocol: what a board node and the hub say to each other over MQTT.
//!
//! - [`envelope`]: [`Uplink`] (node → hub) and [`Downlink`] (hub → node), the version, board
//!   number, sequence number and node time every message carries.
//! - [`uplink`]: what a node reports: [`Hello`], [`Placement`], [`ClockReport`], heartbeats,
//!   [`NodeHealth`].
//! - [`downlink`]: what the hub answers: acknowledgements and resend requests.
//! - [`piece`]: the board's own view of a piece ([`Color`], [`Role`], [`Piece`]).
//! - [`topic`]: the MQTT topic scheme; [`identity`]: who connects as whom.
//! - [`time_control`]: time controls in PGN syntax, shared by the hub's clock model and the
//!   replay node (not on the wire today).
//! - [`codec`]: postcard encoding, with the version checked before the body is read.
//! - [`seal`]: each message on the wire followed by its tag, HMAC-SHA-256 under the
//!   node's key.
//!
//! The encoding is postcard: compact, stable, and without field names. So fields and enum
//! variants are never reordered or removed; new variants are only ever appended, and a change
//! of layout takes a new [`PROTOCOL_VERSION`]. `tests/golden.rs` freezes the bytes.
//!
//! The crate is `no_std` with `alloc` (build with `--no-default-features`), so a
//! microcontroller board node can speak it.
//!
//! ```
//! use protocol::{codec, BoardNo, NodeMs, Seq, Uplink, UplinkBody};
//!
//! let event = Uplink::new(BoardNo(12), Seq(1), NodeMs(1_700_000_000_000), UplinkBody::Heartbeat);
//! let bytes = codec::encode_uplink(&event);
//! assert_eq!(codec::decode_uplink(&bytes), Ok(event));
//! ```
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod codec;
pub mod downlink;
pub mod envelope;
pub mod identity;
pub mod piece;
pub mod seal;
pub mod time_control;
pub mod topic;
pub mod uplink;

pub use codec::DecodeError;
pub use downlink::DownlinkBody;
pub use envelope::{BoardNo, Downlink, NodeMs, Seq, Uplink, PROTOCOL_VERSION};
pub use piece::{Color, Piece, Role};
pub use uplink::{ClockReport, Hello, NodeHealth, Placement, Square, UplinkBody};
