//! A live DGT board's serial line as the node keeps it: what to send when the line opens,
//! what each read means, when a silent board is asked whether it is still there, and what
//! the node reports of its own health. No IO: the serial edge ([`crate::line::serial`]) feeds it
//! the line's events with the time they happened.
//!
//! After the line reopens (a cable pulled and put back, a board switched off and on) the
//! board is asked for a full dump and the clock: a placement that did not change is not
//! reported again, and a move made while the line was down arrives as one placement and one
//! press, as if the hand had been quick.
//!
//! A line that stays open can lose bytes too: it stalls (nothing for longer than a running
//! clock is ever quiet, [`GAP_MS`]) or garbles them. Then the node cannot trust its copy of
//! the board (the field updates it missed are gone): it says so to the hub as a
//! reconnection ([`HealthWatch::lost_sight`]), asks for the dump and the clock again, and
//! passes nothing on until the dump has come.

use protocol::{NodeMs, Placement};

use super::wire::{Decoder, PROBE_COMMANDS, START_COMMANDS};
use crate::eboard::message::Message;
use crate::eboard::{Adapter, ClockSide, Orientation};
use crate::line::health::HealthWatch;
use crate::line::{LineSession, LineSettings};
use crate::source::Reading;

pub use crate::line::health::{ERRORS_REPORT_EVERY_MS, GAP_MS, PROBE_AFTER_MS, PROBE_TIMEOUT_MS};

/// One board's line.
///
/// ```
/// use board_node::dgt::session::Session;
/// use board_node::dgt::wire;
/// use board_node::eboard::message::Message;
/// use board_node::line::LineSession;
/// use board_node::source::Reading;
/// use protocol::NodeMs;
///
/// let mut session = Session::new(None);
/// let (commands, _) = session.opened(NodeMs(0));
/// assert_eq!(commands, wire::START_COMMANDS);
/// let dump = wire::encode(&Message::BoardDump(Box::new([None; 64])));
/// let readings = session.read(&dump, NodeMs(10));
/// assert!(readings.iter().any(|r| matches!(r, Reading::Health(h) if h.board_connected)));
/// ```
#[derive(Debug)]
pub struct Session {
    decoder: Decoder,
    adapter: Adapter,
    watch: HealthWatch,
    last_placement: Option<Placement>,
    /// The clock ran at its last message: it speaks every second.
    clock_running: bool,
    /// The line lost bytes: the board's dump is asked for, and until it comes nothing read
    /// is passed on.
    resyncing: bool,
    /// Commands for the board after this read.
    to_send: Vec<u8>,
}

impl Session {
    /// `white_clock`: which side of the clock is White's; `None` decides it from the clock.
    pub fn new(white_clock: Option<ClockSide>) -> Session {
        Session::oriented(Orientation {
            white_clock,
            reversed: None,
        })
    }

    /// A session that knows how the board and clock stand (kept from an earlier run).
    pub fn oriented(orientation: Orientation) -> Session {
        Session {
            decoder: Decoder::default(),
            adapter: Adapter::oriented(orientation),
            watch: HealthWatch::default(),
            last_placement: None,
            clock_running: false,
            resyncing: false,
            to_send: Vec::new(),
        }
    }
}

impl Session {
    /// The line lost bytes: the hub hears of it as a reconnection, and the board is asked
    /// for its dump and clock (and update mode, in case it was reset).
    fn lose_sight(&mut self, now: NodeMs) -> Vec<Reading> {
        if !self.resyncing {
            self.resyncing = true;
            self.adapter.reopened();
            self.to_send.extend_from_slice(&PROBE_COMMANDS);
        }
        self.watch.lost_sight(now)
    }
}

impl LineSession for Session {
    /// 9600 baud, 8N1.
    fn settings(&self) -> LineSettings {
        LineSettings {
            baud: 9_600,
            data_bits: serialport::DataBits::Eight,
            parity: serialport::Parity::None,
        }
    }

