//! HTTP: the arbiters' and the broadcasters' side of the hub.
//!
//! - [`routes`]: the JSON API, health and metrics; [`rounds`]: the rounds' part of it;
//!   [`api`]: how handlers ask the loop that owns the hall (queries and answers);
//!   [`path`]: the board and round numbers of the paths, typed.
//! - [`connections`]: the listener's connections, timed out, kept alive without racing
//!   their clients; [`places`]: who holds them, whom to close to make room, each
//!   address's request budget; [`slots`]: the cap on live streams per client and overall.
//! - [`page`]: the supervision page, its login and its live streams; [`phone_page`]: the
//!   arbiter's phone; [`ntfy`]: ntfy's protocol for the phones' apps.
//! - [`credential`]: who a request comes from; [`access`]: what each login may see and
//!   do; [`login`]: the token a fresh hub makes and the link it prints; [`sessions`]: the
//!   page's logins; [`guesses`]: wrong credentials, throttled per client;
//!   [`log_throttle`]: a refusal's log line at a bounded rate.
//! - [`standby_door`]: a cluster's standby refuses changes, naming the active hub.

pub mod access;
pub mod api;
pub mod connections;
pub mod credential;
pub mod guesses;
pub mod log_throttle;
pub mod login;
pub mod ntfy;
pub mod page;
pub mod path;
pub mod phone_page;
pub mod places;
pub mod rounds;
pub mod routes;
pub mod sessions;
pub mod slots;
pub mod standby_door;
pub mod standings;
