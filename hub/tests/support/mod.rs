//! Test harness: real processes (hub, board nodes, Mosquitto) on ephemeral ports.
//!
//! - [`process`]: the processes; [`http`]: the tests' HTTP client; [`hub`]: the core
//!   driven in memory ([`hub::TestHub`]); the rest, one job each.

pub mod bbp;
pub mod board;
pub mod browser;
pub mod clocked;
pub mod events;
pub mod hall;
pub mod http;
pub mod hub;
pub mod lichess;
pub mod live;
pub mod oracle;
pub mod process;
pub mod sniffer;

// The harness's rooms under the names the tests use; each test binary uses a part.
#[allow(unused_imports)]
pub use http::*;
#[allow(unused_imports)]
pub use process::hub::{run_hub, share_hall_secrets, Broker, Enrolment, Hub};
#[allow(unused_imports)]
pub use process::mosquitto::Mosquitto;
#[allow(unused_imports)]
pub use process::nats::NatsCluster;
#[allow(unused_imports)]
pub use process::node::{canonical_sans, Node, Replay};
#[allow(unused_imports)]
pub use process::pager::TerminalPager;
#[allow(unused_imports)]
pub use process::phone::NtfyPhone;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// `../shared/data/real/` beside the repository.
pub fn real_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/real")
}

/// The name the hub's JSON gives a unit enum (`"clock_adjusted"`).
pub fn serde_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .expect("serializable")
        .as_str()
        .expect("a unit variant")
        .to_owned()
}

/// The game written down beside a recorded stream (`*.uci`, or `johan.pgn`), in SAN.
pub fn recorded_game(name: &str) -> Vec<String> {
    let dir = real_data().join("dgt/dgtdriver");
    if name == "johan" {
        let pgn = std::fs::read(dir.join("johan.pgn")).unwrap();
        return canonical_sans(&board_node::pgn::read_game(&pgn, 1).unwrap());
    }
    let mut position = shakmaty::Chess::default();
    std::fs::read_to_string(dir.join(format!("{name}.uci")))
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(|uci| {
            let m = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&position)
                .unwrap();
            shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut position, m).to_string()
        })
        .collect()
}

/// A port nobody listens on now: for the peers that cannot say which port they took
/// (Mosquitto, nats-server's routes) and for an address nothing is to answer on. A hub
/// chooses its own ports and says them ([`Hub::start_with`]).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("an ephemeral port")
}

/// A binary of this workspace, built by `cargo build --workspace --bins` beside the tests.
pub fn workspace_bin(name: &str) -> PathBuf {
    if name == "hub" {
        return PathBuf::from(env!("CARGO_BIN_EXE_hub"));
    }
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --workspace --bins` (with the same profile) first; \
         `bash .ci/run` does",
        bin.display()
    );
    bin
}

pub fn append(log: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file")
}

/// The log's last lines, after the error a process ended with (`Error: …`, which a
/// backtrace can push out of them).
pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<_> = text.lines().collect();
    let last = lines[lines.len().saturating_sub(30)..].join("\n");
    match lines.iter().rev().find(|l| l.starts_with("Error:")) {
        Some(error) if !last.contains(*error) => format!("{error}\n…\n{last}"),
        _ => last,
    }
}

/// Polls `ready` until it holds; panics with the log's tail if the process `what` exits or
/// `within` passes first.
pub fn wait_for(
    what: &str,
    child: &mut Child,
    log: &Path,
    within: Duration,
    mut ready: impl FnMut() -> bool,
) {
    let deadline = Instant::now() + within;
    while !ready() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited with {status}: {}", tail(log));
        }
        assert!(Instant::now() < deadline, "{what} not ready: {}", tail(log));
        std::thread::sleep(Duration::from_millis(20));
    }
}
