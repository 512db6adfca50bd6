//! The alert desk at event level: board events through the hub's core (the hall, the desk,
//! the journal flushing at once), the arbiters' decisions and the passing of time. Each
//! test names the article that applies.

use crate::support;

use hub::core::alerts::routing::{Arbiter, Zone};
use hub::core::alerts::{
    Alert, AlertChange, AlertKind, AlertSettings, AlertState, Change, Language, Routing, Severity,
};
use hub::core::arbiter::{DecisionError, GameResult, MAX_NAME_CHARS, MAX_NOTE_CHARS};
use hub::core::hub::HubConfig;
use hub::core::ids::{AlertId, RoundNo};
use hub::core::laws::{GameType, Rules, Supervision};
use hub::core::pairings::{Pairing, Rounds, Seat};
use hub::core::time::HubMs;
use protocol::BoardNo;
use serde_json::json;
use shakmaty::{Color, Position, Square};
use support::events::Script;
use support::hub::TestHub;

fn routing() -> Routing {
    Routing {
        zones: vec![
            Zone {
                name: "A".into(),
                boards: vec![BoardNo(1)..=BoardNo(10)],
            },
            Zone {
                name: "B".into(),
                boards: vec![BoardNo(11)..=BoardNo(20)],
            },
        ],
        arbiters: vec![
            Arbiter {
                name: "ola".into(),
                zones: vec!["A".into()],
                language: Language::Norwegian,
                chief: false,
            },
            Arbiter {
                name: "eva".into(),
                zones: vec![],
                language: Language::Swedish,
                chief: true,
            },
        ],
    }
}

/// A hall of boards and the desk that watches it: the hub's core.
struct Room {
    hub: TestHub,
}

impl Room {
    fn new(rules: Rules, control: &str, settings: AlertSettings) -> Room {
        Room::with_rounds(rules, control, settings, Rounds::default())
    }

    fn with_rounds(rules: Rules, control: &str, settings: AlertSettings, rounds: Rounds) -> Room {
        Room {
            hub: TestHub::new(HubConfig {
                event: "t".into(),
                rules,
                time_control: Some(control.parse().unwrap()),
                routing: routing(),
                alerts: settings,
                rounds,
                ..HubConfig::default()
            }),
        }
    }

    fn standard() -> Room {
        Room::new(Rules::default(), "5400+30", AlertSettings::default())
    }

    /// The arbiter's decision at the script's board, at its time.
    fn decide(&mut self, s: &Script, action: serde_json::Value) -> Vec<AlertChange> {
        let mut action = action;
        action["arbiter"] = json!("IA Test");
        let action = serde_json::from_value(action).unwrap();
        let (answer, changes) = self.hub.decide(HubMs(s.now), s.board(), action);
        answer.expect("the decision fits");
        changes
    }

    fn tick(&mut self, at: u64) -> Vec<AlertChange> {
        self.hub.tick(HubMs(at))
    }

    fn open(&self) -> Vec<&Alert> {
        self.hub
            .desk()
            .alerts()
            .filter(|a| a.state.is_open())
            .collect()
    }
}

/// A game at `board` with both clocks on `clock_ms` (+30 s a move), White to move.
fn started(room: &mut Room, board: u16, clock_ms: u32) -> Script {
    start(room, board, clock_ms).0
}

/// [`started`], with the alert changes its start made.
fn start(room: &mut Room, board: u16, clock_ms: u32) -> (Script, Vec<AlertChange>) {
    let mut s = Script::new(BoardNo(board), clock_ms);
    s.increment_ms = 30_000;
    let start = s.position.board().clone();
    let mut changes = s.show(&mut room.hub, &start);
    changes.extend(s.reading(&mut room.hub, 0, Some(Color::White), None));
    (s, changes)
}

/// A round in play: (board, White, Black) for each game, starting at `start` (Unix ms).
fn round(games: &[(u16, &str, &str)], start: Option<u64>) -> Rounds {
    let seat = |name: &str| Seat {
        name: name.to_owned(),
        fide_id: None,
        rating: None,
        title: None,
        federation: None,
        start_rank: 0,
    };
    let games = games
        .iter()
        .map(|(board, white, black)| Pairing {
            board: BoardNo(*board),
            white: seat(white),
            black: seat(black),
            result: "*".into(),
            white_team: None,
            black_team: None,
            section: None,
        })
        .collect();
    Rounds {
        pairings: [(RoundNo(1), games)].into(),
        first: Some(RoundNo(1)),
        starts: start.map(|at| (RoundNo(1), at)).into_iter().collect(),
        byes: Default::default(),
    }
}

fn raised(changes: &[AlertChange]) -> Vec<&Alert> {
    changes
        .iter()
        .filter(|c| c.change == Change::Raised)
        .map(|c| &c.alert)
        .collect()
}

