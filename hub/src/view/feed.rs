//! The public feed's games: each board's game from the hall, as the relay lets the public
//! see it (the broadcast delay), with the players from the pairings.

use protocol::BoardNo;

use crate::core::arbiter::GameResult;
use crate::core::board::BoardState;
use crate::core::clock::MoveCheck;
use crate::core::fingerprint::fnv1a;
use crate::core::game::Game;
use crate::core::hall::Hall;
use crate::core::laws::Rules;
use crate::core::relay::pgn::{self, Player, Tags};
use crate::core::relay::{Relay, Visible};
use crate::core::time::HubMs;
use crate::pairings::{Rounds, Seat};
use shakmaty::Chess;

/// What the feed is configured with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BroadcastSettings {
    /// The event's name (`Event` tag); the event id when not configured.
    pub event_name: Option<String>,
    pub site: Option<String>,
    /// The public sees each game as it was this long ago (anti-cheat); 0: live.
    pub delay_ms: u64,
    /// A DGT LiveChess-compatible folder to keep written.
    pub folder: Option<std::path::PathBuf>,
    /// A lichess broadcast round to push the round to.
    pub lichess: Option<crate::edge::lichess::LichessTarget>,
    /// Show the result a flag fall gives (6.9) at once, before the arbiter confirms it;
    /// by default the feed waits for the arbiter's declared result.
    pub flag_results_at_once: bool,
}

/// One game of the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedGame {
    pub board: BoardNo,
    pub pgn: String,
    /// When what the game shows last changed.
    pub as_of: HubMs,
    /// A fingerprint of `pgn` (FNV-1a).
    pub print: u64,
}

/// What a rendered game depends on beyond what never changes (tags of the round): the
/// moves and result shown, and the clock checks (a game-ending move's reading can come
/// with the next press).
type RenderKey = (Visible, GameResult, usize, Option<u64>);

/// Rendered games by board, reused while their [`RenderKey`] holds: a poll of 1,000 boards
/// renders only those that changed.
#[derive(Debug, Default)]
pub struct FeedCache {
    games: std::collections::HashMap<BoardNo, (RenderKey, FeedGame)>,
}

fn player(seat: &Seat) -> Player {
    Player {
        name: seat.name.clone(),
        title: seat.title.clone(),
        rating: seat.rating,
        fide_id: seat.fide_id,
        federation: seat.federation.clone(),
    }
}

