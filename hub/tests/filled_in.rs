//! Moves filled in when their order is lost (7.4): real processes (`board-node emulate-dgt`,
//! alone and as chains in bus mode, `board-node dgt` reading them, the hub with its embedded
//! broker), real games from the World Cup 2025, and faults that swallow three plies whose
//! order the board cannot tell (two moves of one side that could have come either way round
//! the opponent's one).
//!
//! - A single board's line stalls and loses what passed; another single board is unplugged
//!   (its power and line gone); one chain's power is cut; a board is pulled out of another
//!   chain. (A board of a chain whose line stalls keeps its changes for the bus master,
//!   which reads them in order when the line moves again: `dgt_chains` has that case.)
//! - Every later move is followed at once; the three plies are marked filled in, one alert
//!   is raised for the arbiter; a wrong order is refused (409); the source's order, given
//!   by the arbiter, is applied, replayed after a restart, and the moves equal the source.
//! - The feed parses with python-chess after each step, checked against the source game
//!   (tests/oracle/filled_in.py), never against the hub's own record.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use protocol::time_control::TimeControl;
use serde_json::{json, Value};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};
use support::live::{wait_board, ChainFault, Emulator, Fault, LiveNode, Play};
use support::{http_get, http_json, http_post, Hub};

const RAPID: &str = "fide_world_cup_2025_rapid_15+10.pgn";
const RAPID_TC: &str = "900+10";

/// A source game a board plays, and the three plies a fault swallows after press `ply`.
struct Swallowed {
    board: u16,
    pgn: PathBuf,
    game: usize,
    sans: Vec<String>,
    /// Plies `ply + 1` to `ply + 3` are unseen: the fault begins as ply `ply + 1` is made
    /// (the emulators' `--…-at-ply` counts the ply being made).
    ply: usize,
    speed: f64,
}

impl Swallowed {
    fn first_ply(&self) -> usize {
        self.ply + 1
    }

    fn last_ply(&self) -> usize {
        self.ply + 3
    }

    /// The source's order of the swallowed plies.
    fn order(&self) -> Vec<String> {
        self.sans[self.ply..self.ply + 3].to_vec()
    }
}

/// Presses (game ms) of game `game` of `file` as the emulator plays it, and its SANs.
fn presses_of(
    file: &Path,
    game: usize,
    tc: &str,
) -> (Vec<u64>, Vec<String>, Chess, Vec<shakmaty::Move>) {
    let parsed = board_node::pgn::read_game(&std::fs::read(file).unwrap(), game).unwrap();
    let tc: TimeControl = tc.parse().unwrap();
    let script = board_node::replay::script(&parsed, Some(&tc));
    let presses = board_node::replay::press_times(&script);
    let moves = parsed.plies.iter().map(|p| p.m).collect();
    (
        presses,
        support::canonical_sans(&parsed),
        parsed.start.clone(),
        moves,
    )
}

/// Whether plies `ply + 1` to `ply + 3` of `moves` could stand in another order: the first
/// and the third (one side's) swapped round the second reach the same board.
fn order_untold(start: &Chess, moves: &[shakmaty::Move], ply: usize) -> bool {
    let mut before = start.clone();
    for m in &moves[..ply] {
        before.play_unchecked(*m);
    }
    let [a, b, c] = [moves[ply], moves[ply + 1], moves[ply + 2]];
    let mut source = before.clone();
    for m in [a, b, c] {
        source.play_unchecked(m);
    }
    let mut swapped = before;
    for m in [c, b, a] {
        if !swapped.is_legal(m) {
            return false;
        }
        swapped.play_unchecked(m);
    }
    swapped.board() == source.board() && a != c
}

/// The first game of `file` not in `taken`, 40 to 100 plies, with a ply from the 8th on after
/// which three presses come within `made` and the fourth not before `quiet` (game ms, given
/// the game's speed) in an order the board cannot tell.
fn find(
    board: u16,
    file: &str,
    tc: &str,
    taken: &[usize],
    speed_of: impl Fn(u64) -> f64,
    window: impl Fn(f64) -> (u64, u64),
) -> Swallowed {
    let pgn = support::real_data().join("pgn-clocks").join(file);
    for game in (1..=92).filter(|g| !taken.contains(g)) {
        let (presses, sans, start, moves) = presses_of(&pgn, game, tc);
        if !(40..=100).contains(&sans.len()) || presses.len() != sans.len() {
            continue;
        }
        let speed = speed_of(*presses.last().unwrap());
        let (made, quiet) = window(speed);
        let found = (8..sans.len() - 6).find(|p| {
            // The fault begins as move `p + 1` is made: after press `p`, before press
            // `p + 1` (`presses[p]`).
            let (after, before) = (presses[p - 1], presses[*p]);
            presses[p + 2] - after < made
                && presses[p + 3] - before > quiet
                && before - after > 300
                && order_untold(&start, &moves, *p)
        });
        if let Some(ply) = found {
            return Swallowed {
                board,
                pgn,
                game,
                sans,
                ply,
                speed,
            };
        }
    }
    panic!("board {board}: no game of {file} has three plies to swallow");
}

