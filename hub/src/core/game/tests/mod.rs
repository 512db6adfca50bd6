//! One game from what the board and clock report: moves, illegal moves, endings, signals.

use super::*;
use crate::core::laws::Penalty;
use board_node::sensors::placement as placement_of;
use protocol::Color as SensedColor;
use shakmaty::Role;

mod board_reading;

fn press(by: SensedColor) -> ClockReport {
    ClockReport {
        white_ms: 1,
        black_ms: 1,
        running: Some(by.other()),
        white_flag: false,
        black_flag: false,
        pressed_by: Some(by),
    }
}

fn board_after(game: &Game, uci: &str) -> Board {
    let m = uci
        .parse::<shakmaty::uci::UciMove>()
        .unwrap()
        .to_move(game.position())
        .unwrap();
    let mut after = game.position().clone();
    after.play_unchecked(m);
    after.board().clone()
}

#[test]
fn a_press_completes_the_move_on_the_board() {
    let mut game = Game::default();
    let mut lifted = game.position().board().clone();
    lifted.discard_piece_at(shakmaty::Square::E2);
    assert!(game.placement(NodeMs(1), &placement_of(&lifted)).is_empty());
    let after = board_after(&game, "e2e4");
    assert!(game.placement(NodeMs(2), &placement_of(&after)).is_empty());
    assert_eq!(game.moves().len(), 0, "no move before the press (6.2.1)");
    let events = game.clock(NodeMs(3), &press(SensedColor::White));
    assert_eq!(
        events,
        vec![GameEvent::MoveCompleted {
            ply: 1,
            san: "e4".into()
        }]
    );
    assert_eq!(game.position().turn(), Color::Black);
}

#[test]
fn a_press_the_node_did_not_see_shows_as_the_opponent_s_clock_running() {
    // A node restarted (or its line to the board was down) while White moved and pressed:
    // it reads the board and the clock as they stand, with no press (6.2.1).
    let mut game = Game::default();
    let standing = ClockReport {
        pressed_by: None,
        running: Some(SensedColor::White),
        ..press(SensedColor::White)
    };
    assert!(
        game.clock(NodeMs(1), &standing).is_empty(),
        "White's clock runs: no move"
    );
    game.placement(NodeMs(2), &placement_of(&board_after(&game, "e2e4")));
    let after_press = ClockReport {
        running: Some(SensedColor::Black),
        ..standing
    };
    assert!(
        game.clock(NodeMs(3), &after_press).is_empty(),
        "from a node that saw every press, a flip without one is no move"
    );
    game.node_blind();
    let events = game.clock(NodeMs(3), &after_press);
    assert!(
        matches!(&events[..], [GameEvent::MoveCompleted { ply: 1, .. }]),
        "{events:?}"
    );
    // The same reading again (Black's clock ticking) completes nothing more, and Black's
    // clock running while the board shows the position is no press without a move.
    assert!(game.clock(NodeMs(4), &after_press).is_empty());
    assert!(game.illegal_moves().is_empty());
}

#[test]
fn a_press_by_the_side_not_to_move_is_not_a_move() {
    let mut game = Game::default();
    let after = board_after(&game, "e2e4");
    game.placement(NodeMs(1), &placement_of(&after));
    assert!(game.clock(NodeMs(2), &press(SensedColor::Black)).is_empty());
    assert!(game.moves().is_empty());
}

#[test]
fn a_press_with_an_impossible_board_is_reported_not_applied() {
    let mut game = Game::default();
    let mut board = game.position().board().clone();
    board.discard_piece_at(shakmaty::Square::D1);
    game.placement(NodeMs(1), &placement_of(&board));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    assert!(matches!(events[..], [GameEvent::IllegalMove(_)]));
    assert_eq!(game.illegal_moves().len(), 1);
    assert!(game.moves().is_empty());
}

#[test]
fn checkmate_ends_the_game_without_a_press() {
    // Art. 6.2.1 / 5.1.1: the mating move is completed when the piece is set down.
    let mut game = Game::default();
    for (uci, side) in [
        ("f2f3", SensedColor::White),
        ("e7e5", SensedColor::Black),
        ("g2g4", SensedColor::White),
    ] {
        let after = board_after(&game, uci);
        game.placement(NodeMs(1), &placement_of(&after));
        game.clock(NodeMs(2), &press(side));
    }
    let mate = board_after(&game, "d8h4");
    let events = game.placement(NodeMs(3), &placement_of(&mate));
    assert_eq!(
        events.last(),
        Some(&GameEvent::GameOver {
            status: Status::Checkmate
        })
    );
    assert_eq!(game.result(), GameResult::BlackWins);
    assert!(
        game.clock(NodeMs(4), &press(SensedColor::Black)).is_empty(),
        "the press after mate is no move"
    );
}

