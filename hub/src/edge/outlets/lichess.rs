//! Pushing the rounds to lichess broadcasts, each hub round in slices (`[[rounds]]
//! lichess_slices`: boards `"1-100"` to one lichess round, `"101-200"` to another), as
//! lichess's rules ask (lila's `RelayPush`, the API's specification):
//!
//! - `POST {url}/api/broadcast/round/{id}/push`, the token, plain-text PGN, at most 100
//!   games a request and a round;
//! - one request at a time to lichess, for every slice and round; after a 429 nothing for a
//!   minute (or the `Retry-After` it gives), then the whole current state again; any other
//!   refusal retried for that round alone, after a growing wait, the others going on;
//! - a slice whose every game has its result is pushed, then its lichess round marked
//!   finished (`POST {url}/broadcast/round/{id}/edit?patch=1`, `status=finished`); started
//!   again if an arbiter withdraws a result.
//!
//! The outlet hands each slice's newest state to one task that does the requests in turn,
//! slice after slice, so a slow or failing lichess never holds the hub up and only the
//! newest state of a slice is ever sent. A refusal is logged once and shown in the
//! outlet's status.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::status::Destination;
use super::{Outlet, OutletStatus, RoundFeed, StatusBoard};
use crate::config::outlets::{LichessTarget, GAMES_PER_ROUND};
use crate::core::ids::RoundNo;
use crate::view::feed::{self, FeedGame};

/// Games a single push may carry (lichess's limit).
pub const GAMES_PER_PUSH: usize = 100;

/// Waits between attempts at a lichess round after a failure: 1 s, doubling, at most a
/// minute; the other rounds go on meanwhile.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(60);
/// After a 429 without `Retry-After`: lichess's API asks for a minute.
const AFTER_TOO_MANY: Duration = Duration::from_secs(60);
/// A `Retry-After` longer than this is taken as this.
const LONGEST_WAIT: Duration = Duration::from_secs(600);

/// The games' PGNs in requests of at most [`GAMES_PER_PUSH`] games each.
pub fn batches(games: &[String]) -> Vec<String> {
    games
        .chunks(GAMES_PER_PUSH)
        .map(|chunk| chunk.concat())
        .collect()
}

/// What a lichess round should show: its slice's games as the feed has them.
#[derive(Debug, Clone)]
struct Wanted {
    round: RoundNo,
    boards: Option<String>,
    games: Arc<[String]>,
    print: u64,
    /// Every game has its result: the round is to be marked finished.
    finished: bool,
}

/// What the outlet hands its task: each lichess round's newest state.
#[derive(Default)]
struct Inbox {
    wanted: Mutex<BTreeMap<String, Wanted>>,
    changed: Notify,
    closed: AtomicBool,
}

/// The outlet: slices each round and hands the slices to the task that pushes them.
pub struct Pusher {
    target: Arc<LichessTarget>,
    inbox: Arc<Inbox>,
    status: StatusBoard,
    /// Lichess rounds told about games past the hundred lichess shows.
    warned_full: std::collections::BTreeSet<String>,
}

impl Pusher {
    /// The outlet, its task started.
    pub fn start(target: LichessTarget) -> Pusher {
        let target = Arc::new(target);
        let inbox = Arc::new(Inbox::default());
        let status = StatusBoard::new("lichess", target.url.clone());
        tokio::spawn(run(target.clone(), inbox.clone(), status.clone()));
        Pusher {
            target,
            inbox,
            status,
            warned_full: Default::default(),
        }
    }
}

impl Drop for Pusher {
    fn drop(&mut self) {
        self.inbox.closed.store(true, Ordering::Relaxed);
        self.inbox.changed.notify_one();
    }
}

