//! The public feed's games: each board's game from the hall, as the relay lets the public
//! see it (the broadcast delay), with the players from the pairings.

use crate::core::arbiter::GameResult;
use crate::core::archive::{Archive, PlayedGame};
use crate::core::board::BoardState;
use crate::core::clock::MoveCheck;
use crate::core::fingerprint::fnv1a;
use crate::core::hall::Hall;
use crate::core::ids::{BoardNo, RoundNo};
use crate::core::relay::pgn::{self, PgnGame, Player, Tags};
use crate::core::relay::{Relay, Visible};
use crate::core::time::HubMs;
use crate::pairings::{Rounds, Seat};

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

/// Rendered games by round and board, reused while their [`RenderKey`] holds: a poll of
/// 1,000 boards renders only those that changed.
#[derive(Debug, Default)]
pub struct FeedCache {
    games: std::collections::HashMap<(RoundNo, BoardNo), (RenderKey, FeedGame)>,
}

impl FeedCache {
    /// `board`'s game in play is over for the feed (archived): render it anew.
    pub fn forget(&mut self, board: BoardNo) {
        self.games.retain(|(_, b), _| *b != board);
    }
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

/// A PGN date nobody may know yet.
const UNKNOWN_DATE: &str = "????.??.??";

/// What the feed is rendered from, for the hub to hand over in one piece.
pub struct FeedSource<'a> {
    pub hall: &'a Hall,
    pub relay: &'a Relay,
    pub archive: &'a Archive,
    pub rounds: &'a Rounds,
    pub settings: &'a BroadcastSettings,
    pub event_id: &'a str,
}

/// The games of `round` (one `board`, or all) as the public sees them at `now`: the
/// boards playing it, the games archived from it, and while it is played, the boards paired
/// in it whose node has not reported yet. `None` for a round that never started.
pub fn games(
    source: &FeedSource<'_>,
    now: HubMs,
    round: RoundNo,
    board: Option<BoardNo>,
    cache: &mut FeedCache,
) -> Option<Vec<FeedGame>> {
    let FeedSource {
        hall,
        relay,
        archive,
        rounds,
        settings,
        event_id,
    } = *source;
    let started = hall.rounds().started(round, None);
    if !started && archive.round(round).next().is_none() {
        return None;
    }
    let mut boards: std::collections::BTreeSet<BoardNo> =
        archive.round(round).map(|g| g.board).collect();
    boards.extend(
        hall.boards()
            .into_iter()
            .filter(|b| hall.round_of(*b) == round),
    );
    // Broadcasters see the pairing before the first move.
    boards.extend(
        rounds
            .games(round)
            .iter()
            .map(|p| p.board)
            .filter(|b| hall.board(*b).is_none() && hall.round_of(*b) == round),
    );
    let games = boards
        .into_iter()
        .filter(|b| board.is_none_or(|wanted| wanted == *b))
        .map(|b| {
            let state = hall.board(b).filter(|s| s.round() == round);
            let archived = archive.get(round, b);
            let (visible, result, checks_len, last_shown) = match (state, archived) {
                (Some(state), _) => {
                    let visible = relay.visible(b, now, settings.delay_ms);
                    let checks = state.clock().checks();
                    (
                        visible,
                        shown_result(Some(state), visible, settings),
                        checks.len(),
                        checks.last().and_then(|c| c.shown_ms),
                    )
                }
                (None, Some(game)) => {
                    let visible = game.visible(now, settings.delay_ms);
                    let result = archived_result(game, visible, settings);
                    (visible, result, game.pgn.moves.len(), None)
                }
                (None, None) => (Visible::NOTHING, GameResult::Ongoing, 0, None),
            };
            let key = (visible, result, checks_len, last_shown);
            if let Some((cached, game)) = cache.games.get(&(round, b)) {
                if *cached == key {
                    return game.clone();
                }
            }
            let (mut tags, pgn, started_at) = match (state, archived) {
                (Some(state), _) => (
                    tags(hall, rounds, settings, event_id, round, b),
                    PgnGame::of(state.game(), state.clock().checks()),
                    relay.started_at(b),
                ),
                (None, Some(game)) => (
                    game.tags.clone(),
                    game.pgn.clone(),
                    game.timeline.started_at(),
                ),
                (None, None) => (
                    tags(hall, rounds, settings, event_id, round, b),
                    PgnGame::default(),
                    None,
                ),
            };
            // The date of the first move the public may see: nothing leaks early.
            tags.date = started_at
                .filter(|_| visible.plies > 0)
                .map_or_else(|| UNKNOWN_DATE.to_owned(), pgn_date);
            let pgn = pgn::render(&tags, &pgn, visible.plies, result);
            let game = FeedGame {
                board: b,
                print: fnv1a(pgn.as_bytes()),
                pgn,
                as_of: visible.as_of,
            };
            if state.is_some() || archived.is_some() {
                cache.games.insert((round, b), (key, game.clone()));
            }
            game
        })
        .collect();
    Some(games)
}

/// The result the public sees of an archived game: as in play, once the feed shows its end.
fn archived_result(
    game: &PlayedGame,
    visible: Visible,
    settings: &BroadcastSettings,
) -> GameResult {
    if visible.ended {
        game.standing.result
    } else if visible.flagged && settings.flag_results_at_once {
        game.flag_result.unwrap_or(GameResult::Ongoing)
    } else {
        GameResult::Ongoing
    }
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
pub fn move_message(hall: &Hall, board: BoardNo, round: RoundNo) -> Option<Vec<u8>> {
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
