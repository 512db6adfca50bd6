//! How an outlet is doing, kept by its task and read by the API and the page: what each
//! destination last got, and while the outlet fails, why (logged once, not at every retry).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::core::ids::RoundNo;

/// An outlet's status as `GET /api/broadcast/outlets` answers it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OutletStatus {
    /// `livechess`, `lichess`, `ftp`.
    pub outlet: &'static str,
    /// Where to, without its secrets.
    pub target: String,
    /// Why the last attempt failed, while it fails; `null` once one succeeds.
    pub failing: Option<String>,
    /// Nothing is sent before this (Unix ms): lichess asked to wait (429).
    pub waiting_until: Option<u64>,
    /// Each destination (a lichess round, a round's folder or file) as last sent.
    pub destinations: BTreeMap<String, Destination>,
}

/// What one destination last got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// The hub's round.
    pub round: RoundNo,
    /// The boards it carries (`null`: every board).
    pub boards: Option<String>,
    /// Games sent.
    pub games: usize,
    /// When it last got the feed as it stands (Unix ms).
    pub sent_at: Option<u64>,
    /// The round is marked finished there (lichess).
    pub finished: bool,
    /// Why the last attempt at this destination failed, while it fails (a lichess round
    /// with a source URL refuses pushes, whatever the others do).
    pub failing: Option<String>,
}

/// An outlet's status, shared by the outlet and its task.
#[derive(Debug, Clone, Default)]
pub struct StatusBoard(Arc<Mutex<OutletStatus>>);

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl StatusBoard {
    pub fn new(outlet: &'static str, target: String) -> StatusBoard {
        StatusBoard(Arc::new(Mutex::new(OutletStatus {
            outlet,
            target,
            ..OutletStatus::default()
        })))
    }

    fn with<T>(&self, f: impl FnOnce(&mut OutletStatus) -> T) -> T {
        let mut status = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut status)
    }

    pub fn get(&self) -> OutletStatus {
        self.with(|s| s.clone())
    }

    /// `name` got the feed as it stands: its games, and whether it is marked finished.
    pub fn sent(&self, name: &str, destination: Destination) {
        self.with(|s| {
            s.failing = None;
            s.waiting_until = None;
            s.destinations.insert(
                name.to_owned(),
                Destination {
                    sent_at: Some(unix_ms()),
                    ..destination
                },
            );
        });
    }

    /// An attempt failed for `why`: `true` when that is news (to be logged), `false` when
    /// it failed so before.
    pub fn failed(&self, why: &str) -> bool {
        self.with(|s| {
            let news = s.failing.as_deref() != Some(why);
            s.failing = Some(why.to_owned());
            news
        })
    }

    /// An attempt at destination `name` failed for `why`: `true` when that is news for it.
    pub fn destination_failed(&self, name: &str, why: &str) -> bool {
        self.with(|s| {
            let entry = s.destinations.entry(name.to_owned()).or_default();
            let news = entry.failing.as_deref() != Some(why);
            entry.failing = Some(why.to_owned());
            s.failing = Some(format!("{name}: {why}"));
            news
        })
    }

    /// Nothing is sent for `wait`.
    pub fn waiting(&self, wait: std::time::Duration) {
        let until = unix_ms() + wait.as_millis() as u64;
        self.with(|s| s.waiting_until = Some(until));
    }
}
