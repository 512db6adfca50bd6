//! Time as the core sees it.

use serde::{Deserialize, Serialize};

/// The hub's receive time, milliseconds since the Unix epoch. The only "now" the core sees;
/// the shell guarantees it never goes backwards.
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct HubMs(pub u64);

impl HubMs {
    /// Milliseconds from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: HubMs) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    #[must_use]
    pub fn plus_ms(self, ms: u64) -> HubMs {
        HubMs(self.0.saturating_add(ms))
    }
}
