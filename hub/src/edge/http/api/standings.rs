//! Questions about the standings and the results file.

use tokio::sync::oneshot::Sender;

use crate::core::ids::RoundNo;
use crate::view::standings::{Standings, TeamStandings};
use crate::view::tiles::Audience;

/// Who leads.
pub enum StandingsRead {
    /// A section's standings after a round (by default the round in play), as the audience
    /// sees the results.
    Players {
        round: Option<RoundNo>,
        section: Option<String>,
        audience: Audience,
        reply: Sender<Option<Standings>>,
    },
    /// A team event's standings, as [`StandingsRead::Players`] has the players'.
    Teams {
        round: Option<RoundNo>,
        section: Option<String>,
        audience: Audience,
        reply: Sender<Option<TeamStandings>>,
    },
    /// The pairing program's TRF with the hub's results of every round (of a section, or
    /// the hall's own).
    ResultsTrf {
        section: Option<String>,
        reply: Sender<Option<String>>,
    },
}
