//! An arbiter's links renewed (a phone lost, a QR code seen by others), on a real hub: the
//! old page login, its sessions and the old phone subscription stop working at once and
//! after a restart; the new ones work; the arbiter's pager, which holds their key, still
//! logs in to the broker. Before, the link in the QR code was a permanent credential:
//! only re-enrolling the arbiter (a new pager key file too) retired it.

use crate::support;

use std::time::Duration;

use link::{BrokerAddr, LinkEvent};
use serde_json::Value;
use support::{stranger_request, Hub};

fn status(hub: &Hub, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    stranger_request(&hub.web, method, path, headers, body)
        .unwrap()
        .0
}

/// Logs in with `login`: the session's cookie, or the refusal's status.
fn log_in(hub: &Hub, login: &str) -> Result<String, u16> {
    let json = [("Content-Type", "application/json")];
    let body = format!(r#"{{"token": "{login}"}}"#);
    let (status, headers, _) =
        stranger_request(&hub.web, "POST", "/api/session", &json, &body).unwrap();
    match status {
        204 => Ok(headers["set-cookie"].split(';').next().unwrap().to_owned()),
        other => Err(other),
    }
}

fn is_arbiter(hub: &Hub, cookie: &str) -> bool {
    let (_, _, body) =
        stranger_request(&hub.web, "GET", "/api/session", &[("Cookie", cookie)], "").unwrap();
    serde_json::from_str::<Value>(&body).unwrap()["arbiter"] == true
}

/// The phone's subscription answers (`GET /{topic}/auth` with its token).
fn phone_answers(hub: &Hub, phone: &Value) -> u16 {
    let bearer = format!("Bearer {}", phone["ntfy"]["token"].as_str().unwrap());
    let path = format!("/{}/auth", phone["ntfy"]["topic"].as_str().unwrap());
    status(hub, "GET", &path, &[("Authorization", &bearer)], "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewed_links_retire_the_old_login_and_phone_and_keep_the_pager() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, port) = Hub::embedded(dir.path());
    let key_file = hub.enrol_arbiter("IA Berg", dir.path());
    let enrolled: Value =
        serde_json::from_str(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    let old_login = enrolled["login"].as_str().unwrap().to_owned();
    let old_cookie = log_in(&hub, &old_login).unwrap();
    assert!(is_arbiter(&hub, &old_cookie));
    // The phone's subscription, as the enrolment answered it to the page.
    let answer = hub.technician_post("/api/arbiters/renew", r#"{"arbiter": "IA Berg"}"#);
    let new_login = answer["login"].as_str().unwrap().to_owned();
    assert_ne!(new_login, old_login);
    let url = answer["phone"]["url"].as_str().unwrap();
    assert!(url.ends_with(&format!("/phone?token={new_login}")), "{url}");
    assert_eq!(phone_answers(&hub, &answer["phone"]), 200);

    // A second renewal: the first renewal's phone is retired like the enrolment's.
    let again = hub.technician_post("/api/arbiters/renew", r#"{"arbiter": "IA Berg"}"#);
    assert_ne!(
        again["phone"]["ntfy"]["topic"],
        answer["phone"]["ntfy"]["topic"]
    );
    assert_eq!(phone_answers(&hub, &answer["phone"]), 401, "the old phone");
    assert_eq!(phone_answers(&hub, &again["phone"]), 200, "the new phone");
    let new_login = again["login"].as_str().unwrap().to_owned();

    // The old login and its session: gone; the new one logs in.
    assert_eq!(log_in(&hub, &old_login), Err(401));
    assert!(
        !is_arbiter(&hub, &old_cookie),
        "the old login's session ended"
    );
    let new_cookie = log_in(&hub, &new_login).unwrap();
    assert!(is_arbiter(&hub, &new_cookie));

    // Nobody of that name: 404, nothing renewed.
    let bearer = format!("Bearer {}", hub.token);
    let json_auth = [
        ("Content-Type", "application/json"),
        ("Authorization", &bearer),
    ];
    assert_eq!(
        status(
            &hub,
            "POST",
            "/api/arbiters/renew",
            &json_auth,
            r#"{"arbiter": "IA Nobody"}"#
        ),
        404
    );
    // An arbiter's own login holds no keys: it cannot renew anyone's links.
    let own = format!("Bearer {new_login}");
    let json_own = [
        ("Content-Type", "application/json"),
        ("Authorization", &own),
    ];
    assert_eq!(
        status(
            &hub,
            "POST",
            "/api/arbiters/renew",
            &json_own,
            r#"{"arbiter": "IA Berg"}"#
        ),
        403
    );

    // The pager holds the arbiter's key, which did not change: it still logs in.
    let options = hub.pager_options(&key_file);
    let (_pager, mut events) = link::start(&BrokerAddr::plain("127.0.0.1", port), options);
    tokio::time::timeout(Duration::from_secs(5), async {
        while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await
    .expect("the pager logs in after the renewal");

    // A restart folds the renewals back: the same logins hold and fail.
    tokio::task::block_in_place(|| hub.restart());
    assert_eq!(log_in(&hub, &old_login), Err(401));
    assert!(log_in(&hub, &new_login).is_ok());
    assert_eq!(phone_answers(&hub, &again["phone"]), 200);
    assert_eq!(phone_answers(&hub, &answer["phone"]), 401);
}
