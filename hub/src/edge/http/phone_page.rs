//! The phone view (`/phone`): its files, embedded like the page's (no build step), what it
//! asks about its arbiter (`GET /api/phone`), and the QR codes the chief arbiter's page
//! shows to enrol a phone (`GET /api/arbiters/phone.svg?arbiter=…`).

use axum::extract::{Query as UrlQuery, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use serde_json::json;

use super::api::{Api, ApiError, ArbiterRead};
use super::credential::Login;
use super::page::asset;
use crate::core::phone::PhoneCredentials;

const PHONE_HTML: &str = include_str!("../../../web/phone.html");
const PHONE_JS: &str = include_str!("../../../web/phone.js");
const PHONE_CSS: &str = include_str!("../../../web/phone.css");
const PHONE_ICON: &str = include_str!("../../../web/phone-icon.svg");
const PHONE_MANIFEST: &str = include_str!("../../../web/phone.webmanifest");

/// The phone view's files, open to everyone: what they show comes from the API.
pub(super) fn routes() -> Router<Api> {
    let file = |content_type: &'static str, body: &'static str| {
        get(move || async move { asset(content_type, body) })
    };
    Router::new()
        .route("/phone", file("text/html; charset=utf-8", PHONE_HTML))
        .route(
            "/assets/phone.js",
            file("text/javascript; charset=utf-8", PHONE_JS),
        )
        .route(
            "/assets/phone.css",
            file("text/css; charset=utf-8", PHONE_CSS),
        )
        .route("/assets/phone-icon.svg", file("image/svg+xml", PHONE_ICON))
        .route(
            "/phone.webmanifest",
            file("application/manifest+json", PHONE_MANIFEST),
        )
}

/// The arbiters' routes of the phone view.
pub(super) fn arbiters() -> Router<Api> {
    Router::new().route("/api/phone", get(me))
}

/// The chief arbiter's routes of the phone view.
pub(super) fn chief() -> Router<Api> {
    Router::new().route("/api/arbiters/phone.svg", get(enrolment_qr))
}

/// `GET /api/phone`: whose phone view this is: `{"arbiter", "zones"` (`null`: the whole
/// hall)`, "chief", "language", "ntfy": {"server", "topic"}}`, the topic `null` for the
/// hall's token, which has no phone of its own.
async fn me(
    State(api): State<Api>,
    Extension(login): Extension<Login>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let server = super::ntfy::base_url(&api, &headers);
    let Login::Arbiter(name) = login else {
        return Ok(Json(json!({
            "arbiter": "chief", "zones": null, "chief": true, "language": "en",
            "topic": null, "ntfy": null,
        })));
    };
    let watch = api
        .ask(|reply| ArbiterRead::PhoneWatch {
            arbiter: name.clone(),
            reply,
        })
        .await?
        .ok_or(ApiError::Stopping)?;
    let (watch, credentials) = watch;
    Ok(Json(json!({
        "arbiter": watch.arbiter,
        "zones": watch.zones,
        "chief": watch.chief,
        "language": watch.language,
        "topic": credentials.topic,
        "ntfy": {
            "server": server,
            "topic": credentials.topic,
            "token": credentials.token,
            "link": ntfy_link(&server, &credentials),
        },
    })))
}

/// The ntfy app's deep link that subscribes to the topic (`ntfy://host:port/topic`, with
/// `?secure=false` for a hub on plain HTTP).
fn ntfy_link(server: &str, credentials: &PhoneCredentials) -> String {
    let (scheme, host) = server.split_once("://").unwrap_or(("http", server));
    let insecure = if scheme == "http" {
        "?secure=false"
    } else {
        ""
    };
    format!("ntfy://{host}/{}{insecure}", credentials.topic)
}

#[derive(serde::Deserialize)]
struct QrQuery {
    arbiter: String,
}

/// `GET /api/arbiters/phone.svg?arbiter=IA%20Berg` (the hall's token only): a QR code of the
/// arbiter's phone view login link at the address this request came to; the phone's camera
/// opens it and the view logs in, with the ntfy subscription one tap further.
async fn enrolment_qr(
    State(api): State<Api>,
    UrlQuery(query): UrlQuery<QrQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let login = api
        .ask(|reply| ArbiterRead::Login {
            arbiter: query.arbiter.clone(),
            reply,
        })
        .await?
        .ok_or_else(|| ApiError::BadQuery(format!("{:?} is not enrolled", query.arbiter)))?;
    let server = super::ntfy::base_url(&api, &headers);
    let link = format!("{server}/phone?token={login}");
    let code = qrcode::QrCode::new(link.as_bytes())
        .map_err(|e| ApiError::BadQuery(format!("a QR code: {e}")))?;
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(240, 240)
        .build();
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        svg,
    )
        .into_response())
}
