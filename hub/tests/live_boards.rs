//! Live DGT and ChessLink boards play real games exactly. Every test here runs real processes: `board-node emulate-dgt`
//! (a DGT board with its clock on a pseudo-terminal), `board-node dgt` (the node reading the
//! board's serial line), and the hub with its embedded broker.
//!
//! - The three real recorded streams (`shared/data/real/dgt/dgtdriver/`), played live, give
//!   the hub the games the offline decoder reads, and johan's flag with its 6.9 result.
//! - Millennium ChessLink boards (no clock) read by `board-node chesslink`: the moves of real
//!   games, completed by the hub once they stood.
//! - 20 real games on 20 emulated boards, four nodes serving five boards each, two boards
//!   unplugged mid-game and one node killed and restarted: every move is the PGN's and the
//!   clock shown at every move the emulated clock's (the source's `%clk`).
//! - A clock whose battery goes low mid-game: the node says so, the zone's arbiter is paged
//!   once, the board's detail, the node report and the supervision page show it.

use crate::support;

use std::time::Duration;

use board_node::dgt::recording;
use hub::core::hall::Hall;
use protocol::time_control::TimeControl;
use protocol::BoardNo;
use support::live::{wait_board, Emulator, Family, Fault, LiveNode, Play};
use support::{http_json, Hub};

fn dgtdriver(name: &str) -> std::path::PathBuf {
    support::real_data().join(format!("dgt/dgtdriver/{name}.inbytes"))
}

/// The moves the offline decoder reads off a recorded stream, through the hub's core.
fn offline_moves(name: &str, time_control: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dgtdriver(name)).unwrap();
    let readings = recording::readings(&recording::messages(&text).unwrap(), None);
    let tc: TimeControl = time_control.parse().unwrap();
    let mut hall = Hall::default().with_time_control(Some(tc));
    support::events::feed(&mut hall, BoardNo(1), readings.clone());
    let now = hub::core::time::HubMs(readings.last().unwrap().game_ms);
    let detail = serde_json::to_value(hall.detail(BoardNo(1), now).unwrap()).unwrap();
    detail["moves"].as_array().unwrap().clone()
}

#[test]
fn the_recorded_streams_played_live_are_the_games_the_offline_decoder_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[event]\ntime_control = \"180+2\"\n");
    // Recording 1 with line noise before every 7th message; johan (5+5) plays to its flag.
    let names = ["1", "2", "johan"];
    let emulators: Vec<Emulator> = names
        .iter()
        .map(|name| {
            let noise = if *name == "1" {
                vec![Fault::NoiseEvery(7)]
            } else {
                Vec::new()
            };
            Emulator::start(
                dir.path(),
                name,
                &Play::Recording(dgtdriver(name)),
                25.0,
                &noise,
            )
        })
        .collect();
    let enrolments: Vec<_> = (1..=3)
        .map(|n| hub.enrol(&format!("dgt-{n}"), n, dir.path()))
        .collect();
    let pairs: Vec<_> = enrolments.iter().zip(&emulators).collect();
    let node = LiveNode::start(&hub, dir.path(), "node", &pairs);

    for emulator in &emulators {
        emulator.wait_played(Duration::from_secs(120));
    }
    for (n, name) in (1..=3).zip(names) {
        let tc = if name == "johan" { "300+5" } else { "180+2" };
        let want = offline_moves(name, tc);
        let detail = wait_board(&hub, n, Duration::from_secs(20), |d| {
            d["moves"].as_array().is_some_and(|m| m.len() >= want.len())
        });
        assert_eq!(
            detail["moves"].as_array().unwrap(),
            &want,
            "recording {name}"
        );
        // And the game the recordings' author wrote down beside each stream, independent of
        // our decoder. Recording 2 ends with White's last move set down, never pressed.
        let mut recorded = support::recorded_game(name);
        if name == "2" {
            assert_eq!(recorded.pop().as_deref(), Some("Qh6+"));
        }
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, recorded, "recording {name}");
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "recording {name}"
        );
    }

    // Johan: Black's flag as the clock showed it, and the result 6.9 gives, for the arbiter
    // to confirm.
    let johan = wait_board(&hub, 3, Duration::from_secs(20), |d| {
        !d["clock"]["flag"].is_null()
    });
    let clock = &johan["clock"];
    assert_eq!(clock["flag"], "black");
    assert_eq!(clock["black_ms"], 0);
    assert_eq!(clock["flag_fall"]["result"], "1-0", "{clock}");
    assert_eq!(clock["flag_fall"]["article"], "6.9");
    assert_eq!(johan["status"], "playing", "a flag waits for the arbiter");

    // The node's health as it reported it: boards and clocks connected; the noise counted
    // on board 1 only.
    let nodes = http_json(&hub.web, "/api/nodes");
    for view in nodes["nodes"].as_array().unwrap() {
        assert_eq!(view["board_connected"], true, "{view}");
        assert_eq!(view["clock_connected"], true, "{view}");
        let errors = view["serial_errors"].as_u64().unwrap();
        if view["board"] == 1 {
            assert!(errors > 0, "noise before every 7th message: {view}");
        } else {
            assert_eq!(errors, 0, "{view}");
        }
    }

    // SIGTERM: each board's outbox acknowledged to its last event.
    let reports = node.stop(Duration::from_secs(10));
    assert_eq!(reports.len(), 3);
    for report in reports {
        assert_eq!(report["acked"], report["events"], "{report}");
    }
}

