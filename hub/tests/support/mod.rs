//! Test harness: real processes (hub, board nodes, Mosquitto) on ephemeral ports.
#![allow(dead_code)] // each test binary uses a part

pub mod board;
pub mod browser;
pub mod clocked;
pub mod events;
pub mod hall;
pub mod hub;
pub mod lichess;
pub mod live;
pub mod oracle;
pub mod sniffer;

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

/// The game written down beside a recorded stream (`*.uci`, or `johan.pgn`), in SAN.
pub fn recorded_game(name: &str) -> Vec<String> {
    let dir = real_data().join("dgt/dgtdriver");
    if name == "johan" {
        let pgn = std::fs::read(dir.join("johan.pgn")).unwrap();
        return canonical_sans(&board_node::pgn::read_game(&pgn, 1).unwrap());
    }
    let mut position = shakmaty::Chess::default();
    std::fs::read_to_string(dir.join(format!("{name}.uci")))
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(|uci| {
            let m = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&position)
                .unwrap();
            shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut position, m).to_string()
        })
        .collect()
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

/// A value for each hub the tests started, by its HTTP address.
struct PerHub(std::sync::Mutex<Vec<(SocketAddr, String)>>);

impl PerHub {
    const fn new() -> PerHub {
        PerHub(std::sync::Mutex::new(Vec::new()))
    }

    fn set(&self, http: SocketAddr, value: &str) {
        let mut values = self.0.lock().unwrap();
        values.retain(|(addr, _)| *addr != http);
        values.push((http, value.to_owned()));
    }

    fn get(&self, http: SocketAddr) -> Option<String> {
        let values = self.0.lock().unwrap();
        values
            .iter()
            .find(|(addr, _)| *addr == http)
            .map(|(_, value)| value.clone())
    }
}

/// The arbiters' token of each hub the tests started: the requests below are an arbiter's
/// (they send it) unless they say they are a stranger's.
static ARBITER_TOKENS: PerHub = PerHub::new();

/// The hall CA (PEM) of each hub the tests started with HTTPS: requests to it go over TLS,
/// the CA pinned.
static HTTPS_CAS: PerHub = PerHub::new();

/// From now on, requests to `http` go over TLS, trusting `ca_pem`.
pub fn register_https(http: SocketAddr, ca_pem: &str) {
    HTTPS_CAS.set(http, ca_pem);
}

/// The hall CA a hub the tests started with HTTPS pins, by its HTTP address.
pub fn https_ca_of(http: SocketAddr) -> Option<String> {
    HTTPS_CAS.get(http)
}

/// From now on, requests to `http` are sent as an arbiter with `token`.
pub fn register_token(http: SocketAddr, token: &str) {
    ARBITER_TOKENS.set(http, token);
}

/// The arbiters' token of the hub at `http`, if a test started it.
pub fn token_of(http: SocketAddr) -> Option<String> {
    ARBITER_TOKENS.get(http)
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

/// One HTTP/1.1 request with headers and a body, as an arbiter (with the hub's token, unless
/// `headers` carry an `Authorization` or a `Cookie` of their own); returns the status, the
/// response headers (names in lower case) and the body.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let own = headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie")
    });
    match token_of(addr).filter(|_| !own) {
        Some(token) => {
            let bearer = format!("Bearer {token}");
            let mut with = headers.to_vec();
            with.push(("Authorization", &bearer));
            stranger_request(addr, method, path, &with, body)
        }
        None => stranger_request(addr, method, path, headers, body),
    }
}

