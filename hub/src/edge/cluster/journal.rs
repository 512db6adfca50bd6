//! The journal on the cluster: the active hub appends, every hub keeps its copy.
//!
//! One task per hub. As a **standby** it tails the journal stream (an ordered consumer,
//! recreated when it stops advancing) and hands every record to the hub's own flusher, so
//! its sled holds the hall as the stream does, and it looks at the lease. When the lease is
//! its own it reads what is left of the stream, appends a takeover record, and only then
//! is **active**: it appends the writes of the hub's core, a flush's worth in one message,
//! each with the stream's last sequence as it knows it (`Nats-Expected-Last-Sequence`);
//! only once the cluster acknowledged a message are its writes handed to the local
//! flusher, whose report lets the core acknowledge them. A hub that lost the lease, or whose
//! append was refused (another hub wrote: the fence), steps down at once and goes back to
//! tailing: it never acknowledges anything after.
//!
//! Every record is sealed under the hall's key for its place in the stream
//! ([`super::seal`]). One that does not open is a stranger's: every hub skips it and counts
//! it; the active hub, whose append it displaced, tells the shell (an alert) and appends
//! after it, for a stranger's record is no other hub's write and fences nothing.

use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage as Publish;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::lease::Lease;
use super::nats::Cluster;
use super::record::{self, Genesis, Message, Takeover};
use super::role::{self, AfterOthers, Holder, LeaseStep, Role, Sealed, Status, RENEW_EVERY};
use super::seal::{Foreign, JournalSeal};
use crate::core::hub::{Position, Write};
use crate::edge::journal::flusher::{FlusherInput, Handed};
use crate::metrics::Metrics;

/// The most bytes of writes one message holds (NATS takes 1 MiB by default).
const MESSAGE_BYTES: usize = 256 * 1024;
/// How often the active hub looks where the streams' leaders are.
const LEADERS_EVERY: Duration = Duration::from_secs(10);
/// A tail that has not advanced this long while the stream has more is made anew.
const TAIL_STALLED: Duration = Duration::from_secs(2);

/// What the task tells the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterNews {
    /// This hub is a standby; the active hub, as last seen.
    Standby(Option<Holder>),
    /// This hub is active from this epoch: its journal holds the whole stream.
    Active(u64),
    /// The active hub found these records of the stream not sealed by the hall's hubs (a
    /// stranger appended them) and skipped them.
    StrangersRecords(Vec<u64>),
}

/// The cluster's journal task's ends: the writes in, the role changes out.
pub struct ClusterLink {
    pub writes: mpsc::UnboundedSender<(Position, Write)>,
    pub news: mpsc::UnboundedReceiver<ClusterNews>,
    pub status: tokio::sync::watch::Receiver<Status>,
    /// The hub's client of the cluster: the active hub's boards travel on it
    /// ([`crate::edge::mqtt::gateway`]).
    pub nats: async_nats::Client,
}

struct Task {
    cluster: Cluster,
    seal: JournalSeal,
    lease: Lease,
    /// Standby, taking over or active: every decision of the task is the role's.
    role: Role,
    flusher: FlusherInput,
    writes: mpsc::UnboundedReceiver<(Position, Write)>,
    news: mpsc::UnboundedSender<ClusterNews>,
    status: tokio::sync::watch::Sender<Status>,
    metrics: std::sync::Arc<Metrics>,
}

/// The stream's first record, opened with this hub's hall key: proof that the stream is
/// this hall's and this hub holds its secrets. A hub that finds the stream empty writes it
/// (only one can: the append expects an empty stream).
pub async fn genesis(cluster: &Cluster, seal: &JournalSeal, hub: &str) -> anyhow::Result<Genesis> {
    if cluster.last_seq().await? == 0 {
        let mine = record::genesis_message(&Genesis {
            hub: hub.to_owned(),
        });
        let publish = Publish::build()
            .payload(seal.seal(1, &mine).into())
            .expected_last_sequence(0);
        match cluster
            .js
            .send_publish(cluster.subject.clone(), publish)
            .await
        {
            Ok(ack) => match ack.await {
                Ok(_) => tracing::warn!("the hall's journal stream begins with this hub"),
                Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {}
                Err(e) => anyhow::bail!("writing the hall's first record: {e}"),
            },
            Err(e) => anyhow::bail!("writing the hall's first record: {e}"),
        }
    }
    let first = cluster
        .stream
        .get_raw_message(1)
        .await
        .map_err(|e| anyhow::anyhow!("reading the hall's first record: {e}"))?;
    let message = seal.open(1, &first.payload).map_err(|e| {
        anyhow::Error::new(e).context(
            "this hub does not hold the hall's secrets (give them with `hub cluster-join --secrets FILE`, deploy/README.md), or the stream is another hall's",
        )
    })?;
    match record::decode(&message)? {
        Message::Genesis(genesis) => Ok(genesis),
        other => anyhow::bail!("the journal stream's first record is not the hall's: {other:?}"),
    }
}

