//! What a node knows of its line to an e-board, whatever the board's protocol: connected or
//! not (the board and its clock), the serial errors, since when; when a silent board is to
//! be asked whether it is still there; and when the hub should hear of it.

use protocol::{NodeHealth, NodeMs};

use crate::source::Reading;

/// A board that sent nothing for this long is asked again (a few bytes).
pub const PROBE_AFTER_MS: u64 = 5_000;
/// A board that has not answered a probe this long after it is taken for disconnected
/// (no power, a dead adapter).
pub const PROBE_TIMEOUT_MS: u64 = 3_000;
/// While errors grow and nothing else changes, health is reported at most this often.
pub const ERRORS_REPORT_EVERY_MS: u64 = 10_000;
/// A running clock speaks every second: a line silent this long under one may have lost
/// what the board said meanwhile.
pub const GAP_MS: u64 = 1_500;

/// What to do about a silent board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// Nothing yet.
    Wait,
    /// Send the protocol's probe.
    Probe,
    /// The probe went unanswered: the board is taken for disconnected (already done).
    Gone,
}

#[derive(Debug)]
pub struct HealthWatch {
    health: NodeHealth,
    /// The health last reported, and when.
    reported: Option<(NodeHealth, NodeMs)>,
    /// When the board last sent a byte (or the line opened).
    last_heard: NodeMs,
    /// A probe sent and not yet answered.
    probe_sent: Option<NodeMs>,
    /// The decoder's count of skipped bytes when last looked at.
    skipped_bytes: u64,
}

impl Default for HealthWatch {
    fn default() -> HealthWatch {
        HealthWatch {
            health: NodeHealth {
                board_connected: false,
                clock_connected: false,
                serial_errors: 0,
                since: NodeMs(0),
            },
            reported: None,
            last_heard: NodeMs(0),
            probe_sent: None,
            skipped_bytes: 0,
        }
    }
}

impl HealthWatch {
    pub fn health(&self) -> NodeHealth {
        self.health
    }

    /// The line opened (with a fresh decoder): the board has not spoken yet.
    pub fn opened(&mut self, now: NodeMs) -> Vec<Reading> {
        self.skipped_bytes = 0;
        self.last_heard = now;
        self.probe_sent = None;
        self.report(now)
    }

    /// The line could not be opened (the device is gone): counted once per outage.
    pub fn open_failed(&mut self, now: NodeMs) -> Vec<Reading> {
        if self.health.board_connected || self.reported.is_none() {
            self.error();
            self.set_connections(now, false, false);
        }
        self.report(now)
    }

    /// The line failed or closed (a pulled cable).
    pub fn closed(&mut self, now: NodeMs) -> Vec<Reading> {
        self.error();
        self.set_connections(now, false, false);
        self.report(now)
    }

    /// The board spoke: it is there, and its clock is as it says.
    pub fn heard(&mut self, now: NodeMs, clock: bool) -> Vec<Reading> {
        self.last_heard = now;
        self.probe_sent = None;
        self.set_connections(now, true, clock);
        self.report(now)
    }

    /// Whether the board was probed and has not answered yet: its answer is the board read
    /// again, no gap.
    pub fn probing(&self) -> bool {
        self.probe_sent.is_some()
    }

    /// How long the board has been silent at `now`.
    pub fn silent_for(&self, now: NodeMs) -> u64 {
        now.0.saturating_sub(self.last_heard.0)
    }

    /// The line may have lost what the board said (a stall under a running clock, bytes
    /// garbled): the board was out of the node's sight since it was last heard, and is
    /// reported so, as a disconnection the next [`HealthWatch::heard`] ends. The hub then
    /// knows presses may have been missed, as after a cable pulled and put back.
    pub fn lost_sight(&mut self, now: NodeMs) -> Vec<Reading> {
        if !self.health.board_connected {
            return Vec::new();
        }
        let since = self.last_heard;
        self.set_connections(since, false, false);
        self.report(now)
    }

    /// A serial error: a failed read, an undecodable message, a burst of noise.
    pub fn error(&mut self) {
        self.health.serial_errors = self.health.serial_errors.saturating_add(1);
    }

    /// The decoder has skipped `skipped` bytes in all since the line opened: a burst of line
    /// noise since the last look is one error, however many bytes.
    pub fn noise(&mut self, skipped: u64) {
        if skipped > self.skipped_bytes {
            self.skipped_bytes = skipped;
            self.error();
        }
    }

    /// Nothing was read for a while: whether to probe, and the health to report.
    pub fn idle(&mut self, now: NodeMs) -> (Silence, Vec<Reading>) {
        match self.probe_sent {
            None if now.0.saturating_sub(self.last_heard.0) >= PROBE_AFTER_MS => {
                self.probe_sent = Some(now);
                (Silence::Probe, Vec::new())
            }
            Some(sent) if now.0.saturating_sub(sent.0) >= PROBE_TIMEOUT_MS => {
                if self.health.board_connected {
                    self.error();
                    self.set_connections(now, false, false);
                }
                // Ask again after the next quiet spell.
                self.probe_sent = None;
                self.last_heard = now;
                (Silence::Gone, self.report(now))
            }
            _ => (Silence::Wait, Vec::new()),
        }
    }

    fn set_connections(&mut self, now: NodeMs, board: bool, clock: bool) {
        if (board, clock) != (self.health.board_connected, self.health.clock_connected) {
            self.health.board_connected = board;
            self.health.clock_connected = clock;
            self.health.since = now;
        }
    }

    /// The health to report now, if the hub should hear it: a connection changed, or errors
    /// grew and the last report is old enough.
    pub fn report(&mut self, now: NodeMs) -> Vec<Reading> {
        let due = match self.reported {
            None => true,
            Some((last, at)) => {
                (last.board_connected, last.clock_connected, last.since)
                    != (
                        self.health.board_connected,
                        self.health.clock_connected,
                        self.health.since,
                    )
                    || (last.serial_errors != self.health.serial_errors
                        && now.0.saturating_sub(at.0) >= ERRORS_REPORT_EVERY_MS)
            }
        };
        if !due {
            return Vec::new();
        }
        self.reported = Some((self.health, now));
        vec![Reading::Health(self.health)]
    }
}
