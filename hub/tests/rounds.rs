//! One hub for the whole event: three rounds of real games on the same three
//! boards, the same nodes (their sequence numbers going on), the pairing program's TRF
//! exported anew before each round, the hub killed (SIGKILL) in the middle of round 2.
//! Afterwards every round's moves, results and feed are the source games', round 1's feed is
//! still served while round 3 is played, a result the arbiter enters for round 2 after round
//! 3 began reaches round 2's feed, and the TRF export carries all three rounds' results.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use support::{http_get, http_json, http_post, Hub, Node, Replay};

const FILE: &str = "fide_world_cup_2025_rapid_15+10.pgn";

/// Each round's games of `FILE` (numbered from 1): six different players each round, some
/// of round 1's players again in round 3 (their rematches).
const ROUNDS: [[usize; 3]; 3] = [[17, 19, 26], [12, 7, 11], [37, 39, 35]];

/// White, Black and the result of a game of `FILE`, from its tags.
fn tags(game: usize) -> (String, String, String) {
    let text = std::fs::read(support::real_data().join("pgn-clocks").join(FILE)).unwrap();
    let parsed = board_node::pgn::read_game(&text, game).unwrap();
    let tag = |name: &str| {
        parsed
            .tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    (tag("White"), tag("Black"), tag("Result"))
}

/// The TRF a pairing program exports before round `upto`: every player, the pairings of
/// rounds 1 to `upto`, and the results of the rounds before it (FIDE TRF-16 columns).
fn trf(upto: usize) -> String {
    let mut players: Vec<String> = Vec::new();
    let rank = |name: &str, players: &mut Vec<String>| -> u32 {
        match players.iter().position(|p| p == name) {
            Some(i) => i as u32 + 1,
            None => {
                players.push(name.to_owned());
                players.len() as u32
            }
        }
    };
    // (round, white rank, black rank, result)
    let mut games = Vec::new();
    for (round, numbers) in ROUNDS.iter().enumerate() {
        for game in numbers {
            let (white, black, result) = tags(*game);
            let (w, b) = (rank(&white, &mut players), rank(&black, &mut players));
            games.push((round + 1, w, b, result));
        }
    }
    let mut out =
        String::from("012 Zeitnot rounds test\n022 Hall\n042 2026/11/25\n122 15'+10\"\nXXR 3\n");
    for (i, name) in players.iter().enumerate() {
        let me = i as u32 + 1;
        let rating = 2700 - 10 * me;
        let mut line = format!(
            "001 {me:>4}  GM  {name:<33} {rating:>4} FID {:>11} {:>10} {:>4} {me:>4}",
            70_000_000 + me,
            "2000/01/01",
            "0.0"
        );
        for round in 1..=upto {
            let block = games.iter().find_map(|(r, w, b, result)| {
                if *r != round || (me != *w && me != *b) {
                    return None;
                }
                let white = me == *w;
                let opponent = if white { *b } else { *w };
                let code = match (round < upto, result.as_str(), white) {
                    (false, ..) => ' ',
                    (true, "1-0", true) | (true, "0-1", false) => '1',
                    (true, "1-0", false) | (true, "0-1", true) => '0',
                    (true, ..) => '=',
                };
                Some(format!(
                    "  {opponent:>4} {} {code}",
                    if white { 'w' } else { 'b' }
                ))
            });
            line.push_str(&block.unwrap_or_else(|| "  0000 - Z".to_owned()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The replays of `round`: each game on the board its pairing got (found by the players'
/// names in `GET /api/rounds/{r}/pairings`).
fn replays(hub: &Hub, round: usize) -> Vec<Replay> {
    let pairings = http_json(&hub.web, &format!("/api/rounds/{round}/pairings"));
    ROUNDS[round - 1]
        .iter()
        .map(|game| {
            let (white, black, _) = tags(*game);
            let pairing = pairings
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["white"]["name"] == white && p["black"]["name"] == black)
                .unwrap_or_else(|| {
                    panic!("{white} – {black} not paired in round {round}: {pairings}")
                });
            let board = pairing["board"].as_u64().unwrap() as u16;
            Replay {
                time_control: Some("900+10".into()),
                ..Replay::new(board, FILE, *game, 6.0)
            }
        })
        .collect()
}

/// Plays `round`'s games to the end; `during` runs while they are played.
fn play(hub: &mut Hub, dir: &Path, round: usize, during: impl FnOnce(&mut Hub)) -> Vec<Replay> {
    let replays = replays(hub, round);
    let nodes: Vec<Node> = replays.iter().map(|r| Node::start(r, hub, dir)).collect();
    std::thread::sleep(Duration::from_secs(2));
    during(hub);
    for node in nodes {
        let report = node.finish(Duration::from_secs(120));
        assert_eq!(report["acked"], report["events"], "{report}");
    }
    replays
}

/// The arbiter enters the results the board did not show (resignations, agreed draws), as
/// the source game ended.
fn enter_results(hub: &Hub, round: usize, replays: &[Replay], only: impl Fn(u16) -> bool) {
    for replay in replays.iter().filter(|r| only(r.board)) {
        let (_, _, result) = tags(replay.game);
        let detail = http_json(
            &hub.web,
            &format!("/api/rounds/{round}/boards/{}", replay.board),
        );
        if detail["result"] == result.as_str() {
            continue;
        }
        let cause = if result == "1/2-1/2" {
            "draw_agreement"
        } else {
            "resignation"
        };
        let decision =
            json!({"arbiter": "IA Berg", "decision": "result", "result": result, "cause": cause});
        let path = format!("/api/rounds/{round}/boards/{}/decisions", replay.board);
        let (status, body) = http_post(&hub.web, &path, &decision.to_string()).unwrap();
        assert_eq!(status, 200, "{path}: {body}");
    }
}

fn start(hub: &Hub, round: usize, body: &str) -> (u16, String) {
    http_post(&hub.web, &format!("/api/rounds/{round}/start"), body).unwrap()
}

/// The feed of `round` compared with the source games by python-chess (moves, clocks), and
/// its results with the sources' tags.
fn check_feed(hub: &Hub, dir: &Path, round: usize, replays: &[Replay]) {
    let (status, feed) =
        http_get(&hub.web, &format!("/broadcast/round/{round}/games.pgn")).unwrap();
    assert_eq!(status, 200, "round {round}'s feed: {feed}");
    let path = dir.join(format!("feed-{round}.pgn"));
    std::fs::write(&path, &feed).unwrap();
    let mut sources = serde_json::Map::new();
    for replay in replays {
        let detail = http_json(
            &hub.web,
            &format!("/api/rounds/{round}/boards/{}", replay.board),
        );
        sources.insert(
            replay.board.to_string(),
            json!({"pgn": replay.pgn, "game": replay.game, "clock_ms": detail["clock_ms"]}),
        );
    }
    let sources_path = dir.join(format!("sources-{round}.json"));
    std::fs::write(&sources_path, Value::Object(sources).to_string()).unwrap();
    let oracle = support::oracle::python_script("broadcast_feed.py", &[&path, &sources_path]);
    let report = String::from_utf8_lossy(&oracle.stdout).to_string();
    assert!(
        oracle.status.success(),
        "round {round}, python-chess: {report}{}",
        String::from_utf8_lossy(&oracle.stderr)
    );
    for replay in replays {
        let (_, _, result) = tags(replay.game);
        let line = format!("board {}: ", replay.board);
        let shown = report.lines().find(|l| l.starts_with(&line)).unwrap();
        assert!(
            shown.ends_with(&format!("result {result}")),
            "round {round}: {shown}"
        );
    }
    eprintln!("round {round}:\n{report}");
}

/// Every game's moves and result as the API shows them, by round and board.
fn games_of(hub: &Hub, rounds: &[Vec<Replay>]) -> BTreeMap<(usize, u16), (Vec<String>, String)> {
    let mut games = BTreeMap::new();
    for (i, replays) in rounds.iter().enumerate() {
        for replay in replays {
            let detail = http_json(
                &hub.web,
                &format!("/api/rounds/{}/boards/{}", i + 1, replay.board),
            );
            let moves: Vec<String> = serde_json::from_value(detail["moves"].clone()).unwrap();
            games.insert(
                (i + 1, replay.board),
                (moves, detail["result"].as_str().unwrap().to_owned()),
            );
        }
    }
    games
}

/// The results in a TRF by (start rank, round), read from its columns (99, then every 10).
fn trf_results(text: &str) -> BTreeMap<(u32, usize), char> {
    let mut results = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("001")) {
        let rank: u32 = line[4..8].trim().parse().unwrap();
        let chars: Vec<char> = line.chars().collect();
        for round in 1..=3 {
            // Results only: byes and unpaired rounds are the file's own.
            if let Some(code) = chars
                .get(98 + 10 * (round - 1))
                .filter(|c| "10=".contains(**c))
            {
                results.insert((rank, round), *code);
            }
        }
    }
    results
}

#[test]
fn three_rounds_on_one_hub_with_a_crash_in_round_two() {
    let dir = tempfile::tempdir().unwrap();
    let trf_path = dir.path().join("event.trf");
    std::fs::write(&trf_path, trf(1)).unwrap();
    let (lichess, pushed) = support::lichess::stand_in();
    let (mut hub, _) = Hub::configured(
        dir.path(),
        &format!(
            "[event]\nname = \"Rounds test\"\ntime_control = \"900+10\"\n\n[laws]\ngame_type = \"rapid\"\n\n\
             [pairings]\ntrf = \"event.trf\"\n\n[broadcast]\nfolder = \"livechess\"\n\n\
             [broadcast.lichess]\nurl = \"http://127.0.0.1:{lichess}\"\nround_id = \"round-one\"\ntoken = \"lip_t\"\n\n\
             [[rounds]]\nnumber = 2\nlichess_round_id = \"round-two\"\n\n\
             [[rounds]]\nnumber = 3\nlichess_round_id = \"round-three\"\n"
        ),
    );
    let rounds_of = |hub: &Hub| http_json(&hub.web, "/api/rounds");
    assert_eq!(rounds_of(&hub)[0]["round"], 1);
    assert_eq!(rounds_of(&hub)[0]["in_play"], true);

    // Round 1.
    let round_1 = play(&mut hub, dir.path(), 1, |_| {});
    // Round 2 cannot start while round 1 is played.
    let (status, why) = start(&hub, 2, "");
    assert_eq!(status, 409, "{why}");
    enter_results(&hub, 1, &round_1, |_| true);
    assert_eq!(rounds_of(&hub)[0]["complete"], true);

    // The pairing program gets the results and pairs round 2 into the same file.
    let (status, exported) = http_get(&hub.web, "/api/results.trf").unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        trf_results(&exported),
        trf_results(&trf(2))
            .into_iter()
            .filter(|((_, r), _)| *r == 1)
            .collect()
    );
    std::fs::write(&trf_path, trf(2)).unwrap();
    let (status, body) = start(&hub, 2, r#"{"by": "IA Berg"}"#);
    assert_eq!(status, 200, "{body}");
    // Starting it again changes nothing.
    assert_eq!(start(&hub, 2, "").0, 200);

    // Round 2, the hub killed and restarted while it is played.
    let round_2 = play(&mut hub, dir.path(), 2, |hub| hub.restart());
    let unfinished = round_2[2].board;
    enter_results(&hub, 2, &round_2, |b| b != unfinished);
    let (status, why) = start(&hub, 3, "");
    assert_eq!(status, 409, "a game of round 2 has no result: {why}");
    std::fs::write(&trf_path, trf(3)).unwrap();
    let (status, body) = start(&hub, 3, r#"{"force": true, "by": "IA Berg"}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(start(&hub, 1, "").0, 409, "a round played before");

    // Round 3; meanwhile round 1's feed is served, and round 2's missing result is entered.
    let round_3 = play(&mut hub, dir.path(), 3, |hub| {
        check_feed(hub, dir.path(), 1, &round_1);
        enter_results(hub, 2, &round_2, |b| b == unfinished);
        let states = rounds_of(hub);
        let in_play: Vec<&Value> = states
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["in_play"] == true)
            .collect();
        assert_eq!(in_play.len(), 1);
        assert_eq!(in_play[0]["round"], 3);
    });
    enter_results(&hub, 3, &round_3, |_| true);
    let rounds = [round_1, round_2, round_3];

    // Every round's moves and results are the source games'.
    let games = games_of(&hub, &rounds);
    for (i, replays) in rounds.iter().enumerate() {
        for replay in replays {
            let (moves, result) = &games[&(i + 1, replay.board)];
            assert_eq!(
                moves,
                &replay.sans,
                "round {} board {}",
                i + 1,
                replay.board
            );
            assert_eq!(
                result,
                &tags(replay.game).2,
                "round {} board {}",
                i + 1,
                replay.board
            );
        }
        check_feed(&hub, dir.path(), i + 1, replays);
    }
    for state in rounds_of(&hub).as_array().unwrap() {
        assert_eq!(state["complete"], true, "{state}");
        assert_eq!(state["games"], 3, "{state}");
    }
    // The TRF export carries the three rounds' results, as the games ended.
    let (_, exported) = http_get(&hub.web, "/api/results.trf").unwrap();
    let expected = {
        std::fs::write(dir.path().join("complete.trf"), trf(4)).unwrap();
        trf_results(&trf(4))
    };
    assert_eq!(trf_results(&exported).len(), 18);
    assert_eq!(trf_results(&exported), expected);

    // The LiveChess folder keeps a folder per round, each as its feed; lichess got each
    // round in its own lichess round.
    let folder = dir.path().join("livechess");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    for round in 1..=3 {
        let (_, feed) = http_get(&hub.web, &format!("/broadcast/round/{round}/games.pgn")).unwrap();
        let file = folder.join(format!("round-{round}/games.pgn"));
        while std::fs::read_to_string(&file).ok().as_deref() != Some(feed.as_str()) {
            assert!(
                std::time::Instant::now() < deadline,
                "the folder's round {round} never caught up"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let id = ["round-one", "round-two", "round-three"][round - 1];
        let request = format!("POST /api/broadcast/round/{id}/push HTTP/1.1");
        loop {
            let last = pushed
                .lock()
                .unwrap()
                .iter()
                .rev()
                .find(|p| p.request_line == request)
                .map(|p| p.body.clone());
            // A finished round's games as its last push had them (a result entered after
            // the next round began is the folder's and the feed's, not lichess's).
            if last
                .as_deref()
                .is_some_and(|body| body.matches("[Event ").count() == 3)
            {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "round {round} never reached lichess round {id}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let tournament: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("tournament.json")).unwrap())
            .unwrap();
    assert_eq!(
        tournament["rounds"],
        json!([{"count": 3, "live": 0}, {"count": 3, "live": 0}, {"count": 3, "live": 0}])
    );

    // A restart folds the journal into the same event: every round as it was.
    let before = (games, rounds_of(&hub));
    hub.restart();
    assert_eq!((games_of(&hub, &rounds), rounds_of(&hub)), before);
    // The board's game in play is its game of round 3 (the clock aside, which runs on).
    let without_clock = |mut detail: Value| {
        detail.as_object_mut().unwrap().remove("clock");
        detail
    };
    assert_eq!(
        without_clock(http_json(&hub.web, "/api/boards/1")),
        without_clock(http_json(&hub.web, "/api/rounds/3/boards/1"))
    );

    // The finished rounds' events left sled: the events databases before round 3's start
    // are compressed files now, the round in play's is the only one open, and the journal
    // still holds every board's events, each once.
    let names = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(hub.data.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (open, archived) = (names("events"), names("archive"));
    assert_eq!(open.len(), 1, "events databases open: {open:?}");
    assert!(archived.len() >= 2, "archived: {archived:?}");
    assert!(archived.iter().all(|f| f.ends_with(".z")), "{archived:?}");
    let last_seqs: Vec<(u16, u64)> = rounds[2]
        .iter()
        .map(|r| {
            let detail = http_json(&hub.web, &format!("/api/boards/{}", r.board));
            (r.board, detail["last_seq"].as_u64().unwrap())
        })
        .collect();
    hub.kill();
    let journal = hub::edge::journal::Journal::open(&hub.data).unwrap();
    for (board, last) in last_seqs {
        let seqs = journal.seqs(protocol::BoardNo(board)).unwrap();
        let want: Vec<protocol::Seq> = (1..=last).map(protocol::Seq).collect();
        assert_eq!(seqs, want, "board {board}: every event, once");
    }
}
