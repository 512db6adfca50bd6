//! A journal record: one accepted event and when the hub received it.

use protocol::Uplink;

use super::time::HubMs;

/// The unit of the journal. The hub's state is the fold of these, in order, through
/// [`super::hall::Hall::apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub at: HubMs,
    pub event: Uplink,
}
