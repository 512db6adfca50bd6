//! One journal record for many board events: the format of a batch.
//!
//! sled's insert of one small record (its leaf found, its delta chain consolidated, its leaf
//! split) cost the saturated hub as much as its rules did; a record of many events costs one
//! insert. Key: the batch's number (8 bytes, big-endian), one more than the last the
//! journal holds, so a scan reads batches in the order written and each board's events in
//! sequence. Value: the format byte [`FORMAT`], then each event: its board (2 bytes), its
//! sequence number (8), the hub's receive time (8), its wire encoding's length (4), all
//! big-endian, and the wire encoding (the postcard layout frozen by the protocol's golden
//! tests), as the journal's record of one event holds it.
//!
//! A batch is sealed once it reaches [`SEAL_BYTES`]: sled splits a leaf at 16 records and
//! writes a page over 128 KiB (its segment's quarter) to a file of its own, so a leaf of
//! batches stays well under that.

use protocol::{BoardNo, Seq};

pub const FORMAT: u8 = 2;
/// The size at which a batch is written without waiting for the flush.
pub const SEAL_BYTES: usize = 4 * 1024;
const ENTRY_HEADER: usize = 2 + 8 + 8 + 4;

/// A batch being filled.
#[derive(Debug, Default)]
pub struct Batch {
    bytes: Vec<u8>,
}

impl Batch {
    /// Adds `board`'s event `seq`, received at `at` (hub ms), in its wire encoding.
    pub fn push(&mut self, board: BoardNo, seq: Seq, at: u64, wire: &[u8]) {
        if self.bytes.is_empty() {
            self.bytes.reserve(SEAL_BYTES + ENTRY_HEADER + wire.len());
            self.bytes.push(FORMAT);
        }
        let len = u32::try_from(wire.len()).expect("an event is bounded far below 4 GiB");
        self.bytes.extend_from_slice(&board.0.to_be_bytes());
        self.bytes.extend_from_slice(&seq.0.to_be_bytes());
        self.bytes.extend_from_slice(&at.to_be_bytes());
        self.bytes.extend_from_slice(&len.to_be_bytes());
        self.bytes.extend_from_slice(wire);
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether the batch is as large as a record should be.
    pub fn is_full(&self) -> bool {
        self.bytes.len() >= SEAL_BYTES
    }

    /// The record's value; the batch is empty again.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// One event as a batch holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub board: BoardNo,
    pub seq: Seq,
    /// The hub's receive time, ms.
    pub at: u64,
    pub wire: &'a [u8],
}

/// The events of a batch record's `value`, in the order written; an error says where its
/// framing breaks (nothing after that point can be told apart).
pub fn entries(value: &[u8]) -> Result<Vec<Entry<'_>>, String> {
    let Some((&FORMAT, mut rest)) = value.split_first() else {
        return Err(format!("format {:?}, expected {FORMAT}", value.first()));
    };
    let mut entries = Vec::new();
    while !rest.is_empty() {
        if rest.len() < ENTRY_HEADER {
            return Err(format!("event {} cut short", entries.len() + 1));
        }
        let (header, after) = rest.split_at(ENTRY_HEADER);
        let board = BoardNo(u16::from_be_bytes([header[0], header[1]]));
        let seq = Seq(u64::from_be_bytes(
            header[2..10].try_into().expect("8 bytes"),
        ));
        let at = u64::from_be_bytes(header[10..18].try_into().expect("8 bytes"));
        let len = u32::from_be_bytes(header[18..22].try_into().expect("4 bytes")) as usize;
        if after.len() < len {
            return Err(format!(
                "event {} ({}/{}) of {len} bytes, {} left",
                entries.len() + 1,
                board.0,
                seq.0,
                after.len()
            ));
        }
        let (wire, after) = after.split_at(len);
        entries.push(Entry {
            board,
            seq,
            at,
            wire,
        });
        rest = after;
    }
    Ok(entries)
}

/// A batch record's value with every entry as `entries` read it, each event's wire
/// encoding through `wire` (a tool that damages one event, to test what a restart does).
pub fn rewritten<'a>(entries: &[Entry<'a>], wire: impl Fn(&Entry<'a>) -> Vec<u8>) -> Vec<u8> {
    let mut batch = Batch::default();
    for entry in entries {
        batch.push(entry.board, entry.seq, entry.at, &wire(entry));
    }
    batch.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_back_its_events_in_order() {
        let mut batch = Batch::default();
        assert!(batch.is_empty());
        batch.push(BoardNo(7), Seq(1), 1_000, b"abc");
        batch.push(BoardNo(2), Seq(513), u64::MAX, b"");
        batch.push(BoardNo(7), Seq(2), 1_001, &[0xff; 300]);
        let value = batch.take();
        assert!(batch.is_empty());
        let read = entries(&value).unwrap();
        assert_eq!(
            read.iter()
                .map(|e| (e.board.0, e.seq.0, e.at, e.wire.len()))
                .collect::<Vec<_>>(),
            [(7, 1, 1_000, 3), (2, 513, u64::MAX, 0), (7, 2, 1_001, 300)]
        );
        assert_eq!(read[0].wire, b"abc");
        assert_eq!(rewritten(&read, |e| e.wire.to_vec()), value);
    }

    #[test]
    fn a_broken_batch_is_an_error_not_a_panic() {
        let mut batch = Batch::default();
        batch.push(BoardNo(1), Seq(1), 5, b"event");
        let value = batch.take();
        for cut in 0..value.len() - 1 {
            if cut == 1 {
                assert_eq!(entries(&value[..cut]).unwrap(), []);
                continue;
            }
            assert!(entries(&value[..cut]).is_err(), "cut at {cut}");
        }
        let mut other = value.clone();
        other[0] = 1;
        assert!(entries(&other).is_err());
        let mut long = value;
        long[1 + 18..1 + 22].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(entries(&long).is_err());
    }

    #[test]
    fn a_batch_is_full_at_its_seal_size() {
        let mut batch = Batch::default();
        while !batch.is_full() {
            batch.push(BoardNo(1), Seq(1), 0, &[0; 40]);
        }
        assert!(batch.take().len() >= SEAL_BYTES);
    }
}
