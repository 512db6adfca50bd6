//! The arbiter's decisions (reinstate a position, declare a result, penalties and clock
//! corrections) at event level through the hall, and through a real hub process whose
//! journal folds them in again after a SIGKILL.

use crate::support;

use hub::core::arbiter::{DecisionError, DecisionRecord};
use hub::core::clock::{ClockEvent, DeviationKind};
use hub::core::effect::Effect;
use hub::core::hall::Hall;
use hub::core::ids::DecisionId;
use hub::core::laws::{Edition, GameType, Rules};
use hub::core::side::Side;
use hub::core::time::HubMs;
use protocol::{BoardNo, Seq};
use serde_json::{json, Value};
use shakmaty::Position;
use support::events::Script;

const BOARD: BoardNo = BoardNo(1);

fn hall(rules: Rules) -> Hall {
    Hall::new(rules).with_time_control(Some("5400+30".parse().unwrap()))
}

fn decide(
    hall: &mut Hall,
    script: &Script,
    id: u64,
    action: Value,
) -> Result<Vec<Effect>, DecisionError> {
    let mut action = action;
    action["arbiter"] = json!("IA Test");
    let record = DecisionRecord {
        id: DecisionId(id),
        board: BOARD,
        at: HubMs(script.now),
        after_seq: Seq(script.last_seq()),
        round: None,
        action: serde_json::from_value(action).expect("an arbiter action"),
    };
    hall.decide(&record, false)
}

fn detail(hall: &Hall, script: &Script) -> Value {
    serde_json::to_value(hall.detail(BOARD, HubMs(script.now)).unwrap()).unwrap()
}

/// The clock deviations among `effects`: kind, article, side.
fn deviations(effects: &[Effect]) -> Vec<(DeviationKind, &str, Side)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Clock {
                event: ClockEvent::Deviation(d),
                ..
            } => Some((d.kind, d.article.as_ref(), d.side)),
            _ => None,
        })
        .collect()
}

fn moves(detail: &Value) -> Vec<String> {
    serde_json::from_value(detail["moves"].clone()).unwrap()
}

/// A board showing the start position; 5400+30: every clock starts at 1:30:30 (the first
/// increment shows before move 1).
fn started(hall: &mut Hall) -> Script {
    let mut s = Script::new(BOARD, 5_430_000);
    s.increment_ms = 30_000;
    let start = s.position.board().clone();
    s.show(hall, &start);
    s
}

#[test]
fn reinstating_withdraws_the_moves_after_the_position_7_5_1() {
    let mut hall = hall(Rules::default());
    let mut s = started(&mut hall);
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6"] {
        s.play(&mut hall, uci, 5_000);
    }
    assert_eq!(moves(&detail(&hall, &s)).len(), 4);

    decide(&mut hall, &s, 1, json!({"decision": "reinstate", "ply": 2})).unwrap();
    let d = detail(&hall, &s);
    assert_eq!(moves(&d), ["e4", "e5"]);
    assert_eq!(
        d["fen"],
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );
    assert_eq!(d["clock_ms"].as_array().unwrap().len(), 2);
    assert_eq!(d["decisions"][0]["article"], "7.5.1");
    assert_eq!(d["decisions"][0]["arbiter"], "IA Test");
    assert_eq!(d["decisions"][0]["after_seq"], s.last_seq());
    // The board still shows the position after 2...Nc6: not the game's, nor a successor.
    assert_eq!(d["board_sync"], "unsettled");

    // The players set the position back and play on from it.
    let back: shakmaty::Chess = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    s.position = back.clone();
    s.show(&mut hall, back.board());
    assert_eq!(detail(&hall, &s)["board_sync"], "in_sync");
    s.play(&mut hall, "b1c3", 5_000);
    assert_eq!(moves(&detail(&hall, &s)), ["e4", "e5", "Nc3"]);
}

#[test]
fn the_2009_laws_name_their_own_article_for_reinstating() {
    let rules = Rules {
        edition: Edition::Laws2009,
        ..Rules::default()
    };
    let mut hall = hall(rules);
    let mut s = started(&mut hall);
    s.play(&mut hall, "e2e4", 5_000);
    decide(&mut hall, &s, 1, json!({"decision": "reinstate", "ply": 0})).unwrap();
    let d = detail(&hall, &s);
    assert_eq!(moves(&d), Vec::<String>::new());
    assert_eq!(d["decisions"][0]["article"], "7.4a");
}

