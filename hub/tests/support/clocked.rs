//! The clocked real games (`../shared/data/real/pgn-clocks/`) with the time controls they
//! were really played at: the files' `TimeControl` tags are unreliable (the World Cup's rapid
//! and blitz games carry the classical control; `shared/data/real/README.md`).

use board_node::pgn::{self, PgnGame};
use protocol::time_control::TimeControl;

/// The files and their real time controls. `None`: each game's own `TimeControl` tag (the
/// Lichess online sample).
pub const FILES: &[(&str, Option<&str>)] = &[
    (
        "fide_world_cup_2025_classical.pgn",
        Some("40/5400+30:1800+30"),
    ),
    ("fide_world_cup_2025_rapid_15+10.pgn", Some("900+10")),
    ("fide_world_cup_2025_rapid_10+10.pgn", Some("600+10")),
    ("fide_world_cup_2025_blitz_5+3.pgn", Some("300+3")),
    ("fide_world_cup_2025_blitz_3+2.pgn", Some("180+2")),
    ("fide_womens_world_rapid_2024.pgn", Some("900+10")),
    (
        "fide_grand_swiss_2025_open.pgn",
        Some("40/6000+30:20/3000+30:900+30"),
    ),
    ("fide_candidates_2022.pgn", Some("40/7200:20/3600:900+30")),
    ("lichess_db_online_sample_1000k.pgn", None),
];

/// Every game of `file` that has a known time control and at least one `[%clk]`, with that
/// control and the game's number in the file (from 1).
pub fn games(file: &str, control: Option<&str>) -> Vec<(usize, PgnGame, TimeControl)> {
    let path = super::real_data().join("pgn-clocks").join(file);
    let text = std::fs::read(&path).expect("real data");
    let control: Option<TimeControl> = control.map(|c| c.parse().expect("a time control"));
    pgn::read_games(&text)
        .expect("real PGN")
        .into_iter()
        .enumerate()
        .filter_map(|(i, game)| {
            let tc = control
                .clone()
                .or_else(|| game.tag("TimeControl").and_then(|t| t.parse().ok()))?;
            game.plies
                .iter()
                .any(|p| p.clk_ms.is_some())
                .then_some((i + 1, game, tc))
        })
        .collect()
}
