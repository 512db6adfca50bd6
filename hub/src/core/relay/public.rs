//! What the relay gives the public beyond the moves: the broadcast's settings, each game's
//! tags, and a completed move as the live feed publishes it.

use serde::Serialize;

use super::pgn::{Player, Tags};
use crate::core::arbiter::GameResult;
use crate::core::clock::MoveCheck;
use crate::core::hall::Hall;
use crate::core::ids::{BoardNo, RoundNo};
use crate::core::pairings::{Rounds, Seat};
use crate::core::side::Side;

/// What the relay decides with: the tags it writes, the delay, when a flag's result shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BroadcastSettings {
    /// The event's name (`Event` tag); the event id when not configured.
    pub event_name: Option<String>,
    pub site: Option<String>,
    /// The public sees each game as it was this long ago (anti-cheat); 0: live.
    pub delay_ms: u64,
    /// Show the result a flag fall gives (6.9) at once, before the arbiter confirms it;
    /// by default the feed waits for the arbiter's declared result.
    pub flag_results_at_once: bool,
}

/// A PGN date nobody may know yet.
pub const UNKNOWN_DATE: &str = "????.??.??";

fn player(seat: &Seat) -> Player {
    Player {
        name: seat.name.clone(),
        title: seat.title.clone(),
        rating: seat.rating,
        fide_id: seat.fide_id,
        federation: seat.federation.clone(),
    }
}

/// The tags of `board`'s game of `round` (its date is the first move's the public may
/// see, set when rendered).
pub fn tags(
    hall: &Hall,
    rounds: &Rounds,
    settings: &BroadcastSettings,
    event_id: &str,
    round: RoundNo,
    board: BoardNo,
) -> Tags {
    let pairing = rounds.games(round).iter().find(|p| p.board == board);
    let time_control = hall
        .board(board)
        .and_then(|s| s.clock().model())
        .map(|m| m.time_control().to_string())
        .or_else(|| {
            let section = hall.sections().of(board);
            section.time_control.as_ref().map(ToString::to_string)
        });
    Tags {
        event: settings
            .event_name
            .clone()
            .unwrap_or_else(|| event_id.to_owned()),
        site: settings.site.clone().unwrap_or_else(|| "?".to_owned()),
        date: UNKNOWN_DATE.to_owned(),
        round: format!("{round}.{board}"),
        white: pairing.map(|p| player(&p.white)),
        black: pairing.map(|p| player(&p.black)),
        time_control,
        game_id: format!("{event_id}-r{round}-b{board}"),
        white_team: pairing.and_then(|p| p.white_team.clone()),
        black_team: pairing.and_then(|p| p.black_team.clone()),
    }
}

/// A move (or the end of the game) at a board as the MQTT live feed publishes it. The
/// fields are in the order they have always been written (alphabetical).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveMove {
    pub board: BoardNo,
    pub by: Option<Side>,
    pub clock_ms: Option<u64>,
    pub fen: String,
    pub ply: usize,
    pub result: GameResult,
    pub round: RoundNo,
    pub san: Option<String>,
    pub uci: Option<String>,
}

impl LiveMove {
    /// `board`'s game of `round` as it stands, its last move first.
    pub fn of(hall: &Hall, board: BoardNo, round: RoundNo) -> Option<LiveMove> {
        let state = hall.board(board)?;
        let game = state.game();
        let ply = game.moves().len();
        let last = game.moves().last();
        let clock_ms = ply
            .checked_sub(1)
            .and_then(|i| state.clock().checks().get(i))
            .and_then(MoveCheck::time_ms);
        Some(LiveMove {
            board,
            by: last.map(|m| m.by.into()),
            clock_ms,
            fen: game.fen(),
            ply,
            result: game.result(),
            round,
            san: last.map(|m| m.san.to_string()),
            uci: last.map(|m| m.m.to_uci(shakmaty::CastlingMode::Standard).to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_move_is_written_as_it_always_was() {
        let message = LiveMove {
            board: BoardNo(7),
            by: Some(Side::White),
            clock_ms: Some(5_400_000),
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_owned(),
            ply: 1,
            result: GameResult::Ongoing,
            round: RoundNo(2),
            san: Some("e4".to_owned()),
            uci: Some("e2e4".to_owned()),
        };
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(
            json,
            r#"{"board":7,"by":"white","clock_ms":5400000,"fen":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1","ply":1,"result":"*","round":2,"san":"e4","uci":"e2e4"}"#
        );
    }
}
