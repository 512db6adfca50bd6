//! A `hub serve` process and the broker it uses.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::super::*;

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
    /// A hub of a clustered hall (`--cluster`): the NATS servers, the MQTT gateways (both
    /// `A,B,C`, this hub's machine's first) and the hub's name.
    Cluster {
        nats: String,
        gateways: String,
        name: String,
    },
}

impl Broker {
    pub fn port(&self) -> u16 {
        match self {
            Broker::Embedded { port }
            | Broker::External { port }
            | Broker::ExternalTls { port } => *port,
            Broker::Cluster { gateways, .. } => gateways
                .split(',')
                .next()
                .and_then(|g| g.rsplit_once(':'))
                .and_then(|(_, port)| port.parse().ok())
                .expect("a gateway's port"),
        }
    }
}

/// A `hub serve` process.
pub struct Hub {
    pub child: Child,
    pub http: SocketAddr,
    /// How the tests reach it over HTTP: its address, token and CA.
    pub web: Web,
    pub data: PathBuf,
    broker: Broker,
    pub log: PathBuf,
    /// More `hub serve` arguments (`--config`, `--time-control`, …).
    args: Vec<String>,
    /// The arbiters' token: its configuration's, else the one it made at its first start.
    pub token: String,
    /// The embedded broker's MQTT 5 port, when `--mqtt5` asked for one.
    pub mqtt5_port: Option<u16>,
    /// Where in `log` this run of the process began: its `hub ready` line is after.
    log_from: u64,
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
            rand::random::<u32>()
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

    /// A hub on ports of its own choosing (HTTP, and an embedded broker's `port: 0`), read
    /// from its `hub ready` line: no port is picked for it beforehand, so none is raced for.
    pub fn start_with(data: &Path, broker: Broker, log: &Path, args: Vec<String>) -> Hub {
        let http = SocketAddr::from(([127, 0, 0, 1], 0));
        let log_from = log_length(log);
        let mut hub = Hub {
            child: spawn_hub(data, &broker, http, log, &args),
            http,
            web: Web::plain(http),
            data: data.to_owned(),
            broker,
            log: log.to_owned(),
            token: String::new(),
            mqtt5_port: None,
            args,
            log_from,
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
        self.web = self.web.clone().with_token(&self.token);
    }

    /// A POST as the technician does it (with the arbiters' token); the answer's JSON, which
    /// must come with 200.
    pub fn technician_post(&self, path: &str, body: &str) -> serde_json::Value {
        let bearer = format!("Bearer {}", self.token);
        let headers = [
            ("Content-Type", "application/json"),
            ("Authorization", &bearer),
        ];
        let (status, _, answer) = http_request(&self.web, "POST", path, &headers, body)
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        assert_eq!(status, 200, "POST {path} {body}: {answer}");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("POST {path}: {e}: {answer}"))
    }

    /// Arbiter `name` enrolled for `zones` as the chief arbiter enrols one (`POST
    /// /api/arbiters/enrol`): the answer, with the arbiter's login, pager credentials and
    /// phone links.
    pub fn enrol_arbiter_in(&self, name: &str, zones: &[&str]) -> serde_json::Value {
        let body = serde_json::json!({ "arbiter": name, "zones": zones });
        let answer = self.technician_post("/api/arbiters/enrol", &body.to_string());
        assert_eq!(answer["arbiter"], name);
        answer
    }

    /// Arbiter `name`'s pager credentials ([`Hub::enrol_arbiter_in`], no zones), written as
    /// the key file `hub pager --key-file` reads; returns the file.
    pub fn enrol_arbiter(&self, name: &str, dir: &Path) -> PathBuf {
        let answer = self.enrol_arbiter_in(name, &[]);
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
        let hub = Hub::start(
            &dir.join("data"),
            Broker::Embedded { port: 0 },
            &dir.join("hub.log"),
        );
        let port = hub.broker_port();
        (hub, port)
    }

    /// A hub with its embedded broker on a free port, run with `config` (TOML) as its
    /// `--config`; data, log and the file in `dir`. Returns the broker's port too.
    pub fn configured(dir: &Path, config: &str) -> (Hub, u16) {
        let path = dir.join("event.toml");
        std::fs::write(&path, config).expect("writing the configuration");
        let hub = Hub::start_with(
            &dir.join("data"),
            Broker::Embedded { port: 0 },
            &dir.join("hub.log"),
            vec!["--config".into(), path.display().to_string()],
        );
        let port = hub.broker_port();
        (hub, port)
    }

