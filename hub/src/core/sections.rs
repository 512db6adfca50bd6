//! The hall's sections: boards that play under one set of rules and one time control (a
//! masters' open at 90+30 on boards 1–60, a juniors' rapid on 61–100). A board's game takes
//! its rules and its clock from its section; a hall without sections is one.

use std::ops::RangeInclusive;

use protocol::time_control::TimeControl;

use super::ids::BoardNo;
use super::laws::Rules;

/// One section.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// As the configuration names it; `None` for a hall without sections.
    pub name: Option<String>,
    /// Its boards; empty for the hall's own section, which holds every board no other does.
    pub boards: Vec<RangeInclusive<BoardNo>>,
    pub rules: Rules,
    /// Its boards' time control; without one the hub shows the clocks but cannot check them.
    pub time_control: Option<TimeControl>,
}

impl Section {
    /// Whether `board` is one of this section's.
    pub fn holds(&self, board: BoardNo) -> bool {
        self.boards.iter().any(|range| range.contains(&board))
    }
}

/// Every section of the hall, and the hall's own for boards in none.
#[derive(Debug, Clone, PartialEq)]
pub struct Sections {
    named: Vec<Section>,
    hall: Section,
}

impl Default for Sections {
    fn default() -> Sections {
        Sections::one(Rules::default(), None)
    }
}

impl Sections {
    /// A hall that is one section.
    pub fn one(rules: Rules, time_control: Option<TimeControl>) -> Sections {
        Sections {
            named: Vec::new(),
            hall: Section {
                name: None,
                boards: Vec::new(),
                rules,
                time_control,
            },
        }
    }

    /// `named` sections (their boards apart: the configuration checks it), and the hall's
    /// rules for boards in none of them.
    pub fn new(
        named: Vec<Section>,
        hall_rules: Rules,
        hall_time_control: Option<TimeControl>,
    ) -> Sections {
        Sections {
            named,
            ..Sections::one(hall_rules, hall_time_control)
        }
    }

    /// The section `board` plays in.
    pub fn of(&self, board: BoardNo) -> &Section {
        self.named
            .iter()
            .find(|s| s.holds(board))
            .unwrap_or(&self.hall)
    }

    /// The section called `name`; `None` names the hall's own.
    pub fn named(&self, name: Option<&str>) -> Option<&Section> {
        match name {
            None => Some(&self.hall),
            Some(name) => self.named.iter().find(|s| s.name.as_deref() == Some(name)),
        }
    }

    /// The named sections, in the configuration's order.
    pub fn all(&self) -> &[Section] {
        &self.named
    }

    /// The rules boards in no section play under.
    pub fn hall(&self) -> &Section {
        &self.hall
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::laws::GameType;

    #[test]
    fn a_board_plays_in_its_sections_rules_and_others_in_the_halls() {
        let rapid = Rules {
            game_type: GameType::Rapid,
            ..Rules::default()
        };
        let sections = Sections::new(
            vec![Section {
                name: Some("rapid".into()),
                boards: vec![BoardNo(11)..=BoardNo(20)],
                rules: rapid,
                time_control: "900+10".parse().ok(),
            }],
            Rules::default(),
            "5400+30".parse().ok(),
        );
        assert_eq!(sections.of(BoardNo(11)).rules.game_type, GameType::Rapid);
        assert_eq!(sections.of(BoardNo(20)).name.as_deref(), Some("rapid"));
        assert_eq!(sections.of(BoardNo(10)).rules.game_type, GameType::Standard);
        assert_eq!(sections.of(BoardNo(21)).name, None);
        assert!(sections.named(Some("rapid")).is_some());
        assert!(sections.named(Some("blitz")).is_none());
    }
}
