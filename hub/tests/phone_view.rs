//! The phone view in a real Chromium with a Pixel 7's viewport and touch (playwright's
//! descriptor): an arbiter enrolled for zone B opens the login link of their enrolment, sees
//! only zone B's alerts, and the phone rings (the test records the vibration and the tone)
//! when one arrives. They acknowledge and resolve with a note from the phone, then at the
//! board declare a result (6.9) and check a draw claim (9.2); the hub's API shows each done
//! in their name. Nothing scrolls sideways at 360 px. Screenshots in `target/screenshots/`.

use crate::support;

use std::time::Duration;

use serde_json::{json, Value};
use shakmaty::{Position, Square};
use support::board::TestBoard;
use support::browser::Browser;
use support::{http_json, http_post, Hub};

const CONFIG: &str = r#"
[event]
time_control = "900+10"

[[zones]]
name = "A"
boards = ["1-4"]

[[zones]]
name = "B"
boards = ["5-8"]
"#;

/// Records what the page asks of the phone's vibrator and speaker, before its own script.
const RECORD_RINGS: &str = r#"
window.__vibrations = [];
window.__tones = 0;
Object.defineProperty(Navigator.prototype, "vibrate", {
  configurable: true,
  value(pattern) { window.__vibrations.push(pattern); return true; },
});
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.__tones++; return start.apply(this, args); };
"#;

fn alert_of(hub: &Hub, kind: &str, board: u16) -> Option<Value> {
    http_json(&hub.web, &format!("/api/alerts?board={board}"))
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == kind)
        .cloned()
}

