//! Pushing the round to a lichess broadcast: `POST {url}/api/broadcast/round/{id}/push` with
//! the configured token, the round as plain-text PGN, at most 100 games a request (lichess's
//! limit), whenever the public feed changed; failures are retried with a growing wait.
//!
//! The shell hands the latest feed to a task over a watch channel: a push that is slow or
//! failing never holds the hub up, and only the newest round is ever sent.

use std::time::Duration;

use tokio::sync::watch;

/// Where and how to push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LichessTarget {
    /// `https://lichess.org`, or a test server.
    pub url: String,
    /// The broadcast round's id on lichess.
    pub round_id: String,
    /// A personal API token with the `study:write` scope.
    pub token: String,
}

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

/// Runs the pusher until the sender is dropped: every change of the feed (the games' PGNs)
/// is pushed, newest first.
pub async fn run(target: LichessTarget, mut feed: watch::Receiver<Vec<String>>) {
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
    let endpoint = format!(
        "{}/api/broadcast/round/{}/push",
        target.url.trim_end_matches('/'),
        target.round_id
    );
    while feed.changed().await.is_ok() {
        let games = feed.borrow_and_update().clone();
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
