//! A board node: readings from a [`Source`] into the outbox, and from the outbox to the hub
//! until acknowledged. What goes on the wire when is [`Delivery`]'s to say (sans IO, with
//! its own tests on simulated time); this loop does the IO around it.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use protocol::identity;
use protocol::seal::{self, NodeKey};
use protocol::{topic, BoardNo, DownlinkBody, Hello, NodeMs, UplinkBody};
use rumqttc::{AsyncClient, QoS};
use serde::Serialize;
use tokio::sync::mpsc::Receiver;
use tokio::time::{sleep_until, Instant};

use crate::clock_news::{self, ClockNews};
use crate::delivery::Delivery;
use crate::outbox::{Acked, Outbox, OutboxError};
use crate::source::{Feed, Reading, Source};
use link::{self, Brokers, LinkEvent, LinkOptions};

/// How long a stopped node goes on delivering what the hub has not acknowledged. What is
/// still unacknowledged then stays in the outbox (on disk) for the next start.
pub const DRAIN: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub board: BoardNo,
    pub event: String,
    /// The broker, or a cluster's nodes, tried in turn.
    pub broker: Brokers,
    pub outbox: PathBuf,
    /// Game time runs this many times faster than real time.
    pub speed: f64,
    /// Send a heartbeat after this long without any event; `None`: never.
    pub heartbeat: Option<Duration>,
    /// Stop once the source is exhausted and every event is acknowledged.
    pub exit_when_done: bool,
    /// Which script a scripted source is (a replay's file and game): a node given another
    /// than it last played starts it from the beginning, its sequence numbers going on.
    pub script: Option<String>,
    pub board_hw: String,
    pub clock_hw: String,
    /// The key the hub issued when it enrolled this node: every event is sealed with it, and
    /// only downlinks sealed with it are acted on. `None`: events go unauthenticated (only
    /// a hall the organiser opened takes them) and every downlink is trusted.
    pub key: Option<NodeKey>,
    /// For an `mqtts://` broker: TLS with the hall CA pinned (`--ca-file`).
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl NodeConfig {
    /// The node's MQTT username and password (`protocol::identity`): its board number, and
    /// a value derived from its key.
    pub fn mqtt_credentials(&self) -> Option<(String, String)> {
        let key = self.key.as_ref()?;
        Some((
            identity::node_user(self.board),
            identity::node_password(key),
        ))
    }
}

/// What a node did, printed as its last line: `{"board":N,"events":E,"acked":E}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NodeReport {
    pub board: u16,
    /// The highest sequence number the node ever assigned (over all its runs).
    pub events: u64,
    /// The highest sequence number the hub acknowledged.
    pub acked: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    #[error("the MQTT session ended")]
    LinkClosed,
    /// A board number the hub would refuse (0, or past [`BoardNo::MAX`]).
    #[error("board {0} is out of range: boards are numbered 1 to {max}", max = BoardNo::MAX)]
    BoardOutOfRange(BoardNo),
    /// A hardware id the hub would refuse in the node's `Hello`.
    #[error("hardware id {0:?} is longer than {max} bytes", max = Hello::MAX_TEXT)]
    HardwareIdTooLong(String),
}

