//! What a flag fall means, and who acts on it.
//!
//! - One flag (6.9): the player loses, unless the opponent cannot checkmate by any legal
//!   series of moves: then a draw. chasolver decides; when it cannot within its node budget,
//!   the static rule (insufficient material) decides and the ruling says so.
//! - Both flags, order unknown (Guidelines III.3.1; 6.11 in 2009 and 2014): play on, except
//!   in the last period, which is a draw.
//! - At the first flag of a multi-period control, whether the player had completed the
//!   prescribed moves (6.4): if so, the clock is wrong (the period was not added), not the
//!   player.
//! - Who acts: in standard games, and in supervised rapid and blitz, the arbiter calls the flag
//!   (6.8). In unsupervised rapid and blitz he calls a flag he sees from 2018 on (A.5.5); in
//!   2009 and 2014 only a player's claim counts, so the hub records it and sends nobody.
//!
//! The hub proposes the ruling; the arbiter decides.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position};

use super::arbiter::GameResult;
use super::clock::BoardClock;
use std::borrow::Cow;

use super::laws::{Article, Edition, GameType, Rules, Supervision};
use super::mating::{self, MatingChances};
use super::side::Side;

/// The flags a clock shows: `"white"`, `"black"` or `"both"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flag {
    White,
    Black,
    Both,
}

impl Flag {
    /// The flags shown of White's and Black's clock; `None` while neither fell.
    pub fn shown(white: bool, black: bool) -> Option<Flag> {
        match (white, black) {
            (true, true) => Some(Flag::Both),
            (true, false) => Some(Flag::White),
            (false, true) => Some(Flag::Black),
            (false, false) => None,
        }
    }
}

/// A flag fall and what the Laws make of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagRuling {
    /// The player whose flag fell first; `null` when both fell and the order is unknown.
    pub flagged: Option<Side>,
    pub both: bool,
    /// The result to confirm; `null`: play on.
    pub result: Option<GameResult>,
    pub article: Article,
    /// What decided between loss and draw: `chasolver`, `insufficient_material` (the static
    /// rule, when chasolver was undetermined), or `both_flags`.
    pub decided_by: Cow<'static, str>,
    /// Whether the arbiter calls the flag himself, and under which article.
    pub arbiter_calls: bool,
    pub arbiter_article: Article,
    /// Multi-period controls: whether the flagged player had completed the moves the period
    /// prescribes (6.4); `true` means the clock failed to add the next period.
    pub prescribed_moves_completed: Option<bool>,
    /// Node time the flag was seen.
    pub at: u64,
}

/// Whether the arbiter calls a flag he sees, and the article.
pub fn arbiter_calls(rules: Rules) -> (bool, &'static str) {
    match (rules.game_type, rules.supervision, rules.edition) {
        (GameType::Standard, _, _) | (_, Supervision::Full, _) => (true, "6.8"),
        (_, Supervision::Partial, Edition::Laws2023) => (true, "A.5.5"),
        (_, Supervision::Partial, Edition::Laws2018) => (true, "A.4.5"),
        (_, Supervision::Partial, Edition::Laws2014) => (false, "A.4c"),
        (_, Supervision::Partial, Edition::Laws2009) => (false, "A4d"),
    }
}

/// The ruling for the flags `clock` has seen, in `position`; `None` while no flag is down.
pub fn rule(position: &Chess, clock: &BoardClock, rules: Rules) -> Option<FlagRuling> {
    let down: Vec<Color> = Color::ALL
        .into_iter()
        .filter(|side| clock.flag(*side).is_some())
        .collect();
    let at = down.iter().filter_map(|s| clock.flag(*s)).min()?.0;
    let (calls, arbiter_article) = arbiter_calls(rules);
    let both = down.len() == 2;
    let flagged = clock.first_flag();
    let (result, article, decided_by) = match flagged {
        Some(side) => {
            let (result, decided_by) = loss_or_draw(position, side);
            (Some(result), "6.9", decided_by)
        }
        None => {
            let article = match rules.edition {
                Edition::Laws2009 | Edition::Laws2014 => "6.11",
                Edition::Laws2018 | Edition::Laws2023 => "III.3.1",
            };
            let last_period = clock.model().is_none_or(|model| {
                let last = model.time_control().periods().len() - 1;
                Color::ALL.into_iter().all(|s| model.period(s) == last)
            });
            (
                last_period.then_some(GameResult::Draw),
                article,
                "both_flags",
            )
        }
    };
    let prescribed_moves_completed = clock
        .model()
        .filter(|m| m.time_control().periods().len() > 1)
        .zip(flagged)
        .map(|(model, side)| model.period_pending(side));
    Some(FlagRuling {
        flagged: flagged.map(Side::from),
        both,
        result,
        article: article.into(),
        decided_by: decided_by.into(),
        arbiter_calls: calls,
        arbiter_article: arbiter_article.into(),
        prescribed_moves_completed,
        at,
    })
}

