//! The chief's undo of a forced round start (issue 68): a forced start ends every game it
//! covers; while no move was made in a game it began, the chief takes it back and every
//! game is given back as its board went on with it, and a restart folds the journal to the
//! same hall. The hub's core, with a journal that is the list of its writes.

use crate::support;

use hub::core::alerts::routing::{Arbiter, Routing, Zone};
use hub::core::alerts::Language;
use hub::core::board::BoardDetail;
use hub::core::hub::{HubConfig, StartRequest, UndoRequest};
use hub::core::ids::RoundNo;
use hub::core::rounds::{StartError, UndoClosed};
use hub::core::time::HubMs;
use protocol::BoardNo;
use shakmaty::{Color, Position};
use support::events::Script;
use support::hub::TestHub;

const FIVE_MINUTES: u32 = 300_000;

fn hall() -> TestHub {
    let arbiter = |name: &str, zones: Vec<String>, chief: bool| Arbiter {
        name: name.into(),
        zones,
        language: Language::English,
        chief,
    };
    TestHub::new(HubConfig {
        event: "t".into(),
        time_control: Some("5400+30".parse().unwrap()),
        routing: Routing {
            zones: vec![Zone {
                name: "A".into(),
                boards: vec![BoardNo(1)..=BoardNo(4)],
            }],
            arbiters: vec![
                arbiter("IA Ola", vec!["A".into()], false),
                arbiter("IA Eva", vec![], true),
            ],
        },
        ..HubConfig::default()
    })
}

/// `board` set up, White's clock started, and `moves` played.
fn playing(hub: &mut TestHub, board: u16, moves: &[&str]) -> Script {
    let mut s = Script::new(BoardNo(board), 5_400_000);
    s.increment_ms = 30_000;
    let start = s.position.board().clone();
    s.show(hub, &start);
    s.reading(hub, 0, Some(Color::White), None);
    for uci in moves {
        s.play(hub, uci, 20_000);
    }
    s
}

fn force(round: u16, login: Option<&str>) -> StartRequest {
    StartRequest {
        round: RoundNo(round),
        section: None,
        force: true,
        by: login.unwrap_or("IA Chief").into(),
        login: login.map(str::to_owned),
    }
}

fn undo(round: u16, login: Option<&str>) -> UndoRequest {
    UndoRequest {
        round: RoundNo(round),
        by: login.unwrap_or("IA Chief").into(),
        login: login.map(str::to_owned),
    }
}

/// Board `n`'s game in play, as `GET /api/boards/{n}` shows it.
fn detail(hub: &TestHub, n: u16, now: u64) -> BoardDetail {
    let board = hub.hall().board(BoardNo(n)).expect("a board of the hall");
    board.detail(HubMs(now))
}

fn sans(detail: &BoardDetail) -> Vec<String> {
    detail.moves.iter().map(|m| m.san.to_string()).collect()
}

