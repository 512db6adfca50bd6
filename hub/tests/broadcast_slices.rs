//! The biggest events' broadcast through a real hub: a round of 240 paired boards, real
//! games replayed on some (board-node processes), a board whose illegal move the arbiter
//! takes back (7.5.1: the position before it is reinstated), forfeits and scored games,
//! pushed in three slices to a stand-in that keeps lichess's rules (support/lichess.rs:
//! 100 games a request and a round, the token, plain-text PGN, one request at a time, a
//! 429 answered once and a minute kept after it) and uploaded to an FTP server from PyPI
//! (pyftpdlib) as chess.com takes it. Every game on each outlet, read by python-chess, is
//! the hub's feed's and the source's (moves, `%clk`, result, tags), one mainline, in its
//! slice; each slice's lichess round is marked finished when its last board has a result,
//! started again when an arbiter withdraws one, finished again when it is re-entered.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shakmaty::Position;
use support::board::{Incident, TestBoard};
use support::{http_get, http_json, http_post, Hub, Node, Replay};

const FILE: &str = "fide_world_cup_2025_rapid_15+10.pgn";
const BOARDS: u16 = 240;
const SLICES: [(&str, &str, std::ops::RangeInclusive<u16>); 3] = [
    ("1-80", "SliceOne", 1..=80),
    ("81-160", "SliceTwo", 81..=160),
    ("161-240", "SliceThr", 161..=240),
];
/// Boards with a real game replayed on them (board, game of the file).
const REPLAYED: [(u16, usize); 5] = [(1, 3), (2, 4), (81, 5), (161, 6), (162, 7)];
/// The board of the illegal move the arbiter takes back.
const CORRECTED: u16 = 3;
/// The last board of each slice: its result comes last.
const LAST: [u16; 3] = [80, 160, 240];

/// An FTP server from PyPI (pyftpdlib), writable by one login, serving `root`.
struct FtpServer {
    child: Child,
    port: u16,
}

impl FtpServer {
    fn start(root: &Path) -> FtpServer {
        FtpServer::start_with(root, &[])
    }

    /// With more of pyftpdlib's options (`--tls`, …).
    fn start_with(root: &Path, options: &[&str]) -> FtpServer {
        std::fs::create_dir_all(root).unwrap();
        let port = support::free_port();
        let login = ["-i", "127.0.0.1", "-w", "-u", "zeit", "-P", "s3cret:pw"];
        let child = Command::new("python3")
            .args(["-m", "pyftpdlib"])
            .args(login)
            .args(options)
            .args(["-p", &port.to_string(), "-d"])
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m pyftpdlib (bash .ci/run installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the FTP server never listened");
            std::thread::sleep(Duration::from_millis(100));
        }
        FtpServer { child, port }
    }
}

impl Drop for FtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What python-chess reads in a PGN text: each game as `oracle/outlet_games.py` prints it,
/// by its `Round` tag.
fn read_games(pgn: &str, dir: &Path) -> BTreeMap<String, Value> {
    let path = dir.join(format!("read-{}.pgn", rand_name()));
    std::fs::write(&path, pgn).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/outlet_games.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let games: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut by_round = BTreeMap::new();
    for game in games {
        let round = game["tags"]["Round"].as_str().unwrap().to_owned();
        assert!(
            by_round.insert(round.clone(), game).is_none(),
            "game {round} twice"
        );
    }
    by_round
}

fn rand_name() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn decide(hub: &Hub, board: u16, decision: Value) {
    let (status, body) = http_post(
        &hub.web,
        &format!("/api/rounds/1/boards/{board}/decisions"),
        &decision.to_string(),
    )
    .unwrap();
    assert_eq!(status, 200, "board {board}: {decision}: {body}");
}

/// The arbiter declares `result` with its cause (`*` withdraws the declaration).
fn result(hub: &Hub, board: u16, result: &str) {
    let cause = match result {
        "+-" | "-+" | "--" => Some("forfeit"),
        "1-0" | "0-1" => Some("resignation"),
        "1/2-1/2" => Some("draw_agreement"),
        _ => None,
    };
    let decision =
        json!({"arbiter": "IA Slice", "decision": "result", "result": result, "cause": cause});
    decide(hub, board, decision);
}

