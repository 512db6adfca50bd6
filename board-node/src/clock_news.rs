//! Which clock readings tell the hub something.
//!
//! A DGT clock reports its display every second while it runs. The hub counts the running
//! side down from the last reading it has (`BoardClock::shown_at`), so a reading that shows
//! what the last one sent predicts, within the display's resolution, tells it nothing: at a
//! hall's pace nine events in ten are such readings. A node sends a reading only when it is
//! news:
//! - the first, and every press (the clock's time at the press is the record, 6.10.1);
//! - a clock started, stopped or paused, a flag shown, a side at zero (the hub takes a
//!   display at zero for a flag fall);
//! - a display that is not what the last reading sent predicts: a stopped clock changed,
//!   the waiting side's time changed, the running side's time off by more than
//!   [`RESOLUTION_MS`] (an arbiter's correction, a period added, a delay, a glitch);
//! - the second reading of every run, which shows the hub that this clock reports as it
//!   runs (its silence is then news, `ClockSilent`);
//! - the first after the node's line to the board came back (a `Health` reading): the hub
//!   reads the clock then for the presses the node could not see (`Game::node_blind`).
//!
//! Nothing is lost by it: the node keeps the latest reading it did not send, and when its
//! heartbeat is due (nothing sent for a while) it sends that reading, with the time it was
//! read, instead of a bare heartbeat. `hub/tests/clock_readings_left_out.rs` proves it on
//! every real game with clocks and every recorded DGT stream: the feed, the alerts, the flag
//! falls and results and the board's clock are the same with every reading sent.

use protocol::{ClockReport, Color, NodeMs, UplinkBody};

use crate::source::{Reading, Timed};

/// The display's resolution: a DGT clock reports whole seconds.
pub const RESOLUTION_MS: u64 = 1_000;

/// The readings a node has sent and holds back, for [`ClockNews::is_news`].
#[derive(Debug, Clone, Default)]
pub struct ClockNews {
    sent: Option<Sent>,
    /// The latest reading not sent, with the time it was read.
    unsent: Option<(NodeMs, ClockReport)>,
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    at: NodeMs,
    report: ClockReport,
    /// The run this reading belongs to has been shown running (its second reading sent), or
    /// the clock stands.
    run_shown: bool,
}

impl ClockNews {
    /// Whether `report`, read at `at`, is news for the hub. A reading that is news is taken
    /// as sent; one that is not is held as the latest unsent.
    pub fn is_news(&mut self, at: NodeMs, report: &ClockReport) -> bool {
        let news = self.sent.is_none_or(|sent| differs(&sent, at, report));
        if news {
            self.sent(at, report);
        } else {
            self.unsent = Some((at, *report));
        }
        news
    }

    /// The node's line to the board changed: the next reading is news whatever it shows.
    pub fn forget(&mut self) {
        *self = ClockNews::default();
    }

    /// The latest reading held back since the last one sent, taken as sent: what a
    /// heartbeat sends instead of saying only that the node is alive.
    pub fn take_unsent(&mut self) -> Option<(NodeMs, ClockReport)> {
        let (at, report) = self.unsent?;
        self.sent(at, &report);
        Some((at, report))
    }

    fn sent(&mut self, at: NodeMs, report: &ClockReport) {
        let starts_run = self.sent.is_none_or(|sent| {
            report.pressed_by.is_some() || sent.report.running != report.running
        });
        self.sent = Some(Sent {
            at,
            report: *report,
            run_shown: !starts_run || report.running.is_none(),
        });
        self.unsent = None;
    }
}

/// Whether `report` at `at` shows what `sent` does not predict.
fn differs(sent: &Sent, at: NodeMs, report: &ClockReport) -> bool {
    let last = &sent.report;
    let zero = |r: &ClockReport| (r.white_ms == 0, r.black_ms == 0);
    if report.pressed_by.is_some()
        || report.running != last.running
        || (report.white_flag, report.black_flag) != (last.white_flag, last.black_flag)
        || zero(report) != zero(last)
    {
        return true;
    }
    let ms = |r: &ClockReport, side: Color| u64::from(side_ms(r, side));
    match report.running {
        None => (report.white_ms, report.black_ms) != (last.white_ms, last.black_ms),
        Some(side) => {
            let predicted = ms(last, side).saturating_sub(at.0.saturating_sub(sent.at.0));
            !sent.run_shown
                || ms(report, side.other()) != ms(last, side.other())
                || ms(report, side).abs_diff(predicted) > RESOLUTION_MS
        }
    }
}

