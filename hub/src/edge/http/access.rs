//! Who may see what over HTTP. The arbiters' view (the live boards, alerts, decisions)
//! answers only to a login, from every address: behind a reverse proxy or an SSH tunnel
//! everyone is 127.0.0.1, so no address is trusted. Spectators get the page, the delayed
//! feed and the pairings.
//!
//! Two kinds of login ([`Login`]): the hall's token, the chief arbiter's (a hub always has
//! one: without a configured one it makes its own, [`super::login`]), which also holds the
//! keys (nodes, arbiters, the broker's users); and each arbiter's own login, from their
//! enrolment ([`super::login::arbiter_login`]), revoked one by one. What an arbiter does is
//! signed with their own name, whatever a request's body says.
//!
//! The page logs in once (`POST /api/session`) and holds a session's id in an HttpOnly
//! cookie ([`super::sessions`]); scripts send `Authorization: Bearer …`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::credential::{hash, Login};
use super::guesses::Guesses;
use super::log_throttle::Throttle;
use super::sessions::Sessions;
use crate::core::phone::PhoneCredentials;
use crate::metrics::Metrics;

/// The cookie that carries the arbiter token.
pub const COOKIE: &str = "zeitnot_arbiter";

/// An enrolled arbiter's phone: whose, and its ntfy topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone {
    pub arbiter: String,
    pub topic: String,
}

#[derive(Debug, Clone)]
pub struct Access {
    arbiter_token: Arc<str>,
    /// Each enrolled arbiter's login, by its hash: the name.
    arbiters: Arc<RwLock<HashMap<String, String>>>,
    /// Each enrolled arbiter's phone, by its token's hash.
    phones: Arc<RwLock<HashMap<String, Phone>>>,
    /// The page's logins.
    pub sessions: Sessions,
    /// Wrong credentials, per client.
    pub guesses: Guesses,
    /// Names the hub is reached under, besides IP addresses and `localhost`.
    hosts: Arc<[String]>,
    /// Unsealed events are taken from boards nobody enrolled: the page says so.
    open_hall: bool,
    /// The page is served over HTTPS: its cookie is `Secure`.
    secure_cookies: bool,
}

impl Access {
    /// The arbiters' view answers to `arbiter_token` (never empty: [`super::login`]).
    pub fn new(arbiter_token: String) -> Access {
        assert!(!arbiter_token.is_empty(), "an arbiter token");
        Access {
            arbiter_token: arbiter_token.into(),
            arbiters: Arc::default(),
            phones: Arc::default(),
            sessions: Sessions::default(),
            guesses: Guesses::default(),
            hosts: Arc::new([]),
            open_hall: false,
            secure_cookies: false,
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

    /// The page's sessions kept in `sessions` (a restart keeps the arbiters logged in).
    #[must_use]
    pub fn with_sessions(mut self, sessions: Sessions) -> Access {
        self.sessions = sessions;
        self
    }

    /// The page is served over HTTPS: its session cookie is sent over HTTPS only.
    #[must_use]
    pub fn with_secure_cookies(mut self, secure: bool) -> Access {
        self.secure_cookies = secure;
        self
    }

    /// The scheme the hub is reached with.
    pub fn scheme(&self) -> &'static str {
        if self.secure_cookies {
            "https"
        } else {
            "http"
        }
    }

    /// The attributes of the page's session cookie.
    pub fn cookie_attributes(&self) -> &'static str {
        match self.secure_cookies {
            true => "Path=/; HttpOnly; SameSite=Strict; Secure",
            false => "Path=/; HttpOnly; SameSite=Strict",
        }
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
            // An IPv6 literal, then nothing or a port: [::1], [::1]:8080 (not
            // [::1]evil.example).
            Some(v6) => {
                return v6.split_once(']').is_some_and(|(ip, rest)| {
                    let port = rest.strip_prefix(':').unwrap_or(rest);
                    ip.parse::<std::net::Ipv6Addr>().is_ok()
                        && (rest.is_empty()
                            || rest.starts_with(':')
                                && !port.is_empty()
                                && port.bytes().all(|b| b.is_ascii_digit()))
                })
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

    /// The enrolled arbiters, each with their login: only they log in as arbiters from now
    /// on, and the sessions of any other login end.
    pub fn set_arbiters<'a>(&self, logins: impl IntoIterator<Item = (&'a str, String)>) {
        let table: HashMap<String, String> = logins
            .into_iter()
            .map(|(name, login)| (hash(&login), name.to_owned()))
            .collect();
        let valid: HashSet<String> = table.keys().cloned().collect();
        *self.arbiters.write().expect("arbiters lock") = table;
        self.sessions.keep_only(&valid);
    }

