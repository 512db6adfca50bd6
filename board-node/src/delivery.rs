//! Delivery to the hub as a state machine, sans IO: which outbox events go on the wire and
//! when they go again, fed the connection's events, the hub's downlinks and the time.
//!
//! Sending is a sliding window over the outbox: at most [`WINDOW`] events are unacknowledged
//! on the wire; after a reconnect, a `ResendFrom`, a `ContinueAt`, or an acknowledgement
//! timeout without progress, the window restarts at the oldest unacknowledged event. Each
//! timeout in a row doubles the next, up to [`MAX_ACK_TIMEOUT`] (as TCP backs off its
//! retransmissions): a hub that is slow, not gone, is not buried under every node's window
//! again every three seconds.
//!
//! The outbox (on disk) holds the events and what the hub acknowledged; every call is given
//! the outbox's acknowledged sequence number (`acked`), so the two cannot disagree. The node
//! ([`crate::node`]) asks [`Delivery::poll_window`] what to publish after each change, and
//! reports each event published with [`Delivery::sent`].

use std::time::{Duration, Instant};

use protocol::Seq;

/// Unacknowledged events on the wire at most.
pub const WINDOW: u64 = 256;
/// Without an acknowledgement for this long, everything unacknowledged is sent again.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest the timeout grows to while acknowledgements stay away.
pub const MAX_ACK_TIMEOUT: Duration = Duration::from_secs(30);
/// Timeouts in a row, while connected, after which the session itself is suspect and is
/// made anew: a clustered broker that lost a node can take a session back that is
/// connected and deaf (seen with NATS's MQTT gateway), and only a new one is heard again.
pub const RECONNECT_AFTER: u32 = 2;

/// Outbox events to publish: from `from`, at most `count` of them, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: Seq,
    pub count: usize,
}

/// Which outbox events are on the wire in this connection, and when they go again.
#[derive(Debug, Clone)]
pub struct Delivery {
    connected: bool,
    /// The highest sequence number published in the current window.
    sent_up_to: Seq,
    /// When the hub last made progress (or the window last started).
    last_progress: Instant,
    /// How long without an acknowledgement before the window is sent again.
    ack_timeout: Duration,
    /// Timeouts since the last progress or connect.
    timeouts: u32,
}

impl Delivery {
    /// A node starting with the outbox acknowledged up to `acked`, not yet connected.
    pub fn new(now: Instant, acked: Seq) -> Delivery {
        Delivery {
            connected: false,
            sent_up_to: acked,
            last_progress: now,
            ack_timeout: ACK_TIMEOUT,
            timeouts: 0,
        }
    }

    /// The broker session is up (again): everything unacknowledged goes out anew.
    pub fn handle_connected(&mut self, now: Instant, acked: Seq) {
        self.connected = true;
        self.progressed(now);
        self.restart_at(now, acked);
    }

    /// The broker session is gone: nothing is sent until it is back.
    pub fn handle_disconnected(&mut self) {
        self.connected = false;
    }

    /// The hub acknowledged events the outbox had not trimmed yet: the timeout starts over.
    pub fn handle_progress(&mut self, now: Instant) {
        self.progressed(now);
    }

    /// The hub asks for everything from `seq` again (it saw a gap); what it acknowledged is
    /// never sent again.
    pub fn handle_resend_from(&mut self, now: Instant, seq: Seq, acked: Seq) {
        self.restart_at(now, Seq(seq.0.saturating_sub(1)).max(acked));
    }

    /// The outbox's events were renumbered (`ContinueAt`): the window starts over after
    /// what the hub has.
    pub fn handle_continue_at(&mut self, now: Instant, acked: Seq) {
        self.restart_at(now, acked);
    }

