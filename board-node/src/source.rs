//! Where a node's readings come from.
//!
//! A scripted [`Source`] yields what the e-board and the clock would report, each reading
//! stamped with the game time at which it happens; a node replays it at its pace and resumes
//! it by index after a restart. A live board ([`Feed::Live`]) sends its readings as they
//! happen, stamped by the node when they arrive.

use protocol::{ClockReport, NodeHealth, Placement, UplinkBody};

/// One thing the sensors report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    Placement(Placement),
    Clock(ClockReport),
    /// Nothing changed. A board without a clock reports this once its pieces have stood
    /// still for a while, so the hub sees that the last move stands.
    Heartbeat,
    /// The node's connections to the e-board and the clock changed (a live board only).
    Health(NodeHealth),
    /// E-boards on this board's chain that nobody enrolled (their bus addresses).
    Strangers(Vec<u16>),
    /// The clock's battery is low (`true`) or not, first known or changed.
    Battery(bool),
}

impl Reading {
    /// The uplink body that reports this reading.
    pub fn body(&self) -> UplinkBody {
        match self {
            Reading::Placement(p) => UplinkBody::Placement(*p),
            Reading::Clock(c) => UplinkBody::Clock(*c),
            Reading::Heartbeat => UplinkBody::Heartbeat,
            Reading::Health(h) => UplinkBody::Health(*h),
            Reading::Strangers(s) => UplinkBody::Strangers(s.clone()),
            Reading::Battery(low) => UplinkBody::Battery { low: *low },
        }
    }
}

/// A reading and when it happens, in ms of game time since the source started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed {
    pub game_ms: u64,
    pub reading: Reading,
}

impl Timed {
    pub fn at(game_ms: u64, reading: Reading) -> Timed {
        Timed { game_ms, reading }
    }
}

/// A finite or endless stream of readings.
pub trait Source {
    /// The reading at `index` (0-based), or `None` once the source is exhausted. Indexed so a
    /// node that restarts resumes where its outbox says it stopped.
    fn reading(&self, index: usize) -> Option<&Timed>;
}

/// A source that is a fixed list, like a replayed game.
impl Source for Vec<Timed> {
    fn reading(&self, index: usize) -> Option<&Timed> {
        self.get(index)
    }
}

/// What a node reads from: a scripted source, or a live board's readings as they come.
pub enum Feed<S> {
    Script(S),
    Live(tokio::sync::mpsc::Receiver<Reading>),
}
