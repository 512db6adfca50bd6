//! Each team's match of a round, from the boards as the hub shows them and the file's team
//! records, as gacrux (`games2matches`) builds them:
//!
//! - two teams whose players met on boards played a match; a board result without an
//!   opponent (`0000 - +`, a player unopposed) goes into its team's match of that round;
//! - a match decided without games (`330`) pairs two teams whose boards hold no games;
//! - a team's bye (`240` full, half or zero point; `320` pairing-allocated) is its round
//!   where it has no match; a team with only unopposed boards and neither has the bye its
//!   first board's result gives;
//! - a match's result comes from the game points (12.1): the more wins; equal and both
//!   above 0 a draw; 0–0 lost by both. It was played if any game was, or both scored.

use super::roster::Roster;
use super::{colours, ForfeitResult, Team, TeamBye, TeamEvent, TeamRecords, TeamScoring};
use crate::core::pairings::{Bye, Pairing, Unpaired};
use crate::core::side::Side;

/// One board result of a team in a round, as the match counts it.
#[derive(Debug, Clone, Copy)]
struct Board {
    /// The player's place in the team's list (the board order).
    place: usize,
    /// Game points, in tenths.
    points: u32,
    played: bool,
    /// Against a player of the other team (not an unopposed result).
    opposed: bool,
    /// The same board's number in the hall, for a game (to pair the two sides).
    game: Option<usize>,
    running: bool,
}

/// A team's round.
#[derive(Debug, Clone, PartialEq)]
pub enum TeamRound {
    /// A match, played or not: the opponent's index, whether this team is the match's
    /// White team (`colours`), its match and game points (tenths) and each board's game points
    /// (in board order).
    Match {
        opponent: usize,
        white: bool,
        played: bool,
        match_points: u32,
        game_points: u32,
        boards: Vec<u32>,
    },
    /// A match with a board still in play: not yet counted.
    Running { opponent: usize, white: bool },
    /// No opponent: a bye (its match and game points) or an absence.
    Bye {
        pairing_allocated: bool,
        match_points: u32,
        game_points: u32,
    },
}

/// Every team's round (`event`'s teams' order) from the round's `games`, its players
/// without a board (`byes`) and the file's team `records`.
pub fn team_rounds(
    event: &TeamEvent,
    board_count: usize,
    games: &[Pairing],
    byes: &[Bye],
    records: &TeamRecords,
) -> Vec<TeamRound> {
    let (teams, scoring) = (&event.teams, &event.scoring);
    let (sequence, size) = match &event.sequence {
        Some(sequence) => (sequence.clone(), sequence.len()),
        None => (vec![Side::White, Side::Black], board_count),
    };
    let roster = Roster::new(teams);
    let white_teams = colours::white_teams(&roster, games, byes, records, &sequence, size);
    let (win, draw) = (scoring.games.win, scoring.games.draw);
    // Each team's boards, and the opponent its games name (with the first board's colours).
    let mut boards: Vec<Vec<Board>> = vec![Vec::new(); teams.len()];
    let mut opponent: Vec<Option<(usize, usize, bool)>> = vec![None; teams.len()];
    for (g, game) in games.iter().enumerate() {
        let Some(((w, wp), (b, bp))) = roster.sides(game) else {
            continue;
        };
        let (white_points, black_points, played, running) = match game.result.as_str() {
            "1-0" => (win, 0, true, false),
            "0-1" => (0, win, true, false),
            "1/2-1/2" => (draw, draw, true, false),
            "+-" => (win, 0, false, false),
            "-+" => (0, win, false, false),
            "--" => (0, 0, false, false),
            _ => (0, 0, false, true),
        };
        let board = |place, points| Board {
            place,
            points,
            played,
            opposed: true,
            game: Some(g),
            running,
        };
        boards[w].push(board(wp, white_points));
        boards[b].push(board(bp, black_points));
        let board_no = usize::from(game.board.0);
        for (team, other, white) in [(w, b, true), (b, w, false)] {
            if opponent[team].is_none_or(|(_, first, _)| board_no < first) {
                opponent[team] = Some((other, board_no, white));
            }
        }
    }
    for bye in byes {
        let Some((t, place)) = roster.member(bye.player.start_rank) else {
            continue;
        };
        let points = match bye.kind {
            Unpaired::FullPointBye | Unpaired::PairingAllocatedBye => win,
            Unpaired::HalfPointBye => draw,
            Unpaired::ZeroPointBye | Unpaired::NotPaired => 0,
        };
        boards[t].push(Board {
            place,
            points,
            played: false,
            opposed: false,
            game: None,
            running: false,
        });
    }
    // A match decided without games pairs teams whose boards name no opponent.
    for forfeit in &records.forfeits {
        let (Some(w), Some(b)) = (roster.team(forfeit.white), roster.team(forfeit.black)) else {
            continue;
        };
        if opponent[w].is_none() && opponent[b].is_none() {
            opponent[w] = Some((b, 0, true));
            opponent[b] = Some((w, 0, false));
        }
    }
    for board in &mut boards {
        // Unopposed zero results last (a reserve who sat out), then the board order.
        board.sort_by_key(|b| (!b.opposed && b.points == 0, b.place));
    }
    (0..teams.len())
        .map(|t| match opponent[t] {
            Some((o, _, first_board_white)) => {
                let white = white_teams[t].unwrap_or(first_board_white);
                let ours: u32 = boards[t].iter().map(|b| b.points).sum();
                let theirs: u32 = boards[o].iter().map(|b| b.points).sum();
                if boards[t].iter().chain(&boards[o]).any(|b| b.running) {
                    return TeamRound::Running { opponent: o, white };
                }
                let played = boards[t].iter().chain(&boards[o]).any(|b| b.played)
                    || (ours > 0 && theirs > 0);
                let forfeit = records.forfeits.iter().find(|f| {
                    [f.white, f.black] == [teams[t].number, teams[o].number]
                        || [f.black, f.white] == [teams[t].number, teams[o].number]
                });
                let match_points = match ours.cmp(&theirs) {
                    std::cmp::Ordering::Greater => scoring.matches.win,
                    std::cmp::Ordering::Equal if ours > 0 => scoring.matches.draw,
                    _ if boards[t].is_empty() && boards[o].is_empty() => {
                        // No board at all: the record's result.
                        forfeit.map_or(0, |f| {
                            forfeit_points(f.result, f.white == teams[t].number, scoring)
                        })
                    }
                    _ if played => scoring.matches.loss,
                    _ => 0,
                };
                TeamRound::Match {
                    opponent: o,
                    white,
                    played,
                    match_points,
                    game_points: ours,
                    boards: board_points(t, o, teams, &boards, board_count),
                }
            }
            None => bye(t, teams, &boards[t], records, scoring, board_count),
        })
        .collect()
}

