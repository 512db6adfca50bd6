//! The rows of the editions table in `shared/LAWS.md` that concern what the hub shows the
//! arbiter during a game: claims on the set-up in rapid and blitz (2023 A.5.1, 2014 A.4a,
//! 2009 A4a) and the quickplay finish (2023 Guidelines III.4, 2014 G.4, 2009 10.2). The
//! other rows are tested where they are decided: illegal moves and wrong claims in
//! `core::laws` and `tests/decisions.rs`, flags in `core::flag`, automatic draws in
//! `core::ending`, speed classes in `core::laws`.

use crate::support;

use hub::core::hall::Hall;
use hub::core::laws::{Edition, GameType, Rules};
use hub::core::time::HubMs;
use protocol::BoardNo;
use serde_json::Value;
use shakmaty::Position;
use support::events::Script;

fn detail(hall: &Hall, s: &Script) -> Value {
    serde_json::to_value(hall.detail(BoardNo(1), HubMs(s.now)).unwrap()).unwrap()
}

fn started(hall: &mut Hall, clock_ms: u32) -> Script {
    let mut s = Script::new(BoardNo(1), clock_ms);
    let start = s.position.board().clone();
    s.show(hall, &start);
    s
}

/// The Ruy Lopez's main line, 10 moves each (no repetition to end the game early).
const OPENING: [&str; 20] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5",
    "a4b3", "d7d6", "c2c3", "e8g8", "h2h3", "c6a5", "b3c2", "c7c5",
];

#[test]
fn set_up_claims_close_after_ten_moves_each_in_rapid_three_under_2009() {
    for (edition, game_type, limit, article) in [
        (Edition::Laws2023, GameType::Rapid, Some(10), "A.5.1"),
        (Edition::Laws2018, GameType::Blitz, Some(10), "A.5.1"),
        (Edition::Laws2014, GameType::Rapid, Some(10), "A.4a"),
        (Edition::Laws2009, GameType::Rapid, Some(3), "A4a"),
        (Edition::Laws2023, GameType::Standard, None, ""),
    ] {
        let rules = Rules {
            edition,
            game_type,
            ..Rules::default()
        };
        let mut hall = Hall::new(rules);
        let mut s = started(&mut hall, 600_000);
        let what = format!("{edition:?} {game_type:?}");
        let Some(limit) = limit else {
            assert_eq!(detail(&hall, &s)["setup_claims"], Value::Null, "{what}");
            continue;
        };
        // Each player completes limit - 1 moves, then White its last: still open until
        // Black has completed his too.
        for uci in OPENING.iter().take((2 * limit - 1) as usize) {
            s.play(&mut hall, uci, 1_000);
        }
        let open = detail(&hall, &s);
        assert_eq!(open["setup_claims"]["open"], true, "{what}");
        assert_eq!(open["setup_claims"]["article"], article, "{what}");
        assert_eq!(open["setup_claims"]["until_moves_each"], limit, "{what}");
        s.play(&mut hall, OPENING[(2 * limit - 1) as usize], 1_000);
        let closed = detail(&hall, &s);
        assert_eq!(closed["ply"], 2 * limit, "{what}");
        assert_eq!(closed["setup_claims"]["open"], false, "{what}");
    }
}

#[test]
fn a_quickplay_finish_begins_under_two_minutes_without_increment() {
    for (edition, game_type, control, article) in [
        (Edition::Laws2023, GameType::Rapid, "900", Some("III.4")),
        (Edition::Laws2023, GameType::Standard, "40/5400:900", None),
        (Edition::Laws2014, GameType::Rapid, "900", Some("G.4")),
        (Edition::Laws2009, GameType::Rapid, "900", Some("10.2")),
        // An increment, or blitz (III.2.2): no quickplay finish.
        (Edition::Laws2023, GameType::Rapid, "900+10", None),
        (Edition::Laws2023, GameType::Blitz, "900", None),
    ] {
        let rules = Rules {
            edition,
            game_type,
            ..Rules::default()
        };
        let tc: protocol::time_control::TimeControl = control.parse().unwrap();
        let mut hall = Hall::new(rules).with_time_control(Some(tc.clone()));
        let start_ms = tc.initial_ms() as u32;
        let mut s = started(&mut hall, start_ms);
        s.increment_ms = start_ms - 900_000;
        let what = format!("{edition:?} {game_type:?} {control}");
        // White thinks until 2:10 are left: not yet.
        s.play(&mut hall, "e2e4", start_ms - 130_000 - s.increment_ms);
        s.play(&mut hall, "e7e5", 5_000);
        assert_eq!(
            detail(&hall, &s)["clock"]["quickplay_finish"],
            Value::Null,
            "{what}"
        );
        // Then under two minutes with White to move.
        s.play(&mut hall, "g1f3", 20_000);
        s.play(&mut hall, "b8c6", 5_000);
        let d = detail(&hall, &s);
        match article {
            Some(article) => {
                assert_eq!(
                    d["clock"]["quickplay_finish"]["side"], "white",
                    "{what}: {d}"
                );
                assert_eq!(d["clock"]["quickplay_finish"]["article"], article, "{what}");
            }
            None => assert_eq!(d["clock"]["quickplay_finish"], Value::Null, "{what}"),
        }
    }
}
