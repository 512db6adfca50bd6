//! The python-chess oracle (`tests/oracle/real_games.py`): one JSON line per game with what
//! the hub concluded; python-chess recomputes it.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// Collects the hub's conclusions, one game a line.
pub struct OracleReport {
    out: std::io::BufWriter<std::fs::File>,
}

impl OracleReport {
    pub fn create(path: &Path) -> OracleReport {
        OracleReport {
            out: std::io::BufWriter::new(std::fs::File::create(path).expect("oracle report")),
        }
    }

    /// `hub` holds `plies`, `fen`, `status` and `claimable`, as the hub concluded them.
    pub fn game(&mut self, file: &str, game: usize, uci: &[String], hub: Value) {
        let line = json!({ "file": file, "game": game, "uci": uci, "hub": hub });
        writeln!(self.out, "{line}").expect("oracle report");
    }

    /// Runs python-chess over the report and panics with its listing if it disagrees.
    /// Returns what it printed.
    pub fn check(mut self, path: &Path) -> String {
        self.out.flush().expect("oracle report");
        drop(self);
        let output = python_script("real_games.py", &[path]);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(
            output.status.success(),
            "python-chess disagrees with the hub:\n{stdout}"
        );
        stdout
    }
}

/// Runs `tests/oracle/{script}` with `args`.
/// Every round's standings (`path?round=R`, R from 1 until a 404), each final (not
/// provisional), saved as JSON in `dir` for an oracle script: the answers and their files.
pub fn final_standings(
    http: &super::http::Web,
    path: &str,
    dir: &Path,
) -> (Vec<Value>, Vec<std::path::PathBuf>) {
    let (mut answers, mut saved) = (Vec::new(), Vec::new());
    for round in 1.. {
        let asked = format!("{path}?round={round}");
        let (status, _) = super::http::http_get(http, &asked).unwrap();
        if status == 404 {
            break;
        }
        let answer = super::http::http_json(http, &asked);
        assert_eq!(answer["round"], round);
        assert_eq!(answer["provisional"], false, "{asked}: every result known");
        let file = dir.join(format!("round-{round}.json"));
        std::fs::write(&file, answer.to_string()).unwrap();
        answers.push(answer);
        saved.push(file);
    }
    (answers, saved)
}

pub fn python_script(script: &str, args: &[&Path]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle")
        .join(script);
    Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .expect("python3 (bash .ci/run installs python-chess 1.11.2)")
}
