//! What the process benchmarks share: free ports, real game readings, percentiles, links.

#![allow(dead_code)] // each bench uses its own part

pub mod bare_session;

use std::net::SocketAddr;
use std::time::Duration;

use board_node::source::{Reading, Timed};
use board_node::{pgn, replay};
use hub::core::hub::HubConfig;
use hub::run::{self, BrokerChoice, Running, ServeConfig};
use link::{BrokerAddr, LinkEvent};
use protocol::identity;
use protocol::seal::NodeKey;
use protocol::{BoardNo, UplinkBody};
use protocol::{ClockReport, Color};

const GAMES: &[u8] = include_bytes!("../../demo/world-cup-2025-rapid.pgn");

/// Where a process is asked to listen: a port of its choosing, which it then reports.
const ANY_PORT: &str = "127.0.0.1:0";

/// Each node's first `events` events: the readings of a real game, as the replay source
/// reports them. A game with fewer readings has its clock's running readings added between
/// them, spread over the game, as many as make up the number (a DGT clock reports its
/// display every second, [`with_running_clock`]). Before 2026-11-29 a short game was sent
/// again from its start, so that every third board showed the start position in a game in
/// play: an alert storm (illegal moves, a clock out of sync) that no hall sends. Only a
/// number beyond even one reading a second sends the game again.
pub fn node_events(board: u16, events: usize) -> Vec<UplinkBody> {
    let games = pgn::read_games(GAMES).expect("demo games");
    let game = &games[usize::from(board) % games.len()];
    filled_to(replay::script(game, None), events)
        .into_iter()
        .map(|t| t.reading.body())
        .cycle()
        .take(events)
        .collect()
}

/// `script` with running clock readings added, evenly over the game, until it has at least
/// `events` readings or has one a second.
fn filled_to(script: Vec<Timed>, events: usize) -> Vec<Timed> {
    const EVERY_SECOND: u64 = 1_000;
    let missing = events.saturating_sub(script.len()) as u64;
    if missing == 0 {
        return script;
    }
    let played_ms = script.last().map_or(0, |t| t.game_ms);
    let mut every_ms = (played_ms / missing).max(EVERY_SECOND);
    loop {
        let filled = with_running_clock(script.clone(), every_ms);
        if filled.len() >= events || every_ms == EVERY_SECOND {
            return filled;
        }
        every_ms = (every_ms * 3 / 4).max(EVERY_SECOND);
    }
}

/// `script` with a clock reading every `every_ms` while a clock runs, as a DGT clock
/// reports its display (`SEND_UPDATE_NICE`: on every change of the seconds shown).
pub fn with_running_clock(script: Vec<Timed>, every_ms: u64) -> Vec<Timed> {
    let mut out = Vec::with_capacity(script.len() * 8);
    // The last clock report, and when the next reading of its running side is due.
    let mut last: Option<(u64, ClockReport, u64)> = None;
    for timed in script {
        if let Some((at, clock, next)) = &mut last {
            if let Some(running) = clock.running {
                while *next < timed.game_ms {
                    let ran = u32::try_from(*next - *at).unwrap_or(u32::MAX);
                    let mut shown = *clock;
                    shown.pressed_by = None;
                    match running {
                        Color::White => shown.white_ms = clock.white_ms.saturating_sub(ran),
                        Color::Black => shown.black_ms = clock.black_ms.saturating_sub(ran),
                    }
                    out.push(Timed::at(*next, Reading::Clock(shown)));
                    *next += every_ms;
                }
            }
        }
        if let Reading::Clock(report) = &timed.reading {
            last = Some((timed.game_ms, *report, timed.game_ms + every_ms));
        }
        out.push(timed);
    }
    out
}

/// The real classical games (FIDE World Cup 2025) with their clock times, from
/// `../shared/data/real/`.
pub fn classical_games() -> Vec<pgn::PgnGame> {
    let text = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/real/pgn-clocks/fide_world_cup_2025_classical.pgn"),
    )
    .expect("the real classical games in ../shared/data/real");
    pgn::read_games(&text).expect("the classical games")
}

