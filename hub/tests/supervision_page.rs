//! The chief arbiter's supervision page in a real browser (Debian's Chromium, driven by
//! playwright-core) against a hub process with its embedded broker, real board-node
//! processes replaying real games, and boards this test plays itself. Screenshots go to
//! `target/screenshots/`.

use crate::support;

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use shakmaty::{Position, Square};
use support::board::TestBoard;
use support::browser::Browser;
use support::{http_get_with, stranger_request, Hub, Node, Replay};

const TOKEN: &str = "board-47-knows-the-hall";

fn config(dir: &Path, delay_s: u64) -> String {
    std::fs::write(
        dir.join("round-1.csv"),
        "board,white,white_title,white_rating,black,black_title,black_rating\n\
         1,\"Carlsen, Magnus\",GM,2830,\"Nakamura, Hikaru\",GM,2800\n\
         2,\"Ju, Wenjun\",GM,2560,\"Hou, Yifan\",GM,2630\n\
         5,\"Hansen, Ola\",,1850,\"Berg, Kari\",,1790\n\
         6,\"Lie, Per\",FM,2210,\"Dahl, Eva\",WFM,2050\n",
    )
    .unwrap();
    format!(
        r#"
[event]
name = "Supervision test open"
time_control = "900+10"

[[rounds]]
number = 1
pairings = "round-1.csv"

[broadcast]
delay_s = {delay_s}

[[zones]]
name = "A"
boards = ["1-4"]

[[zones]]
name = "B"
boards = ["5-8"]

[[arbiters]]
name = "ola"
zones = ["A", "B"]

[access]
arbiter_token = "{TOKEN}"
"#
    )
}

/// The status and the first event of a server-sent event stream.
fn first_event(web: &support::Web, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut stream = support::stranger_stream(web, path, headers).unwrap();
    let status = stream.status().as_u16();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 65536];
    // A refusal has no events; an answer's first is read as it comes.
    let mut reading = status == 200;
    while reading {
        let n = stream.read(&mut chunk).unwrap_or(0);
        seen.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&seen);
        let hall = text.find("event: hall");
        reading = n > 0 && !hall.is_some_and(|at| text[at..].contains("\n\n"));
    }
    let text = String::from_utf8_lossy(&seen).to_string();
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_default()
        .to_owned();
    (status, data)
}

