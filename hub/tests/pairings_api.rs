//! Pairings through a real hub: `hub serve --config` with the pairing program's TRF (a real
//! tournament) and a CSV round; `GET /api/rounds/{r}/pairings`; a result the arbiter
//! declares at a board appears in the round's pairings and goes back out in the TRF.

use crate::support;

use hub::pairings::round_pairings;
use hub::pairings::trf::Trf;
use serde_json::{json, Value};
use support::{http_get, http_json, http_post, Hub, Node, Replay};

#[test]
fn a_trf_rounds_pairings_and_the_hubs_results_back_out_as_trf() {
    let dir = tempfile::tempdir().unwrap();
    let source = support::real_data().join("trf/karl-mala-gedenkturnier-2005_trf06.trf");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(dir.path().join("karl.trf"), &text).unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        "[event]\nround = 7\n\n[pairings]\ntrf = \"karl.trf\"\n",
    );
    let trf = Trf::parse(&text).unwrap();

    // Every round the file pairs, as the library reads it.
    for round in [1, 4, 7] {
        let served = http_json(&hub.web, &format!("/api/rounds/{round}/pairings"));
        let expected = serde_json::to_value(round_pairings(&trf, round)).unwrap();
        assert_eq!(served, expected, "round {round}");
    }
    let first = &http_json(&hub.web, "/api/rounds/1/pairings")[0];
    for field in ["name", "fide_id", "rating", "title"] {
        assert!(first["white"].get(field).is_some() && first["black"].get(field).is_some());
    }
    assert_eq!(http_get(&hub.web, "/api/rounds/9/pairings").unwrap().0, 404);

    // Board 1 of round 7 plays (a real game), and the arbiter records a resignation.
    let game = Replay::new(1, "fide_world_cup_2025_rapid_15+10.pgn", 2, 3.0);
    let node = Node::start(&game, &hub, dir.path());
    node.finish(std::time::Duration::from_secs(30));
    let (status, body) = http_post(
        &hub.web,
        "/api/boards/1/decisions",
        &json!({"arbiter": "IA Test", "decision": "result", "result": "0-1", "cause": "resignation"}).to_string(),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let round7 = http_json(&hub.web, "/api/rounds/7/pairings");
    assert_eq!(round7[0]["board"], 1);
    let state = http_json(&hub.web, "/api/rounds/7");
    assert_eq!(state["in_play"], true);
    assert_eq!(state["games"], round7.as_array().unwrap().len());
    // Every game of the last round has a result (the hub's at board 1, the file's elsewhere).
    assert_eq!(state["complete"], true);
    assert_eq!(http_json(&hub.web, "/api/rounds/4")["in_play"], false);
    assert_eq!(
        round7[0]["result"], "0-1",
        "the hub's result, not the file's"
    );

    let (status, exported) = http_get(&hub.web, "/api/results.trf").unwrap();
    assert_eq!(status, 200);
    let back = Trf::parse(&exported).unwrap();
    let white = round7[0]["white"]["start_rank"].as_u64().unwrap() as u32;
    let black = round7[0]["black"]["start_rank"].as_u64().unwrap() as u32;
    assert_eq!(back.player(white).unwrap().rounds[6].result, Some('0'));
    assert_eq!(back.player(black).unwrap().rounds[6].result, Some('1'));
    // The tie-breaks the hub ranked by (the file names none: the default list) recorded
    // as TRF-2026 writes them, before the players.
    let records: Vec<&str> = exported
        .lines()
        .filter(|l| l.starts_with("202 ") || l.starts_with("212 "))
        .collect();
    assert_eq!(
        records,
        ["202 BH/C1,BH,DE,WIN,BPG", "212 PTS,BH/C1,BH,DE,WIN,BPG"]
    );
    let first_player = exported.lines().position(|l| l.starts_with("001"));
    assert!(exported.lines().position(|l| l.starts_with("212 ")) < first_player);
    let exported: String = exported
        .lines()
        .filter(|l| !records.contains(l))
        .map(|l| format!("{l}\n"))
        .collect();
    // Everything else as the pairing program wrote it: other records byte for byte, the
    // players' records but for their points and ranks (81–89, counted again from the
    // results and placed by the standings) and the two results the hub set.
    let rest = |line: &str| {
        let chars: Vec<char> = line.chars().collect();
        let mut kept: String = chars.iter().take(80).collect();
        kept.extend(chars.iter().skip(89));
        kept
    };
    assert_eq!(exported.lines().count(), text.lines().count());
    let mut changed = 0;
    for (out, was) in exported.lines().zip(text.lines()) {
        if !was.starts_with("001") {
            assert_eq!(out, was);
        } else if rest(out) != rest(was) {
            changed += 1;
        }
    }
    let expected_changes = [white, black]
        .iter()
        .filter(|r| {
            trf.player(**r).unwrap().rounds[6].result != back.player(**r).unwrap().rounds[6].result
        })
        .count();
    assert_eq!(changed, expected_changes);
    // The points are the results' under the file's point system, for every player.
    for player in &back.players {
        let counted = back.point_system().score(player, back.rounds());
        let written = player.points.as_deref().unwrap();
        assert_eq!(
            written,
            hub::pairings::trf::points_text(counted),
            "{}",
            player.name
        );
    }
}

