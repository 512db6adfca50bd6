//! A Chessnut board's Bluetooth LE link, as a transport of the node: BlueZ (through
//! `bluer`) finds the board by its address or its advertised name, connects, subscribes to
//! its positions and command answers, and hands every notification to the [`Session`];
//! the readings go to the board's node.
//!
//! A board takes one connection at a time, and a link a dead process left open blocks every
//! reconnect until it is dropped and some seconds pass: a link that fails or goes silent
//! ([`SILENT_MS`](super::session::SILENT_MS)) is disconnected, and the next attempt waits
//! [`RECONNECT_AFTER`]. `Connected` going false is the disconnect (the notification streams
//! may simply stop).

use std::path::PathBuf;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bluer::gatt::remote::Characteristic;
use bluer::{Adapter, AdapterEvent, Address, Device, DeviceEvent, DeviceProperty};
use futures_util::{Stream, StreamExt};
use protocol::NodeMs;
use tokio::sync::mpsc::{self, Receiver, Sender};

use super::session::{News, Session, BATTERY_EVERY_MS};
use super::wire;
use crate::eboard::Orientation;
use crate::line::serial::keep_if_changed;
use crate::source::Reading;

/// How long a board is left alone after its link went before connecting again, by default:
/// a Chessnut refuses a new connection until its last one has timed out (about 8 s).
pub const RECONNECT_AFTER: Duration = Duration::from_secs(8);
/// How long finding the board may take before the attempt counts as failed.
const FIND_WITHIN: Duration = Duration::from_secs(20);
/// How long connecting and resolving its services may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(15);
/// How long a single GATT call (a write, a subscription, a disconnect) may take: BlueZ's
/// own D-Bus timeout is two minutes, far too long for a board in play.
const CALL_WITHIN: Duration = Duration::from_secs(5);
/// Readings the board's channel holds before the link waits for its node.
const READINGS_BACKLOG: usize = 1_024;
/// How often the link looks for silence and the stop flag.
const TICK: Duration = Duration::from_millis(200);

/// How the link reaches the board.
#[derive(Debug, Clone)]
pub struct Reach {
    /// The Bluetooth adapter (`hci1`); `None`: BlueZ's default.
    pub adapter: Option<String>,
    pub target: Target,
    /// How long to leave the board alone after its link went.
    pub reconnect_after: Duration,
}

/// Which board to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Its Bluetooth address (as the technician read it off `bluetoothctl`).
    Address(Address),
    /// The name it advertises ("Chessnut Air"): the first board seen with it.
    Name(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Address(address) => write!(f, "{address}"),
            Target::Name(name) => write!(f, "{name:?}"),
        }
    }
}

fn now() -> NodeMs {
    NodeMs(crate::node::unix_ms())
}

/// Starts the link to the board as `reach` says: its readings until `stop`. The board's
/// orientation, once decided, is kept in `orientation_file`.
pub fn spawn(
    reach: Reach,
    session: Session,
    orientation_file: PathBuf,
    stop: Arc<AtomicBool>,
) -> Receiver<Reading> {
    let (readings, receiver) = mpsc::channel(READINGS_BACKLOG);
    let kept = Kept {
        orientation: session.orientation(),
        file: orientation_file,
    };
    tokio::spawn(run(reach, session, kept, readings, stop));
    receiver
}

/// The board's orientation as kept on disk.
struct Kept {
    orientation: Orientation,
    file: PathBuf,
}

/// Hands the readings to the board's node; `false` once it no longer listens.
async fn deliver(readings: &Sender<Reading>, batch: Vec<Reading>) -> bool {
    for reading in batch {
        if readings.send(reading).await.is_err() {
            return false;
        }
    }
    true
}

/// Why a link ended, for the technician's log.
type Why = String;