fn game_from(fen: &str, rules: Rules) -> Game {
    Game::new(crate::core::position(fen), rules)
}

fn only_illegal(events: &[GameEvent]) -> &IllegalMove {
    match events {
        [GameEvent::IllegalMove(illegal), ..] => illegal,
        other => panic!("expected an illegal move, got {other:?}"),
    }
}

#[test]
fn an_impossible_move_pressed_is_an_illegal_move_and_the_position_is_reinstated() {
    // Art. 7.5.1: completed at the press; the position before it is reinstated;
    // 7.5.5: two minutes to the opponent for the first.
    let mut game = Game::default();
    let start_fen = game.fen();
    let mut board = game.position().board().clone();
    let pawn = board.remove_piece_at(shakmaty::Square::E2).unwrap();
    board.set_piece_at(shakmaty::Square::E5, pawn);
    game.placement(NodeMs(1), &placement_of(&board));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    let illegal = only_illegal(&events);
    assert_eq!(
        (
            illegal.kind,
            illegal.article.as_ref(),
            illegal.by,
            illegal.nth
        ),
        (
            IllegalKind::IllegalMove,
            "7.5.1",
            crate::core::side::Side::White,
            1
        )
    );
    assert_eq!(
        illegal.ruling.penalty,
        Penalty::TimeToOpponent { seconds: 120 }
    );
    assert_eq!(illegal.ruling.article, "7.5.5");
    assert_eq!(illegal.reinstate_fen, start_fen);
    assert_eq!(
        game.fen(),
        start_fen,
        "the hub keeps the position before the irregularity"
    );
    // The players restore the position; White plays a legal move and presses again.
    let after = board_after(&game, "e2e4");
    game.placement(NodeMs(3), &placement_of(&after));
    assert!(matches!(
        game.clock(NodeMs(4), &press(SensedColor::White))[..],
        [GameEvent::MoveCompleted { .. }]
    ));
}

#[test]
fn a_press_without_a_move_is_penalised_as_an_illegal_move() {
    // Art. 7.5.3.
    let mut game = Game::default();
    game.placement(NodeMs(1), &placement_of(game.position().board()));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    assert_eq!(only_illegal(&events).kind, IllegalKind::PressWithoutMove);
    assert_eq!(only_illegal(&events).article, "7.5.3");
    assert!(game.moves().is_empty());
}

#[test]
fn a_pawn_left_on_the_last_rank_is_illegal_and_becomes_a_queen() {
    // Art. 7.5.2.
    let mut game = game_from("8/4P3/8/8/8/8/k7/4K3 w - - 0 60", Rules::default());
    let mut board = game.position().board().clone();
    let pawn = board.remove_piece_at(shakmaty::Square::E7).unwrap();
    board.set_piece_at(shakmaty::Square::E8, pawn);
    game.placement(NodeMs(1), &placement_of(&board));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    assert_eq!(
        only_illegal(&events).kind,
        IllegalKind::PromotionWithoutPiece
    );
    assert_eq!(game.moves().last().unwrap().san.to_string(), "e8=Q");
    assert_eq!(
        game.position()
            .board()
            .piece_at(shakmaty::Square::E8)
            .map(|p| p.role),
        Some(Role::Queen)
    );
}

/// White presses with the e-pawn on e5 (impossible from the start position).
fn white_illegal_press(game: &mut Game) -> Vec<GameEvent> {
    let mut board = game.position().board().clone();
    let pawn = board.remove_piece_at(shakmaty::Square::E2).unwrap();
    board.set_piece_at(shakmaty::Square::E5, pawn);
    game.placement(NodeMs(1), &placement_of(&board));
    game.clock(NodeMs(2), &press(SensedColor::White))
}

#[test]
fn the_second_illegal_move_loses_when_the_opponent_can_mate() {
    // Art. 7.5.5.
    let mut game = Game::default();
    let _ = white_illegal_press(&mut game);
    let events = white_illegal_press(&mut game);
    let second = only_illegal(&events);
    assert_eq!((second.nth, second.ruling.penalty), (2, Penalty::GameLost));
    assert_eq!(second.result_if_applied, Some(GameResult::BlackWins));
    assert_eq!(
        game.status(),
        Status::Playing,
        "the arbiter decides, the hub proposes"
    );
}

#[test]
fn the_second_illegal_move_draws_when_the_opponent_cannot_mate() {
    // Art. 7.5.5: "the game is drawn if the position is such that the opponent cannot
    // checkmate the player's king by any possible series of legal moves".
    let mut game = game_from("8/8/4k3/8/8/3K4/7Q/8 w - - 0 60", Rules::default());
    for _ in 0..2 {
        game.placement(NodeMs(1), &placement_of(game.position().board()));
        let _ = game.clock(NodeMs(2), &press(SensedColor::White));
    }
    let second = &game.illegal_moves()[1];
    assert_eq!(second.ruling.penalty, Penalty::GameLost);
    assert_eq!(second.result_if_applied, Some(GameResult::Draw));
}

