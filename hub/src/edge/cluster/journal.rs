//! The journal on the cluster: the active hub appends, every hub keeps its copy.
//!
//! One task per hub, the replica's driver: one loop that does what the role
//! ([`super::role`]) asks, feeds it what came of it and the time, and sleeps until the
//! role's next timeout, a record of the tail or a write of the core. It decides nothing;
//! what follows is what the role decides.
//!
//! As a **standby** it tails the journal stream (an ordered consumer,
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

use std::ops::ControlFlow;

use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot, watch};

use super::lease::{now, Lease};
use super::ports::{AppendRefused, JournalStream, LeaseBucket, Tail};
use super::record::{self, Genesis, Message, Takeover};
use super::role::{Action, Appending, ClusterNews, Note, Role, Sealed, Status, StepDown, HOLD_FOR};
use super::seal::JournalSeal;
use crate::core::hub::{Position, Write};
use crate::edge::journal::flusher::{FlusherInput, Handed};
use crate::metrics::Metrics;

/// The most bytes of writes one message holds (NATS takes 1 MiB by default).
const MESSAGE_BYTES: usize = 256 * 1024;

/// The driver's ends: the writes in, the role's news and status out.
pub struct ClusterLink {
    pub writes: mpsc::UnboundedSender<(Position, Write)>,
    pub news: mpsc::UnboundedReceiver<ClusterNews>,
    pub status: watch::Receiver<Status>,
}

/// The stream's first record, opened with this hub's hall key: proof that the stream is
/// this hall's and this hub holds its secrets. A hub that finds the stream empty writes it
/// (only one can: the append expects an empty stream).
pub async fn genesis<S: JournalStream>(
    stream: &S,
    seal: &JournalSeal,
    hub: &str,
) -> anyhow::Result<Genesis> {
    if stream.last_seq().await? == 0 {
        let mine = record::genesis_message(&Genesis {
            hub: hub.to_owned(),
        });
        let payload = seal.seal(1, &mine).into();
        match stream.append(payload, &format!("genesis-{hub}"), 0).await {
            Ok(_) => tracing::warn!("the hall's journal stream begins with this hub"),
            Err(AppendRefused::NotLast) => {}
            Err(AppendRefused::Failed(e)) => anyhow::bail!("writing the hall's first record: {e}"),
        }
    }
    let first = stream
        .record(1)
        .await
        .map_err(|e| e.context("reading the hall's first record"))?;
    let message = seal.open(1, &first).map_err(|e| {
        anyhow::Error::new(e).context(
            "this hub does not hold the hall's secrets (give them with `hub cluster-join --secrets FILE`, deploy/README.md), or the stream is another hall's",
        )
    })?;
    match record::decode(&message)? {
        Message::Genesis(genesis) => Ok(genesis),
        other => anyhow::bail!("the journal stream's first record is not the hall's: {other:?}"),
    }
}

/// Starts the driver: a standby first, its journal holding the stream up to what `role`
/// says.
pub fn start<S: JournalStream, B: LeaseBucket>(
    stream: S,
    seal: JournalSeal,
    lease: Lease<B>,
    role: Role,
    flusher: FlusherInput,
    metrics: std::sync::Arc<Metrics>,
) -> ClusterLink {
    let (writes_tx, writes) = mpsc::unbounded_channel();
    let (news, news_rx) = mpsc::unbounded_channel();
    let (status, status_rx) = watch::channel(role.status());
    let driver = Driver {
        stream,
        seal,
        lease,
        role,
        flusher,
        writes,
        batch: Vec::new(),
        tail: None,
        news,
        status,
        metrics,
    };
    tokio::spawn(driver.run());
    ClusterLink {
        writes: writes_tx,
        news: news_rx,
        status: status_rx,
    }
}

struct Driver<S, B> {
    stream: S,
    seal: JournalSeal,
    lease: Lease<B>,
    /// Every decision is the role's.
    role: Role,
    flusher: FlusherInput,
    writes: mpsc::UnboundedReceiver<(Position, Write)>,
    /// The core's writes being appended, until the stream takes them.
    batch: Vec<(Position, Write)>,
    tail: Option<Tail>,
    news: mpsc::UnboundedSender<ClusterNews>,
    status: watch::Sender<Status>,
    metrics: std::sync::Arc<Metrics>,
}

