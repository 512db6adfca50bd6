//! A live e-board's serial line, whatever its protocol: the [`LineSession`] a protocol
//! implements (pure: bytes and times in, readings and bytes to send out), the health every
//! line reports ([`health`]), and the serial port that feeds a session ([`serial`]).

pub mod health;
pub mod serial;

use std::time::Duration;

use protocol::{NodeHealth, NodeMs};

use crate::eboard::Orientation;
use crate::source::Reading;
use health::{HealthWatch, Silence};

/// How a board's serial line is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSettings {
    pub baud: u32,
    pub data_bits: serialport::DataBits,
    pub parity: serialport::Parity,
}

/// One board's line as a protocol keeps it. Each method takes the time it happens at and
/// gives the readings the node sends on (health first). What every line does alike (its
/// health, failures, probing a silent board) is provided.
pub trait LineSession: Send + 'static {
    fn settings(&self) -> LineSettings;
    /// The line opened: the bytes to send the board, and the health to report.
    fn opened(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Reading>);
    /// Bytes read off the line.
    fn read(&mut self, bytes: &[u8], now: NodeMs) -> Vec<Reading>;
    /// What to send a board that has been silent a while.
    fn probe(&self) -> Vec<u8>;
    /// What to send the board after the last read (a request to read it all again after
    /// the line lost bytes); nothing by default.
    fn to_send(&mut self) -> Vec<u8> {
        Vec::new()
    }
    /// How the board (and its clock) stand, as far as decided: kept over restarts.
    fn orientation(&self) -> Orientation;
    fn watch(&self) -> &HealthWatch;
    fn watch_mut(&mut self) -> &mut HealthWatch;

    fn health(&self) -> NodeHealth {
        self.watch().health()
    }

    /// The line could not be opened.
    fn open_failed(&mut self, now: NodeMs) -> Vec<Reading> {
        self.watch_mut().open_failed(now)
    }

    /// The line failed or closed.
    fn closed(&mut self, now: NodeMs) -> Vec<Reading> {
        self.watch_mut().closed(now)
    }

    /// Nothing was read for a while: bytes to send (a probe), and the health to report.
    fn idle(&mut self, now: NodeMs) -> (Option<Vec<u8>>, Vec<Reading>) {
        let (silence, health) = self.watch_mut().idle(now);
        let probe = (silence == Silence::Probe).then(|| self.probe());
        (probe, health)
    }
}

/// A serial line as its port's thread drives it ([`serial::read_line`]): one board's
/// [`LineSession`], or a chain of boards on one line ([`crate::dgt::bus::master::Chain`]).
/// Each method takes the time it happens at and gives the bytes to send and what to
/// report.
pub trait Line: Send + 'static {
    /// What the line reports: a board's readings, or each board's on a chain.
    type Out: Send + 'static;
    fn settings(&self) -> LineSettings;
    /// How long a read waits before the line counts as quiet.
    fn read_timeout(&self) -> Duration;
    fn opened(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Self::Out>);
    fn read(&mut self, bytes: &[u8], now: NodeMs) -> (Vec<u8>, Vec<Self::Out>);
    /// Nothing came for [`Line::read_timeout`].
    fn quiet(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Self::Out>);
    fn closed(&mut self, now: NodeMs) -> Vec<Self::Out>;
    fn open_failed(&mut self, now: NodeMs) -> Vec<Self::Out>;
}

/// A board on a port of its own: it speaks when it has something to say, and is probed
/// when it has been silent a while.
impl<S: LineSession> Line for S {
    type Out = Reading;

    fn settings(&self) -> LineSettings {
        LineSession::settings(self)
    }

    fn read_timeout(&self) -> Duration {
        Duration::from_millis(100)
    }

    fn opened(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Reading>) {
        LineSession::opened(self, now)
    }

    fn read(&mut self, bytes: &[u8], now: NodeMs) -> (Vec<u8>, Vec<Reading>) {
        let readings = LineSession::read(self, bytes, now);
        (self.to_send(), readings)
    }

    fn quiet(&mut self, now: NodeMs) -> (Vec<u8>, Vec<Reading>) {
        let (probe, health) = self.idle(now);
        (probe.unwrap_or_default(), health)
    }

    fn closed(&mut self, now: NodeMs) -> Vec<Reading> {
        LineSession::closed(self, now)
    }

    fn open_failed(&mut self, now: NodeMs) -> Vec<Reading> {
        LineSession::open_failed(self, now)
    }
}
