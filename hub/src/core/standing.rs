//! How a game stands: by the rules, or as the arbiter declared it. The board's game in play
//! and the archive's finished games say it alike.

use serde::{Deserialize, Serialize};

use super::arbiter::GameResult;
use super::ending::Status;
use super::laws::Article;

/// How a game stands: by the rules, or as the arbiter declared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// `playing`, `checkmate`, …, or a declared result's cause (`flag_fall`, …).
    pub status: Status,
    pub result: GameResult,
    pub article: Option<Article>,
}
