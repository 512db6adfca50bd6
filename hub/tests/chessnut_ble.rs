//! A Chessnut board over Bluetooth LE, without a radio: BlueZoo mocks BlueZ on a private
//! D-Bus with two adapters, a fake board (`tests/ble/fake_chessnut.py`, a GATT peripheral
//! following chessnutech's published protocol and what real boards do beyond it) plays a
//! real game on one, and one `board-node chessnut` on the other reads it for the hub.
//!
//! The board sends 38-byte frames ten times a second, a spell of the documented 36-byte
//! ones, a square that flickers for two seconds, and a battery at 15 %; mid-game its power
//! is cut (the process killed: BlueZoo drops the link) and it comes back a second later.
//! Every move reaches the hub once, in order (the board is the source of truth); the
//! flickering square is reported once; the battery is shown low.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::live::wait_board;
use support::process::radio::FakeRadio;
use support::process::Killed;
use support::{append, Hub};

const PGN: &str = "pgn-endings/kasparov-deep-blue-1997.pgn";
/// Game 6: Kasparov resigned after 19 moves (37 plies).
const GAME: usize = 6;
/// How long each position stands: longer than the hub's debounce for a board without a
/// clock (2 s) and the node's settling (0.25 s).
const PLY_MS: u64 = 3_000;
const SHORT_FRAMES: (usize, usize) = (5, 8);
const FLICKER_PLY: usize = 12;
/// The board's power is cut this far into the game (1.5 s into ply 20's standing).
const CUT_AT_MS: u64 = 20 * PLY_MS + 1_500;

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A fake board's process on the radio's second adapter.
fn fake_board(radio: &FakeRadio, epoch_ms: u64, log: &Path) -> Killed {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ble/fake_chessnut.py");
    let child = Command::new("python3")
        .arg(script)
        .args(["--adapter", "hci1", "--name", "Chessnut Air"])
        .arg("--pgn")
        .arg(support::real_data().join(PGN))
        .args(["--game", &GAME.to_string()])
        .args(["--epoch-ms", &epoch_ms.to_string()])
        .args(["--ply-ms", &PLY_MS.to_string(), "--battery", "15"])
        .args([
            "--short-frames",
            &format!("{}-{}", SHORT_FRAMES.0, SHORT_FRAMES.1),
        ])
        .args(["--flicker-ply", &FLICKER_PLY.to_string()])
        .env("DBUS_SYSTEM_BUS_ADDRESS", &radio.address)
        .stdout(append(log))
        .stderr(append(log))
        .spawn()
        .expect("python3 with bluezoo and python-chess");
    Killed(child)
}

#[test]
fn a_chessnut_board_over_ble_is_followed_to_its_end_through_a_lost_link() {
    let dir = tempfile::tempdir().unwrap();
    let radio = FakeRadio::start(dir.path());
    let (hub, port) = Hub::embedded(dir.path());
    let pgn = std::fs::read(support::real_data().join(PGN)).unwrap();
    let sans = support::canonical_sans(&board_node::pgn::read_game(&pgn, GAME).unwrap());

    // The board starts its game 6 s from now: found, connected and reporting before.
    let epoch = unix_ms() + 6_000;
    let board_log = dir.path().join("board.log");
    let board = fake_board(&radio, epoch, &board_log);

    let enrolment = hub.enrol("chessnut-board-1", 1, dir.path());
    let args: Vec<String> = [
        "chessnut",
        "--name",
        "Chessnut Air",
        "--adapter",
        "hci0",
        "--board",
        "1",
        "--reconnect-after",
        "2",
        "--broker",
        &format!("127.0.0.1:{port}"),
        "--outbox",
        &dir.path().join("outboxes").display().to_string(),
        "--key-file",
        &enrolment.key_file.display().to_string(),
        "--hardware-id",
        "chessnut-board-1",
    ]
    .map(String::from)
    .to_vec();
    let node_log = dir.path().join("node.log");
    let node = Command::new(support::workspace_bin("board-node"))
        .args(&args)
        .env("RUST_LOG", "warn,board_node=info")
        .env("DBUS_SYSTEM_BUS_ADDRESS", &radio.address)
        .stdout(Stdio::piped())
        .stderr(append(&node_log))
        .spawn()
        .expect("board-node");
    let node = Killed(node);

    // The power cut: the board is gone for a second, and the node waits 2 s before it
    // connects again; what is made meanwhile (one ply) its first frame shows.
    std::thread::sleep(Duration::from_millis(
        (epoch + CUT_AT_MS).saturating_sub(unix_ms()),
    ));
    drop(board);
    std::thread::sleep(Duration::from_millis(1_000));
    let board = fake_board(&radio, epoch, &board_log);

    let end = epoch + sans.len() as u64 * PLY_MS;
    std::thread::sleep(Duration::from_millis(end.saturating_sub(unix_ms())));
    let detail = wait_board(&hub, 1, Duration::from_secs(30), |d| {
        d["moves"].as_array().is_some_and(|m| m.len() >= sans.len())
    });
    drop((board, node));
    let node_text = std::fs::read_to_string(&node_log).unwrap_or_default();
    let board_text = std::fs::read_to_string(&board_log).unwrap_or_default();

    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(
        moves,
        sans,
        "every move, once, in order: the board is the source of truth; node: {}\nboard: {}\nradio: {}",
        support::tail(&node_log),
        support::tail(&board_log),
        support::tail(&radio.log)
    );
    assert_eq!(detail["illegal_moves"], serde_json::json!([]));
    assert_eq!(
        detail["battery_low"], true,
        "the board said 15 %, not charging: {detail}"
    );

    // The link: lost once, and reporting started again on the new link.
    assert!(
        node_text.contains("the Chessnut board's link is down"),
        "the node said the link went: {node_text}"
    );
    assert_eq!(
        node_text.matches("connected to the Chessnut board").count(),
        2,
        "{node_text}"
    );
    assert_eq!(
        board_text.matches("command 210100").count(),
        2,
        "{board_text}"
    );
    // Both frame lengths taken; the flickering square said once, and no move made of it.
    assert!(!node_text.contains("a frame not taken"), "{node_text}");
    let flickered = board_text
        .lines()
        .find_map(|l| l.strip_prefix("flicker on "))
        .expect("the board flickered a square")
        .trim()
        .to_owned();
    let reported: Vec<&str> = node_text
        .lines()
        .filter(|l| l.contains("a square keeps changing"))
        .collect();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(
        reported[0].contains(&format!("square={flickered}")),
        "{reported:?} names {flickered}"
    );
}