#[test]
fn rapid_without_full_supervision_rules_only_before_the_opponents_next_move() {
    // 2023 A.5.2, and 2014 A.4b where the first illegal move already loses.
    use crate::core::laws::{Edition, GameType, Supervision};
    for (edition, penalty, article) in [
        (
            Edition::Laws2023,
            Penalty::TimeToOpponent { seconds: 60 },
            "A.5.2",
        ),
        (Edition::Laws2014, Penalty::GameLost, "A.4b"),
    ] {
        let rules = Rules {
            edition,
            game_type: GameType::Rapid,
            supervision: Supervision::Partial,
            ..Rules::default()
        };
        let mut game = Game::new(Chess::default(), rules);
        let events = white_illegal_press(&mut game);
        let ruling = only_illegal(&events).ruling;
        assert_eq!(
            (
                ruling.penalty,
                ruling.article.as_ref(),
                ruling.until_opponents_next_move
            ),
            (penalty, article, true)
        );
    }
}

#[test]
fn kings_on_the_centre_squares_are_a_result_signal_never_a_move() {
    // Light d5/e4 = 1-0, dark d4/e5 = 0-1, one of each = draw.
    for (white, black, result) in [
        (
            shakmaty::Square::E4,
            shakmaty::Square::D5,
            GameResult::WhiteWins,
        ),
        (
            shakmaty::Square::D4,
            shakmaty::Square::E5,
            GameResult::BlackWins,
        ),
        (shakmaty::Square::E4, shakmaty::Square::E5, GameResult::Draw),
    ] {
        let mut game = game_from("6k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 40", Rules::default());
        let mut board = game.position().board().clone();
        let wk = board.remove_piece_at(shakmaty::Square::G1).unwrap();
        let bk = board.remove_piece_at(shakmaty::Square::G8).unwrap();
        board.set_piece_at(white, wk);
        board.set_piece_at(black, bk);
        let events = game.placement(NodeMs(1), &placement_of(&board));
        assert_eq!(events, [GameEvent::ResultSignal { result }]);
        assert_eq!(game.result_signal(), Some(result));
        assert!(game.moves().is_empty());
        assert_eq!(
            game.status(),
            Status::Playing,
            "the arbiter confirms the result"
        );
    }
}

#[test]
fn an_illegal_move_stands_after_the_opponents_next_move_a_5_2() {
    // 2023 rapid without full supervision: Black's Ke8-e6 is illegal; nobody acts and
    // White answers 2.d4 and presses. The illegal move stands (A.5.2) and the game goes
    // on from the position it left. With full supervision (or in standard chess,
    // 7.5.1) it never stands: the hub waits for the arbiter.
    use crate::core::laws::{GameType, Supervision};
    for (supervision, stands) in [(Supervision::Partial, true), (Supervision::Full, false)] {
        let rules = Rules {
            game_type: GameType::Rapid,
            supervision,
            ..Rules::default()
        };
        let mut game = game_from(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            rules,
        );
        let mut board = game.position().board().clone();
        let king = board.remove_piece_at(shakmaty::Square::E8).unwrap();
        board.set_piece_at(shakmaty::Square::E6, king);
        game.placement(NodeMs(1), &placement_of(&board));
        let illegal = only_illegal(&game.clock(NodeMs(2), &press(SensedColor::Black))).clone();
        assert_eq!(illegal.ruling.until_opponents_next_move, stands);
        let pawn = board.remove_piece_at(shakmaty::Square::D2).unwrap();
        board.set_piece_at(shakmaty::Square::D4, pawn);
        game.placement(NodeMs(3), &placement_of(&board));
        let events = game.clock(NodeMs(4), &press(SensedColor::White));
        if stands {
            assert_eq!(
                events,
                [
                    GameEvent::IllegalMoveStood { ply: 0 },
                    GameEvent::MoveCompleted {
                        ply: 1,
                        san: "d4".into()
                    }
                ]
            );
            assert!(game.illegal_moves()[0].stood);
            assert_eq!(
                game.fen(),
                "rnbq1bnr/pppppppp/4k3/8/3PP3/8/PPP2PPP/RNBQKBNR b KQ - 0 2"
            );
        } else {
            assert!(events.is_empty(), "{events:?}");
            assert!(!game.illegal_moves()[0].stood);
            assert!(game.moves().is_empty());
        }
    }
}

