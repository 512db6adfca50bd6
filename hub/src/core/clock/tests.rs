//! The board clock at work: the Laws' clock rules, real clocks' habits, the arbiter's
//! corrections.

use super::*;
use protocol::Color as SensedColor;

fn tc(text: &str) -> TimeControl {
    text.parse().unwrap()
}

fn side(color: Color) -> SensedColor {
    match color {
        Color::White => SensedColor::White,
        Color::Black => SensedColor::Black,
    }
}

/// A reading: `[white, black]` in ms, the side now running, who pressed.
fn report(ms: [u64; 2], running: Option<Color>, pressed_by: Option<Color>) -> ClockReport {
    ClockReport {
        white_ms: ms[0] as u32,
        black_ms: ms[1] as u32,
        running: running.map(side),
        white_flag: false,
        black_flag: false,
        pressed_by: pressed_by.map(side),
    }
}

/// Plays `moves` think times (white first) on a clock that runs exactly by `control`,
/// with `clock_tc` the clock's actual setting; returns the clock.
fn play(control: &str, clock_tc: &str, thinks: &[u64]) -> BoardClock {
    let mut clock = BoardClock::new(Some(tc(control)));
    let mut real = Model::new(tc(clock_tc));
    let mut now = 0;
    let ms = |m: &Model| [m.remaining(Color::White), m.remaining(Color::Black)];
    let _ = clock.report(
        NodeMs(now),
        &report(ms(&real), Some(Color::White), None),
        None,
        true,
    );
    for (i, think) in thinks.iter().enumerate() {
        let by = if i % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        now += think;
        real.complete_move(by, *think);
        let r = report(ms(&real), Some(by.other()), Some(by));
        let _ = clock.report(NodeMs(now), &r, Some(by), true);
    }
    clock
}

#[test]
fn fischer_increment_from_move_one() {
    // 6.3.1: 15 min + 10 s; the clock starts with the first increment already added.
    let mut model = Model::new(tc("900+10"));
    assert_eq!(model.remaining(Color::White), 910_000);
    model.complete_move(Color::White, 4_000);
    assert_eq!(model.remaining(Color::White), 916_000);
}

#[test]
fn us_delay_spends_main_time_only_after_the_delay() {
    // 6.3.2 (US / simple delay): 5 s delay; 3 s of thought costs nothing, 8 s costs 3.
    let mut model = Model::new(tc("300+5d"));
    model.complete_move(Color::White, 3_000);
    assert_eq!(model.remaining(Color::White), 300_000);
    model.complete_move(Color::White, 8_000);
    assert_eq!(model.remaining(Color::White), 297_000);
}

#[test]
fn bronstein_gives_back_the_time_used_up_to_the_delay() {
    let mut model = Model::new(tc("300+5b"));
    model.complete_move(Color::White, 3_000);
    assert_eq!(model.remaining(Color::White), 300_000);
    model.complete_move(Color::White, 8_000);
    assert_eq!(model.remaining(Color::White), 297_000);
}

#[test]
fn the_next_period_comes_after_the_prescribed_move() {
    // Candidates 2022: 120 min / 40, 60 min / 20, 15 min + 30 s from move 61 (6.3.2:
    // saved time carries over).
    let mut model = Model::new(tc("40/7200:20/3600:900+30"));
    for n in 1..=40 {
        assert_eq!(model.moves_to_control(Color::White), Some(41 - n));
        model.complete_move(Color::White, 60_000);
    }
    assert_eq!(
        model.remaining(Color::White),
        7_200_000 - 2_400_000 + 3_600_000
    );
    assert_eq!(model.period(Color::White), 1);
    for _ in 41..=60 {
        model.complete_move(Color::White, 60_000);
    }
    // The press of move 60 adds the 15 minutes and the increment for move 61, as the
    // Candidates' clocks did (the broadcast shows it at move 60).
    assert_eq!(model.remaining(Color::White), 8_100_000 + 30_000);
    assert_eq!(model.moves_to_control(Color::White), None);
    model.complete_move(Color::White, 10_000);
    assert_eq!(model.remaining(Color::White), 8_150_000);
}

#[test]
fn a_clock_that_runs_by_the_time_control_agrees_on_every_move() {
    let thinks: Vec<u64> = (0..100).map(|i| 1_000 + (i * 7_919) % 90_000).collect();
    let clock = play("40/5400+30:1800+30", "40/5400+30:1800+30", &thinks);
    assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
    assert!(clock.checks().iter().all(|c| c.verdict == Verdict::Agrees));
    assert_eq!(clock.checks().len(), 100);
}