#[test]
fn a_flag_fall_is_one_alert_with_6_9_in_its_zone_and_the_result_decision_resolves_it() {
    let players = [
        (3, "Carlsen, Magnus", "Nakamura, Hikaru"),
        (4, "Caruana, Fabiano", "Gukesh, D"),
    ];
    let rounds = round(&players, None);
    let mut room = Room::with_rounds(Rules::default(), "5400+30", Default::default(), rounds);
    let mut s = started(&mut room, 3, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    s.play(&mut room.hub, "e7e5", 5_000);
    let changes = s.reading(&mut room.hub, 1_000, Some(Color::White), Some(Color::White));
    let alerts = raised(&changes);
    assert_eq!(alerts.len(), 1, "{changes:?}");
    let alert = alerts[0];
    assert_eq!(alert.kind, AlertKind::FlagFall);
    assert_eq!(alert.article.as_deref(), Some("6.9"));
    assert_eq!((alert.zone.as_str(), alert.board), ("A", Some(BoardNo(3))));
    assert_eq!(alert.to, ["ola"]);
    assert_eq!(
        alert.players.as_deref(),
        Some("Carlsen, Magnus – Nakamura, Hikaru")
    );
    assert_eq!(alert.facts.result, Some(GameResult::BlackWins));
    assert_eq!(alert.severity, Severity::Urgent);
    assert_eq!(
        alert.text,
        "Board 3: White's flag fell. Result by the Laws: 0-1."
    );
    assert_eq!(
        alert.in_language(Language::Danish).text,
        "Bord 3: Hvids tid er udløbet. Resultat efter reglerne: 0-1."
    );

    // The same event again (a duplicate) raises nothing new.
    assert!(room.hub.uplink(HubMs(s.now), s.last_event()).is_empty());

    let changes = room.decide(
        &s,
        json!({"decision": "result", "result": "0-1", "cause": "flag_fall"}),
    );
    let resolved: Vec<_> = changes
        .iter()
        .filter(|c| c.change == Change::Resolved)
        .collect();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].alert.resolved.as_ref().unwrap().by, "IA Test");
    assert!(resolved[0].alert.outcome.as_ref().unwrap().contains("0-1"));
    assert!(room.open().is_empty());
}

#[test]
fn illegal_moves_7_5_5_first_time_to_the_opponent_second_the_game() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 12, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    // Black moves the king two squares (Ke8-e6) and presses.
    let mut illegal = s.position.board().clone();
    let king = illegal.remove_piece_at(Square::E8).unwrap();
    illegal.set_piece_at(Square::E6, king);
    s.show(&mut room.hub, &illegal);
    let changes = s.press(&mut room.hub, 4_000, 30_000);
    let alert = raised(&changes)[0].clone();
    assert_eq!(alert.kind, AlertKind::IllegalMove);
    assert_eq!(alert.article.as_deref(), Some("7.5.5"));
    assert_eq!(alert.facts.seconds, Some(120));
    assert_eq!(alert.zone, "B");
    assert_eq!(alert.to, ["eva"], "nobody watches B: the chief does");
    assert_eq!(alert.deadline, None, "standard chess: no A.5.2 deadline");

    // The arbiter reinstates: the alert is resolved by the decision.
    let changes = room.decide(&s, json!({"decision": "reinstate", "ply": 1}));
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].change, Change::Resolved);
    assert_eq!(changes[0].alert.id, alert.id);

    // The same illegal move again: the second, which loses (7.5.5).
    let position = s.position.clone();
    s.show(&mut room.hub, position.board());
    s.show(&mut room.hub, &illegal);
    let changes = s.press(&mut room.hub, 4_000, 30_000);
    let second = raised(&changes)[0];
    assert_eq!(second.kind, AlertKind::SecondIllegalMove);
    assert_eq!(second.facts.result, Some(GameResult::WhiteWins));
    assert_ne!(second.id, alert.id);
}

#[test]
fn in_unsupervised_rapid_an_illegal_move_expires_when_the_opponent_moves_a_5_2() {
    let rules = Rules {
        game_type: GameType::Rapid,
        supervision: Supervision::Partial,
        ..Rules::default()
    };
    let mut room = Room::new(rules, "900+10", AlertSettings::default());
    let mut s = started(&mut room, 1, 900_000);
    s.increment_ms = 10_000;
    s.play(&mut room.hub, "e2e4", 5_000);
    let mut illegal = s.position.board().clone();
    let king = illegal.remove_piece_at(Square::E8).unwrap();
    illegal.set_piece_at(Square::E6, king);
    s.show(&mut room.hub, &illegal);
    let changes = s.press(&mut room.hub, 4_000, 10_000);
    let alert = raised(&changes)[0].clone();
    assert_eq!(alert.article.as_deref(), Some("A.5.2"));
    assert_eq!(alert.facts.seconds, Some(60), "1 minute in rapid");
    assert_eq!(
        alert.deadline,
        Some(hub::core::alerts::Deadline::OpponentsNextMove)
    );
    assert!(alert
        .action
        .ends_with("Only before the opponent's next move."));

    // Nobody acts; White plays on from the position it left.
    s.position = "rnbq1bnr/pppppppp/4k3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQ - 0 2"
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    let changes = s.play(&mut room.hub, "d2d4", 3_000);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].change, Change::Expired);
    assert_eq!(changes[0].alert.state, AlertState::Expired);
}

#[test]
fn a_paused_clock_calls_the_arbiter_6_11_2_and_stays_open_when_it_runs_again() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 4, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    let changes = s.reading(&mut room.hub, 2_000, None, None);
    let alert = raised(&changes)[0].clone();
    assert_eq!(alert.kind, AlertKind::ClockPaused);
    assert_eq!(alert.article.as_deref(), Some("6.11.2"));
    let changes = s.reading(&mut room.hub, 40_000, Some(Color::Black), None);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].change, Change::Updated);
    assert_eq!(changes[0].alert.facts.seconds, Some(40));
    assert_eq!(changes[0].alert.state, AlertState::Raised);
}

