//! What standings are computed from: each player's rounds, typed as the hub knows them (a game
//! played, a game decided without play, a bye or absence, a game still in play), with the
//! points each gave in the event's point system.

use std::collections::HashMap;

use crate::core::side::Side;

/// The event's point system, in tenths of a point: a win and a draw (what `WIN` counts, and
/// what an unplayed round is worth where Article 16 counts it as a draw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scoring {
    pub win: u32,
    pub draw: u32,
}

impl Default for Scoring {
    fn default() -> Scoring {
        Scoring { win: 10, draw: 5 }
    }
}

/// How an event is paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum System {
    /// Each round paired on the results so far.
    #[default]
    Swiss,
    /// All play all, once or more (the Berger tables): every pairing fixed before the
    /// event.
    RoundRobin,
}

impl std::str::FromStr for System {
    type Err = String;
    fn from_str(text: &str) -> Result<System, String> {
        match text {
            "swiss" => Ok(System::Swiss),
            "round-robin" => Ok(System::RoundRobin),
            other => Err(format!(
                "{other:?}: the pairing system is \"swiss\" or \"round-robin\""
            )),
        }
    }
}

/// One round of a player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A game played over the board, and the points it gave the player.
    Played {
        opponent: u32,
        side: Side,
        points: u32,
    },
    /// A game decided without play (a forfeit won or lost, a double forfeit).
    Forfeited {
        opponent: u32,
        side: Side,
        points: u32,
    },
    /// No opponent: a bye the player asked for (full, half or zero point) or an absence.
    Unpaired { points: u32 },
    /// The pairing-allocated bye: no opponent, but no round the player chose to miss
    /// (16.2.1), whatever it is worth (a team's is often a drawn match).
    PairingBye { points: u32 },
    /// A game still in play: counted as not yet played.
    Running { opponent: u32, side: Side },
}

/// A player and their rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entrant {
    pub start_rank: u32,
    pub name: String,
    pub rating: Option<u16>,
    /// Round 1 first; a round missing at the end is an absence.
    pub outcomes: Vec<Outcome>,
}

/// Every player's rounds up to the round the standings are after.
#[derive(Debug, Clone)]
pub struct Crosstable {
    /// The rounds counted (the standings are after this round).
    pub rounds: usize,
    pub scoring: Scoring,
    pub entrants: Vec<Entrant>,
    /// The rating an unrated player counts with in rating tie-breaks (`[standings]
    /// unrated`); without one, those tie-breaks have no value unless every player is rated.
    pub unrated: Option<u16>,
    /// Where a round's win is not its points' (a team's game points: the match is won by
    /// its match points), each entrant's rounds won.
    pub won: Option<Vec<Vec<bool>>>,
    /// The event's rounds (TRF `142`/`XXR`), where known: Fore Buchholz counts the last
    /// one's games as draws.
    pub scheduled: Option<usize>,
    /// How the event is paired: a round-robin's tie-breaks count differently.
    pub system: System,
    by_start_rank: HashMap<u32, usize>,
}

impl Crosstable {
    pub fn new(rounds: usize, scoring: Scoring, entrants: Vec<Entrant>) -> Crosstable {
        let by_start_rank = entrants
            .iter()
            .enumerate()
            .map(|(i, e)| (e.start_rank, i))
            .collect();
        Crosstable {
            rounds,
            scoring,
            entrants,
            unrated: None,
            won: None,
            scheduled: None,
            system: System::Swiss,
            by_start_rank,
        }
    }

    /// Player `i`'s round `r` (0-based), a game in play taken as not yet played.
    fn counted(&self, i: usize, r: usize) -> Outcome {
        match self.entrants[i].outcomes.get(r) {
            None | Some(Outcome::Running { .. }) => Outcome::Unpaired { points: 0 },
            Some(outcome) => *outcome,
        }
    }

    /// The points of player `i`'s round `r`, in tenths.
    pub fn points_in(&self, i: usize, r: usize) -> i64 {
        match self.counted(i, r) {
            Outcome::Played { points, .. }
            | Outcome::Forfeited { points, .. }
            | Outcome::Unpaired { points }
            | Outcome::PairingBye { points } => i64::from(points),
            Outcome::Running { .. } => 0,
        }
    }