impl<S: JournalStream, B: LeaseBucket> Driver<S, B> {
    /// Does what the role asks, then sleeps until its timeout, a record of the tail or a
    /// write of the core, and tells the role what woke it. Ends when the shell is gone.
    async fn run(mut self) {
        loop {
            while let Some(action) = self.role.poll_action() {
                self.sync_renewals();
                if self.perform(action).await.is_break() {
                    return;
                }
            }
            self.publish_status();
            if self.news.is_closed() {
                return;
            }
            let timeout = tokio::time::Instant::from_std(self.role.poll_timeout());
            tokio::select! {
                next = next_record(&mut self.tail) => match next {
                    Some((seq, payload)) => self.apply(seq, &payload),
                    None => {
                        self.tail = None;
                        self.role.handle_tail_ended();
                    }
                },
                first = self.writes.recv(), if self.role.takes_writes() => {
                    let Some(first) = first else { return };
                    self.take_batch(first);
                    self.sync_renewals();
                    self.role.handle_writes(now());
                }
                () = tokio::time::sleep_until(timeout) => {}
            }
            self.sync_renewals();
            self.role.handle_timeout(now());
        }
    }

    /// One action, its outcome fed back to the role; `Break` when the shell is gone.
    async fn perform(&mut self, action: Action) -> ControlFlow<()> {
        match action {
            Action::ReadLease => match self.lease.read().await {
                Ok(entry) => self.role.handle_lease_read(now(), entry),
                Err(e) => {
                    tracing::warn!(error = %e, "the lease cannot be read");
                    self.role.handle_lease_unreadable(now());
                }
            },
            Action::TakeLease { revision, holder } => {
                let sent = now();
                if self.lease.take(revision, &holder, sent).await {
                    self.role.handle_lease_taken(sent, holder.epoch);
                }
            }
            Action::GiveUpLease => self.lease.give_up(),
            Action::Tail { from } => {
                self.tail = match self.stream.tail(from).await {
                    Ok(tail) => Some(tail),
                    Err(e) => {
                        tracing::warn!(error = %e, "the journal stream cannot be tailed now");
                        None
                    }
                }
            }
            Action::DropTail => self.tail = None,
            Action::ReadLastSeq => match self.stream.last_seq().await {
                Ok(last) => self.role.handle_last_seq(last),
                Err(e) => {
                    tracing::warn!(
                        error = format!("{e:#}"),
                        "the journal stream's end cannot be read now"
                    );
                    self.role.handle_read_failed(now());
                }
            },
            Action::CatchUp { from } => match self.catch_up(from).await {
                Ok(()) => {
                    self.sync_renewals();
                    self.role.handle_caught_up(now());
                }
                Err(e) => {
                    tracing::warn!(
                        error = format!("{e:#}"),
                        "reading the rest of the journal stream failed; trying again"
                    );
                    self.role.handle_catch_up_failed(now());
                }
            },
            Action::ReadAfter(seq) => match self.records_after(seq).await {
                Ok(after) => {
                    self.sync_renewals();
                    self.role.handle_others(now(), &after);
                }
                Err(e) => {
                    tracing::warn!(
                        error = format!("{e:#}"),
                        "the journal stream's new records cannot be read now"
                    );
                    self.role.handle_read_failed(now());
                }
            },
            Action::Append {
                expected,
                id,
                record,
            } => self.append(expected, &id, record).await,
            Action::Skip(seq) => {
                tracing::error!(seq, "a stranger's record in the journal stream; refused");
                self.metrics.cluster_strangers_record();
                self.flusher.hand(Handed::StreamSeq(seq));
            }
            Action::Sync => {
                let (synced, flushed) = oneshot::channel();
                self.flusher.hand(Handed::Sync(synced));
                let _ = flushed.await;
            }
            Action::DropWrites => {
                self.batch.clear();
                while self.writes.try_recv().is_ok() {}
            }
            Action::KeepLeadersOff => self.stream.keep_leaders_off().await,
            Action::Tell(news) => {
                // What the shell reads of the role is current when the news arrives.
                self.publish_status();
                if self.news.send(news).is_err() {
                    return ControlFlow::Break(());
                }
            }
            Action::Note(note) => self.note(note),
        }
        ControlFlow::Continue(())
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

    /// Every view of the role (the door, `/api/cluster`, `/healthz`) reads this.
    fn publish_status(&self) {
        let status = self.role.status();
        self.status.send_if_modified(|seen| {
            let changed = *seen != status;
            if changed {
                *seen = status;
            }
            changed
        });
    }

    /// The first write waiting and those after it, up to a message's worth.
    fn take_batch(&mut self, first: (Position, Write)) {
        self.batch = vec![first];
        let mut bytes = 0;
        while bytes < MESSAGE_BYTES {
            match self.writes.try_recv() {
                Ok(next) => {
                    bytes += approximate_size(&next.1);
                    self.batch.push(next);
                }
                Err(_) => break,
            }
        }
    }

    /// Appends the record the role names, sealed for the place after `expected`.
    async fn append(&mut self, expected: u64, id: &str, record: Appending) {
        let message = match record {
            Appending::Takeover(epoch) => record::takeover_message(&Takeover {
                hub: self.role.me().hub.clone(),
                epoch,
            }),
            Appending::Writes => record::writes_message(self.batch.iter().map(|(_, w)| w)),
        };
        let payload = self.seal.seal(expected + 1, &message).into();
        match self.stream.append(payload, id, expected).await {
            Ok(seq) => {
                let handed = match record {
                    Appending::Takeover(_) => Handed::StreamSeq(seq),
                    Appending::Writes => Handed::Appended(std::mem::take(&mut self.batch), seq),
                };
                self.flusher.hand(handed);
                self.role.handle_appended(now(), seq);
            }
            Err(AppendRefused::NotLast) => self.role.handle_append_refused(),
            Err(AppendRefused::Failed(e)) => {
                tracing::warn!(error = %e, "an append to the journal stream failed; trying again");
                self.role.handle_append_failed(now());
            }
        }
    }

    /// Reads the stream from `from` up to its last record now.
    async fn catch_up(&mut self, from: u64) -> anyhow::Result<()> {
        let last = self.stream.last_seq().await?;
        for seq in from..=last {
            let payload = self.stream.record(seq).await?;
            self.apply(seq, &payload);
        }
        Ok(())
    }

    /// A record of the stream into the local journal, if the role takes it; a stranger's
    /// is skipped and counted.
    fn apply(&mut self, seq: u64, payload: &[u8]) {
        let opened = self.seal.open(seq, payload);
        let sealed = if opened.is_ok() {
            Sealed::Hall
        } else {
            Sealed::Stranger
        };
        if !self.role.handle_record(seq, sealed) {
            return;
        }
        let writes = match opened {
            Ok(message) => self.writes_of(seq, &message),
            Err(foreign) => {
                tracing::error!(error = %foreign, "a stranger's record in the journal stream; refused");
                self.metrics.cluster_strangers_record();
                Vec::new()
            }
        };
        self.flusher.hand(Handed::Copied(writes, seq));
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

    /// The records after `seq`, each as the hall's or a stranger's, for the role to judge.
    async fn records_after(&mut self, seq: u64) -> anyhow::Result<Vec<(u64, Sealed)>> {
        let last = self.stream.last_seq().await?;
        let mut after = Vec::new();
        for seq in seq + 1..=last {
            let payload = self.stream.record(seq).await?;
            let sealed = match self.seal.open(seq, &payload) {
                Ok(_) => Sealed::Hall,
                Err(_) => Sealed::Stranger,
            };
            after.push((seq, sealed));
        }
        Ok(after)
    }

    /// What the role noted, logged and counted.
    fn note(&self, note: Note) {
        match note {
            Note::TailSkipped { seq, applied } => {
                tracing::warn!(seq, applied, "the journal stream's tail skipped; reading again")
            }
            Note::TailStalled { applied } => {
                tracing::warn!(applied, "the journal stream's tail stalled; made anew")
            }
            Note::ReadOn => {
                self.metrics.cluster_append_refused();
                tracing::info!("another hub wrote after what this hub read; reading on");
            }
            Note::Fenced => {
                self.metrics.cluster_append_refused();
                tracing::error!("another hub wrote the journal: this hub is fenced");
            }
            Note::Withheld => {
                self.metrics.cluster_append_withheld();
                tracing::error!("an append withheld: this hub no longer holds the lease");
            }
            Note::Active { epoch, seq } => {
                tracing::warn!(epoch, seq, "this hub is the active hub")
            }
            Note::SteppedDown(StepDown::LeaseLost) => tracing::error!(
                "this hub lost the lease (another hub holds it, or it could not renew it for {HOLD_FOR:?}); it is a standby now"
            ),
            Note::SteppedDown(StepDown::Fenced) => {
                tracing::error!("this hub steps down: it is a standby now")
            }
        }
    }
}

/// The next record of the tail; `None` when it ended or failed. Without a tail it waits
/// for ever (the role makes one when it should).
async fn next_record(tail: &mut Option<Tail>) -> Option<(u64, bytes::Bytes)> {
    let Some(records) = tail else {
        return std::future::pending().await;
    };
    match records.next().await {
        Some(Ok(record)) => Some(record),
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

#[cfg(test)]
mod tests;