#[test]
fn a_silent_node_is_offline_after_15_s_and_expires_when_heard_again() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 5, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    let heard = s.now;
    assert!(room.tick(heard + 14_000).is_empty());
    let changes = room.tick(heard + 16_000);
    let offline: Vec<_> = raised(&changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::NodeOffline)
        .collect();
    assert_eq!(offline.len(), 1, "{changes:?}");
    assert_eq!(offline[0].article, None, "no Law covers a node");
    assert_eq!(offline[0].facts.seconds, Some(16));
    // Ticks while it stays silent add nothing.
    assert!(room
        .tick(heard + 20_000)
        .iter()
        .all(|c| c.alert.kind != AlertKind::NodeOffline));
    // The node is back.
    s.now = heard + 25_000;
    let mut changes = s.send(&mut room.hub, protocol::UplinkBody::Heartbeat);
    changes.extend(room.tick(s.now));
    let back: Vec<_> = changes
        .iter()
        .filter(|c| c.alert.kind == AlertKind::NodeOffline)
        .collect();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].change, Change::Expired);
}

#[test]
fn an_unacknowledged_alert_escalates_to_the_chief_an_acknowledged_one_does_not() {
    let mut room = Room::standard();
    let mut s1 = started(&mut room, 1, 5_400_000);
    let mut s2 = started(&mut room, 2, 5_400_000);
    s1.play(&mut room.hub, "e2e4", 5_000);
    s2.play(&mut room.hub, "d2d4", 5_000);
    let a = s1.reading(&mut room.hub, 1_000, None, None);
    let b = s2.reading(&mut room.hub, 1_000, None, None);
    let (a, b) = (raised(&a)[0].id, raised(&b)[0].id);
    let acked = room
        .hub
        .acknowledge(HubMs(s2.now + 5_000), b, "ola")
        .unwrap();
    assert_eq!(acked.unwrap().alert.acknowledged.unwrap().by, "ola");
    // Idempotent: a second acknowledgement changes nothing.
    assert!(room
        .hub
        .acknowledge(HubMs(s2.now + 6_000), b, "ola")
        .unwrap()
        .is_none());

    let later = HubMs(s1.now + 31_000);
    let changes = room.tick(later.0);
    let escalated: Vec<_> = changes
        .iter()
        .filter(|c| c.change == Change::Escalated)
        .collect();
    assert_eq!(escalated.len(), 1, "urgent: 30 s");
    assert_eq!(escalated[0].alert.id, a);
    assert_eq!(escalated[0].alert.to, ["ola", "eva"]);
    assert!(room
        .tick(later.0 + 1_000)
        .iter()
        .all(|c| c.change != Change::Escalated));

    // Resolving is idempotent too; an unknown id is an error.
    let done = room.hub.resolve(later, a, "eva", Some("clock set".into()));
    assert_eq!(done.unwrap().unwrap().alert.state, AlertState::Resolved);
    assert!(room.hub.resolve(later, a, "eva", None).unwrap().is_none());
    assert!(room.hub.acknowledge(later, a, "eva").unwrap().is_none());
    assert!(room.hub.resolve(later, AlertId(999), "eva", None).is_err());
}

/// Names and notes come from anyone who can reach a pager topic or the API; they travel in
/// every alert change and in the zone's retained open list. Past their bounds (64 and 500
/// characters) they are refused with the reason and nothing changes; at the bound they are
/// kept.
#[test]
fn an_arbiters_name_or_note_past_its_bound_is_refused_and_changes_nothing() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 1, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    let flag = s.reading(&mut room.hub, 1_000, None, None);
    let id = raised(&flag)[0].id;
    let now = HubMs(s.now + 1_000);
    let long_name = "O".repeat(MAX_NAME_CHARS + 1);
    let refused = room.hub.acknowledge(now, id, &long_name).unwrap_err();
    assert!(refused.to_string().contains("at most 64"), "{refused}");
    let note = Some("ø".repeat(MAX_NOTE_CHARS + 1));
    assert!(room.hub.resolve(now, id, "ola", note).is_err());
    assert_eq!(room.hub.desk().get(id).unwrap().state, AlertState::Raised);

    let mut action = json!({"arbiter": "IA Test", "decision": "result", "result": "0-1",
        "cause": "flag_fall", "note": "n".repeat(MAX_NOTE_CHARS + 1)});
    let (answer, changes) = room.hub.decide(
        now,
        s.board(),
        serde_json::from_value(action.clone()).unwrap(),
    );
    assert!(
        matches!(answer, Err(DecisionError::TooLong(_))),
        "{answer:?}"
    );
    assert!(changes.is_empty());
    assert!(room
        .hub
        .hall()
        .board(s.board())
        .unwrap()
        .decisions()
        .is_empty());

    // At the bounds, both are kept.
    action["note"] = json!("n".repeat(MAX_NOTE_CHARS));
    action["arbiter"] = json!("A".repeat(MAX_NAME_CHARS));
    let (answer, _) = room
        .hub
        .decide(now, s.board(), serde_json::from_value(action).unwrap());
    assert_eq!(
        answer.unwrap().record.action.arbiter.chars().count(),
        MAX_NAME_CHARS
    );
}

