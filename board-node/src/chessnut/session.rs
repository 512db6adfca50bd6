//! A Chessnut board's link as the node keeps it, sans-IO: notifications in (position frames
//! and command answers, with the time they came), readings out.
//!
//! A real board notifies its position about ten times a second even when nobody touches
//! it, and a square flickers while a magnet settles: a square's new content is taken once
//! it has held [`SETTLE_MS`], and a square that keeps changing without settling is reported
//! once ([`News::Flickering`]) so the technician looks at the board. Each settled change is
//! a placement, read through the DGT adapter (a board set up the wrong way round is read
//! turned). The board has no clock: the hub completes a move once it has stood.

use protocol::{NodeMs, Placement, Square};

use super::wire::{self, Battery};
use crate::eboard::message::{Field, Fields, Message};
use crate::eboard::{Adapter, Orientation};
use crate::line::health::HealthWatch;
use crate::source::Reading;

/// A square's new content is taken once it has held this long.
pub const SETTLE_MS: u64 = 250;
/// A square that changes this many times ...
pub const FLICKER_CHANGES: u32 = 8;
/// ... within this long without settling is flickering.
pub const FLICKER_WINDOW_MS: u64 = 5_000;
/// A board silent this long (it notifies ten times a second) has lost its link.
pub const SILENT_MS: u64 = 3_000;
/// A battery at or below this percent, not charging, is low: about an hour of play left
/// on a Chessnut Air, so the arbiter has it charged between rounds.
pub const LOW_BATTERY_PERCENT: u8 = 20;
/// How often the battery is asked for while the link is up.
pub const BATTERY_EVERY_MS: u64 = 60_000;

/// What the node tells the technician besides the readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum News {
    /// A square keeps changing without settling (a magnet, a piece half on it): said once
    /// per square until it settles.
    Flickering(Square),
    /// The battery, whenever the board answers the question.
    Battery(Battery),
    /// A frame not taken (counted as a line error).
    BadFrame(wire::FrameError),
}

/// One square's content seen but not yet settled.
#[derive(Debug, Clone, Copy)]
struct Unsettled {
    content: Option<protocol::Piece>,
    since: NodeMs,
    /// Changes since the square last settled, and since when.
    changes: u32,
    first_change: NodeMs,
    reported: bool,
}

#[derive(Debug)]
pub struct Session {
    adapter: Adapter,
    watch: HealthWatch,
    /// The squares as settled (a8 first), once a first frame came.
    settled: Option<Box<Fields>>,
    unsettled: [Option<Unsettled>; 64],
    last_placement: Option<Placement>,
    last_frame: Option<NodeMs>,
    /// Whether the battery was last reported low.
    battery_low: Option<bool>,
}

impl Session {
    pub fn new(orientation: Orientation) -> Session {
        Session {
            adapter: Adapter::oriented(orientation),
            watch: HealthWatch::default(),
            settled: None,
            unsettled: [None; 64],
            last_placement: None,
            last_frame: None,
            battery_low: None,
        }
    }

    /// How the board stands, as far as decided: kept over restarts.
    pub fn orientation(&self) -> Orientation {
        self.adapter.orientation()
    }

    /// The link came up: the commands to write (start reporting, ask the battery), and the
    /// health to report.
    pub fn connected(&mut self, now: NodeMs) -> (Vec<[u8; 3]>, Vec<Reading>) {
        self.last_frame = None;
        (
            vec![wire::START_REPORTING, wire::ASK_BATTERY],
            self.watch.opened(now),
        )
    }

    /// The link went (or was dropped as stale).
    pub fn disconnected(&mut self, now: NodeMs) -> Vec<Reading> {
        self.unsettled = [None; 64];
        self.watch.closed(now)
    }

    /// A board silent for [`SILENT_MS`] has a stale link: `true` when the caller should drop
    /// it and connect again.
    pub fn stale(&self, now: NodeMs) -> bool {
        self.last_frame
            .is_some_and(|at| now.0.saturating_sub(at.0) >= SILENT_MS)
    }

    /// A command's answer: the battery's reading when it is first known or changes
    /// between low and not, and the news.
    pub fn answer(&mut self, bytes: &[u8]) -> (Vec<Reading>, Vec<News>) {
        let Some(battery) = wire::battery(bytes) else {
            return (Vec::new(), Vec::new());
        };
        let low = !battery.charging && battery.percent <= LOW_BATTERY_PERCENT;
        let changed = self.battery_low.replace(low) != Some(low);
        let readings = changed
            .then_some(Reading::Battery(low))
            .into_iter()
            .collect();
        (readings, vec![News::Battery(battery)])
    }

    /// A position frame: the readings it settles, and the news.
    pub fn frame(&mut self, bytes: &[u8], now: NodeMs) -> (Vec<Reading>, Vec<News>) {
        let fields = match wire::position(bytes) {
            Ok(fields) => fields,
            Err(e) => {
                self.watch.error();
                return (Vec::new(), vec![News::BadFrame(e)]);
            }
        };
        self.last_frame = Some(now);
        let mut readings = self.watch.heard(now, false);
        let mut news = Vec::new();
        let Some(settled) = self.settled.as_mut() else {
            // The first frame is the board as it stands.
            self.settled = Some(fields);
            readings.extend(self.placement());
            return (readings, news);
        };
        let mut changed = false;
        for (index, content) in fields.iter().enumerate() {
            let back = *content == settled[index];
            let entry = match &mut self.unsettled[index] {
                None if back => continue,
                None => self.unsettled[index].insert(Unsettled {
                    content: *content,
                    since: now,
                    changes: 1,
                    first_change: now,
                    reported: false,
                }),
                Some(entry) => entry,
            };
            if entry.content != *content {
                entry.content = *content;
                entry.since = now;
                entry.changes += 1;
            }
            if now.0.saturating_sub(entry.since.0) >= SETTLE_MS {
                // Settled: on its new content, or back on the old one (no change then).
                if !back {
                    settled[index] = *content;
                    changed = true;
                }
                self.unsettled[index] = None;
                continue;
            }
            let within = now.0.saturating_sub(entry.first_change.0) <= FLICKER_WINDOW_MS;
            if entry.changes >= FLICKER_CHANGES && within && !entry.reported {
                entry.reported = true;
                let field = Field::new(index as u8).expect("64 fields");
                news.push(News::Flickering(square_of(field)));
            }
        }
        if changed {
            readings.extend(self.placement());
        }
        (readings, news)
    }

