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

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::core::ids::{BoardNo, RoundNo};
use crate::core::pairings::{Pairing, Seat};
use crate::view::feed::FeedGame;

use super::status::Destination;
use super::{Outlet, OutletStatus, RoundFeed, StatusBoard};

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

/// A round as `tournament.json` counts it: its games, and how many are still played.
pub fn round_count(games: &[FeedGame]) -> (usize, usize) {
    let live = games.iter().filter(|g| g.result() == "*").count();
    (games.len(), live)
}

/// The folder as an outlet: each round's files rewritten when its feed changed, and the
/// tournament's file with every round's counts.
pub struct Folder {
    path: PathBuf,
    /// Each round's count of games and of those still played, as the folder holds it.
    counts: BTreeMap<RoundNo, (usize, usize)>,
    /// The game files as last written, by round and board.
    written: HashMap<RoundNo, HashMap<BoardNo, u64>>,
    status: StatusBoard,
}

impl Folder {
    pub fn new(path: PathBuf) -> Folder {
        let status = StatusBoard::new("livechess", path.display().to_string());
        Folder {
            path,
            counts: BTreeMap::new(),
            written: HashMap::new(),
            status,
        }
    }
}

impl Outlet for Folder {
    fn round_changed(&mut self, feed: &RoundFeed<'_>) -> bool {
        let written = self.written.entry(feed.round).or_default();
        let round = write_round(&self.path, feed.round, feed.games, feed.pairings, written);
        let tournament = round.and_then(|()| {
            self.counts.insert(feed.round, round_count(feed.games));
            // Every round up to the last one written, the ones without games as empty.
            let last = self.counts.keys().last().map_or(0, |r| r.0);
            let counts: Vec<(usize, usize)> = (1..=last)
                .map(|r| self.counts.get(&RoundNo(r)).copied().unwrap_or_default())
                .collect();
            write_tournament(&self.path, feed.event_id, feed.event_name, &counts)
        });
        match tournament {
            Ok(()) => {
                let (games, _) = round_count(feed.games);
                let destination = Destination {
                    round: feed.round,
                    games,
                    ..Destination::default()
                };
                self.status
                    .sent(&format!("round-{}", feed.round), destination);
                true
            }
            Err(e) => {
                let why = e.to_string();
                if self.status.failed(&why) {
                    tracing::warn!(folder = %self.path.display(), error = %why, "LiveChess folder not written");
                }
                false
            }
        }
    }

    fn status(&self) -> OutletStatus {
        self.status.get()
    }
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
    written: &mut HashMap<BoardNo, u64>,
) -> io::Result<()> {
    let round_dir = folder.join(format!("round-{round}"));
    std::fs::create_dir_all(&round_dir)?;
    let index = Index {
        pairings: games
            .iter()
            .map(|g| {
                let pairing = pairings.iter().find(|p| p.board == g.board);
                let result = g.result();
                IndexPairing {
                    white: name(pairing.map(|p| &p.white)),
                    black: name(pairing.map(|p| &p.black)),
                    live: result == "*",
                    result: result.to_owned(),
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