/// Starts the task: a standby first, its journal holding the stream up to what `role`
/// says.
pub fn start(
    cluster: Cluster,
    seal: JournalSeal,
    lease: Lease,
    role: Role,
    flusher: FlusherInput,
    metrics: std::sync::Arc<Metrics>,
) -> ClusterLink {
    let (writes_tx, writes) = mpsc::unbounded_channel();
    let (news, news_rx) = mpsc::unbounded_channel();
    let (status, status_rx) = tokio::sync::watch::channel(role.status());
    let nats = cluster.client.clone();
    let task = Task {
        cluster,
        seal,
        lease,
        role,
        flusher,
        writes,
        news,
        status,
        metrics,
    };
    tokio::spawn(task.run());
    ClusterLink {
        writes: writes_tx,
        news: news_rx,
        status: status_rx,
        nats,
    }
}

/// Why the active phase ended.
#[derive(Debug)]
enum Ending {
    StepDown(role::StepDown),
    /// The shell is gone.
    Closed,
}

impl Task {
    async fn run(mut self) {
        loop {
            self.publish_status();
            if self
                .news
                .send(ClusterNews::Standby(self.role.status().holder))
                .is_err()
            {
                return;
            }
            let Some(epoch) = self.standby().await else {
                return;
            };
            self.publish_status();
            if self.news.send(ClusterNews::Active(epoch)).is_err() {
                return;
            }
            self.tell_strangers();
            let why = self.active().await;
            self.lease.give_up();
            self.role.step_down(Instant::now());
            match why {
                Ending::Closed => return,
                Ending::StepDown(why) => {
                    tracing::error!(?why, "this hub steps down: it is a standby now")
                }
            }
            // What the core asked for meanwhile was never acknowledged: the nodes resend it
            // to whichever hub is active.
            while self.writes.try_recv().is_ok() {}
        }
    }

    /// Every view of the role (the door, `/api/cluster`, `/healthz`) reads this.
    fn publish_status(&self) {
        self.status.send_replace(self.role.status());
    }

    /// The renewals' task's news, into the role.
    fn sync_renewals(&mut self) {
        if let Some(renewals) = self.lease.renewals() {
            self.role.handle_renewed(renewals.sent);
            if renewals.lost {
                self.role.handle_renewal_refused();
            }
        }
    }

    /// Tails the stream and watches the lease until this hub has taken it over (its epoch);
    /// `None` when the hub stops.
    async fn standby(&mut self) -> Option<u64> {
        let mut tail = self.tail().await;
        let mut look = tokio::time::interval(RENEW_EVERY);
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut progress = (self.role.applied(), Instant::now());
        loop {
            tokio::select! {
                next = next_message(&mut tail) => match next {
                    Some((seq, payload)) => {
                        let applied = self.role.applied();
                        if seq == applied + 1 {
                            self.apply(seq, &payload);
                        } else if seq > applied + 1 {
                            // A gap: the tail is made anew from what the journal holds.
                            tracing::warn!(seq, applied, "the journal stream's tail skipped; reading again");
                            tail = self.tail().await;
                        }
                    }
                    None => tail = self.tail().await,
                },
                _ = look.tick() => {
                    if self.news.is_closed() {
                        return None;
                    }
                    if let Some(epoch) = self.look_at_the_lease().await {
                        return Some(epoch);
                    }
                    self.publish_status();
                    // The watchdog: a tail that stopped while the stream went on.
                    let applied = self.role.applied();
                    if applied != progress.0 {
                        progress = (applied, Instant::now());
                    } else if progress.1.elapsed() > TAIL_STALLED {
                        progress.1 = Instant::now();
                        if self.cluster.last_seq().await.is_ok_and(|last| last > applied) {
                            tracing::warn!(applied, "the journal stream's tail stalled; made anew");
                            tail = self.tail().await;
                        }
                    }
                }
            }
        }
    }

