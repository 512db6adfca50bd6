use super::*;
use crate::dgt::bus::emulator::{BusBoard, Chain as Boards, BOOT_MS};
use crate::eboard::message::{ClockStatus, Face, Field};
use protocol::{Color, NodeHealth, Piece, Role};

/// A master and a chain of emulated boards on a line at 9,600 baud (a byte a ms), in
/// simulated time.
struct Hall {
    master: Chain,
    boards: Boards,
    line: VecDeque<(u64, u8)>,
    now: u64,
    out: Vec<(u64, ChainOut)>,
    /// Every byte the master sent.
    sent: Vec<u8>,
    /// A command the boards leave unanswered.
    unknown: Option<u8>,
}

impl Hall {
    fn new(enrolled: &[u16], on_chain: &[u16]) -> Hall {
        let address = |a: &u16| Address::new(*a).unwrap();
        let master = Chain::new(
            enrolled
                .iter()
                .map(|a| (address(a), Orientation::default()))
                .collect(),
        );
        let boards = Boards::new(
            on_chain.iter().map(|a| BusBoard::new(address(a))).collect(),
            11,
        );
        let mut hall = Hall {
            master,
            boards,
            line: VecDeque::new(),
            now: BOOT_MS,
            out: Vec::new(),
            sent: Vec::new(),
            unknown: None,
        };
        let now = NodeMs(hall.now);
        let opened = hall.master.opened(now);
        hall.record(opened);
        hall
    }

    fn record(&mut self, out: Vec<ChainOut>) {
        let now = self.now;
        self.out.extend(out.into_iter().map(|o| (now, o)));
    }

    fn queue(&mut self, bytes: Vec<u8>) {
        let mut at = self.line.back().map_or(self.now, |(t, _)| *t).max(self.now);
        for byte in bytes {
            at += 1;
            self.line.push_back((at, byte));
        }
    }

    fn run_for(&mut self, ms: u64) {
        for _ in 0..ms {
            self.now += 1;
            let now = NodeMs(self.now);
            let mut arrived = Vec::new();
            while self.line.front().is_some_and(|(t, _)| *t <= self.now) {
                arrived.extend(self.line.pop_front().map(|(_, b)| b));
            }
            let read = self.master.read(&arrived, now);
            self.record(read);
            let (bytes, out) = self.master.turn(now);
            self.record(out);
            self.sent.extend_from_slice(&bytes);
            // A board whose firmware does not know a command does not answer it.
            let bytes = match self.unknown {
                Some(code) if bytes.first() == Some(&code) => Vec::new(),
                _ => bytes,
            };
            let answer = self.boards.commands(&bytes, self.now);
            self.queue(answer);
            for (_, answer) in self.boards.due(self.now) {
                self.queue(answer);
            }
        }
    }

