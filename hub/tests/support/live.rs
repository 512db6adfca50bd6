//! Live boards as a hall has them: `board-node emulate-dgt` (a DGT board with its clock on a
//! pseudo-terminal) and `board-node dgt` (the node reading it), real processes both.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::process::node::spawn_board_node;
use super::{append, tail, workspace_bin, Enrolment, Hub};

/// What a live node logs: its line's events, not every reading.
const LIVE_LOG: &str = "warn,board_node=info";

/// The e-board family emulated and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Dgt,
    ChessLink,
}

impl Family {
    fn emulate(self) -> &'static str {
        match self {
            Family::Dgt => "emulate-dgt",
            Family::ChessLink => "emulate-chesslink",
        }
    }

    fn read(self) -> &'static str {
        match self {
            Family::Dgt => "dgt",
            Family::ChessLink => "chesslink",
        }
    }
}

/// What an emulated board plays.
pub enum Play {
    /// Game `game` of a PGN file, with its real time control (broadcast tags are often
    /// wrong).
    Pgn {
        file: PathBuf,
        game: usize,
        time_control: String,
    },
    /// A recorded DGT stream.
    Recording(PathBuf),
}

/// What goes wrong on an emulated board, as the emulator is told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The board is unplugged after `ply` clock presses, for `ms` of real time.
    UnplugAtPly { ply: usize, ms: u64 },
    /// The clock is switched off after `ply` presses, for `ms` of real time.
    ClockOffAtPly { ply: usize, ms: u64 },
    /// Line noise before every `n`th message.
    NoiseEvery(usize),
    /// A board without a clock: each move stands this long (game ms) before the next hand.
    StandMs(u64),
    /// The line stalls after `ply` presses for `ms` of real time: nothing passes either
    /// way, then the held bytes arrive late and in order.
    StallAtPly { ply: usize, ms: u64 },
    /// As [`Fault::StallAtPly`], but what the board sent meanwhile is lost.
    DropAtPly { ply: usize, ms: u64 },
    /// The clock warns that its battery is low from `ply` presses on.
    BatteryLowAtPly(usize),
}

impl Fault {
    /// The emulator's flags for it.
    fn args(self) -> Vec<String> {
        let flags: Vec<(&str, String)> = match self {
            Fault::UnplugAtPly { ply, ms } => vec![
                ("--unplug-at-ply", ply.to_string()),
                ("--unplug-ms", ms.to_string()),
            ],
            Fault::ClockOffAtPly { ply, ms } => vec![
                ("--clock-off-at-ply", ply.to_string()),
                ("--clock-off-ms", ms.to_string()),
            ],
            Fault::NoiseEvery(n) => vec![("--noise-every", n.to_string())],
            Fault::StandMs(ms) => vec![("--stand-ms", ms.to_string())],
            Fault::StallAtPly { ply, ms } => vec![
                ("--stall-at-ply", ply.to_string()),
                ("--stall-ms", ms.to_string()),
            ],
            Fault::DropAtPly { ply, ms } => vec![
                ("--stall-at-ply", ply.to_string()),
                ("--stall-ms", ms.to_string()),
                ("--stall-drops", String::new()),
            ],
            Fault::BatteryLowAtPly(ply) => vec![("--battery-low-at-ply", ply.to_string())],
        };
        // A switch has no value.
        flags
            .into_iter()
            .flat_map(|(flag, value)| {
                std::iter::once(flag.to_owned()).chain(Some(value).filter(|v| !v.is_empty()))
            })
            .collect()
    }
}

/// A `board-node emulate-dgt` process; its device's symlink is `link`.
pub struct Emulator {
    child: Child,
    pub link: PathBuf,
    out: PathBuf,
    log: PathBuf,
}

impl Emulator {
    /// A DGT board playing `play` at `speed`, with `faults`.
    pub fn start(dir: &Path, name: &str, play: &Play, speed: f64, faults: &[Fault]) -> Emulator {
        Emulator::start_family(Family::Dgt, dir, name, play, speed, faults)
    }

    /// A board of `family`, as [`Emulator::start`].
    pub fn start_family(
        family: Family,
        dir: &Path,
        name: &str,
        play: &Play,
        speed: f64,
        faults: &[Fault],
    ) -> Emulator {
        let mut command = Command::new(workspace_bin("board-node"));
        command.arg(family.emulate());
        match play {
            Play::Pgn {
                file,
                game,
                time_control,
            } => command
                .arg("--pgn")
                .arg(file)
                .arg("--game")
                .arg(game.to_string())
                .arg("--time-control")
                .arg(time_control),
            Play::Recording(file) => command.arg("--recording").arg(file),
        };
        command
            .arg("--speed")
            .arg(speed.to_string())
            .args(faults.iter().flat_map(|f| f.args()));
        Emulator::spawn(command, dir, name)
    }