    /// A standby's look at the lease: reads it, takes it when the role says so, and takes
    /// the hall over; this hub's epoch once it is active.
    async fn look_at_the_lease(&mut self) -> Option<u64> {
        let read = self.lease.read().await;
        let now = Instant::now();
        let step = match read {
            Ok(entry) => self.role.handle_lease_read(now, entry),
            Err(e) => {
                tracing::warn!(error = %e, "the lease cannot be read");
                self.role.handle_lease_unreadable(now);
                LeaseStep::Wait
            }
        };
        let LeaseStep::Take { revision, holder } = step else {
            return None;
        };
        let sent = Instant::now();
        if !self.lease.take(revision, &holder, sent).await {
            return None;
        }
        self.role.handle_lease_taken(sent, holder.epoch);
        if self.take_over(&holder).await {
            return Some(holder.epoch);
        }
        self.lease.give_up();
        self.role.step_down(Instant::now());
        None
    }

    /// An ordered consumer from the record after the last applied; `None` while the
    /// cluster does not answer (tried again at the next look).
    async fn tail(&self) -> Option<pull::Ordered> {
        let config = pull::OrderedConfig {
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: self.role.applied() + 1,
            },
            ..Default::default()
        };
        let made = async {
            let consumer = self
                .cluster
                .stream
                .create_consumer(config)
                .await
                .map_err(|e| e.to_string())?;
            consumer.messages().await.map_err(|e| e.to_string())
        };
        match made.await {
            Ok(messages) => Some(messages),
            Err(e) => {
                tracing::warn!(error = %e, "the journal stream cannot be tailed now");
                None
            }
        }
    }

    /// The lease is this hub's: it reads the rest of the stream and appends its takeover,
    /// which fences every earlier writer. `false` when it lost the lease meanwhile.
    async fn take_over(&mut self, me: &Holder) -> bool {
        let epoch = me.epoch;
        let takeover = record::takeover_message(&Takeover {
            hub: me.hub.clone(),
            epoch,
        });
        loop {
            self.sync_renewals();
            if !self.role.holding(Instant::now()) {
                return false;
            }
            if let Err(e) = self.catch_up().await {
                tracing::warn!(error = %e, "reading the rest of the journal stream failed; trying again");
                tokio::time::sleep(RENEW_EVERY).await;
                continue;
            }
            match self.append(&takeover, format!("takeover-{epoch}")).await {
                Ok(seq) => {
                    self.role.handle_appended(seq);
                    self.flusher.hand(Handed::StreamSeq(seq));
                    // The core is built from the local journal: everything in it first.
                    let (synced, flushed) = tokio::sync::oneshot::channel();
                    self.flusher.hand(Handed::Sync(synced));
                    let _ = flushed.await;
                    tracing::warn!(epoch, seq, "this hub is the active hub");
                    return true;
                }
                // Another hub wrote after what was read: read that too.
                Err(AppendError::Others) => continue,
                Err(AppendError::Failed(e)) => {
                    tracing::warn!(error = %e, "the takeover record was not appended; trying again");
                }
            }
        }
    }

    /// Reads the stream up to its last record now.
    async fn catch_up(&mut self) -> anyhow::Result<()> {
        let last = self.cluster.last_seq().await?;
        while self.role.applied() < last {
            let seq = self.role.applied() + 1;
            let payload = self.record(seq).await?;
            self.apply(seq, &payload);
        }
        Ok(())
    }

    async fn record(&self, seq: u64) -> anyhow::Result<bytes::Bytes> {
        let message = self
            .cluster
            .stream
            .get_raw_message(seq)
            .await
            .map_err(|e| anyhow::anyhow!("journal stream record {seq}: {e}"))?;
        Ok(message.payload)
    }

    /// A record of the stream into the local journal; a stranger's is skipped and counted.
    fn apply(&mut self, seq: u64, payload: &[u8]) {
        let (sealed, writes) = match self.seal.open(seq, payload) {
            Ok(message) => (Sealed::Hall, self.writes_of(seq, &message)),
            Err(foreign) => (self.skip_strangers(&foreign), Vec::new()),
        };
        self.role.handle_record(seq, sealed);
        self.flusher.hand(Handed::Copied(writes, seq));
        self.publish_status();
    }

    /// The writes a record of the hall holds (none in a genesis or a takeover); one that
    /// cannot be read is skipped and counted.
    fn writes_of(&mut self, seq: u64, message: &[u8]) -> Vec<Write> {
        match record::decode(message) {
            Ok(Message::Writes(writes)) => writes
                .into_iter()
                .filter_map(|write| match write {
                    Ok(write) => Some(write),
                    Err(e) => {
                        tracing::error!(seq, error = %e, "a write of the journal stream is unreadable; skipped");
                        self.metrics.journal_records_skipped();
                        None
                    }
                })
                .collect(),
            Ok(Message::Genesis(_) | Message::Takeover(_)) => Vec::new(),
            Err(e) => {
                tracing::error!(seq, error = %e, "a journal stream record is unreadable; skipped");
                self.metrics.journal_records_skipped();
                Vec::new()
            }
        }
    }

    fn skip_strangers(&mut self, foreign: &Foreign) -> Sealed {
        tracing::error!(error = %foreign, "a stranger's record in the journal stream; refused");
        self.metrics.cluster_strangers_record();
        Sealed::Stranger
    }

    /// The records after `seq`, each as the hall's or a stranger's, for the role to judge.
    async fn records_after(&self, seq: u64) -> anyhow::Result<Vec<(u64, Sealed)>> {
        let last = self.cluster.last_seq().await?;
        let mut after = Vec::new();
        for seq in seq + 1..=last {
            let payload = self.record(seq).await?;
            let sealed = match self.seal.open(seq, &payload) {
                Ok(_) => Sealed::Hall,
                Err(_) => Sealed::Stranger,
            };
            after.push((seq, sealed));
        }
        Ok(after)
    }

    /// What the role makes of records after this hub's last one; strangers' records it
    /// skipped go into the local journal's count of the stream.
    fn judge_others(&mut self, after: &[(u64, Sealed)]) -> AfterOthers {
        let judged = self.role.handle_others(Instant::now(), after);
        match judged {
            AfterOthers::AppendAfter(_) => {
                for (seq, _) in after {
                    tracing::error!(seq, "a stranger's record in the journal stream; refused");
                    self.metrics.cluster_strangers_record();
                    self.flusher.hand(Handed::StreamSeq(*seq));
                }
            }
            AfterOthers::ReadOn => {
                self.metrics.cluster_append_refused();
                tracing::info!("another hub wrote after what this hub read; reading on");
            }
            AfterOthers::Fenced => {
                self.metrics.cluster_append_refused();
                tracing::error!("another hub wrote the journal: this hub is fenced");
            }
        }
        self.publish_status();
        judged
    }

    /// Tells the shell of the strangers' records found (an active hub's: a standby's
    /// shell writes nothing).
    fn tell_strangers(&mut self) {
        let seqs = self.role.take_strangers();
        if !seqs.is_empty() {
            let _ = self.news.send(ClusterNews::StrangersRecords(seqs));
        }
    }

    /// The active hub: appends the core's writes until it must step down.
    async fn active(&mut self) -> Ending {
        let mut look = tokio::time::interval(RENEW_EVERY);
        // Not at once: a leader that steps down holds appends up for a moment, which the
        // first moments of a takeover do not need.
        let mut leaders =
            tokio::time::interval_at(tokio::time::Instant::now() + LEADERS_EVERY, LEADERS_EVERY);
        let mut message_no = 0u64;
        loop {
            tokio::select! {
                _ = look.tick() => {
                    self.sync_renewals();
                    if let Some(why) = self.role.check(Instant::now()) {
                        tracing::error!("this hub lost the lease: another hub holds it, or it could not renew it for {:?}", role::HOLD_FOR);
                        return Ending::StepDown(why);
                    }
                    // A record this hub did not write: a stranger's (told at once), or
                    // another hub's (the fence).
                    let applied = self.role.applied();
                    if self.cluster.last_seq().await.is_ok_and(|last| last > applied) {
                        match self.records_after(applied).await {
                            Ok(after) => match self.judge_others(&after) {
                                AfterOthers::AppendAfter(_) => self.tell_strangers(),
                                AfterOthers::ReadOn | AfterOthers::Fenced => {
                                    return Ending::StepDown(role::StepDown::Fenced)
                                }
                            },
                            Err(e) => tracing::warn!(error = %e, "the journal stream's new records cannot be read now"),
                        }
                    }
                }
                _ = leaders.tick() => self.cluster.keep_leaders_off().await,
                first = self.writes.recv() => {
                    let Some(first) = first else { return Ending::Closed };
                    let mut batch = vec![first];
                    let mut bytes = 0;
                    while bytes < MESSAGE_BYTES {
                        match self.writes.try_recv() {
                            Ok(next) => {
                                bytes += approximate_size(&next.1);
                                batch.push(next);
                            }
                            Err(_) => break,
                        }
                    }
                    message_no += 1;
                    let message = record::writes_message(batch.iter().map(|(_, w)| w));
                    let me = self.role.me();
                    let id = format!("{}-{}-{message_no}", me.hub, me.epoch);
                    let appended = self.append(&message, id).await;
                    self.tell_strangers();
                    match appended {
                        Ok(seq) => {
                            self.role.handle_appended(seq);
                            self.flusher.hand(Handed::Appended(batch, seq));
                            self.publish_status();
                        }
                        Err(AppendError::Others) => return Ending::StepDown(role::StepDown::Fenced),
                        Err(AppendError::Failed(e)) => {
                            tracing::error!(error = %e, "the journal stream took no append");
                            return Ending::StepDown(role::StepDown::LeaseLost);
                        }
                    }
                }
            }
        }
    }

    /// Appends `message`, sealed for the place after the last record this hub knows and
    /// fenced by it, retried (under the same message id, so the stream takes it once) while
    /// this hub holds the lease. Strangers' records that came first are skipped and it
    /// appends after them; another hub's record is for the role to judge.
    async fn append(&mut self, message: &[u8], id: String) -> Result<u64, AppendError> {
        loop {
            self.sync_renewals();
            let Ok(expected) = self.role.expected_last(Instant::now()) else {
                self.metrics.cluster_append_withheld();
                return Err(AppendError::Failed("the lease lapsed".into()));
            };
            let payload = bytes::Bytes::from(self.seal.seal(expected + 1, message));
            let publish = Publish::build()
                .payload(payload)
                .message_id(&id)
                .expected_last_sequence(expected);
            let acked = match self
                .cluster
                .js
                .send_publish(self.cluster.subject.clone(), publish)
                .await
            {
                Ok(ack) => ack.await,
                Err(e) => Err(e),
            };
            match acked {
                Ok(ack) => return Ok(ack.sequence),
                Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                    match self.records_after(expected).await {
                        Ok(after) => match self.judge_others(&after) {
                            AfterOthers::AppendAfter(_) => continue,
                            AfterOthers::ReadOn | AfterOthers::Fenced => {
                                return Err(AppendError::Others)
                            }
                        },
                        Err(e) => {
                            tracing::warn!(error = %e, "an append was refused and what came first cannot be read; trying again");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "an append to the journal stream failed; trying again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

#[derive(Debug)]
enum AppendError {
    /// Another hub wrote: taking over, read it too; active, this hub is fenced.
    Others,
    /// The lease lapsed.
    Failed(String),
}

/// The next record of the tail; `None` when it ended or failed (or there is none).
async fn next_message(tail: &mut Option<pull::Ordered>) -> Option<(u64, bytes::Bytes)> {
    let Some(messages) = tail else {
        // No tail: the select's other arm makes one at the next look.
        std::future::pending::<()>().await;
        return None;
    };
    match messages.next().await {
        Some(Ok(message)) => {
            let seq = message.info().ok()?.stream_sequence;
            Some((seq, message.message.payload.clone()))
        }
        Some(Err(e)) => {
            tracing::warn!(error = %e, "the journal stream's tail failed");
            None
        }
        None => None,
    }
}

/// About how many bytes a write takes in a message (events are small; the rest rare).
fn approximate_size(write: &Write) -> usize {
    match write {
        Write::Event(_) => 64,
        _ => 1024,
    }
}
