//! Caps on the live streams (`/api/live`, `/api/public/live`, the phones' ntfy streams) held
//! open: each is a task and a queue in the hub, so one client on the hall's network must not
//! open ten thousand of them. Spectators, arbiters and the chief arbiter draw from pools of
//! their own, so that the press room's screens or a stranger's laptop full of spectators'
//! streams never lock the arbiters out, and no arbiter's login (a phone's token copied to
//! a script) fills the arbiters' pool or keeps the chief's screens out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use super::credential::Login;

/// Spectators' streams one client address may hold: a few screens behind one router.
pub const SPECTATORS_PER_CLIENT: usize = 16;
/// Spectators' streams in all: the press room and the big screens.
pub const SPECTATORS: usize = 800;
/// Arbiters' streams one client address may hold: a chief arbiter's screens, a tunnel.
pub const ARBITERS_PER_CLIENT: usize = 32;
/// Streams one arbiter's login holds (their page on a phone, a tablet, a laptop, and their
/// phone's notifications), as many as their sessions ([`super::sessions::PER_ARBITER`]).
pub const PER_ARBITER: usize = 8;
/// Arbiters' streams in all: every arbiter's page, with room to spare.
pub const ARBITERS: usize = 200;
/// The chief arbiter's streams (the hall's token): the supervision screens, apart from the
/// arbiters' pool so that it is never full for them.
pub const CHIEF: usize = 32;
/// Streams the hub holds in all.
pub const OVERALL: usize = SPECTATORS + ARBITERS + CHIEF;

/// Who a stream is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    Spectator,
    /// An arbiter's page or phone, or the chief's page.
    Arbiter(Login),
}

/// Why no stream was opened: the cap reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// The client's share of its pool.
    Client(usize),
    /// The login's share.
    Login(usize),
    /// The pool.
    Pool(usize),
}

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Full::Client(n) => write!(f, "this address holds {n} live streams, its most"),
            Full::Login(n) => write!(f, "this login holds {n} live streams, its most"),
            Full::Pool(n) => write!(f, "the hub holds {n} live streams of this kind, its most"),
        }
    }
}

/// The streams open now, by pool, client and login.
#[derive(Debug, Clone, Default)]
pub struct StreamSlots(Arc<Mutex<[Pool; 3]>>);

#[derive(Debug, Default)]
struct Pool {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
    by_login: HashMap<Login, usize>,
}

/// One open stream; dropping it (the stream ends, the client goes) frees the slot.
#[derive(Debug)]
pub struct Slot {
    slots: StreamSlots,
    pool: usize,
    client: IpAddr,
    login: Option<Login>,
}

/// A viewer's pool: its index and its caps (per client, per login, in all).
fn pool_of(viewer: &Viewer) -> (usize, usize, usize, usize) {
    match viewer {
        Viewer::Spectator => (0, SPECTATORS_PER_CLIENT, usize::MAX, SPECTATORS),
        Viewer::Arbiter(Login::Arbiter(_)) => (1, ARBITERS_PER_CLIENT, PER_ARBITER, ARBITERS),
        Viewer::Arbiter(Login::Chief) => (2, CHIEF, CHIEF, CHIEF),
    }
}

impl StreamSlots {
    /// A slot for a stream to `viewer` at `client`, unless the client, the login or the
    /// pool holds as many as allowed.
    pub fn take(&self, viewer: &Viewer, client: IpAddr) -> Result<Slot, Full> {
        let (pool, per_client, per_login, overall) = pool_of(viewer);
        let login = match viewer {
            Viewer::Arbiter(login) => Some(login.clone()),
            Viewer::Spectator => None,
        };
        let mut pools = self.0.lock().expect("slots lock");
        let open = &mut pools[pool];
        let by_client = open.by_client.get(&client).copied().unwrap_or(0);
        let by_login = login
            .as_ref()
            .and_then(|l| open.by_login.get(l).copied())
            .unwrap_or(0);
        if by_client >= per_client {
            return Err(Full::Client(per_client));
        }
        if by_login >= per_login {
            return Err(Full::Login(per_login));
        }
        if open.total >= overall {
            return Err(Full::Pool(overall));
        }
        open.total += 1;
        open.by_client.insert(client, by_client + 1);
        if let Some(login) = &login {
            open.by_login.insert(login.clone(), by_login + 1);
        }
        Ok(Slot {
            slots: self.clone(),
            pool,
            client,
            login,
        })
    }
}

