//! Questions about the boards: their games as the hall sees them, and an arbiter's decision
//! at one.

use protocol::BoardNo;
use tokio::sync::oneshot::Sender;

use crate::core::arbiter::{ArbiterAction, AuditEntry, DecisionError};
use crate::core::board::{BoardDetail, BoardSummary, Urgency};
use crate::core::claim::{ClaimCheck, ClaimRequest};
use crate::core::ids::RoundNo;
use crate::view::tiles::SpectatorBoard;

/// What the boards show.
pub enum BoardRead {
    /// Every board, as the supervision page lists them.
    All { reply: Sender<Vec<BoardSummary>> },
    /// A board's game in a round (`None`: the one it plays), as `GET /api/boards/{n}`
    /// shows it.
    One {
        board: BoardNo,
        round: Option<RoundNo>,
        reply: Sender<Option<BoardDetail>>,
    },
    /// A board as spectators see it.
    Spectators {
        board: BoardNo,
        reply: Sender<Option<SpectatorBoard>>,
    },
    /// The boards in time trouble (8.4), most urgent first.
    TimeTrouble { reply: Sender<Vec<Urgency>> },
    /// Whether a draw claim at a board stands (9.2, 9.3), checked without deciding it.
    CheckClaim {
        board: BoardNo,
        request: ClaimRequest,
        reply: Sender<Option<ClaimCheck>>,
    },
}

/// A decision at a board.
pub enum BoardChange {
    /// An arbiter's decision for a board's game (of a round; `None`: the one in play), by
    /// an arbiter's own login held to their zones (`Some(name)`) or the chief's token
    /// (`None`); answered once it is durable.
    Decide {
        board: BoardNo,
        round: Option<RoundNo>,
        action: ArbiterAction,
        held_to: Option<String>,
        reply: Sender<Result<AuditEntry, DecisionError>>,
    },
}
