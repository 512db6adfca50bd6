//! The HTTP listener's places: which connections are open, from which address, in what
//! state, and whom to close when a cap is reached, as nginx and HAProxy bound theirs.
//!
//! A connection is *silent* until it has sent a whole request, *busy* while an answer is
//! being written (a live stream stays busy as long as it lasts), and *idle* between
//! requests. When a cap is reached, room is made by closing a silent or an idle connection,
//! never a busy one:
//! - an address at its own cap ([`PER_CLIENT`]) gives up its own oldest silent connection,
//!   else its oldest idle one;
//! - at the hub's cap ([`MAX_CONNECTIONS`]) the address that holds the most such
//!   connections gives one up, the same way.
//!
//! So a stranger's sockets, silent or kept alive with a request now and then, cannot keep
//! another address out, and a hall behind one NAT address shares its places fairly: its
//! busiest client's idle connections go first. An idle connection is closed gracefully (a
//! request that arrives meanwhile is answered first).
//!
//! Each address also has a request budget ([`REQUESTS_PER_SECOND`], [`REQUEST_BURST`]) for
//! requests without a credential; an arbiter's credential is checked, and throttled only
//! when wrong, by the access rules.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::oneshot;

use super::access::{auth_param, presented_credential, Access};
use crate::metrics::Metrics;

/// Connections held at once: every arbiter's and spectator's page, the broadcasters' polls.
pub const MAX_CONNECTIONS: usize = 2_048;
/// Connections one address holds at once.
pub const PER_CLIENT: usize = 256;
/// Requests without a credential one address may make a second, on average: a hall of
/// 500 spectators behind one NAT polling the feed every 2 s stays within it.
pub const REQUESTS_PER_SECOND: u32 = 300;
/// Requests without a credential one address may make at once, over its average.
pub const REQUEST_BURST: u32 = 600;

/// How a connection was told to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evicted {
    /// It never sent a whole request: closed at once.
    Silent,
    /// Between requests: closed gracefully.
    Idle,
}

/// The places; cheap to clone.
#[derive(Debug, Clone)]
pub struct Places {
    open: Arc<Mutex<Open>>,
    metrics: Arc<Metrics>,
}

#[derive(Debug, Default)]
struct Open {
    next: u64,
    /// By id, so oldest first.
    held: BTreeMap<u64, Held>,
    clients: HashMap<IpAddr, Client>,
}

#[derive(Debug)]
struct Held {
    client: IpAddr,
    state: State,
    close: Option<oneshot::Sender<Evicted>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Silent,
    /// Answers being written.
    Busy(u32),
    Idle,
}

#[derive(Debug)]
struct Client {
    open: usize,
    budget: Bucket,
}

/// A place, given back by [`Places::leave`].
#[derive(Debug)]
pub struct Place {
    pub id: u64,
    /// Closes the connection to make room for another.
    pub evicted: oneshot::Receiver<Evicted>,
}

impl Places {
    pub fn new(metrics: Arc<Metrics>) -> Places {
        metrics.http_connection_caps(MAX_CONNECTIONS, PER_CLIENT);
        Places {
            open: Arc::default(),
            metrics,
        }
    }

    /// A place for a connection from `client`, room made as the module says; `None` when
    /// every connection in the way is busy.
    pub fn admit(&self, client: IpAddr) -> Option<Place> {
        let mut open = self.open.lock().expect("places lock");
        if open
            .clients
            .get(&client)
            .is_some_and(|c| c.open >= PER_CLIENT)
        {
            self.make_room(&mut open, Some(client))?;
        }
        if open.held.len() >= MAX_CONNECTIONS {
            self.make_room(&mut open, None)?;
        }
        let id = open.next;
        open.next += 1;
        let (close, evicted) = oneshot::channel();
        open.held.insert(
            id,
            Held {
                client,
                state: State::Silent,
                close: Some(close),
            },
        );
        open.clients
            .entry(client)
            .or_insert_with(|| Client {
                open: 0,
                budget: Bucket::full(Instant::now()),
            })
            .open += 1;
        self.metrics.http_connections_open(open.held.len());
        Some(Place { id, evicted })
    }