    /// The enrolled arbiters' phones (name, topic, token): only these subscribe from now on.
    pub fn set_phones(&self, phones: impl IntoIterator<Item = (String, PhoneCredentials)>) {
        let table = phones
            .into_iter()
            .map(|(arbiter, c)| {
                let phone = Phone {
                    arbiter,
                    topic: c.topic,
                };
                (hash(&c.token), phone)
            })
            .collect();
        *self.phones.write().expect("phones lock") = table;
    }

    /// Whose phone holds `token`.
    pub fn phone_of(&self, token: &str) -> Option<Phone> {
        let phones = self.phones.read().expect("phones lock");
        phones.get(&hash(token)).cloned()
    }

    /// The phone subscribed to `topic` of arbiter `arbiter` (their page, logged in, reads
    /// their own phone's stream).
    pub fn phone_of_arbiter(&self, arbiter: &str) -> Option<Phone> {
        let phones = self.phones.read().expect("phones lock");
        phones.values().find(|p| p.arbiter == arbiter).cloned()
    }

    /// Who logs in with `token`, and the hash of the credential (empty for the hall's
    /// token, compared in constant time; an arbiter's is found by its SHA-256).
    pub fn login_of(&self, token: &str) -> Option<(Login, String)> {
        if protocol::seal::same_secret(self.arbiter_token.as_bytes(), token.as_bytes()) {
            return Some((Login::Chief, String::new()));
        }
        let credential = hash(token);
        let arbiters = self.arbiters.read().expect("arbiters lock");
        let name = arbiters.get(&credential)?.clone();
        Some((Login::Arbiter(name), credential))
    }

    /// Who a request comes from: the bearer token or login, or the cookie of an open session
    /// of the page.
    pub fn who(&self, headers: &HeaderMap) -> Option<Login> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if let Some((login, _)) = bearer.and_then(|t| self.login_of(t)) {
            return Some(login);
        }
        session_cookie(headers).and_then(|id| self.sessions.who(id, SystemTime::now()))
    }

    /// Whether a request comes from an arbiter (or the chief).
    pub fn is_arbiter(&self, headers: &HeaderMap) -> bool {
        self.who(headers).is_some()
    }
}

/// The credential a request presents, as scripts and ntfy's clients send it: `Authorization:
/// Bearer TOKEN`, Basic with the token as the password, or ntfy's `auth` parameter (either
/// of those, base64url). A page's session cookie is no credential here: it is random and
/// stale ones are common.
pub fn presented_credential(headers: &HeaderMap, auth_param: Option<&str>) -> Option<String> {
    use base64::Engine;
    let from_param = auth_param.and_then(|a| {
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let bytes = engine
            .decode(a.trim_end_matches("%3D").trim_end_matches('='))
            .ok()?;
        String::from_utf8(bytes).ok()
    });
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or(from_param)?;
    if let Some(bearer) = value.strip_prefix("Bearer ") {
        return Some(bearer.trim().to_owned());
    }
    let basic = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (_, password) = text.split_once(':')?;
    Some(password.to_owned())
}

/// ntfy's `auth` parameter of a query string, as it stands.
pub fn auth_param(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("auth="))
}

