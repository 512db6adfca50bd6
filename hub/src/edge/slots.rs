//! Caps on the live streams (`/api/live`, `/api/public/live`) held open: each is a task and a
//! queue in the hub, so one client on the hall's network must not open ten thousand of them.
//! Spectators and arbiters draw from pools of their own, so that the press room's screens or
//! a stranger's laptop full of spectators' streams never lock the arbiters out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::view::tiles::Audience;

/// Spectators' streams one client address may hold: a few screens behind one router.
pub const SPECTATORS_PER_CLIENT: usize = 16;
/// Spectators' streams in all: the press room and the big screens.
pub const SPECTATORS: usize = 800;
/// Arbiters' streams one client address may hold: a chief arbiter's screens, a tunnel.
pub const ARBITERS_PER_CLIENT: usize = 32;
/// Arbiters' streams in all: every arbiter's page, with room to spare.
pub const ARBITERS: usize = 200;
/// Streams the hub holds in all.
pub const OVERALL: usize = SPECTATORS + ARBITERS;

/// The streams open now, by audience and client.
#[derive(Debug, Clone, Default)]
pub struct StreamSlots(Arc<Mutex<[Pool; 2]>>);

#[derive(Debug, Default)]
struct Pool {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// One open stream; dropping it (the stream ends, the client goes) frees the slot.
#[derive(Debug)]
pub struct Slot {
    slots: StreamSlots,
    pool: usize,
    client: IpAddr,
}

/// A pool's index and its caps (per client, in all).
fn pool_of(audience: Audience) -> (usize, usize, usize) {
    match audience {
        Audience::Spectators => (0, SPECTATORS_PER_CLIENT, SPECTATORS),
        Audience::Arbiters => (1, ARBITERS_PER_CLIENT, ARBITERS),
    }
}

/// The caps of `audience`'s streams: per client, in all.
pub fn caps(audience: Audience) -> (usize, usize) {
    let (_, per_client, overall) = pool_of(audience);
    (per_client, overall)
}

impl StreamSlots {
    /// A slot for a stream of `audience` to `client`, unless it or its pool holds as many as
    /// allowed.
    pub fn take(&self, audience: Audience, client: IpAddr) -> Option<Slot> {
        let (pool, per_client, overall) = pool_of(audience);
        let mut pools = self.0.lock().expect("slots lock");
        let open = &mut pools[pool];
        let mine = open.by_client.get(&client).copied().unwrap_or(0);
        if mine >= per_client || open.total >= overall {
            return None;
        }
        open.total += 1;
        open.by_client.insert(client, mine + 1);
        Some(Slot {
            slots: self.clone(),
            pool,
            client,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut pools = self.slots.0.lock().expect("slots lock");
        let open = &mut pools[self.pool];
        open.total -= 1;
        if let Some(mine) = open.by_client.get_mut(&self.client) {
            *mine -= 1;
            if *mine == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_share_and_a_closed_stream_frees_its_slot() {
        let slots = StreamSlots::default();
        let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let spectators = Audience::Spectators;
        let mut held: Vec<Slot> = (0..SPECTATORS_PER_CLIENT)
            .map(|_| slots.take(spectators, a).unwrap())
            .collect();
        assert!(
            slots.take(spectators, a).is_none(),
            "one client past its share"
        );
        assert!(
            slots.take(spectators, b).is_some(),
            "another client is not held back"
        );
        assert!(
            slots.take(Audience::Arbiters, a).is_some(),
            "spectators' streams do not take the arbiters' places"
        );
        held.pop();
        assert!(
            slots.take(spectators, a).is_some(),
            "a closed stream's slot is free again"
        );
    }

    #[test]
    fn each_pool_holds_no_more_than_its_cap() {
        let slots = StreamSlots::default();
        let held: Vec<Slot> = (0..SPECTATORS)
            .map(|i| {
                let client = IpAddr::from([10, 1, (i / 250) as u8, (i % 250) as u8]);
                slots.take(Audience::Spectators, client).unwrap()
            })
            .collect();
        assert!(slots
            .take(Audience::Spectators, [10, 9, 9, 9].into())
            .is_none());
        assert!(slots
            .take(Audience::Arbiters, [10, 9, 9, 9].into())
            .is_some());
        drop(held);
        assert!(slots
            .take(Audience::Spectators, [10, 9, 9, 9].into())
            .is_some());
    }
}
