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

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use support::process::nats::{nats_server_bin, port};

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
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_hub"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let users_file = dir.path().join("nats-users.conf");
    let out = Command::new("sh")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/nats/users.sh"
        ))
        .arg(dir.path().join("data"))
        .arg(&users_file)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let users = std::fs::read_to_string(&users_file).unwrap();
    assert!(
        !users.contains("[]"),
        "no empty list: NATS reads it as no restriction"
    );

    let (client, monitor, mqtt) = (port(), port(), port());
    let conf = dir.path().join("nats.conf");
    std::fs::write(&conf, shipped_conf(dir.path(), client, monitor, mqtt)).unwrap();
    let log = std::fs::File::create(dir.path().join("nats.log")).unwrap();
    let _server = Server(
        Command::new(nats_server_bin())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
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

    // The legitimate path: the delayed broadcast reaches the public login.
    let mut broadcast = public
        .subscribe("zeitnot.default.broadcast.>")
        .await
        .unwrap();
    let mut journal = public.subscribe("zeitnot.journal.>").await.unwrap();
    public.flush().await.unwrap();
    hub.publish("zeitnot.default.broadcast.round.1", "1. e4".into())
        .await
        .unwrap();
    js.publish("zeitnot.journal.default", "the next record".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), broadcast.next())
        .await
        .expect("the broadcast reaches the public login")
        .unwrap();
    assert_eq!(&got.payload[..], b"1. e4");
    let leaked = tokio::time::timeout(Duration::from_millis(500), journal.next()).await;
    assert!(
        !matches!(leaked, Ok(Some(_))),
        "the public login read a journal record as it was appended"
    );
}
