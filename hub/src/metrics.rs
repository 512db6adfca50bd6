//! Counters the hub exposes at `GET /metrics` in the Prometheus text format.
//!
//! Plain atomics: every edge bumps them without going through the core's owner, and a scrape
//! reads them without stopping anything.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Why a message off the wire was refused before it reached the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BadPayload {
    /// Not a message of our protocol (truncated, bad tag, bad piece code, extra bytes).
    Undecodable,
    /// A message of another protocol version.
    UnknownVersion,
    /// The board number in the topic and in the message disagree.
    BoardMismatch,
    /// A topic under our prefix that is not a board's uplink.
    ForeignTopic,
    /// A pager's command that is not JSON of the documented shape, or names no alert.
    PagerCommand,
    /// A message past the protocol's bounds: a sequence number or node time no node reaches,
    /// a `Hello` text longer than a hardware id.
    OutOfRange,
    /// A board's event not sealed with the key of the node bound to the board (forged,
    /// altered, another node's, or from a node never enrolled), or a pager command not
    /// sealed with its arbiter's key.
    Unauthenticated,
    /// A node's time that stepped (a Pi's clock set by NTP, a wild timestamp): taken, with
    /// the step taken out of it (`core::timebase`).
    NodeTime,
    /// A pager's command, sealed by its arbiter, on an alert of a zone they do not watch.
    OutOfZone,
}

impl BadPayload {
    const ALL: [BadPayload; 9] = [
        BadPayload::Undecodable,
        BadPayload::UnknownVersion,
        BadPayload::BoardMismatch,
        BadPayload::ForeignTopic,
        BadPayload::PagerCommand,
        BadPayload::OutOfRange,
        BadPayload::Unauthenticated,
        BadPayload::NodeTime,
        BadPayload::OutOfZone,
    ];

    fn label(self) -> &'static str {
        match self {
            BadPayload::Undecodable => "undecodable",
            BadPayload::UnknownVersion => "unknown_version",
            BadPayload::BoardMismatch => "board_mismatch",
            BadPayload::ForeignTopic => "foreign_topic",
            BadPayload::PagerCommand => "pager_command",
            BadPayload::OutOfRange => "out_of_range",
            BadPayload::Unauthenticated => "unauthenticated",
            BadPayload::NodeTime => "node_time",
            BadPayload::OutOfZone => "out_of_zone",
        }
    }
}

/// Upper bounds of the flush latency buckets, in microseconds.
const FLUSH_BUCKETS_US: [u64; 12] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 1_000_000,
];

#[derive(Debug, Default)]
pub struct Metrics {
    events_accepted: AtomicU64,
    duplicates_dropped: AtomicU64,
    gap_events: AtomicU64,
    resend_requests: AtomicU64,
    bad_payloads: [AtomicU64; BadPayload::ALL.len()],
    alerts_raised: AtomicU64,
    alert_changes_published: AtomicU64,
    journal_records_skipped: AtomicU64,
    cluster_appends_refused: AtomicU64,
    cluster_appends_withheld: AtomicU64,
    cluster_strangers_records: AtomicU64,
    journal_failing: std::sync::atomic::AtomicBool,
    /// Not reaching the MQTT broker (an external one; the embedded one is always there).
    broker_down: std::sync::atomic::AtomicBool,
    broker_connect_failures: AtomicU64,
    acks_sent: AtomicU64,
    live_updates: AtomicU64,
    live_bytes: AtomicU64,
    logins_refused: AtomicU64,
    http_connections_refused: AtomicU64,
    http_connections_evicted: AtomicU64,
    http_connections_open: AtomicU64,
    /// The door's caps (all connections, one address's), as the HTTP door states them.
    http_connection_caps: [AtomicU64; 2],
    http_requests_over_budget: AtomicU64,
    http_requests_refused: AtomicU64,
    flushes: AtomicU64,
    flush_us_sum: AtomicU64,
    flush_buckets: [AtomicU64; FLUSH_BUCKETS_US.len()],
}