    fn watch(&self) -> &HealthWatch {
        &self.watch
    }

    fn watch_mut(&mut self) -> &mut HealthWatch {
        &mut self.watch
    }

    fn orientation(&self) -> Orientation {
        self.adapter.orientation()
    }

    fn opened(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Reading>) {
        // A message cut off by the close would glue onto the first one after it.
        self.decoder = Decoder::default();
        self.adapter.reopened();
        // The start commands ask for the dump anyway.
        self.resyncing = false;
        (START_COMMANDS.to_vec(), self.watch.opened(now))
    }

    fn read(&mut self, bytes: &[u8], now: NodeMs) -> Vec<Reading> {
        if bytes.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // (An answer to a probe is the board read again anyway.)
        if self.clock_running && !self.watch.probing() && self.watch.silent_for(now) >= GAP_MS {
            tracing::info!(
                silent_ms = self.watch.silent_for(now),
                "the line stalled under a running clock: reading the board again"
            );
            out.extend(self.lose_sight(now));
        }
        let mut clock = self.watch.health().clock_connected;
        self.decoder.push(bytes);
        let mut readings = Vec::new();
        loop {
            let skipped = self.decoder.skipped_bytes();
            let Some(message) = self.decoder.next_message() else {
                break;
            };
            self.watch.noise(self.decoder.skipped_bytes());
            let message = match message {
                Ok(message) if self.decoder.skipped_bytes() == skipped => message,
                garbled => {
                    // Garbled bytes may have been a field update: the copy of the board is
                    // not trusted until the dump. (Noise alone is counted by `noise`.)
                    if let Err(e) = &garbled {
                        tracing::debug!(error = %e, "undecodable message from the board");
                        self.watch.error();
                    }
                    out.extend(self.lose_sight(now));
                    match garbled {
                        Ok(message) => message,
                        Err(_) => continue,
                    }
                }
            };
            if let Message::Clock(status) = &message {
                clock = !status.no_clock;
                self.clock_running = status.running;
            }
            if self.resyncing {
                // Only the whole board counts again; what came before it was read against
                // a copy of the board that missed something.
                if !matches!(message, Message::BoardDump(_)) {
                    continue;
                }
                self.resyncing = false;
            }
            match self.adapter.message(&message) {
                Some(Reading::Placement(p)) if self.last_placement == Some(p) => {}
                Some(reading) => {
                    if let Reading::Placement(p) = reading {
                        self.last_placement = Some(p);
                    }
                    readings.push(reading);
                }
                None => {}
            }
            readings.extend(self.adapter.battery(&message));
        }
        // Health first: the hub learns the board is back before what it shows.
        out.extend(self.watch.heard(now, clock));
        out.extend(readings);
        out
    }

