//! The biggest broadcast's outlets: a 1,000-board round (each board a whole real rapid game
//! played through the hub's core), its games pushed to ten lichess slices of 100 boards and
//! uploaded as one `games.pgn` by FTP, and the polled feed answering a 100-board slice.
//!
//! - poll: `GET /broadcast/round/1/games.pgn?boards=1-100` as the feed answers it (games
//!   rendered or cached, the slice's `ETag`), against all 1,000 games, the baseline, in the
//!   same run;
//! - push and upload: the outlets as the hub runs them (`hub::edge::outlets`), handed the
//!   round after one game changed and after every slice changed; the time until every
//!   slice's lichess round (a stand-in on loopback answering as lichess does, one request
//!   at a time) and the FTP server (pyftpdlib, from PyPI; `bash .ci/run` installs it) have
//!   it, against one slice's push alone.
//!
//! `cargo bench -p zeitnot-hub --bench outlets`

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hub::config::outlets::{FtpTarget, LichessSlice, LichessTarget};
use hub::core::ids::RoundNo;
use hub::core::relay::slices::BoardRanges;
use hub::edge::outlets::ftp::Uploader;
use hub::edge::outlets::lichess::Pusher;
use hub::edge::outlets::{Outlet, RoundFeed};
use hub::view::feed::{self, FeedCache, FeedGame, FeedSource};

const BOARDS: u16 = 1_000;
const SLICE: u16 = 100;
const RUNS: usize = 20;

fn main() {
    let (hub, now) = common::played_hub(BOARDS);
    let source = FeedSource::of(&hub);
    let mut cache = FeedCache::default();
    let slice: BoardRanges = "1-100".parse().unwrap();
    let poll = |cache: &mut FeedCache, boards: Option<&BoardRanges>| {
        let games =
            feed::section_games(&source, now, RoundNo::FIRST, None, (None, boards), cache).unwrap();
        std::hint::black_box(feed::fingerprint(&games));
        games
    };
    let all = poll(&mut cache, None);
    assert_eq!(all.len(), usize::from(BOARDS));
    let time = |f: &mut dyn FnMut()| {
        let started = Instant::now();
        for _ in 0..RUNS {
            f();
        }
        started.elapsed().as_secs_f64() * 1e3 / RUNS as f64
    };
    let cold_all = time(&mut || drop(poll(&mut FeedCache::default(), None)));
    let cold_slice = time(&mut || drop(poll(&mut FeedCache::default(), Some(&slice))));
    let warm_all = time(&mut || drop(poll(&mut cache, None)));
    let warm_slice = time(&mut || drop(poll(&mut cache, Some(&slice))));
    assert_eq!(poll(&mut cache, Some(&slice)).len(), usize::from(SLICE));
    println!(
        "poll: {BOARDS} boards, the 100-board slice rendered {cold_slice:.1} ms, cached {warm_slice:.2} ms; all {BOARDS} rendered {cold_all:.1} ms, cached {warm_all:.2} ms (the baseline, same run: the slice {:.2}x and {:.2}x of it)",
        cold_slice / cold_all,
        warm_slice / warm_all
    );

    let pairings = hub.rounds().games(RoundNo::FIRST).to_vec();
    common::block_on(push_and_upload(all, pairings));
}