    /// Player `i`'s points after every counted round, in tenths.
    pub fn points(&self, i: usize) -> i64 {
        (0..self.rounds).map(|r| self.points_in(i, r)).sum()
    }

    /// The opponent paired with player `i` in round `r` (played or forfeited).
    pub fn opponent(&self, i: usize, r: usize) -> Option<usize> {
        match self.counted(i, r) {
            Outcome::Played { opponent, .. } | Outcome::Forfeited { opponent, .. } => {
                self.by_start_rank.get(&opponent).copied()
            }
            _ => None,
        }
    }

    /// The opponent player `i` is paired with in round `r`: played, forfeited, or a game
    /// still in play.
    pub fn paired_with(&self, i: usize, r: usize) -> Option<usize> {
        match self.entrants[i].outcomes.get(r) {
            Some(Outcome::Running { opponent, .. }) => self.by_start_rank.get(opponent).copied(),
            _ => self.opponent(i, r),
        }
    }

    /// A round-robin (its pairings fixed before the event, as gacrux reads C.07): a
    /// forfeit counts as a game against its scheduled opponent, a round without an opponent
    /// adds nothing to Buchholz or Sonneborn-Berger, and every tied player met every other.
    pub fn round_robin(&self) -> bool {
        self.system == System::RoundRobin
    }

    /// Whether round `r` of player `i` counts as a game against its opponent where a
    /// tie-break's `forfeits` (`/P`) or the round-robin says a forfeit does.
    pub fn met(&self, i: usize, r: usize, forfeits: bool) -> bool {
        self.opponent(i, r).is_some() && (forfeits || self.round_robin() || self.played(i, r))
    }

    /// The opponents of the games player `i` played over the board, round by round (the
    /// averages of opponents' values count these).
    pub fn played_opponents(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.rounds)
            .filter(move |&r| self.played(i, r))
            .filter_map(move |r| self.opponent(i, r))
    }

    /// Whether round `r` of player `i` was played over the board.
    pub fn played(&self, i: usize, r: usize) -> bool {
        matches!(self.counted(i, r), Outcome::Played { .. }) && self.opponent(i, r).is_some()
    }

    /// The side player `i` had in round `r`'s game, played or forfeited.
    pub fn side(&self, i: usize, r: usize) -> Option<Side> {
        match self.counted(i, r) {
            Outcome::Played { side, .. } | Outcome::Forfeited { side, .. } => Some(side),
            _ => None,
        }
    }

    /// A round the player chose not to play (C.07 16.1.2): unplayed, not the
    /// pairing-allocated bye, and not won (a forfeit lost, a half- or zero-point bye, an
    /// absence).
    pub fn voluntarily_unplayed(&self, i: usize, r: usize) -> bool {
        !self.played(i, r) && !self.pairing_bye(i, r) && !self.won(i, r)
    }

    /// Whether player `i` won round `r` (with or without play).
    pub fn won(&self, i: usize, r: usize) -> bool {
        match &self.won {
            Some(won) => won[i].get(r).copied().unwrap_or(false),
            None => self.points_in(i, r) == self.win(),
        }
    }

    /// Whether round `r` of player `i` was the pairing-allocated bye.
    pub fn pairing_bye(&self, i: usize, r: usize) -> bool {
        matches!(self.counted(i, r), Outcome::PairingBye { .. })
    }

    /// Whether a game of player `i` is still in play.
    pub fn running(&self, i: usize) -> bool {
        self.entrants[i]
            .outcomes
            .iter()
            .take(self.rounds)
            .any(|o| matches!(o, Outcome::Running { .. }))
    }

    /// Player `i`'s rating as rating tie-breaks count it.
    pub fn rating(&self, i: usize) -> Option<u16> {
        self.entrants[i].rating.or(self.unrated)
    }

    pub fn win(&self) -> i64 {
        i64::from(self.scoring.win)
    }

    pub fn draw(&self) -> i64 {
        i64::from(self.scoring.draw)
    }
}