impl Outlet for Pusher {
    fn round_changed(&mut self, feed: &RoundFeed<'_>) -> bool {
        let slices = self.target.slices(feed.round, feed.first_round);
        if slices.is_empty() {
            return true;
        }
        let mut wanted = self.inbox.wanted.lock().unwrap_or_else(|p| p.into_inner());
        for slice in slices {
            let mut games: Vec<&FeedGame> = feed
                .games
                .iter()
                .filter(|g| slice.boards.as_ref().is_none_or(|b| b.contains(g.board)))
                .collect();
            if games.len() > GAMES_PER_ROUND {
                if self.warned_full.insert(slice.round_id.clone()) {
                    tracing::warn!(
                        round = feed.round.0,
                        lichess_round = %slice.round_id,
                        games = games.len(),
                        "lichess shows at most {GAMES_PER_ROUND} games a round: the boards past them are not pushed ([[rounds]] lichess_slices)"
                    );
                }
                games.truncate(GAMES_PER_ROUND);
            }
            let finished = !games.is_empty() && games.iter().all(|g| g.result() != "*");
            let print = feed::fingerprint(games.iter().copied());
            let same = wanted
                .get(&slice.round_id)
                .is_some_and(|w| w.print == print && w.finished == finished);
            if same {
                continue;
            }
            wanted.insert(
                slice.round_id,
                Wanted {
                    round: feed.round,
                    boards: slice.boards.as_ref().map(ToString::to_string),
                    games: games.iter().map(|g| g.pgn.clone()).collect(),
                    print,
                    finished,
                },
            );
        }
        drop(wanted);
        self.inbox.changed.notify_one();
        true
    }

    fn status(&self) -> OutletStatus {
        self.status.get()
    }
}

/// Why a request to lichess did not go through.
enum Refused {
    /// 429: nothing for this long.
    TooMany(Duration),
    /// Anything else: retried after a growing wait.
    Failed(String),
}

/// What lichess has of each round, as far as the task knows.
#[derive(Default)]
struct Sent {
    /// The state last pushed, by lichess round.
    pushed: HashMap<String, u64>,
    /// Whether the round was last marked finished (`None`: never marked).
    marked: HashMap<String, bool>,
    /// Rounds whose last attempt failed: not tried again before then, and the wait after
    /// the next failure. One round lichess refuses never holds up the others.
    retry: HashMap<String, (tokio::time::Instant, Duration)>,
}

