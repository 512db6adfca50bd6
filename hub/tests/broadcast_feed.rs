//! The broadcast feed through a real hub: a replayed real round (board-node processes, the
//! embedded broker, the hall configured with the round's time control), then the feed checked
//! against the source PGN by python-chess (every game parses, every move legal, the moves and
//! each move's `%clk` equal to the source's, as is `clock_ms` of `GET /api/boards/{n}`: the
//! clock's display is definitive, 6.10.1) and read by `pgn-extract`; conditional requests
//! (304); a delay the feed never breaks; and the time from a press to the feed's change.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use link::{self, BrokerAddr};
use serde_json::{json, Value};
use support::board::TestBoard;
use support::{http_get, http_json, Hub, Node, Replay};

const FILE: &str = "fide_world_cup_2025_rapid_15+10.pgn";
/// Its games' `TimeControl` tags are in words: "15 min. + 10 s. per move" (game 3) and
/// "15 minutes + 10 seconds increment per move, starting from move 1" (game 29).
const WOMENS_RAPID: &str = "fide_womens_world_rapid_2024.pgn";

/// `GET` with headers; the status, the headers, the body.
fn get(
    http: &support::Web,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, BTreeMap<String, String>, String) {
    support::http_get_with(http, path, headers).expect("HTTP request")
}

