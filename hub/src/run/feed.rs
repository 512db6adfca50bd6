//! Following the public feed for the LiveChess folder and the lichess pusher: when what the
//! public sees changed (looked at most once a second), the folder is rewritten and the
//! pusher gets the round.

use std::collections::HashMap;

use crate::core::hub::Hub;
use crate::core::time::HubMs;
use crate::edge::lichess::LichessTarget;
use crate::view::feed;

pub(super) struct Follower {
    /// The feed's last fingerprint the folder and the pusher have, and when it was last
    /// looked at.
    followed: (Option<u64>, HubMs),
    /// The lichess pusher's inbox: the round's games, newest only.
    lichess: Option<tokio::sync::watch::Sender<Vec<String>>>,
    /// The LiveChess folder's game files as last written, by board.
    folder_written: HashMap<protocol::BoardNo, u64>,
}

impl Follower {
    /// Starts the lichess pusher, if the event pushes to lichess.
    pub(super) fn new(lichess: Option<LichessTarget>) -> Follower {
        let lichess = lichess.map(|target| {
            let (tx, rx) = tokio::sync::watch::channel(Vec::new());
            tokio::spawn(crate::edge::lichess::run(target, rx));
            tx
        });
        Follower {
            followed: (None, HubMs(0)),
            lichess,
            folder_written: HashMap::new(),
        }
    }

    /// Rewrites the folder and hands the round to the pusher when the feed changed. A
    /// folder that cannot be written is logged; the hub goes on.
    pub(super) fn follow(&mut self, hub: &mut Hub, now: HubMs) {
        let wanted = hub.broadcast().folder.is_some() || self.lichess.is_some();
        if !wanted || now.since(self.followed.1) < 1_000 {
            return;
        }
        self.followed.1 = now;
        let round = hub.round_in_play();
        let Some(games) = hub.feed(now, round, None) else {
            return;
        };
        let print = feed::fingerprint(&games);
        if Some(print) == self.followed.0 {
            return;
        }
        self.followed.0 = Some(print);
        if let Some(lichess) = &self.lichess {
            let _ = lichess.send(games.iter().map(|g| g.pgn.clone()).collect());
        }
        let Some(folder) = hub.broadcast().folder.clone() else {
            return;
        };
        let earlier: Vec<usize> = hub
            .round_states()
            .iter()
            .filter(|r| r.round < round)
            .map(|r| r.games)
            .collect();
        let rounds = hub.rounds();
        let name = hub
            .broadcast()
            .event_name
            .clone()
            .unwrap_or_else(|| hub.event().to_owned());
        let pairings = rounds.pairings.get(&round).map(Vec::as_slice);
        if let Err(e) = crate::edge::livechess::write(
            &folder,
            hub.event(),
            &name,
            round.index(),
            &earlier,
            &games,
            pairings,
            &mut self.folder_written,
        ) {
            tracing::warn!(folder = %folder.display(), error = %e, "LiveChess folder not written");
            self.followed.0 = None; // try again
        }
    }
}
