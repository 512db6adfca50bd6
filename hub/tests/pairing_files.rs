//! Whoever can write the pairing files reaches the hub (issue 68): the security review put a
//! FIFO at a pairing path and the hub's loop froze (`/healthz` timed out), and a huge file
//! was read whole each time it changed. Now the files are read off the loop, only regular
//! files of at most 16 MiB: with a FIFO and then a 17 MiB file at the path, `/healthz`
//! answers within a second throughout, a round start is refused with the reason, and the
//! pairings stay as they were; the real file back, the start goes ahead.

use crate::support;

use std::time::{Duration, Instant};

use support::{http_get, http_json, http_post, Hub};

/// `/healthz` for `during`, every 200 ms: each answer's time.
fn health_during(hub: &Hub, during: Duration) -> Vec<Duration> {
    let until = Instant::now() + during;
    let mut took = Vec::new();
    while Instant::now() < until {
        let asked = Instant::now();
        let (status, body) = http_get(&hub.web, "/healthz").unwrap();
        assert_eq!(status, 200, "{body}");
        took.push(asked.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    took
}

#[test]
fn a_fifo_or_a_huge_file_at_a_pairing_path_never_stalls_the_hub() {
    let dir = tempfile::tempdir().unwrap();
    let source = support::real_data().join("trf/karl-mala-gedenkturnier-2005_trf06.trf");
    let text = std::fs::read_to_string(&source).unwrap();
    let path = dir.path().join("karl.trf");
    std::fs::write(&path, &text).unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        "[event]\nround = 7\n\n[pairings]\ntrf = \"karl.trf\"\n",
    );
    let round7 = http_json(&hub.web, "/api/rounds/7/pairings");
    assert!(!round7.as_array().unwrap().is_empty());

    // A FIFO where the TRF was: nobody ever writes to it.
    std::fs::remove_file(&path).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    // Two turns of the hub's look at its files (every 5 s).
    let took = health_during(&hub, Duration::from_secs(11));
    let slowest = took.iter().max().unwrap();
    println!(
        "FIFO: /healthz answered {} times, the slowest in {slowest:?}",
        took.len()
    );
    assert!(*slowest < Duration::from_secs(1), "{took:?}");
    let asked = Instant::now();
    let (status, why) = http_post(&hub.web, "/api/rounds/8/start", r#"{"force": true}"#).unwrap();
    assert_eq!(status, 422, "a start with a FIFO for its pairings: {why}");
    assert!(why.contains("not a regular file"), "{why}");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(
        http_json(&hub.web, "/api/rounds/7/pairings"),
        round7,
        "the pairings stay as they were"
    );
    let log = std::fs::read_to_string(&hub.log).unwrap();
    assert!(log.contains("not a regular file"), "the log says why");

    // A file of 17 MiB: refused before it is read.
    std::fs::remove_file(&path).unwrap();
    let huge = std::fs::File::create(&path).unwrap();
    huge.set_len(17 * 1024 * 1024).unwrap();
    drop(huge);
    let took = health_during(&hub, Duration::from_secs(6));
    assert!(took.iter().all(|t| *t < Duration::from_secs(1)), "{took:?}");
    let (status, why) = http_post(&hub.web, "/api/rounds/8/start", r#"{"force": true}"#).unwrap();
    assert_eq!(
        status, 422,
        "a start with a 17 MiB file for its pairings: {why}"
    );
    assert!(why.contains("16 MiB"), "{why}");

    // The real file back: read again, and the round starts.
    std::fs::write(&path, &text).unwrap();
    let (status, why) = http_post(&hub.web, "/api/rounds/8/start", r#"{"force": true}"#).unwrap();
    assert_eq!(status, 200, "round 8 starts once its file is back: {why}");
    assert_eq!(http_json(&hub.web, "/api/rounds/8")["in_play"], true);
}
