//! A round-robin's standings against FIDE's reference tool. The events of
//! `../shared/data/real/trf/` are all Swiss; the real round-robin here is the 2022
//! Candidates (`pgn-clocks/fide_candidates_2022.pgn`: eight players, two cycles, 56 games),
//! written as a TRF from its games' headers. gacrux reads an event as a round-robin by its
//! `092` record, else by its field against its rounds, and then counts a forfeit as a game
//! played, gives a round without an opponent no Buchholz element, takes every tied player
//! as having met, and lowers Koya's limit by the rounds an odd field sits out. Three files,
//! every round, both rule sets, compared value by value:
//!
//! - the event as it was (`092 Double Round Robin`);
//! - the same with a forfeit in round 3, a double forfeit in round 6 and a player who
//!   withdraws after round 9 (his last five games lost by forfeit);
//! - the field without its eighth player and without a `092` record: seven players, two
//!   rounds off each, read as a round-robin by its size alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::standings_trf::checked_against_gacrux;
use crate::support;

/// Every family, the encounter first (a round-robin's tied players have all met).
const LIST: [&str; 20] = [
    "DE", "SB", "WIN", "KS", "BH", "BH/C1", "BH/M1", "SB/C1", "FB", "AOB", "WON", "BPG", "BWG",
    "REP", "PS", "ARO", "TPR", "KS/L60", "STD", "TPN",
];

/// One game of the event: (round, white, black, result as PGN writes it).
type Game = (usize, String, String, String);

/// The Candidates' players (start ranks by rating, then name) and games. The file joins two
/// sources: round 1 from the official PGN (`Round "1.1"`, `Duda, Jan-Krzysztof`, ratings),
/// the rest from a lichess study (`Event "Round 2: Richard Rapport - Alireza Firouzja"`).
fn candidates() -> (Vec<(String, u16)>, Vec<Game>) {
    let pgn =
        std::fs::read_to_string(support::real_data().join("pgn-clocks/fide_candidates_2022.pgn"))
            .unwrap();
    let mut ratings: BTreeMap<String, u16> = BTreeMap::new();
    let mut games = Vec::new();
    for headers in format!("\n{pgn}").split("\n[Event ").skip(1) {
        let tag = |name: &str| {
            let start = headers
                .find(&format!("[{name} \""))
                .map(|i| i + name.len() + 3)?;
            Some(headers[start..start + headers[start..].find('"')?].to_owned())
        };
        // "Duda, Jan-Krzysztof" and "Jan-Krzysztof Duda" are one player.
        let name = |name: &str| match tag(name).unwrap().split_once(", ") {
            Some((last, first)) => format!("{first} {last}"),
            None => tag(name).unwrap(),
        };
        let event = headers[1..].split('"').next().unwrap();
        let round = match tag("Round") {
            Some(round) => round.split('.').next().unwrap().parse().unwrap(),
            None => event
                .strip_prefix("Round ")
                .and_then(|e| e.split(':').next())
                .and_then(|r| r.parse().ok())
                .unwrap_or_else(|| panic!("no round: {event}")),
        };
        let (white, black) = (name("White"), name("Black"));
        for (player, elo) in [(&white, "WhiteElo"), (&black, "BlackElo")] {
            if let Some(elo) = tag(elo) {
                ratings.insert(player.clone(), elo.parse().unwrap());
            }
        }
        games.push((round, white, black, tag("Result").unwrap()));
    }
    let mut players: Vec<(String, u16)> = ratings.into_iter().collect();
    players.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!((players.len(), games.len()), (8, 56));
    (players, games)
}

/// One player's round as TRF writes it: the opponent, the colour, the result.
#[derive(Clone, Copy)]
struct Cell {
    opponent: u32,
    colour: char,
    result: char,
}

impl Cell {
    fn points(self) -> f64 {
        match self.result {
            '1' | '+' | 'F' | 'U' => 1.0,
            '=' | 'H' => 0.5,
            _ => 0.0,
        }
    }
}