/// A team's match points from a match decided without games (`330`).
fn forfeit_points(result: ForfeitResult, white: bool, scoring: &TeamScoring) -> u32 {
    match (result, white) {
        (ForfeitResult::WhiteWins, true) | (ForfeitResult::BlackWins, false) => scoring.matches.win,
        _ => 0,
    }
}

/// A team's round without a match: its bye record's (the last one for it: a later record
/// replaces an earlier, as gacrux reads them), else its boards' first result's.
fn bye(
    t: usize,
    teams: &[Team],
    boards: &[Board],
    records: &TeamRecords,
    scoring: &TeamScoring,
    board_count: usize,
) -> TeamRound {
    let kind = records
        .byes
        .iter()
        .rev()
        .find(|(team, _)| *team == teams[t].number)
        .map(|(_, kind)| *kind)
        .or_else(|| {
            boards.first().map(|b| match b.points {
                p if p >= scoring.games.win => TeamBye::Full,
                p if p > 0 => TeamBye::Half,
                _ => TeamBye::Zero,
            })
        });
    let all = |per_game: u32| per_game * board_count as u32;
    let (pairing_allocated, match_points, game_points) = match kind {
        Some(TeamBye::Full) => (false, scoring.matches.win, all(scoring.games.win)),
        Some(TeamBye::Half) => (false, scoring.matches.draw, all(scoring.games.draw)),
        Some(TeamBye::PairingAllocated) => (true, scoring.pairing_bye.0, scoring.pairing_bye.1),
        Some(TeamBye::Zero) | None => (false, 0, 0),
    };
    TeamRound::Bye {
        pairing_allocated,
        match_points,
        game_points,
    }
}

/// Each board's game points of team `t` against team `o`, in board order as gacrux lays a
/// match out: the lower-numbered team's boards in its order; where its board is unopposed,
/// the other team's next unopposed board sits on it.
fn board_points(
    t: usize,
    o: usize,
    teams: &[Team],
    boards: &[Vec<Board>],
    board_count: usize,
) -> Vec<u32> {
    let (low, high) = if teams[t].number < teams[o].number {
        (t, o)
    } else {
        (o, t)
    };
    let mut high_unopposed = boards[high].iter().filter(|b| !b.opposed);
    let mut out = vec![0; board_count];
    for (k, board) in boards[low].iter().take(board_count).enumerate() {
        let other = match board.game {
            Some(g) => boards[high].iter().find(|b| b.game == Some(g)),
            None => high_unopposed.next(),
        };
        out[k] = if low == t {
            board.points
        } else {
            other.map_or(0, |b| b.points)
        };
    }
    out
}
