//! The HTTP API: boards as JSON, health and metrics.
//!
//! Handlers never touch the core: they send a [`Query`] to the loop that owns it and wait for
//! the answer, so the core keeps one owner.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use protocol::BoardNo;
use tokio::sync::{mpsc, oneshot};

use crate::core::board::{BoardDetail, BoardSummary};
use crate::metrics::Metrics;

/// A question for the loop that owns the hall.
pub enum Query {
    Boards(oneshot::Sender<Vec<BoardSummary>>),
    Board(BoardNo, oneshot::Sender<Option<BoardDetail>>),
    ConnectedNodes(oneshot::Sender<usize>),
}

#[derive(Clone)]
struct Api {
    queries: mpsc::Sender<Query>,
    metrics: Arc<Metrics>,
}

impl Api {
    async fn ask<T>(&self, query: impl FnOnce(oneshot::Sender<T>) -> Query) -> Result<T, Response> {
        let (reply, answer) = oneshot::channel();
        let unavailable = || (StatusCode::SERVICE_UNAVAILABLE, "hub is stopping").into_response();
        self.queries
            .send(query(reply))
            .await
            .map_err(|_| unavailable())?;
        answer.await.map_err(|_| unavailable())
    }
}

/// Binds `addr` and returns the bound address and the server future.
pub async fn bind(
    addr: SocketAddr,
    queries: mpsc::Sender<Query>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<(
    SocketAddr,
    impl std::future::Future<Output = std::io::Result<()>>,
)> {
    let router = Router::new()
        .route("/api/boards", get(boards))
        .route("/api/boards/{n}", get(board))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .with_state(Api { queries, metrics });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("HTTP address {addr}: {e}"))?;
    let local = listener.local_addr()?;
    Ok((local, async move { axum::serve(listener, router).await }))
}

async fn boards(State(api): State<Api>) -> Result<Json<Vec<BoardSummary>>, Response> {
    api.ask(Query::Boards).await.map(Json)
}

async fn board(
    State(api): State<Api>,
    Path(n): Path<String>,
) -> Result<Json<BoardDetail>, Response> {
    let n: u16 = n.parse().map_err(|_| {
        (
            StatusCode::BAD_REQUEST,
            format!("{n:?} is not a board number"),
        )
            .into_response()
    })?;
    api.ask(|reply| Query::Board(BoardNo(n), reply))
        .await?
        .map(Json)
        .ok_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                format!("board {n} has reported nothing"),
            )
                .into_response()
        })
}

async fn healthz(State(api): State<Api>) -> Result<&'static str, Response> {
    // Answering proves the core loop is alive, not only the HTTP server.
    api.ask(Query::ConnectedNodes).await.map(|_| "ok\n")
}

async fn metrics_text(State(api): State<Api>) -> Result<Response, Response> {
    let connected = api.ask(Query::ConnectedNodes).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        api.metrics.render(connected),
    )
        .into_response())
}