#[test]
fn after_an_illegal_move_the_penalty_shows_on_the_clock_7_5_5() {
    let mut hall = hall(Rules::default());
    let mut s = started(&mut hall);
    s.play(&mut hall, "e2e4", 5_000);
    // Black moves the king two squares (Ke8-e6) and presses: a completed illegal move.
    let mut illegal = s.position.board().clone();
    let king = illegal.remove_piece_at(shakmaty::Square::E8).unwrap();
    illegal.set_piece_at(shakmaty::Square::E6, king);
    s.show(&mut hall, &illegal);
    s.press(&mut hall, 4_000, 30_000);
    let d = detail(&hall, &s);
    assert_eq!(d["illegal_moves"][0]["kind"], "illegal_move");
    assert_eq!(d["illegal_moves"][0]["ruling"]["penalty"]["seconds"], 120);

    // The arbiter reinstates the position before it (nothing to withdraw) and gives White
    // the two minutes; the clock is stopped, set and restarted with Black to move.
    decide(&mut hall, &s, 1, json!({"decision": "reinstate", "ply": 1})).unwrap();
    assert_eq!(moves(&detail(&hall, &s)), ["e4"]);
    s.clock[0] += 120_000;
    s.set_clock(&mut hall, shakmaty::Color::Black);
    let position = s.position.clone();
    s.show(&mut hall, position.board());
    let effects = s.play(&mut hall, "e7e5", 6_000);
    assert_eq!(
        deviations(&effects),
        [(DeviationKind::PenaltyApplied, "7.5.5", Side::White)],
        "the penalty, not an unexplained jump"
    );
}

#[test]
fn a_rejected_claim_gives_the_opponent_the_editions_time_9_5_3() {
    for (edition, game_type, ms, article) in [
        (Edition::Laws2023, GameType::Standard, 120_000, "9.5.3"),
        (Edition::Laws2023, GameType::Rapid, 60_000, "9.5.3"),
        (Edition::Laws2009, GameType::Standard, 180_000, "9.5b"),
    ] {
        let rules = Rules {
            edition,
            game_type,
            ..Rules::default()
        };
        let mut hall = hall(rules);
        let mut s = started(&mut hall);
        s.play(&mut hall, "e2e4", 5_000);
        s.play(&mut hall, "e7e5", 5_000);
        decide(
            &mut hall,
            &s,
            1,
            json!({"decision": "claim_rejected", "by": "white"}),
        )
        .unwrap();
        let d = detail(&hall, &s);
        let entry = &d["decisions"][0];
        assert_eq!(entry["article"], article, "{edition:?} {game_type:?}");
        assert_eq!(entry["clock_expects_ms"], ms);
        assert_eq!(entry["clock_side"], "black");
        // The arbiter adds the time; White moves on and presses.
        s.clock[1] += ms as u32;
        let effects = s.play(&mut hall, "g1f3", 5_000);
        assert!(
            deviations(&effects).contains(&(DeviationKind::PenaltyApplied, article, Side::Black)),
            "{edition:?} {game_type:?}: {effects:?}"
        );
    }
}

#[test]
fn a_declared_result_ends_the_game_until_withdrawn() {
    let mut hall = hall(Rules::default());
    let mut s = started(&mut hall);
    s.play(&mut hall, "e2e4", 5_000);
    decide(
        &mut hall,
        &s,
        1,
        json!({"decision": "result", "result": "1-0", "cause": "flag_fall"}),
    )
    .unwrap();
    let d = detail(&hall, &s);
    assert_eq!(d["status"], "flag_fall");
    assert_eq!(d["result"], "1-0");
    assert_eq!(d["article"], "6.9");
    // A move after the result does not count.
    s.play(&mut hall, "e7e5", 5_000);
    assert_eq!(moves(&detail(&hall, &s)), ["e4"]);
    assert_eq!(
        decide(&mut hall, &s, 2, json!({"decision": "reinstate", "ply": 0})),
        Err(DecisionError::ResultDeclared)
    );
    decide(
        &mut hall,
        &s,
        3,
        json!({"decision": "result", "result": "*"}),
    )
    .unwrap();
    let d = detail(&hall, &s);
    assert_eq!(d["status"], "playing");
    assert_eq!(d["result"], "*");
    assert_eq!(
        d["decisions"].as_array().unwrap().len(),
        2,
        "refused ones leave no trace"
    );
}

