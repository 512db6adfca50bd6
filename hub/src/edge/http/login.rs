//! The arbiters' ways in: the login link the hub prints with its token (kept by
//! [`crate::edge::keys::arbiter_token`]), an arbiter's own page login derived from their key,
//! and the credentials an enrolment hands out. Nothing is ever open by default.

use std::net::SocketAddr;

/// Arbiter's page login (their credential for the page and the API, as `Authorization:
/// Bearer` or in their login link and their phone's), derived from their own key and their
/// links' renewals: revoking them, enrolling them again or renewing their links retires it.
pub fn arbiter_login(member: &crate::core::roster::Member) -> String {
    match member.renewed {
        0 => member.key.derive("page/login"),
        n => member.key.derive(&format!("page/login/{n}")),
    }
}

/// An arbiter's credentials as `POST /api/arbiters/enrol` and `hub enrol-arbiter` answer
/// and `hub pager --key-file` reads them: the enrolment, their page login and the hall CA
/// (`ca`, PEM) the pager pins for TLS.
pub fn arbiter_credentials(
    enrolment: &crate::core::hub::ArbiterEnrolment,
    ca: &str,
) -> serde_json::Value {
    serde_json::json!({
        "arbiter": enrolment.arbiter,
        "key": enrolment.key.to_text(),
        "mqtt_user": enrolment.mqtt_user,
        "mqtt_password": enrolment.mqtt_password,
        "mqtt_client_id_prefix": enrolment.mqtt_client_id_prefix,
        "hub_key": enrolment.hub_key,
        "login": arbiter_login(&crate::core::roster::Member::with_key(enrolment.key.clone())),
        "ca": ca,
    })
}

/// The login links of a hub listening on `http`: the address itself, or for a hub on every
/// interface, loopback and the machine's name.
pub fn links(http: SocketAddr, token: &str, scheme: &str) -> Vec<String> {
    let port = http.port();
    let hosts = if http.ip().is_unspecified() {
        let mut hosts = vec!["127.0.0.1".to_owned()];
        hosts.extend(machine_name());
        hosts
    } else if http.is_ipv6() {
        vec![format!("[{}]", http.ip())]
    } else {
        vec![http.ip().to_string()]
    };
    hosts
        .into_iter()
        .map(|host| format!("{scheme}://{host}:{port}/?token={token}"))
        .collect()
}

/// The machine's host name, as the hall's network may know it.
fn machine_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty() && name != "localhost").then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_names_where_the_hub_listens() {
        let links = links("10.0.0.5:8080".parse().unwrap(), "abc", "http");
        assert_eq!(links, ["http://10.0.0.5:8080/?token=abc"]);
        let links = links_for_all();
        assert_eq!(links[0], "http://127.0.0.1:8080/?token=abc");
    }

    fn links_for_all() -> Vec<String> {
        links("0.0.0.0:8080".parse().unwrap(), "abc", "http")
    }
}
