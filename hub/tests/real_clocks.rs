//! Every clocked real game (`../shared/data/real/pgn-clocks/`) replayed through the hub's
//! core with the file's real time control: for every move the hub's model of the remaining
//! time (`expected_ms`, which checks the clock and is never shown, 6.10.2) against the
//! recorded `[%clk]`. What is shown is the clock's reading (`clock_shown.rs`).
//!
//! Think times: the World Cup files carry `[%emt]` (the broadcast's own measurement of each
//! move), which the replay takes wherever there is one (`ThinkTimes::Broadcast`), so there
//! the model's arithmetic meets the clock independently. The Lichess
//! broadcasts carry only `%clk`; the replay reads their think times off the clocks, so there
//! the test checks the periods (when time is added, which increment applies) and finds the
//! corrections, not the ordinary move.
//!
//! Every move falls into one class; the figures per file are printed (run with
//! `--nocapture`). The documented reporting delay: a new period's time that shows one move
//! late (`PERIOD_GRACE_MOVES`).

use crate::support;

use std::collections::BTreeMap;

use board_node::replay;
use hub::core::clock::{Verdict, PERIOD_GRACE_MOVES};
use hub::core::hall::Hall;
use protocol::BoardNo;

/// How far a broadcast's `%emt` may lie from what the clock lost: its moves are stamped
/// when the board shows them, and the clock is read when pressed.
const EMT_DELAY_MS: u64 = 5_000;

#[derive(Default, Debug)]
struct Tally {
    games: usize,
    /// Moves whose `%clk` the hub compared.
    compared: usize,
    within_1s: usize,
    agrees: usize,
    /// A new period not shown yet, within the reporting delay.
    reporting_delay: usize,
    /// A new period shown more than the grace late: the clock's move counter is behind.
    period_late: usize,
    increment_missing: usize,
    /// The mover's clock at zero at the press: the flag fell first, no increment is due.
    flagged: usize,
    /// The broadcast's `%emt` (measured when the move was seen on the board, not at the
    /// press) and the clock disagree by at most [`EMT_DELAY_MS`].
    emt_delay: usize,
    /// The clock jumped by something no rule explains (corrections, resets): up, down.
    adjusted_up: usize,
    adjusted_down: usize,
    /// Moves without `%clk` in the PGN: nothing to compare.
    no_clk: usize,
    flags: usize,
    /// Deviations recorded, by kind and what became of them (`confirmed` are raised).
    deviations: BTreeMap<String, usize>,
}

#[test]
fn the_hubs_clock_model_meets_every_recorded_clock() {
    let mut failures = Vec::new();
    for (file, control) in support::clocked::FILES {
        let mut tally = Tally::default();
        let mut examples: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (game_no, game, tc) in support::clocked::games(file, *control) {
            tally.games += 1;
            let mut hall = Hall::default().with_time_control(Some(tc.clone()));
            let board = BoardNo(1);
            let script = replay::script_with(&game, Some(&tc), replay::ThinkTimes::Broadcast);
            support::events::feed(&mut hall, board, script);
            let state = hall.board(board).unwrap();
            let checks = state.clock().checks();
            assert!(
                checks.len() <= game.plies.len(),
                "{file}: one check per move"
            );
            let mut pending_run = [0u32; 2];
            for (i, (check, ply)) in checks.iter().zip(&game.plies).enumerate() {
                let side = usize::from(check.by == hub::core::side::Side::Black);
                let Some(clk) = ply.clk_ms else {
                    tally.no_clk += 1;
                    continue;
                };
                tally.compared += 1;
                let expected = check.expected_ms.expect("a time control");
                if expected.abs_diff(clk) <= 1_000 {
                    tally.within_1s += 1;
                }
                if check.verdict == Verdict::PeriodPending {
                    pending_run[side] += 1;
                } else {
                    pending_run[side] = 0;
                }
                if check.verdict != Verdict::Agrees {
                    let list = examples
                        .entry(support::serde_name(&check.verdict))
                        .or_default();
                    if list.len() < 4 {
                        list.push(format!(
                            "game {} ply {}: model {} clk {} emt {:?}",
                            game_no,
                            i + 1,
                            expected,
                            clk,
                            ply.emt_ms
                        ));
                    }
                }
                let emt_delay = ply.emt_ms.is_some() && expected.abs_diff(clk) <= EMT_DELAY_MS;
                match check.verdict {
                    Verdict::Agrees => tally.agrees += 1,
                    Verdict::Adjusted | Verdict::IncrementMissing if emt_delay => {
                        tally.emt_delay += 1
                    }
                    Verdict::PeriodPending if pending_run[side] <= PERIOD_GRACE_MOVES => {
                        tally.reporting_delay += 1
                    }
                    Verdict::PeriodPending => tally.period_late += 1,
                    Verdict::IncrementMissing => tally.increment_missing += 1,
                    Verdict::Flagged => tally.flagged += 1,
                    Verdict::Adjusted if clk > expected => tally.adjusted_up += 1,
                    Verdict::Adjusted => tally.adjusted_down += 1,
                    other => failures.push(format!("{file}: unexpected verdict {other:?}")),
                }
            }
            for deviation in state.clock().deviations() {
                let name = support::serde_name(&deviation.kind);
                let outcome = support::serde_name(&deviation.outcome);
                *tally
                    .deviations
                    .entry(format!("{name} {outcome}"))
                    .or_default() += 1;
            }
            let flagged = [shakmaty::Color::White, shakmaty::Color::Black]
                .into_iter()
                .any(|c| state.clock().flag(c).is_some());
            tally.flags += usize::from(flagged);
        }
        let share = |n: usize| 100.0 * n as f64 / tally.compared.max(1) as f64;
        let explained = tally.agrees
            + tally.reporting_delay
            + tally.period_late
            + tally.emt_delay
            + tally.flagged;
        println!(
            "{file}: {} games, {} moves compared, within 1 s {:.2}%, agree {:.2}% \
             (+ reporting delays {:.2}%: period {}, period late {}, emt {}, flag down {}), \
             increment missing {}, \
             adjusted up {} / down {}, no %clk {}, flags {}, deviations {:?}",
            tally.games,
            tally.compared,
            share(tally.within_1s),
            share(tally.agrees),
            share(explained),
            tally.reporting_delay,
            tally.period_late,
            tally.emt_delay,
            tally.flagged,
            tally.increment_missing,
            tally.adjusted_up,
            tally.adjusted_down,
            tally.no_clk,
            tally.flags,
            tally.deviations
        );
        for (verdict, list) in &examples {
            println!("  {verdict}: {list:?}");
        }
        assert!(tally.games > 0, "{file}: no clocked games");
        if share(explained) < 99.0 {
            failures.push(format!("{file}: {:.2}% agree", share(explained)));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
