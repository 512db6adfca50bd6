//! Every TRF file of `../shared/data/real/trf/` read with exact counts, its games
//! consistent from both players' sides, written back byte for byte, and results set by the
//! hub read back unchanged. The counts were taken with an independent column reader
//! (Python, by the TRF-16 column layout) and agree with the files' own `062` (players) and
//! `142`/`XXR` (rounds) records where they have them.

use crate::support;

use hub::core::ids::BoardNo;
use hub::pairings::round_pairings;
use hub::pairings::trf::Trf;

struct Expected {
    file: &'static str,
    players: usize,
    rounds: usize,
    /// Round entries with a result code.
    results: usize,
    /// Of them, forfeits (`+`, `-`).
    forfeits: usize,
    /// Of them, byes (`H F U Z`).
    byes: usize,
    /// Round entries of games played over the board (an opponent and `1 0 = W D L`).
    played: usize,
    teams: usize,
}

const FILES: [Expected; 4] = [
    Expected {
        file: "karl-mala-gedenkturnier-2005_trf06.trf",
        players: 284,
        rounds: 7,
        results: 1962,
        forfeits: 22,
        byes: 0,
        played: 1940,
        teams: 0,
    },
    Expected {
        file: "grandmommys-cup_fide-tec-trf25-sample.trf",
        players: 249,
        rounds: 14,
        results: 3486,
        forfeits: 1426,
        byes: 0,
        played: 2060,
        teams: 50,
    },
    Expected {
        file: "grandmommys-cup_trf26-adaptation_sharly.trf",
        players: 249,
        rounds: 14,
        results: 3486,
        forfeits: 1426,
        byes: 0,
        played: 2060,
        teams: 50,
    },
    Expected {
        file: "lichess-swiss-2020-06_online.trf",
        players: 13,
        rounds: 10,
        results: 130,
        forfeits: 12,
        byes: 6,
        played: 112,
        teams: 0,
    },
];

fn read(file: &str) -> (String, Trf) {
    let text = std::fs::read_to_string(support::real_data().join("trf").join(file)).unwrap();
    let trf = Trf::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    (text, trf)
}

#[test]
fn every_real_trf_file_reads_with_exact_counts() {
    for expected in FILES {
        let (_, trf) = read(expected.file);
        let entries = || trf.players.iter().flat_map(|p| p.rounds.iter());
        let played = entries()
            .filter(|e| {
                e.opponent.is_some() && matches!(e.result, Some('1' | '0' | '=' | 'W' | 'D' | 'L'))
            })
            .count();
        let counts = (
            trf.players.len(),
            trf.rounds(),
            entries().filter(|e| e.result.is_some()).count(),
            entries().filter(|e| e.is_forfeit()).count(),
            entries().filter(|e| e.is_bye()).count(),
            played,
            trf.teams.len(),
        );
        assert_eq!(
            counts,
            (
                expected.players,
                expected.rounds,
                expected.results,
                expected.forfeits,
                expected.byes,
                expected.played,
                expected.teams
            ),
            "{}: (players, rounds, results, forfeits, byes, played, teams)",
            expected.file
        );
        if let Some(declared) = trf.header("062") {
            assert_eq!(
                declared.parse::<usize>().unwrap(),
                expected.players,
                "{}",
                expected.file
            );
        }
    }
}

#[test]
fn every_game_reads_the_same_from_both_sides() {
    for expected in FILES {
        let (_, trf) = read(expected.file);
        for player in &trf.players {
            for (round, entry) in player.rounds.iter().enumerate() {
                let (Some(opponent), Some(result)) = (entry.opponent, entry.result) else {
                    continue;
                };
                if !matches!(result, '1' | '0' | '=') {
                    continue;
                }
                let other = trf.player(opponent).unwrap_or_else(|| {
                    panic!(
                        "{}: {} plays unknown {opponent}",
                        expected.file, player.start_rank
                    )
                });
                let mirror = other.rounds[round];
                assert_eq!(
                    mirror.opponent,
                    Some(player.start_rank),
                    "{}",
                    expected.file
                );
                let expected_result = match result {
                    '1' => '0',
                    '0' => '1',
                    _ => '=',
                };
                assert_eq!(
                    mirror.result,
                    Some(expected_result),
                    "{} round {}",
                    expected.file,
                    round + 1
                );
                assert_ne!(
                    mirror.color, entry.color,
                    "{}: both with one colour",
                    expected.file
                );
            }
        }
    }
}

