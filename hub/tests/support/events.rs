//! Feeding a replay script to the hub's core, as the live hub and its journal replay do.

use board_node::source::Timed;
use hub::core::effect::Effect;
use hub::core::hall::Hall;
use hub::core::intake::Admission;
use hub::core::record::Record;
use hub::core::time::HubMs;
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};

/// Every reading of `script` on `board` into `sink`, from sequence number 1, stamped in game
/// time (the hub's receive time follows the node's); what it made of them.
pub fn feed<S: Sink>(sink: &mut S, board: BoardNo, script: Vec<Timed>) -> Vec<S::Out> {
    feed_bodies(
        sink,
        board,
        script.into_iter().map(|t| (t.game_ms, t.reading.body())),
    )
}

/// Uplink bodies on `board` into `sink` from sequence number 1, each with its game time in
/// ms; what it made of them.
pub fn feed_bodies<S: Sink>(
    sink: &mut S,
    board: BoardNo,
    bodies: impl IntoIterator<Item = (u64, UplinkBody)>,
) -> Vec<S::Out> {
    let mut out = Vec::new();
    for (i, (game_ms, body)) in bodies.into_iter().enumerate() {
        let event = Uplink::new(board, Seq(i as u64 + 1), NodeMs(game_ms), body);
        out.extend(sink.take(Record {
            at: HubMs(game_ms),
            event,
        }));
    }
    out
}

/// Where a [`Script`]'s events go: the hall alone (its effects), or the whole hub's core
/// (the alert changes it published).
pub trait Sink {
    type Out;
    fn take(&mut self, record: Record) -> Vec<Self::Out>;
}

impl Sink for Hall {
    type Out = Effect;

    fn take(&mut self, record: Record) -> Vec<Effect> {
        assert_eq!(self.admit(record.at, &record.event), Admission::Accept);
        self.apply(&record)
    }
}

impl Sink for super::hub::TestHub {
    type Out = hub::core::alerts::AlertChange;

    fn take(&mut self, record: Record) -> Vec<Self::Out> {
        self.uplink(record.at, record.event)
    }
}

/// A board's events written move by move, as a node would report them: each move set down
/// and the clock pressed `think_ms` later with the mover's time.
pub struct Script {
    board: BoardNo,
    pub position: shakmaty::Chess,
    next_seq: u64,
    pub now: u64,
    /// What the clock shows: white, black.
    pub clock: [u32; 2],
    /// What the clock adds at each press of [`Script::play`].
    pub increment_ms: u32,
    last: Option<Uplink>,
}

impl Script {
    pub fn new(board: BoardNo, clock_ms: u32) -> Script {
        Script {
            board,
            position: shakmaty::Chess::default(),
            next_seq: 1,
            now: 0,
            clock: [clock_ms; 2],
            increment_ms: 0,
            last: None,
        }
    }

    fn event(&mut self, body: UplinkBody) -> Record {
        let event = Uplink::new(self.board, Seq(self.next_seq), NodeMs(self.now), body);
        self.next_seq += 1;
        self.last = Some(event.clone());
        Record {
            at: HubMs(self.now),
            event,
        }
    }

    /// The last event sent, as the node would resend it.
    pub fn last_event(&self) -> Uplink {
        self.last.clone().expect("an event was sent")
    }

    /// Feeds one event to `sink`; what it made of it.
    pub fn send<S: Sink>(&mut self, sink: &mut S, body: UplinkBody) -> Vec<S::Out> {
        let record = self.event(body);
        sink.take(record)
    }

    /// The board shows `board`'s pieces.
    pub fn show<S: Sink>(&mut self, hall: &mut S, board: &shakmaty::Board) -> Vec<S::Out> {
        let placement = board_node::sensors::placement(board);
        self.send(hall, UplinkBody::Placement(placement))
    }

    /// The side to move presses after `think_ms`; its clock shows what it used (plus
    /// `bonus_ms`).
    pub fn press<S: Sink>(&mut self, hall: &mut S, think_ms: u32, bonus_ms: u32) -> Vec<S::Out> {
        use shakmaty::Position;
        self.now += u64::from(think_ms);
        let mover = self.position.turn();
        let i = usize::from(mover == shakmaty::Color::Black);
        self.clock[i] = self.clock[i] - think_ms + bonus_ms;
        let side = |c: shakmaty::Color| match c {
            shakmaty::Color::White => protocol::Color::White,
            shakmaty::Color::Black => protocol::Color::Black,
        };
        let report = protocol::ClockReport {
            white_ms: self.clock[0],
            black_ms: self.clock[1],
            running: Some(side(!mover)),
            white_flag: false,
            black_flag: false,
            pressed_by: Some(side(mover)),
        };
        self.send(hall, UplinkBody::Clock(report))
    }

    /// The arbiter sets the clock to [`Script::clock`] and starts `running`'s side (a
    /// reading without a press).
    pub fn set_clock<S: Sink>(&mut self, hall: &mut S, running: shakmaty::Color) -> Vec<S::Out> {
        let report = protocol::ClockReport {
            white_ms: self.clock[0],
            black_ms: self.clock[1],
            running: Some(match running {
                shakmaty::Color::White => protocol::Color::White,
                shakmaty::Color::Black => protocol::Color::Black,
            }),
            white_flag: false,
            black_flag: false,
            pressed_by: None,
        };
        self.send(hall, UplinkBody::Clock(report))
    }

    /// After `after_ms` a reading of the clock as [`Script::clock`] holds it, with
    /// `running`'s side running (`None`: both stand, 6.11.2) and `flag`'s flag down.
    pub fn reading<S: Sink>(
        &mut self,
        hall: &mut S,
        after_ms: u32,
        running: Option<shakmaty::Color>,
        flag: Option<shakmaty::Color>,
    ) -> Vec<S::Out> {
        self.now += u64::from(after_ms);
        let side = |c: shakmaty::Color| match c {
            shakmaty::Color::White => protocol::Color::White,
            shakmaty::Color::Black => protocol::Color::Black,
        };
        if let Some(flagged) = flag {
            self.clock[usize::from(flagged == shakmaty::Color::Black)] = 0;
        }
        let report = protocol::ClockReport {
            white_ms: self.clock[0],
            black_ms: self.clock[1],
            running: running.map(side),
            white_flag: flag == Some(shakmaty::Color::White),
            black_flag: flag == Some(shakmaty::Color::Black),
            pressed_by: None,
        };
        self.send(hall, UplinkBody::Clock(report))
    }

    /// Plays `uci` on the board and presses after `think_ms`.
    pub fn play<S: Sink>(&mut self, hall: &mut S, uci: &str, think_ms: u32) -> Vec<S::Out> {
        use shakmaty::Position;
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .expect("UCI")
            .to_move(&self.position)
            .expect("legal");
        let mut after = self.position.clone();
        after.play_unchecked(m);
        let mut effects = self.show(hall, after.board());
        effects.extend(self.press(hall, think_ms, self.increment_ms));
        self.position = after;
        effects
    }

    pub fn board(&self) -> BoardNo {
        self.board
    }

    /// The board's sequence number of its last event.
    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }
}
