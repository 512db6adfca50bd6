//! Reading moves off the board as players make them: castling and en passant in either
//! order, knocked pieces, repetitions, a board out of sync, Chess960, moves the node missed.

use super::*;
use crate::core::arbiter::DecisionError;

/// Plays `uci` by setting down the final position and pressing, as a board reports it.
fn play(game: &mut Game, uci: &str) {
    let side = match game.position().turn() {
        Color::White => SensedColor::White,
        Color::Black => SensedColor::Black,
    };
    let after = board_after(game, uci);
    game.placement(NodeMs(1), &placement_of(&after));
    let events = game.clock(NodeMs(2), &press(side));
    assert!(
        matches!(events[..], [GameEvent::MoveCompleted { .. }, ..]),
        "{uci}: {events:?}"
    );
}

#[test]
fn castling_rook_first_or_king_first_is_the_same_move() {
    // Art. 3.8.2 / 4.4.2: touching the rook first is irregular, but the board shows the
    // same final position at the press, and that is the move.
    for rook_first in [false, true] {
        let mut game = game_from("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Rules::default());
        let mut board = game.position().board().clone();
        let steps: [(shakmaty::Square, shakmaty::Square); 2] = if rook_first {
            [
                (shakmaty::Square::H1, shakmaty::Square::F1),
                (shakmaty::Square::E1, shakmaty::Square::G1),
            ]
        } else {
            [
                (shakmaty::Square::E1, shakmaty::Square::G1),
                (shakmaty::Square::H1, shakmaty::Square::F1),
            ]
        };
        for (from, to) in steps {
            let piece = board.remove_piece_at(from).unwrap();
            assert!(game.placement(NodeMs(1), &placement_of(&board)).is_empty());
            board.set_piece_at(to, piece);
            assert!(game.placement(NodeMs(1), &placement_of(&board)).is_empty());
        }
        assert!(game.moves().is_empty(), "half a castling is no move");
        let events = game.clock(NodeMs(2), &press(SensedColor::White));
        assert_eq!(
            events,
            [GameEvent::MoveCompleted {
                ply: 1,
                san: "O-O".into()
            }]
        );
    }
}

#[test]
fn en_passant_with_the_captured_pawn_taken_off_first() {
    let mut game = game_from("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", Rules::default());
    let mut board = game.position().board().clone();
    board.discard_piece_at(shakmaty::Square::D5);
    game.placement(NodeMs(1), &placement_of(&board));
    let after = board_after(&game, "e5d6");
    game.placement(NodeMs(1), &placement_of(&after));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    assert_eq!(
        events,
        [GameEvent::MoveCompleted {
            ply: 1,
            san: "exd6".into()
        }]
    );
}

#[test]
fn knocked_pieces_put_back_before_the_press_change_nothing() {
    // Art. 7.4: a displaced piece restored in the player's own time.
    let mut game = Game::default();
    let mut knocked = game.position().board().clone();
    let queen = knocked.remove_piece_at(shakmaty::Square::D1).unwrap();
    knocked.set_piece_at(shakmaty::Square::D3, queen);
    assert!(game
        .placement(NodeMs(1), &placement_of(&knocked))
        .is_empty());
    play(&mut game, "g1f3");
    assert_eq!(game.moves()[0].san.to_string(), "Nf3");
}

#[test]
fn threefold_counts_only_when_en_passant_rights_are_equal() {
    // Art. 9.2.2: after 1.e4 ... the position with an en passant capture possible is not
    // the same as the one without. Black's d-pawn stands on d4: after c2-c4 Black may
    // take en passant once; the later repetitions of the squares have no such right.
    let mut game = game_from("4k3/8/8/8/3p4/8/2P5/4K1N1 w - - 0 1", Rules::default());
    play(&mut game, "c2c4"); // en passant possible: position A*
    for uci in ["e8d7", "g1f3", "d7e8", "f3g1", "e8d7", "g1f3", "d7e8"] {
        play(&mut game, uci);
    }
    // The squares of A* stood three times (after c4, after ...Ke8, after ...Ke8), but the
    // first had an en passant right: only two count, so no claim yet.
    assert!(!game.claimable().contains(&Claim::ThreefoldRepetition));
    play(&mut game, "f3g1");
    play(&mut game, "e8d7");
    // White to move: Nf3 would bring the position for the third time (9.2.1).
    assert!(game.claimable().contains(&Claim::ThreefoldRepetition));
}

#[test]
fn threefold_counts_only_when_castling_rights_are_equal() {
    // Art. 9.2.2: the same squares, but White could castle the first time.
    let mut game = game_from("4k3/8/8/8/8/8/8/4K2R w K - 0 1", Rules::default());
    for uci in ["h1h2", "e8d8", "h2h1", "d8e8"] {
        play(&mut game, uci);
    }
    // Back on the starting squares, but without the castling right: a new position.
    for uci in ["h1h2", "e8d8", "h2h1"] {
        play(&mut game, uci);
    }
    assert!(!game.claimable().contains(&Claim::ThreefoldRepetition));
    play(&mut game, "d8e8"); // second time without the right
    for uci in ["h1h2", "e8d8", "h2h1"] {
        play(&mut game, uci);
    }
    // Black to move: ...Ke8 makes the third occurrence without castling rights.
    assert!(game.claimable().contains(&Claim::ThreefoldRepetition));
}

#[test]
fn the_fifth_occurrence_ends_the_game_at_once_as_each_edition_says() {
    // 2023 9.6.1 and 2014 9.6a (here the repetitions are consecutive, so both end the
    // game when the last knight is set down, without a press); 2009: play goes on.
    use crate::core::laws::Edition;
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    for (edition, ends) in [
        (Edition::Laws2023, true),
        (Edition::Laws2014, true),
        (Edition::Laws2009, false),
    ] {
        let mut game = Game::new(
            Chess::default(),
            Rules {
                edition,
                ..Rules::default()
            },
        );
        for uci in shuffle.iter().cycle().take(15) {
            play(&mut game, uci);
        }
        let last = board_after(&game, "f6g8");
        let events = game.placement(NodeMs(9), &placement_of(&last));
        if ends {
            assert_eq!(game.status(), Status::FivefoldRepetition, "{edition}");
            assert!(events.contains(&GameEvent::GameOver {
                status: Status::FivefoldRepetition
            }));
            assert_eq!(game.moves().len(), 16);
        } else {
            assert!(events.is_empty(), "{edition}");
            assert_eq!(game.status(), Status::Playing);
            // A claim is still correct (9.2), as the 2009 Laws require.
            assert_eq!(game.moves().len(), 15);
        }
    }
}

#[test]
fn knocked_pieces_left_for_too_long_put_the_board_out_of_sync_until_restored() {
    // Art. 7.4: the arbiter should know; a hand at work for a few seconds is no incident.
    let mut game = Game::default();
    let start = game.position().board().clone();
    let mut knocked = start.clone();
    let queen = knocked.remove_piece_at(shakmaty::Square::D1).unwrap();
    knocked.set_piece_at(shakmaty::Square::D3, queen);
    assert!(game
        .placement(NodeMs(1_000), &placement_of(&knocked))
        .is_empty());
    assert_eq!(game.sync(NodeMs(5_000)), BoardSync::Unsettled);
    assert!(game.observe(NodeMs(5_000)).is_empty());
    assert_eq!(
        game.observe(NodeMs(11_000)),
        [GameEvent::OutOfSync { since: 1_000 }]
    );
    assert!(game.observe(NodeMs(20_000)).is_empty(), "raised once");
    assert_eq!(game.sync(NodeMs(20_000)), BoardSync::OutOfSync);
    assert_eq!(
        game.placement(NodeMs(21_000), &placement_of(&start)),
        [GameEvent::BackInSync]
    );
    assert_eq!(game.sync(NodeMs(21_000)), BoardSync::InSync);
}

#[test]
fn a_move_set_down_but_not_yet_pressed_is_in_sync() {
    let mut game = Game::default();
    let after = board_after(&game, "e2e4");
    game.placement(NodeMs(0), &placement_of(&after));
    assert!(game.observe(NodeMs(60_000)).is_empty());
    assert_eq!(game.sync(NodeMs(60_000)), BoardSync::InSync);
}

#[test]
fn chess960_start_from_the_board_and_castling_onto_the_rooks_square() {
    // Guidelines II.3: after O-O the king stands on g1 and the rook on f1, whatever
    // squares they started on; here the king goes to the rook's own square.
    let rules = Rules {
        chess960: true,
        ..Rules::default()
    };
    let mut game = Game::new(Chess::default(), rules);
    let drawn =
        Board::from_ascii_board_fen(b"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN").unwrap();
    assert!(game.placement(NodeMs(0), &placement_of(&drawn)).is_empty());
    assert_eq!(
        game.fen(),
        "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"
    );
    let castled =
        Board::from_ascii_board_fen(b"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRRKN").unwrap();
    game.placement(NodeMs(1), &placement_of(&castled));
    let events = game.clock(NodeMs(2), &press(SensedColor::White));
    assert_eq!(
        events,
        [GameEvent::MoveCompleted {
            ply: 1,
            san: "O-O".into()
        }]
    );
    // Without Chess960 the same set-up is no start position: a press is an illegal move.
    let mut standard = Game::default();
    standard.placement(NodeMs(0), &placement_of(&drawn));
    assert!(matches!(
        standard.clock(NodeMs(1), &press(SensedColor::White))[..],
        [GameEvent::IllegalMove(_)]
    ));
}

#[test]
fn chess960_castling_with_the_king_staying_on_its_square() {
    // Guidelines II.3: king g1 and rook h1 castle short by the rook alone going to f1; the
    // king's square shows the same piece before and after, and the move is still read.
    let rules = Rules {
        chess960: true,
        ..Rules::default()
    };
    let mut game = Game::new(Chess::default(), rules);
    let steps = [
        ("rnbbqnkr/pppppppp/8/8/8/8/PPPPPPPP/RNBBQNKR", None),
        (
            "rnbbqnkr/pppppppp/8/8/8/4N3/PPPPPPPP/RNBBQ1KR",
            Some(SensedColor::White),
        ),
        (
            "rnbbq1kr/pppppppp/4n3/8/8/4N3/PPPPPPPP/RNBBQ1KR",
            Some(SensedColor::Black),
        ),
        (
            "rnbbq1kr/pppppppp/4n3/8/8/4N3/PPPPPPPP/RNBBQRK1",
            Some(SensedColor::White),
        ),
    ];
    let mut events = Vec::new();
    for (at, (board, pressed)) in (0..).step_by(2).zip(steps) {
        let board = Board::from_ascii_board_fen(board.as_bytes()).unwrap();
        game.placement(NodeMs(at), &placement_of(&board));
        if let Some(by) = pressed {
            events = game.clock(NodeMs(at + 1), &press(by));
        }
    }
    assert_eq!(
        events,
        [GameEvent::MoveCompleted {
            ply: 3,
            san: "O-O".into()
        }]
    );
}

/// The board after `ucis` from the start, and the game that has seen the start set up and
/// none of the moves.
fn moves_ahead(ucis: &[&str]) -> (Game, Board) {
    let mut game = Game::default();
    let start = game.position().board().clone();
    game.placement(NodeMs(0), &placement_of(&start));
    let mut ahead = Game::default();
    for (uci, by) in ucis
        .iter()
        .zip([SensedColor::White, SensedColor::Black].iter().cycle())
    {
        let board = board_after(&ahead, uci);
        ahead.placement(NodeMs(1), &placement_of(&board));
        ahead.clock(NodeMs(1), &press(*by));
    }
    assert_eq!(ahead.moves().len(), ucis.len());
    (game, ahead.position().board().clone())
}

fn ticking(running: SensedColor) -> ClockReport {
    ClockReport {
        pressed_by: None,
        running: Some(running),
        ..press(SensedColor::White)
    }
}

#[test]
fn two_moves_made_while_the_node_was_blind_are_caught_up_when_the_clock_agrees() {
    // 6.2.1: each was completed by its press; the board shows where they led, one way only,
    // and White's clock runs again.
    let (mut game, board) = moves_ahead(&["g1f3", "b8c6"]);
    game.placement(NodeMs(5), &placement_of(&board));
    assert!(game.moves().is_empty());
    assert!(
        game.clock(NodeMs(5), &ticking(SensedColor::White))
            .is_empty(),
        "a node that saw the board all along: a hand at work, not missed moves"
    );
    game.node_blind();
    assert!(
        game.clock(NodeMs(6), &ticking(SensedColor::Black))
            .is_empty(),
        "Black's clock running says an odd number of moves, and none leads there"
    );
    game.node_blind();
    let events = game.clock(NodeMs(7), &ticking(SensedColor::White));
    let sans: Vec<_> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert_eq!(sans, ["Nf3", "Nc6"], "{events:?}");
    assert!(game.illegal_moves().is_empty());
}

#[test]
fn three_moves_missed_end_with_a_press_that_catches_them_up() {
    // Only one order leads there: the capture needs both pawns where they went first.
    let (mut game, board) = moves_ahead(&["e2e4", "d7d5", "e4d5"]);
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    game.clock(NodeMs(6), &press(SensedColor::White));
    let sans: Vec<_> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert_eq!(sans, ["e4", "d5", "exd5"]);
    assert!(game.illegal_moves().is_empty());
}

fn sans(game: &Game) -> Vec<String> {
    game.moves().iter().map(|m| m.san.to_string()).collect()
}

fn san_list(text: &str) -> Vec<SanPlus> {
    text.split(' ').map(|s| s.parse().unwrap()).collect()
}

#[test]
fn moves_missed_in_an_order_the_board_does_not_tell_are_filled_in_and_followed() {
    // 1. Nf3 d5 2. d4 and 1. d4 d5 2. Nf3 stand alike: the hub follows one at once and marks
    // them for the arbiter (7.4), instead of leaving the game frozen.
    let (mut game, board) = moves_ahead(&["g1f3", "d7d5", "d2d4"]);
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    let events = game.clock(NodeMs(6), &press(SensedColor::White));
    assert_eq!(sans(&game), ["d4", "d5", "Nf3"], "{events:?}");
    assert!(game.illegal_moves().is_empty(), "no 7.5.1: {events:?}");
    assert!(events.contains(&GameEvent::MovesFilledIn {
        from_ply: 1,
        to_ply: 3
    }));
    let filled = &game.filled_in()[0];
    assert_eq!((filled.from_ply, filled.to_ply), (1, 3));
    assert_eq!(filled.orders.len(), 2);
    assert!(!filled.confirmed);
    let orders: Vec<String> = game
        .orders_in_san(filled)
        .iter()
        .map(|o| {
            o.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(orders, ["d4 d5 Nf3", "Nf3 d5 d4"]);
    // The game goes on from the board's position.
    let next = board_after(&game, "c7c5");
    game.placement(NodeMs(7), &placement_of(&next));
    game.clock(NodeMs(8), &press(SensedColor::Black));
    assert_eq!(sans(&game), ["d4", "d5", "Nf3", "c5"]);
}

#[test]
fn a_board_that_never_showed_the_games_start_is_another_game_not_moves_unseen() {
    // A round started over a game in play: the new game's board still shows the old one,
    // and its players go on (7.2). Its moves are no moves of the new game.
    let (_, board) = moves_ahead(&["e2e4", "e7e5", "g1f3", "b8c6"]);
    let mut game = Game::default();
    game.placement(NodeMs(5), &placement_of(&board));
    let events = game.clock(NodeMs(6), &press(SensedColor::Black));
    assert!(game.moves().is_empty(), "{events:?}");
    assert!(game.filled_in().is_empty());
}

#[test]
fn the_arbiters_order_replaces_the_one_followed_and_a_wrong_one_is_refused() {
    let (mut game, board) = moves_ahead(&["g1f3", "d7d5", "d2d4"]);
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    game.clock(NodeMs(6), &press(SensedColor::White));
    let next = board_after(&game, "c7c5");
    game.placement(NodeMs(7), &placement_of(&next));
    game.clock(NodeMs(8), &press(SensedColor::Black));

    // An order that reaches another board, one of another length, an illegal move, a ply
    // nothing was filled in at: refused, nothing changes.
    let refused = [
        (1, "e4 d5 Nf3"),
        (1, "Nf3 d5"),
        (1, "Nf3 d4 d5"),
        (2, "d5 Nf3 c5"),
    ];
    for (ply, order) in refused {
        let error = game.choose_order(ply, &san_list(order)).unwrap_err();
        assert_eq!(sans(&game), ["d4", "d5", "Nf3", "c5"], "{order}: {error}");
    }
    assert!(matches!(
        game.choose_order(1, &san_list("e4 d5 Nf3")),
        Err(DecisionError::OrderMissesBoard { .. })
    ));

    let events = game.choose_order(1, &san_list("Nf3 d5 d4")).unwrap();
    assert_eq!(
        events,
        [GameEvent::OrderChosen {
            from_ply: 1,
            to_ply: 3
        }]
    );
    assert_eq!(sans(&game), ["Nf3", "d5", "d4", "c5"]);
    assert!(game.filled_in()[0].confirmed);
    assert_eq!(game.filled_in()[0].orders.len(), 2);
    // The positions on the way are the order's: after 1. Nf3 the knight stands on f3.
    assert!(game
        .fen_after(1)
        .unwrap()
        .starts_with("rnbqkbnr/pppppppp/8/8/8/5N2/"));
    // And the game goes on.
    let next = board_after(&game, "c2c4");
    game.placement(NodeMs(9), &placement_of(&next));
    game.clock(NodeMs(10), &press(SensedColor::White));
    assert_eq!(sans(&game), ["Nf3", "d5", "d4", "c5", "c4"]);
}

#[test]
fn a_board_read_on_the_way_puts_its_order_first() {
    // The line let one reading through: the board after 1. Nf3, before the presses were seen.
    let (mut game, board) = moves_ahead(&["g1f3", "d7d5", "d2d4"]);
    let on_the_way = board_after(&game, "g1f3");
    game.placement(NodeMs(4), &placement_of(&on_the_way));
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    game.clock(NodeMs(6), &press(SensedColor::White));
    assert_eq!(sans(&game), ["Nf3", "d5", "d4"]);
    assert_eq!(game.filled_in()[0].orders.len(), 2);
}

#[test]
fn five_moves_in_a_power_cut_are_filled_in_for_the_arbiter() {
    // More than three moves unseen: followed, and marked for the arbiter to check.
    let (mut game, board) = moves_ahead(&["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]);
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    let events = game.clock(NodeMs(6), &ticking(SensedColor::Black));
    assert_eq!(game.moves().len(), 5, "{events:?}");
    assert_eq!(game.position().board(), &board);
    let filled = &game.filled_in()[0];
    assert_eq!((filled.from_ply, filled.to_ply), (1, 5));
    assert!(filled.orders.len() > 1);
}

#[test]
fn the_fifty_move_count_follows_the_order_chosen() {
    // 9.3: whether the last move zeroed the count depends on the order. Followed with the
    // pawn move last, the count is 0; in the order Nc3 last, one move counts.
    let (mut game, board) = moves_ahead(&["d2d4", "g8f6", "b1c3"]);
    game.placement(NodeMs(5), &placement_of(&board));
    game.node_blind();
    game.clock(NodeMs(6), &press(SensedColor::White));
    assert_eq!(game.moves().len(), 3);
    for (order, halfmoves) in [("d4 Nf6 Nc3", 2), ("Nc3 Nf6 d4", 0)] {
        game.choose_order(1, &san_list(order)).unwrap();
        assert_eq!(game.position().halfmoves(), halfmoves, "{order}");
    }
}

#[test]
fn a_board_no_legal_moves_reach_is_no_catch_up_and_stays_an_illegal_move() {
    // 7.5.1: a queen gone from d1 is reached by no sequence of legal moves from the start.
    let mut game = Game::default();
    let mut impossible = game.position().board().clone();
    impossible.discard_piece_at(shakmaty::Square::D1);
    game.placement(NodeMs(5), &placement_of(&impossible));
    game.node_blind();
    assert!(game
        .clock(NodeMs(6), &ticking(SensedColor::White))
        .is_empty());
    let events = game.clock(NodeMs(7), &press(SensedColor::White));
    assert!(matches!(events[..], [GameEvent::IllegalMove(_)]));
    assert!(game.moves().is_empty());
}

#[test]
fn a_press_the_line_lost_is_caught_up_at_the_opponents_press() {
    // The line lost White's press (6.2.1) and the node never knew: the board shows 1. e4
    // c5, and then Black presses. Both moves were completed, in the only order there is.
    let (mut game, board) = moves_ahead(&["e2e4", "c7c5"]);
    game.placement(NodeMs(5), &placement_of(&board));
    let events = game.clock(NodeMs(6), &press(SensedColor::Black));
    let sans: Vec<_> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert_eq!(sans, ["e4", "c5"], "{events:?}");
    assert!(game.illegal_moves().is_empty());
    // A press out of turn with nothing else on the board is still no move.
    let mut game = Game::default();
    assert!(game.clock(NodeMs(1), &press(SensedColor::Black)).is_empty());
    assert!(game.moves().is_empty());
}

#[test]
fn a_press_read_before_the_board_after_the_node_came_back_is_no_press_without_a_move() {
    // A chain's power came back: its clock is read before its board, and shows presses of
    // moves made in the dark. The board the hub holds is from before: 7.5.3 does not apply
    // to it. Once read, the board shows the moves and the next press catches them up.
    let (mut game, board) = moves_ahead(&["e2e4", "d7d5", "e4d5"]);
    game.node_blind();
    assert!(game.clock(NodeMs(5), &press(SensedColor::White)).is_empty());
    assert!(game.clock(NodeMs(6), &press(SensedColor::Black)).is_empty());
    assert!(
        game.illegal_moves().is_empty(),
        "no 7.5.3 on a board not read"
    );
    game.placement(NodeMs(7), &placement_of(&board));
    game.clock(NodeMs(8), &press(SensedColor::White));
    let sans: Vec<_> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert_eq!(sans, ["e4", "d5", "exd5"]);
    assert!(game.illegal_moves().is_empty());
}

#[test]
fn a_press_with_the_board_read_after_the_node_came_back_is_a_press_without_a_move() {
    // 7.5.3: the node read the board again, and it shows no move.
    let mut game = Game::default();
    game.node_blind();
    game.placement(NodeMs(5), &placement_of(game.position().board()));
    let events = game.clock(NodeMs(6), &press(SensedColor::White));
    assert!(
        matches!(events[..], [GameEvent::IllegalMove(_)]),
        "{events:?}"
    );
    assert_eq!(game.illegal_moves().len(), 1);
}
