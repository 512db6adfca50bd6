//! The round's board list where arbiters work, in Chromium: the page's round view shows
//! the boards as the pairing engine published them (the shipped example event, paired by
//! BBP Pairings), the bye, and the boards still without a result; a phone lists those
//! boards and scores one without an e-board as a forfeit; the next round starts from the
//! page only once every board has a result, after the arbiter confirms the board list.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::browser::Browser;
use support::{http_json, http_post, Hub};

const TOKEN: &str = "the-list-on-the-wall-matches";

/// The example event's file with round 2 paired by hand (any pairing: the hub reads what the
/// pairing program exports).
fn with_round_two(trf: &str) -> String {
    let round2 = [
        (1, 2, 'w'),
        (2, 1, 'b'),
        (3, 4, 'w'),
        (4, 3, 'b'),
        (5, 6, 'w'),
        (6, 5, 'b'),
    ];
    trf.split("\r\n")
        .map(|line| {
            if !line.starts_with("001") {
                return line.to_owned();
            }
            let rank: u32 = line[4..8].trim().parse().unwrap();
            // Round 1's block is columns 92–101; round 2's begins at 102.
            let mut line = format!("{line:<101}");
            match round2.iter().find(|(r, _, _)| *r == rank) {
                Some((_, opponent, color)) => line.push_str(&format!("{opponent:>4} {color}")),
                None => line.push_str("0000 - Z"),
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\r\n")
}

#[test]
fn the_round_view_and_the_phone_list_the_boards_to_score() {
    let dir = tempfile::tempdir().unwrap();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/example-event/event.trf");
    let trf = std::fs::read_to_string(&example).unwrap();
    std::fs::write(dir.path().join("event.trf"), &trf).unwrap();
    let config = format!(
        "[pairings]\ntrf = \"event.trf\"\n\n[[zones]]\nname = \"A\"\nboards = [\"1-6\"]\n\n\
         [[arbiters]]\nname = \"IA Berg\"\nzones = [\"A\"]\n\n[access]\narbiter_token = \"{TOKEN}\"\n"
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    let url = format!("http://{}", hub.http);

    // The chief arbiter's page: round 1's boards, its bye, and the boards to score.
    let mut browser = Browser::start();
    browser.open_page(&format!("{url}/?token={TOKEN}&arbiter=Eva#/round/1"));
    browser.expect(
        "round 1's five boards",
        "document.querySelectorAll('#round-games tbody tr').length === 5",
        Duration::from_secs(10),
    );
    let first = browser.eval("document.querySelector('#round-games tbody tr').textContent");
    assert!(
        first.as_str().unwrap().contains("Carlsen, Magnus")
            && first.as_str().unwrap().contains("Kovács, Bőr"),
        "board 1 as BBP published it: {first}"
    );
    browser.expect(
        "the bye listed",
        "document.getElementById('round-byes').textContent === 'Without a board: Müller, Lena (2050) (pairing-allocated bye, 1.0)'",
        Duration::from_secs(5),
    );
    browser.expect(
        "every board still to score",
        "document.getElementById('round-open').textContent === 'Boards without a result: 1, 2, 3, 4, 5'",
        Duration::from_secs(5),
    );
    browser.screenshot("round-view");

    // IA Berg's phone lists them; board 3 has no e-board: a forfeit, White absent.
    let enrolled = hub.enrol_arbiter_in("IA Berg", &["A"]);
    let phone_url = enrolled["phone"]["url"].as_str().unwrap().to_owned();
    let mut phone = Browser::on_device("Pixel 7");
    phone.goto(&phone_url);
    phone.expect(
        "the boards without a result",
        "document.querySelectorAll('#open-boards button').length === 5",
        Duration::from_secs(10),
    );
    phone.tap("#open-boards button[data-board='3']");
    phone.expect(
        "board 3",
        "location.hash === '#board-3'",
        Duration::from_secs(5),
    );
    phone.eval("(() => { const r = document.getElementById('result'); r.value = '-+'; r.dispatchEvent(new Event('change')); })()");
    assert_eq!(
        phone.eval("document.getElementById('cause').value"),
        "forfeit"
    );
    phone.tap("#result-form button[type=submit]");
    phone.expect(
        "the forfeit declared",
        "document.getElementById('decision-answer').textContent.startsWith('Done')",
        Duration::from_secs(10),
    );
    let round1 = http_json(&hub.web, "/api/rounds/1/pairings");
    assert_eq!(round1[2]["result"], "-+", "{round1}");
    phone.tap("#back");
    phone.expect(
        "four boards left",
        "document.querySelectorAll('#open-boards button').length === 4",
        Duration::from_secs(20),
    );

    // The pairing program exports round 2; it cannot start while round 1 has boards to
    // score, and starts from the page once they have their results.
    std::fs::write(dir.path().join("event.trf"), with_round_two(&trf)).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while support::http_get(&hub.web, "/api/rounds/2/pairings")
        .unwrap()
        .0
        != 200
    {
        assert!(
            std::time::Instant::now() < deadline,
            "round 2's pairings never read"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    browser.goto(&format!("{url}/#/round/2"));
    browser.expect(
        "round 2 offered to start",
        "document.querySelectorAll('#round-games tbody tr').length === 3 && !document.getElementById('round-start-box').hidden",
        Duration::from_secs(20),
    );
    browser.click("#round-start");
    browser.expect(
        "the refusal shown",
        "document.getElementById('round-start-error').textContent.includes('without a result')",
        Duration::from_secs(10),
    );
    let draw = |board: u16, round: u16| {
        let decision = json!({"arbiter": "IA Berg", "decision": "result", "result": "1/2-1/2", "cause": "draw_agreement"});
        let path = format!("/api/rounds/{round}/boards/{board}/decisions");
        http_post(&hub.web, &path, &decision.to_string()).unwrap()
    };
    for board in [1, 2, 4, 5] {
        let (status, body) = draw(board, 1);
        assert_eq!(status, 200, "board {board}: {body}");
    }
    browser.click("#round-start");
    browser.expect(
        "round 2 in play",
        "document.getElementById('round-start-box').hidden",
        Duration::from_secs(10),
    );
    let rounds = http_json(&hub.web, "/api/rounds");
    let two = rounds
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["round"] == 2)
        .unwrap();
    assert_eq!(two["in_play"], true, "{rounds}");

    // A board of round 2 without an e-board takes its result; round 3 has no pairings yet.
    let (status, body) = draw(3, 2);
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_post(&hub.web, "/api/rounds/3/start", "{}").unwrap();
    assert_eq!(status, 409, "round 3 has no pairings: {body}");
    assert_eq!(results(&hub, 2), ["*", "*", "1/2-1/2"]);
    // Round 3 forced by mistake (no pairings yet): the chief takes it back from the page,
    // and round 2 is in play again with its games as they were (issue 68).
    let (status, body) = http_post(&hub.web, "/api/rounds/3/start", r#"{"force": true}"#).unwrap();
    assert_eq!(status, 200, "round 3 forced: {body}");
    browser.goto(&format!("{url}/#/round/3"));
    browser.expect(
        "the undo offered",
        "!document.getElementById('round-undo-box').hidden",
        Duration::from_secs(20),
    );
    browser.click("#round-undo");
    browser.expect(
        "the start undone",
        "document.getElementById('round-undo-box').hidden",
        Duration::from_secs(10),
    );
    let three = http_json(&hub.web, "/api/rounds/3");
    assert_eq!(three["in_play"], false, "{three}");
    assert!(three["started"][0]["undone"].is_object(), "{three}");
    assert_eq!(http_json(&hub.web, "/api/rounds/2")["in_play"], true);
    assert_eq!(results(&hub, 2), ["*", "*", "1/2-1/2"]);
    let mut hub = hub;
    let before = (results(&hub, 1), results(&hub, 2));
    hub.restart();
    assert_eq!(
        (results(&hub, 1), results(&hub, 2)),
        before,
        "the same after a restart"
    );
    assert_eq!(before.0, ["1/2-1/2", "1/2-1/2", "-+", "1/2-1/2", "1/2-1/2"]);
}

/// Round `round`'s results as the hub serves them, board by board.
fn results(hub: &Hub, round: u16) -> Vec<String> {
    http_json(&hub.web, &format!("/api/rounds/{round}/pairings"))
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["result"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_board_scored_after_its_round_was_forced_over_stays_scored() {
    let dir = tempfile::tempdir().unwrap();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/example-event/event.trf");
    let trf = std::fs::read_to_string(&example).unwrap();
    std::fs::write(dir.path().join("event.trf"), with_round_two(&trf)).unwrap();
    let config = format!(
        "[event]\nround = 1\n\n[pairings]\ntrf = \"event.trf\"\n\n[access]\narbiter_token = \"{TOKEN}\"\n"
    );
    let (mut hub, _) = Hub::configured(dir.path(), &config);
    let decide = |hub: &Hub, round: u16, board: u16, result: &str| {
        let decision = json!({"arbiter": "IA Berg", "decision": "result", "result": result});
        let path = format!("/api/rounds/{round}/boards/{board}/decisions");
        http_post(&hub.web, &path, &decision.to_string()).unwrap()
    };
    let (status, body) = decide(&hub, 1, 1, "+-");
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_post(&hub.web, "/api/rounds/2/start", "{}").unwrap();
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("without a result: 2, 3, 4, 5;"), "{body}");
    let (status, body) = http_post(&hub.web, "/api/rounds/2/start", r#"{"force": true}"#).unwrap();
    assert_eq!(status, 200, "{body}");
    // Round 1's board 4 had no e-board and no result: scored now, in round 1's book.
    let (status, body) = decide(&hub, 1, 4, "--");
    assert_eq!(status, 200, "{body}");
    let (status, body) = decide(&hub, 1, 9, "1-0");
    assert_eq!(status, 409, "board 9 played nothing in round 1: {body}");
    assert_eq!(results(&hub, 1), ["+-", "*", "*", "--", "*"]);
    let (status, trf_back) = support::http_get(&hub.web, "/api/results.trf").unwrap();
    assert_eq!(status, 200);
    let round_one = |rank: u32| -> String {
        let line = trf_back
            .lines()
            .find(|l| l.starts_with(&format!("001 {rank:>4}")))
            .unwrap();
        line.chars().skip(91).take(8).collect()
    };
    // Board 4: Nguyễn (9) with White against Firouzja (4): both lose by forfeit.
    assert_eq!(round_one(9), "   4 w -");
    assert_eq!(round_one(4), "   9 b -");
    hub.restart();
    assert_eq!(
        results(&hub, 1),
        ["+-", "*", "*", "--", "*"],
        "the same after a restart"
    );
    let two = http_json(&hub.web, "/api/rounds/2");
    assert_eq!(two["in_play"], true);
    // The forced start is in the round's audit.
    assert_eq!(two["started"][0]["forced"], true, "{two}");
    assert_eq!(
        http_json(&hub.web, "/api/rounds/1")["started"][0]["forced"],
        false
    );
}