#[test]
fn a_decision_that_does_not_fit_changes_nothing() {
    let mut hall = hall(Rules::default());
    let mut s = started(&mut hall);
    s.play(&mut hall, "e2e4", 5_000);
    let before = detail(&hall, &s);
    assert_eq!(
        decide(&mut hall, &s, 1, json!({"decision": "reinstate", "ply": 5})),
        Err(DecisionError::PlyBeyondGame { ply: 5, moves: 1 })
    );
    assert_eq!(
        decide(
            &mut hall,
            &s,
            1,
            json!({"decision": "result", "result": "0-1"})
        ),
        Err(DecisionError::CauseMissing)
    );
    assert_eq!(
        decide(
            &mut hall,
            &s,
            1,
            json!({"decision": "adjust_time", "side": "white", "ms": 0, "reason": "penalty"})
        ),
        Err(DecisionError::NothingToAdjust)
    );
    assert_eq!(detail(&hall, &s), before);
    let record = DecisionRecord {
        id: DecisionId(1),
        board: BoardNo(2),
        at: HubMs(s.now),
        after_seq: Seq(0),
        round: None,
        action: serde_json::from_value(
            json!({"arbiter": "IA Test", "decision": "reinstate", "ply": 0}),
        )
        .unwrap(),
    };
    assert_eq!(
        hall.decide(&record, false),
        Err(DecisionError::UnknownBoard(BoardNo(2)))
    );
}

#[test]
fn decisions_over_http_are_durable_and_replay_after_a_sigkill() {
    use support::{http_json, http_post, Hub, Node, Replay};
    let dir = tempfile::tempdir().unwrap();
    let (mut hub, _) = Hub::embedded(dir.path());
    let game = Replay::new(1, "fide_world_cup_2025_blitz_5+3.pgn", 2, 3.0);
    let report = Node::start(&game, &hub, dir.path()).finish(std::time::Duration::from_secs(60));
    assert_eq!(report["acked"], report["events"]);
    let played = moves(&http_json(&hub.web, "/api/boards/1"));
    assert_eq!(played, game.sans);
    let ply = played.len() - 2;

    let http = hub.web.clone();
    let post =
        |body: Value| http_post(&http, "/api/boards/1/decisions", &body.to_string()).unwrap();
    let (status, body) = post(json!({
        "arbiter": "IA Berg", "decision": "reinstate", "ply": ply, "note": "knocked pieces"
    }));
    assert_eq!(status, 200, "{body}");
    let entry: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(entry["id"], 1);
    assert_eq!(entry["article"], "7.5.1");
    assert_eq!(entry["note"], "knocked pieces");

    let (status, body) = post(json!({"arbiter": "IA Berg", "decision": "reinstate", "ply": 999}));
    assert_eq!(status, 409, "{body}");
    let (status, _) = post(json!({"arbiter": "IA Berg", "decision": "resign_everyone"}));
    assert!(
        (400..500).contains(&status),
        "an unknown decision is refused: {status}"
    );
    let (status, _) = http_post(
        &hub.web,
        "/api/boards/99/decisions",
        &json!({"arbiter": "IA Berg", "decision": "reinstate", "ply": 0}).to_string(),
    )
    .unwrap();
    assert_eq!(status, 404);
    let (status, body) = post(json!({
        "arbiter": "IA Berg", "decision": "result", "result": "0-1", "cause": "resignation"
    }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["id"], 2);

    let before = http_json(&hub.web, "/api/boards/1");
    assert_eq!(moves(&before), played[..ply]);
    assert_eq!(before["status"], "resignation");
    assert_eq!(before["result"], "0-1");
    assert_eq!(before["article"], "5.1.2");
    assert_eq!(before["decisions"].as_array().unwrap().len(), 2);

    // SIGKILL right after the answers: they were given only once the decisions were durable.
    hub.kill();
    hub.restart();
    let after = http_json(&hub.web, "/api/boards/1");
    for field in [
        "moves",
        "fen",
        "status",
        "result",
        "article",
        "decisions",
        "clock_ms",
    ] {
        assert_eq!(after[field], before[field], "{field} after the restart");
    }
    // The next decision continues the numbering.
    let (status, body) = post(json!({"arbiter": "IA Berg", "decision": "result", "result": "*"}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["id"], 3);
}
