//! Messages off the wire: a board's sealed uplink or an arbiter's pager command, checked
//! against its topic before the core sees it. Bad input is counted and logged, never fatal.

use link::LinkEvent;
use protocol::{seal, topic, DecodeError};

use super::shell::Shell;
use crate::metrics::BadPayload;
use crate::view::pager;

impl Shell {
    /// One message off the wire. Bad input is counted and logged, never fatal.
    pub(super) fn on_link_event(&mut self, event: LinkEvent) {
        self.link.on_reach(&event);
        match event {
            LinkEvent::Message { topic, payload } => self.on_message(&topic, &payload),
            LinkEvent::Connected => tracing::info!("connected to the broker, subscribed"),
            LinkEvent::Disconnected => tracing::warn!("lost the broker; reconnecting"),
            // The link warned (at a falling rate); `/healthz` says it after a moment.
            LinkEvent::Unreachable { .. } => {}
        }
    }

    fn on_message(&mut self, topic: &str, payload: &[u8]) {
        if self.journal.failure().is_some() {
            // Nothing is taken that cannot be made durable; the nodes resend it later.
            return;
        }
        if topic == self.pager_commands {
            return match pager::parse_command(payload) {
                Ok((id, command, seal)) => {
                    let now = self.clock.now();
                    self.hub.handle_pager_command(now, id, command, seal);
                }
                Err(e) => self.refuse(BadPayload::PagerCommand, topic, &e.to_string()),
            };
        }
        let Some(board) = topic::parse_uplink(self.hub.event(), topic) else {
            return self.refuse(BadPayload::ForeignTopic, topic, "not a board uplink topic");
        };
        let sealed = match seal::open_uplink(payload) {
            Ok(sealed) => sealed,
            Err(e @ DecodeError::UnknownVersion(_)) => {
                return self.refuse(BadPayload::UnknownVersion, topic, &e.to_string());
            }
            Err(e @ DecodeError::OutOfRange(_)) => {
                return self.refuse(BadPayload::OutOfRange, topic, &e.to_string());
            }
            Err(e) => return self.refuse(BadPayload::Undecodable, topic, &e.to_string()),
        };
        if sealed.message.board != board {
            let why = format!("message says board {}", sealed.message.board.0);
            return self.refuse(BadPayload::BoardMismatch, topic, &why);
        }
        let now = self.clock.now();
        self.hub.handle_sealed_uplink(now, sealed);
    }

    /// Counts a refusal, and logs it the first time from its source (and the 2nd, 4th, …).
    pub(super) fn refuse(&mut self, why: BadPayload, source: &str, detail: &str) {
        self.metrics.bad_payload(why);
        if let Some(count) = self.refusals.note(why, source) {
            tracing::warn!(source, ?why, detail, from_source = count, "message refused");
        }
    }
}