/// Pushes every slice's newest state, one request at a time, until the outlet is dropped.
async fn run(target: Arc<LichessTarget>, inbox: Arc<Inbox>, status: StatusBoard) {
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .user_agent(concat!("zeitnot-hub/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "no HTTP client for lichess; not pushing");
            return;
        }
    };
    let mut sent = Sent::default();
    // The lichess round tried last: the next is the one after it, so a round that changes
    // every second never starves the others.
    let mut after = String::new();
    while !inbox.closed.load(Ordering::Relaxed) {
        let now = tokio::time::Instant::now();
        let Some((id, wanted)) = next(&inbox, &sent, &after, now) else {
            match sent.retry.values().map(|(at, _)| *at).min() {
                Some(at) => {
                    tokio::select! {
                        () = inbox.changed.notified() => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => inbox.changed.notified().await,
            }
            continue;
        };
        match bring_up_to_date(&client, &target, &id, &wanted, &mut sent).await {
            Ok(()) => {
                sent.retry.remove(&id);
                let destination = Destination {
                    round: wanted.round,
                    boards: wanted.boards.clone(),
                    games: wanted.games.len(),
                    sent_at: None,
                    finished: wanted.finished,
                    failing: None,
                };
                status.sent(&id, destination);
                tracing::debug!(lichess_round = %id, games = wanted.games.len(), "pushed to lichess");
            }
            Err(Refused::TooMany(pause)) => {
                tracing::warn!(lichess_round = %id, ?pause, "lichess answered 429 (too many requests): nothing is sent until the wait is over, then every round again");
                status.failed("lichess answered 429 Too Many Requests");
                status.waiting(pause);
                tokio::time::sleep(pause).await;
                sent.pushed.clear(); // the whole current state again
            }
            Err(Refused::Failed(why)) => {
                let wait = sent.retry.get(&id).map_or(RETRY_FIRST, |(_, wait)| *wait);
                sent.retry
                    .insert(id.clone(), (now + wait, (wait * 2).min(RETRY_MAX)));
                if status.destination_failed(&id, &why) {
                    tracing::warn!(lichess_round = %id, %why, retry_in = ?wait, "push to lichess failed; retrying");
                }
            }
        }
        after = id;
    }
}

/// The next lichess round whose state lichess has not got, after `after` in order.
fn next(
    inbox: &Inbox,
    sent: &Sent,
    after: &str,
    now: tokio::time::Instant,
) -> Option<(String, Wanted)> {
    let wanted = inbox.wanted.lock().unwrap_or_else(|p| p.into_inner());
    let behind = |(id, w): &(&String, &Wanted)| {
        let due = sent.retry.get(*id).is_none_or(|(at, _)| *at <= now);
        due && (sent.pushed.get(*id) != Some(&w.print)
            || sent.marked.get(*id).copied().unwrap_or(false) != w.finished)
    };
    let later =
        wanted.range::<str, _>((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded));
    later
        .chain(wanted.iter())
        .find(behind)
        .map(|(id, w)| (id.clone(), w.clone()))
}

/// Pushes `wanted` to lichess round `id` if lichess has not got it, then marks the round
/// finished (or started again) as its games say.
async fn bring_up_to_date(
    client: &reqwest::Client,
    target: &LichessTarget,
    id: &str,
    wanted: &Wanted,
    sent: &mut Sent,
) -> Result<(), Refused> {
    let base = target.url.trim_end_matches('/');
    if sent.pushed.get(id) != Some(&wanted.print) {
        let endpoint = format!("{base}/api/broadcast/round/{id}/push");
        for body in batches(&wanted.games) {
            let request = client
                .post(&endpoint)
                .bearer_auth(&target.token)
                .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .body(body);
            let answer = answered(request.send().await).await?;
            if let Some(why) = game_errors(&answer) {
                // lichess took the request but refused games in it: shown, not retried (the
                // same games would be refused again).
                tracing::warn!(lichess_round = %id, %why, "lichess refused games of the push");
            }
        }
        sent.pushed.insert(id.to_owned(), wanted.print);
    }
    let marked = sent.marked.get(id).copied();
    let mark = match (wanted.finished, marked) {
        (true, Some(true)) | (false, None | Some(false)) => None,
        (true, _) => Some("finished"),
        (false, Some(true)) => Some("started"),
    };
    if let Some(state) = mark {
        let endpoint = format!("{base}/broadcast/round/{id}/edit?patch=1");
        let request = client
            .post(&endpoint)
            .bearer_auth(&target.token)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(format!("status={state}"));
        answered(request.send().await).await?;
        sent.marked.insert(id.to_owned(), wanted.finished);
        tracing::info!(lichess_round = %id, status = state, "lichess round marked");
    }
    Ok(())
}

/// The answer's body when lichess took the request.
async fn answered(sent: reqwest::Result<reqwest::Response>) -> Result<String, Refused> {
    let response = sent.map_err(|e| Refused::Failed(e.to_string()))?;
    let code = response.status();
    if code == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let pause = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(AFTER_TOO_MANY, |s| Duration::from_secs(s).min(LONGEST_WAIT));
        return Err(Refused::TooMany(pause));
    }
    let body = response.text().await.unwrap_or_default();
    if code.is_success() {
        return Ok(body);
    }
    let said: String = body.chars().take(200).collect();
    Err(Refused::Failed(format!(
        "lichess answered {code}: {}",
        said.trim()
    )))
}

/// The games a push's answer says lichess refused (`{"games": [{"error": …}]}`).
fn game_errors(answer: &str) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_str(answer).ok()?;
    let errors: Vec<&str> = answer
        .get("games")?
        .as_array()?
        .iter()
        .filter_map(|g| g.get("error")?.as_str())
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_goes_out_in_requests_of_at_most_a_hundred_games() {
        let games: Vec<String> = (0..250)
            .map(|i| format!("[Round \"1.{i}\"]\n\n*\n\n"))
            .collect();
        let pushes = batches(&games);
        let counts: Vec<usize> = pushes.iter().map(|b| b.matches("[Round").count()).collect();
        assert_eq!(counts, [100, 100, 50]);
        assert_eq!(pushes.concat(), games.concat());
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn the_games_lichess_refused_are_read_from_its_answer() {
        let answer =
            r#"{"games":[{"tags":{},"moves":4},{"tags":{},"error":"Invalid move: Nxe5"}]}"#;
        assert_eq!(game_errors(answer).as_deref(), Some("Invalid move: Nxe5"));
        assert_eq!(game_errors(r#"{"games":[{"moves":1}]}"#), None);
    }
}
