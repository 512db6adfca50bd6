//! Arbiters are people: each arbiter the chief enrols gets their own page login
//! and pager login, both from a key of their own. What they do is signed with their name,
//! whatever a request says; they cannot touch the hall's keys; their pager's client id is
//! theirs; and the chief revokes one arbiter without touching the others: the login, the
//! page's session, the pager's broker login and its seal all stop working, across a
//! restart too. A real hub process, its embedded broker, real HTTP.

use crate::support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hub::core::alerts::{AlertAction, AlertCommand};
use hub::core::ids::AlertId;
use link::{BrokerAddr, LinkEvent, LinkOptions};
use rumqttc::QoS;
use serde_json::Value;
use support::{as_login, http_json, stranger_request, Hub};

/// A session of `options`, if the embedded broker lets it in within 3 s (with its events,
/// which keep it going).
async fn connects(
    port: u16,
    options: LinkOptions,
) -> Option<(rumqttc::AsyncClient, tokio::sync::mpsc::Receiver<LinkEvent>)> {
    let (client, mut events) = link::start(&BrokerAddr::plain("127.0.0.1", port), options);
    let connected = tokio::time::timeout(Duration::from_secs(3), async {
        while !matches!(events.recv().await, Some(LinkEvent::Connected)) {}
    })
    .await
    .is_ok();
    connected.then_some((client, events))
}

/// Three uplinks for board 1 that its node's key did not seal, sent with the node's own
/// login: a `forged_message` alert for the technician.
async fn three_unsealed_uplinks(sender: &rumqttc::AsyncClient) {
    for seq in 1..=3 {
        let event = protocol::Uplink::new(
            protocol::BoardNo(1),
            protocol::Seq(seq),
            protocol::NodeMs(0),
            protocol::UplinkBody::Heartbeat,
        );
        let topic = protocol::topic::uplink("default", protocol::BoardNo(1));
        let payload = protocol::seal::seal_uplink(None, "default", protocol::seal::Boot(1), &event);
        sender
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
            .unwrap();
    }
}

/// The alert `id` as the chief sees it.
fn alert(hub: &Hub, id: u64) -> Value {
    http_json(&hub.web, &format!("/api/alerts/{id}"))
}

