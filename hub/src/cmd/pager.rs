//! `hub pager`: an arbiter's pager in a terminal, over MQTT like any other pager.
//!
//! It subscribes to the zone's alert changes and its retained list of open alerts (so it
//! has the backlog as soon as it connects), shows the open alerts the most urgent first,
//! rings the terminal's bell on a new one, and sends the arbiter's acknowledgements and
//! resolutions to the hub. It keeps working through broker restarts (the link reconnects).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use link::{self, Brokers, LinkEvent, LinkOptions};
use protocol::topic;
use rumqttc::QoS;
use serde::Deserialize;
use tokio::io::AsyncBufReadExt;

use crate::core::alerts::{AlertAction, AlertCommand, AlertState, Language, Severity};
use crate::core::ids::AlertId;
use crate::core::names::printable;

pub struct PagerConfig {
    /// A zone, or `all` (the chief arbiter).
    pub zone: String,
    /// The broker, or a cluster's nodes, tried in turn.
    pub broker: Brokers,
    pub event: String,
    pub name: String,
    pub language: Language,
    /// The arbiter's credentials (`hub enrol-arbiter`, `POST /api/arbiters/enrol`): its
    /// commands are sealed with its key, and it logs in to the broker as a pager. `None`:
    /// anonymous and unsealed, which only an open hall takes.
    pub credentials: Option<PagerCredentials>,
}

/// What `hub pager --key-file` reads: `{"arbiter", "key", "mqtt_password", "hub_key",
/// "ca"}` (the pager's MQTT username derives from the key).
#[derive(Debug, Clone)]
pub struct PagerCredentials {
    pub arbiter: String,
    pub key: protocol::seal::NodeKey,
    pub mqtt_password: String,
    /// The hub's public key: only what it signed is shown.
    pub hub_key: ed25519_dalek::VerifyingKey,
    /// The hall CA's certificate (PEM), pinned for an `mqtts://` broker.
    pub ca: Option<String>,
}

impl PagerCredentials {
    pub fn read(path: &std::path::Path) -> anyhow::Result<PagerCredentials> {
        use anyhow::Context;
        #[derive(Deserialize)]
        struct File {
            arbiter: String,
            key: String,
            mqtt_password: String,
            hub_key: String,
            #[serde(default)]
            ca: Option<String>,
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the key file {}", path.display()))?;
        let file: File = serde_json::from_str(&text).with_context(|| {
            format!("{}: expected the JSON of hub enrol-arbiter", path.display())
        })?;
        Ok(PagerCredentials {
            arbiter: file.arbiter,
            key: protocol::seal::NodeKey::parse(&file.key)
                .with_context(|| format!("the key in {}", path.display()))?,
            mqtt_password: file.mqtt_password,
            hub_key: crate::core::pager_seal::hub_key(&file.hub_key)
                .with_context(|| format!("the hub_key in {}", path.display()))?,
            ca: file.ca.filter(|ca| !ca.is_empty()),
        })
    }
}

/// An alert as a pager reads it off the wire.
#[derive(Debug, Clone, Deserialize)]
struct Shown {
    id: u64,
    board: Option<u16>,
    zone: String,
    kind: String,
    severity: Severity,
    article: Option<String>,
    state: AlertState,
    raised_at: u64,
    escalated_at: Option<u64>,
    acknowledged: Option<Stamp>,
    texts: BTreeMap<String, Text>,
}

#[derive(Debug, Clone, Deserialize)]
struct Stamp {
    by: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Text {
    text: String,
    action: String,
}

#[derive(Debug, Deserialize)]
struct OpenList {
    zone: String,
    alerts: Vec<Shown>,
}

/// The open alerts the pager shows.
#[derive(Default)]
struct Screen {
    open: BTreeMap<u64, Shown>,
    /// Why the hub's journal fails, while it does.
    journal_fails: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Status {
    journal: String,
    reason: Option<String>,
}

impl Screen {
    /// Takes in one message; `true` when it is a new alert (ring the bell).
    fn take(&mut self, topic: &str, payload: &[u8]) -> Result<bool, serde_json::Error> {
        if topic.ends_with("/status") {
            let status: Status = serde_json::from_slice(payload)?;
            self.journal_fails = (status.journal != "ok")
                .then(|| status.reason.unwrap_or_else(|| status.journal.clone()));
            return Ok(false);
        }
        if topic.ends_with("/open") {
            let list: OpenList = serde_json::from_slice(payload)?;
            self.open.retain(|_, a| a.zone != list.zone);
            for alert in list.alerts {
                self.open.insert(alert.id, alert);
            }
            return Ok(false);
        }
        let alert: Shown = serde_json::from_slice(payload)?;
        let new = !self.open.contains_key(&alert.id) && alert.state == AlertState::Raised;
        if alert.state.is_open() {
            self.open.insert(alert.id, alert);
        } else {
            self.open.remove(&alert.id);
        }
        Ok(new)
    }

