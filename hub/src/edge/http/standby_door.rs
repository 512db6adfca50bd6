//! A cluster's standby hub answers what it knows and refuses every change: 503, with where
//! the active hub answers, so a technician's script or an arbiter's browser goes there.

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// `Some(active hub's address)` while this hub is a standby; always `None` on a hall of
/// one hub.
pub type Standby = tokio::sync::watch::Receiver<Option<String>>;

/// The door of a hub that is never a standby.
pub fn never() -> Standby {
    let (tx, rx) = tokio::sync::watch::channel(None);
    // The receiver keeps the last value when the sender is gone.
    drop(tx);
    rx
}

/// Lets reads through; a change to a standby is answered 503 with the active hub's address.
pub async fn refuse_changes(
    State(standby): State<Standby>,
    request: Request,
    next: Next,
) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        if let Some(active) = standby.borrow().clone() {
            // `null` until the standby has seen who is active.
            let active = (!active.is_empty()).then_some(active);
            let body = serde_json::json!({
                "error": "this hub is the cluster's standby: changes go to the active hub",
                "active": active,
            });
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response();
        }
    }
    next.run(request).await
}