/// The result the arbiter scores an unplayed board with: forfeits (the game not played:
/// `+-`, `--`) and results from scoresheets.
fn scored(board: u16) -> &'static str {
    match board % 10 {
        0 => "+-",
        5 => "--",
        _ => ["1-0", "0-1", "1/2-1/2"][usize::from(board % 3)],
    }
}

/// The PGN `Result` a result of the API shows as (forfeits as the points they give).
fn pgn_result(result: &str) -> &str {
    match result {
        "+-" => "1-0",
        "-+" => "0-1",
        "--" => "0-0",
        other => other,
    }
}

fn source_result(replay: &Replay) -> String {
    let text = std::fs::read(&replay.pgn).unwrap();
    let game = board_node::pgn::read_game(&text, replay.game).unwrap();
    game.tags
        .iter()
        .find(|(k, _)| k == "Result")
        .map(|(_, v)| v.clone())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_round_of_240_boards_reaches_three_lichess_slices_and_ftp_as_the_arbiters_decided() {
    let dir = tempfile::tempdir().unwrap();
    let (lichess, seen) = support::lichess::rules_stand_in("lip_slices", 3);
    let ftp_root = dir.path().join("ftp");
    let ftp = FtpServer::start(&ftp_root);
    let mut csv = String::from("board,white,black\n");
    for b in 1..=BOARDS {
        csv.push_str(&format!(
            "{b},\"White, Player {b}\",\"Black, Player {b}\"\n"
        ));
    }
    std::fs::write(dir.path().join("round-1.csv"), csv).unwrap();
    let slices: Vec<String> = SLICES
        .iter()
        .map(|(boards, id, _)| format!("{{ boards = \"{boards}\", round_id = \"{id}\" }}"))
        .collect();
    let config = format!(
        "[broadcast]\ndelay_s = 0\n\n\
         [broadcast.lichess]\nurl = \"http://127.0.0.1:{lichess}\"\ntoken = \"lip_slices\"\n\n\
         [broadcast.ftp]\nurl = \"ftp://zeit:s3cret%3Apw@127.0.0.1:{}/live\"\n\n\
         [[rounds]]\nnumber = 1\npairings = \"round-1.csv\"\nlichess_slices = [ {} ]\n",
        ftp.port,
        slices.join(", ")
    );
    let (hub, port) = Hub::configured(dir.path(), &config);

    // Real games on five boards, 25 s each.
    let replays: Vec<Replay> = REPLAYED
        .iter()
        .map(|&(board, game)| Replay::new(board, FILE, game, 25.0))
        .collect();
    let nodes: Vec<Node> = replays
        .iter()
        .map(|r| Node::start(r, &hub, dir.path()))
        .collect();

    // Board 3: an illegal move (the king two squares), the position before it reinstated
    // (7.5.1), then the game goes on and is drawn.
    let enrolled = hub.enrol(&format!("board-{CORRECTED}"), CORRECTED, dir.path());
    let session = support::board::node_session(port, &enrolled).await;
    let mut corrected = TestBoard::start(CORRECTED, session, &enrolled).await;
    Incident::IllegalMove.cause(&mut corrected).await;
    let wait_alert = Instant::now() + Duration::from_secs(20);
    while !http_json(&hub.web, "/api/alerts")
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["kind"] == "illegal_move" && a["board"] == CORRECTED)
    {
        assert!(
            Instant::now() < wait_alert,
            "no illegal-move alert at board {CORRECTED}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    decide(
        &hub,
        CORRECTED,
        json!({"arbiter": "IA Slice", "decision": "reinstate", "ply": 1}),
    );
    let after_e4 = corrected.position.board().clone();
    corrected.show(&after_e4).await;
    corrected.play("e7e5").await;
    corrected.play("g1f3").await;

    // The unplayed boards are scored while the games go on (forfeits among them), all but
    // the last board of each slice.
    let replayed: Vec<u16> = REPLAYED.iter().map(|(b, _)| *b).collect();
    let unplayed: Vec<u16> = (1..=BOARDS)
        .filter(|b| !replayed.contains(b) && *b != CORRECTED)
        .collect();
    for &board in unplayed.iter().filter(|b| !LAST.contains(b)) {
        result(&hub, board, scored(board));
    }
    let mut declared: BTreeMap<u16, String> = unplayed
        .iter()
        .map(|&b| (b, pgn_result(scored(b)).to_owned()))
        .collect();
    for node in nodes {
        node.finish(Duration::from_secs(120));
    }
    for replay in &replays {
        let source = source_result(replay);
        let board = http_json(&hub.web, &format!("/api/boards/{}", replay.board));
        if board["result"] == "*" {
            result(&hub, replay.board, &source);
        }
        declared.insert(replay.board, source);
    }
    result(&hub, CORRECTED, "1/2-1/2");
    declared.insert(CORRECTED, "1/2-1/2".to_owned());
    // No slice is finished while its last board plays on.
    tokio::time::sleep(Duration::from_secs(3)).await;
    {
        let seen = seen.lock().unwrap();
        assert!(
            seen.marks
                .iter()
                .all(|(_, _, status, _)| status != "finished"),
            "a slice marked finished before its last board had a result: {:?}",
            seen.marks
        );
    }
    // Meanwhile lichess's 429 is the arbiters' to see, with the wait it asks for.
    let outlets = http_json(&hub.web, "/api/broadcast/outlets");
    let lichess_status = outlets
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["outlet"] == "lichess")
        .unwrap()
        .clone();
    assert!(
        lichess_status["failing"]
            .as_str()
            .is_some_and(|f| f.contains("429"))
            && lichess_status["waiting_until"].is_u64(),
        "{lichess_status}"
    );
    let last_scored = Instant::now();
    for board in LAST {
        result(&hub, board, scored(board));
    }

    // Each slice's lichess round is marked finished (after the minute the 429 asks for).
    let marked = |id: &str, status: &str, count: usize| {
        let seen = seen.lock().unwrap();
        seen.marks
            .iter()
            .filter(|(_, i, s, _)| i == id && s == status)
            .count()
            >= count
    };
    let deadline = Instant::now() + Duration::from_secs(150);
    while !SLICES.iter().all(|(_, id, _)| marked(id, "finished", 1)) {
        assert!(
            Instant::now() < deadline,
            "slices never marked finished: {:?}",
            seen.lock().unwrap().marks
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // An arbiter withdraws board 1's result: its slice is started again; re-entered, finished.
    result(&hub, 1, "*");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marked("SliceOne", "started", 1) {
        assert!(
            Instant::now() < deadline,
            "the slice was not reopened: {:?}",
            seen.lock().unwrap().marks
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    result(&hub, 1, &declared[&1].clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marked("SliceOne", "finished", 2) {
        assert!(
            Instant::now() < deadline,
            "not finished again: {:?}",
            seen.lock().unwrap().marks
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Every outlet holds the hub's feed, game for game, and the source's games.
    let (status, feed) = http_get(&hub.web, "/broadcast/round/1/games.pgn").unwrap();
    assert_eq!(status, 200);
    let hub_games = read_games(&feed, dir.path());
    assert_eq!(hub_games.len(), usize::from(BOARDS));
    let deadline = Instant::now() + Duration::from_secs(20);
    let uploaded = loop {
        let file =
            std::fs::read_to_string(ftp_root.join("live/round-1/games.pgn")).unwrap_or_default();
        if file == feed {
            break file;
        }
        assert!(Instant::now() < deadline, "the FTP upload is not the feed");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(read_games(&uploaded, dir.path()), hub_games, "FTP");
    let outlets = http_json(&hub.web, "/api/broadcast/outlets");
    for outlet in outlets.as_array().unwrap() {
        assert!(outlet["failing"].is_null(), "{outlet}");
        assert!(
            !outlet["target"].as_str().unwrap().contains("s3cret"),
            "{outlet}"
        );
    }
    let lichess_status = &outlets[0]["destinations"];
    assert_eq!(lichess_status["SliceTwo"]["games"], 80, "{outlets}");
    assert_eq!(lichess_status["SliceTwo"]["finished"], true, "{outlets}");
    assert_eq!(
        outlets[1]["destinations"]["live/round-1/games.pgn"]["games"], 240,
        "{outlets}"
    );
    let seen = seen.lock().unwrap();
    assert!(
        seen.broken.is_empty(),
        "lichess's rules broken: {:#?}",
        seen.broken
    );
    let too_many = seen.too_many_at.expect("the stand-in answered 429 once");
    let after: Vec<&(Instant, String)> = seen
        .requests
        .iter()
        .filter(|(at, _)| *at > too_many)
        .collect();
    assert!(
        after
            .first()
            .is_some_and(|(at, _)| at.duration_since(too_many) >= Duration::from_secs(60)),
        "a minute of silence after the 429"
    );
    for (at, id, status, all_decided) in &seen.marks {
        if status == "finished" {
            assert!(all_decided, "{id} marked finished with a game in play");
            assert!(
                *at > last_scored,
                "{id} marked finished before its last board's result"
            );
        }
    }
    for (boards, id, range) in SLICES {
        let pushed: String = seen.rounds[id].values().cloned().collect();
        let games = read_games(&pushed, dir.path());
        assert_eq!(games.len(), range.clone().count(), "{id} ({boards})");
        for (round, game) in &games {
            let board: u16 = round.strip_prefix("1.").unwrap().parse().unwrap();
            assert!(
                range.contains(&board),
                "board {board} outside slice {boards}"
            );
            assert_eq!(
                game, &hub_games[round],
                "{id}: board {board} is not the hub's"
            );
            assert!(game["errors"].as_array().unwrap().is_empty(), "{game}");
            assert!(
                game["variations"].as_u64().unwrap() <= 1,
                "a variation at board {board}"
            );
            assert_eq!(game["tags"]["White"], format!("White, Player {board}"));
            assert_eq!(game["tags"]["Black"], format!("Black, Player {board}"));
            assert_eq!(game["tags"]["Result"], declared[&board], "board {board}");
            let sans: Vec<&str> = game["sans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            if let Some(replay) = replays.iter().find(|r| r.board == board) {
                assert_eq!(sans, replay.sans, "board {board}: the source's moves");
            } else if board == CORRECTED {
                assert_eq!(sans, ["e4", "e5", "Nf3"], "the illegal move never shows");
            } else {
                assert!(sans.is_empty(), "board {board} was not played");
                let forfeit = matches!(scored(board), "+-" | "--");
                assert_eq!(
                    game["tags"]
                        .get("Termination")
                        .is_some_and(|t| t == "forfeit"),
                    forfeit,
                    "board {board}"
                );
            }
        }
    }
}

/// FTPS (explicit TLS, control and data) to a hall's own server: its certificate from the
/// hall CA (as `hub broker-cert` issues one), checked against `[broadcast.ftp] ca`. Without
/// the `ca` the web's roots refuse it, and the arbiters see why.
#[test]
fn a_round_goes_by_ftps_to_the_halls_own_server_and_a_refused_certificate_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let ca_dir = dir.path().join("ca");
    std::fs::create_dir_all(&ca_dir).unwrap();
    let (cert, key) = hub::edge::keys::hall_ca::issue_for(&ca_dir, &[]).unwrap();
    let (crt_file, key_file) = (dir.path().join("ftp.crt"), dir.path().join("ftp.key"));
    std::fs::write(&crt_file, cert).unwrap();
    std::fs::write(&key_file, key).unwrap();
    let ca = hub::edge::keys::hall_ca::ca_pem(&ca_dir).unwrap();
    std::fs::write(dir.path().join("ftp-ca.pem"), ca).unwrap();
    let root = dir.path().join("ftp");
    let tls = [
        "--tls",
        "--certfile",
        crt_file.to_str().unwrap(),
        "--keyfile",
        key_file.to_str().unwrap(),
        "--tls-control-required",
        "--tls-data-required",
    ];
    let ftp = FtpServer::start_with(&root, &tls);
    let pairings = "board,white,black\n1,\"A, Ann\",\"B, Bo\"\n2,\"C, Cy\",\"D, Di\"\n";
    let config = |ca: &str| {
        format!(
            "[broadcast]\ndelay_s = 0\n\n\
             [broadcast.ftp]\nurl = \"ftps://zeit:s3cret%3Apw@127.0.0.1:{}/live\"\n{ca}\n\n\
             [[rounds]]\nnumber = 1\npairings = \"round-1.csv\"\n",
            ftp.port
        )
    };
    let file = root.join("live/round-1/games.pgn");

    // The web's roots: the hall's certificate is refused, loudly, and nothing uploaded.
    let untrusted = dir.path().join("untrusted");
    std::fs::create_dir_all(&untrusted).unwrap();
    std::fs::write(untrusted.join("round-1.csv"), pairings).unwrap();
    let (hub, _) = Hub::configured(&untrusted, &config(""));
    let deadline = Instant::now() + Duration::from_secs(20);
    let failing = loop {
        let outlets = http_json(&hub.web, "/api/broadcast/outlets");
        if let Some(why) = outlets[0]["failing"].as_str() {
            break why.to_owned();
        }
        assert!(Instant::now() < deadline, "no failure shown: {outlets}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(failing.to_lowercase().contains("certificate"), "{failing}");
    assert!(!file.exists(), "uploaded to a server it could not trust");
    drop(hub);

    // The hall CA's: the round arrives as the feed has it.
    std::fs::write(dir.path().join("round-1.csv"), pairings).unwrap();
    let (hub, _) = Hub::configured(dir.path(), &config("ca = \"ftp-ca.pem\""));
    result(&hub, 1, "+-");
    result(&hub, 2, "1/2-1/2");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, feed) = http_get(&hub.web, "/broadcast/round/1/games.pgn").unwrap();
        let uploaded = std::fs::read_to_string(&file).unwrap_or_default();
        if uploaded == feed && feed.contains("[Result \"1/2-1/2\"]") {
            let games = read_games(&uploaded, dir.path());
            assert_eq!(games["1.1"]["tags"]["Termination"], "forfeit");
            break;
        }
        let outlets = http_json(&hub.web, "/api/broadcast/outlets");
        assert!(
            Instant::now() < deadline,
            "the FTPS upload is not the feed: {outlets}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A lichess round that refuses every push (it polls a source URL: lila's rule), tried first
/// (its id sorts first), never holds up the round's other slice, and the arbiters see which
/// one and why.
#[test]
fn a_slice_lichess_refuses_holds_up_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let (lichess, seen) = support::lichess::rules_stand_in("lip_refused", usize::MAX);
    let pairings: String = (1..=4)
        .map(|b| format!("{b},\"White, P{b}\",\"Black, P{b}\"\n"))
        .collect();
    std::fs::write(
        dir.path().join("round-1.csv"),
        format!("board,white,black\n{pairings}"),
    )
    .unwrap();
    let config = format!(
        "[broadcast]\ndelay_s = 0\n\n\
         [broadcast.lichess]\nurl = \"http://127.0.0.1:{lichess}\"\ntoken = \"lip_refused\"\n\n\
         [[rounds]]\nnumber = 1\npairings = \"round-1.csv\"\n\
         lichess_slices = [ {{ boards = \"1-2\", round_id = \"Sourced1\" }}, {{ boards = \"3-4\", round_id = \"Tpushed1\" }} ]\n"
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    for board in 1..=4 {
        result(&hub, board, "1/2-1/2");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let marked = seen
            .lock()
            .unwrap()
            .marks
            .iter()
            .any(|(_, id, status, _)| id == "Tpushed1" && status == "finished");
        if marked {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the other slice was held up: {:?}",
            seen.lock().unwrap().requests
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.rounds["Tpushed1"].len(), 2);
    assert!(!seen.rounds.contains_key("Sourced1"));
    assert!(seen.broken.is_empty(), "{:?}", seen.broken);
    let outlets = http_json(&hub.web, "/api/broadcast/outlets");
    let destinations = &outlets[0]["destinations"];
    assert!(
        destinations["Sourced1"]["failing"]
            .as_str()
            .is_some_and(|f| f.contains("source URL")),
        "{outlets}"
    );
    assert!(destinations["Tpushed1"]["failing"].is_null(), "{outlets}");
}
