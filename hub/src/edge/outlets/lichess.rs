//! Pushing the round in play to a lichess broadcast: `POST
//! {url}/api/broadcast/round/{id}/push` with the configured token, the round as plain-text
//! PGN, at most 100 games a request (lichess's limit), whenever the public feed changed;
//! failures are retried with a growing wait. Each round of the event is its own lichess
//! round: its id from `[[rounds]] lichess_round_id`, or `[broadcast.lichess] round_id` for
//! the round the hub began in.
//!
//! The shell hands the latest feed to a task over a watch channel: a push that is slow or
//! failing never holds the hub up, and only the newest state is ever sent.

use std::time::Duration;

use tokio::sync::watch;

/// Where and how to push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LichessTarget {
    /// `https://lichess.org`, or a test server.
    pub url: String,
    /// The broadcast round's id on lichess for the round the hub begins in.
    pub round_id: String,
    /// Each round's lichess round id (`[[rounds]] lichess_round_id`).
    pub round_ids: std::collections::BTreeMap<crate::core::ids::RoundNo, String>,
    /// A personal API token with the `study:write` scope.
    pub token: String,
}

impl LichessTarget {
    /// The lichess round `round` is pushed to: its own, or for the round the hub began in
    /// (`first`), the broadcast's; `None`: not pushed.
    pub fn round_id(
        &self,
        round: crate::core::ids::RoundNo,
        first: crate::core::ids::RoundNo,
    ) -> Option<&str> {
        self.round_ids
            .get(&round)
            .map(String::as_str)
            .or_else(|| (round == first).then_some(self.round_id.as_str()))
    }
}

/// What the pusher is handed: a lichess round id and its games' PGNs.
pub type Push = (String, Vec<String>);

/// Games a single push may carry (lichess's limit).
pub const GAMES_PER_PUSH: usize = 100;

/// Waits between attempts after a failure: 1 s, doubling, at most a minute.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(60);
/// A changed feed is pushed at most this often.
const PUSH_EVERY: Duration = Duration::from_secs(1);

/// The games' PGNs in requests of at most [`GAMES_PER_PUSH`] games each.
pub fn batches(games: &[String]) -> Vec<String> {
    games
        .chunks(GAMES_PER_PUSH)
        .map(|chunk| chunk.concat())
        .collect()
}

/// Runs the pusher until the sender is dropped: every change of the feed (a round's games)
/// is pushed, newest first.
pub async fn run(target: LichessTarget, mut feed: watch::Receiver<Push>) {
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
    while feed.changed().await.is_ok() {
        let (round_id, games) = feed.borrow_and_update().clone();
        let endpoint = format!(
            "{}/api/broadcast/round/{round_id}/push",
            target.url.trim_end_matches('/'),
        );
        let mut wait = RETRY_FIRST;
        'retry: loop {
            for body in batches(&games) {
                let sent = client
                    .post(&endpoint)
                    .bearer_auth(&target.token)
                    .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
                    .body(body)
                    .send()
                    .await;
                let failure = match sent {
                    Ok(response) if response.status().is_success() => None,
                    Ok(response) => Some(format!("lichess answered {}", response.status())),
                    Err(e) => Some(e.to_string()),
                };
                if let Some(why) = failure {
                    tracing::warn!(%why, retry_in = ?wait, "push to lichess failed");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(RETRY_MAX);
                    if feed.has_changed().unwrap_or(false) {
                        break 'retry; // a newer round supersedes this one
                    }
                    continue 'retry;
                }
            }
            tracing::debug!(games = games.len(), "round pushed to lichess");
            break;
        }
        tokio::time::sleep(PUSH_EVERY).await;
    }
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
}
