//! The hub's core alone, in memory, on one thread: the events of `hall_throughput`'s
//! saturated hall (`--nodes` boards, each `--events` readings of a real game,
//! `common::node_events`; the boards' events interleaved as their nodes send them) through
//! `Hub::handle_uplink`: the sequence check, the rules, the alert desk and its deadlines, the
//! relay, the outputs and what waits for the journal. Every `--batch` events the journal
//! reports a flush, as the flusher does, and every output is taken. No broker, no sled, no
//! seals: what the hub's loop costs per event beside the threads around it.
//!
//! The baseline, in the same run: the same events through the rules alone (`Hall::admit`
//! and `Hall::apply`), what no hub can do without. Prints ns per event for both, best of
//! three, and their ratio: the share of the loop's time that is not the rules.
//!
//! `cargo bench -p zeitnot-hub --bench hub_core -- [--nodes N] [--events M] [--batch B]`

mod common;

use std::time::Instant;

use hub::core::hall::Hall;
use hub::core::hub::{Hub, HubConfig, Output};
use hub::core::record::Record;
use hub::core::time::HubMs;
use protocol::{BoardNo, NodeMs, Seq, Uplink};

struct Args {
    nodes: u16,
    events: usize,
    batch: usize,
}

fn args() -> Args {
    let mut args = Args {
        nodes: 1000,
        events: 300,
        batch: 170,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().and_then(|v| v.parse::<usize>().ok());
        match flag.as_str() {
            "--nodes" => args.nodes = value().map_or(args.nodes, |v| v as u16),
            "--events" => args.events = value().unwrap_or(args.events),
            "--batch" => args.batch = value().unwrap_or(args.batch).max(1),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// The hall's events in the order they arrive: each board's next in turn, the hub's clock
/// moving 8 ms a turn (a saturated hall's pace; the nodes' clocks a reading a second).
fn hall_events(args: &Args) -> Vec<(HubMs, Uplink)> {
    let bodies: Vec<_> = (1..=args.nodes)
        .map(|n| common::node_events(n, args.events))
        .collect();
    let mut events = Vec::with_capacity(usize::from(args.nodes) * args.events);
    for turn in 0..args.events {
        let now = HubMs(1_000 + turn as u64 * 8);
        for (board, bodies) in (1..=args.nodes).zip(&bodies) {
            let seq = turn as u64 + 1;
            let event = Uplink::new(
                BoardNo(board),
                Seq(seq),
                NodeMs(seq * 1_000),
                bodies[turn].clone(),
            );
            events.push((now, event));
        }
    }
    events
}

/// Seconds for every event through the hub's core; the outputs taken count.
fn through_core(events: &[(HubMs, Uplink)], batch: usize) -> (f64, usize) {
    let mut hub = Hub::new(HubConfig {
        event: "bench".into(),
        open_hall: true,
        ..HubConfig::default()
    });
    let mut outputs = 0;
    let mut written = None;
    let started = Instant::now();
    for (i, (now, event)) in events.iter().enumerate() {
        if hub.poll_timeout().is_some_and(|due| due <= *now) {
            hub.handle_timeout(*now);
        }
        hub.handle_uplink(*now, event.clone());
        while let Some(output) = hub.poll_output() {
            if let Output::Write(at, _) = output {
                written = Some(at);
            }
            outputs += 1;
        }
        if (i + 1) % batch == 0 {
            if let Some(at) = written.take() {
                hub.handle_durable(*now, at);
            }
        }
    }
    (started.elapsed().as_secs_f64(), outputs)
}

/// Seconds for every event through the rules alone.
fn through_rules(events: &[(HubMs, Uplink)]) -> f64 {
    let mut hall = Hall::default();
    let started = Instant::now();
    for (now, event) in events {
        let _ = hall.admit(*now, event);
        let _ = hall.apply(&Record {
            at: *now,
            event: event.clone(),
        });
    }
    started.elapsed().as_secs_f64()
}

fn main() {
    let args = args();
    let events = hall_events(&args);
    let total = events.len() as f64;
    let (mut core, mut rules, mut outputs) = (f64::MAX, f64::MAX, 0);
    for _ in 0..3 {
        rules = rules.min(through_rules(&events));
        let (seconds, taken) = through_core(&events, args.batch);
        core = core.min(seconds);
        outputs = taken;
    }
    println!(
        "hub_core: {} boards x {} events = {} events, a flush every {} (best of 3)",
        args.nodes, args.events, total, args.batch
    );
    println!(
        "baseline  the rules alone (Hall::admit + apply):   {:>7.0} ns per event  {:>9.0} events/s",
        rules * 1e9 / total,
        total / rules
    );
    println!(
        "hub       the hub's core (Hub::handle_uplink):      {:>7.0} ns per event  {:>9.0} events/s  ({outputs} outputs)",
        core * 1e9 / total,
        total / core
    );
    println!("ratio     hub / rules time: {:.2}", core / rules);
}
