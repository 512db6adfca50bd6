//! Every real game we have (`../shared/data/real/`, 3,410), replayed as board events
//! through the hub's core (the same `Hall::admit` / `Hall::apply` the live hub and its
//! journal replay use), then checked by an independent implementation of the rules:
//! python-chess 1.11.2 (`tests/oracle/real_games.py`) recomputes, for every game, how many
//! moves were played before the game ended, the final FEN, the status (5.1.1, 5.2.1, 5.2.2,
//! 9.6.1, 9.6.2) and the claimable draws (9.2, 9.3).

use crate::support;

use board_node::pgn;
use board_node::replay;
use hub::core::arbiter::GameResult;
use hub::core::ending::Status;
use hub::core::hall::Hall;
use hub::core::mating::{self, MatingChances};
use protocol::BoardNo;
use serde_json::json;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Color};
use support::oracle::OracleReport;

#[test]
fn every_real_game_agrees_with_python_chess() {
    let real = support::real_data();
    let mut files: Vec<_> = ["pgn-clocks", "pgn-endings", "dgt/dgtdriver"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(real.join(dir)).expect("real data"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    // The LiveChess folder's games.pgn holds its round; game-K.pgn repeat it one by one.
    files.push(real.join("dgt/livechess-folder-sample/round-1/games.pgn"));
    files.sort();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("hub-games.jsonl");
    let mut oracle = OracleReport::create(&report);
    let (mut games, mut ended_early, mut dead, mut signals) = (0, 0, 0, 0);
    for file in &files {
        let text = std::fs::read(file).unwrap();
        for (index, game) in pgn::read_games(&text).unwrap().into_iter().enumerate() {
            assert!(
                game.tag("FEN").is_none(),
                "set-up positions are not replayed yet"
            );
            let mut hall = Hall::default();
            let board = BoardNo(1);
            support::events::feed(&mut hall, board, replay::script(&game, None));
            let state = hall.board(board).unwrap().game();
            let uci: Vec<String> = game
                .plies
                .iter()
                .map(|p| UciMove::from_move(p.m, CastlingMode::Standard).to_string())
                .collect();
            let played: Vec<String> = state.moves().iter().map(|m| m.san.to_string()).collect();
            // The hub's moves are the game's, up to where the Laws ended it.
            assert!(
                played.len() <= uci.len(),
                "{} game {}",
                file.display(),
                index + 1
            );
            if played.len() < uci.len() {
                assert_ne!(
                    state.status(),
                    Status::Playing,
                    "{} game {}",
                    file.display(),
                    index + 1
                );
                ended_early += 1;
            }
            // DGT's result signal at the end of a game is the players' result, never a move.
            if game
                .stopped_at
                .as_deref()
                .is_some_and(replay::is_king_signal)
            {
                assert_eq!(
                    state.result_signal().map(GameResult::pgn),
                    Some(game.result()),
                    "{} game {}",
                    file.display(),
                    index + 1
                );
                signals += 1;
            } else {
                assert_eq!(
                    state.result_signal(),
                    None,
                    "{} game {}",
                    file.display(),
                    index + 1
                );
            }
            if state.status() == Status::DeadPosition {
                // Art. 5.2.2, confirmed by the full analysis (checked on the labelled sets in
                // dead_positions.rs): neither side can checkmate.
                for color in [Color::White, Color::Black] {
                    assert_eq!(
                        mating::mating_chances(state.position(), color),
                        MatingChances::CannotMate,
                        "{} game {}: {color:?}",
                        file.display(),
                        index + 1
                    );
                }
                dead += 1;
            }
            oracle.game(
                &file.file_name().unwrap().to_string_lossy(),
                index + 1,
                &uci,
                json!({
                    "plies": played.len(),
                    "fen": state.fen(),
                    "status": state.status(),
                    "claimable": state.claimable(),
                }),
            );
            games += 1;
        }
    }
    eprintln!(
        "{games} games replayed; {ended_early} ended by the Laws before the PGN's last move; \
         {dead} dead positions confirmed by the full analysis; {signals} DGT result signals read"
    );
    // Five World Cup games end with both kings on the centre squares; a sixth ends with
    // "Kc7", no signal; johan.pgn's signal is only in its byte stream, not in its PGN.
    assert_eq!(
        signals, 5,
        "games that end with both kings on the centre squares"
    );
    assert_eq!(
        games, 3_410,
        "every game of shared/data/real (endings_index.csv)"
    );
    let stdout = oracle.check(&report);
    assert!(stdout.contains(": 3410 games, 0 mismatches"), "{stdout}");
}