    /// The time passes: with events unacknowledged (`unacked`) and no progress for the
    /// timeout, the window starts over at `acked` and the next timeout is twice as long.
    /// Returns whether it did.
    pub fn handle_timeout(&mut self, now: Instant, acked: Seq, unacked: bool) -> bool {
        let due = now.saturating_duration_since(self.last_progress) > self.ack_timeout;
        if !(self.connected && unacked && due) {
            return false;
        }
        tracing::debug!(timeout = ?self.ack_timeout, "no acknowledgement; resending");
        self.ack_timeout = (self.ack_timeout * 2).min(MAX_ACK_TIMEOUT);
        self.timeouts += 1;
        self.restart_at(now, acked);
        true
    }

    /// What to publish now, if the window has room: the events after those on the wire.
    pub fn poll_window(&mut self, now: Instant, acked: Seq) -> Option<Window> {
        if !self.connected {
            return None;
        }
        let room = (acked.0 + WINDOW).saturating_sub(self.sent_up_to.0);
        if room == 0 {
            return None;
        }
        if self.sent_up_to <= acked {
            // Nothing was in flight: the wait for an acknowledgement starts now, not at the
            // last one (an idle board's next event is not resent at once).
            self.last_progress = now;
        }
        Some(Window {
            from: Seq(self.sent_up_to.0.max(acked.0) + 1),
            count: usize::try_from(room).unwrap_or(usize::MAX),
        })
    }

    /// Event `seq` of the window was published.
    pub fn sent(&mut self, seq: Seq) {
        self.sent_up_to = seq;
    }

    /// Whether the session should be made anew: [`RECONNECT_AFTER`] timeouts in a row
    /// went unanswered. Counts start again from here.
    pub fn session_suspect(&mut self) -> bool {
        if self.timeouts < RECONNECT_AFTER {
            return false;
        }
        self.timeouts = 0;
        true
    }

    /// The current acknowledgement timeout.
    pub fn ack_timeout(&self) -> Duration {
        self.ack_timeout
    }

    fn progressed(&mut self, now: Instant) {
        self.last_progress = now;
        self.ack_timeout = ACK_TIMEOUT;
        self.timeouts = 0;
    }

    fn restart_at(&mut self, now: Instant, acked: Seq) {
        self.sent_up_to = acked;
        self.last_progress = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    /// A connected delivery at simulated time `t0` with nothing acknowledged, and a hub that
    /// publishes whole windows: the events put on the wire, by the node's own bookkeeping.
    fn connected(t0: Instant) -> Delivery {
        let mut delivery = Delivery::new(t0, Seq(0));
        delivery.handle_connected(t0, Seq(0));
        delivery
    }

    /// Publishes what the window allows of `highest` events: the sequence numbers sent.
    fn publish(delivery: &mut Delivery, now: Instant, acked: Seq, highest: u64) -> Vec<u64> {
        let Some(window) = delivery.poll_window(now, acked) else {
            return Vec::new();
        };
        let last = (window.from.0 + window.count as u64 - 1).min(highest);
        let sent: Vec<u64> = (window.from.0..=last).collect();
        if let Some(seq) = sent.last() {
            delivery.sent(Seq(*seq));
        }
        sent
    }

    #[test]
    fn at_most_a_window_is_unacknowledged_on_the_wire() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        let sent = publish(&mut delivery, t0, Seq(0), 1_000);
        assert_eq!(sent.first(), Some(&1));
        assert_eq!(sent.len() as u64, WINDOW);
        assert_eq!(publish(&mut delivery, t0, Seq(0), 1_000), Vec::<u64>::new());
        // An acknowledgement of 10 lets 10 more out, after those on the wire.
        delivery.handle_progress(t0 + S);
        let more = publish(&mut delivery, t0 + S, Seq(10), 1_000);
        assert_eq!(more, (WINDOW + 1..=WINDOW + 10).collect::<Vec<_>>());
    }