#[test]
fn files_are_written_back_byte_for_byte_and_results_read_back() {
    for expected in FILES {
        let (text, mut trf) = read(expected.file);
        let original: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let written = trf.to_string();
        assert_eq!(
            written.lines().collect::<Vec<_>>(),
            original,
            "{}",
            expected.file
        );

        // The hub sets the last round's result of the first game on the top board.
        let round = trf.rounds();
        let pairings = round_pairings(&trf, round);
        let Some(top) = pairings.first() else {
            continue;
        };
        let (white, black) = (top.white.start_rank, top.black.start_rank);
        assert!(trf.set_result(white, round, '0'));
        assert!(trf.set_result(black, round, '1'));
        let again = Trf::parse(&trf.to_string()).unwrap();
        assert_eq!(again, trf, "{}", expected.file);
        assert_eq!(
            again.player(white).unwrap().rounds[round - 1].result,
            Some('0')
        );
        assert_eq!(round_pairings(&again, round)[0].result, "0-1");
        // Only those two records changed.
        let rewritten = again.to_string();
        let changed = rewritten
            .lines()
            .zip(&original)
            .filter(|(a, b)| a != *b)
            .count();
        assert_eq!(changed, 2, "{}", expected.file);
    }
}

#[test]
fn pairings_of_a_round_give_every_board_two_players_and_the_result() {
    let (_, trf) = read("karl-mala-gedenkturnier-2005_trf06.trf");
    let first = round_pairings(&trf, 1);
    // 284 players, a few absent in round 1. Forfeited games are boards too: they were
    // paired (the engines publish them with the others).
    let seated: usize = first.len() * 2;
    let unpaired = trf
        .players
        .iter()
        .filter(|p| p.rounds.first().is_none_or(|e| e.opponent.is_none()))
        .count();
    assert_eq!(seated + unpaired, 284);
    assert_eq!(first[0].board, BoardNo(1));
    assert_eq!(first[0].white.name, "Vasquez,Rodrigo");
    assert_eq!(first[0].white.fide_id, Some(3_400_042));
    assert_eq!(first[0].white.title.as_deref(), Some("g"));
    assert_eq!(first[0].result, "1-0");
    let boards: Vec<u16> = first.iter().map(|p| p.board.0).collect();
    assert_eq!(boards, (1..=first.len() as u16).collect::<Vec<_>>());
    // The TRF-2025 sample carries its time control as PGN (record 222).
    let (_, team) = read("grandmommys-cup_fide-tec-trf25-sample.trf");
    assert_eq!(
        team.time_control().unwrap().to_string(),
        "40/6000+30:20/3000+30:1500+30"
    );
}

/// Names with letters outside ASCII (Åström, Ødegaard, Bőr, Łukasz) take one column a
/// letter, as the pairing program laid them out. Every real file's layout, with each
/// player's name replaced by such a name of the same number of letters, reads the same
/// ratings, federations, FIDE ids and rounds as the ASCII original, and a result written back
/// lands in its column (the reader had sliced by bytes: a two-byte letter shifted every later
/// column by one, or made the file unreadable).
#[test]
fn names_with_diacritics_keep_every_later_column_in_place() {
    let letters = ['Å', 'ø', 'ő', 'Ł', 'é', 'ü', 'ß', 'Ž'];
    for expected in FILES {
        let (text, ascii) = read(expected.file);
        // Each record's name field (columns 15-47) with its letters made non-ASCII, letter
        // for letter: the same width in characters, more bytes.
        let accented: String = text
            .lines()
            .map(|line| {
                if !line.starts_with("001") {
                    return line.to_owned();
                }
                line.chars()
                    .enumerate()
                    .map(|(i, c)| match i {
                        14..=46 if c.is_ascii_alphabetic() => letters[i % letters.len()],
                        _ => c,
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(accented.len() > text.len(), "{}", expected.file);
        let mut trf = Trf::parse(&accented).unwrap_or_else(|e| panic!("{}: {e}", expected.file));
        assert_eq!(trf.players.len(), ascii.players.len());
        for (a, b) in trf.players.iter().zip(&ascii.players) {
            assert_eq!(a.name.chars().count(), b.name.chars().count());
            assert_ne!(a.name, b.name);
            assert_eq!(
                (a.start_rank, a.rating, &a.federation, a.fide_id, &a.rounds),
                (b.start_rank, b.rating, &b.federation, b.fide_id, &b.rounds),
                "{}: {}",
                expected.file,
                a.name
            );
        }
        // Written back unchanged, and a result set lands in its column.
        assert_eq!(trf.to_string().trim_end(), accented.trim_end());
        let round = trf.rounds();
        let Some(top) = round_pairings(&trf, round).into_iter().next() else {
            continue;
        };
        assert!(trf.set_result(top.white.start_rank, round, '0'));
        let again = Trf::parse(&trf.to_string()).unwrap();
        assert_eq!(
            again.player(top.white.start_rank).unwrap().rounds[round - 1].result,
            Some('0'),
            "{}",
            expected.file
        );
        assert_eq!(again, trf);
    }
}