impl Metrics {
    pub fn event_accepted(&self) {
        self.events_accepted.fetch_add(1, Relaxed);
    }

    pub fn duplicate_dropped(&self) {
        self.duplicates_dropped.fetch_add(1, Relaxed);
    }

    pub fn gap_event(&self) {
        self.gap_events.fetch_add(1, Relaxed);
    }

    pub fn resend_requested(&self) {
        self.resend_requests.fetch_add(1, Relaxed);
    }

    pub fn alert_raised(&self) {
        self.alerts_raised.fetch_add(1, Relaxed);
    }

    pub fn alert_change_published(&self) {
        self.alert_changes_published.fetch_add(1, Relaxed);
    }

    pub fn bad_payload(&self, why: BadPayload) {
        let i = BadPayload::ALL.iter().position(|b| *b == why).unwrap_or(0);
        self.bad_payloads[i].fetch_add(1, Relaxed);
    }

    /// The journal fails (`true`) or works again.
    pub fn journal_failing(&self, failing: bool) {
        self.journal_failing.store(failing, Relaxed);
    }

    /// The hub's MQTT session reaches its broker (`true`) or not.
    pub fn broker_up(&self, up: bool) {
        self.broker_down.store(!up, Relaxed);
    }

    /// A connect to the broker failed.
    pub fn broker_connect_failed(&self) {
        self.broker_connect_failures.fetch_add(1, Relaxed);
    }

    pub fn journal_records_skipped(&self) {
        self.journal_records_skipped.fetch_add(1, Relaxed);
    }

    /// An append to the cluster's journal stream refused by the fence: another hub wrote.
    pub fn cluster_append_refused(&self) {
        self.cluster_appends_refused.fetch_add(1, Relaxed);
    }

    /// A record of the journal stream that does not open with the hall's key: a stranger
    /// appended it (or another hall's hub). Refused.
    pub fn cluster_strangers_record(&self) {
        self.cluster_strangers_records.fetch_add(1, Relaxed);
    }

    /// An append this hub did not send: its lease had lapsed by its own clock.
    pub fn cluster_append_withheld(&self) {
        self.cluster_appends_withheld.fetch_add(1, Relaxed);
    }

    pub fn ack_sent(&self) {
        self.acks_sent.fetch_add(1, Relaxed);
    }

    /// A batch of changed tiles and alerts went out to the supervision pages.
    pub fn live_update(&self) {
        self.live_updates.fetch_add(1, Relaxed);
    }

    /// Bytes sent to one supervision page.
    pub fn live_sent(&self, bytes: usize) {
        self.live_bytes.fetch_add(bytes as u64, Relaxed);
    }

    /// A login with a wrong token, or one throttled.
    pub fn login_refused(&self) {
        self.logins_refused.fetch_add(1, Relaxed);
    }

    /// An HTTP connection turned away at a connection cap.
    /// A request for another host, or a cross-site change: refused, logged at most once a
    /// second.
    pub fn http_request_refused(&self) {
        self.http_requests_refused.fetch_add(1, Relaxed);
    }

    pub fn http_connection_refused(&self) {
        self.http_connections_refused.fetch_add(1, Relaxed);
    }

    /// An idle or silent HTTP connection closed to make room for another.
    pub fn http_connection_evicted(&self) {
        self.http_connections_evicted.fetch_add(1, Relaxed);
    }

    pub fn http_connections_open(&self, open: usize) {
        self.http_connections_open.store(open as u64, Relaxed);
    }

    /// The HTTP door's caps, shown with the connections open.
    pub fn http_connection_caps(&self, all: usize, per_address: usize) {
        self.http_connection_caps[0].store(all as u64, Relaxed);
        self.http_connection_caps[1].store(per_address as u64, Relaxed);
    }

    /// A request past its address's budget, answered 429.
    pub fn http_request_over_budget(&self) {
        self.http_requests_over_budget.fetch_add(1, Relaxed);
    }