#[test]
fn the_chief_undoes_a_forced_start_and_every_game_is_given_back_as_it_went_on() {
    let mut hub = hall();
    let mut one = playing(&mut hub, 1, &["e2e4", "e7e5", "g1f3"]);
    let mut two = playing(&mut hub, 2, &["d2d4"]);
    let now = one.now.max(two.now);

    // A zone arbiter may neither force the next round nor undo a start.
    let refused = hub.start_round(HubMs(now), force(2, Some("IA Ola")));
    assert!(
        matches!(refused, Err(StartError::NotChief(_))),
        "{refused:?}"
    );

    // The chief forces round 2 mid-game: both games are archived, both boards begin anew.
    hub.start_round(HubMs(now), force(2, None))
        .expect("the chief forces round 2");
    for n in [1, 2] {
        let board = hub.hall().board(BoardNo(n)).unwrap();
        assert_eq!(board.round(), RoundNo(2), "board {n}");
        assert!(board.game().moves().is_empty(), "board {n}");
        assert!(hub.hub().archive().get(RoundNo(1), BoardNo(n)).is_some());
    }

    // The players did not stop: Black answers on board 1 (to round 2's game, a position no
    // move leads to), and the clock runs on.
    one.play(&mut hub, "b8c6", 15_000);
    two.reading(&mut hub, 10_000, Some(Color::Black), None);
    let now = one.now.max(two.now);
    assert!(hub
        .hall()
        .board(BoardNo(1))
        .unwrap()
        .game()
        .moves()
        .is_empty());

    // Not the chief; not a round the last start began: refused, nothing changes.
    let refused = hub.undo_start(HubMs(now), undo(2, Some("IA Ola")));
    assert!(
        matches!(refused, Err(StartError::NotChief(_))),
        "{refused:?}"
    );
    let refused = hub.undo_start(HubMs(now), undo(1, None));
    assert!(
        matches!(refused, Err(StartError::NotUndoable(RoundNo(1)))),
        "{refused:?}"
    );

    // A restart now (the window open) folds to the same hall, and can undo it the same.
    let (mut restarted, _) = hub.restarted();

    let rounds = hub
        .undo_start(HubMs(now), undo(2, Some("IA Eva")))
        .expect("the chief of the configuration undoes round 2's start");
    let two_started = rounds.iter().find(|r| r.round == RoundNo(2)).unwrap();
    let undone = two_started.started[0]
        .undone
        .as_ref()
        .expect("listed as undone");
    assert_eq!(undone.by, "IA Eva");
    assert!(rounds.iter().any(|r| r.round == RoundNo(1) && r.in_play));

    // Board 1's game is given back with the move made meanwhile; board 2's clock ran on.
    let given = detail(&hub, 1, now);
    assert_eq!(given.summary.round, RoundNo(1));
    assert_eq!(sans(&given), ["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(sans(&detail(&hub, 2, now)), ["d4"]);
    assert!(hub.hub().archive().get(RoundNo(1), BoardNo(1)).is_none());
    assert!(hub.hub().archive().get(RoundNo(1), BoardNo(2)).is_none());

    // The restart taken before the undo undoes it to the same hall.
    restarted
        .undo_start(HubMs(now), undo(2, None))
        .expect("the restarted hub undoes it too");
    for n in [1, 2] {
        assert_eq!(
            detail(&restarted, n, now),
            detail(&hub, n, now),
            "board {n}"
        );
    }

    // And a restart after the undo folds the journal to the same hall: the start taken
    // back, board 1's events all of round 1's game.
    let (after, _) = hub.restarted();
    for n in [1, 2] {
        assert_eq!(detail(&after, n, now), detail(&hub, n, now), "board {n}");
        assert_eq!(
            after.hub().relay().timeline(BoardNo(n)),
            hub.hub().relay().timeline(BoardNo(n)),
            "board {n}'s feed"
        );
    }
    assert_eq!(after.hub().round_states(), hub.hub().round_states());

    // The game goes on where it is.
    one.play(&mut hub, "f1b5", 10_000);
    assert_eq!(sans(&detail(&hub, 1, one.now)).len(), 5);
}

#[test]
fn a_move_in_the_new_round_or_a_decision_there_closes_the_undo_for_good() {
    let mut hub = hall();
    let mut one = playing(&mut hub, 1, &["e2e4"]);
    let _two = playing(&mut hub, 2, &["d2d4", "d7d5"]);
    hub.start_round(HubMs(one.now), force(2, None)).unwrap();

    // Board 1 is set up again and round 2's game begins: a move in it.
    one.position = shakmaty::Chess::default();
    let start = one.position.board().clone();
    one.show(&mut hub, &start);
    one.reading(&mut hub, 1_000, Some(Color::White), None);
    one.play(&mut hub, "c2c4", 5_000);
    assert_eq!(
        hub.hall().board(BoardNo(1)).unwrap().game().moves().len(),
        1
    );

    let refused = hub.undo_start(HubMs(one.now), undo(2, None));
    let closed = StartError::UndoClosed {
        round: RoundNo(2),
        why: UndoClosed::Moved(BoardNo(1)),
    };
    assert_eq!(refused, Err(closed.clone()));
    assert_eq!(hub.hall().board(BoardNo(1)).unwrap().round(), RoundNo(2));
    // A restart closes it at the same event.
    let (mut restarted, _) = hub.restarted();
    assert_eq!(
        restarted.undo_start(HubMs(one.now), undo(2, None)),
        Err(closed)
    );

    // Round 3, forced: an arbiter's decision at board 2 in it closes that undo too.
    let now = one.now + FIVE_MINUTES as u64;
    hub.start_round(HubMs(now), force(3, None)).unwrap();
    let action = serde_json::from_value(serde_json::json!({
        "arbiter": "IA Ola", "decision": "adjust_time", "side": "white", "ms": 60000,
        "reason": "clock_correction"
    }))
    .unwrap();
    let (answer, _) = hub.decide(HubMs(now), BoardNo(2), action);
    answer.expect("the decision fits");
    let refused = hub.undo_start(HubMs(now), undo(3, None));
    assert_eq!(
        refused,
        Err(StartError::UndoClosed {
            round: RoundNo(3),
            why: UndoClosed::Decided(BoardNo(2)),
        })
    );
}

#[test]
fn a_start_in_order_is_not_undone() {
    let mut hub = hall();
    let s = playing(&mut hub, 1, &["e2e4"]);
    let start = StartRequest {
        force: false,
        ..force(2, None)
    };
    // Round 1 is still played: an unforced start is refused, as before.
    assert!(hub.start_round(HubMs(s.now), start.clone()).is_err());
    hub.start_round(HubMs(s.now), force(2, None)).unwrap();
    hub.undo_start(HubMs(s.now), undo(2, None)).unwrap();
    // Taken back once: nothing left to undo, and round 2 may start again.
    assert_eq!(
        hub.undo_start(HubMs(s.now), undo(2, None)),
        Err(StartError::NotUndoable(RoundNo(2)))
    );
    hub.start_round(HubMs(s.now), force(2, None))
        .expect("round 2 starts again after its start was undone");
}
