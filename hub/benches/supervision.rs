//! The supervision page with a full hall: N board nodes stream real games' readings into a
//! hub while the arbiters' page is open in headless Chromium. It reports what the page
//! costs: the live stream's bytes per second beside the nodes' own uplink traffic (the
//! baseline: what the hall sends the hub), the updates per second, the browser's time per
//! update (script, style and layout: the page runs with `?measure`), its long tasks and
//! heap, and each board's last event → its tile on screen.
//!
//! `cargo bench -p zeitnot-hub --bench supervision -- [--nodes N] [--rate R] [--seconds S]`
//! (needs Chromium and `npm ci --prefix hub/tests/browser`, as the tests do).

#[path = "../tests/support/browser.rs"]
#[allow(dead_code)]
mod browser;
mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use browser::Browser;
use common::{connect_nodes, enrol_nodes, node_events, percentile, print_hub_counters, start_hub};
use protocol::seal;
use protocol::{topic, BoardNo, NodeMs, Seq, Uplink};
use rumqttc::QoS;

struct Args {
    nodes: u16,
    rate: f64,
    seconds: f64,
}

fn args() -> Args {
    let mut args = Args {
        nodes: 1_000,
        rate: 0.5,
        seconds: 20.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().and_then(|v| v.parse::<f64>().ok());
        match flag.as_str() {
            "--nodes" => args.nodes = value().map_or(args.nodes, |v| v as u16),
            "--rate" => args.rate = value().unwrap_or(args.rate),
            "--seconds" => args.seconds = value().unwrap_or(args.seconds),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

const EVENT: &str = "bench-supervision";

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn main() {
    let args = args();
    common::block_on(async {
        let (_data, running) = start_hub(EVENT, None, false).await;
        let keys = enrol_nodes(running.http, 1..=args.nodes).await;
        println!(
            "supervision: {} nodes at {} events/s each ({} events/s) for {} s, the arbiters' page in headless Chromium",
            args.nodes,
            args.rate,
            args.rate * f64::from(args.nodes),
            args.seconds
        );
        let mut page = Browser::start();
        page.open_page(&format!("http://{}/?measure", running.http));

        // The nodes: each streams its game's readings at the rate, spread over the interval.
        let pace = Duration::from_secs_f64(1.0 / args.rate);
        let warmup = Duration::from_secs(4);
        let per_node = (args.rate * (args.seconds + warmup.as_secs_f64())) as usize;
        let uplink_bytes = Arc::new(AtomicU64::new(0));
        let last_sent: Arc<Mutex<Vec<u64>>> =
            Arc::new(Mutex::new(vec![0; usize::from(args.nodes) + 1]));
        let publishers = connect_nodes(&running.broker, EVENT, &keys, |_, _| {}).await;
        let began = Instant::now();
        let mut tasks = Vec::new();
        for (n, client, events) in publishers {
            let bodies = node_events(n, per_node);
            let offset = pace.mul_f64(f64::from(n) / f64::from(args.nodes));
            let (bytes_sent, last_sent) = (uplink_bytes.clone(), last_sent.clone());
            let measured_from = began + warmup;
            let key = keys[usize::from(n) - 1].clone();
            tasks.push(tokio::spawn(async move {
                let _events = events;
                let topic = topic::uplink(EVENT, BoardNo(n));
                for (i, body) in bodies.into_iter().enumerate() {
                    let due = began + offset + pace * i as u32;
                    tokio::time::sleep_until(due.into()).await;
                    let seq = i as u64 + 1;
                    let message = Uplink::new(BoardNo(n), Seq(seq), NodeMs(seq * 2_000), body);
                    let bytes = seal::seal_uplink(Some(&key), EVENT, seal::Boot(1), &message);
                    if due >= measured_from {
                        bytes_sent.fetch_add(bytes.len() as u64, Relaxed);
                    }
                    last_sent.lock().unwrap()[usize::from(n)] = wall_ms();
                    let _ = client
                        .publish(topic.clone(), QoS::AtLeastOnce, false, bytes)
                        .await;
                }
            }));
        }

        // Every board is on the map after the warm-up; from then on the page is measured.
        tokio::time::sleep_until((began + warmup).into()).await;
        page.expect(
            "every board on the map",
            &format!(
                "document.querySelectorAll('.tile').length >= {}",
                args.nodes
            ),
            Duration::from_secs(20),
        );
        page.eval("(() => { const s = window.zeitnot.stats; s.updates = 0; s.bytes = 0; s.tilesApplied = 0; s.applyMs = []; s.longTasks = 0; s.parts = { parse: 0, dom: 0, layout: 0 }; })()");
        let measured = Instant::now();
        for task in tasks {
            task.await.expect("node task");
        }
        let seconds = measured.elapsed().as_secs_f64();
        let stats = page.eval("(() => { const s = window.zeitnot.stats; return { updates: s.updates, bytes: s.bytes, tiles: s.tilesApplied, applyMs: s.applyMs, longTasks: s.longTasks, heap: performance.memory ? performance.memory.usedJSHeapSize : null, parts: s.parts, alerts: window.zeitnot.state.alerts.size }; })()");
        // Let the last batch arrive, then read when each tile last changed on screen.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let shown = page.eval("window.zeitnot.stats.tileShownAt");
        let sent = last_sent.lock().unwrap().clone();
        let mut tile_latency: Vec<Duration> = (1..=args.nodes)
            .filter_map(|n| {
                let on_screen = shown[n.to_string()].as_u64()?;
                let sent = sent[usize::from(n)];
                (on_screen >= sent).then(|| Duration::from_millis(on_screen - sent))
            })
            .collect();
        tile_latency.sort();
        let mut apply: Vec<Duration> = stats["applyMs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| Duration::from_secs_f64(v.as_f64().unwrap() / 1e3))
            .collect();
        apply.sort();
        page.screenshot("supervision-1000-boards");

        let updates = stats["updates"].as_f64().unwrap();
        let page_bytes = stats["bytes"].as_f64().unwrap() / seconds;
        let hall_bytes = uplink_bytes.load(Relaxed) as f64 / seconds;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "baseline  the nodes' uplink into the hub:          {:>10.0} bytes/s",
            hall_bytes
        );
        println!(
            "page      the arbiters' live stream to one page:   {:>10.0} bytes/s  ({:.2}x the uplink)  {:.1} updates/s, {:.0} tiles per update",
            page_bytes,
            page_bytes / hall_bytes.max(1.0),
            updates / seconds,
            stats["tiles"].as_f64().unwrap() / updates.max(1.0)
        );
        println!(
            "browser   time per update (script + style + layout): p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  ({} updates; frame budget 16.7 ms); long tasks {}; JS heap {} MB",
            ms(percentile(&apply, 0.50)),
            ms(percentile(&apply, 0.99)),
            ms(apply.last().copied().unwrap_or_default()),
            apply.len(),
            stats["longTasks"],
            stats["heap"].as_f64().map_or("?".into(), |h| format!("{:.1}", h / 1e6))
        );
        let part = |name: &str| stats["parts"][name].as_f64().unwrap_or(0.0) / updates.max(1.0);
        println!(
            "          of which JSON.parse {:.2} ms, DOM writes {:.2} ms, style and layout {:.2} ms; {} open alerts listed (at most 100 drawn)",
            part("parse"),
            part("dom"),
            part("layout"),
            stats["alerts"]
        );
        println!(
            "latency   each board's last event -> its tile on screen: p50 {:.0} ms  p99 {:.0} ms  ({} boards)",
            ms(percentile(&tile_latency, 0.50)),
            ms(percentile(&tile_latency, 0.99)),
            tile_latency.len()
        );
        print_hub_counters(running.http, &["zeitnot_live_", "zeitnot_events_accepted"]).await;
    });
    std::process::exit(0);
}