/// One of the 20 games: where it comes from, its script's presses (game ms), its speed.
struct LiveGame {
    board: u16,
    file: std::path::PathBuf,
    game: usize,
    time_control: &'static str,
    sans: Vec<String>,
    clk_ms: Vec<Option<u64>>,
    presses: Vec<u64>,
    speed: f64,
}

impl LiveGame {
    fn new(board: u16, file: &str, game: usize, time_control: &'static str) -> LiveGame {
        let path = support::real_data().join("pgn-clocks").join(file);
        let parsed = board_node::pgn::read_game(&std::fs::read(&path).unwrap(), game).unwrap();
        let tc: TimeControl = time_control.parse().unwrap();
        let script = board_node::replay::script(&parsed, Some(&tc));
        let presses = board_node::replay::press_times(&script);
        let last = script.last().unwrap().game_ms;
        LiveGame {
            board,
            file: path,
            game,
            time_control,
            sans: support::canonical_sans(&parsed),
            clk_ms: parsed.plies.iter().map(|p| p.clk_ms).collect(),
            presses,
            // Each game played in about 70 s.
            speed: (last as f64 / 70_000.0).max(1.0),
        }
    }

    /// Real seconds after the game's start at which its presses come.
    fn press_seconds(&self) -> impl Iterator<Item = f64> + '_ {
        self.presses
            .iter()
            .map(|ms| *ms as f64 / 1000.0 / self.speed)
    }

    /// A press in the middle of the game after which the next `window_s` real seconds hold
    /// exactly `presses` more presses: the board can be unplugged there.
    fn quiet_ply(&self, window_s: f64, presses: usize) -> Option<usize> {
        let at: Vec<f64> = self.press_seconds().collect();
        // Ply `p` is press `p - 1`; the presses after it in the window, with a second's
        // margin either side for the pace of processes.
        (10..at.len().saturating_sub(3)).find(|p| {
            let after = &at[*p..];
            after[presses] - at[p - 1] > window_s + 1.0
                && (presses == 0 || after[presses - 1] - at[p - 1] < window_s - 1.0)
        })
    }
}

