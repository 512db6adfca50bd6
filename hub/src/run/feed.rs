//! The shell's broadcast work: the MQTT live feed (held back by the delay), and following
//! the public feed for the LiveChess folder and the lichess pusher.

use protocol::topic;

use super::Shell;
use crate::core::game::GameEvent;
use crate::core::hall::Effect;
use crate::core::time::HubMs;
use crate::view::feed::{self, FeedGame};

impl Shell {
    /// Queues a move, or a game's end, for the MQTT live feed, due after the broadcast
    /// delay.
    pub(super) fn feed_move(&mut self, now: HubMs, effect: &Effect) {
        let Effect::Game { board, event } = effect else {
            return;
        };
        if !matches!(
            event,
            GameEvent::MoveCompleted { .. } | GameEvent::GameOver { .. }
        ) {
            return;
        }
        let round = self.rounds.in_play().unwrap_or(1);
        if let Some(message) = feed::move_message(&self.hall, board.0, round) {
            let due = HubMs(now.0 + self.broadcast.delay_ms);
            let topic = topic::broadcast_move(&self.event, round, *board);
            self.feed_queue.push_back((due, topic, message));
        }
        self.publish_feed(now);
    }

    /// When the public feed changed (looked at most once a second): rewrites the LiveChess
    /// folder and hands the round to the lichess pusher. A folder that cannot be written is
    /// logged; the hub goes on.
    pub(super) fn follow_feed(&mut self, now: HubMs) {
        let wanted = self.broadcast.folder.is_some() || self.lichess.is_some();
        if !wanted || now.since(self.feed_followed.1) < 1_000 {
            return;
        }
        self.feed_followed.1 = now;
        let round = self.rounds.in_play().unwrap_or(1);
        let Some(games) = self.feed(now, round, None) else {
            return;
        };
        let print = feed::fingerprint(&games);
        if Some(print) == self.feed_followed.0 {
            return;
        }
        self.feed_followed.0 = Some(print);
        if let Some(lichess) = &self.lichess {
            let _ = lichess.send(games.iter().map(|g| g.pgn.clone()).collect());
        }
        if let Some(folder) = self.broadcast.folder.clone() {
            let earlier: Vec<usize> = (1..round)
                .map(|r| self.rounds.pairings.get(&r).map_or(0, Vec::len))
                .collect();
            let name = self
                .broadcast
                .event_name
                .clone()
                .unwrap_or_else(|| self.event.clone());
            let pairings = self.rounds.pairings.get(&round).map(Vec::as_slice);
            if let Err(e) = crate::edge::livechess::write(
                &folder,
                &self.event,
                &name,
                round,
                &earlier,
                &games,
                pairings,
                &mut self.folder_written,
            ) {
                tracing::warn!(folder = %folder.display(), error = %e, "LiveChess folder not written");
                self.feed_followed.0 = None; // try again
            }
        }
    }

    /// Publishes the live feed's messages that are due.
    pub(super) fn publish_feed(&mut self, now: HubMs) {
        while self.feed_queue.front().is_some_and(|(due, ..)| *due <= now) {
            let (_, topic, message) = self.feed_queue.pop_front().expect("a front");
            self.link.publish_json(topic, message, true);
        }
    }

    /// The public feed's games of `round` (one `board`, or all).
    pub(super) fn feed(
        &mut self,
        now: HubMs,
        round: usize,
        board: Option<u16>,
    ) -> Option<Vec<FeedGame>> {
        feed::games(
            &self.hall,
            &self.relay,
            &self.rounds,
            &self.broadcast,
            &self.event,
            now,
            round,
            board,
            &mut self.feed_cache,
        )
    }
}
