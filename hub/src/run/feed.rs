//! Following the public feed for the outlets (the LiveChess folder, lichess, FTP): when
//! what the public sees of a round changed (looked at most once a second: the round in play
//! every time, the others when the archive changed), every outlet is handed the round.

use std::collections::BTreeMap;

use crate::core::hub::Hub;
use crate::core::ids::RoundNo;
use crate::core::time::HubMs;
use crate::edge::outlets::{self, Outlet, OutletStatus, OutletsConfig, RoundFeed};
use crate::view::feed::{self, FeedCache, FeedSource};

pub(super) struct Follower {
    /// When the feed was last looked at.
    looked_at: HubMs,
    outlets: Vec<Box<dyn Outlet>>,
    /// Each round's feed as the outlets were last handed it (its fingerprint).
    handed: BTreeMap<RoundNo, u64>,
    /// The archive's changes the follower has seen: a finished round is looked at again
    /// only when its games changed.
    archive_seen: Option<u64>,
}

impl Follower {
    /// Starts the configured outlets.
    pub(super) fn new(config: OutletsConfig) -> Follower {
        Follower {
            looked_at: HubMs(0),
            outlets: outlets::build(config),
            handed: BTreeMap::new(),
            archive_seen: None,
        }
    }

    /// Hands every outlet the rounds whose feed changed.
    pub(super) fn follow(&mut self, hub: &Hub, cache: &mut FeedCache, now: HubMs) {
        if self.outlets.is_empty() || now.since(self.looked_at) < 1_000 {
            return;
        }
        self.looked_at = now;
        let in_play = hub.round_in_play();
        let archive = hub.archive_changes();
        let rounds: Vec<RoundNo> = if self.archive_seen == Some(archive) {
            vec![in_play]
        } else {
            let mut all: Vec<RoundNo> = hub.round_states().iter().map(|r| r.round).collect();
            all.push(in_play);
            all.sort_unstable();
            all.dedup();
            all
        };
        self.archive_seen = Some(archive);
        let event_name = hub
            .broadcast()
            .event_name
            .clone()
            .unwrap_or_else(|| hub.event().to_owned());
        for round in rounds {
            let Some(games) = feed::games(&FeedSource::of(hub), now, round, None, cache) else {
                continue;
            };
            let print = feed::fingerprint(&games);
            if self.handed.get(&round) == Some(&print) {
                continue;
            }
            let round_feed = RoundFeed {
                round,
                games: &games,
                pairings: hub.rounds().games(round),
                first_round: hub.rounds().first_round(),
                event_id: hub.event(),
                event_name: &event_name,
            };
            let mut taken = true;
            for outlet in &mut self.outlets {
                taken &= outlet.round_changed(&round_feed);
            }
            if taken {
                self.handed.insert(round, print);
            } else {
                self.archive_seen = None; // handed again a second later
            }
        }
    }

    /// How each outlet is doing.
    pub(super) fn statuses(&self) -> Vec<OutletStatus> {
        self.outlets.iter().map(|o| o.status()).collect()
    }
}
