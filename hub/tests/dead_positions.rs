//! The labelled dead-position sets against the hub's analysis (Art. 5.2.2, 6.9, 7.5.5):
//! the D3-Chess test vectors in `../shared/data/real/pgn-endings/` and the sets shipped in
//! chasolver's crate package. Labels: `WB` both can still checkmate, `W-` only White, `-B`
//! only Black, `--` neither (a dead position). Every position is checked for both colours.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hub::core::mating::{self, MatingChances};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, PositionError};

#[derive(Default, Debug)]
struct Tally {
    positions: usize,
    /// Positions shakmaty refuses even when told to overlook impossible checks, too much
    /// material and bad castling or en passant fields.
    unplayable: usize,
    agree: usize,
    undetermined: usize,
    wrong: Vec<String>,
    /// The fast check said "cannot mate" where the label says the side can: unsound.
    fast_unsound: Vec<String>,
    fast_proved: usize,
    full_time: Duration,
    fast_time: Duration,
}

fn check(path: &Path, limit: Option<usize>) -> Tally {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut tally = Tally::default();
    let lines = text.lines().filter(|l| !l.starts_with('#') && l.len() > 3);
    for line in lines.take(limit.unwrap_or(usize::MAX)) {
        let (label, fen) = line.split_at(2);
        // The sets hold some positions no game can reach (impossible checks, ten queens);
        // the analysis is still asked, as chasolver's own tests do.
        let position: Chess = match fen.trim().parse::<Fen>().ok().and_then(|f| {
            f.into_position(CastlingMode::Standard)
                .or_else(PositionError::ignore_impossible_check)
                .or_else(PositionError::ignore_too_much_material)
                .or_else(PositionError::ignore_invalid_castling_rights)
                .or_else(PositionError::ignore_invalid_ep_square)
                .ok()
        }) {
            Some(p) => p,
            None => {
                tally.unplayable += 1;
                continue;
            }
        };
        tally.positions += 1;
        for (color, mark) in [
            (Color::White, label.as_bytes()[0] == b'W'),
            (Color::Black, label.as_bytes()[1] == b'B'),
        ] {
            let started = Instant::now();
            let full = mating::mating_chances(&position, color);
            tally.full_time += started.elapsed();
            let started = Instant::now();
            let fast = mating::surely_cannot_mate(&position, color);
            tally.fast_time += started.elapsed();
            if fast {
                tally.fast_proved += 1;
                if mark {
                    tally
                        .fast_unsound
                        .push(format!("{label} {fen} ({color:?})"));
                }
            }
            match (full, mark) {
                (MatingChances::CanMate, true) | (MatingChances::CannotMate, false) => {
                    tally.agree += 1
                }
                (MatingChances::Undetermined, _) => tally.undetermined += 1,
                _ => tally
                    .wrong
                    .push(format!("{label} {fen} ({color:?}: {full:?})")),
            }
        }
    }
    tally
}

fn report(name: &str, tally: &Tally) {
    let answers = (tally.positions * 2).max(1) as u32;
    eprintln!(
        "{name}: {} positions ({} unplayable skipped), {} colour answers agree, {} undetermined, {} wrong; \
         full analysis {:?} per answer, fast check {:?} per answer (proved {} 'cannot mate')",
        tally.positions,
        tally.unplayable,
        tally.agree,
        tally.undetermined,
        tally.wrong.len(),
        tally.full_time / answers,
        tally.fast_time / answers,
        tally.fast_proved,
    );
    assert!(tally.wrong.is_empty(), "{name}: {:#?}", tally.wrong);
    assert!(
        tally.fast_unsound.is_empty(),
        "{name}: {:#?}",
        tally.fast_unsound
    );
    assert!(tally.positions > 0);
}

/// The test files inside chasolver's crate package, from cargo's registry.
fn chasolver_package_file(name: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"));
    let registry = home.join("registry/src");
    std::fs::read_dir(&registry)
        .unwrap_or_else(|e| panic!("{}: {e}", registry.display()))
        .filter_map(|index| {
            let dir = index.ok()?.path().join("chasolver-3.0.0/tests").join(name);
            dir.exists().then_some(dir)
        })
        .next()
        .unwrap_or_else(|| {
            panic!(
                "chasolver-3.0.0/tests/{name} not found under {}",
                registry.display()
            )
        })
}

#[test]
fn d3chess_vectors_agree_with_their_labels() {
    let path = support::real_data().join("pgn-endings/d3chess_unwinnability_test_vectors.txt");
    report("D3-Chess vectors", &check(&path, None));
}

#[test]
fn chasolver_package_positions_agree_with_their_labels() {
    report(
        "chasolver positions.txt",
        &check(&chasolver_package_file("positions.txt"), None),
    );
}

#[test]
fn chasolver_package_lichess_positions_agree_with_their_labels() {
    report(
        "chasolver lichess.txt",
        &check(&chasolver_package_file("lichess.txt"), None),
    );
}

/// The search for a dead position (5.2.2) is skipped after a reversible move
/// (`mating::may_become_dead`): over every real game, no position it skips is one the
/// search calls dead, so the hub ends every game where it did with the search after every
/// move. Prints the share of searches skipped (`--nocapture`).
#[test]
fn every_position_the_dead_position_search_skips_in_the_real_games_is_not_dead_5_2_2() {
    use board_node::pgn;
    use shakmaty::Position;
    let real = support::real_data();
    let files: Vec<_> = ["pgn-clocks", "pgn-endings", "dgt/dgtdriver"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(real.join(dir)).expect("real data"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    let (mut searched, mut skipped, mut dead) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    for file in &files {
        let text = std::fs::read(file).unwrap();
        for (index, game) in pgn::read_games(&text).unwrap().into_iter().enumerate() {
            let mut position = game.start.clone();
            for (i, ply) in game.plies.iter().enumerate() {
                if !position.is_legal(ply.m) {
                    break; // the DGT result signal: a king set on the centre
                }
                // As the hub does: the game's first move, and every move that may make a
                // position dead.
                let search = i == 0 || mating::may_become_dead(&position, &ply.m);
                position.play_unchecked(ply.m);
                if position.is_checkmate() || position.is_stalemate() {
                    break; // 5.1.1, 5.2.1: looked at before a dead position, after every move
                }
                let is_dead = mating::is_dead_position(&position);
                if search {
                    searched += 1;
                } else {
                    skipped += 1;
                    if is_dead {
                        wrong.push(format!(
                            "{} game {}: {}",
                            file.display(),
                            index + 1,
                            Fen::from_position(&position, shakmaty::EnPassantMode::Legal)
                        ));
                    }
                }
                if is_dead {
                    dead += 1;
                    break; // 5.2.2: the game ends there
                }
            }
        }
    }
    println!(
        "{} moves: {searched} searched, {skipped} skipped ({:.1}%), {dead} dead positions found",
        searched + skipped,
        100.0 * skipped as f64 / (searched + skipped) as f64
    );
    assert!(dead > 0, "the real games hold dead positions");
    assert!(skipped > searched, "most moves are reversible");
    assert!(wrong.is_empty(), "{wrong:#?}");
}