fn side_ms(report: &ClockReport, side: Color) -> u32 {
    match side {
        Color::White => report.white_ms,
        Color::Black => report.black_ms,
    }
}

/// What a node publishes of `readings` (in the order and at the times they are read), as
/// [`crate::node::run`] does: with `thin`, only the clock readings that are news, and at
/// each heartbeat (`heartbeat_ms` without an event) the latest held back; without, every
/// reading, and heartbeats in silence. For tests and load generators that play a node
/// without running one.
pub fn published(readings: &[Timed], heartbeat_ms: u64, thin: bool) -> Vec<Timed> {
    let mut news = ClockNews::default();
    let mut out: Vec<Timed> = Vec::with_capacity(readings.len());
    let mut last = readings.first().map_or(0, |t| t.game_ms);
    for timed in readings {
        while timed.game_ms.saturating_sub(last) >= heartbeat_ms {
            last += heartbeat_ms;
            let beat = match news.take_unsent() {
                Some((at, report)) => Timed::at(at.0, Reading::Clock(report)),
                None => Timed::at(last, Reading::Heartbeat),
            };
            last = beat.game_ms.max(last);
            out.push(beat);
        }
        let send = !thin || is_news(&mut news, NodeMs(timed.game_ms), &timed.reading);
        if send {
            last = timed.game_ms;
            out.push(timed.clone());
        }
    }
    out
}

/// Whether `reading`, read at `at`, goes to the hub: every reading but a clock's that tells
/// nothing new.
pub fn is_news(news: &mut ClockNews, at: NodeMs, reading: &Reading) -> bool {
    match reading {
        Reading::Clock(report) => news.is_news(at, report),
        Reading::Health(_) => {
            news.forget();
            true
        }
        _ => {
            // A reading held back is older than this event: sent later it would go back
            // in time. The next heartbeat sends a newer one or none.
            news.unsent = None;
            true
        }
    }
}

