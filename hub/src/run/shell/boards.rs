//! The shell's answers about the boards, and an arbiter's decision at one.

use super::Shell;
use crate::core::time::HubMs;
use crate::edge::http::api::{BoardChange, BoardRead};
use crate::run::live;
use crate::run::requests::Waiting;

impl BoardRead {
    pub(super) fn answer(self, shell: &mut Shell, now: HubMs) {
        let hub = &shell.hub;
        // A dropped receiver means the HTTP client went away; nothing to do.
        match self {
            BoardRead::All { reply } => drop(reply.send(hub.hall().summaries(now))),
            BoardRead::One {
                board,
                round,
                reply,
            } => {
                let round = round.unwrap_or_else(|| hub.hall().round_of(board));
                drop(reply.send(hub.board_detail(now, round, board)));
            }
            BoardRead::Spectators { board, reply } => {
                drop(reply.send(live::spectator_board(hub, board, now)));
            }
            BoardRead::TimeTrouble { reply } => drop(reply.send(hub.hall().time_trouble(now))),
            BoardRead::CheckClaim {
                board,
                request,
                reply,
            } => drop(reply.send(hub.hall().check_claim(board, &request))),
        }
    }
}

impl BoardChange {
    pub(super) fn apply(self, shell: &mut Shell, now: HubMs) {
        match self {
            BoardChange::Decide {
                board,
                round,
                action,
                held_to,
                reply,
            } => {
                let request = shell.requests.request(Waiting::Decision(reply));
                shell
                    .hub
                    .handle_decision(now, request, board, round, action, held_to.as_deref());
            }
        }
    }
}