#[test]
fn twenty_real_games_on_live_boards_lose_and_double_nothing_through_unplugs_and_a_node_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[event]\ntime_control = \"300+3\"\n");
    // The World Cup's over-the-board blitz with clocks: 18 games at 5+3, two at 3+2 (their
    // tags say 90+30), each played in about 70 s.
    let mut games: Vec<LiveGame> = (1..=18)
        .map(|g| LiveGame::new(g as u16, "fide_world_cup_2025_blitz_5+3.pgn", g, "300+3"))
        .collect();
    games.extend((1..=2).map(|g| {
        LiveGame::new(
            18 + g as u16,
            "fide_world_cup_2025_blitz_3+2.pgn",
            g,
            "180+2",
        )
    }));

    // Two boards on different nodes are unplugged for 2.5 s (and up to 1 s more until the
    // node finds the device again). On the first nobody presses meanwhile; on the second
    // the opponent replies and presses while the node is blind: the board shows two moves
    // on when it is back, and the hub catches both up. The clock never showed anyone the
    // mover's time at that first press, so its move alone is not compared.
    let unplug_ms = 2_500;
    let window_s = unplug_ms as f64 / 1000.0 + 1.0;
    let quiet = |boards: std::ops::Range<usize>, presses: usize| {
        games[boards]
            .iter()
            .find_map(|g| Some((g.board, g.quiet_ply(window_s, presses)?)))
            .expect("a game with a quiet spell")
    };
    let unplugged = [quiet(0..5, 0), quiet(10..20, 1)];
    eprintln!("unplugged (board, ply): {unplugged:?}");
    let emulators: Vec<Emulator> = games
        .iter()
        .map(|g| {
            let mut faults = Vec::new();
            if let Some((_, ply)) = unplugged.iter().find(|(board, _)| *board == g.board) {
                faults.push(Fault::UnplugAtPly {
                    ply: *ply,
                    ms: unplug_ms,
                });
            }
            let play = Play::Pgn {
                file: g.file.clone(),
                game: g.game,
                time_control: g.time_control.into(),
            };
            Emulator::start(dir.path(), &g.board.to_string(), &play, g.speed, &faults)
        })
        .collect();
    let enrolments: Vec<_> = games
        .iter()
        .map(|g| hub.enrol(&format!("dgt-{}", g.board), g.board, dir.path()))
        .collect();
    let mut nodes: Vec<LiveNode> = (0..4)
        .map(|k| {
            let pairs: Vec<_> = (5 * k..5 * k + 5)
                .map(|i| (&enrolments[i], &emulators[i]))
                .collect();
            LiveNode::start(&hub, dir.path(), &format!("node-{k}"), &pairs)
        })
        .collect();
    let started = std::time::Instant::now();

    // Node 1 (boards 6-10) is killed and restarted when none of its boards has more than one
    // press around it.
    let kill_at = (200..600)
        .map(|tenths| tenths as f64 / 10.0)
        .find(|t| {
            games[5..10].iter().all(|g| {
                g.press_seconds()
                    .filter(|s| (t - 0.5..t + 1.5).contains(s))
                    .count()
                    <= 1
            })
        })
        .expect("a moment to kill node 1");
    eprintln!("node 1 killed {kill_at} s in");
    std::thread::sleep(Duration::from_secs_f64(kill_at).saturating_sub(started.elapsed()));
    nodes[1].kill_and_restart();

    for (g, emulator) in games.iter().zip(&emulators) {
        let played = emulator.wait_played(Duration::from_secs(180));
        let times = u64::from(unplugged.iter().any(|(b, _)| *b == g.board));
        assert_eq!(played["unplugged"], times, "board {}: {played}", g.board);
    }
    for g in &games {
        let detail = wait_board(&hub, g.board, Duration::from_secs(30), |d| {
            d["moves"]
                .as_array()
                .is_some_and(|m| m.len() >= g.sans.len())
        });
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, g.sans, "board {}: every move, once", g.board);
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "board {}",
            g.board
        );
        // The clock shown at each move is the emulated clock's, which showed the source's
        // `%clk`.
        let shown: Vec<Option<u64>> = serde_json::from_value(detail["clock_ms"].clone()).unwrap();
        let mut compared = 0;
        let unseen = (g.board == unplugged[1].0).then_some(unplugged[1].1);
        for (ply, (clk, shown)) in g.clk_ms.iter().zip(&shown).enumerate() {
            if unseen == Some(ply + 1) {
                continue;
            }
            if let Some(clk) = clk {
                assert_eq!(
                    Some(clk / 1000 * 1000),
                    *shown,
                    "board {} ply {}",
                    g.board,
                    ply + 1
                );
                compared += 1;
            }
        }
        assert!(
            compared * 2 > g.sans.len(),
            "board {}: {compared} clocks compared",
            g.board
        );
        eprintln!(
            "board {}: {} moves, {compared} clocks equal to the source's",
            g.board,
            moves.len()
        );
    }
    let nodes_view = http_json(&hub.web, "/api/nodes");
    for view in nodes_view["nodes"].as_array().unwrap() {
        assert_eq!(view["board_connected"], true, "{view}");
        let errors = view["serial_errors"].as_u64().unwrap();
        let board = view["board"].as_u64().unwrap() as u16;
        if unplugged.iter().any(|(b, _)| *b == board) {
            assert!(errors >= 1, "the unplug counted: {view}");
        }
    }
    for node in nodes {
        for report in node.stop(Duration::from_secs(10)) {
            assert_eq!(report["acked"], report["events"], "{report}");
        }
    }
}

