//! What the outside is shown, rendered from the core's state: pure functions, no IO.
//!
//! - [`feed`]: the broadcast feed's games (PGN, the delay, the players).
//! - [`tiles`]: the supervision page's tiles and what changed.
//! - [`pager`]: the JSON pagers get over MQTT, and the commands they send back.
//! - [`phone`]: what an arbiter's phone is sent over ntfy's protocol.
//! - [`phone_filter`]: the filters a phone's subscription may ask for.
//! - [`public_rounds`]: the rounds' results as the broadcast delay releases them.
//! - [`standings`]: a section's standings after a round, as the audience sees the results.

pub mod feed;
pub mod pager;
pub mod phone;
pub mod phone_filter;
pub mod public_rounds;
pub mod standings;
pub mod tiles;
