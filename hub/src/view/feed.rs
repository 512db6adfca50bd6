//! The public feed's games: each board's game from the hall, as the relay lets the public
//! see it (the broadcast delay), with the players from the pairings.

use crate::core::arbiter::GameResult;
use crate::core::archive::{Archive, PlayedGame};
use crate::core::board::BoardState;
use crate::core::fingerprint::fnv1a;
use crate::core::hall::Hall;
use crate::core::hub::Hub;
use crate::core::ids::{BoardNo, RoundNo};
use crate::core::pairings::Rounds;
use crate::core::relay::pgn::{self, PgnGame};
use crate::core::relay::public::{tags, BroadcastSettings, UNKNOWN_DATE};
use crate::core::relay::slices::BoardRanges;
use crate::core::relay::{Relay, Visible};
use crate::core::time::HubMs;

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

impl FeedGame {
    /// The result it shows (its `Result` tag): `*` while the public sees it played.
    pub fn result(&self) -> &str {
        self.pgn
            .lines()
            .find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]"))
            .unwrap_or("*")
    }
}

/// What a rendered game depends on beyond what never changes (tags of the round): whether
/// it is rendered from the game in play or the archive, the moves and result shown, and
/// the clock checks (a game-ending move's reading can come with the next press).
type RenderKey = (bool, Visible, GameResult, usize, Option<u64>);

/// Rendered games by round and board, reused while their [`RenderKey`] holds: a poll of
/// 1,000 boards renders only those that changed. The shell keeps one, and starts a new one
/// when the pairings change (the players' names are in every game).
#[derive(Debug, Default)]
pub struct FeedCache {
    games: std::collections::HashMap<(RoundNo, BoardNo), (RenderKey, FeedGame)>,
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

/// What the feed is rendered from, for the hub to hand over in one piece.
pub struct FeedSource<'a> {
    pub hall: &'a Hall,
    pub relay: &'a Relay,
    pub archive: &'a Archive,
    pub rounds: &'a Rounds,
    pub settings: &'a BroadcastSettings,
    pub event_id: &'a str,
}

impl<'a> FeedSource<'a> {
    /// The hub's games, rounds and settings.
    pub fn of(hub: &'a Hub) -> FeedSource<'a> {
        FeedSource {
            hall: hub.hall(),
            relay: hub.relay(),
            archive: hub.archive(),
            rounds: hub.rounds(),
            settings: hub.broadcast(),
            event_id: hub.event(),
        }
    }
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
    games_where(
        source,
        now,
        round,
        |b| board.is_none_or(|wanted| wanted == b),
        cache,
    )
}

/// The games of `round` of the boards `wanted` keeps, as [`games`] renders them: only
/// those are rendered (a slice's poll renders its own boards, not the hall's).
fn games_where(
    source: &FeedSource<'_>,
    now: HubMs,
    round: RoundNo,
    wanted: impl Fn(BoardNo) -> bool,
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
        .filter(|b| wanted(*b))
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
            let key = (state.is_some(), visible, result, checks_len, last_shown);
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
pub fn fingerprint<'a>(games: impl IntoIterator<Item = &'a FeedGame>) -> u64 {
    let prints: Vec<u8> = games
        .into_iter()
        .flat_map(|g| [u64::from(g.board.0), g.print])
        .flat_map(u64::to_be_bytes)
        .collect();
    fnv1a(&prints)
}

/// The games of `round` (one `board`, or all) of `section` (`None`: the whole hall) and of
/// the `boards` of a slice (`None`: every board); `None` for a round that never started or a
/// section there is not.
pub fn section_games(
    source: &FeedSource<'_>,
    now: HubMs,
    round: RoundNo,
    board: Option<BoardNo>,
    (section, boards): (Option<&str>, Option<&BoardRanges>),
    cache: &mut FeedCache,
) -> Option<Vec<FeedGame>> {
    let sections = source.hall.sections();
    if section.is_some() {
        sections.named(section)?;
    }
    let wanted = |b: BoardNo| {
        board.is_none_or(|one| one == b)
            && (section.is_none() || sections.of(b).name.as_deref() == section)
            && boards.is_none_or(|slice| slice.contains(b))
    };
    games_where(source, now, round, wanted, cache)
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