    /// What the emulator printed when its game was over, once it is.
    pub fn played(&self) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(&self.out).ok()?;
        serde_json::from_str(text.lines().next()?).ok()
    }

    /// Waits until the game is over; its report.
    pub fn wait_played(&self, within: Duration) -> serde_json::Value {
        let deadline = Instant::now() + within;
        loop {
            if let Some(played) = self.played() {
                return played;
            }
            assert!(
                Instant::now() < deadline,
                "{} still playing: {}",
                self.link.display(),
                tail(&self.log)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `GET /api/boards/{board}` until `done` holds of it, or `within` has passed: the
/// board's detail either way, for the caller's assertions to tell what is missing.
pub fn wait_board(
    hub: &Hub,
    board: u16,
    within: Duration,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let detail = super::http_json(&hub.web, &format!("/api/boards/{board}"));
        if done(&detail) || Instant::now() >= deadline {
            return detail;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What goes wrong on an emulated chain, as the emulator is told it: each fault names the
/// board (its serial) on whose plies it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainFault {
    /// The board is pulled out of the chain after `ply` of its presses, for `ms`.
    Unplug { serial: String, ply: usize, ms: u64 },
    /// The chain's power is cut after `ply` presses of the board, for `ms`.
    PowerCut { serial: String, ply: usize, ms: u64 },
    /// The board's line passes nothing after `ply` of its presses, for `ms`.
    Stall { serial: String, ply: usize, ms: u64 },
    /// Every `n`th answer garbled.
    NoiseEvery(usize),
}

impl ChainFault {
    fn args(&self) -> Vec<String> {
        let flags: Vec<(&str, String)> = match self {
            ChainFault::Unplug { serial, ply, ms } => vec![
                ("--unplug-board", serial.clone()),
                ("--unplug-at-ply", ply.to_string()),
                ("--unplug-ms", ms.to_string()),
            ],
            ChainFault::PowerCut { serial, ply, ms } => vec![
                ("--power-cut-board", serial.clone()),
                ("--power-cut-at-ply", ply.to_string()),
                ("--power-cut-ms", ms.to_string()),
            ],
            ChainFault::Stall { serial, ply, ms } => vec![
                ("--stall-board", serial.clone()),
                ("--stall-at-ply", ply.to_string()),
                ("--stall-ms", ms.to_string()),
            ],
            ChainFault::NoiseEvery(n) => vec![("--noise-every", n.to_string())],
        };
        flags
            .into_iter()
            .flat_map(|(flag, value)| [flag.to_owned(), value])
            .collect()
    }
}

impl Emulator {
    /// A chain of boards in bus mode on one device (`board-node emulate-dgt --bus`):
    /// boards `(serial, game of pgn)` in chain order, playing at `speed`, with `faults`.
    pub fn start_chain(
        dir: &Path,
        name: &str,
        pgn: &Path,
        time_control: &str,
        boards: &[(String, usize)],
        speed: f64,
        faults: &[ChainFault],
    ) -> Emulator {
        let mut command = Command::new(workspace_bin("board-node"));
        command
            .arg("emulate-dgt")
            .arg("--bus")
            .arg("--pgn")
            .arg(pgn)
            .arg("--time-control")
            .arg(time_control)
            .arg("--speed")
            .arg(speed.to_string());
        for (serial, game) in boards {
            command.arg("--chain-board").arg(format!("{serial}:{game}"));
        }
        command.args(faults.iter().flat_map(|f| f.args()));
        Emulator::spawn(command, dir, &format!("chain-{name}"))
    }

    /// Runs `command` with `--link` to a device under `dir` named for `name`, and waits for
    /// the device.
    fn spawn(mut command: Command, dir: &Path, name: &str) -> Emulator {
        let link = dir.join(format!("dgt-{name}"));
        let out = dir.join(format!("emulator-{name}.out"));
        let log = dir.join(format!("emulator-{name}.log"));
        let child = command
            .arg("--link")
            .arg(&link)
            .env("RUST_LOG", "warn,board_node=info")
            .stdout(append(&out))
            .stderr(append(&log))
            .spawn()
            .expect("spawning the emulator");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::symlink_metadata(&link).is_err() {
            assert!(
                Instant::now() < deadline,
                "no device at {}: {}",
                link.display(),
                tail(&log)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Emulator {
            child,
            link,
            out,
            log,
        }
    }
}

/// One `board-node dgt` process serving several boards.
pub struct LiveNode {
    child: Child,
    args: Vec<String>,
    log: PathBuf,
}

impl LiveNode {
    /// Serves each `(enrolment, emulator)` pair on `hub`'s broker, outboxes under `dir/name`.
    pub fn start(
        hub: &Hub,
        dir: &Path,
        name: &str,
        boards: &[(&Enrolment, &Emulator)],
    ) -> LiveNode {
        LiveNode::start_family(Family::Dgt, hub, dir, name, boards)
    }

    /// A node reading boards of `family`, as [`LiveNode::start`].
    pub fn start_family(
        family: Family,
        hub: &Hub,
        dir: &Path,
        name: &str,
        boards: &[(&Enrolment, &Emulator)],
    ) -> LiveNode {
        let mut args = vec![
            family.read().to_owned(),
            "--broker".into(),
            format!("127.0.0.1:{}", hub.broker_port()),
            "--outbox".into(),
            dir.join(name).display().to_string(),
        ];
        for (enrolment, emulator) in boards {
            args.extend([
                "--board".into(),
                enrolment.board.to_string(),
                "--serial".into(),
                emulator.link.display().to_string(),
                "--key-file".into(),
                enrolment.key_file.display().to_string(),
                "--hardware-id".into(),
                enrolment.hardware.clone(),
            ]);
        }
        let log = dir.join(format!("{name}.log"));
        let child = spawn_board_node(&args, &log, LIVE_LOG);
        LiveNode { child, args, log }
    }

    /// A node reading chains in bus mode: each chain's device and its boards' enrolments
    /// (the enrolled hardware id is the e-board's serial number).
    pub fn start_chains(
        hub: &Hub,
        dir: &Path,
        name: &str,
        chains: &[(&Emulator, Vec<&Enrolment>)],
    ) -> LiveNode {
        let mut args = vec![
            "dgt".to_owned(),
            "--bus".into(),
            "--broker".into(),
            format!("127.0.0.1:{}", hub.broker_port()),
            "--outbox".into(),
            dir.join(name).display().to_string(),
        ];
        for (chain, enrolments) in chains {
            args.extend(["--serial".into(), chain.link.display().to_string()]);
            for enrolment in enrolments {
                args.extend([
                    "--board".into(),
                    enrolment.board.to_string(),
                    "--hardware-id".into(),
                    enrolment.hardware.clone(),
                    "--key-file".into(),
                    enrolment.key_file.display().to_string(),
                ]);
            }
        }
        let log = dir.join(format!("{name}.log"));
        let child = spawn_board_node(&args, &log, LIVE_LOG);
        LiveNode { child, args, log }
    }

    /// SIGKILL, then start again on the same outboxes.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn_board_node(&self.args, &self.log, LIVE_LOG);
    }

    /// SIGTERM; waits for the clean exit and returns each board's report line.
    pub fn stop(mut self, within: Duration) -> Vec<serde_json::Value> {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("node status") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the node did not stop: {}",
                tail(&self.log)
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(
            status.success(),
            "the node exited {status}: {}",
            tail(&self.log)
        );
        let mut out = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().expect("piped"), &mut out)
            .expect("the node's stdout");
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
            .collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for LiveNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The clock's display is definitive (6.10.1): each side's last move of board `board`'s
/// game shows the source's `%clk` (`clk_ms`, a ply each) in `shown` (the hub's `clock_ms`).
pub fn assert_final_clocks(board: u16, clk_ms: &[Option<u64>], shown: &[Option<u64>]) {
    let last = clk_ms.len().saturating_sub(2);
    for (ply, (clk, shown)) in clk_ms.iter().zip(shown).enumerate().skip(last) {
        if let Some(clk) = clk {
            assert_eq!(
                *shown,
                Some(clk / 1000 * 1000),
                "board {board} ply {}: the final clock (6.10.1)",
                ply + 1
            );
        }
    }
}

/// Board `board`'s moves once the arbiter has ordered what the hub filled in (7.4): each
/// stretch whose order the board did not show (a chain's bus master starved under load
/// sees a few plies as one jump) is given the source's order, `sans`, as an arbiter reading
/// the scoresheets would. The hub must have filled in only stretches the source's order
/// fits; how many were ordered comes back with the moves.
pub fn moves_ordered_as(hub: &Hub, board: u16, sans: &[String]) -> (Vec<String>, usize) {
    let detail = super::http_json(&hub.web, &format!("/api/boards/{board}"));
    let mut ordered = 0;
    for stretch in detail["filled_in"].as_array().into_iter().flatten() {
        let (from, to) = (
            stretch["from_ply"].as_u64().unwrap() as usize,
            stretch["to_ply"].as_u64().unwrap() as usize,
        );
        let order = &sans[from - 1..to.min(sans.len())];
        let body = serde_json::json!({
            "arbiter": "IA Test", "decision": "order", "from_ply": from, "moves": order,
        });
        let (status, answer) = super::http_post(
            &hub.web,
            &format!("/api/boards/{board}/decisions"),
            &body.to_string(),
        )
        .unwrap();
        assert_eq!(status, 200, "board {board}: {stretch}: {answer}");
        ordered += 1;
    }
    let detail = super::http_json(&hub.web, &format!("/api/boards/{board}"));
    (
        serde_json::from_value(detail["moves"].clone()).unwrap(),
        ordered,
    )
}