/// The feed of round 1 checked by python-chess against the sources (tests/oracle).
fn check_feed(hub: &Hub, dir: &Path, games: &[&Swallowed], confirmed: bool, step: &str) {
    let (status, feed) = http_get(&hub.web, "/broadcast/round/1/games.pgn").unwrap();
    assert_eq!(status, 200, "{step}: {feed}");
    let path = dir.join(format!("feed-{step}.pgn"));
    std::fs::write(&path, &feed).unwrap();
    let expect: serde_json::Map<String, Value> = games
        .iter()
        .map(|g| {
            let want = json!({
                "pgn": g.pgn, "game": g.game, "from_ply": g.first_ply(), "to_ply": g.last_ply(),
                "plies": g.sans.len(), "confirmed": confirmed,
            });
            (g.board.to_string(), want)
        })
        .collect();
    let expect_path = dir.join(format!("expect-{step}.json"));
    std::fs::write(&expect_path, Value::Object(expect).to_string()).unwrap();
    let oracle = support::oracle::python_script("filled_in.py", &[&path, &expect_path]);
    let report = String::from_utf8_lossy(&oracle.stdout);
    assert!(
        oracle.status.success(),
        "{step}: python-chess: {report}{}\n{feed}",
        String::from_utf8_lossy(&oracle.stderr)
    );
    assert_eq!(report.lines().count(), games.len(), "{step}: {report}");
}

fn moves(detail: &Value) -> Vec<String> {
    serde_json::from_value(detail["moves"].clone()).unwrap()
}

fn decide(hub: &Hub, board: u16, from_ply: usize, order: &[String]) -> (u16, String) {
    let body = json!({
        "arbiter": "IA Aune", "decision": "order", "from_ply": from_ply, "moves": order,
    });
    http_post(
        &hub.web,
        &format!("/api/boards/{board}/decisions"),
        &body.to_string(),
    )
    .unwrap()
}

/// A legal move after the first two swallowed plies that is not the source's third: an
/// order that does not reach the board.
fn wrong_third(g: &Swallowed) -> String {
    let mut position = Chess::default();
    for san in &g.sans[..g.ply + 2] {
        let m = san
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&position)
            .unwrap();
        position.play_unchecked(m);
    }
    let third = &g.sans[g.ply + 2];
    position
        .legal_moves()
        .into_iter()
        .map(|m| SanPlus::from_move(position.clone(), m).to_string())
        .find(|san| san != third)
        .unwrap()
}

