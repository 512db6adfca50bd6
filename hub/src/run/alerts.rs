//! The shell's alert work: writing alert changes to the journal, publishing them to pagers
//! once durable (and the zones' retained open lists), and arbiters' acknowledgements and
//! resolutions from pagers and HTTP.

use anyhow::Context;
use protocol::topic;
use tokio::sync::oneshot;

use super::{AlertReply, Shell, OPEN_LIST_EVERY_MS};
use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{AlertChange, Change};
use crate::core::time::HubMs;
use crate::metrics::BadPayload;
use crate::view::pager::{self, AlertAction, AlertCommand};

impl Shell {
    /// Writes alert changes; they are published (and `reply` answered) once durable.
    pub(super) fn record_alerts(
        &mut self,
        changes: Vec<AlertChange>,
        mut reply: Option<AlertReply>,
    ) -> anyhow::Result<()> {
        let last = changes.len().saturating_sub(1);
        for (i, change) in changes.into_iter().enumerate() {
            self.journal
                .put_alert(&change.alert)
                .context("writing an alert to the journal")?;
            self.alert_changes += 1;
            self.flusher.appended_alert(self.alert_changes);
            if change.change == Change::Raised {
                self.metrics.alert_raised();
                tracing::info!(id = change.alert.id, board = ?change.alert.board, kind = ?change.alert.kind, zone = %change.alert.zone, "alert raised");
            }
            let reply = if i == last { reply.take() } else { None };
            self.unpublished
                .push_back((self.alert_changes, change, reply));
        }
        Ok(())
    }

    /// Publishes the alert changes made durable up to `up_to`, then the open lists of the
    /// zones they touched.
    pub(super) fn publish_alerts(&mut self, up_to: u64) {
        while self.unpublished.front().is_some_and(|(n, ..)| *n <= up_to) {
            let (_, change, reply) = self.unpublished.pop_front().expect("a front");
            self.link.publish_json(
                topic::alerts(&self.event, &change.alert.zone),
                pager::change_message(&change),
                false,
            );
            self.metrics.alert_change_published();
            self.live.alert_changed(&change.alert);
            self.stale_lists.insert(change.alert.zone.clone());
            if let Some(reply) = reply {
                let _ = reply.send(Ok(change.alert));
            }
        }
    }

    /// Republishes the open lists of the zones whose alerts changed, at most every
    /// [`OPEN_LIST_EVERY`]: the changes themselves go out at once; the lists are for pagers
    /// that connect, and a hall in time trouble changes hundreds of alerts a second.
    pub(super) fn publish_stale_lists(&mut self, now: HubMs) {
        if self.stale_lists.is_empty() || now.since(self.lists_published_at) < OPEN_LIST_EVERY_MS {
            return;
        }
        self.lists_published_at = now;
        let zones = std::mem::take(&mut self.stale_lists);
        self.publish_open_lists(zones);
    }

    pub(super) fn publish_open_lists(&self, zones: impl IntoIterator<Item = String>) {
        let now = self.clock.last.0;
        for zone in zones {
            let open = self.desk.open_in_zone(&zone).collect();
            self.link.publish_json(
                topic::open_alerts(&self.event, &zone),
                pager::open_list(&zone, now, open),
                true,
            );
        }
    }

    /// A pager acknowledges or resolves an alert. A bad command is counted, never fatal.
    pub(super) fn on_pager_command(&mut self, payload: &[u8]) -> anyhow::Result<()> {
        let topic = topic::pager_command(&self.event);
        match pager::parse_command(payload) {
            Ok((id, command)) => {
                let (reply, mut answer) = oneshot::channel();
                self.alert_command(id, command, reply)?;
                if let Ok(Err(e)) = answer.try_recv() {
                    self.refuse(BadPayload::PagerCommand, &topic, &e.to_string());
                }
                Ok(())
            }
            Err(e) => {
                self.refuse(BadPayload::PagerCommand, &topic, &e.to_string());
                Ok(())
            }
        }
    }

    /// Carries out an acknowledgement or resolution; the answer waits until it is durable.
    /// One that changes nothing (done before, idempotent) is answered at once.
    pub(super) fn alert_command(
        &mut self,
        id: u64,
        command: AlertCommand,
        reply: AlertReply,
    ) -> anyhow::Result<()> {
        let now = self.clock.now();
        let outcome = match command.action {
            AlertAction::Ack => self.desk.acknowledge(now, id, &command.by),
            AlertAction::Resolve => self.desk.resolve(now, id, &command.by, command.note),
        };
        match outcome {
            Ok(Some(change)) => self.record_alerts(vec![change], Some(reply))?,
            Ok(None) => {
                let alert = self.desk.get(id).cloned().ok_or(AlertError::Unknown(id));
                let _ = reply.send(alert);
            }
            Err(e) => {
                let _ = reply.send(Err(e));
            }
        }
        Ok(())
    }
}
