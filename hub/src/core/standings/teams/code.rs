//! A team tie-break as C.07 (Articles 11–13) and TRF-2026 write it: an individual code
//! computed on match or game points (`BH:MP/C1`, `SB:GP`; `BH` alone is `BH:MP`), the
//! extended direct encounter (`EDE`, `EDET`: board by board after it), the extended
//! Sonneborn-Berger (`ESB`, `EMGSB`: the opponents' one kind of points times one's own
//! other), and `MPvGP` (the other primary score: game points).

use super::super::code::{CodeError, Family, Tiebreak};

/// Which of a team's scores a tie-break counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `MP`: match points (11.1).
    Match,
    /// `GP`: game points (11.2).
    Game,
}

/// What a team tie-break measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeamFamily {
    /// An individual tie-break on the teams' match or game points (`BH:MP`, `SB:GP`).
    On(Kind, Tiebreak),
    /// `EDE` (13.3): the direct encounter on match points, then on game points, around
    /// again until neither separates; `EDET` then board by board between two teams.
    ExtendedEncounter { boards: bool, forfeits: bool },
    /// `ESB` (12.3): each opponent's `scores` times the team's own `results` against them;
    /// the cuts and `/P` of the embedded Sonneborn-Berger.
    ExtendedSonnebornBerger {
        scores: Kind,
        results: Kind,
        tiebreak: Tiebreak,
    },
    /// `MPvGP`: the primary score's other kind, game points.
    GamePoints,
}

/// A tie-break of a team event's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamTiebreak {
    /// As the configuration spells it.
    pub text: String,
    pub family: TeamFamily,
}

impl TeamTiebreak {
    /// The code as TRF-2026 writes it (`BH:MP/C1`).
    pub fn trf_spelling(&self) -> String {
        self.text.to_ascii_uppercase().replacen('-', "/", 1)
    }
}

/// The team tie-breaks computed (for error messages).
const TEAM_CODES: &str = "EDE, EDET, ESB, EMMSB, EMGSB, EGMSB, EGGSB, MPvGP, and BH, SB, AOB, \
     PS, DE, TPN on :MP or :GP, WIN, WON, REP, KS on :MP";

impl std::str::FromStr for TeamTiebreak {
    type Err = CodeError;

    fn from_str(text: &str) -> Result<TeamTiebreak, CodeError> {
        let upper = text.trim().to_ascii_uppercase();
        let (head, modifiers) = match upper.find(['/', '-']) {
            Some(at) => upper.split_at(at),
            None => (upper.as_str(), ""),
        };
        let (name, kind) = match head.split_once(':') {
            Some((name, "MP")) => (name, Some(Kind::Match)),
            Some((name, "GP")) => (name, Some(Kind::Game)),
            Some(_) => return Err(unknown(text)),
            None => (head, None),
        };
        // The modifiers as the individual code they extend reads them.
        let embedded = |code: &str| -> Result<Tiebreak, CodeError> {
            format!("{code}{modifiers}").parse().map_err(|e| match e {
                CodeError::Modifier { modifier, .. } => CodeError::Modifier {
                    code: text.to_owned(),
                    modifier,
                },
                other => other,
            })
        };
        let sonneborn = |scores, results| -> Result<TeamFamily, CodeError> {
            Ok(TeamFamily::ExtendedSonnebornBerger {
                scores,
                results,
                tiebreak: embedded("SB")?,
            })
        };
        let family = match (name, kind) {
            ("EDE" | "EDET", None) => TeamFamily::ExtendedEncounter {
                boards: name == "EDET",
                forfeits: embedded("DE")?.predetermined,
            },
            ("ESB", None | Some(Kind::Match)) => sonneborn(Kind::Match, Kind::Game)?,
            ("ESB", Some(Kind::Game)) => sonneborn(Kind::Game, Kind::Match)?,
            ("EMMSB", None) => sonneborn(Kind::Match, Kind::Match)?,
            ("EMGSB", None) => sonneborn(Kind::Match, Kind::Game)?,
            ("EGMSB", None) => sonneborn(Kind::Game, Kind::Match)?,
            ("EGGSB", None) => sonneborn(Kind::Game, Kind::Game)?,
            ("MPVGP", None) if modifiers.is_empty() => TeamFamily::GamePoints,
            (_, kind) => {
                let tiebreak = embedded(name).map_err(|e| match e {
                    CodeError::Unknown(_) | CodeError::Team(_) => unknown(text),
                    other => other,
                })?;
                let kind = kind.unwrap_or(Kind::Match);
                let on_games = matches!(
                    tiebreak.family,
                    Family::Points
                        | Family::Buchholz
                        | Family::SonnebornBerger
                        | Family::AverageOfBuchholz
                        | Family::Progressive
                        | Family::DirectEncounter
                        | Family::PairingNumber
                );
                let rated = matches!(
                    tiebreak.family,
                    Family::AverageRatingOfOpponents
                        | Family::Performance
                        | Family::PerfectPerformance
                        | Family::AverageOfPerformances
                        | Family::AverageOfPerfectPerformances
                        | Family::Rating
                        | Family::Standard
                        // Fore Buchholz is checked against the reference for players only.
                        | Family::ForeBuchholz
                );
                if rated || (kind == Kind::Game && !on_games) {
                    return Err(CodeError::Team(format!(
                        "{text:?} is not computed for teams (the team codes: {TEAM_CODES})"
                    )));
                }
                TeamFamily::On(kind, tiebreak)
            }
        };
        Ok(TeamTiebreak {
            text: text.trim().to_owned(),
            family,
        })
    }
}

fn unknown(text: &str) -> CodeError {
    CodeError::Team(format!(
        "{text:?} is no team tie-break this hub computes ({TEAM_CODES})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(code: &str) -> TeamFamily {
        code.parse::<TeamTiebreak>().unwrap().family
    }

    #[test]
    fn team_codes_read_as_trf_2026_writes_them() {
        let TeamFamily::On(Kind::Match, bh) = family("BH:MP/C1/P") else {
            panic!("BH:MP/C1/P")
        };
        assert_eq!(
            (bh.family, bh.cut_low, bh.predetermined),
            (Family::Buchholz, 1, true)
        );
        assert!(matches!(family("bh"), TeamFamily::On(Kind::Match, _)));
        assert!(matches!(family("SB:GP"), TeamFamily::On(Kind::Game, _)));
        assert_eq!(
            family("EDET/P"),
            TeamFamily::ExtendedEncounter {
                boards: true,
                forfeits: true
            }
        );
        let TeamFamily::ExtendedSonnebornBerger {
            scores,
            results,
            tiebreak,
        } = family("EMGSB/C1/P")
        else {
            panic!("EMGSB")
        };
        assert_eq!(
            (scores, results, tiebreak.cut_low),
            (Kind::Match, Kind::Game, 1)
        );
        assert!(matches!(
            family("ESB:GP"),
            TeamFamily::ExtendedSonnebornBerger {
                scores: Kind::Game,
                results: Kind::Match,
                ..
            }
        ));
        assert_eq!(family("MPvGP"), TeamFamily::GamePoints);
        for refused in [
            "ARO:MP", "WIN:GP", "BPG:GP", "BH:XP", "EDE/C1", "XYZ", "MPVGP/C1",
        ] {
            assert!(refused.parse::<TeamTiebreak>().is_err(), "{refused}");
        }
    }
}
