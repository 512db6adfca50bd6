//! Questions about the hub itself: its health, its place in a cluster, its outlets, and a
//! supervision page's start.

use tokio::sync::oneshot::Sender;

use crate::edge::outlets::OutletStatus;
use crate::view::tiles::Audience;

use super::LiveStart;

/// How the hub is.
pub enum HallRead {
    /// Whether the hub can make events durable; the reason when not.
    Health { reply: Sender<Result<(), String>> },
    /// The hub's role in a cluster (`None`: a hall of one hub).
    Cluster {
        reply: Sender<Option<serde_json::Value>>,
    },
    /// How each of the broadcast's outlets is doing.
    Outlets { reply: Sender<Vec<OutletStatus>> },
    /// A supervision page connects.
    Live {
        audience: Audience,
        reply: Sender<LiveStart>,
    },
}
