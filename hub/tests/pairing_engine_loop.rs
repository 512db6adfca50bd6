//! The chief arbiter's loop against a real FIDE-endorsed pairing engine (BBP Pairings, built
//! from its source): the engine pairs a round, the hub reads it (`[pairings] trf`), the
//! boards play (`board-node replay` with real games) or the arbiters enter what the boards
//! cannot know (boards without an e-board, forfeits, a double forfeit), and the engine reads
//! `GET /api/results.trf` to pair the next round. Four rounds of a 21-player Swiss with
//! names in ten scripts, a pairing-allocated bye, a half-point bye, a withdrawal.
//!
//! After every round the engine accepts the hub's file as it is and its checker (`-c`)
//! finds nothing, and every player's results in it are what this test played and entered
//! (its own record, read with its own column reader, not the hub's parser). Between rounds
//! 2 and 3 the pairing program corrects a result (an appeal): the hall's result waits with
//! a high alert naming both, and stands until an arbiter declares the file's.
//!
//! The standings (C.07) follow the event: while a round's node boards are still in play
//! (the other boards decided, forfeits and the double forfeit among them), the provisional
//! table marks exactly their players `running` and equals gacrux's (the FIDE Technical
//! Commission's tie-break checker, PyPI) on the decided games; after every round it equals
//! gacrux's on everything. The oracle reads the test's own record, not the hub's file.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{http_get, http_json, http_post, Hub, Node, Replay};

/// The players in start-rank order: name, rating, federation.
const PLAYERS: [(&str, u16, &str); 21] = [
    ("Ødegård, Åse", 2450, "NOR"),
    ("Иванов, Сергей", 2440, "RUS"),
    ("Παπαδόπουλος, Νίκος", 2430, "GRE"),
    ("ჯაფარიძე, ნინო", 2420, "GEO"),
    ("Պետրոսյան, Արամ", 2410, "ARM"),
    ("李, 明", 2400, "CHN"),
    ("Kovács, Bőr Zsófia", 2390, "HUN"),
    ("Virtanen, Äijä", 2380, "FIN"),
    ("Müller, Jürgen", 2370, "GER"),
    ("कुमार, अर्जुन", 2360, "IND"),
    ("Nguyễn, Thị Hà", 2350, "VIE"),
    ("Şahin, Çağrı", 2340, "TUR"),
    ("Dvořák, Jiří", 2330, "CZE"),
    ("Łukasiewicz, Zoë", 2320, "POL"),
    ("Ngcobo, Thandiwe", 2310, "RSA"),
    ("García, José", 2300, "ESP"),
    ("O'Brien, Siobhán", 2290, "IRL"),
    ("Sørensen, Bjørn", 2280, "DEN"),
    ("Ahmed, Yusuf", 2270, "EGY"),
    ("Smith, John", 2260, "ENG"),
    ("田中, ユキ", 2250, "JPN"),
];

const ROUNDS: usize = 4;
const GAMES: &str = "fide_world_cup_2025_rapid_15+10.pgn";
/// Boards with an e-board and a node; the others have none (the usual hall: e-boards on
/// the top boards only).
const NODE_BOARDS: [u16; 2] = [1, 2];
/// A board the rounds never pair (ten games a round), where a node plays all the same.
const UNPAIRED_BOARD: u16 = 14;
/// Asks for a half-point bye in round 2 (`H`).
const HALF_BYE: (u32, usize) = (9, 2);
/// Withdraws after round 2: not paired in rounds 3 and 4.
const WITHDRAWN: (u32, usize) = (14, 3);

/// The event's tie-breaks: every family C.07 defines for individuals.
const TIEBREAKS: [&str; 15] = [
    "BH-C1", "BH", "SB", "DE", "WIN", "WON", "BPG", "BWG", "REP", "PS", "KS", "ARO", "TPR", "AOB",
    "BH-M1",
];

