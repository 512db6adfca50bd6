//! The supervision pages' streams: on each tick the pages get the tiles and alerts that
//! changed; a page that connects gets the whole hall first, then the changes.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::broadcast;

use crate::core::alerts::Alert;
use crate::core::hub::Hub;
use crate::core::ids::BoardNo;
use crate::core::time::HubMs;
use crate::edge::http::api::LiveStart;
use crate::metrics::Metrics;
use crate::pairings::teams;
use crate::view::tiles::{self, Audience, SentTiles, Tile};

/// Batches a page may fall behind before it is sent the whole hall again.
const PAGE_BACKLOG: usize = 64;

/// One audience's pages: what they were sent, and the channel to them.
struct Pages {
    sent: SentTiles,
    updates: broadcast::Sender<Arc<str>>,
}

impl Default for Pages {
    fn default() -> Pages {
        Pages {
            sent: SentTiles::default(),
            updates: broadcast::channel(PAGE_BACKLOG).0,
        }
    }
}

/// The supervision pages of both audiences.
#[derive(Default)]
pub(super) struct LivePages {
    arbiters: Pages,
    spectators: Pages,
    /// Alert changes made durable since the arbiters' pages were last sent a batch.
    alerts: Vec<Alert>,
}

impl LivePages {
    fn pages(&mut self, audience: Audience) -> &mut Pages {
        match audience {
            Audience::Arbiters => &mut self.arbiters,
            Audience::Spectators => &mut self.spectators,
        }
    }

    /// An alert change the pagers were sent: the arbiters' pages get it with the next batch.
    pub(super) fn alert_changed(&mut self, alert: &Alert) {
        if self.arbiters.updates.receiver_count() > 0 {
            self.alerts.push(alert.clone());
        }
    }
}

/// A zone of the hall map: its rows of boards, as the configuration lists them.
#[derive(Serialize)]
struct ZoneLayout<'a> {
    name: &'a str,
    /// `[from, to]` board numbers.
    rows: Vec<[BoardNo; 2]>,
}

/// What a page starts from (the `hall` event of its stream).
#[derive(Serialize)]
struct PageStart<'a> {
    audience: Audience,
    now: u64,
    event: &'a str,
    event_name: Option<&'a str>,
    site: Option<&'a str>,
    round: Option<crate::core::ids::RoundNo>,
    /// The round's scheduled start (Unix ms).
    round_start: Option<u64>,
    /// The spectators' delay, ms.
    delay_ms: u64,
    zones: Vec<ZoneLayout<'a>>,
    /// The round's team matches (a team event): the page groups their boards and keeps
    /// their scores.
    matches: Vec<teams::Match>,
    tiles: Vec<&'a Tile>,
    /// Arbiters only: the open alerts.
    #[serde(skip_serializing_if = "Option::is_none")]
    alerts: Option<Vec<&'a Alert>>,
}

/// A batch of changes (the `update` event of a page's stream).
#[derive(Serialize)]
struct Update<'a> {
    now: u64,
    /// The round in play: a page that shows another fetches the hall again.
    round: crate::core::ids::RoundNo,
    tiles: &'a [Tile],
    /// Alerts that changed, in any state: a page drops those no longer open.
    #[serde(skip_serializing_if = "<[Alert]>::is_empty")]
    alerts: &'a [Alert],
}

impl LivePages {
    /// Sends every audience's pages what changed since their last batch.
    pub(super) fn publish(&mut self, hub: &Hub, metrics: &Metrics, now: HubMs) {
        for audience in [Audience::Arbiters, Audience::Spectators] {
            if self.pages(audience).updates.receiver_count() > 0 {
                self.publish_to(hub, metrics, audience, now);
            }
        }
    }

    fn publish_to(&mut self, hub: &Hub, metrics: &Metrics, audience: Audience, now: HubMs) {
        let fresh = fresh_tiles(hub, audience, now);
        let tiles = self.pages(audience).sent.changed(fresh);
        let alerts = match audience {
            Audience::Arbiters => std::mem::take(&mut self.alerts),
            Audience::Spectators => Vec::new(),
        };
        if tiles.is_empty() && alerts.is_empty() {
            return;
        }
        let update = Update {
            now: now.0,
            round: hub.round_in_play(),
            tiles: &tiles,
            alerts: &alerts,
        };
        let json = serde_json::to_string(&update).expect("tiles serialize");
        // No page listening is not an error: the next one starts from the whole hall.
        let _ = self.pages(audience).updates.send(json.into());
        metrics.live_update();
    }

    /// A page connects: the whole hall, then every batch after it.
    pub(super) fn start(
        &mut self,
        hub: &Hub,
        metrics: &Metrics,
        audience: Audience,
        now: HubMs,
    ) -> LiveStart {
        // Bring the pages already open up to now, so the new one starts where they are.
        self.publish_to(hub, metrics, audience, now);
        let updates = self.pages(audience).updates.subscribe();
        let zones = hub
            .desk()
            .routing()
            .zones
            .iter()
            .map(|z| ZoneLayout {
                name: &z.name,
                rows: z.boards.iter().map(|r| [*r.start(), *r.end()]).collect(),
            })
            .collect();
        let alerts = (audience == Audience::Arbiters)
            .then(|| hub.desk().alerts().filter(|a| a.state.is_open()).collect());
        let hall = PageStart {
            audience,
            now: now.0,
            event: hub.event(),
            event_name: hub.broadcast().event_name.as_deref(),
            site: hub.broadcast().site.as_deref(),
            round: Some(hub.round_in_play()),
            round_start: hub.rounds().start(hub.round_in_play()),
            delay_ms: hub.broadcast().delay_ms,
            zones,
            matches: teams::matches(hub.rounds().games(hub.round_in_play())),
            tiles: self.pages(audience).sent.all().collect(),
            alerts,
        };
        let hall = serde_json::to_string(&hall).expect("the hall serializes");
        LiveStart { hall, updates }
    }
}

fn fresh_tiles(hub: &Hub, audience: Audience, now: HubMs) -> Vec<Tile> {
    let badges = match audience {
        Audience::Arbiters => tiles::alert_badges(hub.desk().alerts()),
        Audience::Spectators => Default::default(),
    };
    tiles::tiles(
        audience,
        hub.hall(),
        hub.relay(),
        hub.rounds(),
        &badges,
        hub.broadcast(),
        now,
    )
}

/// A board as spectators see it; `None` for a board no node reported.
pub(super) fn spectator_board(
    hub: &Hub,
    board: protocol::BoardNo,
    now: HubMs,
) -> Option<tiles::SpectatorBoard> {
    let state = hub.hall().board(board)?;
    let pairing = tiles::pairing(hub.hall(), hub.rounds(), board);
    Some(tiles::spectator_board(
        board,
        state,
        pairing,
        hub.relay(),
        hub.broadcast(),
        now,
    ))
}
