//! The rounds as spectators see them: a game's result only once the broadcast delay has
//! released its end. The pairings' results and the rounds' counts of finished games would
//! otherwise tell the public (and a player's friend) that a game ended, and how, up to the
//! delay before its moves.

use crate::core::arbiter::GameResult;
use crate::core::hub::Hub;
use crate::core::ids::RoundNo;
use crate::core::pairings::{Pairing, RoundState};
use crate::core::time::HubMs;
use crate::view::feed::shown_result;

/// `round`'s pairings of `section` at `now`, results held back as the delay holds back
/// the games; `None` as [`Hub::section_pairings`].
pub fn pairings(
    hub: &Hub,
    now: HubMs,
    round: RoundNo,
    section: Option<&str>,
) -> Option<Vec<Pairing>> {
    let mut games = hub.section_pairings(round, section)?;
    let settings = hub.broadcast();
    for game in &mut games {
        // A game is released as its moves are: the hall's, or an archived one (the next
        // round may start within the delay: rapid rounds follow each other). One scored
        // without play (a forfeit, a bye) is shown as decided.
        let held = match hub.hall().board(game.board).filter(|s| s.round() == round) {
            Some(state) => {
                let visible = hub.relay().visible(game.board, now, settings.delay_ms);
                !shown_result(Some(state), visible, settings).is_decided()
            }
            None => hub.archive().get(round, game.board).is_some_and(|played| {
                let visible = played.timeline.visible(now, settings.delay_ms);
                !(visible.ended || visible.flagged && settings.flag_results_at_once)
            }),
        };
        if held {
            GameResult::Ongoing.code().clone_into(&mut game.result);
        }
    }
    Some(games)
}

/// Every round's state at `now`, its finished games counted as spectators see them.
pub fn round_states(hub: &Hub, now: HubMs) -> Vec<RoundState> {
    hub.round_states()
        .into_iter()
        .map(|state| {
            let Some(games) = pairings(hub, now, state.round, None) else {
                return state;
            };
            let mut public = RoundState::of(
                state.round,
                state.in_play,
                games.iter().map(|p| p.result.as_str()),
            );
            public.started = state.started;
            // Fewer results shown than the hub has: never more.
            public.finished = public.finished.min(state.finished);
            public
        })
        .collect()
}
