//! Questions about the rounds: which are in play, their pairings and byes, the broadcast's
//! games, and an arbiter's start of one.

use protocol::BoardNo;
use tokio::sync::oneshot::Sender;

use crate::core::hub::{StartRequest, UndoRequest};
use crate::core::ids::RoundNo;
use crate::core::pairings::{Bye, Pairing, RoundState};
use crate::core::relay::slices::BoardRanges;
use crate::core::rounds::StartError;
use crate::view::feed::FeedGame;
use crate::view::tiles::Audience;

/// What the rounds are.
pub enum RoundRead {
    /// Every round with pairings or started, and how far each is (for the spectators, as
    /// the broadcast delay releases the results).
    All {
        audience: Audience,
        reply: Sender<Vec<RoundState>>,
    },
    /// A round's pairings (of one section, or the whole hall), with the hub's results.
    Pairings {
        round: RoundNo,
        section: Option<String>,
        audience: Audience,
        reply: Sender<Option<Vec<Pairing>>>,
    },
    /// A round's players without a board (of one section, or the whole hall).
    Byes {
        round: RoundNo,
        section: Option<String>,
        reply: Sender<Vec<Bye>>,
    },
    /// The public feed's games of a round (one board, or all; of a section, of a slice's
    /// boards); `None` for a round not in play.
    Broadcast {
        round: RoundNo,
        board: Option<BoardNo>,
        section: Option<String>,
        boards: Option<BoardRanges>,
        reply: Sender<Option<Vec<FeedGame>>>,
    },
}

/// A round started, or a forced start taken back.
pub enum RoundChange {
    /// An arbiter starts a round; answered with the rounds once durable.
    Start {
        request: StartRequest,
        reply: Sender<Result<Vec<RoundState>, StartError>>,
    },
    /// The chief arbiter takes back a forced start; answered with the rounds once durable.
    UndoStart {
        request: UndoRequest,
        reply: Sender<Result<Vec<RoundState>, StartError>>,
    },
}