    #[test]
    fn nothing_goes_out_while_disconnected_and_everything_unacknowledged_after_a_reconnect() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        assert_eq!(publish(&mut delivery, t0, Seq(0), 5), vec![1, 2, 3, 4, 5]);
        delivery.handle_disconnected();
        assert_eq!(publish(&mut delivery, t0 + S, Seq(2), 8), Vec::<u64>::new());
        assert!(!delivery.handle_timeout(t0 + 60 * S, Seq(2), true));
        // The hub acknowledged 2 before the session dropped: 3 onwards go again.
        delivery.handle_connected(t0 + 61 * S, Seq(2));
        assert_eq!(
            publish(&mut delivery, t0 + 61 * S, Seq(2), 8),
            vec![3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn a_session_is_suspect_after_timeouts_in_a_row_and_not_after_progress() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 3);
        assert!(delivery.handle_timeout(t0 + 4 * S, Seq(0), true));
        assert!(!delivery.session_suspect(), "one timeout is a slow hub");
        delivery.handle_progress(t0 + 5 * S);
        assert!(delivery.handle_timeout(t0 + 9 * S, Seq(1), true));
        assert!(
            !delivery.session_suspect(),
            "progress came between the timeouts"
        );
        assert!(delivery.handle_timeout(t0 + 16 * S, Seq(1), true));
        assert!(delivery.session_suspect());
        // A new session starts the count again.
        delivery.handle_connected(t0 + 17 * S, Seq(1));
        assert!(!delivery.session_suspect());
    }

    #[test]
    fn the_ack_timeout_doubles_up_to_its_limit_and_progress_resets_it() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 3);
        let mut now = t0;
        let mut waits = Vec::new();
        for _ in 0..6 {
            // Not before the timeout: a tick at the timeout itself resends nothing.
            assert!(!delivery.handle_timeout(now + delivery.ack_timeout(), Seq(0), true));
            let wait = delivery.ack_timeout();
            now += wait + Duration::from_millis(1);
            assert!(delivery.handle_timeout(now, Seq(0), true));
            waits.push(wait.as_secs());
            // The window went back to the oldest unacknowledged event.
            assert_eq!(publish(&mut delivery, now, Seq(0), 3), vec![1, 2, 3]);
        }
        assert_eq!(waits, vec![3, 6, 12, 24, 30, 30]);
        // Six timeouts without an answer: the session is suspect (once, then counted anew).
        assert!(delivery.session_suspect());
        assert!(!delivery.session_suspect());
        delivery.handle_progress(now);
        assert_eq!(delivery.ack_timeout(), ACK_TIMEOUT);
    }

    #[test]
    fn with_everything_acknowledged_no_timeout_resends() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 3);
        assert!(!delivery.handle_timeout(t0 + 10 * S, Seq(3), false));
        assert_eq!(delivery.ack_timeout(), ACK_TIMEOUT);
    }

    #[test]
    fn an_idle_boards_next_event_waits_a_full_timeout_before_it_goes_again() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 1);
        delivery.handle_progress(t0 + S);
        // Ten minutes of nothing, then a move: its timeout starts when it is sent.
        let later = t0 + 600 * S;
        assert_eq!(publish(&mut delivery, later, Seq(1), 2), vec![2]);
        assert!(!delivery.handle_timeout(later + 2 * S, Seq(1), true));
        assert!(delivery.handle_timeout(later + 4 * S, Seq(1), true));
    }

    #[test]
    fn a_resend_starts_where_the_hub_asks_but_never_before_what_it_acknowledged() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 20);
        delivery.handle_resend_from(t0 + S, Seq(8), Seq(5));
        assert_eq!(publish(&mut delivery, t0 + S, Seq(5), 10), vec![8, 9, 10]);
        // A stale request for events already acknowledged.
        delivery.handle_resend_from(t0 + 2 * S, Seq(2), Seq(9));
        assert_eq!(publish(&mut delivery, t0 + 2 * S, Seq(9), 10), vec![10]);
    }

    #[test]
    fn after_continue_at_the_window_starts_over_after_what_the_hub_has() {
        let t0 = Instant::now();
        let mut delivery = connected(t0);
        publish(&mut delivery, t0, Seq(0), 4);
        // The outbox renumbered its unacknowledged events to follow the hub's 40.
        delivery.handle_continue_at(t0 + S, Seq(40));
        assert_eq!(
            publish(&mut delivery, t0 + S, Seq(40), 44),
            vec![41, 42, 43, 44]
        );
    }
}
