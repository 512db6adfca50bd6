//! The README's first command: `hub demo` starts a hall whose simulated boards play.

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{free_port, http_json, workspace_bin};

#[test]
fn the_demo_hall_starts_prints_its_urls_and_its_boards_play() {
    let http = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut demo = Command::new(workspace_bin("hub"))
        .args(["demo", "--boards", "4", "--speed", "200"])
        .args(["--http", &http.to_string()])
        .args(["--mqtt", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("hub demo");
    let stdout = BufReader::new(demo.stdout.take().unwrap());
    let printed: Vec<String> = stdout.lines().take(6).map(|l| l.unwrap()).collect();
    assert!(
        printed
            .iter()
            .any(|l| l.contains(&format!("http://{http}/api/boards"))),
        "{printed:#?}"
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
        if plies.len() == 4 && plies.iter().all(|p| *p >= 10) {
            break;
        }
        assert!(Instant::now() < deadline, "boards did not play: {plies:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = demo.kill();
    let _ = demo.wait();
}
