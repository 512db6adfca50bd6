//! The shipped NATS logins (`deploy/nats/users.sh`) on the shipped server configuration
//! (`deploy/nats/nats.conf`, its include as shipped), tried with NATS's own client as a
//! stranger would: the `public` login (whose password is public) reads no journal record
//! and writes none, and reaches neither JetStream's API nor the journal's subject; the
//! hub's MQTT login cannot touch the journal's subject either; the legitimate paths (the
//! broadcast to `public`, the cluster's login on the journal) still work.
//!
//! One server here: the cluster block (routes), the MQTT gateway's TLS and its replicas
//! are the three machines' concern; addresses are moved to loopback, paths to a temporary
//! directory, nothing else changed.

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use support::process::nats::{distinct_ports, nats_server_bin, port_quads};

/// The shipped configuration with its addresses on loopback and its paths in `dir`, for
/// one server (no routes, MQTT in the clear, its sessions on the one server).
fn shipped_conf(dir: &std::path::Path, client: u16, monitor: u16, mqtt: u16) -> String {
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/nats/nats.conf"
    ))
    .unwrap();
    let mut out = String::new();
    let mut skipping = 0;
    for line in shipped.lines() {
        let trimmed = line.trim();
        if skipping > 0 || trimmed.starts_with("cluster {") || trimmed.starts_with("tls {") {
            skipping += trimmed.matches('{').count();
            skipping -= trimmed.matches('}').count();
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.replace("$ZEITNOT_NATS_NAME", "a")
        .replace("0.0.0.0:4222", &format!("127.0.0.1:{client}"))
        .replace("127.0.0.1:8222", &format!("127.0.0.1:{monitor}"))
        .replace("0.0.0.0:8883", &format!("127.0.0.1:{mqtt}"))
        .replace("stream_replicas: 3", "stream_replicas: 1")
        .replace(
            "/var/lib/zeitnot-nats",
            &dir.join("store").display().to_string(),
        )
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The shipped configuration's server alone in `dir` (`nats.conf`, `nats.log`, its store),
/// on loopback: the server, its client and MQTT ports.
fn start_single(dir: &std::path::Path) -> (Server, u16, u16) {
    let [client, monitor, mqtt] = distinct_ports(3)[..] else {
        unreachable!("three ports")
    };
    let conf = dir.join("nats.conf");
    std::fs::write(&conf, shipped_conf(dir, client, monitor, mqtt)).unwrap();
    let log = std::fs::File::create(dir.join("nats.log")).unwrap();
    let server = Server(
        Command::new(nats_server_bin())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    (server, client, mqtt)
}

/// `deploy/nats/users.sh DATA FILE`: the logins from the hall's data directory `data`,
/// with this build's `hub` first on the PATH.
fn users_sh(data: &std::path::Path, file: &std::path::Path) {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_hub"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let out = Command::new("sh")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/nats/users.sh"
        ))
        .arg(data)
        .arg(file)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The password users.sh wrote for `user`.
fn password(users: &str, user: &str) -> String {
    let start = format!("{{ user: \"{user}\", password: \"");
    let from = users.find(&start).unwrap() + start.len();
    users[from..].split('"').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_public_login_reads_and_writes_no_journal() {
    let dir = tempfile::tempdir().unwrap();
    // users.sh from the first hub's data directory, as deploy/README.md says.
    let users_file = dir.path().join("nats-users.conf");
    users_sh(&dir.path().join("data"), &users_file);
    let users = std::fs::read_to_string(&users_file).unwrap();
    assert!(
        !users.contains("[]"),
        "no empty list: NATS reads it as no restriction"
    );

    let (_server, client, _) = start_single(dir.path());
    let url = format!("nats://127.0.0.1:{client}");
    let connect = |user: &'static str, password: String| {
        let url = url.clone();
        async move {
            for _ in 0..100 {
                let options = async_nats::ConnectOptions::with_user_and_password(
                    user.into(),
                    password.clone(),
                )
                .request_timeout(Some(Duration::from_secs(2)));
                if let Ok(client) = options.connect(&url).await {
                    return client;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("{user} cannot log in: see nats.log");
        }
    };

    // The hubs' login makes the journal and appends the hall's first record.
    let cluster = connect("zeitnot-cluster", password(&users, "zeitnot-cluster")).await;
    let js = async_nats::jetstream::new(cluster.clone());
    let mut stream = js
        .create_stream(async_nats::jetstream::stream::Config {
            name: "ZEITNOT_JOURNAL_default".into(),
            subjects: vec!["zeitnot.journal.default".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    js.publish("zeitnot.journal.default", "the hall's secrets".into())
        .await
        .unwrap()
        .await
        .unwrap();

    // The stranger with the public login: JetStream's API answers nothing, the journal's
    // subject takes nothing.
    let public = connect("public", "public".into()).await;
    let public_js = async_nats::jetstream::new(public.clone());
    assert!(
        public_js
            .get_stream("ZEITNOT_JOURNAL_default")
            .await
            .is_err(),
        "the public login reached JetStream's API"
    );
    let direct = public
        .request(
            "$JS.API.DIRECT.GET.ZEITNOT_JOURNAL_default.zeitnot.journal.default",
            "".into(),
        )
        .await;
    assert!(direct.is_err(), "the public login read a record directly");
    // Nor can it have the journal delivered where it may read (a consumer pushing to a
    // broadcast subject), answers included.
    let mut stolen = public
        .subscribe("zeitnot.default.broadcast.stolen")
        .await
        .unwrap();
    let create = r#"{"stream_name":"ZEITNOT_JOURNAL_default","config":{"deliver_subject":"zeitnot.default.broadcast.stolen","deliver_policy":"all","ack_policy":"none"}}"#;
    let _ = public
        .publish_with_reply(
            "$JS.API.CONSUMER.CREATE.ZEITNOT_JOURNAL_default",
            "zeitnot.default.broadcast.stolen",
            create.into(),
        )
        .await;
    public.flush().await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(1), stolen.next()).await;
    assert!(
        !matches!(read, Ok(Some(_))),
        "the public login made JetStream deliver to it: {read:?}"
    );
    let _ = public
        .publish("zeitnot.journal.default", "a stranger's record".into())
        .await;
    public.flush().await.unwrap();
    // The hub's own MQTT login (the hall's topics) cannot append either.
    let hub = connect("zeitnot-hub", password(&users, "zeitnot-hub")).await;
    let _ = hub
        .publish(
            "zeitnot.journal.default",
            "the hub's MQTT login's record".into(),
        )
        .await;
    hub.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, 1, "only the cluster's login appends");
    // Nor can the cluster's own login take the journal back (issue 68): delete the stream
    // to refill it with saved records, purge it, change it or restore a snapshot over it.
    assert!(
        js.delete_stream("ZEITNOT_JOURNAL_default").await.is_err(),
        "the cluster's login deleted the journal"
    );
    assert!(
        stream.purge().await.is_err(),
        "the cluster's login purged the journal"
    );
    for api in ["UPDATE", "RESTORE", "MSG.DELETE"] {
        let asked = cluster
            .request(
                format!("$JS.API.STREAM.{api}.ZEITNOT_JOURNAL_default"),
                "{}".into(),
            )
            .await;
        assert!(asked.is_err(), "{api} answered: {asked:?}");
    }
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, 1, "the journal stands");

    // The legitimate path: the delayed broadcast reaches the public login.
    let mut broadcast = public
        .subscribe("zeitnot.default.broadcast.>")
        .await
        .unwrap();
    let mut journal = public.subscribe("zeitnot.journal.>").await.unwrap();
    // async-nats's flush only empties the write buffer (no PING), so the server may take the
    // hub's message before the public login's SUB: publish until one arrives.
    let mut got = None;
    for _ in 0..50 {
        hub.publish("zeitnot.default.broadcast.round.1", "1. e4".into())
            .await
            .unwrap();
        hub.flush().await.unwrap();
        if let Ok(message) =
            tokio::time::timeout(Duration::from_millis(200), broadcast.next()).await
        {
            got = message;
            break;
        }
    }
    let got = got.expect("the broadcast reaches the public login");
    assert_eq!(&got.payload[..], b"1. e4");
    // Its subscriptions are in place now: a record appended must not reach it.
    js.publish("zeitnot.journal.default", "the next record".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let leaked = tokio::time::timeout(Duration::from_millis(500), journal.next()).await;
    assert!(
        !matches!(leaked, Ok(Some(_))),
        "the public login read a journal record as it was appended"
    );
}

/// One server of the shipped three on its own loopback address (127.0.0.N), its ports
/// ephemeral, its files in `dir`; `None` from the monitor while it is not up.
struct Shipped {
    ip: String,
    ports: [u16; 4],
    log: std::path::PathBuf,
    _server: Server,
}

impl Shipped {
    /// Waits until its monitoring port answers: a server started on a busy machine may take
    /// a while; one that never answers fails the test with its log.
    fn wait_running(&self) {
        if let Err(log) = self.running() {
            panic!("the server does not run: {log}");
        }
    }

    /// Waits until its monitoring port answers; its log if it stopped (a fatal error, such
    /// as a port another test's process took meanwhile) or never answered within 30 s.
    fn running(&self) -> Result<(), String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while self.routez().is_none() {
            let log = self.log_text();
            if log.contains("[FTL]") || std::time::Instant::now() > deadline {
                return Err(log);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// Its log, named, for a failure's message.
    fn log_text(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("{}:\n{text}", self.log.display())
    }

    fn routez(&self) -> Option<serde_json::Value> {
        use std::io::{Read, Write};
        let mut tcp = std::net::TcpStream::connect((self.ip.as_str(), self.ports[3])).ok()?;
        tcp.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(tcp, "GET /routez HTTP/1.0\r\n\r\n").ok()?;
        let mut response = String::new();
        tcp.read_to_string(&mut response).ok()?;
        serde_json::from_str(response.split_once("\r\n\r\n")?.1).ok()
    }

    /// The names of the servers it has routes to.
    fn routed_to(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .routez()
            .and_then(|z| z["routes"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|r| r["remote_name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// `name`'s server from the shipped `nats.conf` and an environment as `nats.env` gives it:
/// its addresses on 127.0.0.`n` with ephemeral ports, `/etc/zeitnot/` and its store in
/// `dir`, routes to `routes` with `route_password`.
fn start_shipped(
    dir: &std::path::Path,
    name: &str,
    n: u8,
    routes: &[(String, u16)],
    route_password: &str,
    ports: [u16; 4],
) -> Shipped {
    let ip = format!("127.0.0.{n}");
    let [client, route, mqtt, monitor] = ports;
    let etc = dir.join("etc");
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/nats/nats.conf"
    ))
    .unwrap();
    let conf = shipped
        .replace("0.0.0.0:4222", &format!("{ip}:{client}"))
        .replace("0.0.0.0:6222", &format!("{ip}:{route}"))
        .replace("0.0.0.0:8883", &format!("{ip}:{mqtt}"))
        .replace("127.0.0.1:8222", &format!("{ip}:{monitor}"))
        .replace("/etc/zeitnot/", &format!("{}/", etc.display()))
        .replace(
            "/var/lib/zeitnot-nats",
            &dir.join(format!("store-{name}")).display().to_string(),
        );
    let conf_file = etc.join(format!("nats-{name}.conf"));
    std::fs::write(&conf_file, conf).unwrap();
    let list: Vec<String> = routes
        .iter()
        .map(|(ip, port)| format!("nats-route://zeitnot-route:{route_password}@{ip}:{port}"))
        .collect();
    let log_path = dir.join(format!("nats-{name}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Server(
        Command::new(nats_server_bin())
            .arg("-c")
            .arg(&conf_file)
            .env("ZEITNOT_NATS_NAME", name)
            .env("ZEITNOT_NATS_ROUTE_PASSWORD", route_password)
            .env("ZEITNOT_NATS_ROUTES", format!("[{}]", list.join(", ")))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    Shipped {
        ip,
        ports,
        log: log_path,
        _server: server,
    }
}

/// `hub broker-cert` from the hall's data directory `data`, for `names`, into `etc`.
fn broker_cert(data: &std::path::Path, etc: &std::path::Path, names: &[&str]) {
    let (cert, key) = (etc.join("nats-cert.pem"), etc.join("nats-key.pem"));
    let mut args: Vec<&std::ffi::OsStr> =
        vec!["broker-cert".as_ref(), "--data".as_ref(), data.as_os_str()];
    for name in names {
        args.push("--name".as_ref());
        args.push(std::ffi::OsStr::new(name));
    }
    args.extend([
        "--cert".as_ref(),
        cert.as_os_str(),
        "--key".as_ref(),
        key.as_os_str(),
    ]);
    support::run_hub(&args);
    std::fs::copy(data.join("hall-ca.pem"), etc.join("hall-ca.pem")).unwrap();
}

/// The hall's three servers `a`, `b`, `c` on 127.0.0.1-3 from the shipped configuration,
/// each with routes to all three; once `a` has routes to the other two, the servers. Not
/// routed within 30 s: the three servers' logs.
fn start_hall_cluster(hall: &std::path::Path, password: &str) -> Result<Vec<Shipped>, String> {
    let ports = port_quads(3);
    let routes: Vec<(String, u16)> = (0..3)
        .map(|i| (format!("127.0.0.{}", i + 1), ports[i][1]))
        .collect();
    let servers: Vec<Shipped> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, name)| start_shipped(hall, name, i as u8 + 1, &routes, password, ports[i]))
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while servers[0].routed_to() != ["b", "c"] {
        if std::time::Instant::now() > deadline {
            let logs: Vec<String> = servers.iter().map(Shipped::log_text).collect();
            return Err(format!(
                "a has routes to {:?}\n{}",
                servers[0].routed_to(),
                logs.join("\n")
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(servers)
}

/// The shipped cluster block: the three servers route to each other over mutual TLS with
/// the hall CA and the route login; a stranger's server without the hall's certificate, or
/// with it but without the password, joins no route.
#[test]
fn only_the_halls_servers_join_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let hall = dir.path().join("hall");
    let etc = hall.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    let data = hall.join("data");
    broker_cert(&data, &etc, &["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
    // users.sh's logins, as nats.conf includes them.
    users_sh(&data, &etc.join("nats-users.conf"));

    let password = "a-route-password-only-the-hall-knows";
    let servers = match start_hall_cluster(&hall, password) {
        Ok(cluster) => cluster,
        // A server that lost its port to another test's process, or a machine busy enough to
        // stall a handshake: said in the output, and the hall started once more on fresh
        // ports, which must route.
        Err(logs) => {
            eprintln!("the hall's servers did not route at the first start; their logs:\n{logs}");
            start_hall_cluster(&hall, password).unwrap_or_else(|logs| {
                panic!("the hall's servers never routed to each other:\n{logs}")
            })
        }
    };

    // A stranger's servers: one with its own CA's certificate and the right password, one
    // with the hall's certificate (copied off a machine) and a guessed password.
    let own = dir.path().join("stranger-own-ca");
    std::fs::create_dir_all(own.join("etc")).unwrap();
    broker_cert(&own.join("data"), &own.join("etc"), &["127.0.0.4"]);
    std::fs::copy(etc.join("nats-users.conf"), own.join("etc/nats-users.conf")).unwrap();
    let copied = dir.path().join("stranger-copied-cert");
    std::fs::create_dir_all(copied.join("etc")).unwrap();
    for file in [
        "nats-cert.pem",
        "nats-key.pem",
        "hall-ca.pem",
        "nats-users.conf",
    ] {
        std::fs::copy(etc.join(file), copied.join("etc").join(file)).unwrap();
    }
    let to_a = [(servers[0].ip.clone(), servers[0].ports[1])];
    // A server that lost its port to another test's process between the port's choice and
    // its start: said in the output, and started once more on fresh ports, which must run.
    let stranger = |dir: &std::path::Path, name: &str, n: u8, password: &str| {
        let server = start_shipped(dir, name, n, &to_a, password, port_quads(1)[0]);
        if let Err(log) = server.running() {
            eprintln!("{name} did not run at the first start; its log:\n{log}");
            drop(server);
            let server = start_shipped(dir, name, n, &to_a, password, port_quads(1)[0]);
            server.wait_running();
            return server;
        }
        server
    };
    let own_ca = stranger(&own, "rogue-ca", 4, password);
    let no_password = stranger(&copied, "rogue-login", 5, "a-guess");
    // Time for their routes to be tried and refused.
    std::thread::sleep(Duration::from_secs(5));
    for rogue in [&own_ca, &no_password] {
        assert!(rogue.routez().is_some(), "the stranger's server runs");
        assert_eq!(rogue.routed_to(), Vec::<String>::new(), "a stranger joined");
    }
    assert_eq!(
        servers[0].routed_to(),
        ["b", "c"],
        "only the hall's servers"
    );

    // The client port speaks TLS with the hall's certificate: the hubs' login crosses the
    // network encrypted. A client pinning the hall CA gets in; one that does not is refused.
    let users = std::fs::read_to_string(etc.join("nats-users.conf")).unwrap();
    let cluster_password = self::password(&users, "zeitnot-cluster");
    let client_port = servers[0].ports[0];
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let login = || {
            async_nats::ConnectOptions::with_user_and_password(
                "zeitnot-cluster".into(),
                cluster_password.clone(),
            )
            .connection_timeout(Duration::from_secs(3))
        };
        let pinned = login()
            .require_tls(true)
            .add_root_certificates(etc.join("hall-ca.pem"))
            .connect(format!("tls://127.0.0.1:{client_port}"))
            .await;
        assert!(pinned.is_ok(), "the hall CA's client: {:?}", pinned.err());
        let unpinned = login()
            .connect(format!("nats://127.0.0.1:{client_port}"))
            .await;
        assert!(unpinned.is_err(), "a client without the hall CA got in");
    });
}

/// An MQTT session on the gateway with `user`'s login, connected, subscribed to `filters`.
async fn mqtt_session(
    port: u16,
    client_id: String,
    login: (String, String),
    filters: &[&str],
) -> (
    rumqttc::AsyncClient,
    tokio::sync::mpsc::Receiver<link::LinkEvent>,
) {
    let mut options = link::LinkOptions::new(client_id);
    options.credentials = Some(login);
    options.subscribe = filters.iter().map(|f| (*f).to_owned()).collect();
    let (client, mut events) = link::start(&link::BrokerAddr::plain("127.0.0.1", port), options);
    tokio::time::timeout(Duration::from_secs(20), async {
        while !matches!(events.recv().await, Some(link::LinkEvent::Connected)) {}
    })
    .await
    .expect("the login connects to the MQTT gateway");
    (client, events)
}

/// The topics `events` carried within `within`.
async fn topics_heard(
    events: &mut tokio::sync::mpsc::Receiver<link::LinkEvent>,
    within: Duration,
) -> Vec<String> {
    let mut topics = Vec::new();
    let _ = tokio::time::timeout(within, async {
        while let Some(event) = events.recv().await {
            if let link::LinkEvent::Message { topic, .. } = event {
                topics.push(topic);
            }
        }
    })
    .await;
    topics
}

/// The legitimate paths on the shipped configuration: a node enrolled with `hub enrol` and
/// a pager with `hub enrol-arbiter`, their logins written by `users.sh`, connect to the MQTT
/// gateway; the node's uplink reaches the hub's login and another board's does not; the
/// pager hears the alerts.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_and_a_pager_connect_with_their_logins_and_reach_only_their_topics() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let enrolled: serde_json::Value = serde_json::from_str(&support::run_hub(&[
        "enrol".as_ref(),
        "--data".as_ref(),
        data.as_os_str(),
        "--hardware".as_ref(),
        "dgt-7".as_ref(),
        "--board".as_ref(),
        "7".as_ref(),
    ]))
    .unwrap();
    let key = protocol::seal::NodeKey::parse(enrolled["key"].as_str().unwrap()).unwrap();
    let pager: serde_json::Value = serde_json::from_str(&support::run_hub(&[
        "enrol-arbiter".as_ref(),
        "--data".as_ref(),
        data.as_os_str(),
        "--arbiter".as_ref(),
        "IA Berg".as_ref(),
    ]))
    .unwrap();
    let users_file = dir.path().join("nats-users.conf");
    users_sh(&data, &users_file);
    let users = std::fs::read_to_string(&users_file).unwrap();

    let (_server, _, mqtt) = start_single(dir.path());

    let hub_login = ("zeitnot-hub".to_owned(), password(&users, "zeitnot-hub"));
    let (hub_client, mut hub_heard) = mqtt_session(
        mqtt,
        "zeitnot-hub-test".into(),
        hub_login,
        &["zeitnot/default/board/+/up"],
    )
    .await;
    let board = protocol::BoardNo(7);
    let node_login = (
        protocol::identity::node_user(board),
        protocol::identity::node_password(&key),
    );
    let node_id = format!(
        "{}1",
        protocol::identity::node_client_prefix("default", board)
    );
    let (node, _node_events) = mqtt_session(mqtt, node_id, node_login, &[]).await;
    use rumqttc::QoS;
    node.publish(
        "zeitnot/default/board/8/up",
        QoS::AtMostOnce,
        false,
        "not mine",
    )
    .await
    .unwrap();
    node.publish(
        "zeitnot/default/board/7/up",
        QoS::AtLeastOnce,
        false,
        "mine",
    )
    .await
    .unwrap();
    let heard = topics_heard(&mut hub_heard, Duration::from_secs(3)).await;
    assert!(
        heard.contains(&"zeitnot/default/board/7/up".to_owned()),
        "the node's own uplink reaches the hub: {heard:?}"
    );
    assert!(
        !heard.contains(&"zeitnot/default/board/8/up".to_owned()),
        "the node wrote another board's uplink: {heard:?}"
    );

    let user = pager["mqtt_user"].as_str().unwrap().to_owned();
    let pager_id = format!(
        "{}1",
        protocol::identity::pager_client_prefix("default", &user)
    );
    let pager_login = (user, pager["mqtt_password"].as_str().unwrap().to_owned());
    // The filters `hub pager --zone A` subscribes to.
    let filters = [
        protocol::topic::alerts("default", "A"),
        protocol::topic::open_alerts("default", "A"),
        protocol::topic::hub_status("default"),
    ];
    let filters: Vec<&str> = filters.iter().map(String::as_str).collect();
    let (_pager, mut pager_heard) =
        mqtt_session(mqtt, pager_id.clone(), pager_login.clone(), &filters).await;
    // Another pager of the same arbiter with every zone's alerts as one filter (`alerts/#`,
    // as the docs and `hub demo` print it): granted on the gateway too.
    let every_zone = format!("{pager_id}-all");
    let (_all, mut all_heard) =
        mqtt_session(mqtt, every_zone, pager_login, &["zeitnot/default/alerts/#"]).await;
    let mut heard = Vec::new();
    let mut heard_all = Vec::new();
    for _ in 0..20 {
        hub_client
            .publish("zeitnot/default/alerts/A", QoS::AtLeastOnce, false, "{}")
            .await
            .unwrap();
        heard.extend(topics_heard(&mut pager_heard, Duration::from_millis(500)).await);
        heard_all.extend(topics_heard(&mut all_heard, Duration::from_millis(100)).await);
        if !heard.is_empty() && !heard_all.is_empty() {
            break;
        }
    }
    let log = || std::fs::read_to_string(dir.path().join("nats.log")).unwrap_or_default();
    assert!(
        heard.contains(&"zeitnot/default/alerts/A".to_owned()),
        "the pager hears the alerts: {heard:?}; nats.log: {}",
        log()
    );
    assert!(
        heard_all.contains(&"zeitnot/default/alerts/A".to_owned()),
        "alerts/# hears the alerts: {heard_all:?}; nats.log: {}",
        log()
    );
}