/// One player's round as the test played and entered it: opponent (0 for none), colour
/// (`w`, `b`, `-`), result code (TRF: `1 0 = + - H U Z`, blank while not over).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    opponent: u32,
    color: char,
    result: char,
}

/// The test's own record of the event: each player's entries, round by round.
type Record = BTreeMap<u32, Vec<Entry>>;

fn points(entry: &Entry) -> u32 {
    match entry.result {
        '1' | '+' | 'U' | 'F' => 10,
        '=' | 'H' => 5,
        _ => 0,
    }
}

/// The pairing program's file: every player with the rounds the record has, points counted
/// by the test (FIDE TRF-16 columns; a name's columns count its characters).
fn trf_text(record: &Record) -> String {
    let mut out = String::new();
    for line in [
        "012 Zeitnot Open 2026",
        "022 Oslo",
        "032 NOR",
        "042 2026/11/28",
        "052 2026/11/29",
        "062 21",
        "072 21",
        "082 0",
        "092 Individual: Swiss-System",
        "102 IA Test Arbiter",
        "122 15 min + 10 s per move",
        "222 900+10",
        "XXR 4",
        "XXC white1",
    ] {
        out.push_str(line);
        out.push_str("\r\n");
    }
    for (rank, entries) in record {
        let (name, rating, fed) = PLAYERS[*rank as usize - 1];
        let total: u32 = entries.iter().map(points).sum();
        let mut line = format!(
            "001 {rank:>4} m    {name:<33} {rating:>4} {fed:<3} {id:>11} {birth:<10} {pts:>4} {rank:>4}",
            id = 1_000_000 + rank,
            birth = "1990/01/01",
            pts = format!("{}.{}", total / 10, total % 10),
        );
        for entry in entries {
            let opponent = if entry.opponent == 0 {
                "0000".to_owned()
            } else {
                format!("{:>4}", entry.opponent)
            };
            line.push_str(&format!("  {opponent} {} {}", entry.color, entry.result));
        }
        out.push_str(line.trim_end());
        out.push_str("\r\n");
    }
    out
}

/// A column reader of the test's own: each player's entries in `text` (TRF-16 columns,
/// counted in characters).
fn read_entries(text: &str) -> Record {
    let mut record = Record::new();
    for line in text.lines().filter(|l| l.starts_with("001")) {
        let chars: Vec<char> = line.trim_end_matches('\r').chars().collect();
        let cols = |from: usize, to: usize| -> String {
            chars[from - 1..to.min(chars.len())]
                .iter()
                .collect::<String>()
        };
        let rank: u32 = cols(5, 8).trim().parse().unwrap();
        let mut entries = Vec::new();
        let mut column = 92;
        while chars.len() >= column {
            let opponent = cols(column, column + 3).trim().parse().unwrap_or(0);
            let color = chars.get(column + 4).copied().unwrap_or(' ');
            let result = chars.get(column + 6).copied().unwrap_or(' ');
            entries.push(Entry {
                opponent,
                color,
                result,
            });
            column += 10;
        }
        record.insert(rank, entries);
    }
    record
}