async fn run(
    reach: Reach,
    mut session: Session,
    mut kept: Kept,
    readings: Sender<Reading>,
    stop: Arc<AtomicBool>,
) {
    let mut reported = None::<Why>;
    while !stop.load(Ordering::Relaxed) {
        let board = Board {
            session: &mut session,
            kept: &mut kept,
            readings: &readings,
        };
        let target = &reach.target;
        let why = match open_adapter(reach.adapter.as_deref()).await {
            Ok(adapter) => match link(&adapter, target, board, &stop).await {
                Ok(()) => return, // the node stopped listening
                Err(why) => why,
            },
            Err(e) => format!("no Bluetooth adapter: {e}"),
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // Said once per kind of failure: a board out of reach retries quietly.
        if reported.as_deref() != Some(why.as_str()) {
            tracing::warn!(board = %target, %why, "the Chessnut board's link is down; connecting again");
            reported = Some(why);
        }
        if !deliver(&readings, session.disconnected(now())).await {
            return;
        }
        tokio::time::sleep(reach.reconnect_after).await;
    }
}

async fn open_adapter(name: Option<&str>) -> bluer::Result<Adapter> {
    let bluetooth = bluer::Session::new().await?;
    let adapter = match name {
        Some(name) => bluetooth.adapter(name)?,
        None => bluetooth.default_adapter().await?,
    };
    adapter.set_powered(true).await?;
    Ok(adapter)
}

/// What a link feeds: the board's session, its kept orientation, its node.
struct Board<'a> {
    session: &'a mut Session,
    kept: &'a mut Kept,
    readings: &'a Sender<Reading>,
}

/// One link to the board, from finding it to losing it: `Ok` only when the node stopped
/// listening, else why the link ended.
async fn link(
    adapter: &Adapter,
    target: &Target,
    board: Board<'_>,
    stop: &AtomicBool,
) -> Result<(), Why> {
    let device = tokio::time::timeout(FIND_WITHIN, find(adapter, target))
        .await
        .map_err(|_| {
            format!("not seen within {FIND_WITHIN:?} (switched off, out of reach, or another name)")
        })?
        .map_err(|e| format!("looking for it: {e}"))?;
    let result = connected(&device, board, stop).await;
    // Whatever ended the link, it is dropped, so that the board takes the next one.
    let _ = tokio::time::timeout(CALL_WITHIN, device.disconnect()).await;
    result
}

/// The board, once the adapter knows it (seen now, or in an earlier scan).
async fn find(adapter: &Adapter, target: &Target) -> bluer::Result<Device> {
    if let Some(device) = known(adapter, target).await? {
        return Ok(device);
    }
    let mut seen = pin!(adapter.discover_devices().await?);
    while let Some(event) = seen.next().await {
        if let AdapterEvent::DeviceAdded(address) = event {
            let device = adapter.device(address)?;
            if is_target(&device, target).await {
                return Ok(device);
            }
        }
    }
    Err(bluer::Error {
        kind: bluer::ErrorKind::NotFound,
        message: "discovery ended".into(),
    })
}

async fn known(adapter: &Adapter, target: &Target) -> bluer::Result<Option<Device>> {
    for address in adapter.device_addresses().await? {
        let device = adapter.device(address)?;
        if is_target(&device, target).await {
            return Ok(Some(device));
        }
    }
    Ok(None)
}

async fn is_target(device: &Device, target: &Target) -> bool {
    match target {
        Target::Address(address) => device.address() == *address,
        Target::Name(name) => device.name().await.ok().flatten().as_deref() == Some(name),
    }
}

/// The board's three characteristics: positions, commands, answers.
struct Characteristics {
    positions: Characteristic,
    commands: Characteristic,
    answers: Characteristic,
}

async fn characteristics(device: &Device) -> Result<Characteristics, Why> {
    let (mut positions, mut commands, mut answers) = (None, None, None);
    let services = device.services().await.map_err(|e| e.to_string())?;
    for service in services {
        for characteristic in service.characteristics().await.map_err(|e| e.to_string())? {
            let uuid = characteristic.uuid().await.map_err(|e| e.to_string())?;
            let slot = match uuid.to_string().as_str() {
                wire::FEN_NOTIFY => &mut positions,
                wire::COMMAND_WRITE => &mut commands,
                wire::COMMAND_ANSWER => &mut answers,
                _ => continue,
            };
            *slot = Some(characteristic);
        }
    }
    match (positions, commands, answers) {
        (Some(positions), Some(commands), Some(answers)) => Ok(Characteristics {
            positions,
            commands,
            answers,
        }),
        _ => Err("no Chessnut services on this device (another kind of board?)".to_owned()),
    }
}