#[test]
fn a_csv_round_is_served_and_a_hall_without_a_trf_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("round-3.csv"),
        "board,white,white_title,white_rating,white_fide_id,black,black_rating\n\
         1,\"Carlsen, Magnus\",GM,2830,1503014,\"Nakamura, Hikaru\",2800\n\
         2,\"=cmd|' /C calc'!A0\",,,,Player B,\n",
    )
    .unwrap();
    let (hub, _) = Hub::configured(
        dir.path(),
        "[[rounds]]\nnumber = 3\npairings = \"round-3.csv\"\n",
    );
    let round: Value = http_json(&hub.web, "/api/rounds/3/pairings");
    assert_eq!(round[0]["white"]["name"], "Carlsen, Magnus");
    assert_eq!(round[0]["white"]["title"], "GM");
    assert_eq!(round[0]["white"]["fide_id"], 1_503_014);
    assert_eq!(round[0]["black"]["rating"], 2800);
    assert_eq!(round[1]["black"]["name"], "Player B");
    assert_eq!(round[1]["result"], "*");
    // Broadcasters see the pairings before the first move.
    let (status, feed) = http_get(&hub.web, "/broadcast/round/3/games.pgn").unwrap();
    assert_eq!(status, 200);
    assert_eq!(feed.matches("[Result \"*\"]").count(), 2, "{feed}");
    assert!(feed.contains("[White \"Carlsen, Magnus\"]") && feed.contains("[WhiteTitle \"GM\"]"));
    assert!(feed.contains("[BlackElo \"2800\"]") && feed.contains("[WhiteFideId \"1503014\"]"));
    let state = http_json(&hub.web, "/api/rounds/3");
    assert_eq!(
        (
            state["games"].as_u64(),
            state["finished"].as_u64(),
            state["complete"].as_bool()
        ),
        (Some(2), Some(0), Some(false))
    );
    assert_eq!(http_get(&hub.web, "/api/results.trf").unwrap().0, 404);
    // The round's results go back as CSV, in the columns it was read in: board 2 without
    // an e-board scored by the arbiter, a forfeit.
    let (status, body) = http_post(
        &hub.web,
        "/api/rounds/3/boards/2/decisions",
        &json!({"arbiter": "IA Test", "decision": "result", "result": "-+"}).to_string(),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let (status, csv) = http_get(&hub.web, "/api/rounds/3/results.csv").unwrap();
    assert_eq!(status, 200);
    let back = hub::pairings::csv::read(&csv).unwrap();
    assert_eq!(back.len(), 2, "{csv}");
    assert_eq!(
        (back[0].result.as_str(), back[1].result.as_str()),
        ("*", "-+")
    );
    assert_eq!(back[0].white.fide_id, Some(1_503_014));
    // A name a spreadsheet would run as a formula (OWASP's CSV injection) goes out as text.
    assert_eq!(back[1].white.name, "'=cmd|' /C calc'!A0", "{csv}");
}

#[test]
fn a_configuration_naming_a_missing_file_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.toml");
    std::fs::write(
        &path,
        "[event]\nround = 2\n\n[pairings]\ntrf = \"nowhere.trf\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(support::workspace_bin("hub"))
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--data"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 5: pairings.trf") && stderr.contains("nowhere.trf"),
        "{stderr}"
    );
}
