//! A `hub pager` process: an arbiter's terminal pager.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::super::*;

/// A `hub pager` process run with `args` (after `pager`), its screen and its complaints
/// written to files in a directory of its own; killed when dropped.
pub struct TerminalPager {
    child: Child,
    _dir: tempfile::TempDir,
    out: PathBuf,
    err: PathBuf,
}

impl TerminalPager {
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> TerminalPager {
        let dir = tempfile::tempdir().expect("a directory for the pager's output");
        let (out, err) = (dir.path().join("pager.out"), dir.path().join("pager.err"));
        let child = Command::new(workspace_bin("hub"))
            .arg("pager")
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("spawning hub pager");
        TerminalPager {
            child,
            _dir: dir,
            out,
            err,
        }
    }

    /// The pager of the arbiter whose key file is `key_file`, watching every zone, on the
    /// broker at `broker_port`.
    pub fn all_zones(broker_port: u16, key_file: &Path) -> TerminalPager {
        TerminalPager::start([
            "--zone".into(),
            "all".into(),
            "--broker".into(),
            format!("127.0.0.1:{broker_port}"),
            "--key-file".into(),
            key_file.display().to_string(),
        ])
    }

    /// Everything it has shown so far.
    pub fn shown(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Everything it has written to stderr so far.
    pub fn complaints(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}

impl Drop for TerminalPager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
