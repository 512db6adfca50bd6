//! Whether the hub reaches its MQTT broker (an external one, or a cluster's gateways), as
//! its link last said: never silent. Down for longer than [`GRACE`], it is the hub's
//! trouble on `/healthz` and the page's status line; the metrics count it as it happens.

use std::time::{Duration, Instant};

use link::LinkEvent;

/// A reconnect this short is not worth a red line.
pub const GRACE: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct BrokerReach {
    up: bool,
    /// Since when it is up, or down.
    since: Instant,
    /// The broker last tried, and why it failed.
    broker: Option<String>,
    error: Option<String>,
}

impl BrokerReach {
    /// A session that has yet to connect.
    pub fn connecting() -> BrokerReach {
        BrokerReach {
            up: false,
            since: Instant::now(),
            broker: None,
            error: None,
        }
    }

    /// The embedded broker's in-process link, or no session at all: nothing to reach.
    pub fn in_process() -> BrokerReach {
        BrokerReach {
            up: true,
            ..BrokerReach::connecting()
        }
    }

    /// What the link said; whether the broker is up now.
    pub fn on(&mut self, event: &LinkEvent) -> bool {
        match event {
            LinkEvent::Connected => {
                if !self.up {
                    self.since = Instant::now();
                }
                self.up = true;
                self.error = None;
            }
            LinkEvent::Disconnected => {
                self.up = false;
                self.since = Instant::now();
            }
            LinkEvent::Unreachable { broker, error, .. } => {
                if self.up {
                    self.since = Instant::now();
                }
                self.up = false;
                self.broker = Some(broker.clone());
                self.error = Some(error.clone());
            }
            LinkEvent::Message { .. } => {}
        }
        self.up
    }

    pub fn is_up(&self) -> bool {
        self.up
    }

    /// Why the hub is in trouble, once the broker has been away longer than [`GRACE`].
    pub fn trouble(&self, now: Instant) -> Option<String> {
        let away = now.saturating_duration_since(self.since);
        if self.up || away < GRACE {
            return None;
        }
        let broker = self.broker.as_deref().unwrap_or("its broker");
        let why = self.error.as_deref().unwrap_or("the connection dropped");
        Some(format!(
            "the hub cannot reach the MQTT broker {broker} for {} s ({why}): no board's event arrives",
            away.as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_never_reached_is_trouble_after_the_grace_and_named() {
        let mut reach = BrokerReach::connecting();
        let start = Instant::now();
        assert!(!reach.on(&LinkEvent::Unreachable {
            broker: "127.0.0.1:1883".into(),
            error: "Connection refused".into(),
            attempts: 1,
        }));
        assert_eq!(reach.trouble(start), None, "within the grace");
        let later = start + GRACE + Duration::from_secs(5);
        let why = reach.trouble(later).unwrap();
        assert!(
            why.contains("127.0.0.1:1883") && why.contains("Connection refused"),
            "{why}"
        );
        assert!(reach.on(&LinkEvent::Connected));
        assert_eq!(reach.trouble(later), None);
    }

    #[test]
    fn the_embedded_broker_is_never_trouble() {
        let reach = BrokerReach::in_process();
        assert!(reach.is_up());
        assert_eq!(
            reach.trouble(Instant::now() + Duration::from_secs(60)),
            None
        );
    }
}