#[test]
fn what_is_shown_of_a_move_is_what_the_clock_showed_6_10_1() {
    // The clock was set without the increment: the model expects 30 s more after every
    // move, but the display is definitive; the model only checks it (6.10.2).
    let clock = play("5400+30", "5400", &[20_000, 25_000, 20_000]);
    let shown: Vec<_> = clock.checks().iter().map(MoveCheck::time_ms).collect();
    assert_eq!(
        shown,
        [Some(5_380_000), Some(5_375_000), Some(5_360_000)],
        "{:?}",
        clock.checks()
    );
    assert!(clock.checks().iter().all(|c| c.expected_ms != c.shown_ms));
    // How long each move took, by the readings.
    let used: Vec<_> = clock.checks().iter().map(|c| c.used_ms).collect();
    assert_eq!(used, [Some(20_000), Some(25_000), Some(20_000)]);
}

#[test]
fn a_move_that_ended_the_game_shows_the_model_until_the_press_then_the_clock() {
    let mut clock = BoardClock::new(Some(tc("900+10")));
    let start = report([910_000, 910_000], Some(Color::White), None);
    let _ = clock.report(NodeMs(0), &start, None, true);
    // Mate on the board after 4 s; the press comes half a second later.
    clock.move_without_press(Color::White, NodeMs(4_000));
    assert_eq!(clock.checks()[0].time_ms(), Some(916_000), "the model");
    let press = report([915_000, 910_000], Some(Color::Black), Some(Color::White));
    let _ = clock.report(NodeMs(4_500), &press, None, false);
    assert_eq!(clock.checks()[0].time_ms(), Some(915_000), "the clock");
    assert_eq!(
        clock.checks()[0].used_ms,
        Some(4_500),
        "it ran until the press"
    );
}

#[test]
fn a_clock_without_the_increment_is_raised_once_per_player() {
    // 6.10.2: the clock was set to 90 min without the 30 s increment.
    let thinks = vec![20_000; 20];
    let clock = play("5400+30", "5400", &thinks);
    let kinds: Vec<_> = clock
        .deviations()
        .iter()
        .map(|d| (d.kind, d.side))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (DeviationKind::WrongBase, Side::White),
            (DeviationKind::WrongBase, Side::Black),
            (DeviationKind::IncrementMissing, Side::White),
            (DeviationKind::IncrementMissing, Side::Black),
        ]
    );
    let missing = &clock.deviations()[2];
    assert_eq!(missing.expected_ms - missing.shown_ms, 30_000);
    // Each kept by the clock at the player's next press: confirmed.
    assert!(clock
        .deviations()
        .iter()
        .all(|d| d.outcome == Outcome::Confirmed));
}

/// A clock under `control` that first shows `shown` with White's side running; what the
/// reading raised.
fn started(control: &str, shown: [u64; 2]) -> (BoardClock, Vec<ClockEvent>) {
    let mut clock = BoardClock::new(Some(tc(control)));
    let start = report(shown, Some(Color::White), None);
    let events = clock.report(NodeMs(0), &start, None, true);
    (clock, events)
}

/// 40/90+30 with 30 min more after move 40, 10 s a move; Black's clock adds the period
/// after move 40, White's only at White's move `white_gets_it`. The clock and the
/// events it raised.
fn period_shown_at(white_gets_it: u32) -> (BoardClock, Vec<ClockEvent>) {
    let mut shown = [5_430_000u64, 5_430_000];
    let (mut clock, mut events) = started("40/5400+30:1800+30", shown);
    let mut now = 0;
    for n in 1..=50u32 {
        for by in [Color::White, Color::Black] {
            let i = usize::from(by == Color::Black);
            now += 10_000;
            shown[i] = shown[i] - 10_000 + 30_000;
            let late = by == Color::White && n == white_gets_it;
            if late || (by == Color::Black && n == 40) {
                shown[i] += 1_800_000;
            }
            let r = report(shown, Some(by.other()), Some(by));
            events.extend(clock.report(NodeMs(now), &r, Some(by), true));
        }
    }
    (clock, events)
}

