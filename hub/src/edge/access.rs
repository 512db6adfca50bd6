//! Who may see what over HTTP. With an arbiter token configured, the arbiters' view (the
//! live boards, alerts, decisions, nodes) answers only to that token; spectators get the
//! page, the delayed feed and the pairings. Without one, everything is open: fine on a
//! closed arbiters' network, and the hub says so at start.
//!
//! The page logs in once (`POST /api/session`) and holds the token in an HttpOnly cookie;
//! scripts send `Authorization: Bearer …`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The cookie that carries the arbiter token.
pub const COOKIE: &str = "zeitnot_arbiter";

#[derive(Debug, Clone, Default)]
pub struct Access {
    arbiter_token: Option<Arc<str>>,
    /// Names the hub is reached under, besides IP addresses and `localhost`.
    hosts: Arc<[String]>,
    /// Unsealed events are taken from boards nobody enrolled: the page says so.
    open_hall: bool,
}

impl Access {
    /// `None`: no login; everyone on the network is an arbiter.
    pub fn new(arbiter_token: Option<String>) -> Access {
        Access {
            arbiter_token: arbiter_token.filter(|t| !t.is_empty()).map(Into::into),
            hosts: Arc::new([]),
            open_hall: false,
        }
    }

    /// The hall takes unsealed events from boards nobody enrolled (`[access] open_hall`).
    #[must_use]
    pub fn with_open_hall(mut self, open_hall: bool) -> Access {
        self.open_hall = open_hall;
        self
    }

    pub fn open_hall(&self) -> bool {
        self.open_hall
    }

    /// The names (`[access] hosts`) the hub answers to besides its IP addresses and
    /// `localhost`.
    #[must_use]
    pub fn with_hosts(mut self, hosts: Vec<String>) -> Access {
        self.hosts = hosts.into();
        self
    }

    /// Whether a request's `Host` is one of the hub's own: an IP address, `localhost`, or a
    /// configured name. A page of another site that has its name resolve to the hub's address
    /// (DNS rebinding) sends its own name and is refused; so is a request without a host.
    pub fn is_own_host(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return false;
        };
        let name = match host.strip_prefix('[') {
            // An IPv6 literal: [::1]:8080.
            Some(v6) => {
                return v6
                    .split_once(']')
                    .is_some_and(|(ip, _)| ip.parse::<std::net::Ipv6Addr>().is_ok())
            }
            None => host.rsplit_once(':').map_or(host, |(name, port)| {
                if port.bytes().all(|b| b.is_ascii_digit()) {
                    name
                } else {
                    host
                }
            }),
        };
        name.parse::<std::net::Ipv4Addr>().is_ok()
            || name.eq_ignore_ascii_case("localhost")
            || self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    pub fn login_required(&self) -> bool {
        self.arbiter_token.is_some()
    }

    /// Whether `token` is the arbiter token (compared in constant time).
    pub fn admits(&self, token: &str) -> bool {
        self.arbiter_token.as_deref().is_none_or(|expected| {
            protocol::seal::same_secret(expected.as_bytes(), token.as_bytes())
        })
    }

    /// Whether a request comes from an arbiter: the bearer token or the page's cookie.
    pub fn is_arbiter(&self, headers: &HeaderMap) -> bool {
        if !self.login_required() {
            return true;
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)
            .map(|(_, value)| value);
        bearer.into_iter().chain(cookie).any(|t| self.admits(t))
    }
}

/// Middleware of the arbiters' routes: 401 without the token.
pub async fn arbiters_only(State(access): State<Access>, request: Request, next: Next) -> Response {
    if access.is_arbiter(request.headers()) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(
            header::WWW_AUTHENTICATE,
            "Bearer realm=\"zeitnot arbiters\"",
        )],
        "the arbiters' view: log in on the page, or send Authorization: Bearer <token>\n",
    )
        .into_response()
}

/// Middleware of the routes that hand out or revoke node keys: behind the arbiter token like
/// the rest of the arbiters' view; without a token, only for a client on the hub's own
/// machine (the technician at the hub, `hub enrol`), never for anyone on the hall network.
pub async fn keys_from_here_only(
    State(access): State<Access>,
    request: Request,
    next: Next,
) -> Response {
    let local = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .is_some_and(|peer| peer.0.ip().is_loopback());
    if access.login_required() || local {
        return next.run(request).await;
    }
    (
        StatusCode::FORBIDDEN,
        "node keys are handed out only with the arbiter token ([access] arbiter_token), or to the hub's own machine\n",
    )
        .into_response()
}