    /// The settled squares as a placement, when it changed.
    fn placement(&mut self) -> Option<Reading> {
        let fields = self.settled.as_ref()?.clone();
        let reading = self.adapter.message(&Message::BoardDump(fields))?;
        let Reading::Placement(placement) = reading else {
            return None;
        };
        if self.last_placement == Some(placement) {
            return None;
        }
        self.last_placement = Some(placement);
        Some(reading)
    }
}

/// The square of a field in the board's own numbering (a8 first), as it stands upright.
fn square_of(field: Field) -> Square {
    Square::from_coords(field.file(), field.rank()).expect("a field is a square")
}

#[cfg(test)]
mod tests {
    use super::super::wire::tests::{frame, start};
    use super::*;

    fn placements(readings: &[Reading]) -> Vec<Placement> {
        readings
            .iter()
            .filter_map(|r| match r {
                Reading::Placement(p) => Some(*p),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_move_is_taken_once_its_squares_settle_and_idle_frames_say_nothing() {
        let mut session = Session::new(Orientation::default());
        let (commands, _) = session.connected(NodeMs(0));
        assert_eq!(commands, [wire::START_REPORTING, wire::ASK_BATTERY]);
        let start = start();
        let (readings, _) = session.frame(&frame(&start, 4), NodeMs(100));
        assert_eq!(placements(&readings).len(), 1);
        // Ten idle frames a second: nothing new.
        for t in (200..1_200).step_by(100) {
            let (readings, news) = session.frame(&frame(&start, 4), NodeMs(t));
            assert!(placements(&readings).is_empty() && news.is_empty());
        }
        // e2-e4: seen at 1.2 s, taken once it held 250 ms.
        let mut e4 = start.clone();
        let (e2, e4_field) = (6 * 8 + 4, 4 * 8 + 4);
        e4[e4_field] = e4[e2].take();
        let (readings, _) = session.frame(&frame(&e4, 4), NodeMs(1_200));
        assert!(placements(&readings).is_empty(), "not settled yet");
        let (readings, _) = session.frame(&frame(&e4, 2), NodeMs(1_300));
        assert!(placements(&readings).is_empty());
        let (readings, _) = session.frame(&frame(&e4, 4), NodeMs(1_500));
        let taken = placements(&readings);
        assert_eq!(taken.len(), 1);
        assert!(
            taken[0]
                .piece_at(Square::from_coords(4, 3).unwrap())
                .is_some(),
            "a pawn on e4"
        );
    }

    #[test]
    fn a_flickering_square_never_settles_and_is_reported_once() {
        let mut session = Session::new(Orientation::default());
        session.connected(NodeMs(0));
        let start = start();
        session.frame(&frame(&start, 4), NodeMs(0));
        let mut flicker = start.clone();
        flicker[0] = None; // a8's rook comes and goes
        let mut reported = Vec::new();
        for (i, t) in (100..3_100).step_by(100).enumerate() {
            let shown = if i % 2 == 0 { &flicker } else { &start };
            let (readings, news) = session.frame(&frame(shown, 4), NodeMs(t));
            assert!(placements(&readings).is_empty(), "a flicker is no move");
            reported.extend(news);
        }
        assert_eq!(
            reported,
            [News::Flickering(Square::from_coords(0, 7).unwrap())]
        );
    }

    #[test]
    fn the_battery_a_bad_frame_and_a_silent_link() {
        let mut session = Session::new(Orientation::default());
        session.connected(NodeMs(0));
        let (readings, news) = session.answer(&[0x2a, 0x02, 15]);
        assert_eq!(
            news,
            [News::Battery(Battery {
                percent: 15,
                charging: false
            })]
        );
        assert_eq!(readings, [Reading::Battery(true)], "15 % is low");
        assert!(
            session.answer(&[0x2a, 0x02, 14]).0.is_empty(),
            "still low: said once"
        );
        assert_eq!(
            session.answer(&[0x2a, 0x02, 0x80 | 14]).0,
            [Reading::Battery(false)],
            "charging"
        );
        assert!(
            session.answer(&[0x01, 0x24]).1.is_empty(),
            "no answer of ours"
        );
        let (_, news) = session.frame(&[0x01, 0x24, 0x00], NodeMs(10));
        assert!(matches!(news[..], [News::BadFrame(_)]));
        session.frame(&frame(&start(), 4), NodeMs(100));
        assert!(!session.stale(NodeMs(2_000)));
        assert!(session.stale(NodeMs(3_100)));
        let health = session.disconnected(NodeMs(3_100));
        assert!(health
            .iter()
            .any(|r| matches!(r, Reading::Health(h) if !h.board_connected)));
    }
}