#[test]
fn a_period_shown_a_few_moves_late_is_a_counter_catching_up() {
    // The clock adds the 30 min at move 42 (its move counter two behind): pending at 40
    // and 41, then agreeing again; nothing recorded, nothing raised.
    let (clock, events) = period_shown_at(42);
    let white: Vec<_> = clock
        .checks()
        .iter()
        .filter(|c| c.by == Side::White)
        .map(|c| c.verdict)
        .collect();
    assert_eq!(white[38], Verdict::Agrees);
    assert_eq!(white[39], Verdict::PeriodPending);
    assert_eq!(white[40], Verdict::PeriodPending);
    assert_eq!(white[41], Verdict::Agrees);
    assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn a_period_not_shown_past_the_grace_is_raised_once_the_next_press_confirms_6_10_2() {
    // Not added by move 44 (40 + the grace): recorded then, raised at move 45 when it
    // still has not shown, once.
    let (clock, events) = period_shown_at(48);
    let recorded: Vec<_> = clock
        .deviations()
        .iter()
        .map(|d| (d.kind, d.side, d.moves, d.outcome))
        .collect();
    assert_eq!(
        recorded,
        vec![(
            DeviationKind::PeriodNotAdded,
            Side::White,
            40 + PERIOD_GRACE_MOVES,
            Outcome::Confirmed
        )]
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(clock.deviations()[0].difference_ms(), -1_800_000);
    // Shown at move 46, a move after the grace: recorded, but only late.
    let (clock, events) = period_shown_at(40 + PERIOD_GRACE_MOVES + 1);
    assert_eq!(clock.deviations()[0].outcome, Outcome::Passed);
    assert!(events.is_empty(), "{events:?}");
}

/// 15+10 from the start, White's clock showing `white_after[k]` after White's move
/// `k + 1` (each move 5 s); Black's clock runs by the rules. The clock and what it raised.
fn white_shows(white_after: &[u64]) -> (BoardClock, Vec<ClockEvent>) {
    let mut shown = [910_000u64, 910_000];
    let (mut clock, mut events) = started("900+10", shown);
    let mut now = 0;
    for white in white_after {
        for by in [Color::White, Color::Black] {
            now += 5_000;
            match by {
                Color::White => shown[0] = *white,
                Color::Black => shown[1] += 5_000,
            }
            let r = report(shown, Some(by.other()), Some(by));
            events.extend(clock.report(NodeMs(now), &r, Some(by), true));
        }
    }
    (clock, events)
}

#[test]
fn a_clock_changed_and_kept_is_raised_at_the_players_next_press() {
    // After move 2 White's clock shows a minute more and keeps it: recorded at move 2,
    // raised at move 3, when the clock still counts from there.
    let (_, events) = white_shows(&[915_000, 920_000]);
    assert!(events.is_empty(), "held until the next press: {events:?}");
    let (clock, events) = white_shows(&[915_000, 980_000, 985_000]);
    let [ClockEvent::Deviation(raised)] = events.as_slice() else {
        panic!("one deviation raised: {events:?}");
    };
    assert_eq!(
        (raised.kind, raised.moves, raised.difference_ms()),
        (DeviationKind::ClockAdjusted, 2, 60_000)
    );
    assert_eq!(clock.deviations()[0].outcome, Outcome::Confirmed);
}

#[test]
fn a_clock_that_goes_back_at_the_next_press_had_one_wrong_reading() {
    // White's display read a minute high once, then the time it should show again.
    let (clock, events) = white_shows(&[915_000, 980_000, 925_000, 930_000]);
    assert!(events.is_empty(), "{events:?}");
    let outcomes: Vec<_> = clock.deviations().iter().map(|d| d.outcome).collect();
    assert_eq!(outcomes, [Outcome::Glitch, Outcome::Glitch]);
    assert_eq!(clock.glitches(), 1);
    assert_eq!(clock.checks()[6].verdict, Verdict::Agrees);
}

#[test]
fn an_increment_missed_once_is_recorded_missed_twice_is_raised() {
    // 10 s missing at move 2 only: for the record.
    let (clock, events) = white_shows(&[915_000, 910_000, 915_000]);
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(clock.deviations()[0].kind, DeviationKind::IncrementMissing);
    assert_eq!(clock.deviations()[0].outcome, Outcome::Passed);
    // Missing from move 2 on: raised once, at move 3.
    let (clock, events) = white_shows(&[915_000, 910_000, 905_000, 900_000, 895_000]);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(clock.deviations().len(), 1);
}

#[test]
fn a_press_with_the_flag_down_is_a_flag_fall_not_a_missing_increment() {
    let (clock, _) = white_shows(&[915_000, 0]);
    assert_eq!(clock.checks()[2].verdict, Verdict::Flagged);
    assert!(clock.deviations().is_empty(), "{:?}", clock.deviations());
    assert!(clock.flag(Color::White).is_some());
}

/// A 90 min + 30 s clock that showed its start (1:30:30 each) and runs White's time.
fn classical_started() -> BoardClock {
    let mut clock = BoardClock::new(Some(tc("5400+30")));
    let _ = clock.report(
        NodeMs(0),
        &report([5_430_000, 5_430_000], Some(Color::White), None),
        None,
        true,
    );
    clock
}

#[test]
fn a_penalty_on_the_standing_clock_is_expected_not_a_deviation() {
    // 7.5.5: two minutes to the opponent after an illegal move.
    let mut clock = classical_started();
    let penalty = Adjustment {
        ms: 120_000,
        kind: DeviationKind::PenaltyApplied,
        article: "7.5.5".into(),
    };
    clock.expect_adjustment(Color::Black, penalty);
    let r = report(
        [5_450_000, 5_550_000],
        Some(Color::Black),
        Some(Color::White),
    );
    let events = clock.report(NodeMs(10_000), &r, Some(Color::White), true);
    assert!(matches!(
        &events[..],
        [ClockEvent::Deviation(Deviation {
            kind: DeviationKind::PenaltyApplied,
            side: Side::Black,
            article,
            ..
        })] if article == "7.5.5"
    ));
    assert_eq!(clock.adjustment_due(Color::Black), None, "taken");
}

#[test]
fn an_arbiters_adjustment_replaces_what_was_due_and_the_mover_may_show_it() {
    // 6.10.2: the arbiter takes 30 s off White's clock (an increment the clock gave
    // twice); the press that shows it is the correction, not an unexplained jump.
    let mut clock = classical_started();
    let correction = Adjustment {
        ms: -30_000,
        kind: DeviationKind::CorrectionApplied,
        article: "6.10.2".into(),
    };
    clock.expect_adjustment(
        Color::White,
        Adjustment {
            ms: 60_000,
            ..correction
        },
    );
    clock.set_adjustment(Color::White, correction);
    // White used 10 s and gained 30 s: the model expects 5:30:50 - 30 s.
    let r = report(
        [5_420_000, 5_430_000],
        Some(Color::Black),
        Some(Color::White),
    );
    let events = clock.report(NodeMs(10_000), &r, Some(Color::White), true);
    assert!(
        matches!(
            &events[..],
            [ClockEvent::Deviation(Deviation {
                kind: DeviationKind::CorrectionApplied,
                side: Side::White,
                expected_ms: 5_450_000,
                shown_ms: 5_420_000,
                ..
            })]
        ),
        "{events:?}"
    );
}

#[test]
fn flags_are_seen_once_and_in_order() {
    let mut clock = BoardClock::new(Some(tc("180+2")));
    let _ = clock.report(
        NodeMs(0),
        &report([182_000, 182_000], Some(Color::White), None),
        None,
        true,
    );
    let mut down = report([0, 5_000], Some(Color::White), None);
    down.white_flag = true;
    let events = clock.report(NodeMs(182_000), &down, None, true);
    assert_eq!(
        events,
        vec![ClockEvent::FlagFall {
            side: Color::White,
            at: NodeMs(182_000),
            first: Some(true)
        }]
    );
    assert!(clock.report(NodeMs(183_000), &down, None, true).is_empty());
    assert_eq!(clock.first_flag(), Some(Color::White));
}

#[test]
fn both_flags_in_one_reading_leave_the_order_open() {
    // Guidelines III.3.1: impossible to establish which flag fell first.
    let mut clock = BoardClock::new(None);
    let both = report([0, 0], None, None);
    let events = clock.report(NodeMs(5), &both, None, true);
    assert!(events
        .iter()
        .all(|e| matches!(e, ClockEvent::FlagFall { first: None, .. })));
    assert_eq!(events.len(), 2);
    assert_eq!(clock.first_flag(), None);
}

#[test]
fn a_stopped_clock_mid_game_is_a_pause_until_it_runs_again() {
    // 6.11.2: a player stops the clock to call the arbiter.
    let mut clock = BoardClock::new(None);
    let _ = clock.report(
        NodeMs(0),
        &report([60_000, 60_000], Some(Color::White), None),
        None,
        true,
    );
    let events = clock.report(
        NodeMs(5_000),
        &report([55_000, 60_000], None, None),
        None,
        true,
    );
    assert_eq!(
        events,
        vec![ClockEvent::Paused {
            since: NodeMs(5_000)
        }]
    );
    assert_eq!(
        clock.shown_at(NodeMs(50_000)).unwrap()[Color::White],
        55_000
    );
    let events = clock.report(
        NodeMs(65_000),
        &report([55_000, 60_000], Some(Color::White), None),
        None,
        true,
    );
    assert_eq!(events, vec![ClockEvent::Resumed { paused_ms: 60_000 }]);
    assert_eq!(
        clock.time_to_flag(NodeMs(70_000)),
        Some((Color::White, 50_000))
    );
}

#[test]
fn time_trouble_is_under_five_minutes_without_a_thirty_second_increment() {
    // 8.4
    let mut clock = BoardClock::new(Some(tc("900+10")));
    let _ = clock.report(
        NodeMs(0),
        &report([299_000, 301_000], Some(Color::White), None),
        None,
        true,
    );
    assert!(clock.time_trouble(Color::White, NodeMs(0)));
    assert!(!clock.time_trouble(Color::Black, NodeMs(0)));
    let mut classical = BoardClock::new(Some(tc("5400+30")));
    let _ = classical.report(
        NodeMs(0),
        &report([100_000, 100_000], Some(Color::White), None),
        None,
        true,
    );
    assert!(
        !classical.time_trouble(Color::White, NodeMs(0)),
        "30 s increment: 8.4 does not apply"
    );
}
