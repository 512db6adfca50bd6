//! Where each player and team of a team event stands: a player's team and place in its
//! list, a team's index by its number, and the two teams a board is between.

use std::collections::HashMap;

use super::Team;
use crate::core::pairings::Pairing;

/// A player's team (its index in the event's teams) and place in the team's list.
pub type Member = (usize, usize);

pub struct Roster {
    member: HashMap<u32, Member>,
    /// Each team's number, by index.
    numbers: Vec<u32>,
    number: HashMap<u32, usize>,
}

impl Roster {
    pub fn new(teams: &[Team]) -> Roster {
        let mut member = HashMap::new();
        for (t, team) in teams.iter().enumerate() {
            for (place, rank) in team.members.iter().enumerate() {
                member.insert(*rank, (t, place));
            }
        }
        let number = teams
            .iter()
            .enumerate()
            .map(|(t, team)| (team.number, t))
            .collect();
        Roster {
            member,
            numbers: teams.iter().map(|t| t.number).collect(),
            number,
        }
    }

    /// How many teams.
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    /// Team `t`'s number.
    pub fn number(&self, t: usize) -> u32 {
        self.numbers[t]
    }

    /// The player with start rank `rank`, where a team lists them.
    pub fn member(&self, rank: u32) -> Option<Member> {
        self.member.get(&rank).copied()
    }

    /// The team numbered `number`, by its index.
    pub fn team(&self, number: u32) -> Option<usize> {
        self.number.get(&number).copied()
    }

    /// A board between two teams' players: White's and Black's; `None` where a player is in
    /// no team, or both are in one.
    pub fn sides(&self, game: &Pairing) -> Option<(Member, Member)> {
        let white = self.member(game.white.start_rank)?;
        let black = self.member(game.black.start_rank)?;
        (white.0 != black.0).then_some((white, black))
    }
}
