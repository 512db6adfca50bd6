//! What a clustered hub's shell does with the cluster's news: the turn it takes (taking the
//! hall over, standing by, an alert for strangers' records), a standby's warm core and its
//! door, and `GET /api/cluster`. The role itself is the cluster task's
//! ([`crate::edge::cluster::role`]); this is the shell's side of it.

use std::time::Instant;

use super::cluster::{ClusterRole, WARM_EVERY};
use crate::edge::cluster::role::ClusterNews;
use crate::edge::cluster::role::Holder;
use crate::edge::mqtt::client::{HubLink, Incoming};

/// What the shell does on the cluster's news.
pub(super) enum Turn {
    Nothing,
    /// The active hub found records no hub of the hall sealed: the core raises an alert.
    StrangersRecords(Vec<u64>),
    /// This hub is active from `epoch`: the core is built from the whole stream, and the
    /// hall's MQTT session is this one.
    TakeOver {
        epoch: u64,
        link: HubLink,
        incoming: Incoming,
    },
    /// This hub is a standby: the journal takes nothing (for the reason given), waiting
    /// requests get no answer, and the hub holds no MQTT session.
    StandBy(String),
}

/// A standby's tick: why it takes nothing (where the active hub is), and whether its core
/// is due to be rebuilt from what the stream brought.
pub(super) struct Warm {
    pub(super) reason: String,
    pub(super) rebuild: bool,
}

impl ClusterRole {
    /// The cluster gave this hub a role, or found strangers' records.
    pub(super) fn on_news(&mut self, news: ClusterNews) -> anyhow::Result<Turn> {
        match news {
            ClusterNews::StrangersRecords(seqs) if self.status().active => {
                Ok(Turn::StrangersRecords(seqs))
            }
            ClusterNews::StrangersRecords(_) => Ok(Turn::Nothing),
            ClusterNews::Active(epoch) => {
                let _ = self.door.send(None);
                let (link, incoming) = (self.connect)()?;
                Ok(Turn::TakeOver {
                    epoch,
                    link,
                    incoming,
                })
            }
            ClusterNews::Standby(holder) => Ok(Turn::StandBy(self.tell_standby(holder.as_ref()))),
        }
    }

    /// A standby's tick (`None` while active): its core is rebuilt when the stream brought
    /// more, at most every [`WARM_EVERY`] (or five times the last rebuild's time).
    pub(super) fn warm_tick(&mut self) -> Option<Warm> {
        let status = self.status();
        if status.active {
            return None;
        }
        let reason = self.tell_standby(status.holder.as_ref());
        let rebuild = status.journal_seq != self.warm.0 && self.warm.1.elapsed() >= self.warm_every;
        if rebuild {
            self.warm = (status.journal_seq, Instant::now());
        }
        Some(Warm { reason, rebuild })
    }

    /// The rebuild `warm_tick` asked for, begun at `started`, is done.
    pub(super) fn warmed(&mut self, started: Instant) {
        self.warm_every = WARM_EVERY.max(started.elapsed() * 5);
    }

    /// A standby tells the HTTP door where the active hub is (`holder`, once seen; `null`
    /// until then) for its 503; the answer is the reason `/healthz` gives.
    fn tell_standby(&self, holder: Option<&Holder>) -> String {
        let active = holder.map(|h| h.http.clone()).unwrap_or_default();
        self.door.send_if_modified(|door| {
            let changed = door.as_deref() != Some(active.as_str());
            if changed {
                *door = Some(active.clone());
            }
            changed
        });
        match holder {
            Some(h) => format!(
                "this hub is the cluster's standby; the active hub is {} at {}",
                h.hub, h.http
            ),
            None => "this hub is the cluster's standby; no active hub seen yet".to_owned(),
        }
    }

    /// What `GET /api/cluster` answers.
    pub(super) fn view(&self) -> serde_json::Value {
        let status = self.status();
        serde_json::json!({
            "role": if status.active { "active" } else { "standby" },
            "hub": self.settings.hub,
            "journal_seq": status.journal_seq,
            "epoch": status.epoch,
            "active": status.holder.map(|h| serde_json::json!({"hub": h.hub, "http": h.http, "epoch": h.epoch})),
            "refused_appends": status.refused_appends,
            "strangers_records": status.strangers_records,
        })
    }
}