/// The classical games' time control: 90 minutes for 40 moves, then 30, 30 s per move.
pub const CLASSICAL_TIME_CONTROL: &str = "40/5400+30:1800+30";

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub async fn connected(events: &mut tokio::sync::mpsc::Receiver<LinkEvent>) {
    while let Some(event) = events.recv().await {
        if matches!(event, LinkEvent::Connected) {
            return;
        }
    }
}

/// A simulated board node's MQTT link: its board, client and events.
pub type NodeLink = (
    u16,
    rumqttc::AsyncClient,
    tokio::sync::mpsc::Receiver<LinkEvent>,
);

/// Connects the enrolled nodes of boards 1, 2, … (`keys`, board 1's first) of `event`, each
/// logged in as its board with its key's password, each link shaped by `options`
/// (subscriptions, capacity), and waits until every one is connected and settled.
pub async fn connect_nodes(
    broker: &BrokerAddr,
    event: &str,
    keys: &[NodeKey],
    options: impl Fn(u16, &mut link::LinkOptions),
) -> Vec<NodeLink> {
    let mut nodes = Vec::new();
    for (n, key) in (1u16..).zip(keys) {
        let board = BoardNo(n);
        let mut link_options = link::LinkOptions::new(format!(
            "{}bench",
            identity::node_client_prefix(event, board)
        ));
        link_options.credentials = Some((identity::node_user(board), identity::node_password(key)));
        link_options.seed = u64::from(n);
        options(n, &mut link_options);
        let (client, events) = link::start(broker, link_options);
        nodes.push((n, client, events));
    }
    for (_, _, events) in &mut nodes {
        connected(events).await;
    }
    settle().await;
    nodes
}

/// Runs a process benchmark's body on a multi-threaded runtime, as the hub runs.
pub fn block_on<F: std::future::Future>(body: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(body)
}

/// Lets the subscriptions queued at connect reach the broker.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Prints the hub's `/metrics` lines that start with one of `shown`.
pub async fn print_hub_counters(http: std::net::SocketAddr, shown: &[&str]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(http).await else {
        return;
    };
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: {http}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    let mut response = String::new();
    if stream.write_all(request.as_bytes()).await.is_ok()
        && stream.read_to_string(&mut response).await.is_ok()
    {
        for line in response.lines() {
            if shown.iter().any(|s| line.starts_with(s)) {
                println!("          {line}");
            }
        }
    }
}

/// The arbiters' token of every hub a benchmark starts (a process of its own on loopback,
/// gone with the run): what the benchmarks' requests send.
pub const TOKEN: &str = "a-benchmarks-arbiter-token";

/// Enrols the simulated nodes of `boards` (hardware `bench-N`) as a technician does, over
/// the hub's API; returns their keys, board 1's first.
pub async fn enrol_nodes(http: SocketAddr, boards: std::ops::RangeInclusive<u16>) -> Vec<NodeKey> {
    use futures_util::StreamExt;
    let client = reqwest::Client::new();
    // Many at once, as a technician's script would: each waits for a journal flush.
    futures_util::stream::iter(boards)
        .map(|n| {
            let client = client.clone();
            async move {
                hub::cmd::enrol::over_http(&client, http, TOKEN, &format!("bench-{n}"), BoardNo(n))
                    .await
                    .expect("enrolment")
            }
        })
        .buffered(64)
        .collect()
        .await
}

/// MQTT options of a pager (a screen, a witness) of `event` logged in as pagers are, with
/// the credentials the hub hands an arbiter (`POST /api/arbiters/enrol`).
pub async fn pager_login(http: SocketAddr, event: &str, name: &str) -> link::LinkOptions {
    let client = reqwest::Client::new();
    let answer = hub::cmd::enrol::arbiter_over_http(&client, http, TOKEN, name)
        .await
        .expect("the arbiter's credentials");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let user = answer["mqtt_user"].as_str().expect("a username");
    let mut options = link::LinkOptions::new(format!(
        "{}{:016x}",
        identity::pager_client_prefix(event, user),
        rand::random::<u64>()
    ));
    options.credentials = Some((
        user.into(),
        answer["mqtt_password"].as_str().expect("a password").into(),
    ));
    options
}

