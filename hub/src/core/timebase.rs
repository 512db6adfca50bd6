//! A node's timestamps as one steady timeline per board.
//!
//! A node stamps its events with its own clock, and the hub measures think time and counts a
//! running clock down on that timeline. A node's clock can step: a Raspberry Pi has no
//! battery-backed clock and is set by NTP after it boots, a swapped node's clock differs
//! from the one it replaces, and a faulty one can send a single time an hour ahead. Taken as
//! they come, one time far ahead would shift the board's "now" for good (every running
//! clock counted down by the hour, flags "probable", forecasts wrong), and one far behind
//! would freeze it.
//!
//! [`Timebase::place`] keeps the timeline steady: a time that runs ahead of every time the
//! node sent before, measured against the hub's receive time, by more than
//! [`STEP_SLACK_MS`] is a step, and so is a time that goes back by more than that. A step is
//! taken out (the node's later times are read with the same correction, so a clock that
//! stepped for good stays continuous, and one wild time is undone by the next) and
//! reported, for the count and the technician. Late delivery is not a step: events resent
//! from a node's outbox after an outage arrive late with the times they were made at.
//!
//! A replay runs its node time faster than real time; it says how much faster
//! ([`protocol::UplinkBody::Pace`]), and the bound scales with it.

use protocol::NodeMs;

use super::time::HubMs;

/// How far a node's time may run ahead of its earlier times, against the hub's clock, or go
/// back, before it counts as a step: more than the network and the broker delay one event
/// behind the next, less than anything that would mislead an arbiter.
pub const STEP_SLACK_MS: u64 = 60_000;

/// A node's pace when it announces none: its clock runs at real time.
pub const REAL_TIME: u32 = 1_000;

/// How a node's clock stepped, in ms of node time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// Ahead of anything the node's earlier times and the hub's clock allow.
    Ahead(u64),
    /// Back before the node's previous time.
    Behind(u64),
}

/// One board's node time, corrected for steps. Part of the fold: the same records give the
/// same corrections on every replay, and a round's start keeps it with the board's node.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timebase {
    /// Added to the node's times: the steps taken out so far.
    correction: i128,
    /// The highest (corrected node time − hub time × pace) seen: the latest the node's time
    /// has run relative to the hub's. Late events fall below it; a step lands above it.
    envelope: Option<i128>,
    /// The last corrected time.
    last: Option<NodeMs>,
    /// Node ms per real second.
    pace: u32,
}

impl Default for Timebase {
    fn default() -> Timebase {
        Timebase {
            correction: 0,
            envelope: None,
            last: None,
            pace: REAL_TIME,
        }
    }
}

impl Timebase {
    /// The node says how fast its time runs (ms of node time per real second).
    pub fn set_pace(&mut self, node_ms_per_s: u32) {
        self.pace = node_ms_per_s.clamp(1, protocol::UplinkBody::MAX_PACE);
        // The envelope was measured at the old pace.
        self.envelope = None;
    }

    /// Node ms per real second: how fast the board's clocks run on the hub's time (1000 at
    /// real time, 10,000 for a demo at 10×).
    pub fn pace(&self) -> u32 {
        self.pace
    }

    /// A node's time received at `at`, on the board's steady timeline, and the step taken
    /// out of it, if it was one.
    pub fn place(&mut self, at: HubMs, node: NodeMs) -> (NodeMs, Option<Step>) {
        let slack = self.scaled(STEP_SLACK_MS);
        let sent = i128::from(node.0) + self.correction;
        // Where the node's time should be now: as far ahead of the hub's as it ever ran.
        let plausible = self.envelope.map(|e| e + self.scaled(at.0));
        let last = self.last.map(|l| i128::from(l.0));
        let (placed, step) = match (plausible, last) {
            (Some(plausible), _) if sent > plausible + slack => {
                (plausible, Some(Step::Ahead(clamp_ms(sent - plausible))))
            }
            (plausible, Some(last)) if sent < last - slack => {
                let placed = plausible.map_or(last, |p| p.max(last));
                (placed, Some(Step::Behind(clamp_ms(placed - sent))))
            }
            _ => (sent, None),
        };
        self.correction += placed - sent;
        let placed = NodeMs(clamp_ms(placed));
        let offset = i128::from(placed.0) - self.scaled(at.0);
        self.envelope = Some(self.envelope.map_or(offset, |e| e.max(offset)));
        self.last = Some(self.last.map_or(placed, |l| l.max(placed)));
        (placed, step)
    }

    /// The latest corrected time.
    pub fn last(&self) -> Option<NodeMs> {
        self.last
    }

    /// `ms` of real time in node time.
    fn scaled(&self, ms: u64) -> i128 {
        i128::from(ms) * i128::from(self.pace) / i128::from(REAL_TIME)
    }
}