#[test]
fn a_scramble_is_one_flag_forecast_not_one_per_move() {
    let mut room = Room::new(Rules::default(), "5400", AlertSettings::default());
    let mut s = started(&mut room, 6, 20_000);
    s.increment_ms = 0;
    let mut forecasts = 0;
    // Both players move every 1.5 s with 20 s on the clock: 7 moves each, down to 9.5 s
    // (before the knights' dance repeats the position five times, 9.6.1).
    let knights = ["g1f3", "g8f6", "f3g1", "f6g8"];
    for uci in knights.iter().cycle().take(14) {
        let mut changes = s.play(&mut room.hub, uci, 1_500);
        changes.extend(room.tick(s.now + 100));
        forecasts += raised(&changes)
            .iter()
            .filter(|a| a.kind == AlertKind::FlagForecast)
            .count();
    }
    assert_eq!(forecasts, 2, "one per player");
    let open: Vec<_> = room
        .open()
        .into_iter()
        .filter(|a| a.kind == AlertKind::FlagForecast)
        .collect();
    assert_eq!(open.len(), 2);
}

#[test]
fn three_boards_short_of_time_in_a_zone_call_for_assistants_12_4() {
    let settings = AlertSettings {
        time_trouble_ms: Some(60_000),
        ..AlertSettings::default()
    };
    let mut room = Room::new(Rules::default(), "5400+30", settings);
    let mut scripts: Vec<Script> = (1..=3).map(|b| started(&mut room, b, 5_400_000)).collect();
    let mut zone_alerts = Vec::new();
    for s in &mut scripts {
        s.clock = [50_000, 5_400_000];
        let mut changes = s.reading(&mut room.hub, 100, Some(Color::White), None);
        changes.extend(room.tick(s.now));
        zone_alerts.extend(
            raised(&changes)
                .into_iter()
                .filter(|a| a.kind == AlertKind::ZoneTimeTrouble)
                .cloned(),
        );
    }
    assert_eq!(zone_alerts.len(), 1);
    let zone = &zone_alerts[0];
    assert_eq!((zone.board, zone.zone.as_str()), (None, "A"));
    assert_eq!(zone.facts.boards, [BoardNo(1), BoardNo(2), BoardNo(3)]);
    assert_eq!(zone.article.as_deref(), Some("12.4"));
    let per_board = room
        .open()
        .into_iter()
        .filter(|a| a.kind == AlertKind::TimeTrouble)
        .count();
    assert_eq!(per_board, 3, "12.3 at each board");
}

#[test]
fn a_player_whose_clock_runs_past_the_allowed_lateness_6_7_1() {
    let settings = AlertSettings {
        allowed_lateness_ms: Some(600_000),
        ..AlertSettings::default()
    };
    let mut room = Room::new(Rules::default(), "5400+30", settings);
    // 5400+30: the clock starts with 90:30 (the first increment before move 1).
    let mut s = started(&mut room, 8, 5_430_000);
    s.clock = [4_930_000, 5_430_000];
    let mut changes = s.reading(&mut room.hub, 500_000, Some(Color::White), None);
    changes.extend(room.tick(s.now));
    let late: Vec<_> = raised(&changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::LateArrival)
        .collect();
    assert!(late.is_empty(), "500 s is within the lateness");
    s.clock = [4_730_000, 5_430_000];
    let mut changes = s.reading(&mut room.hub, 200_000, Some(Color::White), None);
    changes.extend(room.tick(s.now));
    let late: Vec<_> = raised(&changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::LateArrival)
        .collect();
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].article.as_deref(), Some("6.7.1"));
    assert_eq!(late[0].facts.seconds, Some(700));
}

#[test]
fn checkmate_asks_for_the_result_5_1_1_and_what_needs_a_game_expires() {
    let settings = AlertSettings {
        time_trouble_ms: Some(6_000_000),
        ..AlertSettings::default()
    };
    let mut room = Room::new(Rules::default(), "5400+30", settings);
    let (mut s, mut all) = start(&mut room, 9, 5_400_000);
    all.extend(room.tick(s.now));
    assert!(raised(&all)
        .iter()
        .any(|a| a.kind == AlertKind::TimeTrouble));
    for uci in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        all.extend(s.play(&mut room.hub, uci, 1_000));
    }
    let over: Vec<_> = raised(&all)
        .into_iter()
        .filter(|a| a.kind == AlertKind::GameOver)
        .collect();
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].article.as_deref(), Some("5.1.1"));
    assert_eq!(over[0].facts.result, Some(GameResult::BlackWins));
    let open: Vec<AlertKind> = room.open().iter().map(|a| a.kind).collect();
    assert_eq!(
        open,
        [AlertKind::GameOver],
        "time trouble expired with the game"
    );
}

#[test]
fn restored_alerts_are_the_same_and_the_same_events_add_nothing() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 3, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    let _ = s.reading(&mut room.hub, 1_000, None, None);
    let _ = s.reading(&mut room.hub, 1_000, Some(Color::Black), Some(Color::Black));
    let flag = s.last_event();
    let _ = room.tick(s.now + 20_000);
    let before: Vec<Alert> = room.hub.desk().alerts().cloned().collect();
    assert!(before.len() >= 3, "{before:?}");

    // A restart folds the journal: the same alerts, none raised again.
    let (restarted, raised_again) = room.hub.restarted();
    let after: Vec<Alert> = restarted.desk().alerts().cloned().collect();
    assert_eq!(after, before);
    assert!(raised_again.is_empty(), "{raised_again:?}");
    room.hub = restarted;
    // The node resends what it has (a duplicate): nothing new is raised.
    let again = room.hub.uplink(HubMs(s.now + 20_000), flag);
    assert!(raised(&again).is_empty(), "{again:?}");
    assert!(room.tick(s.now + 21_000).is_empty());
}

