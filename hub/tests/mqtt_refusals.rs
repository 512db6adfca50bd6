//! A standard MQTT client on the hub's embedded broker, as a pager user or a technician
//! types it: Debian's `mosquitto_sub`. A wrong password, another's client id and MQTT 5 are
//! each refused with a CONNACK the client prints, and it stops (no silent retry loop, as
//! before: the connection was dropped without a word). The right login with one allowed and
//! one denied filter gets a SUBACK answering each filter by itself (MQTT 3.1.1 §3.9.3) and
//! the alerts the allowed one matches.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::board::{Incident, TestBoard};
use support::{Broker, Hub};

const CONFIG: &str = r#"
[event]
time_control = "900+10"

[[arbiters]]
name = "IA Eva"
chief = true
"#;

/// `mosquitto_sub` with `args` on the hub's broker (on `port`), its stdout and stderr merged
/// line by line into a channel.
struct Sub {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Sub {
    fn start(hub: &Hub, args: &[&str]) -> Sub {
        Sub::start_on(hub.broker_port(), args)
    }

    fn start_on(port: u16, args: &[&str]) -> Sub {
        let port = port.to_string();
        // Line by line through the pipe as on a terminal (stdio buffers a pipe whole).
        let mut child = Command::new("stdbuf")
            .args(["-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", &port])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mosquitto_sub (Debian's mosquitto-clients; .ci/run installs it)");
        let (tx, lines) = mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        Sub {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits up to `within` for a line `wanted` picks.
    fn wait_for(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        if let Some(line) = self.seen.iter().find(|l| wanted(l)) {
            return line.clone();
        }
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!(
            "no such line within {within:?}; mosquitto_sub printed {:#?}",
            self.seen
        );
    }

    /// Waits for the client to end by itself; its exit code.
    fn ended(&mut self, within: Duration) -> i32 {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
                    self.seen.push(line);
                }
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "mosquitto_sub still running (retrying?) after {within:?}: {:#?}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Sub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mosquitto_sub_reads_every_refusal_and_gets_what_its_allowed_filters_match() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(dir.path(), CONFIG);
    let key = hub.enrol_arbiter_in("IA Eva", &[]);
    let field = |name: &str| key[name].as_str().unwrap().to_owned();
    let (user, password, prefix) = (
        field("mqtt_user"),
        field("mqtt_password"),
        field("mqtt_client_id_prefix"),
    );
    assert!(
        prefix.starts_with("zeitnot-pager-") && prefix.contains(&user),
        "{prefix}"
    );
    let client_id = format!("{prefix}laptop");
    let alerts = "zeitnot/default/alerts/+";

    // Each refusal is printed and ends the client, within a second or two.
    for (what, args, printed) in [
        (
            "a wrong password",
            vec![
                "-u",
                &user,
                "-P",
                "not-the-password",
                "-i",
                &client_id,
                "-t",
                alerts,
            ],
            "Connection Refused: bad user name or password",
        ),
        (
            "another's client id",
            vec![
                "-u",
                &user,
                "-P",
                &password,
                "-i",
                "zeitnot-node-default-1-x",
                "-t",
                alerts,
            ],
            "Connection Refused: not authorised",
        ),
        (
            "no login at all",
            vec!["-i", &client_id, "-t", alerts],
            "Connection Refused: not authorised",
        ),
        (
            "MQTT 5",
            vec![
                "-V", "mqttv5", "-u", &user, "-P", &password, "-i", &client_id, "-t", alerts,
            ],
            "Unsupported Protocol Version",
        ),
    ] {
        let started = Instant::now();
        let mut sub = Sub::start(&hub, &args);
        let line = sub.wait_for(Duration::from_secs(5), |l| l.contains(printed));
        let code = sub.ended(Duration::from_secs(5));
        println!(
            "{what}: \"{line}\", exit {code}, after {} ms",
            started.elapsed().as_millis()
        );
        assert_ne!(code, 0, "{what}");
    }

    // The right login: the alerts filter granted, a board's uplink refused, each by itself.
    let login = Login {
        user: &user,
        password: &password,
        client_id: &client_id,
    };
    granted_alone_and_heard(&hub, dir.path(), port, port, &[], login).await;
}

/// `--mqtt5`: a second listener for MQTT 5 clients, with the same logins and topics, its
/// refusals in MQTT 5's reason codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mqtt5_listener_refuses_in_mqtt5_terms_and_serves_a_pager() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("event.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let hub = Hub::start_with(
        &dir.path().join("data"),
        Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
        vec![
            "--config".into(),
            config.display().to_string(),
            "--mqtt5".into(),
            "127.0.0.1:0".into(),
        ],
    );
    let (port, port5) = (hub.broker_port(), hub.mqtt5_port.expect("an MQTT 5 port"));
    let key = hub.enrol_arbiter_in("IA Eva", &[]);
    let field = |name: &str| key[name].as_str().unwrap().to_owned();
    let (user, password) = (field("mqtt_user"), field("mqtt_password"));
    let client_id = format!("{}phone", field("mqtt_client_id_prefix"));
    let alerts = "zeitnot/default/alerts/+";
    for (args, printed) in [
        (
            vec!["-u", &user, "-P", "wrong", "-i", &client_id, "-t", alerts],
            "Bad User Name or Password",
        ),
        (
            vec![
                "-u",
                &user,
                "-P",
                &password,
                "-i",
                "someone-else",
                "-t",
                alerts,
            ],
            "Not authorized",
        ),
    ] {
        let mut sub = Sub::start_on(port5, &[&["-V", "mqttv5"], &args[..]].concat());
        let line = sub.wait_for(Duration::from_secs(5), |l| {
            l.to_ascii_lowercase()
                .contains(&printed.to_ascii_lowercase())
        });
        println!("MQTT 5: \"{line}\"");
        assert_ne!(sub.ended(Duration::from_secs(5)), 0);
    }
    // Clients of other versions on either listener are told so in their own CONNACK and
    // stop (issue 68): 3.1.1 and 3.1 on the MQTT 5 listener, 3.1 on the 3.1.1 one.
    for (listen, version) in [(port5, "mqttv311"), (port5, "mqttv31"), (port, "mqttv31")] {
        let mut sub = Sub::start_on(
            listen,
            &["-V", version, "-u", &user, "-P", &password, "-t", alerts],
        );
        let line = sub.wait_for(Duration::from_secs(5), |l| {
            l.contains("unacceptable protocol version")
        });
        println!("{version} on port {listen}: \"{line}\"");
        assert_ne!(sub.ended(Duration::from_secs(5)), 0);
    }
    // The right login: the alerts granted, a board's uplink refused, each by itself.
    let login = Login {
        user: &user,
        password: &password,
        client_id: &client_id,
    };
    granted_alone_and_heard(&hub, dir.path(), port, port5, &["-V", "mqttv5"], login).await;
}

/// A pager's MQTT login, as its key file gives it.
struct Login<'a> {
    user: &'a str,
    password: &'a str,
    client_id: &'a str,
}

/// `mosquitto_sub` (with `version`'s flags) on `listen` with the right login, subscribing
/// the alerts and a board's uplink: the SUBACK grants the first and refuses the second, each
/// by itself, and a flag fall on board 1 (its node on the broker's `port`) reaches it,
/// nothing of the uplink.
async fn granted_alone_and_heard(
    hub: &Hub,
    dir: &std::path::Path,
    port: u16,
    listen: u16,
    version: &[&str],
    login: Login<'_>,
) {
    let filters = [
        "-d",
        "-v",
        "-u",
        login.user,
        "-P",
        login.password,
        "-i",
        login.client_id,
        "-t",
        "zeitnot/default/alerts/+",
        "-t",
        "zeitnot/default/board/1/up",
    ];
    let mut sub = Sub::start_on(listen, &[version, &filters[..]].concat());
    let granted = sub.wait_for(Duration::from_secs(5), |l| {
        l.starts_with("Subscribed (mid:")
    });
    assert!(granted.ends_with(": 0, 128"), "{granted}");
    let enrolled = hub.enrol("board-1", 1, dir);
    let session = support::board::node_session(port, &enrolled).await;
    let mut board = TestBoard::start(1, session, &enrolled).await;
    Incident::FlagFall.cause(&mut board).await;
    let line = sub.wait_for(Duration::from_secs(5), |l| l.contains("\"flag_fall\""));
    let (topic, payload) = line.split_once(' ').unwrap();
    assert!(topic.starts_with("zeitnot/default/alerts/"), "{topic}");
    let alert: Value = serde_json::from_str(payload).unwrap();
    assert_eq!(alert["board"], 1, "{alert}");
    assert!(
        !sub.seen
            .iter()
            .any(|l| l.starts_with("zeitnot/default/board/")),
        "nothing of the board's own uplink: {:#?}",
        sub.seen
    );
}