#[test]
fn without_a_clock_a_slid_piece_counts_where_it_stands_for_the_debounce() {
    // The rook slides a1-a2-a4 and pauses 1 s on a2 (itself a legal move): only a4,
    // where it stands 2 s, is the move; it counts from the end of the interval.
    let mut game = game_from("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", Rules::default());
    game.infer_moves_after(Some(2_000));
    let mut board = game.position().board().clone();
    let rook = board.remove_piece_at(shakmaty::Square::A1).unwrap();
    let on = |square| {
        let mut b = board.clone();
        b.set_piece_at(square, rook);
        placement_of(&b)
    };
    assert!(game
        .placement(NodeMs(0), &on(shakmaty::Square::A2))
        .is_empty());
    assert!(game
        .placement(NodeMs(1_000), &on(shakmaty::Square::A4))
        .is_empty());
    assert!(game.observe(NodeMs(2_999)).is_empty(), "not yet 2 s");
    let events = game.observe(NodeMs(3_500));
    assert_eq!(
        events,
        [GameEvent::MoveCompleted {
            ply: 1,
            san: "Ra4".into()
        }]
    );
    assert_eq!(game.moves()[0].at, NodeMs(3_000));
    assert!(game.observe(NodeMs(9_000)).is_empty(), "a move counts once");
}

#[test]
fn a_piece_cleared_from_the_centre_for_the_kings_still_signals() {
    // As in the recorded DGT stream `johan`: the d4 pawn is taken off, then the kings go
    // to d5 and e4 (both light: 1-0). A piece gone from elsewhere is no signal.
    for (cleared, signal) in [
        (shakmaty::Square::D4, Some(GameResult::WhiteWins)),
        (shakmaty::Square::F2, None),
    ] {
        let mut game = game_from("6k1/5ppp/8/8/3P4/8/5PPP/6K1 w - - 0 40", Rules::default());
        let mut board = game.position().board().clone();
        board.remove_piece_at(cleared).unwrap();
        let wk = board.remove_piece_at(shakmaty::Square::G1).unwrap();
        let bk = board.remove_piece_at(shakmaty::Square::G8).unwrap();
        board.set_piece_at(shakmaty::Square::E4, wk);
        board.set_piece_at(shakmaty::Square::D5, bk);
        game.placement(NodeMs(1), &placement_of(&board));
        assert_eq!(game.result_signal(), signal, "{cleared}");
    }
}

#[test]
fn every_legal_move_is_read_in_random_games() {
    // The press reads the move from the board without generating every legal move: this
    // plays random games, standard and Chess960 (castling with king or rook staying), and
    // at every position reads the board after each legal move (checks, pins, en passant,
    // promotions and castling come up as the games go).
    let starts = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            false,
        ),
        (
            "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w BGbg - 0 1",
            true,
        ),
        (
            "rkrbbqnn/pppppppp/8/8/8/8/PPPPPPPP/RKRBBQNN w ACac - 0 1",
            true,
        ),
        (
            "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w FHfh - 0 1",
            true,
        ),
    ];
    let mut read = 0;
    crate::core::random_games(&starts, 25, 150, |position, chess960| {
        let rules = Rules {
            chess960,
            ..Rules::default()
        };
        let game = Game::new(position.clone(), rules);
        for m in position.legal_moves() {
            let mut after = position.clone();
            after.play_unchecked(m);
            let found = game
                .successor_with(after.board())
                .unwrap_or_else(|| panic!("{}: {m} not read", game.fen()));
            let mut replayed = position.clone();
            replayed.play_unchecked(found);
            assert_eq!(replayed.board(), after.board(), "{}: {m}", game.fen());
            read += 1;
        }
    });
    assert!(read > 100_000, "{read} moves read");
}

#[test]
fn every_legal_move_is_read_from_the_board_it_leaves() {
    // Captures, en passant, promotions with and without a capture, both castlings: the
    // board after each legal move is read as a move that leaves exactly that board
    // (Chess960's castling: `chess960_castling_with_the_king_staying_on_its_square` and
    // `chess960_start_from_the_board_and_castling_onto_the_rooks_square`).
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/pPp2ppp/8/3pP3/8/8/P1P2PPP/R3K2R w KQkq d6 0 1",
        "r3k2r/8/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
    ];
    for fen in fens {
        let game = game_from(fen, Rules::default());
        for m in game.position().legal_moves() {
            let mut after = game.position().clone();
            after.play_unchecked(m);
            let read = game.successor_with(after.board());
            let mut replayed = game.position().clone();
            replayed.play_unchecked(read.unwrap_or_else(|| panic!("{fen}: {m} not read")));
            assert_eq!(replayed.board(), after.board(), "{fen}: {m}");
        }
    }
}