fn clamp_ms(ms: i128) -> u64 {
    u64::try_from(ms.clamp(0, i128::from(NodeMs::LIMIT.0))).expect("clamped")
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_763_800_000_000;
    const HOUR: u64 = 3_600_000;

    /// Places `(hub, node)` pairs, returning the corrected times and the steps.
    fn run(timebase: &mut Timebase, events: &[(u64, u64)]) -> Vec<(u64, Option<Step>)> {
        events
            .iter()
            .map(|&(hub, node)| {
                let (placed, step) = timebase.place(HubMs(hub), NodeMs(node));
                (placed.0, step)
            })
            .collect()
    }

    #[test]
    fn a_steady_node_keeps_its_times() {
        let mut timebase = Timebase::default();
        let events: Vec<_> = (0..100)
            .map(|i| (T0 + i * 5_000 + 40, T0 + i * 5_000))
            .collect();
        for (i, (placed, step)) in run(&mut timebase, &events).into_iter().enumerate() {
            assert_eq!((placed, step), (events[i].1, None));
        }
    }

    #[test]
    fn one_time_an_hour_ahead_is_taken_out_and_the_next_is_as_sent() {
        let mut timebase = Timebase::default();
        let placed = run(
            &mut timebase,
            &[
                (T0, T0),
                (T0 + 5_000, T0 + 5_000 + HOUR),
                (T0 + 10_000, T0 + 10_000),
            ],
        );
        assert_eq!(placed[1].1, Some(Step::Ahead(HOUR)));
        assert!(placed[1].0 <= T0 + 5_000 + STEP_SLACK_MS, "{placed:?}");
        assert_eq!(placed[2], (T0 + 10_000, Some(Step::Behind(HOUR))));
        assert_eq!(timebase.last(), Some(NodeMs(T0 + 10_000)));
    }

    #[test]
    fn a_clock_stepped_ahead_for_good_stays_continuous() {
        let mut timebase = Timebase::default();
        let mut events = vec![(T0, T0), (T0 + 5_000, T0 + 5_000)];
        events.extend((2..10).map(|i| (T0 + i * 5_000, T0 + i * 5_000 + 2 * HOUR)));
        let placed = run(&mut timebase, &events);
        assert_eq!(placed[2].1, Some(Step::Ahead(2 * HOUR)));
        // After the step, think time between events is what the node measured.
        for pair in placed[2..].windows(2) {
            assert_eq!(pair[1].0 - pair[0].0, 5_000);
            assert_eq!(pair[1].1, None);
        }
    }

    #[test]
    fn a_clock_stepped_back_for_good_stays_continuous() {
        let mut timebase = Timebase::default();
        let mut events = vec![(T0, T0 + HOUR), (T0 + 5_000, T0 + HOUR + 5_000)];
        events.extend((2..6).map(|i| (T0 + i * 5_000, T0 + i * 5_000)));
        let placed = run(&mut timebase, &events);
        assert_eq!(placed[2].1, Some(Step::Behind(HOUR)));
        for pair in placed[2..].windows(2) {
            assert_eq!(pair[1].0 - pair[0].0, 5_000);
        }
    }

    #[test]
    fn events_resent_late_after_an_outage_are_not_steps() {
        let mut timebase = Timebase::default();
        // Ten minutes of heartbeats kept in the outbox, all arriving at once, then live.
        let mut events = vec![(T0, T0)];
        events.extend((1..=120).map(|i| (T0 + 600_000, T0 + i * 5_000)));
        events.push((T0 + 605_000, T0 + 605_000));
        for (i, (placed, step)) in run(&mut timebase, &events).into_iter().enumerate() {
            assert_eq!((placed, step), (events[i].1, None), "event {i}");
        }
    }

    #[test]
    fn a_replay_at_its_announced_pace_is_no_step_and_a_jump_beyond_it_is() {
        let mut timebase = Timebase::default();
        timebase.set_pace(200 * REAL_TIME);
        // Game time runs 200 times faster than the hub's.
        let events: Vec<_> = (0..50)
            .map(|i| (T0 + i * 1_000, T0 + i * 200_000))
            .collect();
        assert!(run(&mut timebase, &events).iter().all(|(_, s)| s.is_none()));
        let (_, step) = timebase.place(HubMs(T0 + 50_000), NodeMs(T0 + 10_000_000 + 500 * HOUR));
        assert!(matches!(step, Some(Step::Ahead(_))), "{step:?}");
    }

    #[test]
    fn the_furthest_time_a_node_may_send_does_not_overflow() {
        let mut timebase = Timebase::default();
        timebase.set_pace(u32::MAX);
        let placed = run(
            &mut timebase,
            &[
                (0, 0),
                (u64::MAX, NodeMs::LIMIT.0 - 1),
                (1, NodeMs::LIMIT.0 - 1),
            ],
        );
        assert!(placed.iter().all(|(ms, _)| *ms < NodeMs::LIMIT.0));
    }
}
