//! The demo's terminal: a line every few seconds with what the hall is doing, read over the
//! hub's own HTTP API as any client would (boards playing, moves made, alerts open), after
//! how long the hall has run.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use crate::core::relay::pgn::clock;
use crate::edge::http::connections::KEEP_ALIVE_ANNOUNCED;

/// How often the line is printed.
const EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, Deserialize)]
struct BoardLine {
    ply: u64,
    status: String,
}

#[derive(Debug, Deserialize)]
struct OpenAlert {
    severity: String,
}

/// What one line says.
#[derive(Debug, Default, PartialEq)]
struct Summary {
    playing: usize,
    finished: usize,
    moves: u64,
    open: usize,
    urgent: usize,
}

impl Summary {
    fn of(boards: &[BoardLine], alerts: &[OpenAlert]) -> Summary {
        Summary {
            playing: boards.iter().filter(|b| b.status == "playing").count(),
            finished: boards.iter().filter(|b| b.status != "playing").count(),
            moves: boards.iter().map(|b| b.ply).sum(),
            open: alerts.len(),
            urgent: alerts.iter().filter(|a| a.severity == "urgent").count(),
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} playing, {} finished · {} moves · {} open alerts ({} urgent)",
            self.playing, self.finished, self.moves, self.open, self.urgent
        )
    }
}

/// Prints the hall's summary every [`EVERY`] until the process ends; a failed read is said
/// once and tried again at the next line.
pub async fn print_every_while(http: SocketAddr, token: String) {
    let mut auth = reqwest::header::HeaderMap::new();
    let bearer = format!("Bearer {token}")
        .parse()
        .expect("a token is a header value");
    auth.insert(reqwest::header::AUTHORIZATION, bearer);
    // A connection idle longer than the hub announces (`Keep-Alive: timeout=5`) is retired,
    // as the hub asks: reqwest reads no `Keep-Alive` header of its own accord.
    let client = reqwest::Client::builder()
        .default_headers(auth)
        .pool_idle_timeout(KEEP_ALIVE_ANNOUNCED - Duration::from_secs(1))
        .build()
        .expect("an HTTP client");
    let base = format!("http://{http}");
    let start = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval(EVERY);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let line = read(&client, &base).await;
        let at = clock(start.elapsed().as_millis() as u64);
        match line {
            Ok(summary) => println!("{at}  {summary}"),
            Err(e) => println!("{at}  (the hub did not answer: {e})"),
        }
    }
}

async fn read(client: &reqwest::Client, base: &str) -> anyhow::Result<Summary> {
    let boards: Vec<BoardLine> = get_json(client, &format!("{base}/api/boards")).await?;
    let alerts: Vec<OpenAlert> = get_json(client, &format!("{base}/api/alerts?state=open")).await?;
    Ok(Summary::of(&boards, &alerts))
}

async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
) -> anyhow::Result<T> {
    let body = client
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .bytes()
        .await?;
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_boards_moves_and_open_alerts() {
        let boards = [
            BoardLine {
                ply: 2,
                status: "playing".into(),
            },
            BoardLine {
                ply: 1,
                status: "flag_fall".into(),
            },
        ];
        let alerts = [
            OpenAlert {
                severity: "urgent".into(),
            },
            OpenAlert {
                severity: "high".into(),
            },
        ];
        assert_eq!(
            Summary::of(&boards, &alerts).to_string(),
            "1 playing, 1 finished · 3 moves · 2 open alerts (1 urgent)"
        );
    }
}