/// 6.9: the result when `flagged` ran out of time in `position`.
fn loss_or_draw(position: &Chess, flagged: Color) -> (GameResult, &'static str) {
    let loss = GameResult::win_for(flagged.other());
    match mating::mating_chances(position, flagged.other()) {
        MatingChances::CannotMate => (GameResult::Draw, "chasolver"),
        MatingChances::CanMate => (loss, "chasolver"),
        MatingChances::Undetermined if position.has_insufficient_material(flagged.other()) => {
            (GameResult::Draw, "insufficient_material")
        }
        MatingChances::Undetermined => (loss, "insufficient_material"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::position;
    use protocol::time_control::TimeControl;
    use protocol::{ClockReport, Color as SensedColor, NodeMs};

    #[test]
    fn the_flags_shown_read_as_the_api_has_always_written_them() {
        let json =
            |flag: (bool, bool)| serde_json::to_string(&Flag::shown(flag.0, flag.1)).unwrap();
        assert_eq!(json((true, true)), r#""both""#);
        assert_eq!(json((true, false)), r#""white""#);
        assert_eq!(json((false, true)), r#""black""#);
        assert_eq!(json((false, false)), "null");
        let running = crate::core::side::Side::from(shakmaty::Color::Black);
        assert_eq!(serde_json::to_string(&running).unwrap(), r#""black""#);
    }

    fn flagged_clock(tc: Option<&str>, white_ms: u32, black_ms: u32) -> BoardClock {
        let mut clock = BoardClock::new(tc.map(|t| t.parse::<TimeControl>().unwrap()));
        let report = ClockReport {
            white_ms,
            black_ms,
            running: Some(SensedColor::White),
            white_flag: white_ms == 0,
            black_flag: black_ms == 0,
            pressed_by: None,
        };
        let _ = clock.report(NodeMs(1_000), &report, None, true);
        clock
    }

    fn blitz(edition: Edition, supervision: Supervision) -> Rules {
        Rules {
            edition,
            game_type: GameType::Blitz,
            supervision,
            chess960: false,
        }
    }

    #[test]
    fn a_flag_against_mating_material_loses() {
        // 6.9: White's flag falls; Black has a queen.
        let position = position("8/8/8/4k3/8/8/3q4/4K3 w - - 0 60");
        let clock = flagged_clock(None, 0, 30_000);
        let ruling = rule(&position, &clock, Rules::default()).unwrap();
        assert_eq!(ruling.flagged, Some(Side::White));
        assert_eq!(ruling.result, Some(GameResult::BlackWins));
        assert_eq!(
            (ruling.article.as_ref(), ruling.decided_by.as_ref()),
            ("6.9", "chasolver")
        );
    }

    #[test]
    fn a_flag_against_a_bare_king_is_a_draw() {
        // 6.9: Black cannot checkmate with a bare king.
        let position = position("8/8/8/4k3/8/8/3Q4/4K3 w - - 0 60");
        let clock = flagged_clock(None, 0, 30_000);
        let ruling = rule(&position, &clock, Rules::default()).unwrap();
        assert_eq!(ruling.result, Some(GameResult::Draw));
    }

    #[test]
    fn a_flag_against_a_blocked_pawn_fortress_is_a_draw() {
        // 6.9: a position labelled `--` (nobody can mate) in the D3-Chess vectors, with pawns
        // left on the board, so no material rule sees it.
        let vectors = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/real/pgn-endings/d3chess_unwinnability_test_vectors.txt"
        ))
        .expect("the D3-Chess vectors in shared/data/real");
        let fen = vectors
            .lines()
            .filter_map(|line| line.strip_prefix("-- "))
            .map(str::trim)
            .find(|fen| {
                let board = fen.split(' ').next().unwrap_or_default();
                board.contains('p') && board.contains('P') && fen.contains(" w ")
            })
            .expect("a labelled pawn fortress");
        let position = position(fen);
        assert!(!position.has_insufficient_material(Color::Black));
        let clock = flagged_clock(None, 0, 30_000);
        let ruling = rule(&position, &clock, Rules::default()).unwrap();
        assert_eq!(ruling.result, Some(GameResult::Draw), "{fen}");
        assert_eq!(ruling.decided_by, "chasolver");
    }

    #[test]
    fn both_flags_in_the_last_period_draw_earlier_play_on() {
        // Guidelines III.3.1 (2014: 6.11): the order cannot be established.
        let position = position("8/8/8/4k3/8/8/3q4/4K3 w - - 0 60");
        let last = flagged_clock(Some("300"), 0, 0);
        let ruling = rule(&position, &last, Rules::default()).unwrap();
        assert_eq!((ruling.flagged, ruling.both), (None, true));
        assert_eq!(
            (ruling.result, ruling.article.as_ref()),
            (Some(GameResult::Draw), "III.3.1")
        );
        let earlier = flagged_clock(Some("40/5400:1800"), 0, 0);
        let ruling = rule(
            &position,
            &earlier,
            blitz(Edition::Laws2014, Supervision::Full),
        )
        .unwrap();
        assert_eq!((ruling.result, ruling.article.as_ref()), (None, "6.11"));
    }

    #[test]
    fn who_calls_the_flag_follows_the_edition() {
        // A.5.5 (2023), A.4.5 (2018): the arbiter calls a flag he sees; 2014 A.4c and 2009
        // A4d: only a player's claim counts. Supervised games follow the standard rule 6.8.
        assert_eq!(arbiter_calls(Rules::default()), (true, "6.8"));
        assert_eq!(
            arbiter_calls(blitz(Edition::Laws2023, Supervision::Partial)),
            (true, "A.5.5")
        );
        assert_eq!(
            arbiter_calls(blitz(Edition::Laws2018, Supervision::Partial)),
            (true, "A.4.5")
        );
        assert_eq!(
            arbiter_calls(blitz(Edition::Laws2014, Supervision::Partial)),
            (false, "A.4c")
        );
        assert_eq!(
            arbiter_calls(blitz(Edition::Laws2009, Supervision::Partial)),
            (false, "A4d")
        );
        assert_eq!(
            arbiter_calls(blitz(Edition::Laws2009, Supervision::Full)),
            (true, "6.8")
        );
    }
}
