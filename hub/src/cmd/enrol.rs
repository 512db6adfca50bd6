//! Node enrolment at the edges: the key file a node reads, the answer the technician sees,
//! and enrolment over a running hub's API (the demo enrols its simulated nodes so).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;
use protocol::seal::NodeKey;
use protocol::BoardNo;

use crate::core::hub::Enrolled;

/// `{"hardware": "…", "board": N, "key": "…", "ca": "…"}`, as `POST /api/nodes/enrol`
/// answers.
pub fn answer_json(enrolled: &Enrolled, ca: &str) -> String {
    serde_json::json!({
        "hardware": enrolled.hardware,
        "board": enrolled.board,
        "key": enrolled.key.to_text(),
        "ca": ca,
    })
    .to_string()
}

/// Writes `key` as a node's `--key-file` holds it, readable by its owner only.
pub fn write_key_file(path: &Path, key: &NodeKey) -> anyhow::Result<()> {
    crate::edge::keys::secret_file::write(path, &key.to_text())
}

/// Arbiter `name`'s pager credentials from the hub whose HTTP API is at `http` (with the arbiters' `token`): the JSON `hub pager --key-file` reads.
pub async fn arbiter_over_http(
    client: &reqwest::Client,
    http: SocketAddr,
    token: &str,
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
    token: &str,
    path: &str,
    body: serde_json::Value,
) -> anyhow::Result<String> {
    let response = client
        .post(format!("http://{http}{path}"))
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .bearer_auth(token)
        .body(body.to_string())
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

/// Enrols `hardware` for `board` with the hub whose HTTP API is at `http` (with the arbiters' `token`); returns the key.
pub async fn over_http(
    client: &reqwest::Client,
    http: SocketAddr,
    token: &str,
    hardware: &str,
    board: BoardNo,
) -> anyhow::Result<NodeKey> {
    let body = serde_json::json!({ "hardware": hardware, "board": board });
    let text = technician_post(client, http, token, "/api/nodes/enrol", body).await?;
    let answer: serde_json::Value = serde_json::from_str(&text).context("the enrolment's JSON")?;
    let key = answer["key"].as_str().context("no key in the enrolment")?;
    Ok(NodeKey::parse(key)?)
}
