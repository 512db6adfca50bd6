//! Finished rounds' events, out of sled: one compressed, append-only file for each events
//! database ([`super::hot_events`]) whose rounds are over, read only to rebuild or audit.
//!
//! File `archive/events-NNNNNNNN.z` (the database's ordinal): the magic `ZNEV`, a format
//! byte, then a deflate stream of the journal's entries, each board's in sequence, each its
//! key (10 bytes), its value's length (4 bytes, big-endian) and the value as the journal
//! stored an event of its own (a batch's events are written one entry each).
//! Written to a temporary name, synced, then renamed: a file under its name is whole.
//!
//! deflate (flate2 on miniz_oxide, pure Rust) and not zstd: no C to build on a node or a
//! laptop, and a clock reading's bytes repeat enough that it takes most of what there is.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;

use super::error::StoreError;

const MAGIC: &[u8; 4] = b"ZNEV";
const FORMAT: u8 = 1;
const KEY_LEN: usize = 10;
/// The longest value read back: an event is bounded far below it on the wire.
const VALUE_LIMIT: usize = 1 << 20;

/// The archive directory, `<data>/archive`.
#[derive(Debug, Clone)]
pub struct RoundArchive {
    dir: PathBuf,
}

/// What archiving one events database wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Archived {
    pub ordinal: u32,
    pub events: u64,
    pub bytes: u64,
}

impl RoundArchive {
    pub fn open(dir: &Path) -> Result<RoundArchive, StoreError> {
        std::fs::create_dir_all(dir).map_err(StoreError::io("creating the archive directory"))?;
        Ok(RoundArchive {
            dir: dir.to_path_buf(),
        })
    }

    fn file(&self, ordinal: u32) -> PathBuf {
        self.dir.join(format!("events-{ordinal:08}.z"))
    }

    /// Whether the events of database `ordinal` are archived (the file is whole).
    pub fn holds(&self, ordinal: u32) -> bool {
        self.file(ordinal).is_file()
    }

    /// The ordinals archived, in order.
    pub fn ordinals(&self) -> Result<Vec<u32>, StoreError> {
        let mut ordinals = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(StoreError::io("listing the archive"))? {
            let name = entry
                .map_err(StoreError::io("listing the archive"))?
                .file_name();
            let ordinal = name
                .to_str()
                .and_then(|n| n.strip_prefix("events-")?.strip_suffix(".z"))
                .and_then(|n| n.parse::<u32>().ok());
            ordinals.extend(ordinal);
        }
        ordinals.sort_unstable();
        Ok(ordinals)
    }

    /// Writes `entries` (key, value; each board's in sequence) as database `ordinal`'s
    /// archive, durably.
    pub fn write(
        &self,
        ordinal: u32,
        entries: impl Iterator<Item = Result<Entry, StoreError>>,
    ) -> Result<Archived, StoreError> {
        let path = self.file(ordinal);
        let partial = path.with_extension("partial");
        let io = StoreError::io("writing a round's archive");
        let file = File::create(&partial).map_err(io)?;
        let mut out = BufWriter::new(file);
        out.write_all(MAGIC)
            .map_err(StoreError::io("writing a round's archive"))?;
        out.write_all(&[FORMAT])
            .map_err(StoreError::io("writing a round's archive"))?;
        let mut deflate = DeflateEncoder::new(out, Compression::default());
        let mut events = 0;
        for entry in entries {
            let (key, value) = entry?;
            let len = u32::try_from(value.len()).expect("an event under 4 GiB");
            deflate
                .write_all(&key)
                .and_then(|()| deflate.write_all(&len.to_be_bytes()))
                .and_then(|()| deflate.write_all(&value))
                .map_err(StoreError::io("writing a round's archive"))?;
            events += 1;
        }
        let file = deflate
            .finish()
            .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
            .map_err(StoreError::io("writing a round's archive"))?;
        file.sync_all()
            .map_err(StoreError::io("syncing a round's archive"))?;
        let bytes = file
            .metadata()
            .map_err(StoreError::io("syncing a round's archive"))?
            .len();
        std::fs::rename(&partial, &path).map_err(StoreError::io("naming a round's archive"))?;
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(StoreError::io("syncing the archive directory"))?;
        Ok(Archived {
            ordinal,
            events,
            bytes,
        })
    }

    /// The entries of database `ordinal`'s archive, in the order written.
    pub fn entries(&self, ordinal: u32) -> Result<Entries, StoreError> {
        let file = File::open(self.file(ordinal)).map_err(StoreError::io("opening an archive"))?;
        let mut reader = BufReader::new(file);
        let mut header = [0u8; 5];
        reader
            .read_exact(&mut header)
            .map_err(StoreError::io("reading an archive's header"))?;
        if &header[..4] != MAGIC || header[4] != FORMAT {
            return Err(StoreError::Archive(format!(
                "{}: not a round archive of format {FORMAT}",
                self.file(ordinal).display()
            )));
        }
        Ok(Entries {
            deflate: DeflateDecoder::new(reader),
            done: false,
        })
    }
}

/// A journal entry as stored: its key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// A round archive's entries as they are read.
pub struct Entries {
    deflate: DeflateDecoder<BufReader<File>>,
    done: bool,
}

impl Iterator for Entries {
    type Item = Result<Entry, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut key = vec![0u8; KEY_LEN];
        match read_full(&mut self.deflate, &mut key) {
            Ok(0) => {
                self.done = true;
                return None;
            }
            Ok(KEY_LEN) => {}
            Ok(_) => return self.fail("an entry cut short".into()),
            Err(e) => return self.fail(e.to_string()),
        }
        let mut len = [0u8; 4];
        if let Err(e) = self.deflate.read_exact(&mut len) {
            return self.fail(e.to_string());
        }
        let len = u32::from_be_bytes(len) as usize;
        if len > VALUE_LIMIT {
            return self.fail(format!("an entry of {len} bytes"));
        }
        let mut value = vec![0u8; len];
        if let Err(e) = self.deflate.read_exact(&mut value) {
            return self.fail(e.to_string());
        }
        Some(Ok((key, value)))
    }
}

impl Entries {
    fn fail(&mut self, why: String) -> Option<Result<Entry, StoreError>> {
        self.done = true;
        Some(Err(StoreError::Archive(why)))
    }
}

/// Reads until `buf` is full or the stream ends; the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_reads_back_what_was_written_and_a_damaged_one_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let archive = RoundArchive::open(dir.path()).unwrap();
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0u64..1000)
            .map(|i| {
                let mut key = vec![0, 1];
                key.extend_from_slice(&i.to_be_bytes());
                (key, vec![(i % 7) as u8; 40])
            })
            .collect();
        let written = archive
            .write(
                3,
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.as_slice().into(), v.as_slice().into()))),
            )
            .unwrap();
        assert_eq!(written.events, 1000);
        assert!(written.bytes < 50 * 1000 / 5, "compressed: {written:?}");
        assert!(archive.holds(3) && !archive.holds(2));
        assert_eq!(archive.ordinals().unwrap(), [3]);
        let read: Vec<_> = archive.entries(3).unwrap().map(Result::unwrap).collect();
        assert_eq!(read, entries);

        let path = archive.file(3);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let read: Vec<_> = archive.entries(3).unwrap().collect();
        assert!(read.last().unwrap().is_err(), "a cut file ends in an error");
    }
}
