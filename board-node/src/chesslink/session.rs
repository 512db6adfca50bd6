//! A live ChessLink board's line as the node keeps it: status reports on every change asked
//! for when the line opens, each status a placement (the DGT adapter's reading of a board
//! dump, a8 first, a board set up the wrong way round read rotated), the board probed when
//! silent. A ChessLink board has no clock: the hub completes a move once it has stood
//! (boards without a clock, `--debounce-ms`).

use protocol::{NodeMs, Placement};

use super::wire::{self, Decoder, Reply};
use crate::eboard::message::Message;
use crate::eboard::{Adapter, Orientation};
use crate::line::health::HealthWatch;
use crate::line::{LineSession, LineSettings};
use crate::source::Reading;

#[derive(Debug)]
pub struct Session {
    decoder: Decoder,
    adapter: Adapter,
    watch: HealthWatch,
    last_placement: Option<Placement>,
}

impl Session {
    /// `orientation`: whether the board stands the wrong way round, if an earlier run decided.
    pub fn new(orientation: Orientation) -> Session {
        Session {
            decoder: Decoder::default(),
            adapter: Adapter::oriented(orientation),
            watch: HealthWatch::default(),
            last_placement: None,
        }
    }
}

impl LineSession for Session {
    /// 38400 baud, 7 bits, odd parity.
    fn settings(&self) -> LineSettings {
        LineSettings {
            baud: 38_400,
            data_bits: serialport::DataBits::Seven,
            parity: serialport::Parity::Odd,
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
        self.decoder = Decoder::default();
        (wire::start_commands(), self.watch.opened(now))
    }

    fn read(&mut self, bytes: &[u8], now: NodeMs) -> Vec<Reading> {
        if bytes.is_empty() {
            return Vec::new();
        }
        self.decoder.push(bytes);
        let mut readings = Vec::new();
        while let Some(reply) = self.decoder.next_reply() {
            match reply {
                Ok(Reply::Status(fields)) => {
                    let Some(Reading::Placement(p)) =
                        self.adapter.message(&Message::BoardDump(fields))
                    else {
                        continue;
                    };
                    if self.last_placement != Some(p) {
                        self.last_placement = Some(p);
                        readings.push(Reading::Placement(p));
                    }
                }
                Ok(Reply::Ack(_)) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "undecodable reply from the board");
                    self.watch.error();
                }
            }
        }
        self.watch.noise(self.decoder.skipped_bytes());
        let mut out = self.watch.heard(now, false);
        out.extend(readings);
        out
    }

    fn probe(&self) -> Vec<u8> {
        wire::probe_commands()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR";
    const E4: &str = "rnbqkbnrpppppppp....................P...........PPPP.PPPRNBQKBNR";

    #[test]
    fn statuses_become_placements_once_each_and_the_board_has_no_clock() {
        let mut session = Session::new(Orientation::default());
        let (commands, _) = session.opened(NodeMs(0));
        assert_eq!(commands, wire::start_commands());
        let mut bytes = wire::reply(b'w', "0203");
        bytes.extend(wire::reply(b's', START));
        let readings = session.read(&bytes, NodeMs(1));
        let Reading::Health(health) = readings[0] else {
            panic!("{readings:?}")
        };
        assert!(health.board_connected && !health.clock_connected);
        let Reading::Placement(start) = readings[1] else {
            panic!("{readings:?}")
        };
        assert_eq!(
            start.board_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
        // The same status again (a report per scan) is no news; a move is.
        assert!(session
            .read(&wire::reply(b's', START), NodeMs(2))
            .is_empty());
        let readings = session.read(&wire::reply(b's', E4), NodeMs(3));
        let [Reading::Placement(e4)] = readings[..] else {
            panic!("{readings:?}")
        };
        assert_eq!(
            e4.board_fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
        );
        assert_eq!(session.health().serial_errors, 0);
    }
}