    /// Connection `id` sent a whole request: busy until its answer is written
    /// ([`Places::answered`]).
    pub fn spoke(&self, id: u64) {
        let mut open = self.open.lock().expect("places lock");
        if let Some(held) = open.held.get_mut(&id) {
            held.state = match held.state {
                State::Busy(n) => State::Busy(n + 1),
                State::Silent | State::Idle => State::Busy(1),
            };
        }
    }

    /// An answer on connection `id` was written whole (or dropped).
    pub fn answered(&self, id: u64) {
        let mut open = self.open.lock().expect("places lock");
        if let Some(held) = open.held.get_mut(&id) {
            held.state = match held.state {
                State::Busy(n) if n > 1 => State::Busy(n - 1),
                _ => State::Idle,
            };
        }
    }

    /// Whether a request without a credential from `client` is within its address's budget.
    pub fn within_budget(&self, client: IpAddr) -> bool {
        let mut open = self.open.lock().expect("places lock");
        let within = open
            .clients
            .get_mut(&client)
            .is_none_or(|c| c.budget.take(Instant::now()));
        if !within {
            self.metrics.http_request_over_budget();
        }
        within
    }

    /// Connection `id` ended.
    pub fn leave(&self, id: u64) {
        let mut open = self.open.lock().expect("places lock");
        if let Some(held) = open.held.remove(&id) {
            open.count_out(held.client);
        }
        self.metrics.http_connections_open(open.held.len());
    }

    /// Closes the oldest silent connection, else the oldest idle one, of `client` (or of
    /// the address that holds the most of them), and counts it gone at once so its place
    /// is free; `None` if there is none.
    fn make_room(&self, open: &mut Open, client: Option<IpAddr>) -> Option<()> {
        let from = match client {
            Some(client) => client,
            None => open.heaviest()?,
        };
        let evictable = |state: State| {
            open.held
                .iter()
                .find(|(_, h)| h.client == from && h.state == state)
                .map(|(id, _)| *id)
        };
        let (id, how) = match evictable(State::Silent) {
            Some(id) => (id, Evicted::Silent),
            None => (evictable(State::Idle)?, Evicted::Idle),
        };
        let mut held = open.held.remove(&id)?;
        if let Some(close) = held.close.take() {
            let _ = close.send(how);
        }
        open.count_out(held.client);
        self.metrics.http_connection_evicted();
        Some(())
    }

    #[cfg(test)]
    fn open_from(&self, client: IpAddr) -> usize {
        let open = self.open.lock().unwrap();
        open.clients.get(&client).map_or(0, |c| c.open)
    }
}

impl Open {
    fn count_out(&mut self, client: IpAddr) {
        if let Some(c) = self.clients.get_mut(&client) {
            c.open -= 1;
            if c.open == 0 {
                self.clients.remove(&client);
            }
        }
    }

    /// The address with the most connections that may be closed (silent or idle).
    fn heaviest(&self) -> Option<IpAddr> {
        let mut evictable: HashMap<IpAddr, usize> = HashMap::new();
        for held in self.held.values() {
            if matches!(held.state, State::Silent | State::Idle) {
                *evictable.entry(held.client).or_default() += 1;
            }
        }
        evictable
            .into_iter()
            .max_by_key(|(client, n)| (*n, *client))
            .map(|(client, _)| client)
    }
}

