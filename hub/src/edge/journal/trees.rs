//! Reading sled's event trees: each board's events after a mark, whether a tree holds only
//! events before the marks, its batches or its one-per-event records as entries, and the
//! id-keyed JSON trees (decisions, alerts, rounds, games).

use std::collections::BTreeMap;

use protocol::{BoardNo, Seq};

use super::batch;
use super::error::StoreError;
use super::round_archive::Entry;
use super::write_codec::{decode, decode_event, json_of, key, parse_key, single_value};
use crate::core::record::Record;

/// The records of `tree` but each board's up to its mark in `after`.
pub(super) fn after_marks(
    tree: &sled::Tree,
    after: &BTreeMap<BoardNo, Seq>,
) -> impl Iterator<Item = Result<Record, StoreError>> {
    let mut ranges = Vec::new();
    let mut from = key(BoardNo(0), Seq(0));
    for (board, mark) in after {
        ranges.push(from..key(*board, Seq(0)));
        from = key(*board, Seq(mark.0.saturating_add(1)));
    }
    let tree = tree.clone();
    let last = tree.range(from..);
    ranges
        .into_iter()
        .map(move |range| tree.range(range))
        .chain(std::iter::once(last))
        .flatten()
        .map(decoded)
}

/// Whether every board's events in `tree` are up to its mark.
pub(super) fn all_before_marks(
    tree: &sled::Tree,
    marks: &BTreeMap<BoardNo, Seq>,
) -> Result<bool, StoreError> {
    let mut from = key(BoardNo(0), Seq(0));
    while let Some((first, _)) = tree.range(from..).next().transpose()? {
        let (board, _) = parse_key(&first)?;
        let last = tree
            .scan_prefix(board.0.to_be_bytes())
            .next_back()
            .transpose()?
            .map(|(key, _)| parse_key(&key))
            .transpose()?;
        let Some((_, last)) = last else { break };
        if marks.get(&board).is_none_or(|mark| last > *mark) {
            return Ok(false);
        }
        let Some(next) = board.0.checked_add(1) else {
            break;
        };
        from = key(BoardNo(next), Seq(0));
    }
    Ok(true)
}

/// Whether every event in `tree`'s batches is up to its board's mark.
pub(super) fn batches_before_marks(
    tree: &sled::Tree,
    marks: &BTreeMap<BoardNo, Seq>,
) -> Result<bool, StoreError> {
    for batch in tree.iter() {
        let (key, value) = batch?;
        let entries = batch::entries(&value).map_err(|why| unreadable_batch(&key, why))?;
        if entries
            .iter()
            .any(|e| marks.get(&e.board).is_none_or(|mark| e.seq > *mark))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `tree`'s batched events as a round's archive keeps them: one entry (key, value) each,
/// as the journal stored an event before batches.
pub(super) fn one_per_event(tree: &sled::Tree) -> impl Iterator<Item = Result<Entry, StoreError>> {
    tree.iter().flat_map(|batch| {
        let entries: Vec<Result<Entry, StoreError>> = match batch {
            Err(e) => vec![Err(e.into())],
            Ok((key, value)) => match batch::entries(&value) {
                Ok(entries) => entries
                    .iter()
                    .map(|e| {
                        Ok((
                            self::key(e.board, e.seq).to_vec(),
                            single_value(e.at, e.wire),
                        ))
                    })
                    .collect(),
                Err(why) => vec![Err(unreadable_batch(&key, why))],
            },
        };
        entries
    })
}

/// The records of `tree`'s batches that `keep` (board, seq) keeps, in the order written.
/// An event that cannot be read is an error in its place; a batch whose framing is broken,
/// one error for all of it.
pub(super) fn batched(
    tree: &sled::Tree,
    keep: impl Fn(BoardNo, Seq) -> bool,
) -> impl Iterator<Item = Result<Record, StoreError>> {
    tree.iter().flat_map(move |batch| {
        let records: Vec<Result<Record, StoreError>> = match batch {
            Err(e) => vec![Err(e.into())],
            Ok((key, value)) => match batch::entries(&value) {
                Ok(entries) => entries
                    .iter()
                    .filter(|e| keep(e.board, e.seq))
                    .map(|e| decode_event(e.board, e.seq, e.at, e.wire))
                    .collect(),
                Err(why) => vec![Err(unreadable_batch(&key, why))],
            },
        };
        records
    })
}

pub(super) fn unreadable_batch(key: &[u8], why: String) -> StoreError {
    let batch = <[u8; 8]>::try_from(key).map_or(0, u64::from_be_bytes);
    StoreError::UnreadableBatch { batch, why }
}

/// The last batch's key in `tree`, 0 when none.
pub(super) fn last_batch(tree: &sled::Tree) -> Result<u64, StoreError> {
    tree.last()?.map_or(Ok(0), |(key, _)| {
        <[u8; 8]>::try_from(key.as_ref())
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::BadKey(key.len()))
    })
}

pub(super) fn decoded(
    entry: Result<(sled::IVec, sled::IVec), sled::Error>,
) -> Result<Record, StoreError> {
    let (key, value) = entry?;
    decode(&key, &value)
}

/// Every record of an id-keyed JSON tree, by id; `unreadable` names what is damaged.
pub(super) fn json_entries<T: serde::de::DeserializeOwned>(
    tree: &sled::Tree,
    format: u8,
    unreadable: fn(u64, String) -> StoreError,
) -> impl Iterator<Item = Result<T, StoreError>> + '_ {
    tree.iter().map(move |entry| {
        let (key, value) = entry?;
        let id = key
            .as_ref()
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| StoreError::BadKey(key.len()))?;
        json_of(format, &value).map_err(|why| unreadable(id, why))
    })
}
