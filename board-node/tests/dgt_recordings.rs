//! The DGT decoder against real recordings: every message of the three recorded streams in
//! `shared/data/real/dgt/dgtdriver/` decodes to what the recordings' author decoded them to
//! (`*.json`, made by another implementation), and the board's changes replay the recorded
//! games (`*.uci`, `johan.pgn`).

use std::path::{Path, PathBuf};

use board_node::dgt::recording;
use board_node::eboard::message::{Face, Message};
use board_node::source::Reading;
use serde_json::Value;

fn dgtdriver(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/real/dgt/dgtdriver")
        .join(file)
}

fn read(file: &str) -> String {
    std::fs::read_to_string(dgtdriver(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn piece_letter(piece: Option<protocol::Piece>) -> String {
    use protocol::{Color, Role};
    let Some(piece) = piece else {
        return ".".into();
    };
    let letter = match piece.role {
        Role::Pawn => 'p',
        Role::Knight => 'n',
        Role::Bishop => 'b',
        Role::Rook => 'r',
        Role::Queen => 'q',
        Role::King => 'k',
    };
    match piece.color {
        Color::White => letter.to_ascii_uppercase().to_string(),
        Color::Black => letter.to_string(),
    }
}

fn face_json(face: &Face) -> Value {
    let seconds = face.ms / 1000;
    serde_json::json!({
        "hours": seconds / 3600,
        "minutes": seconds / 60 % 60,
        "seconds": seconds % 60,
        "final_flag": face.final_flag,
        "flag": face.flag,
        "time_per_move": face.time_per_move,
    })
}

/// A message as the recordings' author wrote it down.
fn as_json(message: &Message) -> Option<Value> {
    Some(match message {
        Message::BoardDump(fields) => {
            serde_json::json!({ "board": fields.iter().map(|p| piece_letter(*p)).collect::<Vec<_>>() })
        }
        Message::FieldUpdate { field, piece } => serde_json::json!({
            "field": format!("{}{}", char::from(b'a' + field.file()), field.rank() + 1),
            "piece": piece_letter(*piece),
        }),
        Message::Clock(s) => serde_json::json!({
            "left_clock": face_json(&s.left),
            "right_clock": face_json(&s.right),
            "clock_running": s.running,
            "right_high": s.right_high,
            "battery_indicator": s.battery_low,
            "left_turn": s.left_to_move,
            "right_turn": s.right_to_move,
            "no_clock": s.no_clock,
        }),
        Message::ClockAck | Message::Other { .. } => return None,
    })
}

#[test]
fn every_recorded_message_decodes_as_its_author_decoded_it() {
    for name in ["1", "2", "johan"] {
        let messages = recording::messages(&read(&format!("{name}.inbytes"))).unwrap();
        let refused: Vec<_> = messages.iter().filter(|m| m.is_err()).collect();
        assert!(refused.is_empty(), "{name}: {refused:?}");
        let ours: Vec<Value> = messages.iter().flatten().filter_map(as_json).collect();
        let theirs: Vec<Value> = read(&format!("{name}.json"))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{name}: message count");
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a, b, "{name}: message {i}");
        }
        eprintln!("{name}: {} messages agree", ours.len());
    }
}

#[test]
fn a_reversed_board_and_its_clock_are_read_from_white_s_side() {
    // Recording 2 was made with White on the board's ranks 7-8 and White's clock on the right.
    let messages = recording::messages(&read("2.inbytes")).unwrap();
    let readings = recording::readings(&messages, None);
    let Some(Reading::Placement(first)) = readings.first().map(|t| &t.reading) else {
        panic!("the board dump comes first")
    };
    assert_eq!(
        first.board_fen(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    );
    let first_clock = readings
        .iter()
        .find_map(|t| match &t.reading {
            Reading::Clock(c) if c.running.is_some() => Some(*c),
            _ => None,
        })
        .unwrap();
    assert_eq!(first_clock.running, Some(protocol::Color::White));
}

#[test]
fn game_time_is_read_off_the_clock() {
    // johan: 5 min + 5 s; the right (Black's) clock is blocked at 0:00 after Black ran out.
    let messages = recording::messages(&read("johan.inbytes")).unwrap();
    let readings = recording::readings(&messages, None);
    let last = readings.last().unwrap();
    let flag = readings
        .iter()
        .find_map(|t| match &t.reading {
            Reading::Clock(c) if c.black_flag => Some((t.game_ms, *c)),
            _ => None,
        })
        .expect("Black's flag");
    assert_eq!(flag.1.black_ms, 0);
    assert!(!flag.1.white_flag);
    assert_eq!(flag.1.running, None, "the clock stops at the flag");
    // Game time is monotonic and roughly the sum of both players' thinking: each side
    // started at 5:05 and gained 5 s a move.
    assert!(readings.windows(2).all(|w| w[0].game_ms <= w[1].game_ms));
    assert!(last.game_ms >= flag.0);
    assert!(
        (500_000..=900_000).contains(&flag.0),
        "flag at {} ms of game time",
        flag.0
    );
}
