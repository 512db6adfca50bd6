//! The real TRF files of `../shared/data/real/trf/` numbered as the pairing engines number
//! them (FIDE's order for publishing pairings), board by board, for every round they hold.
//! The oracle is BBP Pairings' own code (`tests/oracle/bbp_board_order.cpp`: its TRF reader,
//! its scores, its `sortResults`), not the hub's. The team files are numbered match by match
//! (`pairings::teams`), which BBP does not pair: they are not here.

use crate::support;

use hub::pairings::round_pairings;
use hub::pairings::trf::Trf;

const INDIVIDUAL: [&str; 2] = [
    "karl-mala-gedenkturnier-2005_trf06.trf",
    "lichess-swiss-2020-06_online.trf",
];

#[test]
fn every_board_of_every_round_is_numbered_as_the_engine_numbers_it() {
    for file in INDIVIDUAL {
        let path = support::real_data().join("trf").join(file);
        let trf = Trf::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let engine = support::bbp::board_order(&path);
        let rounds = engine.iter().map(|b| b.0).max().unwrap();
        assert_eq!(rounds, trf.rounds(), "{file}: the engine read every round");
        let mut boards = 0;
        for round in 1..=rounds {
            // The engine's byes are its last "boards"; the hub gives them none.
            let expected: Vec<(usize, u32, u32)> = engine
                .iter()
                .filter(|b| b.0 == round && b.3 != 0)
                .map(|b| (b.1, b.2.min(b.3), b.2.max(b.3)))
                .collect();
            let hub: Vec<(usize, u32, u32)> = round_pairings(&trf, round)
                .iter()
                .map(|p| {
                    let (w, b) = (p.white.start_rank, p.black.start_rank);
                    (usize::from(p.board.0), w.min(b), w.max(b))
                })
                .collect();
            assert_eq!(hub, expected, "{file}, round {round}");
            boards += hub.len();
        }
        eprintln!("{file}: {rounds} rounds, {boards} boards, each where the engine puts it");
        assert!(boards > 0);
    }
}

#[test]
fn white_is_the_player_the_file_gives_white() {
    for file in INDIVIDUAL {
        let path = support::real_data().join("trf").join(file);
        let trf = Trf::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for round in 1..=trf.rounds() {
            for pairing in round_pairings(&trf, round) {
                let white = trf.player(pairing.white.start_rank).unwrap();
                let color = white.rounds[round - 1].color;
                assert_ne!(color, Some('b'), "{file}, round {round}: {pairing:?}");
            }
        }
    }
}