/// Starts a hub in this process for event `event`: on the broker already listening on
/// `external`, else on an embedded broker of its own. The directory holds its journal. An
/// `open_hall`'s embedded broker holds no login to its topics (its enrolled boards stay
/// sealed): for a bench whose witness reads the boards' uplinks.
pub async fn start_hub(
    event: &str,
    external: Option<u16>,
    open_hall: bool,
) -> (tempfile::TempDir, Running) {
    let data = tempfile::tempdir().expect("temp dir");
    let broker = match external {
        Some(port) => BrokerChoice::External(BrokerAddr::plain("127.0.0.1", port).into()),
        None => BrokerChoice::Embedded(ANY_PORT.parse().unwrap()),
    };
    let config = ServeConfig {
        data: data.path().join("journal"),
        broker,
        http: "127.0.0.1:0".parse().unwrap(),
        arbiter_token: Some(TOKEN.into()),
        hosts: Vec::new(),
        tls: hub::config::tls::TlsChoice::Auto,
        mqtt5: None,
        broker_ca: None,
        config_path: None,
        cluster: None,
        trfs: Default::default(),
        standings: Default::default(),
        outlets: Default::default(),
        hub: HubConfig {
            event: event.into(),
            open_hall,
            ..HubConfig::default()
        },
    };
    let (ready_tx, ready) = tokio::sync::oneshot::channel();
    tokio::spawn(run::serve(config, Some(ready_tx), std::future::pending()));
    (data, ready.await.expect("hub ready"))
}

