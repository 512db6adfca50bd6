//! A Mosquitto broker as `deploy/mosquitto/` ships it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::super::*;

/// A Mosquitto broker with the configuration shipped in `deploy/` (no anonymous clients,
/// the shipped ACL), on `port`; its users come from the hub with the shipped `users.sh`.
pub struct Mosquitto {
    child: Child,
    config: PathBuf,
    log: PathBuf,
    port: u16,
    tls_port: Option<u16>,
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
        let scheme = match hub.web.ca() {
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

    /// Mosquitto with the shipped configuration, its plain (loopback) listener on a port
    /// of its own ([`Mosquitto::port`]) and no TLS listener.
    pub fn start(dir: &Path) -> Mosquitto {
        Mosquitto::start_with(dir, None)
    }

    /// Mosquitto with the shipped configuration on ports of its own, the TLS listener too
    /// where `tls` names the hub's data directory: a certificate `hub broker-cert` issues
    /// from its hall CA. Mosquitto cannot be told to take any free port and say which, so
    /// a port is chosen here and bound a moment later: one that another process took in
    /// between makes it exit, and it is started again on new ports.
    pub fn start_with(dir: &Path, tls: Option<&Path>) -> Mosquitto {
        const ATTEMPTS: usize = 4;
        for attempt in 1..=ATTEMPTS {
            let ports = super::nats::distinct_ports(2);
            let tls = tls.map(|data| (ports[1], data));
            match Mosquitto::try_start(dir, ports[0], tls) {
                Ok(mosquitto) => return mosquitto,
                Err(why) if attempt < ATTEMPTS => {
                    eprintln!("Mosquitto, attempt {attempt}: {why}; again on new ports");
                }
                Err(why) => panic!("{why}"),
            }
        }
        unreachable!("the last attempt panics")
    }

    /// Mosquitto with the shipped configuration on `port`, which a hub was already given:
    /// a broker that comes up after the hub.
    pub fn start_on(dir: &Path, port: u16) -> Mosquitto {
        Mosquitto::try_start(dir, port, None).unwrap_or_else(|why| panic!("{why}"))
    }

    /// The port of its plain listener.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of its TLS listener, where it has one.
    pub fn tls_port(&self) -> Option<u16> {
        self.tls_port
    }

    fn try_start(dir: &Path, port: u16, tls: Option<(u16, &Path)>) -> Result<Mosquitto, String> {
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
            tls_port: tls.map(|(tls_port, _)| tls_port),
            users,
        };
        mosquitto.wait_listening()?;
        Ok(mosquitto)
    }

    /// Waits until this Mosquitto listens on its ports: its log says it opened them (so
    /// what answers there is this process, not one that took the port first) and a
    /// connection is taken. Its exit or 10 s without that is an error with the log's end.
    fn wait_listening(&mut self) -> Result<(), String> {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let ports: Vec<u16> = std::iter::once(self.port).chain(self.tls_port).collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "mosquitto exited with {status}: {}",
                    tail(&self.log)
                ));
            }
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let opened = ports.iter().all(|port| {
                log.lines()
                    .rev()
                    .take_while(|l| !l.contains("starting"))
                    .any(|l| l.contains(&format!("listen socket on port {port}.")))
            });
            if opened && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "mosquitto not listening on {ports:?} within 10 s: {}",
                    tail(&self.log)
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, then start again on the same port and configuration.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn_mosquitto(&self.config, &self.log);
        self.wait_listening().unwrap_or_else(|why| panic!("{why}"));
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
