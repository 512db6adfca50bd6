//! The broadcast's outlets beside the live feed: the DGT LiveChess-compatible folder
//! ([`livechess`]), lichess rounds pushed in slices ([`lichess`]) and chess.com's FTP upload
//! ([`ftp`]).
//!
//! Every outlet has one shape, [`Outlet`]: it is handed a round's public feed whenever that
//! changed, and answers what it did for the broadcast's status. Whatever is slow (a network)
//! runs in the outlet's own task, so no outlet ever holds the hub up. A new outlet is a file
//! here and a line in [`OutletsConfig`] and [`build`].

pub mod ftp;
pub mod lichess;
pub mod livechess;
mod status;

use std::path::PathBuf;

pub use status::{OutletStatus, StatusBoard};

use crate::core::ids::RoundNo;
use crate::core::pairings::Pairing;
use crate::view::feed::FeedGame;

/// One round's public feed as the outlets are handed it.
pub struct RoundFeed<'a> {
    pub round: RoundNo,
    /// Its games as the public sees them, in board order.
    pub games: &'a [FeedGame],
    /// Its pairings (the players' names as LiveChess's index writes them).
    pub pairings: &'a [Pairing],
    /// The round the hub began in (`[broadcast.lichess] round_id` is that round's).
    pub first_round: RoundNo,
    /// The event's id and name.
    pub event_id: &'a str,
    pub event_name: &'a str,
}

/// Where the public feed goes besides the API.
pub trait Outlet: Send {
    /// A round's feed changed (or is handed for the first time since the hub started).
    /// `false`: it could not be taken now; the round is handed again a second later.
    fn round_changed(&mut self, feed: &RoundFeed<'_>) -> bool;

    /// How the outlet is doing, for `GET /api/broadcast/outlets` and the page.
    fn status(&self) -> OutletStatus;
}

/// The outlets as configured: `[broadcast] folder`, `[broadcast.lichess]`,
/// `[broadcast.ftp]`.
#[derive(Debug, Clone, Default)]
pub struct OutletsConfig {
    pub folder: Option<PathBuf>,
    pub lichess: Option<crate::config::outlets::LichessTarget>,
    pub ftp: Option<crate::config::outlets::FtpTarget>,
}

/// The configured outlets, their tasks started (on the runtime this is called on).
pub fn build(config: OutletsConfig) -> Vec<Box<dyn Outlet>> {
    let mut outlets: Vec<Box<dyn Outlet>> = Vec::new();
    if let Some(folder) = config.folder {
        outlets.push(Box::new(livechess::Folder::new(folder)));
    }
    if let Some(target) = config.lichess {
        outlets.push(Box::new(lichess::Pusher::start(target)));
    }
    if let Some(target) = config.ftp {
        outlets.push(Box::new(ftp::Uploader::start(target)));
    }
    outlets
}