#[test]
fn a_clock_that_reports_as_it_runs_and_falls_silent_is_an_alert_one_that_reports_at_presses_is_not()
{
    let mut room = Room::standard();
    // Board 1: a DGT clock, a reading every second while it runs.
    let mut streaming = started(&mut room, 1, 5_400_000);
    for _ in 0..3 {
        streaming.clock[0] -= 1_000;
        let _ = streaming.reading(&mut room.hub, 1_000, Some(Color::White), None);
    }
    // Board 2: readings only at presses.
    let mut pressing = started(&mut room, 2, 5_400_000);
    pressing.play(&mut room.hub, "e2e4", 3_000);
    // Both nodes stay heard (heartbeats), neither clock reports for 20 s.
    let mut changes = Vec::new();
    for _ in 0..4 {
        streaming.now += 5_000;
        pressing.now += 5_000;
        changes.extend(streaming.send(&mut room.hub, protocol::UplinkBody::Heartbeat));
        changes.extend(pressing.send(&mut room.hub, protocol::UplinkBody::Heartbeat));
        changes.extend(room.tick(streaming.now));
    }
    let silent: Vec<_> = raised(&changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::ClockSilent)
        .collect();
    assert_eq!(silent.len(), 1, "{changes:?}");
    assert_eq!(silent[0].board, Some(BoardNo(1)));
    assert!(changes
        .iter()
        .all(|c| c.alert.kind != AlertKind::NodeOffline));
}

#[test]
fn a_paired_board_whose_clock_has_not_started_a_minute_after_the_round_start_6_5() {
    let rounds = round(&[(3, "A", "B"), (4, "C", "D")], Some(1_000_000));
    let mut room = Room::with_rounds(Rules::default(), "5400+30", Default::default(), rounds);
    // Board 3's node shows the start position, its clock not yet running; board 4's node
    // never reported.
    let mut s = Script::new(BoardNo(3), 5_430_000);
    s.now = 1_000_000;
    let start = s.position.board().clone();
    s.show(&mut room.hub, &start);
    let changes = room.tick(1_059_000);
    assert!(
        raised(&changes)
            .iter()
            .all(|a| a.kind != AlertKind::ClockNotStarted),
        "within the minute after the start"
    );
    let changes = room.tick(1_061_000);
    let late: Vec<_> = raised(&changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::ClockNotStarted)
        .collect();
    assert_eq!(
        late.iter().map(|a| a.board).collect::<Vec<_>>(),
        vec![Some(BoardNo(3)), Some(BoardNo(4))]
    );
    assert_eq!(late[0].article.as_deref(), Some("6.5"));
    assert_eq!(late[0].facts.seconds, Some(61));
    assert_eq!(late[0].players.as_deref(), Some("A – B"));
    // The arbiter starts White's clock on board 3: its alert expires, board 4's stays.
    s.now = 1_070_000;
    let mut changes = s.set_clock(&mut room.hub, Color::White);
    changes.extend(room.tick(1_071_000));
    assert!(changes
        .iter()
        .any(|c| c.alert.board == Some(BoardNo(3)) && c.alert.state == AlertState::Expired));
    let open: Vec<_> = room
        .open()
        .into_iter()
        .filter(|a| a.kind == AlertKind::ClockNotStarted)
        .map(|a| a.board)
        .collect();
    assert_eq!(open, vec![Some(BoardNo(4))]);
}

#[test]
fn the_round_is_finished_once_every_game_has_a_result_one_alert_to_the_chief() {
    let rounds = round(&[(3, "A", "B"), (4, "C", "D")], None);
    let mut room = Room::with_rounds(Rules::default(), "5400+30", Default::default(), rounds);
    let mut b3 = started(&mut room, 3, 5_430_000);
    let mut b4 = started(&mut room, 4, 5_430_000);
    // Board 3: Fool's mate (5.1.1).
    for uci in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        let _ = b3.play(&mut room.hub, uci, 1_000);
    }
    let finished = |changes: &[AlertChange]| {
        raised(changes)
            .into_iter()
            .filter(|a| a.kind == AlertKind::RoundFinished)
            .count()
    };
    assert_eq!(finished(&room.tick(b3.now)), 0, "board 4 plays on");
    // Board 4: the arbiter records a resignation.
    b4.now = b3.now;
    let mut changes = room.decide(
        &b4,
        json!({"decision": "result", "result": "0-1", "cause": "resignation"}),
    );
    changes.extend(room.tick(b4.now + 1_000));
    let alerts = raised(&changes);
    let round: Vec<_> = alerts
        .iter()
        .filter(|a| a.kind == AlertKind::RoundFinished)
        .collect();
    assert_eq!(round.len(), 1);
    assert_eq!(round[0].board, None);
    assert_eq!(round[0].zone, "hall");
    assert_eq!(round[0].facts.boards, vec![BoardNo(3), BoardNo(4)]);
    assert!(round[0].text.contains("All 2 games"), "{}", round[0].text);
    assert!(
        round[0].to.contains(&"eva".to_owned()),
        "the chief arbiter: {:?}",
        round[0].to
    );
    assert_eq!(finished(&room.tick(b4.now + 2_000)), 0, "once");
}