/// A `hub serve` process with its embedded broker, its journal in a directory of its own:
/// the hall's hub as it runs, measured from outside (its CPU and memory are its own).
pub struct HubProcess {
    child: std::process::Child,
    pub http: SocketAddr,
    pub broker: BrokerAddr,
    /// The hall CA's certificate (PEM) of a hub run with `--tls on`: its HTTPS and MQTT
    /// listeners' certificates are signed by it.
    pub ca: Option<String>,
    args: Vec<String>,
    pub log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl HubProcess {
    /// Starts `hub serve` for `event` (on its embedded broker, or on the external broker at
    /// `external`) and waits until it answers.
    pub async fn start(event: &str, external: Option<u16>) -> HubProcess {
        HubProcess::start_with(event, external, &[]).await
    }

    /// [`HubProcess::start`] with more of `hub serve`'s flags.
    pub async fn start_with(event: &str, external: Option<u16>, more: &[&str]) -> HubProcess {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = vec![
            "serve".to_owned(),
            "--data".into(),
            dir.path().join("journal").display().to_string(),
            "--http".into(),
            ANY_PORT.into(),
            "--event".into(),
            event.into(),
            "--arbiter-token".into(),
            TOKEN.into(),
            // The benchmarks measure the hall as it is played, the feed included.
            "--broadcast-delay-s".into(),
            "0".into(),
        ];
        match external {
            Some(port) => args.extend(["--broker".into(), format!("mqtt://127.0.0.1:{port}")]),
            None => args.extend(["--mqtt".into(), ANY_PORT.into()]),
        }
        args.extend(more.iter().map(|a| (*a).to_owned()));
        let tls = more.windows(2).any(|w| w == ["--tls", "on"]);
        let log = dir.path().join("hub.log");
        let mut child = spawn_hub(&args, &log);
        // The ports it chose, from its `hub ready` line; a respawn asks for the same.
        let (http, port) = ready_line(&mut child, &log).await;
        for (flag, addr) in [
            ("--http", http),
            ("--mqtt", SocketAddr::from(([127, 0, 0, 1], port))),
        ] {
            if let Some(at) = args.iter().position(|a| a == flag) {
                args[at + 1] = addr.to_string();
            }
        }
        let mut hub = HubProcess {
            child,
            http,
            broker: BrokerAddr::plain("127.0.0.1", port),
            ca: None,
            args,
            log,
            _dir: dir,
        };
        if tls {
            // The hall CA the hub makes at its first start, as a node gets it at enrolment.
            let file = hub._dir.path().join("journal").join("hall-ca.pem");
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while !file.exists() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no hall CA: {}",
                    hub.tail()
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            hub.ca = Some(std::fs::read_to_string(file).expect("the hall CA"));
            hub.broker.tls = true;
        }
        hub.ready().await;
        hub
    }

    /// `http://ADDR` or, for a hub with TLS, `https://ADDR`.
    #[allow(dead_code)]
    pub fn base(&self) -> String {
        match self.ca {
            Some(_) => format!("https://{}", self.http),
            None => format!("http://{}", self.http),
        }
    }

    /// An HTTP client that trusts the hub's hall CA (if it has TLS), and nothing else.
    #[allow(dead_code)]
    pub fn client(&self) -> reqwest::Client {
        let mut builder = reqwest::Client::builder();
        if let Some(ca) = &self.ca {
            let cert = reqwest::Certificate::from_pem(ca.as_bytes()).expect("the hall CA");
            builder = builder
                .tls_built_in_root_certs(false)
                .add_root_certificate(cert);
        }
        builder.build().expect("an HTTP client")
    }

    /// The client configuration of an MQTT session that pins the hall CA, if the hub has
    /// TLS.
    #[allow(dead_code)]
    pub fn mqtt_tls(&self) -> Option<std::sync::Arc<rustls::ClientConfig>> {
        let ca = self.ca.as_ref()?;
        Some(link::tls::client_config(ca.as_bytes()).expect("the hall CA"))
    }

    /// Enrols the simulated nodes of `boards` (hardware `bench-N`) over the hub's API, as
    /// [`enrol_nodes`] does, over HTTPS where the hub has TLS; their keys, board 1's first.
    #[allow(dead_code)]
    pub async fn enrol_nodes(&self, boards: std::ops::RangeInclusive<u16>) -> Vec<NodeKey> {
        use futures_util::StreamExt;
        let (client, base) = (self.client(), self.base());
        futures_util::stream::iter(boards)
            .map(|n| {
                let (client, base) = (client.clone(), base.clone());
                async move {
                    let body = serde_json::json!({ "hardware": format!("bench-{n}"), "board": n });
                    let text = client
                        .post(format!("{base}/api/nodes/enrol"))
                        .bearer_auth(TOKEN)
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body.to_string())
                        .send()
                        .await
                        .and_then(reqwest::Response::error_for_status)
                        .expect("enrolment")
                        .text()
                        .await
                        .expect("the enrolment's answer");
                    let answer: serde_json::Value =
                        serde_json::from_str(&text).expect("the enrolment's JSON");
                    NodeKey::parse(answer["key"].as_str().expect("a key")).expect("the key")
                }
            })
            .buffered(64)
            .collect()
            .await
    }

