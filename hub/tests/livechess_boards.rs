//! Boards that DGT LiveChess drives, read through its local API: a stand-in LiveChess
//! (`board-node emulate-livechess`, speaking the API as LiveChess's open clients read it:
//! `eboards`, `subscribe` to `eboardevent`, a feed message at every change) serving three
//! boards that replay real rapid games with their clocks, one `board-node livechess`
//! serving the three boards, and the hub with its embedded broker. LiveChess is restarted
//! mid-game and one board's feed stalls 5 s while a move is made on it: every move reaches
//! the hub, once, and the clocks as they were shown (6.10.1).

use crate::support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use board_node::livechess::emulator::paced;
use board_node::source::{Reading, Timed};
use protocol::time_control::TimeControl;
use support::live::{assert_final_clocks, wait_board};
use support::process::node::spawn_board_node;
use support::{http_json, Hub};

const PGN: &str = "fide_world_cup_2025_rapid_15+10.pgn";
const TIME_CONTROL: &str = "900+10";
/// (LiveChess serial number, hall board, game of the file)
const BOARDS: [(&str, u16, usize); 3] = [("7425", 1, 3), ("7426", 2, 4), ("7427", 3, 5)];

struct Game {
    board: u16,
    sans: Vec<String>,
    clk_ms: Vec<Option<u64>>,
    script: Vec<Timed>,
}

impl Game {
    fn new(board: u16, game: usize) -> Game {
        let path = support::real_data().join("pgn-clocks").join(PGN);
        let parsed = board_node::pgn::read_game(&std::fs::read(&path).unwrap(), game).unwrap();
        let tc: TimeControl = TIME_CONTROL.parse().unwrap();
        Game {
            board,
            sans: support::canonical_sans(&parsed),
            clk_ms: parsed.plies.iter().map(|p| p.clk_ms).collect(),
            script: board_node::replay::script(&parsed, Some(&tc)),
        }
    }

    /// When each press comes, real ms from the stand-in's epoch.
    fn presses(&self, speed: f64) -> Vec<u64> {
        paced(&self.script, speed)
            .into_iter()
            .zip(&self.script)
            .filter(|(_, t)| matches!(&t.reading, Reading::Clock(c) if c.pressed_by.is_some()))
            .map(|(at, _)| at)
            .collect()
    }
}

/// A `board-node emulate-livechess` process.
struct LiveChess {
    child: Child,
}