/// A connection to read and write, plain or TLS.
trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// One HTTP/1.1 request with exactly the headers given (no token): a stranger's, or one
/// whose credentials are its own.
pub fn stranger_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, std::collections::BTreeMap<String, String>, String)> {
    let mut tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    // Over TLS where the hub is HTTPS, with its hall CA pinned, as a browser that trusts it.
    let mut tls_stream;
    let stream: &mut dyn ReadWrite = match https_ca_of(addr) {
        None => &mut tcp,
        Some(ca) => {
            let config = link::tls::client_config(ca.as_bytes()).expect("the hall CA");
            let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
            let connection =
                rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
            tls_stream = rustls::StreamOwned::new(connection, tcp);
            &mut tls_stream
        }
    };
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
    let mut response = Vec::new();
    match stream.write_all(request.as_bytes()) {
        Ok(()) => {}
        // A server that refuses a body (413) answers before it has read it and closes: the
        // answer is there to read, as a browser or curl reads it.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            ) => {}
        Err(e) => return Err(e),
    }
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            // The connection reset after the answer came (the body it never read), or a TLS
            // peer closed without its close_notify.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
                ) && !response.is_empty() =>
            {
                break
            }
            Err(e) => return Err(e),
        }
    }
    let response = String::from_utf8_lossy(&response);
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
    Embedded {
        port: u16,
    },
    External {
        port: u16,
    },
    /// An external broker's TLS listener (mqtts://), its certificate from the hall CA.
    ExternalTls {
        port: u16,
    },
}

impl Broker {
    pub fn port(&self) -> u16 {
        match self {
            Broker::Embedded { port }
            | Broker::External { port }
            | Broker::ExternalTls { port } => *port,
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
    /// The arbiters' token: its configuration's, else the one it made at its first start.
    pub token: String,
}

/// A node enrolled with the hub: what its `--hardware-id` and `--key-file` say.
#[derive(Debug, Clone)]
pub struct Enrolment {
    pub hardware: String,
    pub board: u16,
    /// The key's text, as the hub handed it out.
    pub key: String,
    pub key_file: PathBuf,
}

impl Enrolment {
    pub fn node_key(&self) -> protocol::seal::NodeKey {
        protocol::seal::NodeKey::parse(&self.key).expect("the hub's key")
    }

    /// MQTT link options of this node: its board's username, its password, its client id.
    pub fn node_link(&self) -> link::LinkOptions {
        let board = protocol::BoardNo(self.board);
        let mut options = link::LinkOptions::new(format!(
            "{}{}",
            protocol::identity::node_client_prefix("default", board),
            free_port()
        ));
        options.credentials = Some((
            protocol::identity::node_user(board),
            protocol::identity::node_password(&self.node_key()),
        ));
        options
    }
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
            token: String::new(),
            args,
        };
        hub.wait_ready();
        hub
    }

    /// The arbiters' token once the hub runs: its configuration's, else the one it made and
    /// keeps in its data directory (as `hub login-link` reads it).
    fn learn_token(&mut self) {
        self.token = configured_token(&self.args).unwrap_or_else(|| {
            std::fs::read_to_string(self.data.join("arbiter-token"))
                .expect("the token the hub made at its first start")
                .trim()
                .to_owned()
        });
        register_token(self.http, &self.token);
    }

