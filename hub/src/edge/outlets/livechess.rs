//! A DGT LiveChess-compatible folder, written live, so relay tools that read LiveChess's
//! output take the hub's games unchanged:
//!
//! ```text
//! tournament.json         {"id", "name", "rounds": [{"count", "live"}, …]}
//! round-N/index.json      {"pairings": [{"white": {"fname", "mname", "lname", "title",
//!                           "federation"}, "black": {…}, "result", "live"}, …]}
//! round-N/game-K.pgn      board K's game
//! round-N/games.pgn       every game of the round
//! ```
//!
//! Files are replaced atomically (written aside, then renamed), so a reader never sees half
//! a file. The shapes follow `../shared/data/real/dgt/livechess-folder-sample/`.

use std::io;
use std::path::Path;

use serde::Serialize;

use crate::core::ids::{BoardNo, RoundNo};
use crate::core::pairings::{Pairing, Seat};
use crate::view::feed::FeedGame;

#[derive(Serialize)]
struct Tournament<'a> {
    id: &'a str,
    name: &'a str,
    rounds: Vec<RoundCount>,
}

#[derive(Serialize)]
struct RoundCount {
    count: usize,
    live: usize,
}

#[derive(Serialize)]
struct Index {
    pairings: Vec<IndexPairing>,
}

#[derive(Serialize)]
struct IndexPairing {
    white: Name,
    black: Name,
    result: String,
    live: bool,
}

#[derive(Serialize)]
struct Name {
    fname: Option<String>,
    mname: Option<String>,
    lname: String,
    title: Option<String>,
    federation: Option<String>,
}

/// "Carlsen, Magnus" → first name Magnus, last name Carlsen; a name without a comma is a
/// last name.
fn name(seat: Option<&Seat>) -> Name {
    let full = seat.map_or("?", |s| s.name.as_str());
    let (lname, fname) = match full.split_once(',') {
        Some((last, first)) => (last.trim().to_owned(), Some(first.trim().to_owned())),
        None => (full.to_owned(), None),
    };
    Name {
        fname,
        mname: None,
        lname,
        title: seat.and_then(|s| s.title.clone()),
        federation: seat.and_then(|s| s.federation.clone()),
    }
}

fn replace(path: &Path, contents: &[u8]) -> io::Result<()> {
    let aside = path.with_extension("part");
    std::fs::write(&aside, contents)?;
    std::fs::rename(&aside, path)
}

/// The result a feed game shows (its `Result` tag).
fn result(pgn: &str) -> String {
    pgn.lines()
        .find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]"))
        .unwrap_or("*")
        .to_owned()
}

/// A round as `tournament.json` counts it: its games, and how many are still played.
pub fn round_count(games: &[FeedGame]) -> (usize, usize) {
    let live = games.iter().filter(|g| result(&g.pgn) == "*").count();
    (games.len(), live)
}

/// Writes `tournament.json`: the event and every round's count of games and of those still
/// played, the first round first.
pub fn write_tournament(
    folder: &Path,
    event_id: &str,
    event_name: &str,
    rounds: &[(usize, usize)],
) -> io::Result<()> {
    std::fs::create_dir_all(folder)?;
    let tournament = Tournament {
        id: event_id,
        name: event_name,
        rounds: rounds
            .iter()
            .map(|(count, live)| RoundCount {
                count: *count,
                live: *live,
            })
            .collect(),
    };
    let tournament = serde_json::to_string_pretty(&tournament).expect("it serializes");
    replace(&folder.join("tournament.json"), tournament.as_bytes())
}

/// Writes the folder of `round`: its index and its games. `written` holds the fingerprints
/// of the round's game files as last written, so only games that changed are written again.
pub fn write_round(
    folder: &Path,
    round: RoundNo,
    games: &[FeedGame],
    pairings: &[Pairing],
    written: &mut std::collections::HashMap<BoardNo, u64>,
) -> io::Result<()> {
    let round_dir = folder.join(format!("round-{round}"));
    std::fs::create_dir_all(&round_dir)?;
    let index = Index {
        pairings: games
            .iter()
            .map(|g| {
                let pairing = pairings.iter().find(|p| p.board == g.board);
                let result = result(&g.pgn);
                IndexPairing {
                    white: name(pairing.map(|p| &p.white)),
                    black: name(pairing.map(|p| &p.black)),
                    live: result == "*",
                    result,
                }
            })
            .collect(),
    };
    for game in games {
        if written.get(&game.board) == Some(&game.print) {
            continue;
        }
        replace(
            &round_dir.join(format!("game-{}.pgn", game.board)),
            game.pgn.as_bytes(),
        )?;
        written.insert(game.board, game.print);
    }
    let all: String = games.iter().map(|g| g.pgn.as_str()).collect();
    replace(&round_dir.join("games.pgn"), all.as_bytes())?;
    let index = serde_json::to_string_pretty(&index).expect("the index serializes");
    replace(&round_dir.join("index.json"), index.as_bytes())?;
    Ok(())
}