#[test]
fn chesslink_boards_without_a_clock_give_the_games_move_for_move() {
    let dir = tempfile::tempdir().unwrap();
    // Moves stand 0.8 s of real time (16 s of game time at 20×): the hub completes a move on
    // a board without a clock once it stood 0.4 s.
    let hub = Hub::start_with(
        &dir.path().join("data"),
        support::Broker::Embedded { port: 0 },
        &dir.path().join("hub.log"),
        vec!["--debounce-ms".into(), "400".into()],
    );
    let games = [4, 17];
    let file = support::real_data().join("pgn-clocks/fide_world_cup_2025_blitz_5+3.pgn");
    let emulators: Vec<Emulator> = games
        .iter()
        .map(|g| {
            let play = Play::Pgn {
                file: file.clone(),
                game: *g,
                time_control: "300+3".into(),
            };
            let stand = [Fault::StandMs(16_000)];
            Emulator::start_family(
                Family::ChessLink,
                dir.path(),
                &g.to_string(),
                &play,
                20.0,
                &stand,
            )
        })
        .collect();
    let enrolments: Vec<_> = (1..=2)
        .map(|n| hub.enrol(&format!("chesslink-{n}"), n, dir.path()))
        .collect();
    let pairs: Vec<_> = enrolments.iter().zip(&emulators).collect();
    let node = LiveNode::start_family(Family::ChessLink, &hub, dir.path(), "node", &pairs);
    for emulator in &emulators {
        emulator.wait_played(Duration::from_secs(150));
    }
    for (n, g) in (1..=2).zip(games) {
        let parsed = board_node::pgn::read_game(&std::fs::read(&file).unwrap(), g).unwrap();
        let want = support::canonical_sans(&parsed);
        let detail = wait_board(&hub, n, Duration::from_secs(20), |d| {
            d["moves"].as_array().is_some_and(|m| m.len() >= want.len())
        });
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, want, "board {n}: game {g}");
        assert_eq!(detail["illegal_moves"], serde_json::json!([]), "board {n}");
    }
    let nodes = http_json(&hub.web, "/api/nodes");
    for view in nodes["nodes"].as_array().unwrap() {
        assert_eq!(view["board_connected"], true, "{view}");
        assert_eq!(
            view["clock_connected"], false,
            "a ChessLink board has none: {view}"
        );
        assert_eq!(view["clock_hw"], "", "{view}");
    }
    assert!(
        nodes["warnings"].as_array().unwrap().is_empty(),
        "no clock is not a missing clock: {nodes}"
    );
    for report in node.stop(Duration::from_secs(10)) {
        assert_eq!(report["acked"], report["events"], "{report}");
    }
}

#[test]
fn a_clock_switched_off_and_on_between_moves_loses_no_move() {
    // A DGT board whose clock is switched off for 3 s between two presses (a player's
    // sleeve on the switch, an arbiter setting it again) and on again: the node reads the
    // clock's silence and its return, the board stays the source of truth, and the hub
    // follows every move once (6.2.1), none of them illegal.
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[event]\ntime_control = \"300+3\"\n");
    let game = LiveGame::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 5, "300+3");
    let off_ms = 3_000;
    let ply = game
        .quiet_ply(off_ms as f64 / 1000.0, 0)
        .expect("a spell with no press for the clock to be off");
    let play = Play::Pgn {
        file: game.file.clone(),
        game: game.game,
        time_control: game.time_control.into(),
    };
    let fault = Fault::ClockOffAtPly { ply, ms: off_ms };
    let emulator = Emulator::start(dir.path(), "1", &play, game.speed, &[fault]);
    let enrolment = hub.enrol("dgt-1", game.board, dir.path());
    let _node = LiveNode::start(&hub, dir.path(), "node", &[(&enrolment, &emulator)]);
    let played = emulator.wait_played(Duration::from_secs(180));
    assert_eq!(played["clock_offs"], 1, "{played}");
    let detail = wait_board(&hub, game.board, Duration::from_secs(30), |d| {
        d["moves"]
            .as_array()
            .is_some_and(|m| m.len() >= game.sans.len())
    });
    let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
    assert_eq!(
        moves, game.sans,
        "every move, once, through the clock's {off_ms} ms off"
    );
    assert_eq!(detail["illegal_moves"], serde_json::json!([]), "{detail}");
}

