//! The pure core: synchronous state machines fed with events and the time, returning effects.
//! No tokio, MQTT, sled or HTTP in here.
//!
//! - [`ids`]: the types of what the hub names: boards, alerts, decisions, hardware.
//! - [`time`]: [`HubMs`], the only "now" the core sees.
//! - [`timebase`]: a node's times as one steady timeline per board, steps taken out.
//! - [`intake`]: per-board sequencing: accept, drop a duplicate, or ask for a resend.
//! - [`sensed`]: the e-board's [`protocol::Placement`] as a shakmaty board.
//! - [`game`]: one game reconstructed from placements and clock presses.
//! - [`chess960`]: the start position of a Chess960 game, from the board.
//! - [`clock`]: one board's clock: readings, the time control's model, their reconciliation.
//! - [`fingerprint`]: FNV-1a, a stable 64-bit fingerprint.
//! - [`flag`]: what a flag fall means: loss, draw, play on, and who acts (6.8, 6.9).
//! - [`claim`]: checking a draw claim for the arbiter (9.2, 9.3).
//! - [`ending`]: what ends a game at once, and which draw claims would be correct.
//! - [`laws`]: the tournament's edition, game type and supervision, and their rulings.
//! - [`mating`]: whether a side can still checkmate (5.2.2, 6.9, 7.5.5), by chasolver.
//! - [`repetition`]: how often each position occurred (Art. 9.2.2).
//! - [`record`]: a journaled event with its receive time.
//! - [`arbiter`]: the arbiter's decisions (reinstate, result, time) and their audit trail.
//! - [`board`]: everything the hub knows about one board: its node and its game in play.
//! - [`sections`]: the hall's sections, each with its rules and time control.
//! - [`pairings`]: who plays whom in each round, and when each round is scheduled.
//! - [`rounds`]: which round each board's game belongs to; the journaled round starts.
//! - [`archive`]: the games of rounds that are over, as the API and the feed show them.
//! - [`alerts`]: what arbiters must handle, raised, acknowledged, escalated, resolved.
//! - [`pager_seal`]: the hub's signature on what it tells the pagers, the arbiters' seal on
//!   what they send back.
//! - [`relay`]: the broadcast's view of each game (delay) and its PGN.
//! - [`roster`]: the hall's arbiters, each with a key of their own.
//! - [`setup`]: the hall's nodes and what the technician should fix.
//! - [`effect`]: what the hall's fold makes happen, for the relay, the desk and the node.
//! - [`standing`]: how a game stands, by the rules or as the arbiter declared it.
//! - [`standings`]: the players' standings: points and FIDE's tie-breaks (C.07).
//! - [`hall`]: all boards, routed by [`protocol::BoardNo`]; the fold over the journal.
//! - [`hub`]: the core as one object the shell drives (`handle_*`, `poll_*`), in members.
//! - [`bindings`]: which node's hardware reports for which board.
//! - [`trust`]: the keys the hub issued each node, and the verdict on every sealed message.
//! - [`parked`]: the games a forced round start took off its boards, kept for an undo.
//! - [`phone`]: what an arbiter's phone is sent (ntfy's side) and the taps it may make.
//! - [`names`]: names from outside (players, arbiters, teams) made safe to show.
//! - [`side`]: `"white"` or `"black"`, the one spelling of a side outside the rules.

pub mod alerts;
pub mod arbiter;
pub mod archive;
pub mod bindings;
pub mod board;
pub mod chess960;
pub mod claim;
pub mod clock;
pub mod effect;
pub mod ending;
pub mod fingerprint;
pub mod flag;
pub mod game;
pub mod hall;
pub mod hub;
pub mod ids;
pub mod intake;
pub mod laws;
pub mod mating;
pub mod names;
pub mod pager_seal;
pub mod pairings;
pub mod parked;
pub mod phone;
pub mod record;
pub mod relay;
pub mod repetition;
pub mod roster;
pub mod rounds;
pub mod sections;
pub mod sensed;
pub mod setup;
pub mod side;
pub mod standing;
pub mod standings;
pub mod time;
pub mod timebase;
pub mod trust;

/// Random games for the core's tests, the same in every run: from each start (a FEN, and
/// whether it is Chess960) `games` games of up to `plies` random legal moves. `visit` sees
/// every position on the way, each start's included, and whether it is Chess960.
#[cfg(test)]
pub(crate) fn random_games(
    starts: &[(&str, bool)],
    games: usize,
    plies: usize,
    mut visit: impl FnMut(&shakmaty::Chess, bool),
) {
    use shakmaty::{CastlingMode, Position};
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for &(fen, chess960) in starts {
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let start: shakmaty::Chess = fen
            .parse::<shakmaty::fen::Fen>()
            .expect("a FEN")
            .into_position(mode)
            .expect("a legal position");
        for _ in 0..games {
            let mut game = start.clone();
            for _ in 0..plies {
                visit(&game, chess960);
                let moves = game.legal_moves();
                if moves.is_empty() {
                    break;
                }
                // xorshift64
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                game.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
            }
        }
    }
}

/// Positions for the core's tests, from FEN.
#[cfg(test)]
pub(crate) fn position(fen: &str) -> shakmaty::Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .expect("a FEN")
        .into_position(shakmaty::CastlingMode::Standard)
        .expect("a legal position")
}
