//! The standings where people look, in Chromium: the chief arbiter's page, an arbiter's
//! phone and the spectators' page show the table `GET /api/standings` serves (rank, name,
//! points, the event's tie-breaks, the players still at a board marked), and the
//! spectators' page only what the broadcast delay has released, even on a screen where an
//! arbiter is logged in.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::browser::Browser;
use support::{http_json, http_post, Hub};

const TOKEN: &str = "standings-on-the-wall";
/// The broadcast delay: long enough for the held table to be seen, short for the test.
const DELAY_S: u64 = 20;

/// The page's table as `[(name, points, running)]`, row by row.
const TABLE: &str = "JSON.stringify([...document.querySelectorAll('#standings-tables table.standings tbody tr')]\
    .map((tr) => [tr.querySelector('td.name').firstChild.textContent, tr.querySelector('td.points').textContent, tr.classList.contains('running')]))";

/// The API's rows the same way (points as the page writes them).
fn rows(answer: &Value) -> Vec<(String, String, bool)> {
    answer["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["points"].as_f64().unwrap().to_string(),
                r["running"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn shown(browser: &mut Browser) -> Vec<(String, String, bool)> {
    let text = browser.eval(TABLE);
    serde_json::from_str(text.as_str().unwrap()).unwrap()
}

/// Waits until the page's table is `want`.
fn expect_table(browser: &mut Browser, what: &str, want: &[(String, String, bool)]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = shown(browser);
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the page shows {got:?}, the API {want:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn the_page_the_phone_and_the_spectators_show_the_standings_behind_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/example-event/event.trf");
    std::fs::copy(&example, dir.path().join("event.trf")).unwrap();
    let config = format!(
        "[pairings]\ntrf = \"event.trf\"\n\n[broadcast]\ndelay_s = {DELAY_S}\n\n\
         [standings]\ntiebreaks = [\"BH-C1\", \"SB\", \"WIN\"]\n\n\
         [[zones]]\nname = \"A\"\nboards = [\"1-6\"]\n\n[[arbiters]]\nname = \"IA Berg\"\nzones = [\"A\"]\n\n\
         [access]\narbiter_token = \"{TOKEN}\"\n"
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    let url = format!("http://{}", hub.http);

    // The browsers first, so the held table is looked at well within the delay.
    let mut chief = Browser::start();
    chief.open_page(&format!("{url}/?token={TOKEN}&arbiter=Eva#/standings"));
    let mut spectator = Browser::start();
    spectator.open_page(&format!("{url}/spectator#/standings"));
    spectator.expect(
        "the spectators' table",
        "document.getElementById('standings-view').dataset.loaded === '1'",
        Duration::from_secs(10),
    );

    // Four boards decided in the hall (a forfeit among them); board 5 still in play.
    for (board, result, cause) in [
        (1, "1-0", "resignation"),
        (2, "0-1", "resignation"),
        (3, "1/2-1/2", "draw_agreement"),
        (4, "+-", "forfeit"),
    ] {
        let body =
            json!({"arbiter": "IA Berg", "decision": "result", "result": result, "cause": cause});
        let path = format!("/api/rounds/1/boards/{board}/decisions");
        let (status, answer) = http_post(&hub.web, &path, &body.to_string()).unwrap();
        assert_eq!(status, 200, "board {board}: {answer}");
    }
    let decided_at = Instant::now();
    let arbiters = http_json(&hub.web, "/api/standings");
    let public = http_json(&hub.web, "/api/standings?audience=spectators");
    assert_eq!(arbiters["provisional"], true);
    assert_eq!(
        rows(&arbiters).iter().filter(|r| r.2).count(),
        2,
        "board 5's players only: {arbiters}"
    );
    assert_eq!(
        rows(&public).iter().filter(|r| r.2).count(),
        10,
        "every board held back from spectators: {public}"
    );
    assert_eq!(
        rows(&public).iter().filter(|r| r.1 != "0").count(),
        1,
        "only the pairing-allocated bye has a point: {public}"
    );

    // The chief's page: the arbiters' table, with the list's tie-breaks as columns.
    chief.goto(&format!("{url}/#/standings/1"));
    expect_table(&mut chief, "the chief's page", &rows(&arbiters));
    let heads = chief.eval(
        "[...document.querySelectorAll('#standings-tables thead th')].map((t) => t.textContent).join(' ')",
    );
    assert_eq!(heads, "# No. Name Pts BH-C1 SB WIN");
    let caption = chief.eval("document.querySelector('.standings-caption').textContent");
    assert!(
        caption.as_str().unwrap().contains("provisional"),
        "{caption}"
    );
    chief.screenshot_for_docs("standings");

    // The spectators' page: nothing decided is shown before the delay, on a spectator's
    // screen and on the chief's own browser alike.
    spectator.goto(&format!("{url}/spectator#/standings"));
    expect_table(&mut spectator, "the spectators' page, held", &rows(&public));
    chief.goto(&format!("{url}/spectator#/standings"));
    expect_table(
        &mut chief,
        "the spectators' page, logged in",
        &rows(&public),
    );
    assert!(
        decided_at.elapsed() < Duration::from_secs(DELAY_S),
        "the held table was checked within the delay"
    );

    // An arbiter's phone: the table with the first two tie-breaks, board 5's players marked.
    let enrolled = hub.enrol_arbiter_in("IA Berg", &["A"]);
    let phone_url = enrolled["phone"]["url"].as_str().unwrap().to_owned();
    let mut phone = Browser::on_device("Pixel 7");
    phone.goto(&phone_url);
    phone.expect(
        "the phone's list",
        "document.getElementById('standings-panel') !== null && !document.getElementById('list-view').hidden",
        Duration::from_secs(10),
    );
    phone.tap("#standings-panel summary");
    phone.expect(
        "the standings on the phone",
        "document.querySelectorAll('#standings table.standings tbody tr').length === 11",
        Duration::from_secs(10),
    );
    let phone_heads = phone.eval(
        "[...document.querySelectorAll('#standings thead th')].map((t) => t.textContent).join(' ')",
    );
    assert_eq!(phone_heads, "# No. Name Pts BH-C1 SB");
    let marked = phone.eval(
        "[...document.querySelectorAll('#standings tr.running td.name')].map((t) => t.firstChild.textContent).sort().join('|')",
    );
    let mut playing: Vec<String> = rows(&arbiters)
        .into_iter()
        .filter(|r| r.2)
        .map(|r| r.0)
        .collect();
    playing.sort();
    assert_eq!(marked, playing.join("|"));
    let phone_width = phone.eval("document.documentElement.scrollWidth <= window.innerWidth");
    assert_eq!(phone_width, true, "the table fits the phone's width");

    // Once the delay has passed, the spectators see what the arbiters see.
    let released = http_json(&hub.web, "/api/standings?audience=spectators");
    let deadline = Instant::now() + Duration::from_secs(DELAY_S + 20);
    let mut public = released;
    while rows(&public) != rows(&arbiters) {
        assert!(
            Instant::now() < deadline,
            "never released: {public} vs {arbiters}"
        );
        std::thread::sleep(Duration::from_millis(500));
        public = http_json(&hub.web, "/api/standings?audience=spectators");
    }
    assert!(decided_at.elapsed() >= Duration::from_secs(DELAY_S - 1));
    expect_table(
        &mut spectator,
        "the spectators' page, released",
        &rows(&arbiters),
    );
}
