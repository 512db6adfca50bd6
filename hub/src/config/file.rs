//! Reading the files the configuration names, itself among them: whoever can write one of
//! them reaches the hub, so a file is read only if it is a regular file of at most
//! [`MAX_FILE_BYTES`], and opening one never waits. The security review put a FIFO at a
//! pairing path: the hub's loop waited for a writer that never came, and `/healthz` with it.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest configuration or pairing file read: a TRF of 2,000 players and 15 rounds is
/// under 1 MiB.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The text of the regular file at `path`; a FIFO, a device, a directory or a file over
/// [`MAX_FILE_BYTES`] is an error saying so.
pub fn read_text(path: &Path) -> io::Result<String> {
    // Without O_NONBLOCK, opening a FIFO waits for its writer.
    let nonblocking = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nonblocking)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory is never read)",
        ));
    }
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than the {} MiB a configuration or pairing file may be",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let mut text = String::new();
    // The file may grow while it is read.
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_directory_and_a_huge_file_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("event.trf");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let refused = read_text(&fifo).unwrap_err();
        assert!(
            refused.to_string().contains("not a regular file"),
            "{refused}"
        );
        assert!(read_text(dir.path()).is_err());
        let huge = dir.path().join("huge.trf");
        let file = std::fs::File::create(&huge).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        let refused = read_text(&huge).unwrap_err();
        assert!(refused.to_string().contains("16 MiB"), "{refused}");
        let fine = dir.path().join("fine.trf");
        std::fs::write(&fine, "012 Open\n").unwrap();
        assert_eq!(read_text(&fine).unwrap(), "012 Open\n");
    }
}
