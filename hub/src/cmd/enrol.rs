//! Node enrolment at the edges: the key file a node reads, the answer the technician sees,
//! and enrolment over a running hub's API (the demo enrols its simulated nodes so).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;
use protocol::seal::NodeKey;
use protocol::BoardNo;

use crate::core::hub::Enrolled;

/// `{"hardware": "…", "board": N, "key": "…"}`, as `POST /api/nodes/enrol` answers.
pub fn answer_json(enrolled: &Enrolled) -> String {
    serde_json::json!({
        "hardware": enrolled.hardware,
        "board": enrolled.board,
        "key": enrolled.key.to_text(),
    })
    .to_string()
}

/// Writes `key` as a node's `--key-file` holds it, readable by its owner only.
pub fn write_key_file(path: &Path, key: &NodeKey) -> anyhow::Result<()> {
    write_secret_file(path, &key.to_text())
}

/// Writes `text` and a newline to `path`, readable by its owner only.
pub fn write_secret_file(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("writing the key file {}", path.display()))?;
    writeln!(file, "{text}").with_context(|| format!("writing the key file {}", path.display()))
}

/// Arbiter `name`'s pager credentials from the hub whose HTTP API is at `http` (from its own
/// machine, or with `token`): the JSON `hub pager --key-file` reads.
pub async fn arbiter_over_http(
    client: &reqwest::Client,
    http: SocketAddr,
    token: Option<&str>,
    name: &str,
) -> anyhow::Result<String> {
    let body = serde_json::json!({ "arbiter": name });
    technician_post(client, http, token, "/api/arbiters/enrol", body).await
}

/// A technician's POST of `body` to `path` of the hub at `http`; the answer's text, which
/// must come with a success.
async fn technician_post(
    client: &reqwest::Client,
    http: SocketAddr,
    token: Option<&str>,
    path: &str,
    body: serde_json::Value,
) -> anyhow::Result<String> {
    let mut request = client
        .post(format!("http://{http}{path}"))
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("POST {path}"))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .with_context(|| format!("POST {path}"))?;
    anyhow::ensure!(
        status.is_success(),
        "POST {path} refused ({status}): {text}"
    );
    Ok(text)
}

/// Enrols `hardware` for `board` with the hub whose HTTP API is at `http` (from its own
/// machine, or with `token`); returns the key.
pub async fn over_http(
    client: &reqwest::Client,
    http: SocketAddr,
    token: Option<&str>,
    hardware: &str,
    board: BoardNo,
) -> anyhow::Result<NodeKey> {
    let body = serde_json::json!({ "hardware": hardware, "board": board });
    let text = technician_post(client, http, token, "/api/nodes/enrol", body).await?;
    let answer: serde_json::Value = serde_json::from_str(&text).context("the enrolment's JSON")?;
    let key = answer["key"].as_str().context("no key in the enrolment")?;
    Ok(NodeKey::parse(key)?)
}
