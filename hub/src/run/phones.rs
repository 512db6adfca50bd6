//! The arbiters' phones' streams: each phone's stream starts from the steps it
//! missed, taken in the same turn of the loop as its subscription to the alert changes, so
//! nothing falls between the two; the stream sends each change once.

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::core::alerts::AlertChange;
use crate::core::hub::Hub;
use crate::edge::http::api::PhoneFeed;

/// Alert changes a phone's stream may fall behind by before it is ended (the app then
/// reconnects and resumes from the last one it got).
const PHONE_BACKLOG: usize = 1024;

/// The most steps a phone is sent when it (re)connects: a day of a busy zone.
pub const PHONE_HISTORY: usize = 500;

/// The channel of alert changes to the phones' streams.
pub(super) struct Phones {
    changes: broadcast::Sender<Arc<AlertChange>>,
}

impl Default for Phones {
    fn default() -> Phones {
        Phones {
            changes: broadcast::channel(PHONE_BACKLOG).0,
        }
    }
}

impl Phones {
    /// An alert change made durable: to every phone's stream open now.
    pub(super) fn alert_changed(&self, change: &AlertChange) {
        if self.changes.receiver_count() > 0 {
            let _ = self.changes.send(Arc::new(change.clone()));
        }
    }

    /// Arbiter `arbiter`'s phone stream from after step `after`; `None` unless enrolled.
    pub(super) fn feed(&self, hub: &Hub, arbiter: &str, after: u64) -> Option<PhoneFeed> {
        let (watch, member) = hub.phone(arbiter)?;
        let backlog = hub
            .phone_steps(&watch, after, PHONE_HISTORY)
            .into_iter()
            .map(|s| (s.alert.clone(), s.step.clone()))
            .collect();
        Some(PhoneFeed {
            key: member.key.clone(),
            credentials: crate::core::phone::PhoneCredentials::of(member),
            watch,
            backlog,
            live: self.changes.subscribe(),
        })
    }
}