/// A token bucket: [`REQUEST_BURST`] at most, refilled at [`REQUESTS_PER_SECOND`].
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(now: Instant) -> Bucket {
        Bucket {
            tokens: f64::from(REQUEST_BURST),
            at: now,
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let refill = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens =
            (self.tokens + refill * f64::from(REQUESTS_PER_SECOND)).min(f64::from(REQUEST_BURST));
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Middleware of every route: a request that presents no credential and comes from no
/// arbiter's session counts against its address's budget; past it, 429 with `Retry-After`.
/// A presented credential is left to the access rules, which throttle wrong ones.
pub async fn budgeted(
    axum::extract::State((places, access)): axum::extract::State<(Places, Access)>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let credential = presented_credential(request.headers(), auth_param(request.uri().query()));
    if credential.is_some()
        || access.is_arbiter(request.headers())
        || places.within_budget(peer.ip())
    {
        return next.run(request).await;
    }
    (
        hyper::StatusCode::TOO_MANY_REQUESTS,
        [(hyper::header::RETRY_AFTER, "1")],
        format!(
            "this address made more than {REQUESTS_PER_SECOND} requests a second; try again in a second\n"
        ),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places::new(Arc::new(Metrics::default()))
    }

    #[test]
    fn a_full_address_makes_room_by_closing_its_oldest_silent_then_idle_connection() {
        let places = places();
        let client: IpAddr = "127.0.0.1".parse().unwrap();
        let mut held: Vec<Place> = (0..PER_CLIENT)
            .map(|_| places.admit(client).unwrap())
            .collect();
        // All but the second answered a request and went idle; the second is silent.
        for (i, place) in held.iter().enumerate() {
            if i != 1 {
                places.spoke(place.id);
                places.answered(place.id);
            }
        }
        let newest = places.admit(client).expect("room made");
        assert_eq!(held[1].evicted.try_recv(), Ok(Evicted::Silent));
        assert!(held[0].evicted.try_recv().is_err(), "an idle one stays");
        // No silent one left: the oldest idle one goes, gracefully.
        places.spoke(newest.id);
        places.answered(newest.id);
        places.admit(client).expect("room made");
        assert_eq!(held[0].evicted.try_recv(), Ok(Evicted::Idle));
        assert_eq!(places.open_from(client), PER_CLIENT);
    }

    #[test]
    fn busy_connections_are_never_closed_to_make_room() {
        let places = places();
        let client: IpAddr = "127.0.0.1".parse().unwrap();
        let held: Vec<Place> = (0..PER_CLIENT)
            .map(|_| places.admit(client).unwrap())
            .collect();
        for place in &held {
            places.spoke(place.id);
        }
        assert!(places.admit(client).is_none(), "every answer is under way");
        // An answer written: that connection is idle and can make room.
        places.answered(held[7].id);
        assert!(places.admit(client).is_some());
        // Places come back when connections end.
        places.leave(held[0].id);
        assert!(places.admit(client).is_some());
    }

    #[test]
    fn the_hub_wide_cap_takes_from_the_address_that_holds_the_most() {
        let places = places();
        let heavy: IpAddr = "10.0.0.1".parse().unwrap();
        let mut held = Vec::new();
        for _ in 0..PER_CLIENT {
            held.push((heavy, places.admit(heavy).unwrap()));
        }
        let mut n = 0u32;
        while held.len() < MAX_CONNECTIONS {
            let client = IpAddr::from((0x0b00_0000 + n).to_be_bytes());
            n += 1;
            for _ in 0..8 {
                held.push((client, places.admit(client).unwrap()));
            }
        }
        // Every connection is kept alive with a request now and then: idle.
        for (_, place) in &held {
            places.spoke(place.id);
            places.answered(place.id);
        }
        let newcomer: IpAddr = "192.0.2.9".parse().unwrap();
        places.admit(newcomer).expect("another address gets in");
        assert_eq!(places.open_from(heavy), PER_CLIENT - 1);
        assert_eq!(held[0].1.evicted.try_recv(), Ok(Evicted::Idle));
        assert!(held[PER_CLIENT].1.evicted.try_recv().is_err());
    }

    #[test]
    fn an_address_past_its_budget_is_refused_until_it_refills() {
        let places = places();
        let client: IpAddr = "127.0.0.1".parse().unwrap();
        let _place = places.admit(client).unwrap();
        let within = (0..REQUEST_BURST + 50)
            .filter(|_| places.within_budget(client))
            .count();
        // The burst, and what refilled while the loop ran.
        assert!((REQUEST_BURST as usize..REQUEST_BURST as usize + 50).contains(&within));
        let mut bucket = Bucket::full(Instant::now());
        let now = Instant::now();
        for _ in 0..REQUEST_BURST {
            assert!(bucket.take(now));
        }
        assert!(!bucket.take(now));
        assert!(bucket.take(now + std::time::Duration::from_millis(10)));
    }
}