fn pgn_extract() -> PathBuf {
    ["/usr/games/pgn-extract", "/usr/bin/pgn-extract"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("pgn-extract is not installed: `apt-get install pgn-extract` (bash .ci/run does)")
}

/// The keys of a JSON document, nested (the first element stands for an array).
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| (k.clone(), shape(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        Value::Array(items) => items
            .first()
            .map(shape)
            .into_iter()
            .collect::<Vec<_>>()
            .into(),
        _ => Value::Null,
    }
}

fn plies(value: &Value) -> usize {
    value["moves"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_replayed_round_reads_in_python_chess_and_pgn_extract_as_the_source_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        "[event]\nname = \"World Cup replay\"\ntime_control = \"900+10\"\n\n\
         [broadcast]\nfolder = \"livechess\"\n",
    );
    // Boards 1–8: World Cup rapid games, whose tags give the classical control (the node is
    // told the real one); boards 9 and 10: the node reads the tag's words itself.
    let mut replays: Vec<Replay> = (1..=8)
        .map(|b| Replay {
            time_control: Some("900+10".into()),
            ..Replay::new(b, FILE, usize::from(b) + 10, 8.0)
        })
        .collect();
    replays.push(Replay::new(9, WOMENS_RAPID, 3, 8.0));
    replays.push(Replay::new(10, WOMENS_RAPID, 29, 8.0));
    let boards: Vec<u16> = replays.iter().map(|r| r.board).collect();
    Node::play_all(&replays, &hub, dir.path());
    let (status, headers, feed) = get(&hub.web, "/broadcast/round/1/games.pgn", &[]);
    assert_eq!(status, 200);
    assert_eq!(
        headers["content-type"],
        "application/x-chess-pgn; charset=utf-8"
    );
    let path = dir.path().join("round-1.pgn");
    std::fs::write(&path, &feed).unwrap();

    // What the oracle compares with: the source game of each board, and what the hub's API
    // says of each move's clock.
    let mut sources = serde_json::Map::new();
    for replay in &replays {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", replay.board));
        sources.insert(
            replay.board.to_string(),
            json!({"pgn": replay.pgn, "game": replay.game, "clock_ms": detail["clock_ms"]}),
        );
    }
    let sources_path = dir.path().join("sources.json");
    std::fs::write(&sources_path, Value::Object(sources).to_string()).unwrap();
    let oracle = support::oracle::python_script("broadcast_feed.py", &[&path, &sources_path]);
    assert!(
        oracle.status.success(),
        "python-chess: {}{}",
        String::from_utf8_lossy(&oracle.stdout),
        String::from_utf8_lossy(&oracle.stderr)
    );
    let report = String::from_utf8_lossy(&oracle.stdout).to_string();
    assert_eq!(report.lines().count(), boards.len(), "{report}");
    eprintln!("{report}");

    let extracted = Command::new(pgn_extract())
        .args(["-s", "-o", "/dev/null"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(extracted.status.success(), "pgn-extract failed");
    let complaints = String::from_utf8_lossy(&extracted.stderr);
    assert!(complaints.trim().is_empty(), "pgn-extract: {complaints}");

    // Nothing changes now: both conditional requests answer 304; one board's game too.
    let etag = headers["etag"].clone();
    let modified = headers["last-modified"].clone();
    assert_eq!(
        get(
            &hub.web,
            "/broadcast/round/1/games.pgn",
            &[("If-None-Match", &etag)]
        )
        .0,
        304
    );
    assert_eq!(
        get(
            &hub.web,
            "/broadcast/round/1/games.pgn",
            &[("If-Modified-Since", &modified)]
        )
        .0,
        304
    );
    let (status, one, game) = get(&hub.web, "/broadcast/round/1/game-3.pgn", &[]);
    assert_eq!(status, 200);
    assert!(game.contains("[Round \"1.3\"]") && feed.contains(&game));
    assert_eq!(
        get(
            &hub.web,
            "/broadcast/round/1/game-3.pgn",
            &[("If-None-Match", &one["etag"])]
        )
        .0,
        304
    );
    assert_eq!(
        http_get(&hub.web, "/broadcast/round/2/games.pgn")
            .unwrap()
            .0,
        404
    );
    assert_eq!(
        http_get(&hub.web, "/broadcast/round/1/game-99.pgn")
            .unwrap()
            .0,
        404
    );

    // The LiveChess folder holds the same games, shaped like DGT LiveChess's own.
    let folder = dir.path().join("livechess");
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(folder.join("round-1/games.pgn"))
        .ok()
        .as_deref()
        != Some(feed.as_str())
    {
        assert!(
            Instant::now() < deadline,
            "the LiveChess folder never caught up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(folder.join("round-1/game-3.pgn")).unwrap(),
        game
    );
    let sample = support::real_data().join("dgt/livechess-folder-sample");
    let read_json = |path: PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let ours = read_json(folder.join("tournament.json"));
    let theirs = read_json(sample.join("tournament.json"));
    assert_eq!(shape(&ours), shape(&theirs));
    assert_eq!(ours["name"], "World Cup replay");
    assert_eq!(ours["rounds"][0]["count"], boards.len());
    let ours = read_json(folder.join("round-1/index.json"));
    let theirs = read_json(sample.join("round-1/index.json"));
    assert_eq!(shape(&ours), shape(&theirs));
    assert_eq!(ours["pairings"].as_array().unwrap().len(), boards.len());
}

#[test]
fn with_a_delay_the_feed_never_shows_a_move_younger_than_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[broadcast]\ndelay_s = 3\n");
    let mut node = Node::start(&Replay::new(1, FILE, 7, 10.0), &hub, dir.path());
    let started = Instant::now();
    // (time, moves the arbiters see) and (time, moves the public sees, its ETag).
    let mut live: Vec<(Duration, usize)> = Vec::new();
    let mut public: Vec<(Duration, usize, String)> = Vec::new();
    let mut finished = None;
    while finished.is_none_or(|at: Instant| at.elapsed() < Duration::from_secs(5)) {
        if let Ok((200, body)) = http_get(&hub.web, "/api/boards/1") {
            live.push((
                started.elapsed(),
                plies(&serde_json::from_str(&body).unwrap()),
            ));
        }
        let (status, headers, pgn) = get(&hub.web, "/broadcast/round/1/game-1.pgn", &[]);
        if status == 200 {
            let moves = pgn.matches("[%clk").count();
            public.push((started.elapsed(), moves, headers["etag"].clone()));
        }
        if finished.is_none() && node.child.try_wait().unwrap().is_some() {
            finished = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let delay = Duration::from_secs(3);
    let slack = Duration::from_millis(300);
    for (at, shown, _) in &public {
        let allowed = live
            .iter()
            .filter(|(t, _)| *t + delay <= *at + slack)
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0);
        assert!(
            *shown <= allowed,
            "at {at:?} the feed shows {shown} moves; {delay:?} before, the board had {allowed}"
        );
    }
    let (_, last_live) = *live.last().unwrap();
    let (_, last_shown, _) = public.last().unwrap();
    assert_eq!(
        *last_shown, last_live,
        "after the delay the feed catches up"
    );
    assert!(last_live > 20);
    // A changed game changes the ETag; an unchanged one keeps it.
    for pair in public.windows(2) {
        let ((_, a, ea), (_, b, eb)) = (&pair[0], &pair[1]);
        assert_eq!(a == b, ea == eb, "moves {a} → {b}, ETag {ea} → {eb}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_reaches_the_feed_within_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::embedded(dir.path());
    let broker = BrokerAddr::plain("127.0.0.1", port);
    let one = hub.enrol("board-1", 1, dir.path());
    let (client, mut events) = link::start(&broker, one.node_link());
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    // The MQTT live feed, as a trusted screen subscribes to it (the embedded broker has no
    // public identity: it cannot hold one to the delayed topics; Mosquitto's ACL can).
    let mut options = hub.pager_link("screen", dir.path());
    options.subscribe = vec![protocol::topic::broadcast_move(
        "default",
        1,
        protocol::BoardNo(1),
    )];
    let (_feed, mut feed) = link::start(&broker, options);
    let (tx, mut arrived) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = feed.recv().await {
            if let link::LinkEvent::Message { payload, .. } = event {
                let _ = tx.send((
                    Instant::now(),
                    serde_json::from_slice::<Value>(&payload).unwrap(),
                ));
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut board = TestBoard::start(1, client, &one).await;
    let moves = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut latencies = Vec::new();
    let mut mqtt_latencies = Vec::new();
    let mut etag = String::new();
    let http = hub.web.clone();
    // Fifteen knight moves: before the position's fifth occurrence ends the game (9.6.1).
    for (i, uci) in moves.iter().cycle().take(15).enumerate() {
        let sent = board.play(uci).await;
        let seen = tokio::task::spawn_blocking({
            let (etag, http) = (etag.clone(), http.clone());
            move || loop {
                let conditional = [("If-None-Match", etag.as_str())];
                let headers = if etag.is_empty() {
                    &[][..]
                } else {
                    &conditional[..]
                };
                let (status, headers, pgn) = get(&http, "/broadcast/round/1/game-1.pgn", headers);
                if status == 200 && pgn.matches("[%clk").count() == i + 1 {
                    return (Instant::now(), headers["etag"].clone());
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .await
        .unwrap();
        latencies.push(seen.0 - sent);
        etag = seen.1;
        let (at, message) = tokio::time::timeout(Duration::from_secs(2), arrived.recv())
            .await
            .expect("a live-feed message per move")
            .unwrap();
        assert_eq!(message["ply"], i + 1);
        assert_eq!(message["uci"], *uci);
        assert!(message["clock_ms"].as_u64().is_some(), "{message}");
        mqtt_latencies.push(at - sent);
    }
    mqtt_latencies.sort();
    eprintln!(
        "press → MQTT live feed: p50 {:?}, p99 {:?}",
        mqtt_latencies[mqtt_latencies.len() / 2],
        mqtt_latencies[mqtt_latencies.len() - 1]
    );
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    eprintln!(
        "press → feed (delay 0, embedded broker, polling every 1 ms): p50 {:?}, p99 {:?}, {} moves",
        pct(0.5),
        pct(0.99),
        latencies.len()
    );
    assert!(pct(0.99) < Duration::from_secs(1));
}

#[test]
fn the_round_is_pushed_to_lichess_with_the_token_and_retried_after_a_failure() {
    let (lichess, received) = support::lichess::stand_in();
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        &format!("[broadcast.lichess]\nurl = \"http://127.0.0.1:{lichess}\"\nround_id = \"AbCd1234\"\ntoken = \"lip_test_token\"\n"),
    );
    let nodes: Vec<Node> = (1..=3)
        .map(|b| {
            Node::start(
                &Replay::new(b, FILE, usize::from(b) + 20, 4.0),
                &hub,
                dir.path(),
            )
        })
        .collect();
    for node in nodes {
        node.finish(Duration::from_secs(60));
    }
    let (_, _, feed) = get(&hub.web, "/broadcast/round/1/games.pgn", &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pushes = received.lock().unwrap().clone();
        if pushes.last().is_some_and(|p| p.body == feed) {
            assert!(pushes.len() >= 2, "the first push failed and was retried");
            for push in &pushes {
                assert_eq!(
                    push.request_line,
                    "POST /api/broadcast/round/AbCd1234/push HTTP/1.1"
                );
                assert_eq!(push.authorization.as_deref(), Some("Bearer lip_test_token"));
                assert!(push
                    .content_type
                    .as_deref()
                    .is_some_and(|c| c.starts_with("text/plain")));
                assert!(push.body.matches("[Event ").count() <= 100);
            }
            assert!(
                pushes[1].at - pushes[0].at >= Duration::from_millis(900),
                "a wait before the retry"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the final round never reached lichess: {} pushes",
            pushes.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