/// Pairs round `round` with the engine from `file` (every earlier round complete, this
/// round's byes and absences entered): the pairs in the order it publishes them, White
/// first, Black 0 for the pairing-allocated bye.
fn engine_pairs(dir: &Path, file: &Path, round: usize) -> Vec<(u32, u32)> {
    let out = dir.join(format!("pairs-{round}.txt"));
    let (code, stdout, stderr) = support::bbp::run(file, &["-p", out.to_str().unwrap()]);
    assert_eq!(code, 0, "the engine paired round {round}: {stdout}{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let count: usize = lines.next().unwrap().trim().parse().unwrap();
    let pairs: Vec<(u32, u32)> = lines
        .map(|l| {
            let mut n = l.split_whitespace().map(|w| w.parse().unwrap());
            (n.next().unwrap(), n.next().unwrap())
        })
        .collect();
    assert_eq!(pairs.len(), count);
    pairs
}

/// The record's round `round` entries for the pairing: each pair (blank results), the
/// pairing-allocated bye (`U`), and whatever was entered already (byes asked for,
/// absences).
fn enter_pairs(record: &mut Record, round: usize, pairs: &[(u32, u32)]) {
    for &(white, black) in pairs {
        let entry = |opponent, color, result| Entry {
            opponent,
            color,
            result,
        };
        if black == 0 {
            set(record, white, round, entry(0, '-', 'U'));
        } else {
            set(record, white, round, entry(black, 'w', ' '));
            set(record, black, round, entry(white, 'b', ' '));
        }
    }
}

fn set(record: &mut Record, rank: u32, round: usize, entry: Entry) {
    let entries = record.get_mut(&rank).unwrap();
    if entries.len() < round {
        entries.resize(
            round,
            Entry {
                opponent: 0,
                color: '-',
                result: 'Z',
            },
        );
    }
    entries[round - 1] = entry;
}

/// The result of the game between `white` and `black` in `round`, as the record takes it.
fn score(record: &mut Record, round: usize, white: u32, black: u32, result: &str) {
    let (w, b) = match result {
        "1-0" => ('1', '0'),
        "0-1" => ('0', '1'),
        "1/2-1/2" => ('=', '='),
        "+-" => ('+', '-'),
        "-+" => ('-', '+'),
        "--" => ('-', '-'),
        other => panic!("no result {other}"),
    };
    record.get_mut(&white).unwrap()[round - 1].result = w;
    record.get_mut(&black).unwrap()[round - 1].result = b;
}

/// The hub's standings after `round` (provisional while `running`'s players play) equal
/// gacrux's on the test's record: its decided games, the running ones left out (gacrux
/// reads a round without a result as an error; the hub counts them as not yet played).
fn standings_as_gacrux(hub: &Hub, dir: &Path, record: &Record, round: usize, running: &[u32]) {
    let answer = http_json(&hub.web, &format!("/api/standings?round={round}"));
    assert_eq!(answer["round"], round);
    assert_eq!(answer["provisional"], !running.is_empty(), "{answer}");
    let rows = answer["rows"].as_array().unwrap();
    for row in rows {
        let start = row["start_rank"].as_u64().unwrap() as u32;
        assert_eq!(row["running"], running.contains(&start), "{row}");
    }
    let mut decided = record.clone();
    for (rank, entries) in decided.iter_mut() {
        if running.contains(rank) {
            entries.truncate(round - 1);
        }
    }
    // ASCII names: the oracle reads columns by bytes.
    let text: String = trf_text(&decided)
        .lines()
        .map(|line| {
            if !line.starts_with("001") {
                return format!("{line}\r\n");
            }
            let chars: Vec<char> = line.chars().collect();
            let rank: String = chars[4..8].iter().collect();
            let name = format!("Player {}", rank.trim());
            let rest: String = chars[47..].iter().collect();
            format!(
                "{}{name:<33}{rest}\r\n",
                chars[..14].iter().collect::<String>()
            )
        })
        .collect();
    let tag = if running.is_empty() {
        "final"
    } else {
        "provisional"
    };
    let file = dir.join(format!("standings-{round}-{tag}.trf"));
    std::fs::write(&file, text).unwrap();
    let saved = dir.join(format!("standings-{round}-{tag}.json"));
    std::fs::write(&saved, answer.to_string()).unwrap();
    let codes = TIEBREAKS.join(",");
    let args = [
        file.as_path(),
        Path::new("fide-2026"),
        Path::new("none"),
        Path::new(&codes),
        saved.as_path(),
    ];
    let output = support::oracle::python_script("standings.py", &args);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "round {round} ({tag}): the hub's standings differ from gacrux's: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!(
        "round {round} ({tag}): {}",
        said.lines().next().unwrap_or_default()
    );
}

