//! A cap on the live streams (`/api/live`, `/api/public/live`) held open: each is a task and a
//! queue in the hub, so one client on the hall's network must not open ten thousand of them.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Streams one client address may hold: a chief arbiter's screen, a few laptops behind one
/// router.
pub const PER_CLIENT: usize = 16;
/// Streams the hub holds in all: every arbiter, the press room and the big screens.
pub const OVERALL: usize = 1_000;

/// The streams open now, by client.
#[derive(Debug, Clone, Default)]
pub struct StreamSlots(Arc<Mutex<Open>>);

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// One open stream; dropping it (the stream ends, the client goes) frees the slot.
#[derive(Debug)]
pub struct Slot {
    slots: StreamSlots,
    client: IpAddr,
}

impl StreamSlots {
    /// A slot for a stream of `client`, unless it or the hub holds as many as allowed.
    pub fn take(&self, client: IpAddr) -> Option<Slot> {
        let mut open = self.0.lock().expect("slots lock");
        let mine = open.by_client.get(&client).copied().unwrap_or(0);
        if mine >= PER_CLIENT || open.total >= OVERALL {
            return None;
        }
        open.total += 1;
        open.by_client.insert(client, mine + 1);
        Some(Slot {
            slots: self.clone(),
            client,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.0.lock().expect("slots lock");
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
        let mut held: Vec<Slot> = (0..PER_CLIENT).map(|_| slots.take(a).unwrap()).collect();
        assert!(slots.take(a).is_none(), "one client past its share");
        assert!(slots.take(b).is_some(), "another client is not held back");
        held.pop();
        assert!(
            slots.take(a).is_some(),
            "a closed stream's slot is free again"
        );
    }

    #[test]
    fn the_hub_holds_no_more_than_its_overall_cap() {
        let slots = StreamSlots::default();
        let held: Vec<Slot> = (0..OVERALL)
            .map(|i| {
                let client = IpAddr::from([10, 1, (i / 250) as u8, (i % 250) as u8]);
                slots.take(client).unwrap()
            })
            .collect();
        assert!(slots.take([10, 9, 9, 9].into()).is_none());
        drop(held);
        assert!(slots.take([10, 9, 9, 9].into()).is_some());
    }
}
