//! Jittered exponential backoff for reconnecting.
//!
//! rumqttc reconnects as fast as it is polled (rumqttc issues 703, 918). After a hub or
//! broker restart a thousand nodes would all reconnect in the same millisecond; "full
//! jitter" (a uniform wait between zero and the current cap) spreads them out.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Debug)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    attempt: u32,
    rng: StdRng,
}

impl Backoff {
    /// `seed` makes the waits reproducible in tests; give each node its own.
    pub fn new(base: Duration, max: Duration, seed: u64) -> Backoff {
        Backoff {
            base,
            max,
            attempt: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The wait before the next attempt: uniform in `[0, min(max, base · 2^attempt)]`.
    pub fn next_wait(&mut self) -> Duration {
        let cap = self
            .base
            .saturating_mul(1 << self.attempt.min(16))
            .min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        let cap_ms = u64::try_from(cap.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(self.rng.random_range(0..=cap_ms))
    }

    /// A connection succeeded: start again from `base`.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_stay_under_a_doubling_cap_up_to_the_maximum() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(5);
        let mut backoff = Backoff::new(base, max, 7);
        for attempt in 0..20u32 {
            let cap = base.saturating_mul(1 << attempt.min(16)).min(max);
            assert!(backoff.next_wait() <= cap, "attempt {attempt}");
        }
        backoff.reset();
        assert!(backoff.next_wait() <= base);
    }

    #[test]
    fn nodes_with_different_seeds_spread_out() {
        let waits: std::collections::BTreeSet<_> = (0..50)
            .map(|seed| {
                let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(1), seed);
                b.next_wait()
            })
            .collect();
        assert!(waits.len() > 40, "only {} distinct waits", waits.len());
    }
}