/// The uplink body a heartbeat sends: the latest reading held back, with the time it was
/// read, or a bare heartbeat.
pub fn heartbeat(news: &mut ClockNews, now: NodeMs) -> (NodeMs, UplinkBody) {
    match news.take_unsent() {
        Some((at, report)) => (at, UplinkBody::Clock(report)),
        None => (now, UplinkBody::Heartbeat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(white_ms: u32, black_ms: u32, side: Color) -> ClockReport {
        ClockReport {
            white_ms,
            black_ms,
            running: Some(side),
            white_flag: false,
            black_flag: false,
            pressed_by: None,
        }
    }

    /// White's clock from 60 s, a reading each second at the display's change, `phase` ms
    /// after the press.
    fn white_thinking(news: &mut ClockNews, from_s: u32, seconds: u32, phase: u64) -> Vec<bool> {
        (1..=seconds)
            .map(|k| {
                let at = NodeMs(phase + u64::from(k - 1) * 1000);
                news.is_news(at, &running((from_s - k) * 1000, 60_000, Color::White))
            })
            .collect()
    }

    #[test]
    fn a_running_clock_is_news_at_its_start_and_its_second_reading_then_only_when_it_surprises() {
        let mut news = ClockNews::default();
        assert!(news.is_news(NodeMs(0), &running(60_000, 60_000, Color::White)));
        let sent = white_thinking(&mut news, 60, 20, 400);
        assert_eq!(sent.iter().filter(|s| **s).count(), 1, "{sent:?}");
        assert!(
            sent[0],
            "the second reading shows the clock reports as it runs"
        );
        // An arbiter adds two minutes.
        assert!(news.is_news(NodeMs(20_500), &running(159_000, 60_000, Color::White)));
        // Black's time changes while White's runs.
        assert!(news.is_news(NodeMs(21_400), &running(158_000, 58_000, Color::White)));
        assert!(!news.is_news(NodeMs(22_400), &running(157_000, 58_000, Color::White)));
    }

    #[test]
    fn presses_pauses_flags_and_zero_are_always_news() {
        let mut news = ClockNews::default();
        let mut clock = running(3_000, 60_000, Color::White);
        assert!(news.is_news(NodeMs(0), &clock));
        clock.white_ms = 2_000;
        assert!(
            news.is_news(NodeMs(1_000), &clock),
            "the run's second reading"
        );
        clock.white_ms = 1_000;
        assert!(!news.is_news(NodeMs(2_000), &clock));
        clock.white_ms = 0;
        assert!(news.is_news(NodeMs(3_000), &clock), "a side at zero (6.1)");
        clock.white_flag = true;
        assert!(news.is_news(NodeMs(3_100), &clock), "the flag shown");
        let mut paused = clock;
        paused.running = None;
        assert!(news.is_news(NodeMs(4_000), &paused), "paused (6.11.2)");
        assert!(
            !news.is_news(NodeMs(5_000), &paused),
            "a stopped clock standing"
        );
        let mut pressed = running(0, 60_000, Color::Black);
        pressed.pressed_by = Some(Color::White);
        assert!(news.is_news(NodeMs(6_000), &pressed));
    }

    #[test]
    fn a_reading_late_on_the_line_within_the_resolution_is_no_news_and_beyond_it_is() {
        let mut news = ClockNews::default();
        assert!(news.is_news(NodeMs(0), &running(60_000, 60_000, Color::White)));
        assert!(news.is_news(NodeMs(1_000), &running(59_000, 60_000, Color::White)));
        // Read 900 ms late: still what the display shows within a second.
        assert!(!news.is_news(NodeMs(2_900), &running(58_000, 60_000, Color::White)));
        // A display stuck for three seconds (a stalled clock) is news.
        assert!(news.is_news(NodeMs(6_000), &running(58_000, 60_000, Color::White)));
    }

    #[test]
    fn the_first_reading_after_the_line_came_back_is_news() {
        let mut news = ClockNews::default();
        assert!(news.is_news(NodeMs(0), &running(60_000, 60_000, Color::White)));
        assert!(news.is_news(NodeMs(1_000), &running(59_000, 60_000, Color::White)));
        let health = Reading::Health(protocol::NodeHealth {
            board_connected: true,
            clock_connected: true,
            serial_errors: 1,
            since: NodeMs(1_500),
        });
        assert!(is_news(&mut news, NodeMs(1_500), &health));
        let clock = Reading::Clock(running(58_000, 60_000, Color::White));
        assert!(
            is_news(&mut news, NodeMs(2_000), &clock),
            "as predicted, yet news"
        );
    }

    #[test]
    fn the_heartbeat_sends_the_latest_reading_held_back_with_its_time() {
        let mut news = ClockNews::default();
        assert_eq!(heartbeat(&mut news, NodeMs(10)).1, UplinkBody::Heartbeat);
        news.is_news(NodeMs(0), &running(60_000, 60_000, Color::White));
        white_thinking(&mut news, 60, 4, 500);
        let (at, body) = heartbeat(&mut news, NodeMs(5_000));
        assert_eq!(at, NodeMs(3_500));
        assert_eq!(
            body,
            UplinkBody::Clock(running(56_000, 60_000, Color::White))
        );
        assert_eq!(
            heartbeat(&mut news, NodeMs(10_000)).1,
            UplinkBody::Heartbeat
        );
    }

    #[test]
    fn published_sends_every_reading_unthinned_and_a_heartbeat_in_each_silence() {
        let mut readings = vec![Timed::at(
            0,
            Reading::Clock(running(60_000, 60_000, Color::White)),
        )];
        for k in 1..=12u32 {
            readings.push(Timed::at(
                u64::from(k) * 1000,
                Reading::Clock(running(60_000 - k * 1000, 60_000, Color::White)),
            ));
        }
        assert_eq!(published(&readings, 5_000, false), readings);
        let thinned = published(&readings, 5_000, true);
        let times: Vec<u64> = thinned.iter().map(|t| t.game_ms).collect();
        // The start, the run's second reading, then a reading held back at each heartbeat.
        assert_eq!(times, [0, 1_000, 5_000, 10_000]);
        assert!(thinned
            .iter()
            .all(|t| matches!(t.reading, Reading::Clock(_))));
    }
}