#[test]
fn the_arbiters_view_and_the_api_answer_only_to_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), &config(dir.path(), 0));
    let bearer = format!("Bearer {TOKEN}");
    for path in [
        "/api/alerts",
        "/api/boards",
        "/api/nodes",
        "/api/time-trouble",
    ] {
        let (status, _, _) = stranger_request(&hub.web, "GET", path, &[], "").unwrap();
        assert_eq!(status, 401, "{path} without the token");
        let (status, _, _) = stranger_request(
            &hub.web,
            "GET",
            path,
            &[("Authorization", "Bearer nope")],
            "",
        )
        .unwrap();
        assert_eq!(status, 401, "{path} with a wrong token");
        let (status, _, body) =
            http_get_with(&hub.web, path, &[("Authorization", &bearer)]).unwrap();
        assert_eq!(status, 200, "{path} with the token: {body}");
    }
    // The page, the spectators' stream, the pairings and the feed are public.
    for path in [
        "/",
        "/spectator",
        "/assets/app.js",
        "/api/rounds/1/pairings",
        "/api/session",
    ] {
        let (status, _, _) = stranger_request(&hub.web, "GET", path, &[], "").unwrap();
        assert_eq!(status, 200, "{path}");
    }
    let (status, _) = first_event(&hub.web, "/api/live", &[]);
    assert_eq!(status, 401, "the arbiters' stream without the token");
    // The token is no cookie: the page's cookie is a session's id, opened by a login.
    let token_cookie = format!("zeitnot_arbiter={TOKEN}");
    let (status, _) = first_event(&hub.web, "/api/live", &[("Cookie", &token_cookie)]);
    assert_eq!(status, 401, "the token itself as the cookie");
    let login = format!(r#"{{"token": "{TOKEN}"}}"#);
    let json = [("Content-Type", "application/json")];
    let (status, headers, _) =
        stranger_request(&hub.web, "POST", "/api/session", &json, &login).unwrap();
    assert_eq!(status, 204);
    let set_cookie = &headers["set-cookie"];
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"),
        "{set_cookie}"
    );
    let session = set_cookie.split(';').next().unwrap().to_owned();
    assert!(
        !session.contains(TOKEN),
        "the cookie is not the token: {session}"
    );
    let (status, hall) = first_event(&hub.web, "/api/live", &[("Cookie", &session)]);
    assert_eq!(status, 200);
    let hall: Value = serde_json::from_str(&hall).unwrap();
    assert_eq!(hall["audience"], "arbiters");
    assert!(hall["alerts"].is_array(), "arbiters get the open alerts");
    // A log-out ends the session on the hub, not only in the browser.
    let (status, _, _) = stranger_request(
        &hub.web,
        "DELETE",
        "/api/session",
        &[("Cookie", &session)],
        "",
    )
    .unwrap();
    assert_eq!(status, 204);
    let (status, _) = first_event(&hub.web, "/api/live", &[("Cookie", &session)]);
    assert_eq!(status, 401, "a session logged out");
    let (status, hall) = first_event(&hub.web, "/api/public/live", &[]);
    assert_eq!(status, 200);
    let hall: Value = serde_json::from_str(&hall).unwrap();
    assert_eq!(hall["audience"], "spectators");
    assert!(
        hall.get("alerts").is_none(),
        "spectators get no alerts: {hall}"
    );
    // Paired boards are on the map before any node reported, with their players.
    let boards: Vec<u64> = hall["tiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["board"].as_u64().unwrap())
        .collect();
    assert_eq!(boards, vec![1, 2, 5, 6]);
    assert_eq!(hall["tiles"][0]["white"]["name"], "Carlsen, Magnus");
    assert_eq!(hall["zones"][1]["rows"][0], serde_json::json!([5, 8]));
}

