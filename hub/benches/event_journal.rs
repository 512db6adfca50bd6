//! A whole event's journal (issue 17): `--rounds` rounds on `--boards` boards, every board
//! playing a real classical game each round (FIDE World Cup 2025) as a live DGT board reports
//! it: the pieces lifted and set down, a press per move, and a clock reading every
//! `--clock-every-s` seconds while a clock runs. The journal is written through the hub's own
//! core (every event folded, every round started over the same path as `POST
//! /api/rounds/{r}/start`, every finished game archived), the last round stopped halfway, as
//! if the hub crashed during it.
//!
//! Then it prints the journal's size on disk, and the time a restart takes (`hub serve`'s
//! own restore: the boards resumed where the last round started, only that round's events
//! replayed) beside the baseline in the same run: the same journal replayed whole, every
//! round's events through the core.
//!
//! The node sends the readings that are news and the latest of the others at its 5 s
//! heartbeat (`board_node::clock_news`); `--every-reading` journals every reading, as before.
//! Each round's start moves the finished rounds' events out of sled into the compressed
//! round archive, as the hub's round archiver does (`hub::edge::journal::round_archive`).
//! The restart is measured in a process of its own (this benchmark run again with
//! `--restart-only`), so its memory is the restarted hub's alone.
//!
//! Prints `disk_bytes N`, `restart_s X` and `rss_after_restart_mib Y`.
//!
//! `cargo bench -p zeitnot-hub --bench event_journal -- --boards 500 --rounds 11`

use std::path::Path;
use std::time::Instant;

use board_node::{clock_news, pgn, replay};
use hub::core::hub::{Hub, HubConfig, Journaled, Output, Replayed, RequestId, StartRequest};
use hub::core::ids::RoundNo;
use hub::core::time::HubMs;
use hub::edge::journal::Journal;
use hub::metrics::Metrics;
use protocol::{BoardNo, NodeMs, Seq, Uplink};

mod common;

use common::{classical_games, with_running_clock, CLASSICAL_TIME_CONTROL};

/// `board-node`'s heartbeat after silence.
const HEARTBEAT_MS: u64 = 5_000;

struct Args {
    boards: u16,
    rounds: u16,
    clock_every_ms: u64,
    /// A journal written by an earlier run (`--data DIR`, kept): measured again, not written.
    data: Option<std::path::PathBuf>,
    every_reading: bool,
    /// Only the restart of `--data`, in this process.
    restart_only: bool,
}

