//! Test harness: real processes (hub, board nodes, Mosquitto) on ephemeral ports.
#![allow(dead_code)] // each test binary uses a part

pub mod board;
pub mod browser;
pub mod clocked;
pub mod events;
pub mod hall;
pub mod hub;
pub mod oracle;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use board_node::pgn::{self, PgnGame};
use board_node::replay;
use shakmaty::san::SanPlus;

/// `../shared/data/real/` beside the repository.
pub fn real_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/real")
}

/// The name the hub's JSON gives a unit enum (`"clock_adjusted"`).
pub fn serde_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .expect("serializable")
        .as_str()
        .expect("a unit variant")
        .to_owned()
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("an ephemeral port")
}

/// A binary of this workspace, built by `cargo build --workspace --bins` beside the tests.
pub fn workspace_bin(name: &str) -> PathBuf {
    if name == "hub" {
        return PathBuf::from(env!("CARGO_BIN_EXE_hub"));
    }
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --workspace --bins` (with the same profile) first; \
         `bash .ci/run` does",
        bin.display()
    );
    bin
}

/// A plain HTTP/1.1 GET; returns the status and the body.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    http_get_with(addr, path, &[]).map(|(status, _, body)| (status, body))
}

/// A plain HTTP/1.1 GET with request headers; returns the status, the response headers
/// (names in lower case) and the body.
pub fn http_get_with(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    http_request(addr, "GET", path, headers, "")
}

/// A plain HTTP/1.1 POST of a JSON body; returns the status and the body.
pub fn http_post(addr: SocketAddr, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    let json = [("Content-Type", "application/json")];
    http_request(addr, "POST", path, &json, body).map(|(status, _, body)| (status, body))
}

/// One HTTP/1.1 request with headers and a body; returns the status, the response headers
/// (names in lower case) and the body.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method != "GET" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    Ok((status, headers, body.to_owned()))
}

pub fn http_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let (status, body) = http_get(addr, path).expect("HTTP request");
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// How the hub reaches its broker.
#[derive(Clone)]
pub enum Broker {
    Embedded { port: u16 },
    External { port: u16 },
}

impl Broker {
    pub fn port(&self) -> u16 {
        match self {
            Broker::Embedded { port } | Broker::External { port } => *port,
        }
    }
}

/// A `hub serve` process.
pub struct Hub {
    pub child: Child,
    pub http: SocketAddr,
    pub data: PathBuf,
    broker: Broker,
    log: PathBuf,
    /// More `hub serve` arguments (`--config`, `--time-control`, …).
    args: Vec<String>,
}

impl Hub {
    pub fn start(data: &Path, broker: Broker, log: &Path) -> Hub {
        Hub::start_with(data, broker, log, Vec::new())
    }

    pub fn start_with(data: &Path, broker: Broker, log: &Path, args: Vec<String>) -> Hub {
        let http = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut hub = Hub {
            child: spawn_hub(data, &broker, http, log, &args),
            http,
            data: data.to_owned(),
            broker,
            log: log.to_owned(),
            args,
        };
        hub.wait_ready();
        hub
    }

    /// A hub with its embedded broker on a free port, data and log in `dir`; returns the
    /// broker's port too.
    pub fn embedded(dir: &Path) -> (Hub, u16) {
        let port = free_port();
        let hub = Hub::start(
            &dir.join("data"),
            Broker::Embedded { port },
            &dir.join("hub.log"),
        );
        (hub, port)
    }

    /// A hub with its embedded broker on a free port, run with `config` (TOML) as its
    /// `--config`; data, log and the file in `dir`. Returns the broker's port too.
    pub fn configured(dir: &Path, config: &str) -> (Hub, u16) {
        let path = dir.join("event.toml");
        std::fs::write(&path, config).expect("writing the configuration");
        let port = free_port();
        let hub = Hub::start_with(
            &dir.join("data"),
            Broker::Embedded { port },
            &dir.join("hub.log"),
            vec!["--config".into(), path.display().to_string()],
        );
        (hub, port)
    }

    pub fn wait_ready(&mut self) {
        let http = self.http;
        wait_for(
            "hub",
            &mut self.child,
            &self.log,
            Duration::from_secs(30),
            || matches!(http_get(http, "/healthz"), Ok((200, _))),
        );
    }

    /// SIGKILL: no shutdown, no final flush.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn restart(&mut self) {
        self.kill();
        self.child = spawn_hub(&self.data, &self.broker, self.http, &self.log, &self.args);
        self.wait_ready();
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn_hub(data: &Path, broker: &Broker, http: SocketAddr, log: &Path, args: &[String]) -> Child {
    let mut command = Command::new(workspace_bin("hub"));
    command.arg("serve").arg("--data").arg(data);
    match broker {
        Broker::Embedded { port } => command.arg("--mqtt").arg(format!("127.0.0.1:{port}")),
        Broker::External { port } => command
            .arg("--broker")
            .arg(format!("mqtt://127.0.0.1:{port}")),
    };
    command
        .arg("--http")
        .arg(http.to_string())
        .args(args)
        .stdout(Stdio::null())
        .stderr(append(log))
        .spawn()
        .expect("spawning the hub")
}

/// Polls `ready` until it holds; panics with the log's tail if the process `what` exits or
/// `within` passes first.
fn wait_for(
    what: &str,
    child: &mut Child,
    log: &Path,
    within: Duration,
    mut ready: impl FnMut() -> bool,
) {
    let deadline = Instant::now() + within;
    while !ready() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited with {status}: {}", tail(log));
        }
        assert!(Instant::now() < deadline, "{what} not ready: {}", tail(log));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn append(log: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file")
}

pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<_> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

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
    outbox: PathBuf,
    args: Vec<String>,
    log: PathBuf,
}

impl Node {
    pub fn start(replay: &Replay, broker_port: u16, dir: &Path) -> Node {
        Node::start_with_outbox(
            replay,
            broker_port,
            dir,
            &format!("outbox-{}", replay.board),
        )
    }

    /// A node with its own outbox directory `name` in `dir` (a second node for a board).
    pub fn start_with_outbox(replay: &Replay, broker_port: u16, dir: &Path, name: &str) -> Node {
        let outbox = dir.join(name);
        let mut args = vec![
            "replay".into(),
            "--broker".into(),
            format!("127.0.0.1:{broker_port}"),
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
        if replay.no_clock {
            args.push("--no-clock".into());
        }
        if replay.from_ply > 0 {
            args.extend(["--from-ply".into(), replay.from_ply.to_string()]);
        }
        if let Some(id) = &replay.hardware_id {
            args.extend(["--hardware-id".into(), id.clone()]);
        }
        if let Some(tc) = &replay.time_control {
            args.extend(["--time-control".into(), tc.clone()]);
        }
        let log = dir.join(format!("node-{}-{name}.log", replay.board));
        let child = spawn_node(&args, &log);
        Node {
            child,
            board: replay.board,
            outbox,
            args,
            log,
        }
    }

    /// SIGKILL, then start again on the same outbox.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn_node(&self.args, &self.log);
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

fn spawn_node(args: &[String], log: &Path) -> Child {
    Command::new(workspace_bin("board-node"))
        .args(args)
        .env("RUST_LOG", "warn,board_node=debug")
        .stdout(Stdio::piped())
        .stderr(append(log))
        .spawn()
        .expect("spawning a board node")
}

/// A Mosquitto broker with the configuration shipped in `deploy/`, on `port`.
pub struct Mosquitto {
    child: Child,
    config: PathBuf,
    log: PathBuf,
    port: u16,
}

impl Mosquitto {
    pub fn start(dir: &Path, port: u16) -> Mosquitto {
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/mosquitto/zeitnot.conf"),
        )
        .expect("deploy/mosquitto/zeitnot.conf");
        let store = dir.join("mosquitto-store");
        std::fs::create_dir_all(&store).expect("mosquitto store dir");
        // The shipped file with this test's port and storage directory.
        let config: String = shipped
            .lines()
            .map(|line| {
                if line.starts_with("listener ") {
                    format!("listener {port} 127.0.0.1")
                } else if line.starts_with("persistence_location ") {
                    format!("persistence_location {}/", store.display())
                } else {
                    line.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let path = dir.join("mosquitto.conf");
        std::fs::write(&path, config).expect("writing mosquitto.conf");
        let log = dir.join("mosquitto.log");
        let mut mosquitto = Mosquitto {
            child: spawn_mosquitto(&path, &log),
            config: path,
            log,
            port,
        };
        mosquitto.wait_listening();
        mosquitto
    }

    fn wait_listening(&mut self) {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        wait_for(
            "mosquitto",
            &mut self.child,
            &self.log,
            Duration::from_secs(10),
            || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok(),
        );
    }

    /// SIGKILL, then start again on the same port and configuration.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn_mosquitto(&self.config, &self.log);
        self.wait_listening();
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn mosquitto_bin() -> PathBuf {
    for candidate in [
        "/usr/sbin/mosquitto",
        "/usr/bin/mosquitto",
        "/usr/local/sbin/mosquitto",
    ] {
        if Path::new(candidate).exists() {
            return candidate.into();
        }
    }
    panic!("mosquitto is not installed: `apt-get install mosquitto` (bash .ci/run does)");
}

fn spawn_mosquitto(config: &Path, log: &Path) -> Child {
    Command::new(mosquitto_bin())
        .arg("-c")
        .arg(config)
        .stdout(append(log))
        .stderr(append(log))
        .spawn()
        .expect("spawning mosquitto")
}