async fn within<T>(
    what: &str,
    call: impl std::future::Future<Output = bluer::Result<T>>,
) -> Result<T, Why> {
    match tokio::time::timeout(CALL_WITHIN, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => Err(format!("{what}: no answer within {CALL_WITHIN:?}")),
    }
}

/// Connects, subscribes and follows the board until the link ends.
async fn connected(device: &Device, board: Board<'_>, stop: &AtomicBool) -> Result<(), Why> {
    let link_events = within("watching the link", device.events()).await?;
    let connect = async {
        device
            .connect()
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        characteristics(device).await
    };
    let gatt = tokio::time::timeout(CONNECT_WITHIN, connect)
        .await
        .map_err(|_| format!("connecting: not done within {CONNECT_WITHIN:?}"))??;
    let positions = within("subscribing to positions", gatt.positions.notify()).await?;
    let answers = within("subscribing to answers", gatt.answers.notify()).await?;
    tracing::info!(address = %device.address(), "connected to the Chessnut board");
    let (commands, health) = board.session.connected(now());
    if !deliver(board.readings, health).await {
        return Ok(());
    }
    for command in commands {
        within("writing a command", gatt.commands.write(&command)).await?;
    }
    let notified = Notified {
        positions,
        answers,
        link_events,
    };
    follow(board, stop, &gatt.commands, notified).await
}

/// What the board notifies over a link.
struct Notified<P, A, E> {
    positions: P,
    answers: A,
    link_events: E,
}

/// The link's notifications, until it ends.
async fn follow(
    board: Board<'_>,
    stop: &AtomicBool,
    commands: &Characteristic,
    notified: Notified<
        impl Stream<Item = Vec<u8>>,
        impl Stream<Item = Vec<u8>>,
        impl Stream<Item = DeviceEvent>,
    >,
) -> Result<(), Why> {
    let Board {
        session,
        kept,
        readings,
    } = board;
    let (mut positions, mut answers, mut link_events) = (
        pin!(notified.positions),
        pin!(notified.answers),
        pin!(notified.link_events),
    );
    let mut tick = tokio::time::interval(TICK);
    let mut battery = tokio::time::interval(Duration::from_millis(BATTERY_EVERY_MS));
    battery.tick().await; // asked for on connecting
    loop {
        let (batch, news) = tokio::select! {
            frame = positions.next() => match frame {
                Some(frame) => session.frame(&frame, now()),
                None => return Err("the board stopped notifying its position".to_owned()),
            },
            answer = answers.next() => match answer {
                Some(answer) => session.answer(&answer),
                None => return Err("the board stopped answering".to_owned()),
            },
            event = link_events.next() => match event {
                Some(DeviceEvent::PropertyChanged(DeviceProperty::Connected(false))) | None => {
                    return Err("the link went".to_owned())
                }
                Some(_) => continue,
            },
            _ = battery.tick() => {
                within("asking for the battery", commands.write(&wire::ASK_BATTERY)).await?;
                continue;
            }
            _ = tick.tick() => {
                if stop.load(Ordering::Relaxed) {
                    return Err("stopping".to_owned());
                }
                if session.stale(now()) {
                    return Err("silent: the link is stale".to_owned());
                }
                continue;
            }
        };
        for news in news {
            match news {
                News::Flickering(square) => tracing::warn!(
                    %square,
                    "a square keeps changing without settling: look at the piece on it (a magnet, a piece half on it)"
                ),
                News::Battery(battery) => tracing::info!(
                    percent = battery.percent,
                    charging = battery.charging,
                    "the board's battery"
                ),
                News::BadFrame(e) => tracing::warn!(error = %e, "a frame not taken"),
            }
        }
        keep_if_changed(&kept.file, &mut kept.orientation, session.orientation());
        if !deliver(readings, batch).await {
            return Ok(());
        }
    }
}