/// A TRF of `players` (start rank = place in the list) and their cells, round by round.
fn trf(name: &str, kind: Option<&str>, players: &[(String, u16)], cells: &[Vec<Cell>]) -> String {
    let rounds = cells.iter().map(Vec::len).max().unwrap();
    let mut out = format!("012 {name}\n");
    if let Some(kind) = kind {
        out.push_str(&format!("092 {kind}\n"));
    }
    out.push_str(&format!("XXR {rounds}\n"));
    for (i, ((player, rating), cells)) in players.iter().zip(cells).enumerate() {
        let points: f64 = cells.iter().map(|c| c.points()).sum();
        let mut line = format!(
            "001 {:>4}      {player:<33} {rating:>4} {:3} {:>11} {:10} {points:>4.1} {:>4}",
            i + 1,
            "",
            "",
            "",
            i + 1
        );
        for cell in cells {
            line.push_str(&format!(
                "  {:>4} {} {}",
                format!("{:04}", cell.opponent),
                cell.colour,
                cell.result
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Every player's cells from the games (`None` for a start rank left out of the field).
fn cells_of(players: &[(String, u16)], games: &[Game], left_out: Option<u32>) -> Vec<Vec<Cell>> {
    let rank = |name: &str| players.iter().position(|p| p.0 == name).unwrap() as u32 + 1;
    let renumber = |r: u32| match left_out {
        Some(gone) if r > gone => r - 1,
        _ => r,
    };
    let rounds = games.iter().map(|g| g.0).max().unwrap();
    let field = players.len() - usize::from(left_out.is_some());
    let bye = Cell {
        opponent: 0,
        colour: '-',
        result: 'Z',
    };
    let mut cells = vec![vec![bye; rounds]; field];
    for (round, white, black, result) in games {
        let (w, b) = (rank(white), rank(black));
        if Some(w) == left_out || Some(b) == left_out {
            continue; // the opponent's round off
        }
        let (wr, br) = match result.as_str() {
            "1-0" => ('1', '0'),
            "0-1" => ('0', '1'),
            _ => ('=', '='),
        };
        let (w, b) = (renumber(w), renumber(b));
        cells[w as usize - 1][round - 1] = Cell {
            opponent: b,
            colour: 'w',
            result: wr,
        };
        cells[b as usize - 1][round - 1] = Cell {
            opponent: w,
            colour: 'b',
            result: br,
        };
    }
    cells
}

/// Round `round`'s game of player `rank` lost by forfeit, won so by the opponent.
fn forfeit(cells: &mut [Vec<Cell>], rank: u32, round: usize) {
    let opponent = cells[rank as usize - 1][round - 1].opponent;
    cells[rank as usize - 1][round - 1].result = '-';
    cells[opponent as usize - 1][round - 1].result = '+';
}

/// The three files, written to `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let (players, games) = candidates();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let real = cells_of(&players, &games, None);
    let as_played = write(
        "candidates-2022.trf",
        trf(
            "FIDE Candidates 2022",
            Some("Double Round Robin"),
            &players,
            &real,
        ),
    );
    let mut eventful = real.clone();
    // Round 3: player 1 does not come.
    forfeit(&mut eventful, 1, 3);
    // Round 6: neither player 2 nor the opponent comes (a double forfeit).
    let other = eventful[1][5].opponent as usize;
    eventful[1][5].result = '-';
    eventful[other - 1][5].result = '-';
    // The lowest-rated player withdraws after round 9: his last five games lost by forfeit.
    for round in 10..=14 {
        forfeit(&mut eventful, 8, round);
    }
    let eventful = write(
        "candidates-2022-forfeits.trf",
        trf(
            "FIDE Candidates 2022, forfeits and a withdrawal",
            Some("Double Round Robin"),
            &players,
            &eventful,
        ),
    );
    let seven: Vec<(String, u16)> = players[..7].to_vec();
    let odd = write(
        "candidates-2022-seven.trf",
        trf(
            "FIDE Candidates 2022 without its eighth player",
            None,
            &seven,
            &cells_of(&players, &games, Some(8)),
        ),
    );
    vec![as_played, eventful, odd]
}

#[test]
fn a_round_robin_ranks_as_fide_s_reference_tool_ranks_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let mut distinct: BTreeMap<String, u64> = BTreeMap::new();
    for trf in &files {
        for rules in ["fide-2024", "fide-2026"] {
            let (answers, counts) = checked_against_gacrux(trf, rules, None, &LIST);
            assert_eq!(answers.len(), 14, "{}", trf.display());
            for (code, n) in counts {
                let most = distinct.entry(code).or_default();
                *most = (*most).max(n);
            }
        }
    }
    for code in LIST {
        assert!(
            distinct.get(code).copied().unwrap_or(0) >= 2,
            "{code} took one value only in every file, which proves little: {distinct:?}"
        );
    }
}

/// What the round-robin changes, seen through the hub: the same file with `[standings]
/// system = "swiss"` gives other Buchholz values (a forfeit against a dummy, a withdrawn
/// player's rounds as draws), so the reading of the file is what the test above checks.
#[test]
fn the_configuration_can_say_the_event_is_swiss_and_the_values_change() {
    let dir = tempfile::tempdir().unwrap();
    let eventful = &files(dir.path())[1];
    let standings = |system: &str| {
        let config = format!(
            "[pairings]\ntrf = {:?}\n\n[standings]\ntiebreaks = [\"BH\", \"SB\"]\n{system}",
            eventful.display().to_string()
        );
        let sub = tempfile::tempdir().unwrap();
        let (hub, _) = support::Hub::configured(sub.path(), &config);
        support::http::http_json(&hub.web, "/api/standings?round=14")
    };
    let read = standings("");
    let swiss = standings("system = \"swiss\"\n");
    let values = |answer: &serde_json::Value| -> Vec<serde_json::Value> {
        answer["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tiebreaks"].clone())
            .collect()
    };
    assert_eq!(read["rows"].as_array().unwrap().len(), 8);
    assert_ne!(values(&read), values(&swiss), "the system changed nothing");
    // Without a list, a round-robin's own: the encounter first, no Buchholz.
    let config = format!("[pairings]\ntrf = {:?}\n", eventful.display().to_string());
    let sub = tempfile::tempdir().unwrap();
    let (hub, _) = support::Hub::configured(sub.path(), &config);
    let answer = support::http::http_json(&hub.web, "/api/standings?round=14");
    assert_eq!(
        answer["tiebreaks"],
        serde_json::json!(["DE", "SB", "WIN", "KS"])
    );
}