/// A rapid room at 15 min + 10 s, as the Laws class it (A.1).
fn rapid_room() -> Room {
    let rules = Rules {
        game_type: GameType::Rapid,
        ..Rules::default()
    };
    Room::new(rules, "900+10", AlertSettings::default())
}

/// A game started at 15+10 on `board`: both clocks at 15:10, White's running.
fn rapid_started(room: &mut Room, board: u16) -> Script {
    let mut s = started(room, board, 910_000);
    s.increment_ms = 10_000;
    s
}

fn clock_alerts(changes: &[AlertChange]) -> Vec<Alert> {
    raised(changes)
        .into_iter()
        .filter(|a| a.kind == AlertKind::ClockSetWrong)
        .cloned()
        .collect()
}

#[test]
fn a_clock_changed_by_less_than_the_tolerance_and_an_increment_stays_off_the_pager_6_10_2() {
    let mut room = rapid_room();
    let mut s = rapid_started(&mut room, 4);
    let mut alerts = Vec::new();
    // White's clock gains 15 s without a reason (the tolerance is 10 s + the 10 s
    // increment), then a minute at move 4; each kept at the next press.
    for (i, uci) in [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3",
    ]
    .into_iter()
    .enumerate()
    {
        if i == 2 {
            s.clock[0] += 15_000;
        }
        if i == 6 {
            s.clock[0] += 60_000;
        }
        alerts.extend(clock_alerts(&s.play(&mut room.hub, uci, 5_000)));
    }
    let state = room.hub.hall().board(BoardNo(4)).unwrap();
    let recorded: Vec<i64> = state
        .clock()
        .deviations()
        .iter()
        .map(|d| d.difference_ms() / 1000)
        .collect();
    assert_eq!(recorded, [15, 60], "both for the record");
    assert_eq!(alerts.len(), 1, "only the minute pages: {alerts:#?}");
    let alert = &alerts[0];
    assert_eq!(alert.facts.difference_s, Some(60));
    assert_eq!(alert.facts.move_number, Some(4));
    let detail = alert.facts.detail.as_ref().map(ToString::to_string);
    assert_eq!(detail.as_deref(), Some("clock_adjusted"));
    assert_eq!(alert.article.as_deref(), Some("6.10.2"));
    assert!(
        alert.text.contains("+1:00") && alert.text.contains("move 4"),
        "{}",
        alert.text
    );
}

#[test]
fn time_trouble_pages_only_in_standard_games_the_rapid_player_records_nothing_a_2() {
    let mut room = rapid_room();
    let mut s = rapid_started(&mut room, 5);
    s.clock = [120_000, 120_000];
    let mut changes = s.reading(&mut room.hub, 100, Some(Color::White), None);
    changes.extend(room.tick(s.now + 100));
    assert!(
        raised(&changes)
            .iter()
            .all(|a| a.kind != AlertKind::TimeTrouble),
        "{changes:#?}"
    );
    // The same clock in a standard game: 8.4 applies, the arbiter should be near (12.3).
    let mut room = Room::new(Rules::default(), "5400", AlertSettings::default());
    let mut s = started(&mut room, 5, 5_400_000);
    s.clock = [120_000, 120_000];
    let mut changes = s.reading(&mut room.hub, 100, Some(Color::White), None);
    changes.extend(room.tick(s.now + 100));
    assert!(raised(&changes)
        .iter()
        .any(|a| a.kind == AlertKind::TimeTrouble));
}

#[test]
fn time_trouble_8_4_begins_when_the_counted_clock_goes_under_and_a_late_reading_keeps_it() {
    let mut room = Room::new(Rules::default(), "5400", AlertSettings::default());
    let mut s = started(&mut room, 4, 5_400_000);
    s.clock = [301_000, 5_400_000];
    s.reading(&mut room.hub, 1_000, Some(Color::White), None);
    let reading_at = s.now;
    // Nothing comes from the node: the hub counts White's clock down and looks at the
    // board when it goes under 5 minutes.
    let before = room.tick(reading_at + 1_000);
    assert!(raised(&before).is_empty(), "{before:#?}");
    let changes = room.tick(reading_at + 1_001);
    assert!(
        raised(&changes)
            .iter()
            .any(|a| a.kind == AlertKind::TimeTrouble),
        "{changes:#?}"
    );
    // The display's change to 4:59 read 40 ms after the count: still 5:00 on it. One
    // alert, not one expired and raised again.
    s.clock = [300_000, 5_400_000];
    let changes = s.reading(&mut room.hub, 1_040, Some(Color::White), None);
    assert!(changes.is_empty(), "{changes:#?}");
    // The arbiter gives White two minutes (6.10.2): out of trouble.
    s.clock = [420_000, 5_400_000];
    let changes = s.reading(&mut room.hub, 1_000, Some(Color::White), None);
    assert!(
        changes
            .iter()
            .any(|c| c.change == Change::Expired && c.alert.kind == AlertKind::TimeTrouble),
        "{changes:#?}"
    );
}