/// Middleware of every route: only requests addressed to one of the hub's own hosts (421
/// otherwise, with the remedy).
pub async fn own_host_only(State(access): State<Access>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    if access.is_own_host(host.as_deref()) {
        return next.run(request).await;
    }
    tracing::warn!(?host, path = %request.uri().path(), "request for another host refused");
    (
        StatusCode::MISDIRECTED_REQUEST,
        format!(
            "this hub answers at its IP address, localhost and the names in [access] hosts, not {:?}\n",
            host.unwrap_or_default()
        ),
    )
        .into_response()
}

/// Middleware of every route: a request that changes something (any method but GET and
/// HEAD) from a browser must come from the hub's own page. Browsers send `Origin` with such
/// requests; a page of another site opened on the hall's network (a spectator's laptop)
/// would otherwise post to the open API, cookie or not. Clients that are not browsers
/// (curl, pagers, the tests) send no `Origin` and are judged by the token alone.
pub async fn same_origin_changes(request: Request, next: Next) -> Response {
    if matches!(request.method().as_str(), "GET" | "HEAD") || is_same_origin(request.headers()) {
        return next.run(request).await;
    }
    tracing::warn!(
        origin = ?request.headers().get(header::ORIGIN),
        host = ?request.headers().get(header::HOST),
        path = %request.uri().path(),
        "cross-site request refused"
    );
    (
        StatusCode::FORBIDDEN,
        "cross-site request refused: changes come from the hub's own page\n",
    )
        .into_response()
}

/// No `Origin`, or one whose host and port are the request's `Host`.
fn is_same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, rest)| rest.trim_end_matches('/'));
    matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name, value.parse().expect("a header value"));
        }
        map
    }

    #[test]
    fn a_change_from_another_sites_page_is_not_same_origin() {
        let hub = || (header::HOST, "10.0.0.5:8080");
        assert!(is_same_origin(&headers(&[hub()])), "curl sends no Origin");
        assert!(is_same_origin(&headers(&[
            hub(),
            (header::ORIGIN, "http://10.0.0.5:8080")
        ])));
        for other in [
            "http://evil.example",
            "http://10.0.0.5:8081",
            "null",
            "http://10.0.0.5:8080.evil.example",
        ] {
            assert!(
                !is_same_origin(&headers(&[hub(), (header::ORIGIN, other)])),
                "{other}"
            );
        }
    }

    #[test]
    fn the_hub_answers_at_its_addresses_localhost_and_its_configured_names() {
        let access = Access::new(None).with_hosts(vec!["hub.local".into()]);
        for own in [
            "127.0.0.1:8080",
            "10.0.0.5",
            "[::1]:8080",
            "localhost:8080",
            "HUB.local:80",
            "hub.local",
        ] {
            assert!(access.is_own_host(Some(own)), "{own}");
        }
        for other in [
            "evil.example",
            "evil.example:8080",
            "hub.local.evil.example",
            "[nonsense]:80",
            "",
        ] {
            assert!(!access.is_own_host(Some(other)), "{other}");
        }
        assert!(!access.is_own_host(None));
    }

    #[test]
    fn without_a_token_everyone_is_an_arbiter() {
        let access = Access::new(None);
        assert!(!access.login_required());
        assert!(access.is_arbiter(&HeaderMap::new()));
    }

    #[test]
    fn the_token_comes_as_bearer_or_cookie_and_nothing_else_does() {
        let access = Access::new(Some("s3cret".into()));
        assert!(!access.is_arbiter(&HeaderMap::new()));
        assert!(access.is_arbiter(&headers(&[(header::AUTHORIZATION, "Bearer s3cret")])));
        assert!(!access.is_arbiter(&headers(&[(header::AUTHORIZATION, "Bearer s3cre")])));
        assert!(!access.is_arbiter(&headers(&[(header::AUTHORIZATION, "s3cret")])));
        assert!(access.is_arbiter(&headers(&[(
            header::COOKIE,
            "theme=dark; zeitnot_arbiter=s3cret"
        )])));
        assert!(!access.is_arbiter(&headers(&[(header::COOKIE, "zeitnot_arbiter=other")])));
    }
}
