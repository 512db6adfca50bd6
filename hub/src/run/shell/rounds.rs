//! The shell's answers about the rounds, and an arbiter's start of one.

use super::Shell;
use crate::core::time::HubMs;
use crate::edge::http::api::{RoundChange, RoundRead};
use crate::run::requests::Waiting;
use crate::view::feed::{section_games, FeedSource};
use crate::view::public_rounds;
use crate::view::tiles::Audience;

impl RoundRead {
    pub(super) fn answer(self, shell: &mut Shell, now: HubMs) {
        let hub = &shell.hub;
        match self {
            RoundRead::All { audience, reply } => drop(reply.send(match audience {
                Audience::Arbiters => hub.round_states(),
                Audience::Spectators => public_rounds::round_states(hub, now),
            })),
            RoundRead::Pairings {
                round,
                section,
                audience,
                reply,
            } => {
                let pairings = match audience {
                    Audience::Arbiters => hub.section_pairings(round, section.as_deref()),
                    Audience::Spectators => {
                        public_rounds::pairings(hub, now, round, section.as_deref())
                    }
                };
                drop(reply.send(pairings));
            }
            RoundRead::Byes {
                round,
                section,
                reply,
            } => {
                let byes = hub.rounds().byes(round).iter();
                let byes = byes.filter(|b| section.is_none() || b.section == section);
                drop(reply.send(byes.cloned().collect()));
            }
            RoundRead::Broadcast {
                round,
                board,
                section,
                boards,
                reply,
            } => {
                let source = FeedSource::of(hub);
                let which = (section.as_deref(), boards.as_ref());
                let games = section_games(&source, now, round, board, which, &mut shell.feed_cache);
                drop(reply.send(games));
            }
        }
    }
}

impl RoundChange {
    pub(super) fn apply(self, shell: &mut Shell, now: HubMs) {
        match self {
            RoundChange::Start { request, reply } => match &mut shell.pairing_files {
                // The pairing program exported the round's pairings just before, perhaps.
                Some(files) => files.wait_for_read((request, reply)),
                None => {
                    let waiting = shell.requests.request(Waiting::Rounds(reply));
                    shell.hub.handle_round_start(now, waiting, request);
                }
            },
            RoundChange::UndoStart { request, reply } => {
                let waiting = shell.requests.request(Waiting::Rounds(reply));
                shell.hub.handle_start_undo(now, waiting, request);
            }
        }
    }
}
