//! A full disk never stalls the hall silently: the hub's journal on a small
//! filesystem (tmpfs with a size limit) is filled by another file while two real boards play.
//! `/healthz` turns 503 with the reason, nothing is acknowledged that is not durable, and once
//! space is freed the hub opens its journal again, rebuilds the hall from what is durable,
//! the nodes resend what was never acknowledged, and every game ends exact.
//!
//! Mounting a tmpfs needs the privilege to mount (root in the CI container). Without it the
//! test says so and checks nothing.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::{http_get, http_json, Hub, Node, Replay};

/// A size-limited tmpfs, unmounted when dropped.
struct SmallDisk {
    at: PathBuf,
}

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| SmallDisk { at: at.to_owned() })
    }

    /// Writes a file until the disk is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.at.join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        while file.write_all(&[0u8; 64 * 1024]).is_ok() {}
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

fn health(hub: &Hub) -> (u16, String) {
    http_get(&hub.web, "/healthz").unwrap_or((0, String::new()))
}

fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_full_disk_turns_healthz_503_acknowledges_nothing_and_the_hall_recovers_exact() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&dir.path().join("small"), "48m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs the privilege to mount)");
        return;
    };
    let mut hub = Hub::start(
        &disk.at.join("journal"),
        support::Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
    );
    let port = hub.broker_port();
    let games = [
        Replay::new(1, "fide_world_cup_2025_rapid_15+10.pgn", 3, 16.0),
        Replay::new(2, "fide_womens_world_rapid_2024.pgn", 5, 16.0),
    ];
    let nodes: Vec<Node> = games
        .iter()
        .map(|g| Node::start(g, &hub, dir.path()))
        .collect();
    // The chief arbiter's pager, to see that the arbiters are told.
    let chief = hub.enrol_arbiter("IA Chief", dir.path());
    let pager = support::TerminalPager::all_zones(port, &chief);
    // Whether the pager's latest screen says the journal fails.
    let pager_says_failing = || {
        let text = pager.shown();
        text.rfind("── ")
            .is_some_and(|last| text[..last].trim_end().ends_with("until it works again."))
    };
    wait_until("both boards playing", Duration::from_secs(20), || {
        (1..=2).all(|b| {
            http_get(&hub.web, &format!("/api/boards/{b}"))
                .is_ok_and(|(status, body)| status == 200 && !body.contains("\"ply\":0,"))
        })
    });

    // The disk fills up mid-game.
    let filler = disk.fill();
    wait_until("/healthz 503", Duration::from_secs(20), || {
        health(&hub).0 == 503
    });
    let (_, why) = health(&hub);
    assert!(why.contains("No space left"), "the reason is given: {why}");
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    assert!(metrics.contains("zeitnot_journal_failing 1"), "{metrics}");
    wait_until(
        "the pager says the journal fails",
        Duration::from_secs(10),
        &pager_says_failing,
    );
    // While it fails, a decision cannot be made durable: refused, not left hanging.
    let (status, _) = support::http_post(
        &hub.web,
        "/api/boards/1/decisions",
        r#"{"arbiter": "IA Test", "decision": "adjust_time", "side": "white", "ms": 1000, "reason": "clock_correction"}"#,
    )
    .unwrap();
    assert_eq!(status, 503);
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(health(&hub).0, 503, "still failing while the disk is full");
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    assert!(
        !log.contains("the hall rebuilt from the journal"),
        "no rebuild while the disk is still full (the reopened journal's probe fails): {log}"
    );

    // Space again: the hub recovers by itself.
    std::fs::remove_file(filler).unwrap();
    wait_until("/healthz 200 again", Duration::from_secs(20), || {
        health(&hub).0 == 200
    });
    let metrics = http_get(&hub.web, "/metrics").unwrap().1;
    assert!(metrics.contains("zeitnot_journal_failing 0"), "{metrics}");
    wait_until(
        "the pager says it works again",
        Duration::from_secs(10),
        || !pager_says_failing(),
    );
    drop(pager);
    let log = std::fs::read_to_string(dir.path().join("hub.log")).unwrap();
    assert!(log.contains("the hall rebuilt from the journal"), "{log}");

    for (node, game) in nodes.into_iter().zip(&games) {
        let report = node.finish(Duration::from_secs(90));
        assert_eq!(report["acked"], report["events"], "{report}");
        let detail = http_json(&hub.web, &format!("/api/boards/{}", game.board));
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, game.sans, "board {}: every move once", game.board);
        assert_eq!(detail["last_seq"], report["events"]);
    }
    // And what it holds is durable: a restart from the journal gives the same games.
    hub.restart();
    for game in &games {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", game.board));
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, game.sans, "board {} after a restart", game.board);
    }
}