/// The node's wall clock, in ms since the Unix epoch.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Runs the node until the source is done and acknowledged (with `exit_when_done`) or
/// `shutdown` resolves. A scripted source is replayed at `config.speed` and resumed where
/// the outbox says it stopped; a live board's readings are stamped with the node's wall
/// clock as they arrive. At `shutdown` the node goes on sending for up to [`DRAIN`] while
/// events are unacknowledged, so that a stop between two moves leaves nothing behind.
pub async fn run<S: Source>(
    config: NodeConfig,
    feed: Feed<S>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<NodeReport, NodeError> {
    if config.board.0 == 0 || config.board > BoardNo::MAX {
        return Err(NodeError::BoardOutOfRange(config.board));
    }
    for id in [&config.board_hw, &config.clock_hw] {
        if id.len() > Hello::MAX_TEXT {
            return Err(NodeError::HardwareIdTooLong(id.clone()));
        }
    }
    let outbox = Outbox::open(&config.outbox, config.board)?;
    let (script, mut live_board) = match feed {
        Feed::Script(source) => (Some(source), None),
        Feed::Live(readings) => (None, Some(readings)),
    };
    let live = live_board.is_some();
    // A live node's times are its wall clock; a script's run in one timeline from its first
    // start, so a resumed replay goes on where it stopped.
    if let (Some(id), false) = (&config.script, live) {
        outbox.begin_script(id, NodeMs(unix_ms()))?;
    }
    let epoch = if live {
        NodeMs(unix_ms())
    } else {
        outbox.epoch(NodeMs(unix_ms()))?
    };
    let mut cursor = outbox.cursor()?;
    let speed = if config.speed > 0.0 && !live {
        config.speed
    } else {
        1.0
    };

    // Readings are due at `base + game_ms / speed`; a restarted node resumes at once.
    let resume_game_ms = script
        .as_ref()
        .and_then(|s| s.reading(cursor as usize))
        .map_or(0, |t| t.game_ms);
    let base = Instant::now()
        .checked_sub(Duration::from_secs_f64(
            resume_game_ms as f64 / 1000.0 / speed,
        ))
        .unwrap_or_else(Instant::now);
    let due = |game_ms: u64| base + Duration::from_secs_f64(game_ms as f64 / 1000.0 / speed);
    let game_now = |now: Instant| {
        let real = now.saturating_duration_since(base).as_secs_f64();
        NodeMs(epoch.0 + (real * speed * 1000.0) as u64)
    };

    // Random, not the process id: nobody can guess the id and cut the node's session.
    let mut options = LinkOptions::new(format!(
        "{}{:016x}",
        identity::node_client_prefix(&config.event, config.board),
        rand::random::<u64>()
    ));
    options.subscribe = vec![topic::downlink(&config.event, config.board)];
    // QoS 0: every downlink is made good without the broker (a lost Ack by the next or by a
    // resend, a lost ResendFrom by the resend timer, a ContinueAt sent again). A QoS 1
    // subscription costs a clustered gateway a replicated consumer for each board.
    options.subscribe_qos = QoS::AtMostOnce;
    options.seed = u64::from(config.board.0) ^ unix_ms();
    options.credentials = config.mqtt_credentials();
    options.tls = config.tls.clone();
    if config.key.is_none() {
        tracing::warn!(board = config.board.0, "no key (--key-file): only a hall opened to unauthenticated boards takes this node's events, and any downlink is believed");
    }
    let (client, mut link) = link::start_any(&config.broker, options);
    // This boot's number: downlinks sealed for an earlier boot (a recorded Ack or
    // ContinueAt played to this node) fail their tag.
    let boot = seal::Boot(rand::random::<u64>().max(1));
    let mut sender = Sender {
        client,
        event: config.event.clone(),
        key: config.key.clone(),
        boot,
        topic: topic::uplink(&config.event, config.board),
        delivery: Delivery::new(std::time::Instant::now(), outbox.acked()?),
    };

    let highest_seq = outbox.highest_seq()?;
    outbox.push(
        game_now(Instant::now()),
        UplinkBody::Hello(Hello {
            software: format!("board-node {}", env!("CARGO_PKG_VERSION")),
            board_hw: config.board_hw.clone(),
            clock_hw: config.clock_hw.clone(),
            highest_seq,
        }),
        None,
    )?;
    if speed != 1.0 {
        // The hub bounds how far this node's time may jump by how fast it runs.
        let node_ms_per_s = (speed * 1000.0)
            .round()
            .clamp(1.0, f64::from(UplinkBody::MAX_PACE));
        outbox.push(
            game_now(Instant::now()),
            UplinkBody::Pace {
                node_ms_per_s: node_ms_per_s as u32,
            },
            None,
        )?;
    }
    let mut last_event = Instant::now();
    // Clock readings the hub can compute are held back (`clock_news`); a heartbeat sends
    // the latest of them.
    let mut news = ClockNews::default();
    let mut refused_acks: u64 = 0;
    let mut forged_downlinks: u64 = 0;

    tokio::pin!(shutdown);
    let mut draining_until: Option<Instant> = None;
    let mut retransmit = tokio::time::interval(Duration::from_millis(500));
    loop {
        let next = script.as_ref().and_then(|s| s.reading(cursor as usize));
        let exhausted = next.is_none() && live_board.is_none();
        let all_acked = outbox.oldest_unacked()?.is_none();
        if (config.exit_when_done && exhausted && all_acked)
            || draining_until.is_some_and(|until| all_acked || Instant::now() >= until)
        {
            break;
        }
        let heartbeat_due = config.heartbeat.map(|every| last_event + every);
        tokio::select! {
            () = sleep_until(next.map_or(base, |t| due(t.game_ms))), if next.is_some() && draining_until.is_none() => {
                let timed = next.expect("guarded by the select condition");
                let at = NodeMs(epoch.0 + timed.game_ms);
                cursor += 1;
                if clock_news::is_news(&mut news, at, &timed.reading) {
                    outbox.push(at, timed.reading.body(), Some(cursor))?;
                    last_event = Instant::now();
                    sender.send_window(&outbox)?;
                }
                // A reading held back leaves the stored cursor where it was: a restarted
                // node reads it again, and sends it if it is news then.
            }
            reading = live_reading(&mut live_board), if live_board.is_some() && draining_until.is_none() => match reading {
                Some(reading) => {
                    let at = game_now(Instant::now());
                    if clock_news::is_news(&mut news, at, &reading) {
                        outbox.push(at, reading.body(), None)?;
                        last_event = Instant::now();
                        sender.send_window(&outbox)?;
                    }
                }
                None => live_board = None,
            },
            () = sleep_until(heartbeat_due.unwrap_or(base)), if heartbeat_due.is_some() => {
                let (at, body) = clock_news::heartbeat(&mut news, game_now(Instant::now()));
                outbox.push(at, body, None)?;
                last_event = Instant::now();
                sender.send_window(&outbox)?;
            }
            event = link.recv() => match event.ok_or(NodeError::LinkClosed)? {
                LinkEvent::Connected => {
                    tracing::info!(board = config.board.0, "connected to the broker");
                    sender.delivery.handle_connected(std::time::Instant::now(), outbox.acked()?);
                    sender.send_window(&outbox)?;
                }
                LinkEvent::Disconnected => sender.delivery.handle_disconnected(),
                // The link warned; the outbox keeps everything meanwhile.
                LinkEvent::Unreachable { .. } => {}
                LinkEvent::Message { payload, .. } => match seal::open_downlink(&payload, boot) {
                    Ok(sealed) if config.key.as_ref().is_some_and(|key| !believed(&sealed, key, &config.event)) => {
                        forged_downlinks += 1;
                        if forged_downlinks % 100 == 1 {
                            tracing::warn!(board = config.board.0, forged = forged_downlinks, "a downlink not sealed with this node's key for this boot (a forgery, or a replay from an earlier boot): ignored");
                        }
                    }
                    Ok(seal::Sealed { message, .. }) if message.board == config.board => match message.body {
                        DownlinkBody::Ack { up_to_seq } => {
                            match outbox.ack(up_to_seq)? {
                                Acked::Trimmed(_) => sender.delivery.handle_progress(std::time::Instant::now()),
                                Acked::Stale => {}
                                Acked::NeverSent { highest } => {
                                    refused_acks += 1;
                                    // Once, then every 100th: a flood must not flood the log.
                                    if refused_acks % 100 == 1 {
                                        tracing::warn!(board = config.board.0, up_to = up_to_seq.0, highest = highest.0, refused = refused_acks, "an Ack for events never sent: not the hub's, ignored");
                                    }
                                }
                            }
                            sender.send_window(&outbox)?;
                        }
                        DownlinkBody::ContinueAt { seq } => {
                            let moved = outbox.continue_at(seq)?;
                            tracing::warn!(board = config.board.0, from = seq.0, moved, "the hub has this board's events from another node: continuing at its number");
                            sender.delivery.handle_continue_at(std::time::Instant::now(), outbox.acked()?);
                            sender.send_window(&outbox)?;
                        }
                        DownlinkBody::ResendFrom { seq } => {
                            tracing::debug!(board = config.board.0, from = seq.0, "hub asks for a resend");
                            sender.delivery.handle_resend_from(std::time::Instant::now(), seq, outbox.acked()?);
                            sender.send_window(&outbox)?;
                        }
                    },
                    Ok(other) => tracing::warn!(board = other.message.board.0, "downlink for another board ignored"),
                    Err(e) => tracing::warn!(error = %e, "undecodable downlink ignored"),
                },
            },
            _ = retransmit.tick() => {
                let unacked = outbox.oldest_unacked()?.is_some();
                if sender.delivery.handle_timeout(std::time::Instant::now(), outbox.acked()?, unacked) {
                    if sender.delivery.session_suspect() {
                        // Connected and unheard: a new session, on the next broker.
                        tracing::warn!(board = config.board.0, "no acknowledgement for several resends: connecting anew");
                        if let Err(e) = sender.client.try_disconnect() {
                            tracing::warn!(error = %e, "the session could not be ended");
                        }
                    } else {
                        sender.send_window(&outbox)?;
                    }
                }
            }
            () = &mut shutdown, if draining_until.is_none() => {
                draining_until = Some(Instant::now() + DRAIN);
            }
            () = sleep_until(draining_until.unwrap_or(base)), if draining_until.is_some() => {}
        }
    }
    Ok(NodeReport {
        board: config.board.0,
        events: outbox.highest_seq()?.0,
        acked: outbox.acked()?.0,
    })
}

/// Whether a downlink is the hub's for this boot. A `ResendFrom` may also be sealed for no
/// boot: a hub that restarted asks every node for its events before it has heard their
/// boots, and a replayed one only has events sent again.
fn believed(sealed: &seal::Sealed<protocol::Downlink>, key: &NodeKey, event: &str) -> bool {
    if sealed.verify(key, event) {
        return true;
    }
    let mut any_boot = sealed.clone();
    any_boot.boot = seal::Boot::NONE;
    matches!(sealed.message.body, DownlinkBody::ResendFrom { .. }) && any_boot.verify(key, event)
}

/// The next reading of a live board, `None` once it has ended.
async fn live_reading(board: &mut Option<Receiver<Reading>>) -> Option<Reading> {
    match board {
        Some(readings) => readings.recv().await,
        None => std::future::pending().await,
    }
}

/// The sending half: [`Delivery`]'s windows published, sealed, on the node's session.
struct Sender {
    client: AsyncClient,
    event: String,
    key: Option<NodeKey>,
    /// This boot's number, in every frame.
    boot: seal::Boot,
    topic: String,
    delivery: Delivery,
}

impl Sender {
    /// Publishes the outbox events the window has room for, at QoS 0: the hub's Ack is the
    /// acknowledgement that counts (the outbox keeps every event until it, and resends), so
    /// the broker's PUBACK, and a clustered gateway's synchronous store before it, would be
    /// one packet and one wait an event for nothing (as Sparkplug B sends its data).
    fn send_window(&mut self, outbox: &Outbox) -> Result<(), OutboxError> {
        let now = std::time::Instant::now();
        let Some(window) = self.delivery.poll_window(now, outbox.acked()?) else {
            return Ok(());
        };
        for (seq, bytes) in outbox.unacked_from(window.from, window.count)? {
            let frame = seal::seal_uplink_bytes(self.key.as_ref(), &self.event, self.boot, bytes);
            if let Err(e) =
                self.client
                    .try_publish(self.topic.clone(), QoS::AtMostOnce, false, frame)
            {
                // The request queue is full: the rest goes out with the next window.
                tracing::debug!(error = %e, seq = seq.0, "publish not queued");
                break;
            }
            self.delivery.sent(seq);
        }
        Ok(())
    }
}
