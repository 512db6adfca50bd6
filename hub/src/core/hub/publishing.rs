//! What goes out of the hub besides answers: alert changes once durable, each zone's open
//! list for the pagers (at most every [`OPEN_LIST_EVERY_MS`]), and the live feed's moves
//! after the broadcast delay.

use std::collections::{BTreeSet, VecDeque};

use protocol::topic;

use super::durable::Deferred;
use super::output::{Count, Output, RequestId, Write};
use super::{Hub, OPEN_LIST_EVERY_MS};
use crate::core::alerts::{most_urgent, AlertChange, Change};
use crate::core::effect::Effect;
use crate::core::relay::public::LiveMove;
use crate::core::time::HubMs;

/// The hub's member for what goes out on a schedule.
#[derive(Debug, Default)]
pub(super) struct Publishing {
    /// The MQTT live feed's moves waiting for the broadcast delay: due, topic, move.
    pub(super) feed_queue: VecDeque<(HubMs, String, LiveMove)>,
    /// Zones whose open list changed since it was last published, and when that was.
    pub(super) stale_lists: BTreeSet<String>,
    pub(super) lists_published_at: HubMs,
}

impl Hub {
    /// Writes alert changes; each is published (and `request` answered with the last)
    /// once durable.
    pub(super) fn record_alerts(
        &mut self,
        changes: Vec<AlertChange>,
        mut request: Option<RequestId>,
    ) {
        let last = changes.len().saturating_sub(1);
        for (i, change) in changes.into_iter().enumerate() {
            let at = self.write(Write::Alert(Box::new(change.alert.clone())));
            if change.change == Change::Raised {
                self.count(Count::AlertRaised);
                tracing::info!(id = change.alert.id.0, board = ?change.alert.board, kind = ?change.alert.kind, zone = %change.alert.zone, "alert raised");
            }
            let request = if i == last { request.take() } else { None };
            self.pending
                .wait(at, Deferred::Alert(Box::new(change), request));
        }
    }

    /// Every zone's open list again, signed at `now`: a pager that has seen no list for a
    /// while knows the one it shows may be stale, and a list recorded earlier is older than
    /// the one it holds.
    pub fn republish_open_lists(&mut self, now: HubMs) {
        self.now = self.now.max(now);
        self.publish_open_lists(self.desk.routing().zone_names());
    }

    /// Republishes the open lists of the zones whose alerts changed, at most every
    /// [`OPEN_LIST_EVERY_MS`].
    pub(super) fn publish_stale_lists(&mut self, now: HubMs) {
        if self.publishing.stale_lists.is_empty()
            || now.since(self.publishing.lists_published_at) < OPEN_LIST_EVERY_MS
        {
            return;
        }
        self.publishing.lists_published_at = now;
        let zones = std::mem::take(&mut self.publishing.stale_lists);
        self.publish_open_lists(zones);
    }

    pub(super) fn publish_open_lists(&mut self, zones: impl IntoIterator<Item = String>) {
        for zone in zones {
            let (open, alerts) = most_urgent(self.desk.open_in_zone(&zone));
            let topic = topic::open_alerts(&self.event, &zone);
            self.outputs.push_back(Output::OpenList {
                topic,
                zone,
                at: self.now,
                open,
                alerts,
            });
        }
    }

    /// Queues a move, or a game's end, for the MQTT live feed, due after the broadcast
    /// delay.
    pub(super) fn feed_move(&mut self, now: HubMs, effect: &Effect) {
        use crate::core::game::GameEvent;
        let Effect::Game { board, event } = effect else {
            return;
        };
        if !matches!(
            event,
            GameEvent::MoveCompleted { .. } | GameEvent::GameOver { .. }
        ) {
            return;
        }
        let round = self.hall.round_of(*board);
        if let Some(message) = LiveMove::of(&self.hall, *board, round) {
            let due = now.plus_ms(self.broadcast.delay_ms);
            let topic = topic::broadcast_move(&self.event, round.index(), *board);
            self.publishing.feed_queue.push_back((due, topic, message));
        }
        self.publish_feed(now);
    }

    /// Publishes the live feed's messages that are due.
    pub(super) fn publish_feed(&mut self, now: HubMs) {
        while self
            .publishing
            .feed_queue
            .front()
            .is_some_and(|(due, ..)| *due <= now)
        {
            let (_, topic, message) = self.publishing.feed_queue.pop_front().expect("a front");
            self.outputs.push_back(Output::LiveMove { topic, message });
        }
    }
}