    /// Waits until `/healthz` answers ok.
    pub async fn ready(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let client = self.client();
        loop {
            if client
                .get(format!("{}/healthz", self.base()))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the hub did not start: {}",
                self.tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: no shutdown, no last flush.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same journal and addresses (not waiting for it).
    pub fn respawn(&mut self) {
        self.child = spawn_hub(&self.args, &self.log);
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory, KiB.
    pub fn rss_kib(&self) -> u64 {
        proc_status(self.pid(), "VmRSS:")
    }

    /// CPU time used so far (user and system), in seconds.
    pub fn cpu_s(&self) -> f64 {
        cpu_seconds(self.pid())
    }

    pub fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The HTTP address and the broker's port a hub started with `log` says in its `hub ready`
/// line (`… hub ready http=127.0.0.1:P broker=mqtt://127.0.0.1:Q event=…`).
async fn ready_line(child: &mut std::process::Child, log: &std::path::Path) -> (SocketAddr, u16) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let field = |line: &str, name: &str| {
            line.split_whitespace()
                .find_map(|word| word.strip_prefix(name))
                .map(str::to_owned)
        };
        let ready = text
            .lines()
            .find(|l| l.contains("hub ready"))
            .and_then(|line| {
                let http = field(line, "http=")?.parse().ok()?;
                let broker = field(line, "broker=")?;
                Some((http, broker.rsplit_once(':')?.1.parse().ok()?))
            });
        if let Some(ready) = ready {
            return ready;
        }
        assert!(
            child.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline,
            "the hub did not start: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn spawn_hub(args: &[String], log: &std::path::Path) -> std::process::Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("the hub's log");
    std::process::Command::new(env!("CARGO_BIN_EXE_hub"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("starting hub serve")
}

/// The broker the hub embeds, alone (`hub broker`), in a process of its own: the baseline.
pub struct BrokerProcess {
    child: std::process::Child,
    pub broker: BrokerAddr,
}

impl BrokerProcess {
    pub async fn start() -> BrokerProcess {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hub"))
            .args(["broker", "--mqtt", ANY_PORT])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting hub broker");
        // It says where it listens: `{"mqtt": "127.0.0.1:P", "connections": N}`.
        let mut said = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("its stdout")),
            &mut said,
        )
        .expect("the broker's first line");
        let said: serde_json::Value = serde_json::from_str(&said).expect("the broker's JSON");
        let mqtt: SocketAddr = said["mqtt"]
            .as_str()
            .and_then(|a| a.parse().ok())
            .expect("its address");
        let broker = BrokerAddr::plain("127.0.0.1", mqtt.port());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(mqtt).await.is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the broker did not start"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        BrokerProcess { child, broker }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for BrokerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A line of `/proc/PID/status` in KiB (`VmRSS:`, `VmHWM:`).
pub fn proc_status(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The CPU time a process has used (user and system), in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are 14 and 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Field 14 is the 12th after the state (field 3).
    (ticks(11) + ticks(12)) / clock_ticks()
}

/// Clock ticks per second (`getconf CLK_TCK`): 100 on Linux.
fn clock_ticks() -> f64 {
    100.0
}

/// Raises this process's open-files limit as far as it may (a root process: its hard
/// limit too): one process holding 10,000 nodes' connections needs more than a shell's
/// 1,024 or 20,000.
pub fn many_open_files(wanted: u64) -> u64 {
    let (_, hard) = rlimit::Resource::NOFILE.get().unwrap_or((1024, 1024));
    let target = wanted.max(hard);
    if rlimit::Resource::NOFILE.set(target, target).is_ok() {
        return target;
    }
    let _ = rlimit::Resource::NOFILE.set(hard, hard);
    hard
}

/// A hub's core with `boards` boards, each a whole real rapid game played through it (game
/// `b % games` on board `b`): the hall the feed's benchmarks render; and the time after the
/// last move.
pub fn played_hub(boards: u16) -> (hub::core::hub::Hub, hub::core::time::HubMs) {
    use hub::core::time::HubMs;
    use protocol::{NodeMs, Seq, Uplink};
    let games = pgn::read_games(GAMES).expect("demo games");
    let mut hub = hub::core::hub::Hub::new(HubConfig {
        event: "bench".into(),
        time_control: Some("900+10".parse().unwrap()),
        ..HubConfig::default()
    });
    let mut last = 0;
    for b in 1..=boards {
        let game = &games[usize::from(b) % games.len()];
        for (i, t) in replay::script(game, None).into_iter().enumerate() {
            let event = Uplink::new(
                BoardNo(b),
                Seq(i as u64 + 1),
                NodeMs(t.game_ms),
                t.reading.body(),
            );
            last = last.max(t.game_ms);
            hub.handle_uplink(HubMs(t.game_ms), event);
            let _ = hub.poll_all_durable(HubMs(t.game_ms));
        }
    }
    (hub, HubMs(last + 1))
}