/// A pager command of `enrolment`'s arbiter, sealed with their key, sent now.
fn sealed(enrolment: &Value, id: u64, action: AlertAction) -> Vec<u8> {
    let key = protocol::seal::NodeKey::parse(enrolment["key"].as_str().unwrap()).unwrap();
    let command = AlertCommand {
        action,
        by: enrolment["arbiter"].as_str().unwrap().to_owned(),
        note: Some("seen".into()),
    };
    let sent_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    hub::view::pager::sealed_command(&key, "default", AlertId(id), command, sent_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_arbiter_logs_in_as_themself_and_is_revoked_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, port) = Hub::embedded(dir.path());
    let enrol = |name: &str| hub.enrol_arbiter_in(name, &[]);
    let berg = enrol("IA Berg");
    let dahl = enrol("IA Dahl");
    let berg_login = berg["login"].as_str().unwrap().to_owned();
    assert_ne!(berg["mqtt_user"], dahl["mqtt_user"], "a pager login each");
    assert_eq!(
        http_json(&hub.web, "/api/arbiters")["arbiters"],
        serde_json::json!(["IA Berg", "IA Dahl"])
    );

    // Berg's own login reads the arbiters' view, and holds none of the hall's keys.
    assert_eq!(
        as_login(&hub.web, &berg_login, "GET", "/api/boards", "").0,
        200
    );
    for (method, path, body) in [
        (
            "POST",
            "/api/nodes/enrol",
            r#"{"hardware": "x", "board": 3}"#,
        ),
        (
            "POST",
            "/api/nodes/bind",
            r#"{"hardware": "x", "board": 3}"#,
        ),
        ("POST", "/api/arbiters/enrol", r#"{"arbiter": "IA Berg 2"}"#),
        ("POST", "/api/arbiters/revoke", r#"{"arbiter": "IA Dahl"}"#),
        ("GET", "/api/broker/users", ""),
    ] {
        let (status, answer) = as_login(&hub.web, &berg_login, method, path, body);
        assert_eq!(status, 403, "{method} {path} as an arbiter: {answer}");
    }
    assert_eq!(
        http_json(&hub.web, "/api/arbiters")["arbiters"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // An alert: a node's own login publishes three messages that are not sealed with its
    // key (a forged_message for the technician).
    let node = hub.enrol("DGT-1", 1, dir.path());
    let (sender, _sender_events) = connects(port, node.node_link())
        .await
        .expect("the node's login");
    three_unsealed_uplinks(&sender).await;
    let mut forged = None;
    for _ in 0..50 {
        let alerts = http_json(&hub.web, "/api/alerts");
        forged = alerts
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["kind"] == "forged_message")
            .and_then(|a| a["id"].as_u64());
        if forged.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let id = forged.expect("a forged_message alert");

    // Berg acknowledges it over the API and types another name: her own is kept.
    let (status, acked) = as_login(
        &hub.web,
        &berg_login,
        "POST",
        &format!("/api/alerts/{id}/ack"),
        r#"{"by": "IA Dahl"}"#,
    );
    assert_eq!(status, 200, "{acked}");
    assert_eq!(alert(&hub, id)["acknowledged"]["by"], "IA Berg");

    // Her page: a session of hers, which says who is logged in.
    let body = format!(r#"{{"token": "{berg_login}"}}"#);
    let json = [("Content-Type", "application/json")];
    let (status, headers, _) =
        stranger_request(&hub.web, "POST", "/api/session", &json, &body).unwrap();
    assert_eq!(status, 204);
    let cookie = headers
        .get("set-cookie")
        .map(|value| value.split(';').next().unwrap().to_owned())
        .expect("a session cookie");
    let with_cookie = [("Cookie", cookie.as_str())];
    let (_, _, session) =
        stranger_request(&hub.web, "GET", "/api/session", &with_cookie, "").unwrap();
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["name"], "IA Berg");
    assert_eq!(
        stranger_request(&hub.web, "GET", "/api/alerts", &with_cookie, "")
            .unwrap()
            .0,
        200
    );

    // The pagers: each logs in as themself; no login takes another's client id.
    let berg_pager = hub.pager_options(&write(dir.path(), "berg.json", &berg));
    let dahl_pager = hub.pager_options(&write(dir.path(), "dahl.json", &dahl));
    let mut stolen = berg_pager.clone();
    stolen.client_id = dahl_pager.client_id.clone();
    assert!(
        connects(port, stolen).await.is_none(),
        "Berg's login with Dahl's client id"
    );
    let (berg_client, _berg_events) = connects(port, berg_pager.clone())
        .await
        .expect("Berg's pager");
    let (dahl_client, _dahl_events) = connects(port, dahl_pager).await.expect("Dahl's pager");

    // The chief revokes Berg, and only Berg.
    let answer = hub.technician_post("/api/arbiters/revoke", r#"{"arbiter": "IA Berg"}"#);
    assert_eq!(answer["arbiters"], serde_json::json!(["IA Dahl"]));
    assert_eq!(
        as_login(&hub.web, &berg_login, "GET", "/api/boards", "").0,
        401,
        "her login"
    );
    assert_eq!(
        stranger_request(&hub.web, "GET", "/api/alerts", &with_cookie, "")
            .unwrap()
            .0,
        401,
        "her page's session"
    );
    let mut again = berg_pager.clone();
    again.client_id.push('2');
    assert!(
        connects(port, again).await.is_none(),
        "her pager's broker login"
    );
    // Her pager still connected from before: its sealed command is refused, Dahl's taken.
    let topic = protocol::topic::pager_command("default");
    berg_client
        .publish(
            topic.clone(),
            QoS::AtLeastOnce,
            false,
            sealed(&berg, id, AlertAction::Resolve),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        alert(&hub, id)["state"],
        "acknowledged",
        "a revoked arbiter's seal"
    );
    dahl_client
        .publish(
            topic,
            QoS::AtLeastOnce,
            false,
            sealed(&dahl, id, AlertAction::Resolve),
        )
        .await
        .unwrap();
    let mut resolved = Value::Null;
    for _ in 0..30 {
        resolved = alert(&hub, id);
        if resolved["state"] == "resolved" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(resolved["resolved"]["by"], "IA Dahl", "{resolved}");

    // Dahl enrolled again (a lost phone): the old login stops, the new one works, and the
    // roster is the journal's across a restart.
    let old_dahl = dahl["login"].as_str().unwrap().to_owned();
    let new_dahl = enrol("IA Dahl")["login"].as_str().unwrap().to_owned();
    assert_eq!(
        as_login(&hub.web, &old_dahl, "GET", "/api/boards", "").0,
        401
    );
    hub.restart();
    assert_eq!(
        as_login(&hub.web, &new_dahl, "GET", "/api/boards", "").0,
        200
    );
    assert_eq!(
        as_login(&hub.web, &old_dahl, "GET", "/api/boards", "").0,
        401
    );
    assert_eq!(
        as_login(&hub.web, &berg_login, "GET", "/api/boards", "").0,
        401
    );
    assert_eq!(
        http_json(&hub.web, "/api/arbiters")["arbiters"],
        serde_json::json!(["IA Dahl"])
    );

    // The chief re-keys the hall on the stopped hub: every arbiter and the token it made are
    // retired, the hub signs with a new key, and the node's key is its own still.
    hub.kill();
    let old_token = hub.token.clone();
    let rotated = std::process::Command::new(support::workspace_bin("hub"))
        .args([
            "rotate-hall-secret",
            "--data",
            &hub.data.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(rotated.status.success(), "{rotated:?}");
    let said = String::from_utf8_lossy(&rotated.stdout);
    assert!(
        said.contains("IA Dahl"),
        "the arbiters to enrol again: {said}"
    );
    hub.restart();
    assert_ne!(hub.token, old_token, "a new token was made");
    assert_eq!(
        as_login(&hub.web, &old_token, "GET", "/api/boards", "").0,
        401
    );
    assert_eq!(
        as_login(&hub.web, &new_dahl, "GET", "/api/boards", "").0,
        401
    );
    assert_eq!(
        http_json(&hub.web, "/api/arbiters")["arbiters"],
        serde_json::json!([])
    );
    let again = hub.enrol_arbiter_in("IA Dahl", &[]);
    assert_ne!(
        again["hub_key"], dahl["hub_key"],
        "the hub signs with a new key"
    );
    let (node_again, _events) = connects(port, node.node_link())
        .await
        .expect("the node's own key still lets it in");
    drop(node_again);
}

/// Writes `json` as a key file in `dir`.
fn write(dir: &std::path::Path, name: &str, json: &Value) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, json.to_string()).unwrap();
    path
}

/// On Mosquitto with the shipped configuration (`deploy/mosquitto/`, users and ACL written by
/// `users.sh` from the running hub): an arbiter's pager logs in as itself, hears the alerts
/// and nothing of the boards' uplinks, and its login is gone once the chief revokes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiters_pager_on_mosquitto_reads_the_alerts_until_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut mosquitto = support::Mosquitto::start(dir.path());
    let port = mosquitto.port();
    mosquitto.load_users_from(&data);
    let hub = Hub::start(
        &data,
        support::Broker::External { port },
        &dir.path().join("hub.log"),
    );
    let node = hub.enrol("DGT-1", 1, dir.path());
    let berg = hub.enrol_arbiter_in("IA Berg", &[]);
    mosquitto.load_users_from_hub(&hub);
    let mut pager = hub.pager_options(&write(dir.path(), "berg.json", &berg));
    pager.subscribe = vec![
        protocol::topic::alerts("default", "+"),
        "zeitnot/default/board/+/up".into(),
    ];
    let (_pager, mut heard) = connects(port, pager.clone())
        .await
        .expect("Berg's pager logs in to Mosquitto");
    // The node's own login sends three messages its key did not seal: an alert.
    let (sender, _events) = connects(port, node.node_link()).await.expect("the node");
    three_unsealed_uplinks(&sender).await;
    let mut topics = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = heard.recv().await {
            if let LinkEvent::Message { topic, payload } = event {
                let alert = String::from_utf8_lossy(&payload).contains("forged_message");
                topics.push(topic);
                if alert {
                    break;
                }
            }
        }
    })
    .await;
    assert!(
        topics.iter().any(|t| t.contains("/alerts/")),
        "the pager heard the alert: {topics:?}"
    );
    assert!(
        topics.iter().all(|t| !t.contains("/board/")),
        "and no uplink: {topics:?}"
    );

    hub.technician_post("/api/arbiters/revoke", r#"{"arbiter": "IA Berg"}"#);
    mosquitto.load_users_from_hub(&hub);
    let mut again = pager;
    again.client_id.push('2');
    assert!(
        connects(port, again).await.is_none(),
        "a revoked arbiter's pager login"
    );
}