/// One less in `counts` under `key`, and no key once none is left.
fn release<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut pools = self.slots.0.lock().expect("slots lock");
        let open = &mut pools[self.pool];
        open.total -= 1;
        release(&mut open.by_client, &self.client);
        if let Some(login) = &self.login {
            release(&mut open.by_login, login);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arbiter(name: &str) -> Viewer {
        Viewer::Arbiter(Login::Arbiter(name.into()))
    }

    #[test]
    fn a_client_gets_its_share_and_a_closed_stream_frees_its_slot() {
        let slots = StreamSlots::default();
        let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let spectator = Viewer::Spectator;
        let mut held: Vec<Slot> = (0..SPECTATORS_PER_CLIENT)
            .map(|_| slots.take(&spectator, a).unwrap())
            .collect();
        assert_eq!(
            slots.take(&spectator, a).unwrap_err(),
            Full::Client(SPECTATORS_PER_CLIENT),
            "one client past its share"
        );
        assert!(
            slots.take(&spectator, b).is_ok(),
            "another client is not held back"
        );
        assert!(
            slots.take(&arbiter("IA Berg"), a).is_ok(),
            "spectators' streams do not take the arbiters' places"
        );
        held.pop();
        assert!(
            slots.take(&spectator, a).is_ok(),
            "a closed stream's slot is free again"
        );
    }

    #[test]
    fn each_pool_holds_no_more_than_its_cap() {
        let slots = StreamSlots::default();
        let held: Vec<Slot> = (0..SPECTATORS)
            .map(|i| {
                let client = IpAddr::from([10, 1, (i / 250) as u8, (i % 250) as u8]);
                slots.take(&Viewer::Spectator, client).unwrap()
            })
            .collect();
        let late: IpAddr = [10, 9, 9, 9].into();
        assert_eq!(
            slots.take(&Viewer::Spectator, late).unwrap_err(),
            Full::Pool(SPECTATORS)
        );
        assert!(slots.take(&arbiter("IA Berg"), late).is_ok());
        drop(held);
        assert!(slots.take(&Viewer::Spectator, late).is_ok());
    }

    #[test]
    fn one_arbiters_login_fills_neither_the_arbiters_pool_nor_the_chiefs() {
        let slots = StreamSlots::default();
        // From many addresses (a script with a copied phone token): the login's share only.
        let held: Vec<Slot> = (0..PER_ARBITER)
            .map(|i| {
                let client = IpAddr::from([10, 2, 0, i as u8]);
                slots.take(&arbiter("IA Berg"), client).unwrap()
            })
            .collect();
        assert_eq!(
            slots
                .take(&arbiter("IA Berg"), [10, 2, 1, 1].into())
                .unwrap_err(),
            Full::Login(PER_ARBITER)
        );
        assert!(slots
            .take(&arbiter("IA Dahl"), [10, 2, 1, 1].into())
            .is_ok());
        // The arbiters' pool full: the chief's screens still open.
        let others: Vec<Slot> = (0..ARBITERS)
            .filter_map(|i| {
                let name = format!("arbiter {}", i / PER_ARBITER);
                let client = IpAddr::from([10, 3, (i / 200) as u8, (i % 200) as u8]);
                slots.take(&arbiter(&name), client).ok()
            })
            .collect();
        assert!(held.len() + others.len() + 1 >= ARBITERS);
        assert!(slots.take(&arbiter("late"), [10, 4, 0, 1].into()).is_err());
        assert!(slots
            .take(&Viewer::Arbiter(Login::Chief), [10, 4, 0, 1].into())
            .is_ok());
    }
}
