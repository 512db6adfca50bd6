//! Feeding a replay script to the hub's core, as the live hub and its journal replay do.

use board_node::source::Timed;
use hub::core::hall::{Effect, Hall};
use hub::core::intake::Admission;
use hub::core::record::Record;
use hub::core::relay::Relay;
use hub::core::time::HubMs;
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};

/// Admits and applies every reading of `script` on `board`, stamped in game time (the hub's
/// receive time follows the node's); returns the effects.
pub fn feed(hall: &mut Hall, board: BoardNo, script: Vec<Timed>) -> Vec<Effect> {
    feed_bodies(
        hall,
        board,
        script.into_iter().map(|t| (t.game_ms, t.reading.body())),
    )
}

/// Admits and applies uplink bodies on `board` from sequence number 1, each with its game
/// time in ms; returns the effects.
pub fn feed_bodies(
    hall: &mut Hall,
    board: BoardNo,
    bodies: impl IntoIterator<Item = (u64, UplinkBody)>,
) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (i, (game_ms, body)) in bodies.into_iter().enumerate() {
        let event = Uplink::new(board, Seq(i as u64 + 1), NodeMs(game_ms), body);
        let at = HubMs(game_ms);
        assert_eq!(hall.admit(at, &event), Admission::Accept);
        effects.extend(hall.apply(&Record { at, event }));
    }
    effects
}

/// [`feed`], with every effect also taken in by `relay` at its record's time, as the live hub
/// does: the broadcast feed's view of the board.
pub fn feed_relayed(hall: &mut Hall, relay: &mut Relay, board: BoardNo, script: Vec<Timed>) {
    for (i, timed) in script.into_iter().enumerate() {
        let event = Uplink::new(
            board,
            Seq(i as u64 + 1),
            NodeMs(timed.game_ms),
            timed.reading.body(),
        );
        let at = HubMs(timed.game_ms);
        assert_eq!(hall.admit(at, &event), Admission::Accept);
        for effect in hall.apply(&Record { at, event }) {
            relay.on_effect(at, &effect);
        }
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
        }
    }

    fn event(&mut self, body: UplinkBody) -> Record {
        let event = Uplink::new(self.board, Seq(self.next_seq), NodeMs(self.now), body);
        self.next_seq += 1;
        Record {
            at: HubMs(self.now),
            event,
        }
    }

    /// Feeds one event to `hall`; returns its effects.
    pub fn send(&mut self, hall: &mut Hall, body: UplinkBody) -> Vec<Effect> {
        let record = self.event(body);
        assert_eq!(hall.admit(record.at, &record.event), Admission::Accept);
        hall.apply(&record)
    }

    /// The board shows `board`'s pieces.
    pub fn show(&mut self, hall: &mut Hall, board: &shakmaty::Board) -> Vec<Effect> {
        let placement = board_node::sensors::placement(board);
        self.send(hall, UplinkBody::Placement(placement))
    }

    /// The side to move presses after `think_ms`; its clock shows what it used (plus
    /// `bonus_ms`).
    pub fn press(&mut self, hall: &mut Hall, think_ms: u32, bonus_ms: u32) -> Vec<Effect> {
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
    pub fn set_clock(&mut self, hall: &mut Hall, running: shakmaty::Color) -> Vec<Effect> {
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
    pub fn reading(
        &mut self,
        hall: &mut Hall,
        after_ms: u32,
        running: Option<shakmaty::Color>,
        flag: Option<shakmaty::Color>,
    ) -> Vec<Effect> {
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
    pub fn play(&mut self, hall: &mut Hall, uci: &str, think_ms: u32) -> Vec<Effect> {
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