fn args() -> Args {
    let mut args = Args {
        boards: 500,
        rounds: 11,
        clock_every_ms: 1_000,
        data: None,
        every_reading: false,
        restart_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--data" => {
                args.data = it.next().map(Into::into);
                continue;
            }
            "--every-reading" => {
                args.every_reading = true;
                continue;
            }
            "--restart-only" => {
                args.restart_only = true;
                continue;
            }
            _ => {}
        }
        let mut value = || it.next().and_then(|v| v.parse::<u64>().ok());
        match flag.as_str() {
            "--boards" => args.boards = value().map_or(args.boards, |v| v as u16),
            "--rounds" => args.rounds = value().map_or(args.rounds, |v| v as u16),
            "--clock-every-s" => {
                args.clock_every_ms = value().map_or(args.clock_every_ms, |v| v * 1000)
            }
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

fn du(path: &Path) -> u64 {
    walk(path)
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

fn walk(path: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Writes the event through the core, as `hub serve` would have.
fn write_event(
    args: &Args,
    config: &HubConfig,
    tc: &protocol::time_control::TimeControl,
    games: &[pgn::PgnGame],
    data: &Path,
) {
    let started = Instant::now();
    let metrics = Metrics::default();
    let journal = Journal::open(data).expect("the journal");
    let (mut hub, _) = hub::run::restore(config, &journal, &metrics).expect("a new hub");
    let mut events = 0u64;
    let mut writes = 0u64;
    let mut seqs = vec![0u64; usize::from(args.boards) + 1];
    let mut now = 1_790_000_000_000u64;
    // The hub's flusher group-commits continuously; flushing every 50,000 writes keeps sled's
    // dirty pages as few here.
    let carry = |hub: &mut Hub, at: u64, writes: &mut u64| {
        for output in hub.poll_all_durable(HubMs(at)) {
            if let Output::Write(_, write) = output {
                journal.write(&write).expect("a journal write");
                *writes += 1;
                if (*writes).is_multiple_of(50_000) {
                    journal.flush().expect("a flush");
                }
            }
        }
    };
    for round in 1..=args.rounds {
        if round > 1 {
            let start = StartRequest {
                round: RoundNo(round),
                section: None,
                force: true,
                by: "bench".into(),
                login: None,
            };
            hub.handle_round_start(HubMs(now), RequestId(u64::from(round)), start);
            carry(&mut hub, now, &mut writes);
            // What the journal's round archiver does once the start is durable.
            journal.flush().expect("a flush");
            let archiving = Instant::now();
            for done in journal
                .archive_finished()
                .expect("the finished rounds archived")
            {
                println!(
                    "  archived  events database {} ({} events, {:.1} MiB, {:.1} B an event) in {:.1} s",
                    done.ordinal,
                    done.events,
                    done.bytes as f64 / f64::from(1u32 << 20),
                    done.bytes as f64 / done.events.max(1) as f64,
                    archiving.elapsed().as_secs_f64()
                );
            }
        }
        let mut longest = 0;
        let mut played_ms = 0;
        for board in 1..=args.boards {
            let game = &games[(usize::from(board) * 7 + usize::from(round) * 13) % games.len()];
            let mut script = clock_news::published(
                &with_running_clock(replay::script(game, Some(tc)), args.clock_every_ms),
                HEARTBEAT_MS,
                !args.every_reading,
            );
            if round == args.rounds {
                script.truncate(script.len() / 2);
            }
            played_ms += script.last().map_or(0, |t| t.game_ms);
            for timed in script {
                let seq = &mut seqs[usize::from(board)];
                *seq += 1;
                let at = now + timed.game_ms;
                longest = longest.max(timed.game_ms);
                let event =
                    Uplink::new(BoardNo(board), Seq(*seq), NodeMs(at), timed.reading.body());
                hub.handle_uplink(HubMs(at), event);
                carry(&mut hub, at, &mut writes);
                events += 1;
            }
        }
        journal.flush().expect("a flush");
        now += longest + 3_600_000;
        println!(
            "  round {round:>2}: {events:>11} events journaled so far (games of {:.1} h on average), {:.0} s, RSS {:.0} MiB, {} alerts",
            played_ms as f64 / f64::from(args.boards) / 3_600_000.0,
            started.elapsed().as_secs_f64(),
            rss_mib(),
            hub.desk().alerts().count()
        );
    }
    drop(hub);
    journal.flush().expect("a flush");
    drop(journal);
    let written_s = started.elapsed().as_secs_f64();
    let bytes = du(data);
    println!(
        "journal   {events} events, {writes} writes in {written_s:.0} s ({:.0} B an event on disk)",
        bytes as f64 / events as f64
    );
}

/// The restart `hub serve` makes: the boards resumed where the last round started.
fn restart(config: &HubConfig, data: &Path) {
    let metrics = Metrics::default();
    let before = rss_mib();
    let t = Instant::now();
    let journal = Journal::open(data).expect("the journal again");
    let opened = rss_mib();
    let (hub, restored) = hub::run::restore(config, &journal, &metrics).expect("the restore");
    let restart_s = t.elapsed().as_secs_f64();
    let rss = rss_mib();
    println!(
        "restart   {restart_s:.2} s: {} records replayed, {} boards resumed, {} archived games; RSS {before:.0} MiB before the journal is opened, {opened:.0} MiB once open, {rss:.0} MiB restored",
        restored.records,
        restored.resumed,
        hub.archive().len()
    );
    println!("restart_s {restart_s:.3}");
    println!("rss_after_restart_mib {rss:.0}");
    println!(
        "rounds {}",
        serde_json::to_string(&hub.round_states()).expect("rounds as JSON")
    );
}

fn main() {
    let args = args();
    let games = classical_games();
    let tc: protocol::time_control::TimeControl = CLASSICAL_TIME_CONTROL.parse().unwrap();
    let config = HubConfig {
        event: "bench".into(),
        time_control: Some(tc.clone()),
        ..HubConfig::default()
    };
    let dir = tempfile::tempdir_in(
        std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "../target".into()),
    )
    .expect("a directory for the journal");
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| dir.path().join("journal"));
    if args.restart_only {
        restart(&config, &data);
        return;
    }
    println!(
        "event_journal: {} rounds x {} boards, real classical games, a clock reading every {} s while a clock runs ({}); the last round stopped halfway",
        args.rounds,
        args.boards,
        args.clock_every_ms / 1000,
        if args.every_reading {
            "every reading journaled"
        } else {
            "those a node sends journaled"
        }
    );

    if data.join("db").exists() {
        println!("journal   as written before in {}", data.display());
    } else {
        write_event(&args, &config, &tc, &games, &data);
    }
    let disk_bytes = du(&data);
    println!(
        "journal   on disk {:.2} GiB",
        disk_bytes as f64 / f64::from(1u32 << 30)
    );
    println!("disk_bytes {disk_bytes}");

    // The restart `hub serve` makes, in a process of its own.
    let restarted = std::process::Command::new(std::env::current_exe().expect("this bench"))
        .arg("--restart-only")
        .arg("--data")
        .arg(&data)
        .args(["--boards", &args.boards.to_string()])
        .output()
        .expect("the restart runs");
    let report = String::from_utf8_lossy(&restarted.stdout);
    for line in report.lines().filter(|l| !l.starts_with("rounds ")) {
        println!("{line}");
    }
    assert!(
        restarted.status.success(),
        "the restart failed: {}",
        String::from_utf8_lossy(&restarted.stderr)
    );
    let restart_s: f64 = report
        .lines()
        .find_map(|l| l.strip_prefix("restart_s "))
        .and_then(|v| v.parse().ok())
        .expect("the restart's time");
    let summary = report
        .lines()
        .find_map(|l| l.strip_prefix("rounds "))
        .expect("the restarted rounds")
        .to_owned();
    let journal = Journal::open(&data).expect("the journal again");

    // The baseline: the same journal replayed whole (the round starts without the nodes they
    // kept), every round's events through the core.
    let t = Instant::now();
    let mut rounds: Vec<_> = journal.rounds().map(Result::unwrap).collect();
    for start in &mut rounds {
        start.nodes.clear();
    }
    let mut full = Hub::new(config.clone());
    let replayed = full.restore(Journaled {
        rounds,
        games: Vec::new(),
        records: journal.replay().map(|r| Replayed::Record(r.unwrap())),
        heads: Vec::new(),
        decisions: journal.decisions().map(Result::unwrap).collect(),
        alerts: journal.alerts().map(Result::unwrap).collect(),
        bindings: Default::default(),
        enrolments: Default::default(),
        arbiters: Default::default(),
        hall_secret: None,
    });
    let baseline_s = t.elapsed().as_secs_f64();
    assert_eq!(
        serde_json::to_string(&full.round_states()).unwrap(),
        summary,
        "the restart and the full replay give the same event"
    );
    println!(
        "baseline  full replay {baseline_s:.2} s: {} records",
        replayed.records
    );
    println!(
        "ratio     restart / full replay: {:.3}",
        restart_s / baseline_s
    );
}
