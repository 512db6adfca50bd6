//! A team round: the real TRF-26 team file (`grandmommys-cup`, 50 teams of four
//! boards) gives round 1's matches; the first match's four boards play real games on board
//! nodes. The supervision page (Chromium) groups the match's boards under the teams and
//! keeps its score as the games finish; the feed tags each game with the teams
//! (`WhiteTeam`, `BlackTeam`, as lichess's broadcasts read them); the round's view lists the
//! pairings with the teams and results; the team standings (API and page) count the match
//! as its boards ended.

use crate::support;

use std::time::Duration;

use serde_json::{json, Value};
use support::browser::Browser;
use support::{http_get, http_json, http_post, Hub, Node, Replay};

const FILE: &str = "fide_world_cup_2025_rapid_15+10.pgn";
/// Four short real games, one a board of the first match.
const GAMES: [usize; 4] = [19, 26, 17, 12];

/// `2½`, `3`, `0`, `½`.
fn points(x: f64) -> String {
    let whole = x.trunc() as u32;
    match (whole, x.fract() > 0.0) {
        (0, true) => "½".into(),
        (n, true) => format!("{n}½"),
        (n, false) => n.to_string(),
    }
}

#[test]
fn a_team_rounds_match_scores_on_the_page_and_teams_in_the_feed() {
    let dir = tempfile::tempdir().unwrap();
    let trf = support::real_data().join("trf/grandmommys-cup_trf26-adaptation_sharly.trf");
    let config = format!(
        "[event]\nname = \"Grandmommy's Cup\"\nround = 1\ntime_control = \"900+10\"\n\n\
         [pairings]\ntrf = \"{}\"\n",
        trf.display()
    );
    let (hub, _) = Hub::configured(dir.path(), &config);

    // Round 1's first match: four boards, two teams, the colours alternating (352 WBWB).
    let pairings = http_json(&hub.web, "/api/rounds/1/pairings");
    let first: Vec<&Value> = pairings.as_array().unwrap().iter().take(4).collect();
    let teams = [
        first[0]["white_team"].as_str().unwrap().to_owned(),
        first[0]["black_team"].as_str().unwrap().to_owned(),
    ];
    for (i, game) in first.iter().enumerate() {
        assert_eq!(game["board"], i + 1);
        let (white, black) = (
            game["white_team"].as_str().unwrap(),
            game["black_team"].as_str().unwrap(),
        );
        let expected = if i % 2 == 0 {
            (&teams[0], &teams[1])
        } else {
            (&teams[1], &teams[0])
        };
        assert_eq!(
            (white, black),
            (expected.0.as_str(), expected.1.as_str()),
            "board {}",
            i + 1
        );
    }

    // The four boards play real games; the arbiter enters the results the boards do not show.
    let replays: Vec<Replay> = GAMES
        .iter()
        .enumerate()
        .map(|(i, game)| Replay {
            time_control: Some("900+10".into()),
            ..Replay::new(i as u16 + 1, FILE, *game, 5.0)
        })
        .collect();
    Node::play_all(&replays, &hub, dir.path());
    let mut score = [0.0, 0.0];
    for (i, replay) in replays.iter().enumerate() {
        let text = std::fs::read(&replay.pgn).unwrap();
        let game = board_node::pgn::read_game(&text, replay.game).unwrap();
        let result = game
            .tags
            .iter()
            .find(|(k, _)| k == "Result")
            .unwrap()
            .1
            .clone();
        let detail = http_json(&hub.web, &format!("/api/boards/{}", replay.board));
        if detail["result"] != result.as_str() {
            let cause = if result == "1/2-1/2" {
                "draw_agreement"
            } else {
                "resignation"
            };
            let decision = json!({"arbiter": "IA Berg", "decision": "result", "result": result, "cause": cause});
            let path = format!("/api/boards/{}/decisions", replay.board);
            assert_eq!(
                http_post(&hub.web, &path, &decision.to_string()).unwrap().0,
                200
            );
        }
        // The first team has White on boards 1 and 3.
        let first_team_white = i % 2 == 0;
        let (white, black) = match result.as_str() {
            "1-0" => (1.0, 0.0),
            "0-1" => (0.0, 1.0),
            _ => (0.5, 0.5),
        };
        let (a, b) = if first_team_white {
            (white, black)
        } else {
            (black, white)
        };
        score[0] += a;
        score[1] += b;
    }

    // The feed names the teams of every game.
    let (status, feed) = http_get(&hub.web, "/broadcast/round/1/game-1.pgn").unwrap();
    assert_eq!(status, 200);
    assert!(
        feed.contains(&format!("[WhiteTeam \"{}\"]", teams[0])),
        "{feed}"
    );
    assert!(
        feed.contains(&format!("[BlackTeam \"{}\"]", teams[1])),
        "{feed}"
    );
    let (_, second) = http_get(&hub.web, "/broadcast/round/1/game-2.pgn").unwrap();
    assert!(
        second.contains(&format!("[WhiteTeam \"{}\"]", teams[1])),
        "{second}"
    );

    // The page groups the match's boards under its teams and shows the score.
    let mut browser = Browser::start();
    browser.open_page(&format!("http://{}/?token={}", hub.http, hub.token));
    let header = format!("{} – {}", teams[0], teams[1]);
    let expected = format!("{}–{}", points(score[0]), points(score[1]));
    let shown = browser.expect(
        "the first match's score",
        &format!(
            "(() => {{ const m = document.querySelector('.match[data-teams=\"{header}\"]'); \
             return m && m.querySelector('.score').textContent === '{expected}' && \
             [...m.querySelectorAll('.tile')].map((t) => t.dataset.board).join(','); }})()"
        ),
        Duration::from_secs(10),
    );
    assert_eq!(shown, "1,2,3,4", "the match's boards, in order");
    let matches = browser.eval("document.querySelectorAll('.match').length");
    assert!(
        matches.as_u64().unwrap() >= 20,
        "every match of the round: {matches}"
    );
    browser.screenshot("team-round");

    // The rounds panel opens the round's games with the teams and results.
    browser.expect(
        "the rounds panel",
        "document.querySelector('#rounds li[data-round=\"1\"]')",
        Duration::from_secs(15),
    );
    browser.click("#rounds li[data-round=\"1\"]");
    let row = browser.expect(
        "the round's view",
        "(() => { const r = document.querySelector('#round-games tr[data-board=\"1\"]'); return r && r.textContent; })()",
        Duration::from_secs(10),
    );
    let row = row.as_str().unwrap();
    assert!(
        row.contains(&format!("({})", teams[0])) && row.contains(&format!("({})", teams[1])),
        "{row}"
    );
    browser.screenshot("team-round-view");

    // The team standings count the match as its boards ended here (the file's results for
    // the round's other matches): match points from the game points (C.07 11).
    let standings = http_json(&hub.web, "/api/standings/teams");
    assert_eq!(standings["provisional"], false);
    let rows = standings["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 50, "every team");
    let row = |team: &str| rows.iter().find(|r| r["team"] == team).unwrap().clone();
    let match_points = |ours: f64, theirs: f64| match ours.partial_cmp(&theirs) {
        Some(std::cmp::Ordering::Greater) => 2.0,
        Some(std::cmp::Ordering::Less) => 0.0,
        _ => 1.0,
    };
    for (k, team) in teams.iter().enumerate() {
        let row = row(team);
        assert_eq!(row["running"], false, "{row}");
        assert_eq!(row["game_points"], score[k], "{row}");
        assert_eq!(
            row["match_points"],
            match_points(score[k], score[1 - k]),
            "{row}"
        );
    }
    assert!(rows.iter().all(|r| r["running"] == false));

    // The page shows them above the players', with the finished match's points.
    browser.eval("location.hash = '#/standings'");
    let first = row(&teams[0]);
    let shown = browser.expect(
        "the team standings",
        &format!(
            "(() => {{ const t = document.querySelector('table.standings.teams'); \
             const r = t && t.querySelector('tr[data-team=\"{}\"]'); \
             return r && !r.classList.contains('running') && t.tBodies[0].rows.length + ' ' + \
             r.querySelector('.points').textContent + ' ' + r.querySelector('.game-points').textContent; }})()",
            first["number"]
        ),
        Duration::from_secs(15),
    );
    let shown_points = |v: &serde_json::Value| {
        let x = v.as_f64().unwrap();
        if x.fract() == 0.0 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        }
    };
    assert_eq!(
        shown.as_str().unwrap(),
        format!(
            "50 {} {}",
            shown_points(&first["match_points"]),
            shown_points(&first["game_points"])
        )
    );
    let players = browser.eval("document.querySelectorAll('table.standings:not(.teams)').length");
    assert_eq!(players, 1, "the players' standings below the teams'");
    browser.screenshot("team-standings");
}
