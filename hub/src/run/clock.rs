//! The hub's clock: the Unix time in ms, never going backwards, never before the journal's
//! last record.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::core::time::HubMs;

/// The hub's clock: the Unix time in ms, never going backwards.
#[derive(Debug, Default)]
pub(crate) struct HubClock {
    last: HubMs,
}

impl HubClock {
    pub(crate) fn now(&mut self) -> HubMs {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.last = self.last.max(HubMs(wall));
        self.last
    }

    pub(crate) fn not_before(&mut self, at: HubMs) {
        self.last = self.last.max(at);
    }
}