#[test]
fn a_line_that_stalls_while_moves_are_made_loses_no_move() {
    // DGT boards, each on its own port, whose line passes nothing for 4 s while a move is
    // made and pressed: on board 1 the bytes come late and in order; on board 2 they are
    // lost, field updates and the press with them. The line never closes: the node notices
    // the silence under a running clock, tells the hub, and reads the board again; the hub
    // follows every move (6.2.1).
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[event]\ntime_control = \"300+3\"\n");
    let games: Vec<LiveGame> = (1..=2)
        .map(|g| {
            LiveGame::new(
                g as u16,
                "fide_world_cup_2025_blitz_5+3.pgn",
                g + 2,
                "300+3",
            )
        })
        .collect();
    let stall_ms = 4_000;
    let window_s = stall_ms as f64 / 1000.0;
    let faults: Vec<Fault> = games
        .iter()
        .zip([(1, false), (1, true)])
        .map(|(g, (presses, drops))| {
            let ply = g
                .quiet_ply(window_s, presses)
                .expect("a spell for the stall");
            let ms = stall_ms;
            match drops {
                false => Fault::StallAtPly { ply, ms },
                true => Fault::DropAtPly { ply, ms },
            }
        })
        .collect();
    eprintln!("stalls: {faults:?}");
    let emulators: Vec<Emulator> = games
        .iter()
        .zip(&faults)
        .map(|(g, fault)| {
            let play = Play::Pgn {
                file: g.file.clone(),
                game: g.game,
                time_control: g.time_control.into(),
            };
            Emulator::start(dir.path(), &g.board.to_string(), &play, g.speed, &[*fault])
        })
        .collect();
    let enrolments: Vec<_> = games
        .iter()
        .map(|g| hub.enrol(&format!("dgt-{}", g.board), g.board, dir.path()))
        .collect();
    let pairs: Vec<_> = enrolments.iter().zip(&emulators).collect();
    let _node = LiveNode::start(&hub, dir.path(), "node", &pairs);
    for emulator in &emulators {
        let played = emulator.wait_played(Duration::from_secs(180));
        assert_eq!(played["stalls"], 1, "{played}");
    }
    for g in &games {
        let detail = wait_board(&hub, g.board, Duration::from_secs(30), |d| {
            d["moves"]
                .as_array()
                .is_some_and(|m| m.len() >= g.sans.len())
        });
        let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
        assert_eq!(moves, g.sans, "board {}: every move, once", g.board);
        assert_eq!(
            detail["illegal_moves"],
            serde_json::json!([]),
            "board {}",
            g.board
        );
    }
}

#[test]
fn a_clock_whose_battery_goes_low_mid_game_pages_the_arbiter_once() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), "[event]\ntime_control = \"300+3\"\n");
    let game = LiveGame::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 4, "300+3");
    let low_at = 20;
    let play = Play::Pgn {
        file: game.file.clone(),
        game: game.game,
        time_control: game.time_control.into(),
    };
    let emulator = Emulator::start(
        dir.path(),
        "1",
        &play,
        game.speed,
        &[Fault::BatteryLowAtPly(low_at)],
    );
    let enrolment = hub.enrol("dgt-1", 1, dir.path());
    let _node = LiveNode::start(&hub, dir.path(), "node", &[(&enrolment, &emulator)]);
    // Before: the node reports the battery, and it is fine.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let early = loop {
        let (status, body) = support::http_get(&hub.web, "/api/boards/1").unwrap();
        let detail: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        if status == 200 && detail["moves"].as_array().is_some_and(|m| m.len() >= 4) {
            break detail;
        }
        assert!(std::time::Instant::now() < deadline, "{status} {body}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(early["battery_low"], false, "reported, not low: {early}");
    emulator.wait_played(Duration::from_secs(180));
    let detail = wait_board(&hub, 1, Duration::from_secs(30), |d| {
        d["moves"]
            .as_array()
            .is_some_and(|m| m.len() >= game.sans.len())
    });
    assert_eq!(detail["battery_low"], true, "{detail}");
    let alerts = http_json(&hub.web, "/api/alerts?board=1");
    let low: Vec<&serde_json::Value> = alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "battery_low")
        .collect();
    assert_eq!(low.len(), 1, "paged once: {alerts}");
    assert_eq!(low[0]["severity"], "high", "mid-game: {}", low[0]);
    assert_eq!(low[0]["state"], "raised", "{}", low[0]);
    let nodes = http_json(&hub.web, "/api/nodes");
    assert_eq!(nodes["nodes"][0]["battery_low"], true, "{nodes}");

    let mut browser = support::browser::Browser::start();
    browser.open_page(&format!("http://{}/?token={}", hub.http, hub.token));
    browser.expect(
        "the page names the clock",
        "document.getElementById('nodes').textContent.includes('Clock battery low: board 1')",
        Duration::from_secs(10),
    );
}