/// Middleware of every route: a request presenting a right credential (a script's Bearer,
/// a phone's token) goes on; a wrong one from a client that sent too many wrong ones waits
/// (429 with `Retry-After`, in ntfy's JSON, which scripts read too), else it is counted
/// against its client ([`super::guesses`]) and the route answers it as it answers any wrong
/// credential. The page's own login counts in its handler.
pub async fn guessers_slowed(
    State((access, metrics)): State<(Access, Arc<Metrics>)>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    static LOGGED: Throttle = Throttle::new();
    let presented = presented_credential(request.headers(), auth_param(request.uri().query()));
    let Some(credential) = presented else {
        return next.run(request).await;
    };
    // A right credential goes through whatever its address's wrong ones did: every one
    // the hub makes is random and long, so only wrong ones need slowing.
    if access.login_of(&credential).is_some() || access.phone_of(&credential).is_some() {
        return next.run(request).await;
    }
    let now = std::time::Instant::now();
    if let Err(wait) = access.guesses.may_try(peer.ip(), now) {
        metrics.login_refused();
        return too_many_guesses(wait);
    }
    access.guesses.wrong(peer.ip(), now);
    metrics.login_refused();
    if let Some(left_out) = LOGGED.admit() {
        tracing::warn!(client = %peer.ip(), path = %request.uri().path(), left_out, "a wrong token refused");
    }
    next.run(request).await
}

/// 429 for a client that sent too many wrong credentials: when to try again.
pub fn too_many_guesses(wait: std::time::Duration) -> Response {
    let body = serde_json::json!({
        "code": 42909,
        "http": 429,
        "error": "limit reached: too many auth failures from this address, try again later",
    });
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, (wait.as_secs() + 1).to_string())],
        axum::Json(body),
    )
        .into_response()
}