/// A stand-in for lichess's push and round form on loopback: it answers as lichess does
/// and keeps, per lichess round, the fingerprint of the last body it got.
async fn lichess_stand_in() -> (String, Arc<Mutex<BTreeMap<String, u64>>>) {
    use axum::extract::{Path, State};
    use axum::routing::post;
    let got: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let app = axum::Router::new()
        .route(
            "/api/broadcast/round/{id}/push",
            post(
                |State(got): State<Arc<Mutex<BTreeMap<String, u64>>>>,
                 Path(id): Path<String>,
                 body: String| async move {
                    let print = hub::core::fingerprint::fnv1a(body.as_bytes());
                    got.lock().unwrap().insert(id, print);
                    r#"{"games":[]}"#
                },
            ),
        )
        .route("/broadcast/round/{id}/edit", post(|| async { "{}" }))
        .with_state(got.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

/// pyftpdlib on loopback, writable, serving a temporary folder.
struct FtpServer {
    child: std::process::Child,
    port: u16,
    root: tempfile::TempDir,
}

impl FtpServer {
    fn start() -> Option<FtpServer> {
        let root = tempfile::tempdir().ok()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = std::process::Command::new("python3")
            .args([
                "-m",
                "pyftpdlib",
                "-i",
                "127.0.0.1",
                "-w",
                "-u",
                "bench",
                "-P",
                "bench",
            ])
            .args(["-p", &port.to_string(), "-d"])
            .arg(root.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(FtpServer { child, port, root })
    }
}

impl Drop for FtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The round's games with `boards`' games changed (a comment added: a different body).
fn changed(games: &[FeedGame], boards: &[u16], version: usize) -> Vec<FeedGame> {
    games
        .iter()
        .map(|g| {
            if !boards.contains(&g.board.0) {
                return g.clone();
            }
            let pgn = format!("{}{{ v{version} }}\n\n", g.pgn.trim_end());
            FeedGame {
                print: hub::core::fingerprint::fnv1a(pgn.as_bytes()),
                pgn,
                ..g.clone()
            }
        })
        .collect()
}

/// Round 1 as the follower hands it to the outlets.
fn round_feed<'a>(
    games: &'a [FeedGame],
    pairings: &'a [hub::core::pairings::Pairing],
) -> RoundFeed<'a> {
    RoundFeed {
        round: RoundNo::FIRST,
        games,
        pairings,
        first_round: RoundNo::FIRST,
        event_id: "bench",
        event_name: "bench",
    }
}

async fn push_and_upload(games: Vec<FeedGame>, pairings: Vec<hub::core::pairings::Pairing>) {
    let (url, got) = lichess_stand_in().await;
    let slices: Vec<LichessSlice> = (0..BOARDS / SLICE)
        .map(|i| LichessSlice {
            boards: Some(
                format!("{}-{}", i * SLICE + 1, (i + 1) * SLICE)
                    .parse()
                    .unwrap(),
            ),
            round_id: format!("Slice{i:03}"),
        })
        .collect();
    let target = LichessTarget {
        url,
        round_id: None,
        rounds: BTreeMap::from([(RoundNo::FIRST, slices.clone())]),
        token: "lip_bench".into(),
    };
    let mut pusher = Pusher::start(target);
    let ftp = FtpServer::start();
    let mut uploader = ftp.as_ref().map(|server| {
        let url = format!("ftp://bench:bench@127.0.0.1:{}/live", server.port);
        Uploader::start(FtpTarget::from_url(&url).unwrap())
    });
    if ftp.is_none() {
        println!("upload: no pyftpdlib (python3 -m pyftpdlib): `bash .ci/run` installs it; upload not measured");
    }
    let upload_path = ftp
        .as_ref()
        .map(|s| s.root.path().join("live/round-1/games.pgn"));

    // Until lichess's rounds and the FTP file hold `games`: how long it took.
    let delivered = |games: &[FeedGame]| {
        let wanted: BTreeMap<String, u64> = slices
            .iter()
            .map(|s| {
                let body: String = games
                    .iter()
                    .filter(|g| s.boards.as_ref().unwrap().contains(g.board))
                    .map(|g| g.pgn.as_str())
                    .collect();
                (
                    s.round_id.clone(),
                    hub::core::fingerprint::fnv1a(body.as_bytes()),
                )
            })
            .collect();
        let file: String = games.iter().map(|g| g.pgn.as_str()).collect();
        (wanted, file)
    };
    let measure = |pusher: &mut Pusher,
                   uploader: &mut Option<Uploader>,
                   games: Vec<FeedGame>|
     -> (Duration, Option<Duration>) {
        let (wanted, file) = delivered(&games);
        let feed = round_feed(&games, &pairings);
        let handed = Instant::now();
        pusher.round_changed(&feed);
        if let Some(uploader) = uploader {
            uploader.round_changed(&feed);
        }
        let (mut pushed, mut uploaded) = (None, None);
        let deadline = handed + Duration::from_secs(60);
        while pushed.is_none() || (upload_path.is_some() && uploaded.is_none()) {
            assert!(Instant::now() < deadline, "outlets never delivered");
            if pushed.is_none() && *got.lock().unwrap() == wanted {
                pushed = Some(handed.elapsed());
            }
            if let Some(path) = &upload_path {
                if uploaded.is_none() && std::fs::read(path).is_ok_and(|f| f == file.as_bytes()) {
                    uploaded = Some(handed.elapsed());
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        (pushed.unwrap(), uploaded)
    };
    // The first hand-off: every slice from nothing.
    let (first_push, first_upload) = measure(&mut pusher, &mut uploader, games.clone());
    let mut one = Vec::new();
    let mut every = Vec::new();
    let mut baseline = Vec::new();
    for run in 0..10 {
        // One game changed: its slice pushed, the whole file uploaded.
        let board = [(run as u16 * 97) % BOARDS + 1];
        one.push(measure(
            &mut pusher,
            &mut uploader,
            changed(&games, &board, run),
        ));
        // Every slice changed: ten requests in turn, the file uploaded.
        let firsts: Vec<u16> = (0..BOARDS / SLICE).map(|i| i * SLICE + 1).collect();
        every.push(measure(
            &mut pusher,
            &mut uploader,
            changed(&games, &firsts, run + 100),
        ));
        // The baseline: one slice pushed alone (no upload waited for).
        let feed_games = changed(&games, &[1], run + 200);
        let (wanted, _) = delivered(&feed_games);
        let feed = round_feed(&feed_games, &pairings);
        let handed = Instant::now();
        pusher.round_changed(&feed);
        while *got.lock().unwrap() != wanted {
            std::thread::sleep(Duration::from_millis(1));
        }
        baseline.push(handed.elapsed());
        // Let the uploader catch up before the next run.
        if let Some(uploader) = &mut uploader {
            uploader.round_changed(&feed);
        }
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let stats = |v: &mut Vec<Duration>| {
        v.sort();
        (ms(common::percentile(v, 0.5)), ms(*v.last().unwrap()))
    };
    let mut one_push: Vec<Duration> = one.iter().map(|(p, _)| *p).collect();
    let mut every_push: Vec<Duration> = every.iter().map(|(p, _)| *p).collect();
    let base = stats(&mut baseline);
    let (one_p50, one_max) = stats(&mut one_push);
    let (every_p50, every_max) = stats(&mut every_push);
    println!(
        "push: {BOARDS} boards in {} lichess slices of {SLICE} (one request at a time): first hand-off {:.0} ms; one game changed p50 {one_p50:.0} ms, max {one_max:.0} ms; every slice changed p50 {every_p50:.0} ms, max {every_max:.0} ms; one slice alone (the baseline, same run) p50 {:.0} ms (every slice {:.1}x it)",
        BOARDS / SLICE,
        ms(first_push),
        base.0,
        every_p50 / base.0.max(0.001)
    );
    if let Some(first_upload) = first_upload {
        let mut uploads: Vec<Duration> = one.iter().chain(&every).filter_map(|(_, u)| *u).collect();
        let (p50, max) = stats(&mut uploads);
        println!(
            "upload: games.pgn of {BOARDS} games ({:.1} MB) by FTP to pyftpdlib: first {:.0} ms; after a change p50 {p50:.0} ms, max {max:.0} ms (uploads at most once a second)",
            games.iter().map(|g| g.pgn.len()).sum::<usize>() as f64 / 1e6,
            ms(first_upload),
        );
    }
    drop(pusher);
    drop(uploader);
}