/// Login CSRF: a login link somebody else sent (their own arbiter's login) opened in a
/// browser logged in as another arbiter must not swap the session unseen: the hub answers
/// 409 naming both, the page asks, and a "no" keeps the arbiter who was there; a "yes", or
/// `"replace": true` from a script, switches.
#[test]
fn a_login_link_never_swaps_a_session_unseen() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, _) = Hub::configured(dir.path(), &config(dir.path(), 0));
    let url = format!("http://{}", hub.http);
    let login_of = |name: &str| {
        hub.enrol_arbiter_in(name, &[])["login"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (berg, dahl) = (login_of("IA Berg"), login_of("IA Dahl"));

    // The API: Berg's session, Dahl's token.
    let json = [("Content-Type", "application/json")];
    let (status, headers, _) = stranger_request(
        &hub.web,
        "POST",
        "/api/session",
        &json,
        &format!(r#"{{"token": "{berg}"}}"#),
    )
    .unwrap();
    assert_eq!(status, 204);
    let cookie = headers["set-cookie"].split(';').next().unwrap().to_owned();
    let with_cookie = [
        ("Content-Type", "application/json"),
        ("Cookie", cookie.as_str()),
    ];
    let (status, _, body) = stranger_request(
        &hub.web,
        "POST",
        "/api/session",
        &with_cookie,
        &format!(r#"{{"token": "{dahl}"}}"#),
    )
    .unwrap();
    assert_eq!(status, 409, "{body}");
    let conflict: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(conflict["logged_in_as"], "IA Berg");
    assert_eq!(conflict["token_of"], "IA Dahl");
    let (status, _, _) = stranger_request(
        &hub.web,
        "POST",
        "/api/session",
        &with_cookie,
        &format!(r#"{{"token": "{dahl}", "replace": true}}"#),
    )
    .unwrap();
    assert_eq!(status, 204, "a script that means it switches");

    // The page: Berg logged in by his link; Dahl's link asks, and "no" keeps Berg.
    let mut browser = Browser::start();
    browser.init_script(
        "window.confirm = (m) => { window.asked = m; return window.answer === true; };",
    );
    browser.open_page(&format!("{url}/?token={berg}"));
    let logged_in = "document.getElementById('logout-button').textContent";
    assert_eq!(browser.eval(logged_in), "Log out (IA Berg)");
    browser.open_page(&format!("{url}/?token={dahl}"));
    let asked = browser.eval("window.asked || ''");
    let asked = asked.as_str().unwrap();
    assert!(
        asked.contains("IA Berg") && asked.contains("IA Dahl"),
        "the page asks, naming both: {asked:?}"
    );
    assert_eq!(
        browser.eval(logged_in),
        "Log out (IA Berg)",
        "a no keeps Berg"
    );
    assert_eq!(
        browser.eval("location.search"),
        "",
        "the token leaves the address bar"
    );
    browser.init_script("window.answer = true;");
    browser.open_page(&format!("{url}/?token={dahl}"));
    assert_eq!(
        browser.eval(logged_in),
        "Log out (IA Dahl)",
        "a yes switches"
    );
}

/// An arbiter's own login acts in the zones they watch: a decision at a board of another
/// zone, or an acknowledgement of its alert, is refused (403, naming the zone) and changes
/// nothing; in their zone both go through; the chief's token acts anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiters_own_login_acts_in_their_zones_only() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(dir.path(), &config(dir.path(), 0));
    let answer = hub.enrol_arbiter_in("IA Berg", &["A"]);
    let berg = format!("Bearer {}", answer["login"].as_str().unwrap());
    let chief = format!("Bearer {TOKEN}");
    let post = |auth: &str, path: &str, body: &str| {
        let headers = [
            ("Content-Type", "application/json"),
            ("Authorization", auth),
        ];
        let (status, _, body) = stranger_request(&hub.web, "POST", path, &headers, body).unwrap();
        (status, body)
    };
    let rejected = r#"{"arbiter": "IA Berg", "decision": "claim_rejected", "by": "white"}"#;
    // Board 6 is in zone B, board 1 in zone A (both paired, no node yet).
    let (status, body) = post(&berg, "/api/boards/6/decisions", rejected);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("zone B"), "{body}");
    let (status, body) = post(&berg, "/api/rounds/1/boards/6/decisions", rejected);
    assert_eq!(status, 403, "the round's route too: {body}");
    let (status, body) = post(&berg, "/api/boards/1/decisions", rejected);
    assert_eq!(status, 200, "in his zone: {body}");
    let (status, body) = post(&chief, "/api/boards/6/decisions", rejected);
    assert_eq!(status, 200, "the chief anywhere: {body}");

    // An alert of zone B: board 7 (no pairing) shows a game.
    let seven = hub.enrol("board-7", 7, dir.path());
    let client = support::board::node_session(port, &seven).await;
    let mut b7 = TestBoard::start(7, client.clone(), &seven).await;
    b7.play("e2e4").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let alert = loop {
        let alerts = arbiter_json(&hub.web, "/api/alerts");
        let found = alerts
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["board"] == 7)
            .cloned();
        if let Some(alert) = found {
            break alert;
        }
        assert!(Instant::now() < deadline, "no alert at board 7: {alerts}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(alert["zone"], "B");
    let ack = format!("/api/alerts/{}/ack", alert["id"]);
    let (status, body) = post(&berg, &ack, "");
    assert_eq!(status, 403, "{body}");
    let still = arbiter_json(&hub.web, &format!("/api/alerts/{}", alert["id"]));
    assert_eq!(still["state"], "raised", "nothing changed: {still}");
    let (status, body) = post(&chief, &ack, "");
    assert_eq!(status, 200, "{body}");
    drop(client);
}

/// `GET path` as an arbiter (the bearer token), as JSON.
fn arbiter_json(web: &support::Web, path: &str) -> Value {
    let bearer = format!("Bearer {TOKEN}");
    let (status, _, body) = http_get_with(web, path, &[("Authorization", &bearer)]).unwrap();
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Opens board `n`'s view by `how` (a click, or the address) and waits until it is drawn.
fn board_view(browser: &mut Browser, n: u16, how: Open) {
    match how {
        Open::Click => browser.click(&format!("#tile-{n}")),
        Open::Address => drop(browser.eval(&format!("location.hash = '#/board/{n}'"))),
    }
    browser.expect(
        &format!("board {n}'s view"),
        &format!("document.querySelector('#board-view').dataset.loaded === '{n}'"),
        Duration::from_secs(3),
    );
}

enum Open {
    Click,
    Address,
}

/// The text of a clock on a tile, in ms.
fn clock_ms(text: &str) -> u64 {
    text.split(':')
        .map(|p| {
            p.parse::<u64>()
                .unwrap_or_else(|_| panic!("clock text {text:?}"))
        })
        .fold(0, |acc, p| acc * 60 + p)
        * 1000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_chief_arbiters_screen_follows_the_hall_live() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, port) = Hub::configured(dir.path(), &config(dir.path(), 0));
    let url = format!("http://{}", hub.http);
    // Boards 1 and 2 replay real rapid games in about a minute.
    let _nodes: Vec<Node> = [(1, 1), (2, 2)]
        .into_iter()
        .map(|(board, game)| {
            Node::start(
                &Replay::new(board, "fide_world_cup_2025_rapid_15+10.pgn", game, 60.0),
                &hub,
                dir.path(),
            )
        })
        .collect();
    let five = hub.enrol("board-5", 5, dir.path());
    let client = support::board::node_session(port, &five).await;
    let mut b5 = TestBoard::start(5, client.clone(), &five).await;

    let mut browser = Browser::start();
    browser.open_page(&format!("{url}/?token={TOKEN}&arbiter=Ola"));
    assert_eq!(browser.eval("window.zeitnot.state.audience"), "arbiters");
    assert_eq!(
        browser.eval("location.search"),
        "?arbiter=Ola",
        "the token leaves the address bar"
    );
    assert_eq!(
        browser.eval("document.querySelector('#tile-1 .pl.w').textContent"),
        "GM Carlsen, Magnus (2830)"
    );
    assert_eq!(
        browser.eval("document.querySelector('.zone[data-zone=B] .row').children.length"),
        2,
        "zone B's row holds boards 5 and 6"
    );

    // A tile shows each move within a second of the press (Art. 6.2.1: the press completes it).
    let mut latencies = Vec::new();
    for (ply, uci) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]
        .into_iter()
        .enumerate()
    {
        let pressed = Instant::now();
        b5.play(uci).await;
        let ply = ply + 1;
        browser
            .wait(
                &format!("document.querySelector('#tile-5').dataset.ply === '{ply}'"),
                Duration::from_secs(1).saturating_sub(pressed.elapsed()),
            )
            .unwrap_or_else(|e| {
                panic!("board 5's tile did not show ply {ply} within 1 s of the press: {e}")
            });
        latencies.push(pressed.elapsed());
    }
    eprintln!("press → tile on screen: {latencies:?}");
    assert_eq!(
        browser.eval("document.querySelector('#tile-5 .mv').textContent"),
        "3. Bb5"
    );

    // The clocks tick in the browser: Black's runs, White's stands.
    let read = |browser: &mut Browser| {
        let w = browser.eval("document.querySelector('#tile-5 .clk.w').textContent");
        let b = browser.eval("document.querySelector('#tile-5 .clk.b').textContent");
        (clock_ms(w.as_str().unwrap()), clock_ms(b.as_str().unwrap()))
    };
    assert_eq!(
        browser.eval("document.querySelector('#tile-5 .clk.b').classList.contains('running')"),
        true
    );
    let (white_before, black_before) = read(&mut browser);
    std::thread::sleep(Duration::from_millis(2_200));
    let (white_after, black_after) = read(&mut browser);
    assert_eq!(white_after, white_before, "White's clock stands");
    assert!(
        (1_000..=3_000).contains(&(black_before - black_after)),
        "Black's clock ran down {} ms in 2.2 s",
        black_before - black_after
    );
    browser.screenshot("supervision-hall");

    // An incident: Black moves the king two squares and presses (7.5.1). The alert shows
    // in the panel; a click acknowledges it, as a pager would.
    let mut illegal = b5.position.board().clone();
    let king = illegal.remove_piece_at(Square::E8).unwrap();
    illegal.set_piece_at(Square::E6, king);
    let incident = Instant::now();
    b5.press_with(&illegal).await;
    let id = browser.expect(
        "the illegal move's alert in the panel",
        "(() => { const li = [...document.querySelectorAll('#alerts li[data-alert]')].find(l => l.textContent.includes('Board 5') && l.textContent.includes('7.5')); return li && li.dataset.alert; })()",
        Duration::from_secs(2),
    );
    eprintln!("illegal move → alert on screen: {:?}", incident.elapsed());
    let id: u64 = id.as_str().unwrap().parse().unwrap();
    assert_eq!(
        browser.eval("document.querySelector('#tile-5 .badge.alert') !== null"),
        true,
        "the tile wears an alert badge"
    );
    browser.screenshot("supervision-alert");
    // The arbiter reads the alerts in Norwegian (the texts come from the API's six).
    browser.eval("(() => { const s = document.querySelector('#lang'); s.value = 'nb'; s.dispatchEvent(new Event('change')); })()");
    browser.expect(
        "the alert in Norwegian",
        &format!("document.querySelector(\"#alerts li[data-alert='{id}'] .text\")?.textContent.startsWith('Bord 5: Ulovlig trekk')"),
        Duration::from_secs(3),
    );
    browser.click(&format!("#alerts li[data-alert='{id}'] button.ack"));
    browser.expect(
        "the acknowledgement back in the panel",
        &format!("document.querySelector(\"#alerts li[data-alert='{id}']\")?.dataset.state === 'acknowledged'"),
        Duration::from_secs(2),
    );
    let alert = arbiter_json(&hub.web, &format!("/api/alerts/{id}"));
    assert_eq!(alert["state"], "acknowledged");
    assert_eq!(
        alert["acknowledged"]["by"], "Ola",
        "acknowledged in the arbiter's name"
    );
    assert_eq!(alert["article"], "7.5.5");

    // Resolving takes a note and removes the alert from the panel.
    browser.answer_prompts("reinstated, 2 minutes to White");
    browser.click(&format!("#alerts li[data-alert='{id}'] button.resolve"));
    browser.expect(
        "the resolved alert leaves the panel",
        &format!("document.querySelector(\"#alerts li[data-alert='{id}']\") === null"),
        Duration::from_secs(2),
    );

    // The board view: the position as the hub has it, the moves with their clock times,
    // and a plot of both players' time.
    board_view(&mut browser, 5, Open::Click);
    let detail = arbiter_json(&hub.web, "/api/boards/5");
    assert_eq!(
        browser.eval("document.querySelector('#diagram').dataset.fen"),
        detail["fen"]
    );
    let pieces = browser.eval("[...document.querySelectorAll('#diagram text')].map(t => t.dataset.square + t.dataset.piece).sort().join(' ')");
    let expected = expected_pieces(detail["fen"].as_str().unwrap());
    assert_eq!(pieces.as_str().unwrap(), expected);
    assert_eq!(
        browser.eval("document.querySelectorAll('#moves tbody tr').length"),
        3
    );
    assert_eq!(
        browser.eval("document.querySelector('#time-plot polyline.white').dataset.points"),
        "3"
    );
    assert_eq!(
        browser.eval("document.querySelector('#time-plot polyline.black').dataset.points"),
        "2"
    );
    assert_eq!(
        browser.eval("document.querySelector('#timeline').textContent.includes('Art. 7.5')"),
        true,
        "the timeline shows the illegal move"
    );
    browser.screenshot("supervision-board-view");

    // The technician binds board 5's node from the page (its e-board's hardware id).
    browser.eval("location.hash = ''");
    browser.fill("#bind-hardware", "board-5");
    browser.fill("#bind-board", "5");
    browser.click("#bind-form button[type=submit]");
    browser.expect(
        "the binding confirmed",
        "document.querySelector('#bind-result').textContent.startsWith('bound board-5')",
        Duration::from_secs(3),
    );
    let nodes = arbiter_json(&hub.web, "/api/nodes");
    // Replay nodes announce one hardware id per board (replay-N), as real e-boards do.
    assert!(
        !nodes["warnings"].to_string().contains("duplicate_hardware"),
        "{nodes:#}"
    );
    let node5 = nodes["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["board"] == 5)
        .expect("board 5's node");
    assert_eq!(node5["bound_to"], 5, "{nodes:#}");

    // A replayed real game's board view draws a longer plot.
    board_view(&mut browser, 1, Open::Address);
    let points =
        browser.eval("Number(document.querySelector('#time-plot polyline.white').dataset.points)");
    assert!(
        points.as_u64().unwrap() >= 1,
        "board 1's plot has White's times"
    );
    browser.screenshot("supervision-board-1");

    // The hub is killed and restarts from its journal: the open page reconnects by itself
    // and shows the same hall (board 5 still at its last move, the resolved alert gone).
    browser.eval("location.hash = ''");
    let halls = browser.eval("window.zeitnot.stats.halls").as_u64().unwrap();
    hub.restart();
    browser.expect(
        "the page reconnected to the restarted hub",
        &format!("window.zeitnot.stats.halls > {halls}"),
        Duration::from_secs(15),
    );
    assert_eq!(
        browser.eval("document.querySelector('#tile-5 .mv').textContent"),
        "3. Bb5"
    );
    assert_eq!(
        browser.eval(&format!(
            "document.querySelector(\"#alerts li[data-alert='{id}']\") === null"
        )),
        true
    );
    drop(client);
}

/// `"a1R b1N …"`: the pieces of a FEN's placement by square, sorted.
fn expected_pieces(fen: &str) -> String {
    let setup: shakmaty::fen::Fen = fen.parse().unwrap();
    let mut pieces: Vec<String> = setup
        .as_setup()
        .board
        .clone()
        .into_iter()
        .map(|(square, piece)| format!("{square}{}", piece.char()))
        .collect();
    pieces.sort();
    pieces.join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spectators_see_the_game_after_the_broadcast_delay_and_no_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, port) = Hub::configured(dir.path(), &config(dir.path(), 3));
    let url = format!("http://{}", hub.http);
    let six = hub.enrol("board-6", 6, dir.path());
    let client = support::board::node_session(port, &six).await;
    let mut b6 = TestBoard::start(6, client.clone(), &six).await;

    let mut browser = Browser::start();
    browser.open_page(&url);
    assert_eq!(browser.eval("window.zeitnot.state.audience"), "spectators");
    assert_eq!(
        browser.eval("getComputedStyle(document.querySelector('#alerts-panel')).display"),
        "none"
    );
    assert_eq!(
        browser.eval("fetch('/api/alerts').then(r => r.status)"),
        401
    );
    assert_ne!(
        browser.eval("getComputedStyle(document.querySelector('#login-button')).display"),
        "none",
        "spectators are offered the arbiters' login"
    );

    let pressed = Instant::now();
    b6.play("d2d4").await;
    // Not before the delay (3 s)…
    let early = browser.wait(
        "document.querySelector('#tile-6').dataset.ply === '1'",
        Duration::from_millis(2_000),
    );
    assert!(
        early.is_err(),
        "the move showed {:?} after the press, before the 3 s delay",
        pressed.elapsed()
    );
    // …and soon after it.
    browser.expect(
        "the move after the delay",
        "document.querySelector('#tile-6').dataset.ply === '1'",
        Duration::from_secs(3),
    );
    let shown_after = pressed.elapsed();
    assert!(
        shown_after >= Duration::from_secs(3),
        "shown after {shown_after:?}"
    );
    assert_eq!(
        browser.eval("document.querySelector('#tile-6 .mv').textContent"),
        "1. d4"
    );
    // The spectators' board view comes from the delayed view too.
    board_view(&mut browser, 6, Open::Click);
    assert_eq!(
        browser.eval("document.querySelectorAll('#moves tbody tr').length"),
        1
    );
    browser.screenshot("supervision-spectators");

    // A resignation: the arbiters' pairings and round count have it at once; the public's
    // only once the delay has released the game's end (their scores would tell it first).
    let resignation =
        r#"{"arbiter": "ola", "decision": "result", "result": "1-0", "cause": "resignation"}"#;
    let bearer = format!("Bearer {TOKEN}");
    let json = [
        ("Content-Type", "application/json"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, body) = stranger_request(
        &hub.web,
        "POST",
        "/api/boards/6/decisions",
        &json,
        resignation,
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let decided = Instant::now();
    // The next round starts at once (rapid rounds follow within the delay): the game goes
    // to the archive, and its result still waits for the delay (issue 68).
    let (status, _, body) = stranger_request(
        &hub.web,
        "POST",
        "/api/rounds/2/start",
        &json,
        r#"{"force": true}"#,
    )
    .unwrap();
    assert_eq!(status, 200, "round 2 starts: {body}");
    let board_6 = |headers: &[(&str, &str)]| {
        let (_, _, body) =
            stranger_request(&hub.web, "GET", "/api/rounds/1/pairings", headers, "").unwrap();
        let games: Value = serde_json::from_str(&body).unwrap();
        let game = games
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["board"] == 6)
            .cloned();
        game.unwrap()["result"].as_str().unwrap().to_owned()
    };
    let finished = |headers: &[(&str, &str)]| {
        let (_, _, body) = stranger_request(&hub.web, "GET", "/api/rounds/1", headers, "").unwrap();
        serde_json::from_str::<Value>(&body).unwrap()["finished"].clone()
    };
    let arbiter = [("Authorization", bearer.as_str())];
    assert_eq!(board_6(&arbiter), "1-0");
    assert_eq!(finished(&arbiter), 1);
    assert_eq!(board_6(&[]), "*", "the public's result before the delay");
    assert_eq!(finished(&[]), 0, "the public's count before the delay");
    assert!(
        decided.elapsed() < Duration::from_secs(3),
        "checked within the delay"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while board_6(&[]) != "1-0" {
        assert!(Instant::now() < deadline, "the public never saw the result");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        decided.elapsed() >= Duration::from_secs(3),
        "not before the delay"
    );
    assert_eq!(finished(&[]), 1);

    // An arbiter who opens /spectator sees what the public sees.
    browser.open_page(&format!("{url}/spectator?token={TOKEN}"));
    assert_eq!(browser.eval("window.zeitnot.state.audience"), "spectators");
    assert_eq!(
        browser.eval("fetch('/api/alerts').then(r => r.status)"),
        200,
        "logged in all the same"
    );
    drop(client);
}