#[test]
fn three_plies_lost_to_a_stall_a_pulled_board_and_a_power_cut_are_filled_in_and_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, _) = Hub::configured(
        dir.path(),
        &format!("[event]\ntime_control = \"{RAPID_TC}\"\n"),
    );
    let stall_ms = 4_000;
    let unplug_ms = 5_000;
    let cut_ms = 10_000;
    // Three moves at real pace take longer than on a single board sped up.
    let pulled_ms = 8_000;
    // Single boards play each game in about 100 s: the fault lasts real time, so the three
    // presses come within it (a second to spare) and the fourth after it, with three
    // seconds for the node to read the board again.
    let single = |fault_ms: u64| {
        move |speed: f64| {
            let made = ((fault_ms - 1_000) as f64 * speed) as u64;
            let quiet = ((fault_ms + 3_000) as f64 * speed) as u64;
            (made, quiet)
        }
    };
    let single_speed = |last: u64| (last as f64 / 100_000.0).max(1.0);
    let stalled = find(1, RAPID, RAPID_TC, &[], single_speed, single(stall_ms));
    let unplugged = find(
        2,
        RAPID,
        RAPID_TC,
        &[stalled.game],
        single_speed,
        single(unplug_ms),
    );
    // A chain's games run at real pace while a fault lasts and its boards boot again, then
    // at their speed: the fourth press comes well after.
    let chain_speed = |last: u64| (last as f64 / 100_000.0).max(1.0);
    let cut = find(
        3,
        RAPID,
        RAPID_TC,
        &[stalled.game, unplugged.game],
        chain_speed,
        |_| (cut_ms - 2_000, cut_ms + 15_000),
    );
    let taken = [stalled.game, unplugged.game, cut.game];
    let pulled = find(4, RAPID, RAPID_TC, &taken, chain_speed, |_| {
        (pulled_ms - 1_000, pulled_ms + 10_000)
    });
    let games = [&stalled, &unplugged, &cut, &pulled];
    for g in games {
        eprintln!(
            "board {}: game {} of {}, plies {}-{} swallowed: {:?}, speed {:.1}",
            g.board,
            g.game,
            g.pgn.display(),
            g.first_ply(),
            g.last_ply(),
            g.order(),
            g.speed
        );
    }

    let single_play = |g: &Swallowed| Play::Pgn {
        file: g.pgn.clone(),
        game: g.game,
        time_control: RAPID_TC.into(),
    };
    let emulator_1 = Emulator::start(
        dir.path(),
        "1",
        &single_play(&stalled),
        stalled.speed,
        &[Fault::DropAtPly {
            ply: stalled.ply + 1,
            ms: stall_ms,
        }],
    );
    let emulator_2 = Emulator::start(
        dir.path(),
        "2",
        &single_play(&unplugged),
        unplugged.speed,
        &[Fault::UnplugAtPly {
            ply: unplugged.ply + 1,
            ms: unplug_ms,
        }],
    );
    let rapid = support::real_data().join("pgn-clocks").join(RAPID);
    // A chain of one board, `serial`, playing `g`'s game with `fault` on it.
    let chain = |name: &str, serial: &str, g: &Swallowed, fault: ChainFault| {
        Emulator::start_chain(
            dir.path(),
            name,
            &rapid,
            RAPID_TC,
            &[(serial.into(), g.game)],
            g.speed,
            &[fault],
        )
    };
    let chain_a = chain(
        "a",
        "01003",
        &cut,
        ChainFault::PowerCut {
            serial: "01003".into(),
            ply: cut.ply + 1,
            ms: cut_ms,
        },
    );
    let chain_b = chain(
        "b",
        "01004",
        &pulled,
        ChainFault::Unplug {
            serial: "01004".into(),
            ply: pulled.ply + 1,
            ms: pulled_ms,
        },
    );
    let enrolled: Vec<_> = [("dgt-1", 1), ("dgt-2", 2), ("01003", 3), ("01004", 4)]
        .iter()
        .map(|(hardware, board)| hub.enrol(hardware, *board, dir.path()))
        .collect();
    let _singles = LiveNode::start(
        &hub,
        dir.path(),
        "singles",
        &[(&enrolled[0], &emulator_1), (&enrolled[1], &emulator_2)],
    );
    let _chains = LiveNode::start_chains(
        &hub,
        dir.path(),
        "chains",
        &[
            (&chain_a, vec![&enrolled[2]]),
            (&chain_b, vec![&enrolled[3]]),
        ],
    );
    for emulator in [&emulator_1, &emulator_2, &chain_a, &chain_b] {
        let played = emulator.wait_played(Duration::from_secs(300));
        eprintln!("{played}");
    }

    // Every move followed, the swallowed ones in an order that reaches the board.
    for g in games {
        let detail = wait_board(&hub, g.board, Duration::from_secs(30), |d| {
            d["moves"]
                .as_array()
                .is_some_and(|m| m.len() >= g.sans.len())
        });
        let played = moves(&detail);
        let (from, to) = (g.first_ply(), g.last_ply());
        assert_eq!(played.len(), g.sans.len(), "board {}: {detail}", g.board);
        assert_eq!(played[..g.ply], g.sans[..g.ply], "board {}", g.board);
        assert_eq!(
            played[to..],
            g.sans[to..],
            "board {}: every later move",
            g.board
        );
        assert_eq!(detail["illegal_moves"], json!([]), "board {}", g.board);
        let filled = &detail["filled_in"];
        assert_eq!(
            filled.as_array().map(Vec::len),
            Some(1),
            "board {}: {filled}",
            g.board
        );
        assert_eq!(filled[0]["from_ply"], from, "board {}: {filled}", g.board);
        assert_eq!(filled[0]["to_ply"], to, "board {}: {filled}", g.board);
        assert!(filled[0]["orders"].as_u64().unwrap() >= 2, "{filled}");
        assert_eq!(filled[0]["confirmed"], false);
        let candidates: Vec<Vec<String>> =
            serde_json::from_value(filled[0]["candidates"].clone()).unwrap();
        assert!(candidates.contains(&g.order()), "{filled}");
        assert_eq!(
            candidates[0],
            played[from - 1..to],
            "the order followed first"
        );

        let alerts = http_json(&hub.web, &format!("/api/alerts?board={}", g.board));
        let raised: Vec<&Value> = alerts
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["kind"] == "moves_filled_in")
            .collect();
        assert_eq!(raised.len(), 1, "board {}: one alert: {alerts}", g.board);
        assert_eq!(raised[0]["article"], "7.4", "{}", raised[0]);
        assert!(
            raised[0]["text"]
                .as_str()
                .unwrap()
                .contains(&g.order().join(" ")),
            "the alert names the orders: {}",
            raised[0]
        );
    }
    check_feed(&hub, dir.path(), &games, false, "followed");

    // Wrong orders are refused and change nothing; the source's order is the arbiter's.
    for g in games {
        let from = g.first_ply();
        let mut wrong = g.sans[g.ply..g.ply + 2].to_vec();
        wrong.push(wrong_third(g));
        let (status, body) = decide(&hub, g.board, from, &wrong);
        assert_eq!(status, 409, "board {}: {wrong:?}: {body}", g.board);
        assert!(body.contains("does not reach"), "{body}");
        let (status, body) = decide(&hub, g.board, from, &g.order()[..2]);
        assert_eq!(
            status, 409,
            "board {}: two moves for three: {body}",
            g.board
        );
        let (status, body) = decide(&hub, g.board, from + 1, &g.order());
        assert_eq!(
            status, 409,
            "board {}: nothing filled in there: {body}",
            g.board
        );

        // The arbiter may take another order that reaches the board: the game follows it.
        let detail = http_json(&hub.web, &format!("/api/boards/{}", g.board));
        let candidates: Vec<Vec<String>> =
            serde_json::from_value(detail["filled_in"][0]["candidates"].clone()).unwrap();
        let other = candidates.iter().find(|o| **o != g.order()).unwrap();
        let (status, body) = decide(&hub, g.board, from, other);
        assert_eq!(status, 200, "board {}: {other:?}: {body}", g.board);
        let detail = http_json(&hub.web, &format!("/api/boards/{}", g.board));
        let played = moves(&detail);
        assert_eq!(
            played[from - 1..g.last_ply()],
            other[..],
            "board {}",
            g.board
        );
        assert_eq!(
            played[g.last_ply()..],
            g.sans[g.last_ply()..],
            "board {}",
            g.board
        );

        let (status, body) = decide(&hub, g.board, from, &g.order());
        assert_eq!(status, 200, "board {}: {body}", g.board);
        let entry: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(entry["article"], "7.4", "{entry}");
        let detail = http_json(&hub.web, &format!("/api/boards/{}", g.board));
        assert_eq!(
            moves(&detail),
            g.sans,
            "board {}: the source's moves",
            g.board
        );
        assert_eq!(detail["filled_in"][0]["confirmed"], true, "{detail}");
        let alerts = http_json(&hub.web, &format!("/api/alerts?board={}", g.board));
        for alert in alerts.as_array().unwrap() {
            if alert["kind"] == "moves_filled_in" {
                assert_eq!(alert["state"], "resolved", "{alert}");
            }
        }
    }
    check_feed(&hub, dir.path(), &games, true, "ordered");

    // The decision is journaled: a restart replays to the same game.
    hub.restart();
    for g in games {
        let detail = http_json(&hub.web, &format!("/api/boards/{}", g.board));
        assert_eq!(
            moves(&detail),
            g.sans,
            "board {} after the restart",
            g.board
        );
        assert_eq!(detail["filled_in"][0]["confirmed"], true, "{detail}");
        assert_eq!(
            detail["decisions"].as_array().map(Vec::len),
            Some(2),
            "{detail}"
        );
        assert_eq!(detail["decisions"][1]["decision"], "order", "{detail}");
    }
    check_feed(&hub, dir.path(), &games, true, "restarted");
}
