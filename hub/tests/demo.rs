//! The README's first command: `hub demo` starts a hall whose simulated boards play, and
//! its incidents reach the arbiters: over the API and on the supervision page.

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::browser::Browser;
use support::{free_port, http_json, workspace_bin};

#[test]
fn the_demo_hall_starts_prints_its_urls_and_its_boards_play() {
    let http = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut demo = Command::new(workspace_bin("hub"))
        .args(["demo", "--boards", "8", "--speed", "200"])
        .args(["--http", &http.to_string()])
        .args(["--mqtt", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("hub demo");
    let mut stdout = BufReader::new(demo.stdout.take().unwrap());
    let mut printed = Vec::new();
    while !printed
        .last()
        .is_some_and(|l: &String| l.starts_with("Ctrl-C"))
    {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{printed:#?}");
        printed.push(line);
    }
    // Keep reading, so the demo never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    assert!(
        printed
            .iter()
            .any(|l| l.contains(&format!("http://{http}/api/boards"))),
        "{printed:#?}"
    );
    assert!(
        printed.iter().any(|l| l.contains("hub pager --zone all")),
        "how to start a pager: {printed:#?}"
    );

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let boards = http_json(http, "/api/boards");
        let plies: Vec<u64> = boards
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["ply"].as_u64().unwrap())
            .collect();
        if plies.len() == 8 && plies.iter().all(|p| *p >= 10) {
            break;
        }
        assert!(Instant::now() < deadline, "boards did not play: {plies:?}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // The clocks: the demo hall runs 15 min + 10 s; every move has the hub's modelled time.
    // Board 2 has no incident (1, 3, 5 and 7 have, one per zone).
    let board = http_json(http, "/api/boards/2");
    let clock = &board["clock"];
    assert_eq!(clock["time_control"], "900+10", "{board:#}");
    for field in ["white_ms", "black_ms"] {
        assert!(
            clock[field]
                .as_u64()
                .is_some_and(|ms| ms > 0 && ms < 3_600_000),
            "{field}: {clock:#}"
        );
    }
    assert!(clock["time_trouble"]["white"].is_boolean());
    let moves = board["moves"].as_array().unwrap().len();
    let clock_ms = board["clock_ms"].as_array().unwrap();
    assert_eq!(clock_ms.len(), moves, "clock_ms is parallel to moves");
    assert!(
        clock_ms.iter().all(|ms| ms.as_u64().is_some()),
        "{clock_ms:?}"
    );
    let ranking = http_json(http, "/api/time-trouble");
    let forecasts: Vec<u64> = ranking
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["time_to_flag_ms"].as_u64())
        .collect();
    assert!(!forecasts.is_empty(), "{ranking:#}");
    assert!(
        forecasts.windows(2).all(|w| w[0] <= w[1]),
        "most urgent first: {forecasts:?}"
    );

    // The incidents reach the arbiters: one alert each, on its board.
    for (board, what) in [
        (1, "a flag falls"),
        (3, "an illegal move"),
        (5, "stops the clock"),
        (7, "drops out"),
    ] {
        assert!(
            printed
                .iter()
                .any(|l| l.contains(&format!("board {board:>3}: ")) && l.contains(what)),
            "{printed:#?}"
        );
    }
    let wanted = [
        (1, "flag_fall"),
        (3, "illegal_move"),
        (5, "clock_paused"),
        (7, "node_offline"),
    ];
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let alerts = http_json(http, "/api/alerts");
        let seen = |board: u64, kind: &str| {
            alerts
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| a["board"] == board && a["kind"] == kind)
                .count()
        };
        if wanted.iter().all(|(b, k)| seen(*b, k) == 1) {
            break;
        }
        assert!(Instant::now() < deadline, "incidents missing: {alerts:#}");
        std::thread::sleep(Duration::from_millis(500));
    }

    // The same incidents on the supervision page, with the players from the games' tags.
    assert!(
        printed
            .iter()
            .any(|l| l.contains(&format!("http://{http}/ "))),
        "the page's address: {printed:#?}"
    );
    let mut page = Browser::start();
    page.open_page(&format!("http://{http}/"));
    for (board, kind) in wanted {
        page.expect(
            &format!("board {board}'s {kind} alert on the page"),
            &format!("document.querySelector(\"#alerts li[data-board='{board}'][data-kind='{kind}']\") !== null"),
            Duration::from_secs(10),
        );
    }
    let white = page.eval("document.querySelector('#tile-2 .pl.w').textContent");
    assert!(
        white.as_str().is_some_and(|w| w.contains(',')),
        "a player's name on board 2: {white}"
    );
    page.screenshot("demo-hall");
    let _ = demo.kill();
    let _ = demo.wait();
}