fn pgn_result(game: usize) -> String {
    let text = std::fs::read(support::real_data().join("pgn-clocks").join(GAMES)).unwrap();
    let parsed = board_node::pgn::read_game(&text, game).unwrap();
    parsed
        .tags
        .iter()
        .find(|(k, _)| k == "Result")
        .map(|(_, v)| v.clone())
        .unwrap()
}

fn decide(hub: &Hub, round: usize, board: u64, result: &str, cause: Option<&str>) -> Value {
    let mut body = json!({"arbiter": "IA Berg", "decision": "result", "result": result});
    if let Some(cause) = cause {
        body["cause"] = json!(cause);
    }
    let path = format!("/api/rounds/{round}/boards/{board}/decisions");
    let (status, answer) = http_post(&hub.web, &path, &body.to_string()).unwrap();
    assert_eq!(status, 200, "{path} {body}: {answer}");
    serde_json::from_str(&answer).unwrap()
}

/// The open alert that a file's result contradicts `board`'s decided one, once the hub
/// has read the file.
fn pending_correction(hub: &Hub, board: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let alerts = http_json(&hub.web, "/api/alerts");
        let found = alerts.as_array().unwrap().iter().find(|a| {
            a["kind"] == "result_corrected" && a["board"] == board && a["state"] == "raised"
        });
        if let Some(alert) = found {
            return alert.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no result_corrected alert: {alerts}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the hub serves `round`'s pairings as `file` gives them.
fn wait_for_pairings(hub: &Hub, round: usize, games: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = http_get(&hub.web, &format!("/api/rounds/{round}/pairings")).unwrap();
        if status == 200 {
            let pairings: Vec<Value> = serde_json::from_str(&body).unwrap();
            if pairings.len() == games {
                return pairings;
            }
        }
        assert!(
            Instant::now() < deadline,
            "round {round}'s pairings never read: {body}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn four_rounds_through_a_fide_endorsed_pairing_engine() {
    let dir = tempfile::tempdir().unwrap();
    let trf_path = dir.path().join("event.trf");
    let mut record: Record = (1..=PLAYERS.len() as u32)
        .map(|r| (r, Vec::new()))
        .collect();

    // Round 1, paired by the engine from the list of players.
    std::fs::write(&trf_path, trf_text(&record)).unwrap();
    let pairs = engine_pairs(dir.path(), &trf_path, 1);
    enter_pairs(&mut record, 1, &pairs);
    std::fs::write(&trf_path, trf_text(&record)).unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        &format!(
            "[pairings]\ntrf = \"event.trf\"\n\n[standings]\nrules = \"fide-2026\"\n\
             tiebreaks = [{}]\n",
            TIEBREAKS.map(|c| format!("{c:?}")).join(", ")
        ),
    );

    let mut game_index = 1;
    let mut corrected = None;
    for round in 1..=ROUNDS {
        let pairs = if round == 1 {
            pairs.clone()
        } else {
            // The pairing program takes the hub's results and pairs the next round.
            let (status, exported) = http_get(&hub.web, "/api/results.trf").unwrap();
            assert_eq!(status, 200);
            let mut from_hub = read_entries(&exported);
            if round == HALF_BYE.1 {
                let asked = Entry {
                    opponent: 0,
                    color: '-',
                    result: 'H',
                };
                set(&mut from_hub, HALF_BYE.0, round, asked);
                set(&mut record, HALF_BYE.0, round, asked);
            }
            if round >= WITHDRAWN.1 {
                let absent = Entry {
                    opponent: 0,
                    color: '-',
                    result: 'Z',
                };
                set(&mut from_hub, WITHDRAWN.0, round, absent);
                set(&mut record, WITHDRAWN.0, round, absent);
            }
            if round == 3 {
                // An appeal upheld in the pairing program: round 2's first decisive game
                // without a node scored the other way, before round 3 is paired.
                let (board, white, black, was) = corrected.take().unwrap();
                let now = if was == "1-0" { "0-1" } else { "1-0" };
                score(&mut from_hub, 2, white, black, now);
                score(&mut record, 2, white, black, now);
                corrected = Some((board, white, black, was));
            }
            let input = dir.path().join(format!("before-{round}.trf"));
            std::fs::write(&input, trf_text(&from_hub)).unwrap();
            let pairs = engine_pairs(dir.path(), &input, round);
            enter_pairs(&mut record, round, &pairs);
            enter_pairs(&mut from_hub, round, &pairs);
            // A round does not start while the engine has not paired it.
            let (status, body) =
                http_post(&hub.web, &format!("/api/rounds/{round}/start"), "{}").unwrap();
            assert_eq!(status, 409, "round {round} without pairings: {body}");
            assert!(body.contains("no pairings"), "{body}");
            std::fs::write(&trf_path, trf_text(&from_hub)).unwrap();
            let (status, body) =
                http_post(&hub.web, &format!("/api/rounds/{round}/start"), "{}").unwrap();
            assert_eq!(status, 200, "round {round} starts: {body}");
            if round == 3 {
                // The file's result contradicts the one decided in the hall: it waits for
                // an arbiter, who is alerted with both and declares the file's.
                let (board, _, _, was): (u64, u32, u32, String) = corrected.clone().unwrap();
                let file = if was == "1-0" { "0-1" } else { "1-0" };
                let alert = pending_correction(&hub, board);
                assert_eq!(alert["severity"], "high", "{alert}");
                let text = alert.to_string();
                assert!(text.contains(&was) && text.contains(file), "{text}");
                let round2 = http_json(&hub.web, "/api/rounds/2/pairings");
                let game = round2
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["board"] == board);
                assert_eq!(
                    game.unwrap()["result"],
                    was.as_str(),
                    "the hall's result waits"
                );
                decide(&hub, 2, board, file, Some("resignation"));
            }
            pairs
        };

        // The boards as the engine publishes them: board n is its n-th pair (the
        // pairing-allocated bye has none).
        let games: Vec<(u32, u32)> = pairs.iter().copied().filter(|p| p.1 != 0).collect();
        let pairings = wait_for_pairings(&hub, round, games.len());
        for (i, (white, black)) in games.iter().enumerate() {
            let p = &pairings[i];
            assert_eq!(p["board"], i + 1, "round {round}");
            assert_eq!(
                (
                    p["white"]["start_rank"].as_u64().unwrap() as u32,
                    p["black"]["start_rank"].as_u64().unwrap() as u32
                ),
                (*white, *black),
                "round {round}, board {}: the engine's players",
                i + 1
            );
            assert_eq!(p["white"]["name"], PLAYERS[*white as usize - 1].0);
        }
        // Byes and absent players are listed, none on a board.
        let byes = http_json(&hub.web, &format!("/api/rounds/{round}/byes"));
        let listed: Vec<(u64, String)> = byes
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["player"]["start_rank"].as_u64().unwrap(),
                    b["bye"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        for (rank, entries) in &record {
            let expected = match entries[round - 1].result {
                'U' => Some("pairing_allocated_bye"),
                'H' => Some("half_point_bye"),
                'Z' => Some("zero_point_bye"),
                _ => None,
            };
            let found = listed.iter().find(|(r, _)| *r == u64::from(*rank));
            assert_eq!(
                found.map(|(_, k)| k.as_str()),
                expected,
                "round {round}, player {rank}: {byes}"
            );
        }

        // The boards with nodes play real games; the arbiters enter their results where
        // the board did not end them.
        let mut nodes = Vec::new();
        let mut played = Vec::new();
        for board in NODE_BOARDS {
            let replay = Replay {
                time_control: Some("900+10".into()),
                ..Replay::new(board, GAMES, game_index, 4.0)
            };
            played.push((board, game_index));
            game_index += 1;
            nodes.push(Node::start(&replay, &hub, dir.path()));
        }
        if round == 1 {
            // A node bound to a board the round does not pair (the technician's slip): its
            // game would credit nobody, and the arbiters are told.
            let stray = Replay {
                time_control: Some("900+10".into()),
                ..Replay::new(UNPAIRED_BOARD, GAMES, 90, 2.0)
            };
            nodes.push(Node::start(&stray, &hub, dir.path()));
        }
        // While they play, the round cannot be followed by the next: boards have no result.
        for node in nodes {
            let report = node.finish(Duration::from_secs(120));
            assert_eq!(report["acked"], report["events"], "{report}");
        }
        let unpaired: Vec<Value> = http_json(&hub.web, "/api/alerts")
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["kind"] == "unpaired_board")
            .cloned()
            .collect();
        assert_eq!(
            unpaired.len(),
            1,
            "one alert, for the stray board only: {unpaired:?}"
        );
        assert_eq!(unpaired[0]["board"], UNPAIRED_BOARD);
        if round < ROUNDS {
            let (status, body) =
                http_post(&hub.web, &format!("/api/rounds/{}/start", round + 1), "{}").unwrap();
            assert_eq!(status, 409, "round {round} is not over: {body}");
        }
        // The boards without an e-board: scored by the arbiters, forfeits among them.
        for (i, &(white, black)) in games.iter().enumerate().skip(NODE_BOARDS.len()) {
            let board = i as u64 + 1;
            let result = match (round, i) {
                (2, 2) => "-+",
                (3, 3) => "--",
                (4, 4) => "+-",
                (_, i) => ["1-0", "0-1", "1/2-1/2"][(i + round) % 3],
            };
            // A forfeit may also be written as the points with its cause.
            let entry = if (round, i) == (4, 4) {
                decide(&hub, round, board, "1-0", Some("forfeit"))
            } else {
                let cause = match result {
                    "1/2-1/2" => Some("draw_agreement"),
                    "1-0" | "0-1" => Some("resignation"),
                    _ => None,
                };
                decide(&hub, round, board, result, cause)
            };
            if result.starts_with(['+', '-']) {
                assert_eq!(entry["result"], result, "{entry}");
                assert_eq!(entry["cause"], "forfeit", "{entry}");
            }
            score(&mut record, round, white, black, result);
            if round == 2
                && corrected.is_none()
                && !result.starts_with(['+', '-'])
                && result != "1/2-1/2"
            {
                corrected = Some((board, white, black, result.to_owned()));
            }
        }

        // The node boards' games are still in play, unless the board ended one: the
        // standings are provisional, their players marked, the rest exact.
        let hub_round = http_json(&hub.web, &format!("/api/rounds/{round}/pairings"));
        let mut running = Vec::new();
        for &(board, game) in &played {
            let (white, black) = games[board as usize - 1];
            let served = &hub_round[board as usize - 1]["result"];
            if served == "*" {
                running.extend([white, black]);
            } else {
                assert_eq!(
                    served,
                    pgn_result(game).as_str(),
                    "board {board} ended on the board"
                );
                score(&mut record, round, white, black, served.as_str().unwrap());
            }
        }
        if !running.is_empty() {
            standings_as_gacrux(&hub, dir.path(), &record, round, &running);
        }
        for (board, game) in played {
            let (white, black) = games[board as usize - 1];
            let result = pgn_result(game);
            if !running.contains(&white) {
                continue;
            }
            let detail = http_json(&hub.web, &format!("/api/rounds/{round}/boards/{board}"));
            if detail["result"] != result.as_str() {
                let cause = if result == "1/2-1/2" {
                    "draw_agreement"
                } else {
                    "resignation"
                };
                decide(&hub, round, u64::from(board), &result, Some(cause));
            }
            score(&mut record, round, white, black, &result);
        }
        standings_as_gacrux(&hub, dir.path(), &record, round, &[]);

        // The engine takes the hub's file as it is, and its checker finds nothing.
        let (status, exported) = http_get(&hub.web, "/api/results.trf").unwrap();
        assert_eq!(status, 200);
        assert!(exported.contains("\r\n"), "CRLF kept");
        let path = dir.path().join(format!("results-{round}.trf"));
        std::fs::write(&path, &exported).unwrap();
        let (code, stdout, stderr) = support::bbp::run(&path, &["-c"]);
        assert_eq!(
            code, 0,
            "the engine refuses round {round}'s results: {stdout}{stderr}"
        );
        assert!(
            !stdout.contains("Checker pairings") && !stdout.contains("No valid pairing"),
            "the checker, round {round}: {stdout}"
        );
        // The file records the event's tie-breaks (TRF-2026's 202 and 212) and places the
        // players as FIDE's reference tool ranks them by those records.
        let list = TIEBREAKS.map(|c| c.replace('-', "/")).join(",");
        assert!(
            exported.contains(&format!("\r\n202 {list}\r\n"))
                && exported.contains(&format!("\r\n212 PTS,{list}\r\n")),
            "the tie-break records: {exported}"
        );
        let ranks = support::oracle::python_script(
            "trf_ranks.py",
            &[path.as_path(), Path::new(&round.to_string())],
        );
        assert!(
            ranks.status.success(),
            "round {round}: the file's ranks: {}{}",
            String::from_utf8_lossy(&ranks.stdout),
            String::from_utf8_lossy(&ranks.stderr)
        );
        eprint!("{}", String::from_utf8_lossy(&ranks.stdout));
        // Every player's results are what was played and entered.
        let served = read_entries(&exported);
        for (rank, entries) in &record {
            assert_eq!(
                &served[rank][..round],
                &entries[..round],
                "player {rank} after round {round}"
            );
        }
        eprintln!(
            "round {round}: {} boards, the engine accepts the hub's file",
            games.len()
        );
    }

    // The correction stood, and the arbiters were told.
    let (board, white, black, was) = corrected.expect("a result corrected");
    let round2 = http_json(&hub.web, "/api/rounds/2/pairings");
    let game = round2
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["board"] == board)
        .unwrap();
    assert_eq!(
        u64::from(white),
        game["white"]["start_rank"].as_u64().unwrap()
    );
    assert_eq!(
        u64::from(black),
        game["black"]["start_rank"].as_u64().unwrap()
    );
    assert_ne!(game["result"], was.as_str(), "the file's result stands");
    let alerts = http_json(&hub.web, "/api/alerts");
    let told = alerts
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "result_corrected");
    let told = told.unwrap_or_else(|| panic!("no result_corrected alert: {alerts}"));
    assert_eq!(told["board"], board);
    assert_eq!(told["severity"], "high");
    assert_eq!(
        told["state"], "resolved",
        "the declaration answered it: {told}"
    );
    let text = told.to_string();
    assert!(text.contains(&was), "{text}");
    let audit = http_json(&hub.web, &format!("/api/rounds/2/boards/{board}"));
    let decisions = audit["decisions"].as_array().unwrap();
    assert!(
        decisions
            .iter()
            .any(|d| d["arbiter"] == "IA Berg" && d["result"] == was.as_str()),
        "the hub's result stays in the audit trail: {audit}"
    );
    // The file changed nothing by itself: the arbiter's second declaration took its result.
    let declared: Vec<&Value> = decisions
        .iter()
        .filter(|d| d["decision"] == "result")
        .collect();
    assert_eq!(declared.len(), 2, "{audit}");
    assert!(
        declared.iter().all(|d| d["arbiter"] == "IA Berg"),
        "{audit}"
    );

    // The feed shows a forfeit as a game not played.
    let (status, feed) = http_get(&hub.web, "/broadcast/round/2/games.pgn").unwrap();
    assert_eq!(status, 200);
    assert!(feed.contains("[Termination \"forfeit\"]"), "{feed}");
    // The time control came from the file's record 222 (the configuration names none).
    assert!(feed.contains("[TimeControl \"900+10\"]"), "{feed}");
}
