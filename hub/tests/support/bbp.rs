//! BBP Pairings, the FIDE-endorsed Dutch-system engine with JaVaFo's interface, built from
//! its source in `../shared/tools/bbpPairings/` (copied to the tests' temporary directory,
//! built there with `make`, once per run): the real pairing program of the tests of
//! `results.trf`, and the oracle of the board order ([`board_order`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where BBP's source and build live for this run.
fn home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bbpPairings")
}

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tools/bbpPairings")
}

/// `bbpPairings.exe`, built on first use (kept for later runs while the source is the same).
pub fn engine() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let home = home();
            let exe = home.join("bbpPairings.exe");
            if !exe.exists() {
                let _ = std::fs::remove_dir_all(&home);
                copy_tree(&source(), &home);
                let out = Command::new("make")
                    .args(["-j2", "bbpPairings.exe"])
                    .current_dir(&home)
                    .output()
                    .expect("make (BBP Pairings needs g++ with C++20)");
                assert!(
                    out.status.success(),
                    "BBP Pairings did not build:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            exe
        })
        .clone()
}

/// The board order tool (`tests/oracle/bbp_board_order.cpp`) built against BBP's source.
pub fn board_order_tool() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            engine();
            let home = home();
            let exe = home.join("board-order");
            if !exe.exists() {
                let src = home.join("src");
                let mut sources: Vec<PathBuf> = Vec::new();
                collect_cpp(&src, &mut sources);
                sources.retain(|p| !p.ends_with("main.cpp"));
                let driver =
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/bbp_board_order.cpp");
                let out = Command::new("g++")
                    .args(["-std=c++20", "-O1", "-w", "-I"])
                    .arg(&src)
                    .arg(&driver)
                    .args(&sources)
                    .arg("-o")
                    .arg(&exe)
                    .output()
                    .expect("g++");
                assert!(
                    out.status.success(),
                    "the board order tool did not build:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            exe
        })
        .clone()
}

fn collect_cpp(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_cpp(&path, out);
        } else if path.extension().is_some_and(|e| e == "cpp") {
            out.push(path);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
            // shared/ is read-only; the build writes beside the sources.
            let mut permissions = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            permissions.set_readonly(false);
            std::fs::set_permissions(&target, permissions).unwrap();
        }
    }
}

/// One board of a round as BBP publishes it: `(round, board, white, black)`, start ranks,
/// black 0 for a bye.
pub type Board = (usize, usize, u32, u32);

/// Every round's boards of `trf` in BBP's published order (`sortResults`).
pub fn board_order(trf: &Path) -> Vec<Board> {
    let out = Command::new(board_order_tool())
        .arg(trf)
        .output()
        .expect("the board order tool runs");
    assert!(
        out.status.success(),
        "{}: {}",
        trf.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let n: Vec<u32> = line.split(' ').map(|w| w.parse().unwrap()).collect();
            (n[0] as usize, n[1] as usize, n[2], n[3])
        })
        .collect()
}

/// What the engine says of `trf`: `(exit code, stdout, stderr)` of `bbpPairings.exe
/// --dutch FILE ARGS…`.
pub fn run(trf: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(engine())
        .arg("--dutch")
        .arg(trf)
        .args(args)
        .output()
        .expect("bbpPairings.exe runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