    pub fn flushed(&self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.flushes.fetch_add(1, Relaxed);
        self.flush_us_sum.fetch_add(us, Relaxed);
        if let Some(i) = FLUSH_BUCKETS_US.iter().position(|b| us <= *b) {
            self.flush_buckets[i].fetch_add(1, Relaxed);
        }
    }

    pub fn events_accepted(&self) -> u64 {
        self.events_accepted.load(Relaxed)
    }

    pub fn bad_payloads(&self) -> u64 {
        self.bad_payloads.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// The Prometheus text exposition; `connected_nodes` is read from the hall by the caller.
    pub fn render(&self, connected_nodes: usize) -> String {
        let mut out = String::new();
        let mut counter = |name: &str, help: &str, value: u64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        };
        counter(
            "zeitnot_events_accepted_total",
            "Board events accepted in sequence and journaled.",
            self.events_accepted.load(Relaxed),
        );
        counter(
            "zeitnot_duplicates_dropped_total",
            "Board events dropped because their sequence number was already accepted.",
            self.duplicates_dropped.load(Relaxed),
        );
        counter(
            "zeitnot_gap_events_total",
            "Board events held back because an earlier one was missing.",
            self.gap_events.load(Relaxed),
        );
        counter(
            "zeitnot_resend_requests_total",
            "ResendFrom requests sent to board nodes.",
            self.resend_requests.load(Relaxed),
        );
        counter(
            "zeitnot_journal_records_skipped_total",
            "Journal records skipped on replay: unreadable or out of sequence.",
            self.journal_records_skipped.load(Relaxed),
        );
        counter(
            "zeitnot_cluster_appends_refused_total",
            "Appends to the cluster's journal stream refused by the fence (another hub wrote).",
            self.cluster_appends_refused.load(Relaxed),
        );
        counter(
            "zeitnot_cluster_strangers_records_total",
            "Records of the cluster's journal stream that do not open with the hall's key (a stranger's), refused.",
            self.cluster_strangers_records.load(Relaxed),
        );
        counter(
            "zeitnot_cluster_appends_withheld_total",
            "Appends not sent to the cluster: this hub's lease had lapsed.",
            self.cluster_appends_withheld.load(Relaxed),
        );
        counter(
            "zeitnot_acks_sent_total",
            "Acknowledgements sent to board nodes after a journal flush.",
            self.acks_sent.load(Relaxed),
        );
        counter(
            "zeitnot_alerts_raised_total",
            "Arbiter alerts raised (one per incident).",
            self.alerts_raised.load(Relaxed),
        );
        counter(
            "zeitnot_alert_changes_published_total",
            "Alert changes published to pagers after they were durable.",
            self.alert_changes_published.load(Relaxed),
        );
        counter(
            "zeitnot_live_updates_total",
            "Batches of changed tiles and alerts sent to the supervision pages.",
            self.live_updates.load(Relaxed),
        );
        counter(
            "zeitnot_live_bytes_total",
            "Bytes sent to supervision pages over their event streams, all pages together.",
            self.live_bytes.load(Relaxed),
        );
        counter(
            "zeitnot_logins_refused_total",
            "Logins to the page refused: a wrong token, or too many wrong ones.",
            self.logins_refused.load(Relaxed),
        );
        counter(
            "zeitnot_http_connections_refused_total",
            "HTTP connections closed at once: too many in all or from one address, all busy.",
            self.http_connections_refused.load(Relaxed),
        );
        counter(
            "zeitnot_http_connections_evicted_total",
            "Silent or idle HTTP connections closed to make room for another.",
            self.http_connections_evicted.load(Relaxed),
        );
        counter(
            "zeitnot_http_requests_over_budget_total",
            "HTTP requests without a credential past their address's budget (429).",
            self.http_requests_over_budget.load(Relaxed),
        );
        counter(
            "zeitnot_http_requests_refused_total",
            "HTTP requests refused for another host or from another site (logged once a second).",
            self.http_requests_refused.load(Relaxed),
        );
        let _ = writeln!(
            out,
            "# HELP zeitnot_bad_payloads_total Messages refused before reaching the rules.\n\
             # TYPE zeitnot_bad_payloads_total counter"
        );
        for (why, count) in BadPayload::ALL.iter().zip(&self.bad_payloads) {
            let _ = writeln!(
                out,
                "zeitnot_bad_payloads_total{{reason=\"{}\"}} {}",
                why.label(),
                count.load(Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP zeitnot_http_connections_open HTTP connections open now (at most {}, {} per address).\n\
             # TYPE zeitnot_http_connections_open gauge\nzeitnot_http_connections_open {}",
            self.http_connection_caps[0].load(Relaxed),
            self.http_connection_caps[1].load(Relaxed),
            self.http_connections_open.load(Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP zeitnot_connected_nodes Boards whose node was heard within 15 s.\n\
             # TYPE zeitnot_connected_nodes gauge\nzeitnot_connected_nodes {connected_nodes}"
        );
        let _ = writeln!(
            out,
            "# HELP zeitnot_broker_up 0 while the hub's MQTT session does not reach its broker (see /healthz).\n\
             # TYPE zeitnot_broker_up gauge\nzeitnot_broker_up {}\n\
             # HELP zeitnot_broker_connect_failures_total Connects to the MQTT broker that failed.\n\
             # TYPE zeitnot_broker_connect_failures_total counter\nzeitnot_broker_connect_failures_total {}",
            u8::from(!self.broker_down.load(Relaxed)),
            self.broker_connect_failures.load(Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP zeitnot_journal_failing 1 while the journal cannot write or flush (see /healthz).\n\
             # TYPE zeitnot_journal_failing gauge\nzeitnot_journal_failing {}",
            u8::from(self.journal_failing.load(Relaxed))
        );
        let _ = writeln!(
            out,
            "# HELP zeitnot_journal_flush_seconds Time of one group-commit flush of the journal.\n\
             # TYPE zeitnot_journal_flush_seconds histogram"
        );
        let mut cumulative = 0;
        for (bound, count) in FLUSH_BUCKETS_US.iter().zip(&self.flush_buckets) {
            cumulative += count.load(Relaxed);
            let _ = writeln!(
                out,
                "zeitnot_journal_flush_seconds_bucket{{le=\"{}\"}} {cumulative}",
                *bound as f64 / 1e6
            );
        }
        let flushes = self.flushes.load(Relaxed);
        let _ = writeln!(
            out,
            "zeitnot_journal_flush_seconds_bucket{{le=\"+Inf\"}} {flushes}\n\
             zeitnot_journal_flush_seconds_sum {}\nzeitnot_journal_flush_seconds_count {flushes}",
            self.flush_us_sum.load(Relaxed) as f64 / 1e6
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_histogram_is_cumulative() {
        let metrics = Metrics::default();
        metrics.flushed(Duration::from_micros(90));
        metrics.flushed(Duration::from_millis(3));
        metrics.flushed(Duration::from_secs(2));
        let text = metrics.render(0);
        assert!(text.contains("zeitnot_journal_flush_seconds_bucket{le=\"0.0001\"} 1\n"));
        assert!(text.contains("zeitnot_journal_flush_seconds_bucket{le=\"0.005\"} 2\n"));
        assert!(text.contains("zeitnot_journal_flush_seconds_bucket{le=\"1\"} 2\n"));
        assert!(text.contains("zeitnot_journal_flush_seconds_bucket{le=\"+Inf\"} 3\n"));
    }

    #[test]
    fn bad_payloads_are_counted_by_reason() {
        let metrics = Metrics::default();
        metrics.bad_payload(BadPayload::BoardMismatch);
        metrics.bad_payload(BadPayload::BoardMismatch);
        assert!(metrics
            .render(0)
            .contains("zeitnot_bad_payloads_total{reason=\"board_mismatch\"} 2\n"));
        assert_eq!(metrics.bad_payloads(), 2);
    }
}