    fn board_out(&self, slot: usize, since: u64) -> Vec<Reading> {
        self.out
            .iter()
            .filter(|(t, _)| *t >= since)
            .filter_map(|(_, o)| match o {
                ChainOut::Board(s, r) if *s == slot => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    fn last_health(&self, slot: usize) -> Option<NodeHealth> {
        self.board_out(slot, 0).iter().rev().find_map(|r| match r {
            Reading::Health(h) => Some(*h),
            _ => None,
        })
    }

    fn happen(&mut self, board: usize, message: Message) {
        self.boards.board(board).happen(&message, self.now);
    }
}

fn e4_square() -> protocol::Square {
    protocol::Square::from_coords(4, 3).unwrap()
}

fn piece(color: Color, role: Role) -> Option<Piece> {
    Some(Piece { color, role })
}

fn clock(left_to_move: bool, left_s: u32, right_s: u32) -> Message {
    let face = |s: u32| Face {
        ms: s * 1000,
        ..Face::default()
    };
    Message::Clock(ClockStatus {
        left: face(left_s),
        right: face(right_s),
        running: true,
        right_high: left_to_move,
        left_to_move,
        right_to_move: !left_to_move,
        ..ClockStatus::default()
    })
}

#[test]
fn every_enrolled_board_is_found_and_a_stranger_reported() {
    let mut hall = Hall::new(&[1025, 2050, 3075], &[1025, 2050, 3075, 999]);
    hall.run_for(6_000);
    for slot in 0..3 {
        let health = hall.last_health(slot).expect("health");
        assert!(health.board_connected, "slot {slot}: {health:?}");
        assert!(
            hall.board_out(slot, 0)
                .iter()
                .any(|r| matches!(r, Reading::Placement(_))),
            "slot {slot} read whole"
        );
    }
    let strangers: Vec<Address> = hall
        .out
        .iter()
        .filter_map(|(_, o)| match o {
            ChainOut::Stranger(a) => Some(*a),
            _ => None,
        })
        .collect();
    assert_eq!(strangers, vec![Address::new(999).unwrap()], "once");
}

#[test]
fn a_board_that_does_not_answer_a_version_request_is_asked_once_and_stays_read() {
    let mut hall = Hall::new(&[1025, 2050], &[1025, 2050]);
    hall.unknown = Some(command::SEND_VERSION);
    hall.run_for(10_000);
    let asked = hall
        .sent
        .chunks(4)
        .filter(|frame| frame[0] == command::SEND_VERSION)
        .count();
    assert_eq!(asked, 2, "once a board");
    for slot in 0..2 {
        assert!(hall.last_health(slot).unwrap().board_connected);
    }
}

#[test]
fn a_move_is_passed_on_before_the_press_that_completes_it() {
    let mut hall = Hall::new(&[1025, 2050], &[1025, 2050]);
    let (e2, e4) = (Field::new(52).unwrap(), Field::new(36).unwrap());
    hall.happen(
        1,
        Message::FieldUpdate {
            field: e2,
            piece: piece(Color::White, Role::Pawn),
        },
    );
    hall.happen(1, clock(true, 300, 300));
    hall.run_for(4_000);
    let before = hall.now;
    hall.happen(
        1,
        Message::FieldUpdate {
            field: e2,
            piece: None,
        },
    );
    hall.happen(
        1,
        Message::FieldUpdate {
            field: e4,
            piece: piece(Color::White, Role::Pawn),
        },
    );
    hall.happen(1, clock(false, 298, 300));
    hall.run_for(1_000);
    let out = hall.board_out(1, before);
    let placement = out
        .iter()
        .position(|r| matches!(r, Reading::Placement(p) if p.piece_at(e4_square()).is_some()))
        .expect("the move");
    let press = out
        .iter()
        .position(|r| matches!(r, Reading::Clock(c) if c.pressed_by == Some(Color::White)))
        .expect("the press");
    assert!(placement < press, "{out:?}");
    assert!(
        hall.board_out(0, before)
            .iter()
            .all(|r| !matches!(r, Reading::Placement(_))),
        "the other board saw nothing"
    );
}

#[test]
fn a_board_pulled_out_is_disconnected_and_read_whole_when_it_is_back() {
    let mut hall = Hall::new(&[1025, 2050], &[1025, 2050]);
    hall.happen(0, clock(true, 300, 300));
    hall.run_for(4_000);
    let pulled = hall.now;
    hall.boards.board(0).power(false, hall.now);
    let e4 = Field::new(36).unwrap();
    // A move made while it is out: its power is gone, nothing is recorded.
    hall.happen(
        0,
        Message::FieldUpdate {
            field: e4,
            piece: piece(Color::White, Role::Pawn),
        },
    );
    hall.run_for(2_000);
    let health = hall.last_health(0).unwrap();
    assert!(
        !health.board_connected && hall.master.boards[0].watch.health().serial_errors >= 1,
        "{health:?} {:?}",
        hall.board_out(0, pulled)
    );
    assert!(
        hall.last_health(1).unwrap().board_connected,
        "the other goes on"
    );
    hall.boards.board(0).power(true, hall.now);
    hall.run_for(BOOT_MS + 2_000);
    assert!(hall.last_health(0).unwrap().board_connected);
    let back = hall.board_out(0, pulled);
    assert!(
        back.iter()
            .any(|r| matches!(r, Reading::Placement(p) if p.piece_at(e4_square()).is_some())),
        "{back:?}"
    );
}

#[test]
fn a_garbled_changes_reply_is_repeated_and_nothing_is_lost() {
    let mut hall = Hall::new(&[1025], &[1025]);
    hall.run_for(4_000);
    let e4 = Field::new(36).unwrap();
    hall.happen(
        0,
        Message::FieldUpdate {
            field: e4,
            piece: piece(Color::White, Role::Pawn),
        },
    );
    // Garble the next changes reply: flip a bit of every byte arriving for 30 ms once
    // a changes reply starts.
    let start = hall.now;
    let mut garbled = false;
    while hall.now < start + 2_000 {
        if !garbled && hall.line.front().is_some_and(|(_, b)| *b == 0x85) && hall.line.len() > 6 {
            let (_, byte) = &mut hall.line[6];
            *byte ^= 0x01;
            garbled = true;
        }
        hall.run_for(1);
    }
    assert!(garbled);
    let out = hall.board_out(0, start);
    assert!(
        out.iter()
            .any(|r| matches!(r, Reading::Placement(p) if p.piece_at(e4_square()).is_some())),
        "{out:?}"
    );
    assert!(hall.master.boards[0].watch.health().serial_errors >= 1);
    assert!(
        !out.iter()
            .any(|r| matches!(r, Reading::Health(h) if !h.board_connected)),
        "a repeat, no resync: {out:?}"
    );
}

/// White plays 1. e4 and presses just after a changes request went out; the next pass's
/// changes reply (after its clock reply, which shows the press) is lost on the line (a
/// board or a busy node too slow for the timeout). With `reply`, Black answers 1...c5
/// and presses before the pass after. What the board passes on.
fn changes_reply_lost(reply: bool) -> Vec<Reading> {
    let mut hall = Hall::new(&[1025], &[1025]);
    let field = |i| Field::new(i).unwrap();
    let (e2, e4, c7, c5) = (field(52), field(36), field(10), field(26));
    for (at, piece_there) in [
        (e2, piece(Color::White, Role::Pawn)),
        (c7, piece(Color::Black, Role::Pawn)),
    ] {
        let update = Message::FieldUpdate {
            field: at,
            piece: piece_there,
        };
        hall.happen(0, update);
    }
    hall.happen(0, clock(true, 300, 300));
    hall.run_for(4_000);
    let sent = hall.sent.len();
    while !hall.sent[sent..].contains(&command::SEND_CHANGES) {
        hall.run_for(1);
    }
    let before = hall.now;
    let mv = |hall: &mut Hall, from, to, color| {
        for (at, piece_there) in [(from, None), (to, piece(color, Role::Pawn))] {
            let update = Message::FieldUpdate {
                field: at,
                piece: piece_there,
            };
            hall.happen(0, update);
        }
    };
    mv(&mut hall, e2, e4, Color::White);
    hall.happen(0, clock(false, 298, 300));
    let mut changes_replies = Vec::new();
    while hall.now < before + 2_000 {
        if let Some((at, 0x85)) = hall.line.front().copied() {
            if !changes_replies.contains(&at) {
                changes_replies.push(at);
                if changes_replies.len() == 2 {
                    hall.line.clear();
                    if reply {
                        mv(&mut hall, c7, c5, Color::Black);
                        hall.happen(0, clock(true, 298, 297));
                    }
                }
            }
        }
        hall.run_for(1);
    }
    assert!(changes_replies.len() > 2, "{changes_replies:?}");
    hall.board_out(0, before)
}

/// Where in `out` the pawn first stands on `square`, and where `by` first presses.
fn placed_and_pressed(out: &[Reading], square: protocol::Square, by: Color) -> (usize, usize) {
    let placed = out
        .iter()
        .position(|r| matches!(r, Reading::Placement(p) if p.piece_at(square).is_some()))
        .expect("the move");
    let pressed = out
        .iter()
        .position(|r| matches!(r, Reading::Clock(c) if c.pressed_by == Some(by)))
        .expect("the press");
    (placed, pressed)
}

#[test]
fn a_press_waits_for_its_move_when_the_changes_reply_is_lost() {
    // Passed on first, the press would be one without a move (7.5.3) to the hub.
    let out = changes_reply_lost(false);
    let (e4, white) = placed_and_pressed(&out, e4_square(), Color::White);
    assert!(e4 < white, "{out:?}");
}

#[test]
fn a_press_read_before_lost_changes_comes_before_the_reply_made_meanwhile() {
    // Held to the end of the next pass, White's press would come after 1...c5: the hub
    // would see Black's move on the board before White completed his (6.2.1).
    let out = changes_reply_lost(true);
    let (e4, white) = placed_and_pressed(&out, e4_square(), Color::White);
    let c5 = protocol::Square::from_coords(2, 4).unwrap();
    let (c5, black) = placed_and_pressed(&out, c5, Color::Black);
    assert!(e4 < white && white < c5 && c5 < black, "{out:?}");
}
