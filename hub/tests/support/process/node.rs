//! A `board-node replay` process, and the game it replays.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::super::*;
use board_node::pgn::{self, PgnGame};
use board_node::replay;
use shakmaty::san::SanPlus;

/// A game to replay on one board.
pub struct Replay {
    pub board: u16,
    pub pgn: PathBuf,
    pub game: usize,
    pub speed: f64,
    /// The PGN's moves in canonical SAN (broadcasts sometimes omit a `+`), up to the first
    /// illegal one (a DGT king signal).
    pub sans: Vec<String>,
    /// The node reports no clock (`board-node replay --no-clock`).
    pub no_clock: bool,
    /// Start from the position after this many moves (`--from-ply`): a node swapped in.
    pub from_ply: usize,
    /// The e-board hardware id the node announces (`--hardware-id`).
    pub hardware_id: Option<String>,
    /// The game's real time control where its tag is wrong (`--time-control`).
    pub time_control: Option<String>,
}

impl Replay {
    /// Board `board` replays game `game` of `file`, fast enough to last about `seconds`.
    pub fn new(board: u16, file: &str, game: usize, seconds: f64) -> Replay {
        let pgn = real_data().join("pgn-clocks").join(file);
        let text = std::fs::read(&pgn).expect("PGN file");
        let parsed: PgnGame = pgn::read_game(&text, game).expect("game in file");
        let game_ms = replay::script(&parsed, None)
            .last()
            .map_or(1, |t| t.game_ms);
        Replay {
            board,
            pgn,
            game,
            speed: (game_ms as f64 / 1000.0 / seconds).max(1.0),
            sans: canonical_sans(&parsed),
            no_clock: false,
            from_ply: 0,
            hardware_id: None,
            time_control: None,
        }
    }
}

pub fn canonical_sans(game: &PgnGame) -> Vec<String> {
    let mut position = game.start.clone();
    game.plies
        .iter()
        .map(|ply| SanPlus::from_move_and_play_unchecked(&mut position, ply.m).to_string())
        .collect()
}

/// A `board-node replay` process.
pub struct Node {
    pub child: Child,
    pub board: u16,
    args: Vec<String>,
    log: PathBuf,
}

impl Node {
    /// A node enrolled with `hub` (its hardware id: `replay-N`, or the replay's own).
    pub fn start(replay: &Replay, hub: &Hub, dir: &Path) -> Node {
        Node::start_with_outbox(replay, hub, dir, &format!("outbox-{}", replay.board))
    }

    /// An enrolled node with its own outbox directory `name` in `dir` (a second node for a
    /// board).
    pub fn start_with_outbox(replay: &Replay, hub: &Hub, dir: &Path, name: &str) -> Node {
        let hardware = replay
            .hardware_id
            .clone()
            .unwrap_or_else(|| format!("replay-{}", replay.board));
        let enrolment = hub.enrol(&hardware, replay.board, dir);
        Node::spawn(replay, hub.broker_port(), dir, name, Some(&enrolment))
    }

    /// A node nobody enrolled: it has no key.
    pub fn unenrolled(replay: &Replay, broker_port: u16, dir: &Path) -> Node {
        let name = format!("outbox-{}", replay.board);
        Node::spawn(replay, broker_port, dir, &name, None)
    }

    /// A node with `enrolment`'s hardware id and key file, on `broker_port`.
    pub fn spawn(
        replay: &Replay,
        broker_port: u16,
        dir: &Path,
        name: &str,
        enrolment: Option<&Enrolment>,
    ) -> Node {
        let broker = format!("127.0.0.1:{broker_port}");
        Node::spawn_via(replay, &broker, None, dir, name, enrolment)
    }

    /// A node with `enrolment`'s hardware id and key file, on the broker at `broker`
    /// (`mqtts://…` with the hall CA in `ca_file`).
    pub fn spawn_via(
        replay: &Replay,
        broker: &str,
        ca_file: Option<&Path>,
        dir: &Path,
        name: &str,
        enrolment: Option<&Enrolment>,
    ) -> Node {
        let outbox = dir.join(name);
        let mut args = vec![
            "replay".into(),
            "--broker".into(),
            broker.to_owned(),
            "--board".into(),
            replay.board.to_string(),
            "--pgn".into(),
            replay.pgn.display().to_string(),
            "--game".into(),
            replay.game.to_string(),
            "--speed".into(),
            replay.speed.to_string(),
            "--outbox".into(),
            outbox.display().to_string(),
        ];
        if let Some(ca_file) = ca_file {
            args.extend(["--ca-file".into(), ca_file.display().to_string()]);
        }
        if replay.no_clock {
            args.push("--no-clock".into());
        }
        if replay.from_ply > 0 {
            args.extend(["--from-ply".into(), replay.from_ply.to_string()]);
        }
        match enrolment {
            Some(enrolment) => args.extend([
                "--hardware-id".into(),
                enrolment.hardware.clone(),
                "--key-file".into(),
                enrolment.key_file.display().to_string(),
            ]),
            None => {
                if let Some(id) = &replay.hardware_id {
                    args.extend(["--hardware-id".into(), id.clone()]);
                }
            }
        }
        if let Some(tc) = &replay.time_control {
            args.extend(["--time-control".into(), tc.clone()]);
        }
        let log = dir.join(format!("node-{}-{name}.log", replay.board));
        let child = spawn_board_node(&args, &log, "warn,board_node=debug");
        Node {
            child,
            board: replay.board,
            args,
            log,
        }
    }

    /// SIGKILL, then start again on the same outbox.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn_board_node(&self.args, &self.log, "warn,board_node=debug");
    }

    /// Plays every game of `replays` on its board's node, enrolled with `hub`, to the end;
    /// each node's last report (every event acknowledged, or the test fails).
    pub fn play_all(replays: &[Replay], hub: &Hub, dir: &Path) -> Vec<serde_json::Value> {
        let nodes: Vec<Node> = replays.iter().map(|r| Node::start(r, hub, dir)).collect();
        nodes
            .into_iter()
            .map(|node| {
                let report = node.finish(Duration::from_secs(120));
                assert_eq!(report["acked"], report["events"], "{report}");
                report
            })
            .collect()
    }

    /// Waits for the node to exit and returns its last stdout line as JSON.
    pub fn finish(mut self, timeout: Duration) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait().expect("node status") {
                Some(status) => {
                    let mut out = String::new();
                    self.child
                        .stdout
                        .take()
                        .expect("piped stdout")
                        .read_to_string(&mut out)
                        .expect("node stdout");
                    assert!(
                        status.success(),
                        "board {} exited {status}: {}",
                        self.board,
                        tail(&self.log)
                    );
                    let last = out.lines().last().unwrap_or_default();
                    return serde_json::from_str(last).unwrap_or_else(|e| {
                        panic!("board {}: last line {last:?}: {e}", self.board)
                    });
                }
                None if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("board {} did not finish: {}", self.board, tail(&self.log));
                }
                None => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A `board-node` process with `args`, its report piped and its log (at `rust_log`) in `log`.
pub fn spawn_board_node(args: &[String], log: &Path, rust_log: &str) -> Child {
    Command::new(workspace_bin("board-node"))
        .args(args)
        .env("RUST_LOG", rust_log)
        .stdout(Stdio::piped())
        .stderr(append(log))
        .spawn()
        .expect("spawning a board node")
}