    fn to_send(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.to_send)
    }

    /// A silent board is asked for its board and clock, and put in update mode again, which
    /// a board that lost power and came back has forgotten.
    fn probe(&self) -> Vec<u8> {
        PROBE_COMMANDS.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgt::wire;
    use crate::eboard::message::{ClockStatus, Face, Field};
    use crate::line::LineSession;
    use protocol::{Color, NodeHealth};

    fn start_dump() -> Vec<u8> {
        let start = crate::sensors::placement(&shakmaty::Board::new());
        let mut fields = Box::new([None; 64]);
        for (square, piece) in start.pieces() {
            fields[usize::from(7 - square.rank()) * 8 + usize::from(square.file())] = Some(piece);
        }
        wire::encode(&Message::BoardDump(fields))
    }

    fn clock(left_to_move: bool, left_s: u32, right_s: u32) -> Vec<u8> {
        clock_battery(left_to_move, left_s, right_s, false)
    }

    /// A time message, the clock's battery low or not (bit 0x04 of its status byte).
    fn clock_battery(left_to_move: bool, left_s: u32, right_s: u32, battery_low: bool) -> Vec<u8> {
        let face = |s: u32| Face {
            ms: s * 1000,
            ..Face::default()
        };
        wire::encode(&Message::Clock(ClockStatus {
            left: face(left_s),
            right: face(right_s),
            running: true,
            left_to_move,
            right_to_move: !left_to_move,
            battery_low,
            ..ClockStatus::default()
        }))
    }

    fn healths(readings: &[Reading]) -> Vec<NodeHealth> {
        readings
            .iter()
            .filter_map(|r| match r {
                Reading::Health(h) => Some(*h),
                _ => None,
            })
            .collect()
    }

    fn placements(readings: &[Reading]) -> usize {
        readings
            .iter()
            .filter(|r| matches!(r, Reading::Placement(_)))
            .count()
    }

    #[test]
    fn a_reopened_line_reports_an_unchanged_board_once_and_a_move_made_meanwhile_as_a_press() {
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        let mut first = start_dump();
        first.extend(clock(true, 300, 300));
        let readings = session.read(&first, NodeMs(10));
        assert_eq!(placements(&readings), 1);
        assert!(healths(&readings)[0].board_connected && healths(&readings)[0].clock_connected);

        // The cable is pulled: one error, both connections down, since then.
        let down = healths(&session.closed(NodeMs(1_000)));
        assert_eq!(down.len(), 1);
        assert!(!down[0].board_connected && !down[0].clock_connected);
        assert_eq!((down[0].serial_errors, down[0].since), (1, NodeMs(1_000)));
        // Failed reopens while it is out count no further.
        assert!(session.open_failed(NodeMs(1_500)).is_empty());
        assert_eq!(session.health().serial_errors, 1);

        // Back: the same board again is not a new placement; the clock shows that the left
        // player pressed meanwhile.
        session.opened(NodeMs(4_000));
        let mut again = start_dump();
        again.extend(clock(false, 290, 300));
        let readings = session.read(&again, NodeMs(4_010));
        assert_eq!(placements(&readings), 0);
        let press = readings.iter().find_map(|r| match r {
            Reading::Clock(c) => Some(*c),
            _ => None,
        });
        assert_eq!(press.unwrap().pressed_by, Some(Color::White));
        assert!(healths(&readings)[0].board_connected);
    }

    /// The dump of the start position with the piece on `lifted` (DGT's field number)
    /// gone.
    fn dump_without(lifted: usize) -> Vec<u8> {
        let mut bytes = start_dump();
        // The dump's data: one byte per field after the 3-byte header.
        bytes[3 + lifted] = 0;
        bytes
    }

    #[test]
    fn the_clocks_battery_is_told_when_first_known_and_when_it_changes() {
        let battery = |readings: &[Reading]| -> Vec<bool> {
            readings
                .iter()
                .filter_map(|r| match r {
                    Reading::Battery(low) => Some(*low),
                    _ => None,
                })
                .collect()
        };
        let low = |left_s: u32| clock_battery(true, left_s, 300, true);
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        let mut first = start_dump();
        first.extend(clock(true, 300, 300));
        assert_eq!(battery(&session.read(&first, NodeMs(10))), [false]);
        assert!(battery(&session.read(&clock(true, 299, 300), NodeMs(1_010))).is_empty());
        assert_eq!(battery(&session.read(&low(298), NodeMs(2_010))), [true]);
        assert!(battery(&session.read(&low(297), NodeMs(3_010))).is_empty());
        assert_eq!(
            battery(&session.read(&clock(true, 296, 300), NodeMs(4_010))),
            [false]
        );
    }

    #[test]
    fn garbled_bytes_are_counted_and_the_board_is_read_again_before_anything_after_them() {
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        session.read(&start_dump(), NodeMs(1));
        let lift = wire::encode(&Message::FieldUpdate {
            field: Field::new(52).unwrap(),
            piece: None,
        });
        let mut bytes = vec![0x11, 0x22, 0x33];
        bytes.extend(&lift);
        bytes.extend([0x8e, 0x00, 0x05, 0x0c, 0x0f]); // piece code 15
        let readings = session.read(&bytes, NodeMs(2));
        assert_eq!(placements(&readings), 0, "nothing after garbage is trusted");
        assert_eq!(
            session.health().serial_errors,
            2,
            "a noise burst, a bad code"
        );
        // Told as a reconnection: the hub knows presses may have been missed.
        let told = healths(&readings);
        assert!(
            !told[0].board_connected && told[1].board_connected,
            "{told:?}"
        );
        assert_eq!(
            session.to_send(),
            wire::PROBE_COMMANDS,
            "the board asked again"
        );
        assert!(session.to_send().is_empty(), "once");
        // The dump: the board as it stands, the piece lifted.
        let readings = session.read(&dump_without(52), NodeMs(3));
        assert_eq!(placements(&readings), 1);
        // Errors alone are reported at most every ERRORS_REPORT_EVERY_MS.
        assert!(healths(&readings).is_empty());
    }

    #[test]
    fn a_line_silent_under_a_running_clock_is_read_again_before_what_it_says_next() {
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        let mut first = start_dump();
        first.extend(clock(true, 300, 300));
        session.read(&first, NodeMs(10));
        // Ticks each second are no gap.
        session.read(&clock(true, 299, 300), NodeMs(1_010));
        assert!(session.to_send().is_empty());
        // Then nothing for 4 s; what comes next may follow lost field updates.
        let lift = wire::encode(&Message::FieldUpdate {
            field: Field::new(52).unwrap(),
            piece: None,
        });
        let readings = session.read(&lift, NodeMs(5_010));
        assert_eq!(placements(&readings), 0);
        assert!(!healths(&readings)[0].board_connected);
        assert_eq!(session.to_send(), wire::PROBE_COMMANDS);
        let mut answer = dump_without(52);
        answer.extend(clock(true, 295, 300));
        let readings = session.read(&answer, NodeMs(5_100));
        assert_eq!(placements(&readings), 1);
        // A stopped clock is silent by nature: no gap.
        let mut stopped = Session::new(None);
        stopped.opened(NodeMs(0));
        stopped.read(&start_dump(), NodeMs(10));
        stopped.read(&lift, NodeMs(60_000));
        assert!(stopped.to_send().is_empty());
    }

    #[test]
    fn a_silent_board_is_probed_and_taken_for_gone_when_it_does_not_answer() {
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        session.read(&start_dump(), NodeMs(0));
        assert_eq!(session.idle(NodeMs(PROBE_AFTER_MS - 1)), (None, Vec::new()));
        let (probe, _) = session.idle(NodeMs(PROBE_AFTER_MS));
        assert_eq!(probe, Some(wire::PROBE_COMMANDS.to_vec()));
        let (_, readings) = session.idle(NodeMs(PROBE_AFTER_MS + PROBE_TIMEOUT_MS));
        assert!(!healths(&readings)[0].board_connected);
        // The board answers later: connected again, and its board, unchanged, is not news.
        let readings = session.read(&start_dump(), NodeMs(20_000));
        assert!(healths(&readings)[0].board_connected);
        assert_eq!(placements(&readings), 0);
    }

    #[test]
    fn a_clock_switched_off_is_reported_and_the_board_stays_connected() {
        let mut session = Session::new(None);
        session.opened(NodeMs(0));
        let mut bytes = start_dump();
        bytes.extend(clock(true, 60, 60));
        session.read(&bytes, NodeMs(0));
        let off = wire::encode(&Message::Clock(ClockStatus {
            no_clock: true,
            ..ClockStatus::default()
        }));
        let health = healths(&session.read(&off, NodeMs(500)));
        assert!(health[0].board_connected && !health[0].clock_connected);
        assert_eq!(health[0].since, NodeMs(500));
        let health = healths(&session.read(&clock(true, 60, 60), NodeMs(900)));
        assert!(health[0].clock_connected, "switched on again");
    }
}