    /// A POST as the technician does it (with the arbiters' token); the answer's JSON, which
    /// must come with 200.
    pub fn technician_post(&self, path: &str, body: &str) -> serde_json::Value {
        let bearer = format!("Bearer {}", self.token);
        let headers = [
            ("Content-Type", "application/json"),
            ("Authorization", &bearer),
        ];
        let (status, _, answer) = http_request(self.http, "POST", path, &headers, body)
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        assert_eq!(status, 200, "POST {path} {body}: {answer}");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("POST {path}: {e}: {answer}"))
    }

    /// Arbiter `name`'s pager credentials (`POST /api/arbiters/enrol`), written as the key
    /// file `hub pager --key-file` reads; returns the file.
    pub fn enrol_arbiter(&self, name: &str, dir: &Path) -> PathBuf {
        let answer = self.technician_post(
            "/api/arbiters/enrol",
            &serde_json::json!({ "arbiter": name }).to_string(),
        );
        assert_eq!(answer["arbiter"], name);
        let path = dir.join(format!("arbiter-{}.json", name.replace(' ', "_")));
        std::fs::write(&path, answer.to_string()).expect("writing the arbiter's key file");
        path
    }

    /// MQTT link options of a pager of arbiter `name`, enrolled now and logged in as pagers
    /// are (the trusted screens of this hall's tests log in so too).
    pub fn pager_link(&self, name: &str, dir: &Path) -> link::LinkOptions {
        self.pager_options(&self.enrol_arbiter(name, dir))
    }

    /// MQTT link options of the pager whose key file (`enrol_arbiter`) is `key_file`.
    pub fn pager_options(&self, key_file: &Path) -> link::LinkOptions {
        let answer: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(key_file).unwrap()).unwrap();
        let user = answer["mqtt_user"].as_str().unwrap();
        let mut options = link::LinkOptions::new(format!(
            "{}{:016x}",
            protocol::identity::pager_client_prefix("default", user),
            rand::random::<u64>()
        ));
        options.credentials = Some((
            user.into(),
            answer["mqtt_password"].as_str().unwrap().into(),
        ));
        options
    }

    /// The broker's port.
    pub fn broker_port(&self) -> u16 {
        self.broker.port()
    }

    /// Enrols `hardware` for `board` as the technician does (`POST /api/nodes/enrol`, with
    /// the arbiter token if the hall has one) and writes its key file into `dir`.
    pub fn enrol(&self, hardware: &str, board: u16, dir: &Path) -> Enrolment {
        let body = format!(r#"{{"hardware": "{hardware}", "board": {board}}}"#);
        let answer = self.technician_post("/api/nodes/enrol", &body);
        assert_eq!(answer["hardware"], hardware);
        assert_eq!(answer["board"], board);
        let key = answer["key"].as_str().expect("a key").to_owned();
        let key_file = dir.join(format!("key-{hardware}"));
        std::fs::write(&key_file, &key).expect("writing the key file");
        Enrolment {
            hardware: hardware.to_owned(),
            board,
            key,
            key_file,
        }
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
        if self
            .args
            .windows(2)
            .any(|w| w[0] == "--tls" && w[1] == "on")
        {
            // HTTPS: the hall CA the hub makes at its first start is what a browser trusts.
            let ca = self.data.join("hall-ca.pem");
            let data = self.data.clone();
            wait_for(
                "the hall CA",
                &mut self.child,
                &self.log,
                Duration::from_secs(30),
                || data.join("hall-ca.pem").exists(),
            );
            register_https(http, &std::fs::read_to_string(ca).unwrap());
        }
        wait_for(
            "hub",
            &mut self.child,
            &self.log,
            Duration::from_secs(30),
            || matches!(http_get(http, "/healthz"), Ok((200, _))),
        );
        self.learn_token();
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

/// The `arbiter_token` of the `--config` file among `args`, if any.
fn configured_token(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--config")?;
    let text = std::fs::read_to_string(args.get(at + 1)?).ok()?;
    let config: toml::Table = text.parse().ok()?;
    config
        .get("access")?
        .get("arbiter_token")?
        .as_str()
        .map(str::to_owned)
}

/// Whether `args` say the broadcast's delay: the flag, or `delay_s` in the `--config` file.
fn delay_configured(args: &[String]) -> bool {
    args.iter().any(|a| a == "--broadcast-delay-s")
        || args
            .iter()
            .position(|a| a == "--config")
            .and_then(|at| std::fs::read_to_string(args.get(at + 1)?).ok())
            .and_then(|text| text.parse::<toml::Table>().ok())
            .is_some_and(|config| {
                config
                    .get("broadcast")
                    .and_then(|b| b.get("delay_s"))
                    .is_some()
            })
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
        Broker::ExternalTls { port } => command
            .arg("--broker")
            .arg(format!("mqtts://127.0.0.1:{port}")),
    };
    command.arg("--http").arg(http.to_string()).args(args);
    if !delay_configured(args) {
        // These halls' tests read the feed as the boards play; the default delay (15
        // minutes) has its own test.
        command.args(["--broadcast-delay-s", "0"]);
    }
    command
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

fn spawn_node(args: &[String], log: &Path) -> Child {
    Command::new(workspace_bin("board-node"))
        .args(args)
        .env("RUST_LOG", "warn,board_node=debug")
        .stdout(Stdio::piped())
        .stderr(append(log))
        .spawn()
        .expect("spawning a board node")
}

/// A Mosquitto broker with the configuration shipped in `deploy/` (no anonymous clients,
/// the shipped ACL), on `port`; its users come from the hub with the shipped `users.sh`.
pub struct Mosquitto {
    child: Child,
    config: PathBuf,
    log: PathBuf,
    port: u16,
    /// Its password file.
    users: PathBuf,
}

impl Mosquitto {
    /// Reads the users again from the stopped hub's `data`, and reloads.
    pub fn load_users_from(&mut self, data: &Path) {
        run_users_sh(&data.display().to_string(), &self.users, None);
        self.reload();
    }

    /// Reads the users again from the running `hub` (`GET /api/broker/users`), and reloads.
    pub fn load_users_from_hub(&mut self, hub: &Hub) {
        let scheme = match https_ca_of(hub.http) {
            Some(_) => "https",
            None => "http",
        };
        run_users_sh(
            &format!("{scheme}://{}", hub.http),
            &self.users,
            Some((&hub.token, &hub.data.join("hall-ca.pem"))),
        );
        self.reload();
    }

    /// SIGHUP: Mosquitto rereads its password and ACL files.
    fn reload(&self) {
        let status = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .expect("kill -HUP");
        assert!(status.success());
        // Reloading is asynchronous; give it a moment.
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Mosquitto with the shipped configuration, its plain (loopback) listener on `port`
    /// and no TLS listener.
    pub fn start(dir: &Path, port: u16) -> Mosquitto {
        Mosquitto::start_with(dir, port, None)
    }

    /// Mosquitto with the shipped configuration, TLS listener included: on `tls.0`, with a
    /// certificate `hub broker-cert` issued from the hall CA in the hub's data directory
    /// `tls.1`.
    pub fn start_with(dir: &Path, port: u16, tls: Option<(u16, &Path)>) -> Mosquitto {
        let certs = dir.join("mosquitto-certs");
        if let Some((_, hub_data)) = tls {
            std::fs::create_dir_all(&certs).unwrap();
            let out = Command::new(workspace_bin("hub"))
                .arg("broker-cert")
                .arg("--data")
                .arg(hub_data)
                .args(["--name", "127.0.0.1", "--name", "localhost"])
                .arg("--cert")
                .arg(certs.join("zeitnot.pem"))
                .arg("--key")
                .arg(certs.join("zeitnot.key"))
                .output()
                .expect("hub broker-cert");
            assert!(out.status.success(), "{out:?}");
            std::fs::copy(hub_data.join("hall-ca.pem"), certs.join("hall-ca.pem")).unwrap();
            // Mosquitto started as root reads its TLS files as the `mosquitto` user it drops
            // to: the test's directory must let it through (a hall keeps the key in the
            // mosquitto group, mode 0640: deploy/mosquitto/zeitnot.conf).
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path, mode| {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
            };
            mode(dir, 0o711);
            mode(&certs, 0o755);
            for file in ["zeitnot.pem", "zeitnot.key", "hall-ca.pem"] {
                mode(&certs.join(file), 0o644);
            }
        }
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/mosquitto/zeitnot.conf"),
        )
        .expect("deploy/mosquitto/zeitnot.conf");
        let store = dir.join("mosquitto-store");
        let users = dir.join("zeitnot.passwd");
        if !users.exists() {
            // No users yet: nobody gets in until the hub's are loaded.
            std::fs::write(&users, "").expect("an empty password file");
        }
        // The shipped ACL, which users.sh completes with the pagers' logins.
        let acl = users.with_file_name("zeitnot.acl");
        if !acl.exists() {
            std::fs::copy(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/mosquitto/zeitnot.acl"),
                &acl,
            )
            .expect("the shipped ACL");
        }
        std::fs::create_dir_all(&store).expect("mosquitto store dir");
        // The shipped file with this test's port and storage directory.
        // The shipped file's TLS listener comes first, with its files; then the plain one.
        let mut in_tls_listener = false;
        let config: String = shipped
            .lines()
            .filter_map(|line| {
                if line.starts_with("listener ") {
                    in_tls_listener = line.starts_with("listener 8883");
                }
                let tls_line = in_tls_listener
                    && [
                        "listener ",
                        "certfile ",
                        "keyfile ",
                        "cafile ",
                        "tls_version ",
                    ]
                    .iter()
                    .any(|k| line.starts_with(k));
                match (tls_line, tls) {
                    (true, None) => None,
                    (true, Some((tls_port, _))) => Some(match line.split_once(' ') {
                        Some(("listener", _)) => format!("listener {tls_port} 127.0.0.1"),
                        Some((key @ ("certfile" | "keyfile" | "cafile"), path)) => {
                            let name = Path::new(path).file_name().unwrap();
                            format!("{key} {}", certs.join(name).display())
                        }
                        _ => line.to_owned(),
                    }),
                    (false, _) => Some(line.to_owned()),
                }
            })
            .map(|line| {
                if line.starts_with("listener 1883") {
                    format!("listener {port} 127.0.0.1")
                } else if line.starts_with("persistence_location ") {
                    format!("persistence_location {}/", store.display())
                } else if line.starts_with("password_file ") {
                    format!("password_file {}", users.display())
                } else if line.starts_with("acl_file ") {
                    format!("acl_file {}", acl.display())
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
            users,
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

/// Runs `deploy/mosquitto/users.sh SOURCE FILE` with the workspace's `hub` on the `PATH`.
fn run_users_sh(source: &str, file: &Path, token: Option<(&str, &Path)>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/mosquitto/users.sh");
    let bin = workspace_bin("hub");
    let path = format!(
        "{}:{}:/usr/sbin:/usr/bin",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg(script)
        .arg(source)
        .arg(file)
        .arg(file.with_file_name("zeitnot.acl"))
        .env("PATH", path);
    if let Some((token, ca)) = token {
        command.env("ZEITNOT_ARBITER_TOKEN", token);
        command.env("ZEITNOT_HALL_CA", ca);
    }
    let out = command.output().expect("running users.sh");
    assert!(
        out.status.success(),
        "users.sh {source}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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

/// A `hub pager` process run with `args` (after `pager`), its screen and its complaints
/// written to files in a directory of its own; killed when dropped.
pub struct TerminalPager {
    child: Child,
    _dir: tempfile::TempDir,
    out: PathBuf,
    err: PathBuf,
}

impl TerminalPager {
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> TerminalPager {
        let dir = tempfile::tempdir().expect("a directory for the pager's output");
        let (out, err) = (dir.path().join("pager.out"), dir.path().join("pager.err"));
        let child = Command::new(workspace_bin("hub"))
            .arg("pager")
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("spawning hub pager");
        TerminalPager {
            child,
            _dir: dir,
            out,
            err,
        }
    }

    /// The pager of the arbiter whose key file is `key_file`, watching every zone, on the
    /// broker at `broker_port`.
    pub fn all_zones(broker_port: u16, key_file: &Path) -> TerminalPager {
        TerminalPager::start([
            "--zone".into(),
            "all".into(),
            "--broker".into(),
            format!("127.0.0.1:{broker_port}"),
            "--key-file".into(),
            key_file.display().to_string(),
        ])
    }

    /// Everything it has shown so far.
    pub fn shown(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Everything it has written to stderr so far.
    pub fn complaints(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}

impl Drop for TerminalPager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
