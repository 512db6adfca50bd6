//! What the replica's driver needs of the cluster, and nothing more: the journal stream
//! (read, tailed, appended with a fence) and the lease's bucket (read, written by
//! revision). NATS JetStream is one pair ([`super::jetstream`]); the driver's tests run on
//! an in-memory pair that keeps the same rules, so the driver itself is tested on
//! simulated time.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;

/// The records of a tail, in the stream's order: each with its sequence number.
pub type Tail = Pin<Box<dyn Stream<Item = Result<(u64, Bytes), String>> + Send>>;

/// Why an append was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendRefused {
    /// The stream's last record is not the one expected (`Nats-Expected-Last-Sequence`):
    /// somebody wrote after it.
    NotLast,
    /// No answer, or another error: the same append may be tried again.
    Failed(String),
}

/// Why a write of the lease was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRefused {
    /// The lease is no longer at the revision named (or exists, for a first write).
    NotAtRevision,
    /// No answer, or another error.
    Failed(String),
}

/// The hall's journal stream.
pub trait JournalStream: Send + Sync + 'static {
    /// The stream's last sequence number now.
    fn last_seq(&self) -> impl Future<Output = anyhow::Result<u64>> + Send;

    /// The record at `seq`, as it was appended.
    fn record(&self, seq: u64) -> impl Future<Output = anyhow::Result<Bytes>> + Send;

    /// Appends `payload` if the stream's last record is `expected`; a message `id` the
    /// stream took already is not taken twice. The record's sequence number.
    fn append(
        &self,
        payload: Bytes,
        id: &str,
        expected: u64,
    ) -> impl Future<Output = Result<u64, AppendRefused>> + Send;

    /// The records from `from` on, as they come.
    fn tail(&self, from: u64) -> impl Future<Output = Result<Tail, String>> + Send;

    /// Asks the streams' leaders on this hub's server to move (a courtesy: a cluster
    /// without leaders has nothing to do).
    fn keep_leaders_off(&self) -> impl Future<Output = ()> + Send;
}

/// The bucket the lease is kept in, under one key.
pub trait LeaseBucket: Clone + Send + Sync + 'static {
    /// The lease's revision and value now (`None`: absent or deleted).
    fn read(&self) -> impl Future<Output = Result<Option<(u64, Bytes)>, String>> + Send;

    /// Writes `value` if the lease is at `revision` (`None`: absent); the new revision.
    fn write(
        &self,
        value: Bytes,
        revision: Option<u64>,
    ) -> impl Future<Output = Result<u64, WriteRefused>> + Send;
}