impl LiveChess {
    fn start(dir: &Path, port: u16, epoch_ms: u64, speed: f64, stall: (&str, usize)) -> LiveChess {
        let games: Vec<String> = BOARDS.iter().map(|(s, _, g)| format!("{s}:{g}")).collect();
        let child = Command::new(support::workspace_bin("board-node"))
            .arg("emulate-livechess")
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--pgn")
            .arg(support::real_data().join("pgn-clocks").join(PGN))
            .args(["--games", &games.join(","), "--time-control", TIME_CONTROL])
            .args([
                "--speed",
                &speed.to_string(),
                "--epoch-ms",
                &epoch_ms.to_string(),
            ])
            .args([
                "--stall-serial",
                stall.0,
                "--stall-at-ply",
                &stall.1.to_string(),
            ])
            .args(["--stall-ms", "5000"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(support::append(&dir.join("livechess.log")))
            .spawn()
            .expect("board-node emulate-livechess");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the stand-in never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        LiveChess { child }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LiveChess {
    fn drop(&mut self) {
        self.kill();
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn three_boards_through_livechess_lose_no_move_through_its_restart_and_a_stalled_feed() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(
        dir.path(),
        &format!("[event]\ntime_control = \"{TIME_CONTROL}\"\n"),
    );
    let games: Vec<Game> = BOARDS.iter().map(|(_, b, g)| Game::new(*b, *g)).collect();
    // The longest game in about 70 s of presses (each move 0.8 s at least).
    let longest = games
        .iter()
        .map(|g| g.script.last().unwrap().game_ms)
        .max()
        .unwrap();
    let speed = (longest as f64 / 70_000.0).max(1.0);
    let presses: Vec<Vec<u64>> = games.iter().map(|g| g.presses(speed)).collect();
    let end = presses.iter().map(|p| *p.last().unwrap()).max().unwrap();

    // Board 2's feed stalls 5 s after a press, and a move is made meanwhile; LiveChess's
    // list (asked every 2 s) brings each, so no two presses come within 2.2 s there.
    let stalled = &presses[1];
    let stall_ply = (8..stalled.len() - 2)
        .find(|&p| {
            let at = stalled[p - 1];
            let within: Vec<u64> = std::iter::once(at)
                .chain(stalled[p..].iter().copied().take_while(|t| *t < at + 7_000))
                .collect();
            within.len() >= 2 && within.windows(2).all(|w| w[1] - w[0] > 2_200)
        })
        .expect("a spell for the stall");
    // LiveChess restarts (down a second, the node back within two) where no board has more
    // than two presses within 3 s: what is made meanwhile (a move each side at most) the
    // placement tells, in the only order that reaches it.
    let restart_at = (end * 35 / 100..end * 65 / 100)
        .step_by(100)
        .find(|&t| {
            let near = |at: u64| at.abs_diff(stalled[stall_ply - 1]) > 12_000;
            near(t)
                && presses
                    .iter()
                    .all(|p| p.iter().filter(|at| (t..t + 3_000).contains(*at)).count() <= 2)
        })
        .expect("a spell for LiveChess's restart");

    let mut args: Vec<String> = vec![
        "livechess".into(),
        "--url".into(),
        String::new(),
        "--broker".into(),
        format!("127.0.0.1:{port}"),
        "--outbox".into(),
        dir.path().join("outboxes").display().to_string(),
    ];
    let mut pairs = Vec::new();
    for (serial, board, _) in BOARDS {
        let enrolment = hub.enrol(serial, board, dir.path());
        args.extend([
            "--key-file".into(),
            enrolment.key_file.display().to_string(),
        ]);
        pairs.push(format!("{serial}={board}"));
    }
    args.extend(["--boards".into(), pairs.join(",")]);
    let api = support::free_port();
    args[2] = format!("ws://127.0.0.1:{api}/api/v1.0");
    let epoch = unix_ms() + 3_000;
    let stall = (BOARDS[1].0, stall_ply);
    let mut livechess = LiveChess::start(dir.path(), api, epoch, speed, stall);
    let node_log = dir.path().join("node.log");
    let mut node = spawn_board_node(&args, &node_log, "warn,board_node=info");

    // LiveChess goes down mid-game and comes back a second later.
    let down = epoch + restart_at;
    std::thread::sleep(Duration::from_millis(down.saturating_sub(unix_ms())));
    livechess.kill();
    std::thread::sleep(Duration::from_millis(1_000));
    let _livechess = LiveChess::start(dir.path(), api, epoch, speed, stall);

    let finish = epoch + end + 2_000;
    std::thread::sleep(Duration::from_millis(finish.saturating_sub(unix_ms())));
    for game in &games {
        let detail = wait_board(&hub, game.board, Duration::from_secs(30), |d| {
            d["moves"]
                .as_array()
                .is_some_and(|m| m.len() >= game.sans.len())
        });
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        if moves != game.sans {
            let presses = &presses[usize::from(game.board) - 1];
            let mut shown = detail.clone();
            shown.as_object_mut().unwrap().remove("clock");
            eprintln!(
                "board {}: restart at {restart_at} ms, stall at ply {stall_ply}; its presses {:?}; detail {shown}",
                game.board,
                presses.iter().enumerate().skip(moves.len().saturating_sub(3)).take(6).collect::<Vec<_>>()
            );
            eprintln!("hub: {}", support::tail(&dir.path().join("hub.log")));
        }
        assert_eq!(
            moves,
            game.sans,
            "board {}: every move, once (6.2.1); node: {}",
            game.board,
            support::tail(&node_log)
        );
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "board {}",
            game.board
        );
        let shown: Vec<Option<u64>> = serde_json::from_value(detail["clock_ms"].clone()).unwrap();
        assert_final_clocks(game.board, &game.clk_ms, &shown);
    }
    // The node told the hub when LiveChess went away.
    let nodes = http_json(&hub.web, "/api/nodes");
    assert!(nodes.to_string().contains("7425"), "{nodes}");
    let log = std::fs::read_to_string(&node_log).unwrap();
    assert!(log.contains("the LiveChess socket is down"), "{log}");
    let stand_in = std::fs::read_to_string(dir.path().join("livechess.log")).unwrap();
    assert_eq!(
        stand_in.matches("the board's feed stalls").count(),
        1,
        "{stand_in}"
    );
    let _ = node.kill();
    let _ = node.wait();
}
