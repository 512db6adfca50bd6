//! The "no event lost" scenario: a hall of real board-node processes replaying real games
//! while the hub, a node and (optionally) the broker are killed and restarted.

use std::path::Path;
use std::time::{Duration, Instant};

use hub::edge::journal::Journal;
use protocol::{BoardNo, Seq};

use super::{http_json, Broker, Hub, Mosquitto, Node, Replay};

/// Twenty games from every clocked file: rapid, blitz, classical (with its second period),
/// Armageddon, the Candidates and the Women's Rapid, each replayed in about 12 s.
pub fn twenty_games() -> Vec<Replay> {
    let picks: [(&str, &[usize]); 7] = [
        ("fide_world_cup_2025_rapid_15+10.pgn", &[1, 5, 9, 13]),
        ("fide_world_cup_2025_rapid_10+10.pgn", &[2, 7]),
        ("fide_world_cup_2025_blitz_5+3.pgn", &[1, 4, 11]),
        ("fide_world_cup_2025_classical.pgn", &[3, 50, 200]),
        ("fide_world_cup_2025_armageddon.pgn", &[1, 2]),
        ("fide_candidates_2022.pgn", &[1, 30]),
        ("fide_womens_world_rapid_2024.pgn", &[10, 300, 600, 605]),
    ];
    let mut board = 0;
    picks
        .iter()
        .flat_map(|(file, games)| games.iter().map(move |g| (*file, *g)))
        .map(|(file, game)| {
            board += 1;
            Replay::new(board, file, game, 12.0)
        })
        .collect()
}

/// What to break during the run.
pub struct Faults {
    pub kill_hub_at: [Duration; 2],
    pub kill_node_at: Duration,
    /// Kill and restart the external broker at this time.
    pub kill_broker_at: Option<Duration>,
}

pub fn run(dir: &Path, broker: Broker, mut mosquitto: Option<Mosquitto>, faults: Faults) {
    let games = twenty_games();
    assert_eq!(games.len(), 20);
    let data = dir.join("hub-data");
    if let Some(mosquitto) = &mut mosquitto {
        // Before the hub's first start, as a technician sets the broker up.
        mosquitto.load_users_from(&data);
    }
    let mut hub = Hub::start(&data, broker.clone(), &dir.join("hub.log"));
    // The nodes enrolled, the broker learns their logins; then they start.
    let enrolments: Vec<super::Enrolment> = games
        .iter()
        .map(|game| hub.enrol(&format!("replay-{}", game.board), game.board, dir))
        .collect();
    if let Some(mosquitto) = &mut mosquitto {
        mosquitto.load_users_from_hub(&hub);
    }
    let mut nodes: Vec<Node> = games
        .iter()
        .zip(&enrolments)
        .map(|(game, enrolment)| {
            let outbox = format!("outbox-{}", game.board);
            Node::spawn(game, hub.broker_port(), dir, &outbox, Some(enrolment))
        })
        .collect();

    let started = Instant::now();
    let mut schedule: Vec<(Duration, &str)> = vec![
        (faults.kill_hub_at[0], "hub"),
        (faults.kill_hub_at[1], "hub"),
        (faults.kill_node_at, "node"),
    ];
    if let Some(at) = faults.kill_broker_at {
        schedule.push((at, "broker"));
    }
    schedule.sort();
    for (at, what) in schedule {
        std::thread::sleep(at.saturating_sub(started.elapsed()));
        match what {
            "hub" => {
                hub.kill();
                std::thread::sleep(Duration::from_millis(500));
                hub.restart();
            }
            "node" => nodes[4].kill_and_restart(),
            "broker" => mosquitto
                .as_mut()
                .expect("a broker to kill")
                .kill_and_restart(),
            _ => unreachable!(),
        }
        eprintln!(
            "{:>6.1?}: killed and restarted the {what}",
            started.elapsed()
        );
    }

    let mut events = Vec::new();
    for node in nodes {
        let board = node.board;
        let report = node.finish(Duration::from_secs(180));
        assert_eq!(report["board"], board, "{report}");
        assert_eq!(report["acked"], report["events"], "board {board}: {report}");
        events.push((board, report["events"].as_u64().expect("events")));
    }
    eprintln!(
        "{:>6.1?}: every node exited with all events acknowledged",
        started.elapsed()
    );

    for (game, (board, count)) in games.iter().zip(&events) {
        let detail = http_json(&hub.web, &format!("/api/boards/{board}"));
        assert_eq!(detail["last_seq"], *count, "board {board}");
        assert_eq!(detail["events_accepted"], *count, "board {board}");
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(
            moves,
            game.sans,
            "board {board} ({} game {})",
            game.pgn.display(),
            game.game
        );
    }
    let metrics = super::http_get(&hub.web, "/metrics").unwrap().1;
    eprintln!(
        "{}",
        metrics
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains("_bucket"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    hub.kill();
    let journal = Journal::open(&data).expect("journal opens after the hub stopped");
    for (board, count) in events {
        let seqs = journal.seqs(BoardNo(board)).unwrap();
        let want: Vec<Seq> = (1..=count).map(Seq).collect();
        assert_eq!(
            seqs, want,
            "board {board}: the journal holds 1..={count} exactly once"
        );
    }
}
