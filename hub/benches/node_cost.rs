//! What a live board node costs: one `board-node dgt` process serving 1 board, then 10, each
//! an emulated DGT board with its clock (`board-node emulate-dgt`) playing a real rapid game at
//! the real pace of a DGT board (a clock message a second, the moves as they were played),
//! into a hub in this process. Read off `/proc`: the node's CPU time per second of wall time
//! and its resident memory. The baseline in the same run is the emulators' own CPU time, the
//! other end of the same serial lines.
//!
//! With `--bus`, the boards are chained twelve to a line in DGT's bus mode
//! (`board-node emulate-dgt --bus`, one emulator per chain, answering at 9,600 baud) and the
//! node polls each chain (`board-node dgt --bus`).
//!
//! `cargo build --release --workspace --bins && cargo bench -p zeitnot-hub --bench node_cost
//! -- [--boards 1,10] [--seconds S] [--bus]`

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{enrol_nodes, start_hub};

const EVENT: &str = "bench-node";

struct Args {
    boards: Vec<u16>,
    seconds: f64,
    bus: bool,
}

/// Boards on one chain in `--bus` mode, as DGT chains them.
const CHAIN: u16 = 12;

fn args() -> Args {
    let mut args = Args {
        boards: vec![1, 10],
        seconds: 60.0,
        bus: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--boards" => {
                if let Some(list) = it.next() {
                    args.boards = list.split(',').filter_map(|n| n.parse().ok()).collect();
                }
            }
            "--seconds" => {
                args.seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.seconds)
            }
            "--bus" => args.bus = true,
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// `target/release/board-node`, beside this bench's own directory.
fn board_node() -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/release")
        .join("board-node");
    assert!(
        bin.exists(),
        "{} is missing: cargo build --release --workspace --bins",
        bin.display()
    );
    bin
}

/// CPU seconds (user + system) a process has used, and its resident memory in KiB.
fn usage(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..]
        .split(' ')
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0);
    (ticks / 100.0, rss) // USER_HZ is 100 on Linux
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (_data, running) = runtime.block_on(start_hub(EVENT, None, false));
    let games = Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/world-cup-2025-rapid.pgn");
    let max = args.boards.iter().copied().max().unwrap_or(1);
    let keys = runtime.block_on(enrol_nodes(running.http, 1..=max));
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "board-node dgt{} at the real pace of a DGT board ({} s each; rapid games, a clock message a second)",
        if args.bus { " --bus, 12 boards a chain," } else { "" },
        args.seconds
    );
    println!("boards | node CPU % | node RSS MiB | per board CPU % | emulators CPU % (baseline)");
    for &boards in &args.boards {
        let run = dir.path().join(format!("run-{boards}"));
        std::fs::create_dir_all(&run).unwrap();
        let mut emulators = Vec::new();
        let mut node_args = vec![
            "dgt".to_owned(),
            "--broker".into(),
            running.broker.to_string(),
            "--event".into(),
            EVENT.into(),
            "--outbox".into(),
            run.join("outbox").display().to_string(),
        ];
        if args.bus {
            node_args.insert(1, "--bus".into());
            for first in (1..=boards).step_by(usize::from(CHAIN)) {
                let last = (first + CHAIN - 1).min(boards);
                let link = run.join(format!("chain-{first}"));
                let mut emulator = Command::new(board_node());
                emulator
                    .args(["emulate-dgt", "--bus", "--pgn"])
                    .arg(&games)
                    .arg("--link")
                    .arg(&link);
                node_args.extend(["--serial".into(), link.display().to_string()]);
                for n in first..=last {
                    // The demo's 12 games, again on each chain.
                    let game = (n - 1) % CHAIN + 1;
                    emulator.args(["--chain-board", &format!("{}:{game}", 1000 + n)]);
                    let key_file = run.join(format!("{n}.key"));
                    std::fs::write(&key_file, keys[usize::from(n) - 1].to_text()).unwrap();
                    node_args.extend([
                        "--board".into(),
                        n.to_string(),
                        "--hardware-id".into(),
                        (1000 + n).to_string(),
                        "--key-file".into(),
                        key_file.display().to_string(),
                    ]);
                }
                let emulator = emulator
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("the chain's emulator");
                emulators.push(Killed(emulator));
                while std::fs::symlink_metadata(&link).is_err() {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        for n in (1..=boards).filter(|_| !args.bus) {
            let link = run.join(format!("dgt-{n}"));
            let emulator = Command::new(board_node())
                .args(["emulate-dgt", "--pgn"])
                .arg(&games)
                .args(["--game", &n.to_string(), "--link"])
                .arg(&link)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the emulator");
            emulators.push(Killed(emulator));
            while std::fs::symlink_metadata(&link).is_err() {
                std::thread::sleep(Duration::from_millis(10));
            }
            let key_file = run.join(format!("{n}.key"));
            std::fs::write(&key_file, keys[usize::from(n) - 1].to_text()).unwrap();
            node_args.extend([
                "--board".into(),
                n.to_string(),
                "--serial".into(),
                link.display().to_string(),
                "--key-file".into(),
                key_file.display().to_string(),
                "--hardware-id".into(),
                format!("bench-{n}"),
            ]);
        }
        let node = Killed(
            Command::new(board_node())
                .args(&node_args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("board-node dgt"),
        );
        // The start (a dump per board, the MQTT session) is not what a node costs in a round.
        std::thread::sleep(Duration::from_secs(5));
        let pids: Vec<u32> = emulators.iter().map(|e| e.0.id()).collect();
        let emulated = |pids: &[u32]| pids.iter().map(|p| usage(*p).0).sum::<f64>();
        let (node_before, _) = usage(node.0.id());
        let emulators_before = emulated(&pids);
        let start = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(args.seconds));
        let wall = start.elapsed().as_secs_f64();
        let (node_after, rss) = usage(node.0.id());
        let emulators_after = emulated(&pids);
        let node_cpu = (node_after - node_before) / wall * 100.0;
        println!(
            "{boards:>6} | {node_cpu:>10.2} | {:>12.1} | {:>15.2} | {:>8.2}",
            rss as f64 / 1024.0,
            node_cpu / f64::from(boards),
            (emulators_after - emulators_before) / wall * 100.0,
        );
    }
    runtime.block_on(common::print_hub_counters(
        running.http,
        &[
            "zeitnot_events_accepted_total",
            "zeitnot_bad_payloads_total",
        ],
    ));
}
