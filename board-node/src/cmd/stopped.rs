//! When a node stops: at SIGTERM (systemd stopping it) or Ctrl-C.

/// Resolves at SIGTERM or Ctrl-C.
pub async fn stopped() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            tracing::warn!(error = %e, "SIGTERM cannot be caught; Ctrl-C still stops the node");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
