//! Wrong credentials, counted per client: the page's login, a script's `Authorization:
//! Bearer`, a phone's ntfy token (its stream, `/auth`, its buttons). A client that sent
//! [`TRIES_PER_CLIENT`] wrong ones within [`WINDOW`] has one try checked a
//! [`THROTTLED_EVERY`] until the window ends, the rest answered 429 unread.
//!
//! Only wrong credentials are throttled: a right one is recognised first and never refused
//! for another's wrong ones (an arbiter behind a guesser's NAT gets in at once). Per client
//! only, never for the whole hub: a stranger with many addresses cannot lock the arbiters
//! out. Guessing stays hopeless: a made token has 256 random bits, a configured one at least
//! 16 characters, and a client's wrong ones are checked 10 a minute, then one a second. When
//! the table is full ([`MAX_CLIENTS`] clients within their window) it fails closed: a client
//! it cannot remember has its wrong credentials checked one a second too. An IPv6 client
//! counts by its /64 (one machine picks any address in it).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Wrong credentials a client may send in [`WINDOW`] before it is throttled.
pub const TRIES_PER_CLIENT: u32 = 10;
pub const WINDOW: Duration = Duration::from_secs(60);
/// A throttled client's one checked try per this long.
pub const THROTTLED_EVERY: Duration = Duration::from_secs(1);
/// Clients whose wrong tries are remembered at once (those whose window passed go first).
const MAX_CLIENTS: usize = 10_000;

#[derive(Debug, Clone, Default)]
pub struct Guesses(Arc<Mutex<HashMap<Client, Tries>>>, FullTable);

/// The one check a second the clients a full table cannot remember share.
#[derive(Debug, Clone, Default)]
struct FullTable(Arc<Mutex<Option<Instant>>>);

impl FullTable {
    fn try_at(&self, now: Instant) -> Result<(), Duration> {
        let mut last = self.0.lock().expect("full table lock");
        match *last {
            Some(at) if now < at + THROTTLED_EVERY => Err(at + THROTTLED_EVERY - now),
            _ => {
                *last = Some(now);
                Ok(())
            }
        }
    }
}

/// An IPv4 address, or an IPv6 /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Client(u128);

impl From<IpAddr> for Client {
    fn from(ip: IpAddr) -> Client {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Client(u128::from(u32::from(v4))),
            // The /64, marked so that it is never an IPv4 address's number.
            IpAddr::V6(v6) => Client((u128::from(v6) & (u128::MAX << 64)) | 1 << 32),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Tries {
    since: Instant,
    wrong: u32,
    /// The last try checked (a throttled client's one a second).
    last: Instant,
}

impl Guesses {
    /// Whether `client`'s credential is to be checked now; `Err` with how long it waits.
    pub fn may_try(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let mut clients = self.0.lock().expect("guesses lock");
        let full = clients.len() >= MAX_CLIENTS;
        let Some(tries) = clients.get_mut(&Client::from(client)) else {
            if full {
                // Failing closed: one check a second for whoever it cannot remember (and
                // then a look for clients whose window passed, so the table empties).
                self.1.try_at(now)?;
                clients.retain(|_, t| now < t.since + WINDOW);
            }
            return Ok(());
        };
        if now >= tries.since + WINDOW || tries.wrong < TRIES_PER_CLIENT {
            return Ok(());
        }
        if now >= tries.last + THROTTLED_EVERY {
            tries.last = now;
            return Ok(());
        }
        Err(tries.last + THROTTLED_EVERY - now)
    }

    /// `client` sent a wrong credential.
    pub fn wrong(&self, client: IpAddr, now: Instant) {
        let mut clients = self.0.lock().expect("guesses lock");
        if clients.len() >= MAX_CLIENTS {
            clients.retain(|_, t| now < t.since + WINDOW);
        }
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(&Client::from(client)) {
            return;
        }
        let tries = clients.entry(Client::from(client)).or_insert(Tries {
            since: now,
            wrong: 0,
            last: now,
        });
        if now >= tries.since + WINDOW {
            *tries = Tries {
                since: now,
                wrong: 0,
                last: now,
            };
        }
        tries.wrong += 1;
        tries.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_guesser_is_slowed_to_one_try_a_second_and_only_it() {
        let guesses = Guesses::default();
        let now = Instant::now();
        let guesser = ip("10.0.0.9");
        for _ in 0..TRIES_PER_CLIENT {
            assert!(guesses.may_try(guesser, now).is_ok());
            guesses.wrong(guesser, now);
        }
        assert!(guesses.may_try(guesser, now).is_err());
        // One try a second is still checked: an arbiter behind the same address gets in.
        let later = now + THROTTLED_EVERY;
        assert!(guesses.may_try(guesser, later).is_ok());
        assert!(guesses.may_try(guesser, later).is_err());
        assert!(guesses.may_try(guesser, now + WINDOW).is_ok());
        // A thousand addresses guessing lock nobody else out.
        for n in 0..1000u32 {
            let other = IpAddr::from([10, 1, (n / 256) as u8, (n % 256) as u8]);
            for _ in 0..TRIES_PER_CLIENT {
                guesses.wrong(other, now);
            }
        }
        assert!(guesses.may_try(ip("10.9.9.9"), now).is_ok());
    }

    #[test]
    fn a_full_table_fails_closed() {
        let guesses = Guesses::default();
        let now = Instant::now();
        for n in 0..MAX_CLIENTS as u32 {
            guesses.wrong(IpAddr::from((0x0a00_0000 + n).to_be_bytes()), now);
        }
        // A client it cannot remember: one check a second, shared, until windows pass.
        assert!(guesses.may_try(ip("192.0.2.1"), now).is_ok());
        assert!(guesses.may_try(ip("192.0.2.2"), now).is_err());
        assert!(guesses
            .may_try(ip("192.0.2.2"), now + THROTTLED_EVERY)
            .is_ok());
        assert!(guesses.may_try(ip("192.0.2.3"), now + WINDOW).is_ok());
        assert!(guesses.may_try(ip("192.0.2.4"), now + WINDOW).is_ok());
    }

    #[test]
    fn an_ipv6_client_counts_by_its_slash_64() {
        let guesses = Guesses::default();
        let now = Instant::now();
        for n in 0..TRIES_PER_CLIENT {
            guesses.wrong(ip(&format!("2001:db8:1:2::{n:x}")), now);
        }
        assert!(guesses.may_try(ip("2001:db8:1:2::ffff"), now).is_err());
        assert!(guesses.may_try(ip("2001:db8:1:3::1"), now).is_ok());
        // An IPv4 client seen as IPv6 is the same client.
        for _ in 0..TRIES_PER_CLIENT {
            guesses.wrong(ip("10.0.0.1"), now);
        }
        assert!(guesses.may_try(ip("::ffff:10.0.0.1"), now).is_err());
    }
}
