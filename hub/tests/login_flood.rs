//! Wrong tokens flooded at a real hub from ten loopback addresses, by every door a token
//! enters through (the page's login, a script's Bearer on an arbiters' route and on an open
//! one, ntfy's Bearer on `/auth`, ntfy's `auth` parameter with Basic on a phone's stream):
//! only their wrong tokens are slowed (429 with `Retry-After`), while the right token logs
//! in at once from another address and from a flooding one (a NAT); every wrong token
//! is counted in `/metrics`, and the log does not grow with the flood.

use crate::support;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use base64::Engine;
use support::{http_get, Hub};

/// One request from `source` (any 127.0.0.0/8 address reaches the hub on loopback), on a
/// connection of its own; the status and the `Retry-After` header, if any.
async fn request_from(
    source: IpAddr,
    hub: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, Option<u64>) {
    let client = reqwest::Client::builder()
        .local_address(source)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client
        .request(method, format!("http://{hub}{path}"))
        .body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok()?.trim().parse().ok());
    (response.status().as_u16(), retry_after)
}

/// The `i`th guess of a flood: each door in turn, a wrong token each time.
fn guess(i: usize) -> (&'static str, String, Vec<(&'static str, String)>, String) {
    let wrong = format!("guess-{i:032}");
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    match i % 5 {
        0 => (
            "POST",
            "/api/session".into(),
            vec![("Content-Type", "application/json".into())],
            format!(r#"{{"token": "{wrong}"}}"#),
        ),
        1 => (
            "GET",
            "/api/alerts".into(),
            vec![("Authorization", format!("Bearer {wrong}"))],
            String::new(),
        ),
        2 => (
            "GET",
            "/api/cluster".into(),
            vec![("Authorization", format!("Bearer {wrong}"))],
            String::new(),
        ),
        3 => (
            "GET",
            "/zeitnot-any/auth".into(),
            vec![("Authorization", format!("Bearer tk_{wrong}"))],
            String::new(),
        ),
        _ => {
            let auth = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(format!("Basic {}", b64(&format!(":{wrong}"))));
            (
                "GET",
                format!("/zeitnot-any/json?poll=1&auth={auth}"),
                Vec::new(),
                String::new(),
            )
        }
    }
}

const FLOODERS: u8 = 10;
const GUESSES_EACH: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_wrong_tokens_slows_its_senders_and_never_the_right_token() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = tokio::task::spawn_blocking({
        let dir = dir.path().to_owned();
        move || Hub::embedded(&dir)
    })
    .await
    .unwrap();
    let addr = hub.http;
    let web = hub.web.clone();
    let token = hub.token.clone();
    let log_before = std::fs::metadata(&hub.log).map_or(0, |m| m.len());

    let flood = (0..FLOODERS).map(|n| {
        tokio::spawn(async move {
            let source = IpAddr::from([127, 0, 0, 2 + n]);
            let mut statuses = Vec::new();
            for i in 0..GUESSES_EACH {
                let (method, path, headers, body) = guess(i);
                let (status, _) = request_from(source, addr, method, &path, &headers, &body).await;
                statuses.push(status);
            }
            statuses
        })
    });
    let flood: Vec<_> = flood.collect();

    // Meanwhile the right token, from an address of its own and from a flooding one (an
    // arbiter behind the guesser's NAT): in at the first try, every time, by the page's
    // login and by Bearer. Only wrong tokens are throttled.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for me in [IpAddr::from([127, 0, 0, 1]), IpAddr::from([127, 0, 0, 2])] {
        for _ in 0..5 {
            let login = format!(r#"{{"token": "{token}"}}"#);
            let json = [("Content-Type", "application/json".to_owned())];
            let (status, _) = request_from(me, addr, "POST", "/api/session", &json, &login).await;
            assert_eq!(status, 204, "the right token from {me} during the flood");
            let bearer = [("Authorization", format!("Bearer {token}"))];
            let (status, _) = request_from(me, addr, "GET", "/api/alerts", &bearer, "").await;
            assert_eq!(status, 200, "the right Bearer from {me} during the flood");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    let mut total = 0;
    for (n, statuses) in futures_util::future::join_all(flood)
        .await
        .into_iter()
        .enumerate()
    {
        let statuses = statuses.unwrap();
        total += statuses.len();
        assert!(
            statuses.iter().all(|s| [401, 404, 429].contains(s)),
            "flooder {n}: {statuses:?}"
        );
        let slowed = statuses.iter().filter(|s| **s == 429).count();
        assert!(
            slowed >= GUESSES_EACH * 3 / 4,
            "flooder {n} was slowed only {slowed} times: {statuses:?}"
        );
    }

    // After the flood, while its window lasts: a flooding address's wrong token still
    // waits, its right one is in at once.
    let flooder = IpAddr::from([127, 0, 0, 2]);
    let json = [("Content-Type", "application/json".to_owned())];
    let wrong = r#"{"token": "guess-after-the-flood-0000000000"}"#;
    // Two at once: one of them at most is the address's checked try of the second.
    let mut answers = Vec::new();
    for _ in 0..2 {
        answers.push(request_from(flooder, addr, "POST", "/api/session", &json, wrong).await);
    }
    assert!(
        answers
            .iter()
            .any(|(status, wait)| *status == 429 && wait.is_some_and(|w| w <= 2)),
        "a wrong token from a flooding address waits: {answers:?}"
    );
    let login = format!(r#"{{"token": "{token}"}}"#);
    let (status, _) = request_from(flooder, addr, "POST", "/api/session", &json, &login).await;
    assert_eq!(status, 204, "the right token from a flooding address");

    let (_, metrics) = tokio::task::spawn_blocking(move || http_get(&web, "/metrics").unwrap())
        .await
        .unwrap();
    let refused: usize = metrics
        .lines()
        .find_map(|l| l.strip_prefix("zeitnot_logins_refused_total "))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(
        refused >= total,
        "{refused} refusals counted of {total} wrong tokens"
    );
    // One line a second at most per kind of refusal, not one per guess.
    let grown = std::fs::metadata(&hub.log).map_or(0, |m| m.len()) - log_before;
    assert!(grown < 20_000, "the log grew by {grown} bytes");
}