/// The page's session id, from the request's cookies.
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// Middleware of the arbiters' routes: 401 without a login; the handlers find who it is
/// among the request's extensions.
pub async fn arbiters_only(
    State(access): State<Access>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(login) = access.who(request.headers()) {
        request.extensions_mut().insert(login);
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

/// Middleware of the keys' routes (enrolments, bindings, the broker's users), inside
/// [`arbiters_only`]: 403 for an arbiter's own login, only the hall's token holds the keys.
pub async fn chief_only(request: Request, next: Next) -> Response {
    if request.extensions().get::<Login>() == Some(&Login::Chief) {
        return next.run(request).await;
    }
    (
        StatusCode::FORBIDDEN,
        "the keys of the hall: the chief arbiter's token only\n",
    )
        .into_response()
}

/// What every answer tells the browser: only the hub's own scripts, styles and images run
/// on its pages (a name that slipped past the escaping runs nothing), no other site frames
/// them, no file is taken for another type, no address (with a login link's token) goes
/// out as a referrer, and over HTTPS, HTTPS only from then on.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Middleware of every route: the security headers ([`CONTENT_SECURITY_POLICY`] and the
/// rest) on every answer.
pub async fn security_headers(
    State(access): State<Access>,
    request: Request,
    next: Next,
) -> Response {
    use axum::http::HeaderValue;
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: header::HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        CONTENT_SECURITY_POLICY,
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    if access.secure_cookies {
        set(
            headers,
            header::STRICT_TRANSPORT_SECURITY,
            "max-age=31536000",
        );
    }
    response
}

/// Middleware of every route: only requests addressed to one of the hub's own hosts (421
/// otherwise, with the remedy).
pub async fn own_host_only(
    State((access, metrics)): State<(Access, Arc<Metrics>)>,
    request: Request,
    next: Next,
) -> Response {
    static LOGGED: Throttle = Throttle::new();
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    if access.is_own_host(host.as_deref()) {
        return next.run(request).await;
    }
    metrics.http_request_refused();
    if let Some(left_out) = LOGGED.admit() {
        tracing::warn!(?host, path = %request.uri().path(), left_out, "request for another host refused");
    }
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
pub async fn same_origin_changes(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    static LOGGED: Throttle = Throttle::new();
    if matches!(request.method().as_str(), "GET" | "HEAD") || is_same_origin(request.headers()) {
        return next.run(request).await;
    }
    metrics.http_request_refused();
    if let Some(left_out) = LOGGED.admit() {
        tracing::warn!(
            origin = ?request.headers().get(header::ORIGIN),
            host = ?request.headers().get(header::HOST),
            path = %request.uri().path(),
            left_out,
            "cross-site request refused"
        );
    }
    (
        StatusCode::FORBIDDEN,
        "cross-site request refused: changes come from the hub's own page\n",
    )
        .into_response()
}

/// No `Origin`, or one whose host and port are the request's `Host`.
pub(super) fn is_same_origin(headers: &HeaderMap) -> bool {
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

    #[test]
    fn the_credential_comes_as_ntfys_apps_and_scripts_send_it() {
        use base64::Engine;
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, value.parse().unwrap());
            headers
        };
        assert_eq!(
            presented_credential(&with("Bearer tk_abc"), None).as_deref(),
            Some("tk_abc")
        );
        // Basic with the token as the password (ntfy's "user" dialog), any user.
        let basic = base64::engine::general_purpose::STANDARD.encode(":tk_abc");
        assert_eq!(
            presented_credential(&with(&format!("Basic {basic}")), None).as_deref(),
            Some("tk_abc")
        );
        // ntfy's ?auth= is the header's value in base64.
        let param = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("Bearer tk_abc");
        assert_eq!(
            presented_credential(&HeaderMap::new(), Some(&param)).as_deref(),
            Some("tk_abc")
        );
        assert_eq!(presented_credential(&with("tk_abc"), None), None);
        assert_eq!(presented_credential(&HeaderMap::new(), Some("%%%")), None);
    }

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
        let access = Access::new("a-token-of-the-hall".into()).with_hosts(vec!["hub.local".into()]);
        for own in [
            "127.0.0.1:8080",
            "10.0.0.5",
            "[::1]:8080",
            "[::1]",
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
            // The security review's: an IPv6 literal with a name after it.
            "[::1]evil.example",
            "[::1]:evil",
            "[::1]:",
            "",
        ] {
            assert!(!access.is_own_host(Some(other)), "{other}");
        }
        assert!(!access.is_own_host(None));
    }

    #[test]
    fn nobody_is_an_arbiter_without_the_token() {
        let access = Access::new("a-token-of-the-hall".into());
        assert!(!access.is_arbiter(&HeaderMap::new()));
        // A proxy's or a tunnel's forwarding headers prove nothing.
        assert!(!access.is_arbiter(&headers(&[
            (
                header::HeaderName::from_static("x-forwarded-for"),
                "127.0.0.1"
            ),
            (header::HOST, "127.0.0.1:8080"),
        ])));
    }

    #[test]
    fn the_token_comes_as_bearer_and_a_session_as_cookie_and_nothing_else_does() {
        let access = Access::new("s3cret".into());
        assert!(!access.is_arbiter(&HeaderMap::new()));
        assert!(access.is_arbiter(&headers(&[(header::AUTHORIZATION, "Bearer s3cret")])));
        assert!(!access.is_arbiter(&headers(&[(header::AUTHORIZATION, "Bearer s3cre")])));
        assert!(!access.is_arbiter(&headers(&[(header::AUTHORIZATION, "s3cret")])));
        // The token itself is no cookie: only a session's id is.
        assert!(!access.is_arbiter(&headers(&[(header::COOKIE, "zeitnot_arbiter=s3cret")])));
        let session = access
            .sessions
            .open(SystemTime::now(), Login::Chief, String::new());
        let cookie = format!("theme=dark; zeitnot_arbiter={session}");
        assert!(access.is_arbiter(&headers(&[(header::COOKIE, &cookie)])));
        access.sessions.close(&session);
        assert!(!access.is_arbiter(&headers(&[(header::COOKIE, &cookie)])));
    }

    #[test]
    fn an_arbiters_own_login_is_theirs_until_revoked() {
        let access = Access::new("the-hall-token-0".into());
        access.set_arbiters([("IA Berg", "bergs-login".to_owned())]);
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
        assert_eq!(access.who(&bearer("the-hall-token-0")), Some(Login::Chief));
        let berg = Login::Arbiter("IA Berg".into());
        assert_eq!(access.who(&bearer("bergs-login")), Some(berg.clone()));
        assert_eq!(
            berg.signs(Some("mallory".into())),
            "IA Berg",
            "her own name"
        );
        assert_eq!(Login::Chief.signs(None), "chief");
        let (login, credential) = access.login_of("bergs-login").unwrap();
        let session = access.sessions.open(SystemTime::now(), login, credential);
        let cookie = headers(&[(header::COOKIE, &format!("zeitnot_arbiter={session}"))]);
        assert_eq!(access.who(&cookie), Some(berg));
        // Revoked: neither her login nor her session lets her in.
        access.set_arbiters([]);
        assert_eq!(access.who(&bearer("bergs-login")), None);
        assert_eq!(access.who(&cookie), None);
    }
}
