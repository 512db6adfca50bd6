//! What the shell does with the cluster's news: taking the hall over (the MQTT session,
//! the core rebuilt from the whole stream), stepping down, a standby's warm core and its
//! door, and `GET /api/cluster`. The role itself is the cluster task's
//! ([`crate::edge::cluster::role`]); this is the shell following it.

use std::time::Instant;

use super::cluster::WARM_EVERY;
use super::shell::Shell;
use crate::edge::cluster::journal::ClusterNews;
use crate::edge::cluster::role::Holder;
use crate::edge::mqtt::client::{HubLink, Incoming};

impl Shell {
    /// The cluster gave this hub a role (the MQTT session to use from now on, if it
    /// changed), or found strangers' records (an alert).
    pub(super) fn on_news(&mut self, news: ClusterNews) -> anyhow::Result<Option<Incoming>> {
        let Some(cluster) = &mut self.cluster else {
            return Ok(None);
        };
        match news {
            ClusterNews::StrangersRecords(seqs) => {
                if cluster.active {
                    let now = self.clock.now();
                    self.hub.handle_strangers_records(now, &seqs);
                }
                Ok(None)
            }
            ClusterNews::Active(epoch) => {
                cluster.active = true;
                let _ = cluster.door.send(None);
                let (link, incoming) = (cluster.connect)()?;
                self.journal.activate();
                // The core as the whole stream has it, as at a start.
                self.rebuild()?;
                self.link = link;
                self.told_journal_works = None;
                tracing::warn!(epoch, "active: this hub serves the hall");
                Ok(Some(incoming))
            }
            ClusterNews::Standby(holder) => {
                let was_active = std::mem::replace(&mut cluster.active, false);
                self.tell_standby(holder.as_ref());
                // The requests waiting for a write get no answer (503): it was never made.
                self.waiting.clear();
                let (link, incoming) = HubLink::detached(self.hub.event(), self.metrics.clone());
                self.link = link;
                if was_active {
                    tracing::error!("stepped down: this hub is a standby now");
                }
                Ok(Some(incoming))
            }
        }
    }

    /// A standby's core, rebuilt from its journal when the stream brought more (at most
    /// every [`WARM_EVERY`]); the door learns where the active hub is now.
    pub(super) fn keep_warm(&mut self) -> anyhow::Result<()> {
        let Some(cluster) = &mut self.cluster else {
            return Ok(());
        };
        if cluster.active {
            return Ok(());
        }
        let status = cluster.status();
        self.tell_standby(status.holder.as_ref());
        let Some(cluster) = &mut self.cluster else {
            return Ok(());
        };
        if status.journal_seq == cluster.warm.0 || cluster.warm.1.elapsed() < cluster.warm_every {
            return Ok(());
        }
        let started = Instant::now();
        cluster.warm = (status.journal_seq, started);
        self.rebuild()?;
        if let Some(cluster) = &mut self.cluster {
            cluster.warm_every = WARM_EVERY.max(started.elapsed() * 5);
        }
        Ok(())
    }

    /// A standby says where the active hub is (`holder`, once seen): the HTTP door's 503
    /// (`null` until then) and `/healthz`'s reason.
    fn tell_standby(&mut self, holder: Option<&Holder>) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        let active = holder.map(|h| h.http.clone()).unwrap_or_default();
        cluster.door.send_if_modified(|door| {
            let changed = door.as_deref() != Some(active.as_str());
            if changed {
                *door = Some(active.clone());
            }
            changed
        });
        self.journal.stand_by(match holder {
            Some(h) => format!(
                "this hub is the cluster's standby; the active hub is {} at {}",
                h.hub, h.http
            ),
            None => "this hub is the cluster's standby; no active hub seen yet".to_owned(),
        });
    }

    /// What `GET /api/cluster` answers (`None`: a hall of one hub).
    pub(super) fn cluster_view(&self) -> Option<serde_json::Value> {
        let cluster = self.cluster.as_ref()?;
        let status = cluster.status();
        Some(serde_json::json!({
            "role": if cluster.active { "active" } else { "standby" },
            "hub": cluster.settings.hub,
            "journal_seq": status.journal_seq,
            "epoch": status.epoch,
            "active": status.holder.map(|h| serde_json::json!({"hub": h.hub, "http": h.http, "epoch": h.epoch})),
            "refused_appends": status.refused_appends,
            "strangers_records": status.strangers_records,
        }))
    }
}