#[test]
fn time_trouble_8_4_is_still_watched_in_a_game_played_on_after_a_flag_fell() {
    let mut room = Room::new(Rules::default(), "5400", AlertSettings::default());
    let mut s = started(&mut room, 4, 5_400_000);
    // White's flag fell, and the game goes on: the arbiter set White's clock again (a
    // clock that was set wrong, 6.10.2).
    s.clock = [0, 5_400_000];
    s.reading(&mut room.hub, 1_000, Some(Color::White), Some(Color::White));
    s.clock = [400_000, 5_400_000];
    let set_again = s.reading(&mut room.hub, 1_000, Some(Color::White), None);
    assert!(
        set_again
            .iter()
            .any(|c| c.change == Change::Expired && c.alert.kind == AlertKind::TimeTrouble),
        "{set_again:#?}"
    );
    let before = room.tick(s.now + 100_000);
    assert!(
        raised(&before)
            .iter()
            .all(|a| a.kind != AlertKind::TimeTrouble),
        "{before:#?}"
    );
    let changes = room.tick(s.now + 100_001);
    assert!(
        raised(&changes)
            .iter()
            .any(|a| a.kind == AlertKind::TimeTrouble),
        "the hub looks at the board when White's clock goes under: {changes:#?}"
    );
}

#[test]
fn with_an_increment_a_player_short_of_time_gets_no_flag_forecast_the_flag_fall_does_6_8() {
    let mut room = rapid_room();
    let mut s = rapid_started(&mut room, 6);
    s.clock = [12_000, 12_000];
    let mut changes = s.reading(&mut room.hub, 100, Some(Color::White), None);
    for t in 1..=14 {
        changes.extend(room.tick(s.now + t * 1_000));
    }
    assert!(
        raised(&changes)
            .iter()
            .all(|a| a.kind != AlertKind::FlagForecast),
        "{changes:#?}"
    );
    let changes = s.reading(&mut room.hub, 12_000, None, Some(Color::White));
    assert!(raised(&changes)
        .iter()
        .any(|a| a.kind == AlertKind::FlagFall));
}

#[test]
fn a_clock_reading_taken_back_at_the_next_press_is_for_the_technician_not_the_pager() {
    let mut room = rapid_room();
    let mut s = rapid_started(&mut room, 7);
    let hello = protocol::Hello {
        software: "board-node test".into(),
        board_hw: "DGT-7".into(),
        clock_hw: "DGT3000-7".into(),
        highest_seq: protocol::Seq(s.last_seq()),
    };
    let _ = s.send(&mut room.hub, protocol::UplinkBody::Hello(hello));
    let mut changes = Vec::new();
    // White's clock reads a minute high after move 2, and right again after move 3.
    for (i, uci) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3"]
        .into_iter()
        .enumerate()
    {
        match i {
            2 => s.clock[0] += 60_000,
            4 => s.clock[0] -= 60_000,
            _ => {}
        }
        changes.extend(s.play(&mut room.hub, uci, 5_000));
    }
    assert!(clock_alerts(&changes).is_empty(), "{changes:#?}");
    let report = hub::core::setup::nodes(room.hub.hall(), &Default::default(), &[], HubMs(s.now));
    let node = report.nodes.iter().find(|n| n.board == BoardNo(7)).unwrap();
    assert_eq!(node.clock_glitches, 1);
}

#[test]
fn withdrawing_a_declared_result_opens_the_flag_fall_6_9_again_and_a_restart_keeps_it_so() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 3, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    s.play(&mut room.hub, "e7e5", 5_000);
    let changes = s.reading(&mut room.hub, 1_000, Some(Color::White), Some(Color::White));
    let flag = raised(&changes)[0].id;
    let changes = room.decide(
        &s,
        json!({"decision": "result", "result": "0-1", "cause": "flag_fall"}),
    );
    assert!(changes
        .iter()
        .any(|c| c.alert.id == flag && c.change == Change::Resolved));

    // The arbiter withdraws the result (`*`): 6.9's result waits for a decision again.
    let changes = room.decide(&s, json!({"decision": "result", "result": "*"}));
    let reopened: Vec<_> = changes
        .iter()
        .filter(|c| c.change == Change::Reopened)
        .collect();
    assert_eq!(reopened.len(), 1, "{changes:#?}");
    let alert = &reopened[0].alert;
    assert_eq!((alert.id, alert.state), (flag, AlertState::Raised));
    assert_eq!((&alert.resolved, &alert.outcome), (&None, &None));
    assert_eq!(room.open().len(), 1);

    // A restart replays the declaration and the withdrawal: the same alert, still open,
    // no step added.
    let before: Vec<Alert> = room.hub.desk().alerts().cloned().collect();
    let (restarted, healed) = room.hub.restarted();
    assert!(healed.is_empty(), "{healed:#?}");
    assert_eq!(
        restarted.desk().alerts().cloned().collect::<Vec<_>>(),
        before
    );
    room.hub = restarted;

    // Declared again: resolved again; withdrawn again: open again.
    let changes = room.decide(
        &s,
        json!({"decision": "result", "result": "0-1", "cause": "flag_fall"}),
    );
    assert!(changes
        .iter()
        .any(|c| c.alert.id == flag && c.change == Change::Resolved));
    assert!(room.open().is_empty());
    let changes = room.decide(&s, json!({"decision": "result", "result": "*"}));
    assert!(changes
        .iter()
        .any(|c| c.alert.id == flag && c.change == Change::Reopened));
    let (restarted, healed) = room.hub.restarted();
    assert!(healed.is_empty(), "{healed:#?}");
    assert_eq!(
        restarted.desk().get(flag).unwrap().state,
        AlertState::Raised
    );
}