    /// The open alerts, the most urgent first.
    fn ordered(&self) -> Vec<&Shown> {
        let mut alerts: Vec<&Shown> = self.open.values().collect();
        alerts.sort_by_key(|a| {
            (
                a.severity,
                a.state != AlertState::Raised,
                std::cmp::Reverse(a.raised_at),
            )
        });
        alerts
    }

    fn render(&self, language: Language) -> String {
        let mut out = String::new();
        let alerts = self.ordered();
        if let Some(reason) = &self.journal_fails {
            out.push_str(&format!(
                "!! THE HUB'S JOURNAL FAILS: {}. It takes no event and sends no alert until it works again.\n",
                printable(reason)
            ));
        }
        out.push_str(&format!("── {} open alert(s) ──\n", alerts.len()));
        for a in alerts {
            let text = a.texts.get(language.code()).or_else(|| a.texts.get("en"));
            let state = match (&a.acknowledged, a.escalated_at) {
                (Some(stamp), _) => format!("ack {}", stamp.by),
                (None, Some(_)) => "ESCALATED".to_owned(),
                (None, None) => "NEW".to_owned(),
            };
            out.push_str(&format!(
                "#{} {:?} board {} {} {} [{}]\n",
                a.id,
                a.severity,
                a.board.map_or("-".to_owned(), |b| b.to_string()),
                printable(&a.kind),
                printable(a.article.as_deref().unwrap_or("-")),
                printable(&state),
            ));
            if let Some(t) = text {
                out.push_str(&format!(
                    "   {}\n   → {}\n",
                    printable(&t.text),
                    printable(&t.action)
                ));
            }
        }
        out
    }
}

/// What the arbiter typed.
#[derive(Debug, PartialEq, Eq)]
enum Typed {
    Ack(Option<u64>),
    Resolve(u64, Option<String>),
    Quit,
    Unknown,
}

fn read_typed(line: &str) -> Typed {
    let mut words = line.split_whitespace();
    match (words.next(), words.next().map(str::parse::<u64>)) {
        (Some("a"), None) => Typed::Ack(None),
        (Some("a"), Some(Ok(id))) => Typed::Ack(Some(id)),
        (Some("r"), Some(Ok(id))) => {
            let note: Vec<&str> = words.collect();
            Typed::Resolve(id, (!note.is_empty()).then(|| note.join(" ")))
        }
        (Some("q"), None) => Typed::Quit,
        _ => Typed::Unknown,
    }
}

/// A command as the hub reads it: sealed with the arbiter's key when the pager has one.
fn command_payload(config: &PagerConfig, id: AlertId, command: AlertCommand) -> Vec<u8> {
    match &config.credentials {
        Some(credentials) => {
            let sent_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            crate::view::pager::sealed_command(
                &credentials.key,
                &config.event,
                id,
                command,
                sent_ms,
            )
        }
        None => serde_json::to_vec(&serde_json::json!({
            "id": id,
            "action": command.action,
            "by": command.by,
            "note": command.note,
        }))
        .expect("a command serializes"),
    }
}

/// Runs the pager until `q` or Ctrl-C.
pub async fn run(config: PagerConfig) -> anyhow::Result<()> {
    let zone = if config.zone == "all" {
        "+"
    } else {
        config.zone.as_str()
    };
    let name = config
        .credentials
        .as_ref()
        .map_or(config.name.clone(), |c| c.arbiter.clone());
    // The arbiter's own login; its client id starts as the broker binds it to the login
    // and ends in a random part nobody can guess and so cut the pager's session with.
    let user = config.credentials.as_ref().map_or_else(
        || "anonymous".to_owned(),
        |c| protocol::identity::pager_user(&c.key),
    );
    let mut options = LinkOptions::new(format!(
        "{}{:016x}",
        protocol::identity::pager_client_prefix(&config.event, &user),
        rand::random::<u64>()
    ));
    options.credentials = config
        .credentials
        .as_ref()
        .map(|c| (user.clone(), c.mqtt_password.clone()));
    options.subscribe = vec![
        topic::alerts(&config.event, zone),
        topic::open_alerts(&config.event, zone),
        topic::hub_status(&config.event),
    ];
    if config.broker.any_tls() {
        use anyhow::Context;
        let ca = config
            .credentials
            .as_ref()
            .and_then(|c| c.ca.as_deref())
            .context("an mqtts:// broker: the key file (POST /api/arbiters/enrol) carries the hall CA it pins")?;
        options.tls = Some(link::tls::client_config(ca.as_bytes())?);
    }
    let (client, mut incoming) = link::start_any(&config.broker, options);
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    let mut screen = Screen::default();
    let terminal = std::io::stdout().is_terminal();
    let command_topic = topic::pager_command(&config.event);
    let mut freshness = crate::core::pager_seal::Freshness::default();
    println!(
        "pager for zone {} at {} (event {}): a ID to acknowledge, r ID NOTE to resolve, q to quit",
        config.zone, config.broker, config.event
    );
    loop {
        tokio::select! {
            event = incoming.recv() => match event {
                Some(LinkEvent::Message { topic, payload }) if config.credentials.as_ref().is_some_and(|c| !crate::core::pager_seal::signed_by_hub(&c.hub_key, &payload)) => {
                    // Somebody else published in the hub's place (a retained list overwritten).
                    eprintln!("a message on {} not signed by the hub: not shown", printable(&topic));
                }
                Some(LinkEvent::Message { topic, payload }) if config.credentials.is_some() && !freshness.fresh(&topic, &payload) => {
                    // The hub's own words, but from another topic or older than what it said
                    // since (a recorded list played back to hide an alert).
                    eprintln!("a message on {} older than the hub's latest there: not shown", printable(&topic));
                }
                Some(LinkEvent::Message { topic, payload }) => match screen.take(&topic, &payload) {
                    Ok(new) => {
                        let mut out = std::io::stdout().lock();
                        if terminal {
                            let _ = write!(out, "\x1b[2J\x1b[H");
                        }
                        if new {
                            let _ = write!(out, "\x07");
                        }
                        let _ = write!(out, "{}", screen.render(config.language));
                        let _ = out.flush();
                    }
                    Err(e) => eprintln!("unreadable message on {topic}: {e}"),
                },
                Some(LinkEvent::Connected) => eprintln!("connected to {}", config.broker),
                Some(LinkEvent::Disconnected) => eprintln!("broker lost; reconnecting"),
                Some(LinkEvent::Unreachable { broker, error, attempts }) => {
                    // The first time, then at a falling rate, as the link logs it.
                    if attempts.is_power_of_two() {
                        eprintln!("cannot reach the broker {broker} ({error}); retrying");
                    }
                }
                None => break,
            },
            line = lines.next_line(), if stdin_open => match line {
                Ok(Some(line)) => {
                    let command = match read_typed(&line) {
                        Typed::Ack(id) => {
                            let top = screen.ordered().into_iter().find(|a| a.state == AlertState::Raised).map(|a| a.id);
                            id.or(top).map(|id| (id, AlertCommand { action: AlertAction::Ack, by: name.clone(), note: None }))
                        }
                        Typed::Resolve(id, note) => Some((id, AlertCommand { action: AlertAction::Resolve, by: name.clone(), note })),
                        Typed::Quit => break,
                        Typed::Unknown => {
                            eprintln!("a ID: acknowledge · r ID NOTE: resolve · q: quit");
                            None
                        }
                    };
                    if let Some((id, command)) = command {
                        let payload = command_payload(&config, AlertId(id), command);
                        if let Err(e) = client.try_publish(command_topic.clone(), QoS::AtLeastOnce, false, payload) {
                            eprintln!("not sent: {e}");
                        }
                    }
                }
                // Input closed (a pager run from a script): keep showing alerts.
                Ok(None) | Err(_) => stdin_open = false,
            },
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_arbiter_types() {
        assert_eq!(read_typed("a"), Typed::Ack(None));
        assert_eq!(read_typed("a 12"), Typed::Ack(Some(12)));
        assert_eq!(
            read_typed("r 12 flag confirmed 0-1"),
            Typed::Resolve(12, Some("flag confirmed 0-1".into()))
        );
        assert_eq!(read_typed("r 12"), Typed::Resolve(12, None));
        assert_eq!(read_typed("q"), Typed::Quit);
        assert_eq!(read_typed("hello"), Typed::Unknown);
    }

    /// A retained open list published by a stranger, with an escape sequence that clears the
    /// screen, a newline that fakes another alert, and a right-to-left override.
    #[test]
    fn a_stranger_cannot_drive_the_arbiters_terminal() {
        let list = r#"{"zone": "A", "alerts": [{"id": 1, "board": 3, "zone": "A",
            "kind": "flag_fall", "severity": "urgent", "article": "6.9\u001b[2J",
            "state": "acknowledged", "raised_at": 1, "escalated_at": null,
            "acknowledged": {"by": "Ola\u001b]0;owned\u0007"},
            "texts": {"en": {"text": "Board 3\n#2 Urgent board 4 fake", "action": "go\u202eog"}}}]}"#;
        let mut screen = Screen::default();
        screen
            .take("zeitnot/e/alerts/A/open", list.as_bytes())
            .unwrap();
        let shown = screen.render(Language::English);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(!shown.contains('\u{202e}'), "{shown:?}");
        assert_eq!(shown.lines().count(), 4, "{shown}");
        assert!(
            shown.contains("Board 3\u{fffd}#2 Urgent board 4 fake"),
            "{shown}"
        );
    }
}

/// How any other MQTT client reads the alerts as a pager (`hub pager --help` prints it).
pub const OTHER_CLIENTS: &str = "\
Any MQTT 3.1.1 client can be a pager (mosquitto_sub, MQTT Explorer, a home-automation
bridge), with the arbiter's key file (hub enrol-arbiter, or POST /api/arbiters/enrol):
  user name  its mqtt_user              (pager-…)
  password   its mqtt_password
  client id  its mqtt_client_id_prefix  (zeitnot-pager-EVENT-USER-), then anything
             of the client's own; the broker refuses any other (CONNACK 5, not authorised)
  topics     zeitnot/EVENT/alerts/ZONE (+ for every zone, # for the open lists too),
             zeitnot/EVENT/alerts/ZONE/open, zeitnot/EVENT/status,
             zeitnot/EVENT/broadcast/#; any other filter is refused by itself (SUBACK 0x80)
For example:
  mosquitto_sub -h HUB -p 1883 -u \"$(jq -r .mqtt_user key.json)\" \\
    -P \"$(jq -r .mqtt_password key.json)\" \\
    -i \"$(jq -r .mqtt_client_id_prefix key.json)$(hostname)\" -t 'zeitnot/default/alerts/+'
A wrong password is refused with CONNACK 4, MQTT 5 with 0x84 (speak 3.1.1: -V mqttv311,
or use the listener hub serve --mqtt5 opens).";

/// `hub pager`'s command line.
#[derive(Debug, clap::Args)]
pub struct PagerArgs {
    /// The zone to watch; `all` for the chief arbiter.
    #[arg(long)]
    pub zone: String,
    /// The broker the hub uses: HOST:PORT or mqtt://HOST:PORT; a cluster's nodes as
    /// ADDR,ADDR,…, tried in turn.
    #[arg(long, default_value = "127.0.0.1:1883")]
    pub broker: Brokers,
    /// The event id in MQTT topics.
    #[arg(long, default_value = "default")]
    pub event: String,
    /// The name acknowledgements are signed with.
    #[arg(long, default_value = "arbiter")]
    pub name: String,
    /// The language of the texts: en, nb, sv, da, fi, hu.
    #[arg(long, default_value = "en")]
    pub lang: Language,
    /// The arbiter's credentials (`hub enrol-arbiter`): the commands are sealed with its
    /// key and the name is its arbiter's. Without it, only an open hall listens.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
}

impl PagerArgs {
    /// The pager's configuration, its credentials read from the key file.
    pub fn config(self) -> anyhow::Result<PagerConfig> {
        let credentials = self
            .key_file
            .as_deref()
            .map(PagerCredentials::read)
            .transpose()?;
        Ok(PagerConfig {
            zone: self.zone,
            broker: self.broker,
            event: self.event,
            name: self.name,
            language: self.lang,
            credentials,
        })
    }
}
