//! Following the public feed for the LiveChess folder and the lichess pusher: when what the
//! public sees changed (looked at most once a second), the folder is rewritten (a folder per
//! round: the round in play, and a finished round whose games changed) and the pusher gets
//! the round in play, for its own lichess round.

use std::collections::{BTreeMap, HashMap};

use crate::core::hub::Hub;
use crate::core::ids::{BoardNo, RoundNo};
use crate::core::time::HubMs;
use crate::edge::outlets::lichess::{LichessTarget, Push};
use crate::edge::outlets::livechess;
use crate::view::feed::{self, FeedCache, FeedSource};

/// Where the feed goes besides the API.
#[derive(Debug, Clone, Default)]
pub struct Outlets {
    /// A DGT LiveChess-compatible folder to keep written.
    pub folder: Option<std::path::PathBuf>,
    /// A lichess broadcast round to push the round to.
    pub lichess: Option<LichessTarget>,
}

pub(super) struct Follower {
    /// When the feed was last looked at.
    looked_at: HubMs,
    /// The LiveChess folder to keep written.
    folder_path: Option<std::path::PathBuf>,
    /// Each round's feed as the folder holds it: its fingerprint, and its count of games and
    /// of those still played.
    folder: BTreeMap<RoundNo, (u64, (usize, usize))>,
    /// The archive's changes the folder has seen: a finished round is looked at again only
    /// when its games changed.
    archive_seen: Option<u64>,
    /// The lichess pusher: where to, its inbox, and what it was last handed.
    lichess: Option<(LichessTarget, tokio::sync::watch::Sender<Push>)>,
    pushed: Option<(String, u64)>,
    /// The LiveChess folder's game files as last written, by round and board.
    folder_written: HashMap<RoundNo, HashMap<BoardNo, u64>>,
}

impl Follower {
    /// Starts the lichess pusher, if the event pushes to lichess.
    pub(super) fn new(outlets: Outlets) -> Follower {
        let lichess = outlets.lichess.map(|target| {
            let (tx, rx) = tokio::sync::watch::channel((String::new(), Vec::new()));
            tokio::spawn(crate::edge::outlets::lichess::run(target.clone(), rx));
            (target, tx)
        });
        Follower {
            looked_at: HubMs(0),
            folder_path: outlets.folder,
            folder: BTreeMap::new(),
            archive_seen: None,
            lichess,
            pushed: None,
            folder_written: HashMap::new(),
        }
    }

    /// Rewrites the folder and hands the round to the pusher when the feed changed. A
    /// folder that cannot be written is logged; the hub goes on.
    pub(super) fn follow(&mut self, hub: &Hub, cache: &mut FeedCache, now: HubMs) {
        let wanted = self.folder_path.is_some() || self.lichess.is_some();
        if !wanted || now.since(self.looked_at) < 1_000 {
            return;
        }
        self.looked_at = now;
        let in_play = hub.round_in_play();
        if let Some(games) = feed::games(&FeedSource::of(hub), now, in_play, None, cache) {
            self.push(hub, in_play, &games);
        }
        if self.folder_path.is_some() {
            // The round in play every second; the others when the archive changed.
            let archive = hub.archive_changes();
            let rounds: Vec<RoundNo> = if self.archive_seen == Some(archive) {
                vec![in_play]
            } else {
                hub.round_states().iter().map(|r| r.round).collect()
            };
            self.archive_seen = Some(archive);
            self.write_folder(hub, cache, now, &rounds);
        }
    }

    /// The round in play to its lichess round, when it changed.
    fn push(&mut self, hub: &Hub, round: RoundNo, games: &[feed::FeedGame]) {
        let Some((target, inbox)) = &self.lichess else {
            return;
        };
        let first = hub.rounds().first_round();
        let Some(round_id) = target.round_id(round, first) else {
            if self.pushed.as_ref().is_none_or(|(id, _)| !id.is_empty()) {
                tracing::warn!(
                    round = round.0,
                    "no lichess round for this round ([[rounds]] lichess_round_id): not pushed"
                );
                self.pushed = Some((String::new(), 0));
            }
            return;
        };
        let print = feed::fingerprint(games);
        if self.pushed.as_ref() == Some(&(round_id.to_owned(), print)) {
            return;
        }
        self.pushed = Some((round_id.to_owned(), print));
        let _ = inbox.send((
            round_id.to_owned(),
            games.iter().map(|g| g.pgn.clone()).collect(),
        ));
    }

    /// Writes the folders of `rounds` that changed, and the tournament's file.
    fn write_folder(&mut self, hub: &Hub, cache: &mut FeedCache, now: HubMs, rounds: &[RoundNo]) {
        let Some(folder) = self.folder_path.clone() else {
            return;
        };
        let mut changed = false;
        for round in rounds {
            let Some(games) = feed::games(&FeedSource::of(hub), now, *round, None, cache) else {
                continue;
            };
            let print = feed::fingerprint(&games);
            if self.folder.get(round).is_some_and(|(p, _)| *p == print) {
                continue;
            }
            let written = self.folder_written.entry(*round).or_default();
            let pairings = hub.rounds().games(*round);
            if let Err(e) = livechess::write_round(&folder, *round, &games, pairings, written) {
                tracing::warn!(folder = %folder.display(), error = %e, "LiveChess folder not written");
                self.archive_seen = None; // try again
                continue;
            }
            self.folder
                .insert(*round, (print, livechess::round_count(&games)));
            changed = true;
        }
        if !changed {
            return;
        }
        // Every round up to the last one written, the ones without games as empty.
        let last = self.folder.keys().last().map_or(0, |r| r.0);
        let counts: Vec<(usize, usize)> = (1..=last)
            .map(|r| {
                self.folder
                    .get(&RoundNo(r))
                    .map_or((0, 0), |(_, count)| *count)
            })
            .collect();
        let name = hub
            .broadcast()
            .event_name
            .clone()
            .unwrap_or_else(|| hub.event().to_owned());
        if let Err(e) = livechess::write_tournament(&folder, hub.event(), &name, &counts) {
            tracing::warn!(folder = %folder.display(), error = %e, "LiveChess tournament file not written");
        }
    }
}
