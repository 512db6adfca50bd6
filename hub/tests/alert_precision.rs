//! Alerts an arbiter can trust, on real games: every clocked real game replayed through the
//! core as a hall sees it (`hub::report`, what `hub alert-report` prints), and the clock
//! alerts the arbiters got held to the source PGN, not to the hub's own view.
//!
//! - A game whose clock is recorded after every move, never shows more than the time control
//!   gives, shows its periods within the grace and, where the broadcast measured each move
//!   (`%emt`), lost what the move took, is clean: it must page nobody about its clock.
//! - A genuine unexplained change still pages: the Women's World Rapid 2024, game 1, where
//!   Black's clock gained over a minute at move 19 (6.10.2).
//!
//! Run with `--nocapture` for the figures per file.

use crate::support;

use board_node::pgn::PgnGame;
use board_node::replay::ThinkTimes;
use hub::core::alerts::{AlertKind, AlertSettings, Facts};
use hub::core::clock::PERIOD_GRACE_MOVES;
use hub::core::laws::Edition;
use hub::core::side::Side;
use protocol::time_control::TimeControl;

/// The slack of a recorded clock: whole seconds either way.
const SLACK_MS: u64 = 2_000;

/// A broadcast stamps `%emt` up to this far from what the clock lost.
const EMT_SLACK_MS: u64 = board_node::replay::EMT_STAMPING_MS;

/// Whether the source's clocks are clean under `tc`, read off the PGN alone.
fn clean(game: &PgnGame, tc: &TimeControl) -> bool {
    let mut previous = [Some(tc.initial_ms()); 2];
    let mut moves = [0u32; 2];
    let mut owed: [Option<(u64, u32)>; 2] = [None, None];
    for (i, ply) in game.plies.iter().enumerate() {
        let side = i % 2;
        moves[side] += 1;
        let n = moves[side];
        let increment = tc.increment_at_press(n);
        if let Some(added) = tc.added_after_move(n) {
            owed[side] = Some((added, n));
        }
        // A move without a recorded clock cannot be checked: not clean, as far as we know.
        let (Some(before), Some(clk)) = (previous[side], ply.clk_ms) else {
            return false;
        };
        let mut gain = increment;
        if let Some((added, due)) = owed[side] {
            if clk > before + increment + SLACK_MS {
                gain += added; // the period shows
                owed[side] = None;
            } else if n > due + PERIOD_GRACE_MOVES {
                return false; // not shown within the grace
            }
        }
        if clk > before + gain + SLACK_MS {
            return false; // more time than the rules give
        }
        if let Some(emt) = ply.emt_ms {
            let lost = (before + gain).saturating_sub(clk);
            if lost.abs_diff(emt) > EMT_SLACK_MS + SLACK_MS {
                return false;
            }
        }
        previous[side] = Some(clk);
    }
    true
}

#[test]
fn a_clean_real_game_pages_nobody_about_its_clock_6_10_2() {
    let mut failures = Vec::new();
    for (file, control) in support::clocked::FILES {
        let games: Vec<(PgnGame, TimeControl)> = support::clocked::games(file, *control)
            .into_iter()
            .map(|(_, game, tc)| (game, tc))
            .collect();
        let is_clean: Vec<bool> = games.iter().map(|(g, tc)| clean(g, tc)).collect();
        let alerts = hub::cmd::report::alerts(
            &games,
            Edition::Laws2023,
            &AlertSettings::default(),
            ThinkTimes::AsNode,
        );
        let clock_alerts: Vec<(usize, &Facts)> = alerts
            .iter()
            .filter(|(_, a)| a.kind == AlertKind::ClockSetWrong)
            .filter_map(|(game, a)| Some(((*game)?, &a.facts)))
            .collect();
        let on_clean: Vec<_> = clock_alerts.iter().filter(|(g, _)| is_clean[*g]).collect();
        let clean_games = is_clean.iter().filter(|c| **c).count();
        println!(
            "{file}: {} games, {clean_games} clean; clock alerts {} ({:.1} per 100 games), \
             on clean games {}",
            games.len(),
            clock_alerts.len(),
            100.0 * clock_alerts.len() as f64 / games.len() as f64,
            on_clean.len()
        );
        if !on_clean.is_empty() {
            let named: Vec<_> = on_clean
                .iter()
                .map(|(g, facts)| (games[*g].0.tag("Round").unwrap_or("?").to_owned(), facts))
                .collect();
            failures.push(format!("{file}: {named:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_genuine_unexplained_change_in_a_real_game_still_pages_6_10_2() {
    // Women's World Rapid 2024, game 1: Black's clock shows 3:36 after move 18 and 4:31
    // after move 19, 45 s more than the 10 s increment can give.
    let (_, game, tc) = support::clocked::games("fide_womens_world_rapid_2024.pgn", Some("900+10"))
        .into_iter()
        .find(|(n, ..)| *n == 1)
        .expect("game 1");
    assert_eq!(game.plies[35].clk_ms, Some(216_000));
    assert_eq!(game.plies[37].clk_ms, Some(271_000));
    let alerts = hub::cmd::report::alerts(
        &[(game, tc)],
        Edition::Laws2023,
        &AlertSettings::default(),
        ThinkTimes::AsNode,
    );
    let clock: Vec<&Facts> = alerts
        .iter()
        .filter(|(_, a)| a.kind == AlertKind::ClockSetWrong)
        .map(|(_, a)| &a.facts)
        .collect();
    assert_eq!(clock.len(), 1, "{clock:#?}");
    let facts = clock[0];
    assert_eq!(facts.side, Some(Side::Black));
    assert_eq!(facts.move_number, Some(19));
    let detail = facts.detail.as_ref().map(ToString::to_string);
    assert_eq!(detail.as_deref(), Some("clock_adjusted"));
    // 271 s shown against at most 216 + 10 s, however fast the move: the replay's node
    // could not measure the think time of a clock that rose, so it takes none.
    assert_eq!(facts.difference_s, Some(45), "{facts:?}");
}