#[test]
fn one_fault_one_page_a_clock_set_wrong_again_updates_its_open_alert_6_10_2() {
    let mut room = rapid_room();
    let mut s = rapid_started(&mut room, 4);
    let mut changes = Vec::new();
    // White's clock gains a minute at move 2 and another at move 4, nobody at the board
    // between: one alert, counted twice, its facts the latest.
    for (i, uci) in [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3",
    ]
    .into_iter()
    .enumerate()
    {
        if i == 2 || i == 6 {
            s.clock[0] += 60_000;
        }
        changes.extend(s.play(&mut room.hub, uci, 5_000));
    }
    let alerts = clock_alerts(&changes);
    assert_eq!(alerts.len(), 1, "one alert raised: {alerts:#?}");
    let id = alerts[0].id;
    let alert = room.hub.desk().get(id).unwrap().clone();
    assert_eq!(alert.repeats.len(), 1, "{alert:#?}");
    assert_eq!(alert.facts.move_number, Some(4), "the latest: {alert:#?}");
    let updated = alert
        .history
        .iter()
        .filter(|step| step.change == Change::Updated)
        .count();
    assert_eq!(updated, 1);
    // Unacknowledged, it escalates once, not once per repeat.
    let later = s.now + 10 * 60_000;
    let escalations = |changes: Vec<AlertChange>| {
        changes
            .into_iter()
            .filter(|c| c.alert.id == id && c.change == Change::Escalated)
            .count()
    };
    assert_eq!(escalations(room.tick(later)), 1);
    assert_eq!(escalations(room.tick(later + 60_000)), 0);
    // A restart knows both incidents: nothing raised again, the alert as it was.
    let now = room.hub.desk().get(id).cloned();
    let (restarted, healed) = room.hub.restarted();
    assert!(raised(&healed).is_empty(), "{healed:#?}");
    assert_eq!(restarted.desk().get(id).cloned(), now);
}

#[test]
fn a_result_against_the_ruling_6_9_resolves_the_flag_fall_only_with_its_override_in_the_outcome() {
    let mut room = Room::standard();
    let mut s = started(&mut room, 3, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    s.play(&mut room.hub, "e7e5", 5_000);
    let changes = s.reading(&mut room.hub, 1_000, Some(Color::White), Some(Color::White));
    let flag = raised(&changes)[0].id;
    let mut action: hub::core::arbiter::ArbiterAction = serde_json::from_value(json!({
        "arbiter": "IA Test", "decision": "result", "result": "1-0", "cause": "flag_fall"
    }))
    .unwrap();
    let (answer, changes) = room.hub.decide(HubMs(s.now), s.board(), action.clone());
    assert!(
        matches!(answer, Err(DecisionError::ContradictsRuling { .. })),
        "{answer:?}"
    );
    assert!(changes.is_empty(), "nothing changes: {changes:#?}");
    action.override_reason = Some("the clock was set for the wrong player".into());
    let (answer, changes) = room.hub.decide(HubMs(s.now), s.board(), action);
    answer.expect("with a stated reason");
    let resolved = changes
        .iter()
        .find(|c| c.alert.id == flag && c.change == Change::Resolved)
        .expect("the flag fall resolved");
    let outcome = resolved.alert.outcome.as_deref().unwrap();
    assert!(
        outcome.contains("1-0") && outcome.contains("the clock was set for the wrong player"),
        "{outcome}"
    );
}

#[test]
fn a_low_clock_battery_pages_once_while_its_game_is_played_and_is_info_between_games() {
    // A clock that dies stops the game (6.11): the zone's arbiter is paged once, while it can
    // still be replaced; between games it is only recorded.
    let mut room = Room::standard();
    let mut s = started(&mut room, 6, 5_400_000);
    s.play(&mut room.hub, "e2e4", 5_000);
    let battery = |low| protocol::UplinkBody::Battery { low };
    assert!(raised(&s.send(&mut room.hub, battery(false))).is_empty());
    let changes = s.send(&mut room.hub, battery(true));
    let low = raised(&changes);
    assert_eq!(low.len(), 1, "{changes:?}");
    assert_eq!(low[0].kind, AlertKind::BatteryLow);
    assert_eq!(low[0].severity, Severity::High);
    assert_eq!(low[0].zone, "A");
    // Still low: nothing more, whatever happens at the board.
    assert!(raised(&s.send(&mut room.hub, battery(true))).is_empty());
    let changes = s.play(&mut room.hub, "e7e5", 5_000);
    assert!(raised(&changes)
        .iter()
        .all(|a| a.kind != AlertKind::BatteryLow));
    // New batteries: the alert expires.
    let changes = s.send(&mut room.hub, battery(false));
    let cleared: Vec<_> = changes
        .iter()
        .filter(|c| c.alert.kind == AlertKind::BatteryLow)
        .collect();
    assert_eq!(cleared.len(), 1, "{changes:?}");
    assert_eq!(cleared[0].change, Change::Expired);
    // After the game: recorded for the arbiters, nobody paged.
    room.decide(
        &s,
        json!({"decision": "result", "result": "1-0", "cause": "resignation"}),
    );
    let changes = s.send(&mut room.hub, battery(true));
    let low = raised(&changes);
    assert_eq!(low.len(), 1, "{changes:?}");
    assert_eq!(low[0].severity, Severity::Info);
}