fn no_sideways_scroll(browser: &mut Browser, width: u32, what: &str) {
    browser.viewport(width, 740);
    let (scroll, inner) = (
        browser.eval("document.documentElement.scrollWidth"),
        browser.eval("window.innerWidth"),
    );
    assert_eq!(inner, width, "{what}");
    assert!(
        scroll.as_u64().unwrap() <= u64::from(width),
        "{what}: the page is {scroll} px wide at {width} px"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_arbiter_handles_their_zone_from_the_phone_view() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(dir.path(), CONFIG);
    let enrolled = hub.enrol_arbiter_in("IA Berg", &["B"]);
    let url = enrolled["phone"]["url"].as_str().unwrap().to_owned();
    let board = |n: u16| {
        let enrolment = hub.enrol(&format!("board-{n}"), n, dir.path());
        async move {
            let session = support::board::node_session(port, &enrolment).await;
            TestBoard::start(n, session, &enrolment).await
        }
    };
    // Zone A (not IA Berg's): a player stops the clock on board 2.
    let mut b2 = board(2).await;
    b2.play("d2d4").await;
    b2.reading(None, None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(alert_of(&hub, "clock_paused", 2).is_some());

    let mut browser = Browser::on_device("Pixel 7");
    browser.init_script(RECORD_RINGS);
    browser.goto(&url);
    browser.expect(
        "logged in from the enrolment's link",
        "window.zeitnot.state.me && window.zeitnot.phone.connected > 0",
        Duration::from_secs(10),
    );
    assert_eq!(
        browser.eval("location.search"),
        "",
        "no token left in the address"
    );
    assert_eq!(
        browser.eval("document.getElementById('arbiter').textContent"),
        "IA Berg"
    );
    assert_eq!(
        browser.eval("document.getElementById('zones').textContent"),
        "zone B"
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('#alerts li').length"),
        0,
        "zone A's paused clock is not IA Berg's"
    );
    assert_eq!(browser.eval("window.__vibrations.length"), 0);

    // Board 5 (zone B): White's flag falls. The phone rings.
    let mut b5 = board(5).await;
    b5.play("e2e4").await;
    b5.play("e7e5").await;
    b5.reading(Some(protocol::Color::White), Some(protocol::Color::White))
        .await;
    browser.expect(
        "the flag fall on the phone",
        "[...document.querySelectorAll('#alerts li .title')].some(t => t.textContent.startsWith('Board 5'))",
        Duration::from_secs(5),
    );
    browser.expect(
        "the phone vibrates and sounds",
        "window.__vibrations.length === 1 && window.__tones > 0",
        Duration::from_secs(2),
    );
    let flag = alert_of(&hub, "flag_fall", 5).expect("the flag fall's alert");
    let flag_id = flag["id"].as_u64().unwrap();
    let card = format!("#alerts li[data-id='{flag_id}']");
    assert!(browser
        .eval(&format!(
            "document.querySelector(\"{card} .title\").textContent"
        ))
        .as_str()
        .unwrap()
        .contains("6.9"));
    assert_eq!(
        browser.eval(&format!(
            "document.querySelector(\"{card} button.ack\").textContent"
        )),
        "Acknowledge"
    );
    browser.screenshot("phone-alert");
    // The README's picture of the phone view.
    browser.screenshot_for_docs("phone-view");
    no_sideways_scroll(&mut browser, 360, "the alerts at 360 px");
    browser.viewport(412, 839);

    // Acknowledge with a tap.
    browser.tap(&format!("{card} button.ack"));
    browser.expect(
        "acknowledged on the phone",
        &format!("document.querySelector(\"{card}\").classList.contains('acknowledged')"),
        Duration::from_secs(5),
    );
    let acknowledged = http_json(&hub.web, &format!("/api/alerts/{flag_id}"));
    assert_eq!(acknowledged["acknowledged"]["by"], "IA Berg");

    // Board 6: an illegal move (7.5.5); resolved from the phone with a note.
    let mut b6 = board(6).await;
    b6.play("e2e4").await;
    let mut illegal = b6.position.board().clone();
    let king = illegal.remove_piece_at(Square::E8).unwrap();
    illegal.set_piece_at(Square::E6, king);
    b6.press_with(&illegal).await;
    browser.expect(
        "the illegal move rings too",
        "window.__vibrations.length === 2",
        Duration::from_secs(5),
    );
    let illegal = alert_of(&hub, "illegal_move", 6).expect("the illegal move's alert");
    let illegal_id = illegal["id"].as_u64().unwrap();
    let card = format!("#alerts li[data-id='{illegal_id}']");
    browser.tap(&format!("{card} button:has-text('Resolve')"));
    browser.fill(
        "#resolve-note",
        "Position reinstated, 2 min to White (7.5.5)",
    );
    browser.tap("#resolve-form button[value=resolve]");
    browser.expect(
        "resolved: gone from the open alerts",
        &format!("!document.querySelector(\"{card}\")"),
        Duration::from_secs(5),
    );
    let resolved = http_json(&hub.web, &format!("/api/alerts/{illegal_id}"));
    assert_eq!(resolved["state"], "resolved");
    assert_eq!(resolved["resolved"]["by"], "IA Berg");
    assert_eq!(
        resolved["outcome"],
        "Position reinstated, 2 min to White (7.5.5)"
    );

    // At board 5: the diagram, and the result the flag fall gives (6.9) declared.
    browser.tap(&format!(
        "#alerts li[data-id='{flag_id}'] button:has-text('Board 5')"
    ));
    browser.expect(
        "the board view",
        "document.getElementById('board-view').dataset.loaded === '5'",
        Duration::from_secs(5),
    );
    assert_eq!(
        browser.eval("document.getElementById('diagram').dataset.fen.split(' ')[0]"),
        b5.position.board().to_string()
    );
    // The form starts from the hub's ruling (6.9: White's flag fell, Black can mate), never
    // from a fixed default.
    assert_eq!(
        browser.eval("document.getElementById('result').value"),
        "0-1"
    );
    assert_eq!(
        browser.eval("document.getElementById('cause').value"),
        "flag_fall"
    );
    let ruling_line = browser.eval("document.getElementById('ruling-line').textContent");
    assert!(
        ruling_line.as_str().unwrap().contains("6.9"),
        "{ruling_line}"
    );
    // A contradicting result without the arbiter's reason: 409 naming the ruling, and the
    // game, its feed and the flag's alert stay as they were.
    let contradicting =
        json!({"arbiter": "IA Berg", "decision": "result", "result": "1-0", "cause": "flag_fall"});
    let (status, body) = http_post(
        &hub.web,
        "/api/boards/5/decisions",
        &contradicting.to_string(),
    )
    .unwrap();
    assert_eq!(status, 409, "{body}");
    let refusal: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        refusal["ruling"],
        json!({"result": "0-1", "article": "6.9"})
    );
    assert_eq!(http_json(&hub.web, "/api/boards/5")["result"], "*");
    assert_eq!(
        http_json(&hub.web, &format!("/api/alerts/{flag_id}"))["state"],
        "acknowledged"
    );
    let (_, feed) = support::http_get(&hub.web, "/broadcast/round/1/game-5.pgn").unwrap();
    assert!(feed.contains("[Result \"*\"]"), "{feed}");
    browser.tap("#result-form button");
    let answer = browser.expect(
        "the decision answered",
        "document.getElementById('decision-answer').textContent",
        Duration::from_secs(5),
    );
    assert!(answer.as_str().unwrap().starts_with("Done"), "{answer}");
    let detail = http_json(&hub.web, "/api/boards/5");
    assert_eq!(detail["result"], "0-1");
    let decision = detail["decisions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(decision["arbiter"], "IA Berg");
    assert_eq!(decision["article"], "6.9");
    assert!(
        decision.get("override").is_none(),
        "the ruling kept: {decision}"
    );
    // Departing from the ruling with a stated reason: taken, the reason in the audit trail.
    let mut overriding = contradicting.clone();
    overriding["override"] = json!("the clock had been set for the wrong player");
    let (status, body) =
        http_post(&hub.web, "/api/boards/5/decisions", &overriding.to_string()).unwrap();
    assert_eq!(status, 200, "{body}");
    let entry: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        entry["override"],
        "the clock had been set for the wrong player"
    );
    assert_eq!(http_json(&hub.web, "/api/boards/5")["result"], "1-0");

    // A threefold claim after two moves is wrong (9.2): the phone says so with the article.
    browser.eval("document.getElementById('claim').value = 'threefold_repetition'");
    browser.tap("#claim-form button");
    let answer = browser.expect(
        "the claim checked",
        "document.getElementById('decision-answer').dataset.valid !== undefined && document.getElementById('decision-answer').textContent",
        Duration::from_secs(5),
    );
    let answer = answer.as_str().unwrap();
    assert!(answer.starts_with("Claim incorrect · Art. "), "{answer}");
    browser.screenshot("phone-claim");
    browser.eval("window.scrollTo(0, 0)");
    browser.screenshot("phone-board");
    no_sideways_scroll(&mut browser, 360, "the board view at 360 px");

    // Board 7 (zone B): its clock warns that the battery is low mid-game. The phone rings
    // once, and the board's view says so.
    let mut b7 = board(7).await;
    b7.play("e2e4").await;
    let rings = browser.eval("window.__vibrations.length").as_u64().unwrap();
    b7.send(protocol::UplinkBody::Battery { low: true }).await;
    browser.expect(
        "the low battery on the phone",
        "[...document.querySelectorAll('#alerts li .title')].some(t => t.textContent.startsWith('Board 7'))",
        Duration::from_secs(5),
    );
    browser.expect(
        "one ring for it",
        &format!("window.__vibrations.length === {}", rings + 1),
        Duration::from_secs(2),
    );
    b7.send(protocol::UplinkBody::Battery { low: true }).await;
    b7.play("e7e5").await;
    let battery = alert_of(&hub, "battery_low", 7).expect("the battery's alert");
    assert_eq!(battery["severity"], "high", "{battery}");
    browser.eval("location.hash = '#board-7'");
    browser.expect(
        "the board view says the battery is low",
        "document.getElementById('board-view').dataset.loaded === '7' && document.getElementById('board-status').textContent.includes('clock battery low')",
        Duration::from_secs(10),
    );
    assert_eq!(
        browser.eval("window.__vibrations.length").as_u64().unwrap(),
        rings + 1,
        "paged once"
    );
}

/// The chief arbiter's page enrols an arbiter and shows their phone's login as a QR code;
/// the code is the hall token's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chief_arbiters_page_enrols_a_phone_and_shows_its_qr_code() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), CONFIG);
    let berg = hub.enrol_arbiter_in("IA Berg", &["B"]);
    let qr = "/api/arbiters/phone.svg?arbiter=IA%20Berg";
    let (status, headers, svg) = support::http_get_with(&hub.web, qr, &[]).unwrap();
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/svg+xml");
    assert!(svg.contains("<svg"));
    let own = format!("Bearer {}", berg["login"].as_str().unwrap());
    let (status, _, _) =
        support::http_get_with(&hub.web, qr, &[("Authorization", own.as_str())]).unwrap();
    assert_eq!(status, 403, "an arbiter's own login holds no keys");
    let (status, _, _) = support::stranger_request(&hub.web, "GET", qr, &[], "").unwrap();
    assert_eq!(status, 401);
    let (status, _) =
        support::http_get(&hub.web, "/api/arbiters/phone.svg?arbiter=nobody").unwrap();
    assert_eq!(status, 400);

    let mut browser = Browser::start();
    browser.open_page(&format!("http://{}/?token={}", hub.http, hub.token));
    browser.expect(
        "the arbiters' panel",
        "!document.getElementById('arbiters-panel').hidden && document.getElementById('arbiter-list').textContent.includes('IA Berg')",
        Duration::from_secs(10),
    );
    browser.fill("#enrol-name", "FA Lund");
    browser.fill("#enrol-zones", "A");
    browser.click("#enrol-form button");
    browser.expect(
        "FA Lund enrolled, their QR code shown",
        "document.getElementById('arbiter-list').textContent.includes('FA Lund') && document.getElementById('phone-qr-img').naturalWidth > 0",
        Duration::from_secs(10),
    );
    let arbiters = http_json(&hub.web, "/api/arbiters");
    assert_eq!(arbiters["arbiters"], json!(["FA Lund", "IA Berg"]));
    browser.screenshot("supervision-arbiters-qr");
}