    pub fn wait_ready(&mut self) {
        // Where it listens, as it says once ready (a restart keeps the ports it had).
        let (log, from) = (self.log.clone(), self.log_from);
        let mut ready = None;
        wait_for(
            "hub's ready line",
            &mut self.child,
            &self.log,
            Duration::from_secs(30),
            || {
                ready = ready_line(&log, from);
                ready.is_some()
            },
        );
        let ready = ready.expect("waited for");
        self.http = ready.http;
        if let Broker::Embedded { port } = &mut self.broker {
            *port = ready.broker_port;
        }
        self.mqtt5_port = ready.mqtt5_port;
        let mut web = Web::plain(self.http);
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
            web = web.with_ca(std::fs::read_to_string(ca).unwrap());
        }
        if !self.token.is_empty() {
            web = web.with_token(&self.token);
        }
        self.web = web.clone();
        // A cluster's hub answers once it joined, active or standby (a standby's /healthz
        // is 503: it takes no events).
        let path = match self.broker {
            Broker::Cluster { .. } => "/api/cluster",
            _ => "/healthz",
        };
        wait_for(
            "hub",
            &mut self.child,
            &self.log,
            Duration::from_secs(30),
            || matches!(http_get(&web, path), Ok((200, _))),
        );
        self.learn_token();
    }

    /// SIGKILL: no shutdown, no final flush.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends the process `signal` (`STOP`, `CONT`): a hub that freezes and wakes again.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal}");
    }

    pub fn restart(&mut self) {
        self.kill();
        self.log_from = log_length(&self.log);
        self.child = spawn_hub(&self.data, &self.broker, self.http, &self.log, &self.args);
        self.wait_ready();
    }
}

/// The technician's set-up of a clustered hall (deploy/README.md): the hall's secrets from
/// the first hub's data directory to a file, and into each other hub's, before any starts.
/// They never cross NATS.
pub fn share_hall_secrets(first: &Path, others: &[&Path]) {
    let file = first.with_extension("hall-secrets.json");
    run_hub(&[
        "cluster-secrets".as_ref(),
        "--data".as_ref(),
        first.as_os_str(),
        "--out".as_ref(),
        file.as_os_str(),
    ]);
    for other in others {
        run_hub(&[
            "cluster-join".as_ref(),
            "--data".as_ref(),
            other.as_os_str(),
            "--secrets".as_ref(),
            file.as_os_str(),
        ]);
    }
}

/// `hub ARGS` of this build, to its end: its standard output; fails the test on an error.
pub fn run_hub(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(workspace_bin("hub"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hub {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
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

/// What a hub's log says once it is ready: its `hub ready` line, and an embedded broker's
/// MQTT 5 port from the line before.
pub struct Ready {
    pub http: SocketAddr,
    pub broker_port: u16,
    pub mqtt5_port: Option<u16>,
}

fn log_length(log: &Path) -> u64 {
    std::fs::metadata(log).map_or(0, |m| m.len())
}

/// The `hub ready` line written to `log` after byte `from`, if any yet.
pub fn ready_line(log: &Path, from: u64) -> Option<Ready> {
    use std::io::{Read, Seek};
    let mut file = std::fs::File::open(log).ok()?;
    file.seek(std::io::SeekFrom::Start(from)).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    let field = |line: &str, name: &str| {
        line.split_whitespace()
            .find_map(|word| word.strip_prefix(name))
            .map(str::to_owned)
    };
    let port = |addr: String| addr.rsplit_once(':').and_then(|(_, p)| p.parse().ok());
    let ready = text.lines().find(|l| l.contains("hub ready"))?;
    let mqtt5 = text
        .lines()
        .find(|l| l.contains("embedded MQTT broker listening"))
        .and_then(|l| field(l, "mqtt5="));
    Some(Ready {
        http: field(ready, "http=")?.parse().ok()?,
        broker_port: port(field(ready, "broker=")?)?,
        mqtt5_port: mqtt5.and_then(port),
    })
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
        Broker::Cluster {
            nats,
            gateways,
            name,
        } => command
            .args(["--cluster", nats])
            .args(["--broker", gateways])
            .args(["--hub-name", name]),
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
