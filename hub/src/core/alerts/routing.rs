//! Who gets an alert: zones of boards, each with its arbiters; the chief arbiter sees
//! everything and is called when an alert is not acknowledged in time.

use crate::core::ids::{boards_of, BoardNo};
use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};

use super::texts::Language;

/// The zone of boards no configured zone covers, and of a hall without zones.
pub const HALL_ZONE: &str = "hall";

/// A part of the hall: board ranges an arbiter (or a team) watches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    /// Also an MQTT topic level: letters, digits, `-`, `_`.
    pub name: String,
    pub boards: Vec<RangeInclusive<BoardNo>>,
}

/// An arbiter who receives alerts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arbiter {
    pub name: String,
    /// The zones the arbiter watches (empty for the chief arbiter, who watches all).
    pub zones: Vec<String>,
    pub language: Language,
    pub chief: bool,
}

/// Zones and arbiters of the hall.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routing {
    pub zones: Vec<Zone>,
    pub arbiters: Vec<Arbiter>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoutingError {
    #[error("zone name {0:?}: use letters, digits, '-' or '_' (it is an MQTT topic level)")]
    BadZoneName(String),
    #[error("board {board} is in zones {first:?} and {second:?}")]
    Overlap {
        board: BoardNo,
        first: String,
        second: String,
    },
    #[error("arbiter {arbiter:?} watches zone {zone:?}, which is not defined")]
    UnknownZone { arbiter: String, zone: String },
    #[error("zone {0:?} is defined twice")]
    DuplicateZone(String),
}

pub fn is_valid_zone_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Routing {
    /// Checks that zones are well named, do not overlap and that arbiters watch known zones.
    pub fn validate(&self) -> Result<(), RoutingError> {
        for (i, zone) in self.zones.iter().enumerate() {
            if !is_valid_zone_name(&zone.name) {
                return Err(RoutingError::BadZoneName(zone.name.clone()));
            }
            for other in &self.zones[..i] {
                if other.name == zone.name {
                    return Err(RoutingError::DuplicateZone(zone.name.clone()));
                }
                for range in &zone.boards {
                    if let Some(board) = boards_of(range).find(|b| other.contains(*b)) {
                        return Err(RoutingError::Overlap {
                            board,
                            first: other.name.clone(),
                            second: zone.name.clone(),
                        });
                    }
                }
            }
        }
        for arbiter in &self.arbiters {
            for zone in &arbiter.zones {
                if !self.zones.iter().any(|z| &z.name == zone) && zone != HALL_ZONE {
                    return Err(RoutingError::UnknownZone {
                        arbiter: arbiter.name.clone(),
                        zone: zone.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The zone `board` belongs to.
    pub fn zone_of(&self, board: BoardNo) -> &str {
        self.zones
            .iter()
            .find(|z| z.contains(board))
            .map_or(HALL_ZONE, |z| z.name.as_str())
    }

    /// The arbiters who watch `zone`; the chief arbiters when nobody does.
    pub fn arbiters_of(&self, zone: &str) -> Vec<String> {
        let watching: Vec<String> = self
            .arbiters
            .iter()
            .filter(|a| !a.chief && a.zones.iter().any(|z| z == zone))
            .map(|a| a.name.clone())
            .collect();
        if watching.is_empty() {
            self.chiefs()
        } else {
            watching
        }
    }

    /// The chief arbiters; `"chief"` when none is named.
    pub fn chiefs(&self) -> Vec<String> {
        let chiefs: Vec<String> = self
            .arbiters
            .iter()
            .filter(|a| a.chief)
            .map(|a| a.name.clone())
            .collect();
        if chiefs.is_empty() {
            vec!["chief".to_owned()]
        } else {
            chiefs
        }
    }

    /// Every zone name alerts may carry.
    pub fn zone_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.zones.iter().map(|z| z.name.clone()).collect();
        names.push(HALL_ZONE.to_owned());
        names
    }

    pub fn arbiter(&self, name: &str) -> Option<&Arbiter> {
        self.arbiters.iter().find(|a| a.name == name)
    }
}

impl Zone {
    pub fn contains(&self, board: BoardNo) -> bool {
        self.boards.iter().any(|r| r.contains(&board))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routing() -> Routing {
        Routing {
            zones: vec![
                Zone {
                    name: "A".into(),
                    boards: vec![BoardNo(1)..=BoardNo(10)],
                },
                Zone {
                    name: "B".into(),
                    boards: vec![BoardNo(11)..=BoardNo(20), BoardNo(31)..=BoardNo(31)],
                },
            ],
            arbiters: vec![
                Arbiter {
                    name: "ola".into(),
                    zones: vec!["A".into()],
                    language: Language::Norwegian,
                    chief: false,
                },
                Arbiter {
                    name: "eva".into(),
                    zones: vec![],
                    language: Language::Swedish,
                    chief: true,
                },
            ],
        }
    }

    #[test]
    fn boards_go_to_their_zone_and_its_arbiters() {
        let routing = routing();
        assert_eq!(routing.zone_of(BoardNo(7)), "A");
        assert_eq!(routing.zone_of(BoardNo(31)), "B");
        assert_eq!(routing.zone_of(BoardNo(25)), HALL_ZONE);
        assert_eq!(routing.arbiters_of("A"), vec!["ola".to_owned()]);
        // Nobody watches B: the chief does.
        assert_eq!(routing.arbiters_of("B"), vec!["eva".to_owned()]);
        assert!(routing.validate().is_ok());
    }

    #[test]
    fn overlapping_zones_and_unknown_zones_are_refused() {
        let mut routing = routing();
        routing.zones[1].boards.push(BoardNo(10)..=BoardNo(10));
        assert_eq!(
            routing.validate(),
            Err(RoutingError::Overlap {
                board: BoardNo(10),
                first: "A".into(),
                second: "B".into()
            })
        );
        let mut routing = self::routing();
        routing.arbiters[0].zones.push("C".into());
        assert!(matches!(
            routing.validate(),
            Err(RoutingError::UnknownZone { .. })
        ));
        let mut routing = self::routing();
        routing.zones[0].name = "A/B".into();
        assert!(matches!(
            routing.validate(),
            Err(RoutingError::BadZoneName(_))
        ));
    }
}