/// `YYYY.MM.DD` (UTC) of a Unix time in ms.
pub fn pgn_date(at: HubMs) -> String {
    // Days to civil date (Howard Hinnant's algorithm).
    let days = (at.0 / 86_400_000) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

/// The games of `round` (every board of the round in play; `board` for one), as the
/// public sees them at `now`. `None` for a round that is not in play.
#[allow(clippy::too_many_arguments)]
pub fn games(
    hall: &Hall,
    relay: &Relay,
    rounds: &Rounds,
    settings: &BroadcastSettings,
    event_id: &str,
    now: HubMs,
    round: usize,
    board: Option<BoardNo>,
    cache: &mut FeedCache,
) -> Option<Vec<FeedGame>> {
    let in_play = rounds.in_play().unwrap_or(1);
    if round != in_play {
        return None;
    }
    let pairings = rounds.pairings.get(&round);
    let boards: Vec<BoardNo> = match pairings {
        Some(games) => games.iter().map(|p| p.board).collect(),
        None => hall.boards(),
    };
    let games = boards
        .into_iter()
        .filter(|b| board.is_none_or(|wanted| wanted == *b))
        .filter_map(|b| {
            let state = hall.board(b);
            let pairing = pairings.and_then(|games| games.iter().find(|p| p.board == b));
            // A board is shown once its node reported, or from the start when it is paired
            // (broadcasters see the pairing before the first move).
            if state.is_none() && pairing.is_none() {
                return None;
            }
            let visible = relay.visible(b, now, settings.delay_ms);
            let result = shown_result(state, visible, settings);
            let checks = state.map_or(&[][..], |s| s.clock().checks());
            let key = (
                visible,
                result,
                checks.len(),
                checks.last().and_then(|c| c.shown_ms),
            );
            if let Some((cached, game)) = cache.games.get(&b) {
                if *cached == key {
                    return Some(game.clone());
                }
            }
            let tags = Tags {
                event: settings
                    .event_name
                    .clone()
                    .unwrap_or_else(|| event_id.to_owned()),
                site: settings.site.clone().unwrap_or_else(|| "?".to_owned()),
                // The date of the first move the public may see: nothing leaks early.
                date: relay
                    .started_at(b)
                    .filter(|_| visible.plies > 0)
                    .map_or_else(|| "????.??.??".to_owned(), pgn_date),
                round: format!("{round}.{b}"),
                white: pairing.map(|p| player(&p.white)),
                black: pairing.map(|p| player(&p.black)),
                time_control: state
                    .and_then(|s| s.clock().model())
                    .map(|m| m.time_control().to_string()),
                game_id: format!("{event_id}-r{round}-b{b}"),
            };
            let unstarted = Game::new(Chess::default(), Rules::default());
            let game = state.map_or(&unstarted, |s| s.game());
            let pgn = pgn::render(&tags, game, checks, visible, result);
            let game = FeedGame {
                board: b,
                print: fnv1a(pgn.as_bytes()),
                pgn,
                as_of: visible.as_of,
            };
            if state.is_some() {
                cache.games.insert(b, (key, game.clone()));
            }
            Some(game)
        })
        .collect();
    Some(games)
}

/// The result the public sees of a game: once the relay shows the end; a flag fall's at
/// once only where the event chose that.
pub fn shown_result(
    state: Option<&BoardState>,
    visible: Visible,
    settings: &BroadcastSettings,
) -> GameResult {
    match state {
        Some(state) if visible.ended => state.game().result(),
        Some(state) if visible.flagged && settings.flag_results_at_once => state
            .flag_ruling()
            .and_then(|r| r.result)
            .unwrap_or(GameResult::Ongoing),
        _ => GameResult::Ongoing,
    }
}

/// A stable fingerprint of the feed's games: the `ETag`, and whether the LiveChess folder
/// needs writing.
pub fn fingerprint(games: &[FeedGame]) -> u64 {
    let prints: Vec<u8> = games
        .iter()
        .flat_map(|g| [u64::from(g.board.0), g.print])
        .flat_map(u64::to_be_bytes)
        .collect();
    fnv1a(&prints)
}

/// A move (or the end of the game) at `board` as the MQTT live feed publishes it:
/// `{"board", "round", "ply", "san", "uci", "by", "fen", "clock_ms", "result"}`.
pub fn move_message(hall: &Hall, board: BoardNo, round: usize) -> Option<Vec<u8>> {
    let state = hall.board(board)?;
    let game = state.game();
    let ply = game.moves().len();
    let last = game.moves().last();
    let clock_ms = ply
        .checked_sub(1)
        .and_then(|i| state.clock().checks().get(i))
        .and_then(MoveCheck::time_ms);
    let message = serde_json::json!({
        "board": board,
        "round": round,
        "ply": ply,
        "san": last.map(|m| m.san.to_string()),
        "uci": last.map(|m| m.m.to_uci(shakmaty::CastlingMode::Standard).to_string()),
        "by": last.map(|m| crate::core::color_name(m.by)),
        "fen": game.fen(),
        "clock_ms": clock_ms,
        "result": game.result(),
    });
    serde_json::to_vec(&message).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(pgn_date(HubMs(0)), "1970.01.01");
        // 2026-11-23 12:00 UTC.
        assert_eq!(pgn_date(HubMs(1_795_435_200_000)), "2026.11.23");
        // 2024-02-29.
        assert_eq!(pgn_date(HubMs(1_709_164_800_000)), "2024.02.29");
    }
}
