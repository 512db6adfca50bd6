//! A tie-break as FIDE's regulations (C.07) and TRF-2026 write it: a code and its modifiers,
//! `BH-C1` or `BH/C1` (Buchholz cut 1), `BH/M1` (median), `SB`, `DE`, `PS/C1`, `ARO`.

/// What a tie-break measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `PTS`: the points themselves.
    Points,
    /// `BH` (8.1): the opponents' scores.
    Buchholz,
    /// `FB`: Buchholz with every game of the event's last round counted as a draw, known
    /// before that round ends; before the last round, Buchholz.
    ForeBuchholz,
    /// `SB` (9.1): the opponents' scores, each times the result against them.
    SonnebornBerger,
    /// `AOB` (8.2): the average of the opponents' Buchholz.
    AverageOfBuchholz,
    /// `DE` (6): the results among the tied players.
    DirectEncounter,
    /// `WIN` (7.1): rounds won, with or without play.
    Wins,
    /// `WON` (7.2): games won over the board.
    WonOverTheBoard,
    /// `BPG` (7.3): games played with Black.
    GamesWithBlack,
    /// `BWG` (7.4): games won with Black.
    WonWithBlack,
    /// `REP` (7.6, `GE` before 2026): rounds one elected to play.
    RoundsElected,
    /// `PS` (7.5): the sum of the running scores.
    Progressive,
    /// `KS` (9.2): points against opponents with half the possible score or more.
    Koya,
    /// `ARO` (10.1): the opponents' average rating.
    AverageRatingOfOpponents,
    /// `TPR` (10.2): the tournament performance rating.
    Performance,
    /// `PTP` (10.3): the perfect tournament performance.
    PerfectPerformance,
    /// `APRO` (10.4): the opponents' average tournament performance rating.
    AverageOfPerformances,
    /// `APPO` (10.5): the opponents' average perfect tournament performance.
    AverageOfPerfectPerformances,
    /// `RTNG` (2026): the player's own rating.
    Rating,
    /// `STD` (2026): the score in the standard point system (1, ½, 0 a round).
    Standard,
    /// `TPN` (2026): the tournament pairing number, the lower first.
    PairingNumber,
}

/// A tie-break of the event's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tiebreak {
    /// As the configuration spells it.
    pub text: String,
    pub family: Family,
    /// The least significant values cut (`C1`, and the low half of `M1`).
    pub cut_low: usize,
    /// The most significant values cut (the high half of `M1`).
    pub cut_high: usize,
    /// `U1400` (ARO, TPR): the rating the unrated count with in this tie-break, over the
    /// event's (`[standings] unrated`).
    pub unrated: Option<u16>,
    /// `L` (KS, 9.2): the opponents counted are those with at least `percent` % of the
    /// possible score, moved by `shift_tenths` (`L60`, `L+2`: a point up, `L-1.5`).
    pub koya_limit: KoyaLimit,
    /// `P` (BH, SB, DE): a game decided without play counts as played against its
    /// scheduled opponent, as gacrux's "predetermined" reads it (no dummy of Article 16
    /// for it, and a forfeit is an encounter).
    pub predetermined: bool,
}

/// Which opponents Koya counts: those with `percent` % of the possible score or more, plus
/// `shift_tenths` tenths of a point (C.07 9.2; `KS/L…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KoyaLimit {
    pub percent: u32,
    pub shift_tenths: i64,
}

impl Default for KoyaLimit {
    fn default() -> KoyaLimit {
        KoyaLimit {
            percent: 50,
            shift_tenths: 0,
        }
    }
}

impl Tiebreak {
    /// The code as TRF-2026 writes it: modifiers after `/` (`BH-C1` is `BH/C1`).
    pub fn trf_spelling(&self) -> String {
        let upper = self.text.to_ascii_uppercase();
        match upper.split_once('/') {
            Some((name, rest)) => format!("{}/{rest}", name.replacen('-', "/", 1)),
            None => upper.replacen('-', "/", 1),
        }
    }
}

/// Why a tie-break's code was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("{0:?} is no tie-break of FIDE's C.07 this hub computes (PTS, BH, FB, SB, AOB, DE, WIN, WON, BPG, BWG, REP, PS, KS, ARO, TPR, PTP, APRO, APPO, RTNG, STD, TPN)")]
    Unknown(String),
    #[error("{code:?}: the modifier {modifier:?} is not taken here (C n and M n for Buchholz, FB, SB, AOB, PS, ARO, TPR and PTP; U n for the ratings' tie-breaks; L for KS; P for BH, FB, SB and DE)")]
    Modifier { code: String, modifier: String },
    /// A team's code among the players', or a code teams are not ranked by.
    #[error("{0}")]
    Team(String),
}

impl std::str::FromStr for Tiebreak {
    type Err = CodeError;

    fn from_str(text: &str) -> Result<Tiebreak, CodeError> {
        let upper = text.trim().to_ascii_uppercase();
        if upper.contains(':') || upper.starts_with('E') || upper == "MPVGP" {
            return Err(CodeError::Team(format!(
                "{text:?} is a team tie-break: it ranks the teams (GET /api/standings/teams), \
                 not the players"
            )));
        }
        // FIDE writes `BH-C1`, TRF-2026 `BH/C1`: a `-` after the name only (`KS/L-2` keeps
        // its sign).
        let (head, tail) = upper.split_once('/').unwrap_or((&upper, ""));
        let (name, first) = head.split_once('-').unwrap_or((head, ""));
        let parts = std::iter::once(first)
            .chain(tail.split('/'))
            .filter(|part| !part.is_empty());
        let family = match name {
            "PTS" => Family::Points,
            "BH" => Family::Buchholz,
            "FB" => Family::ForeBuchholz,
            "SB" => Family::SonnebornBerger,
            "AOB" => Family::AverageOfBuchholz,
            "DE" => Family::DirectEncounter,
            "WIN" => Family::Wins,
            "WON" => Family::WonOverTheBoard,
            "BPG" => Family::GamesWithBlack,
            "BWG" => Family::WonWithBlack,
            "REP" | "GE" => Family::RoundsElected,
            "PS" => Family::Progressive,
            "KS" => Family::Koya,
            "ARO" => Family::AverageRatingOfOpponents,
            "TPR" => Family::Performance,
            "PTP" => Family::PerfectPerformance,
            "APRO" => Family::AverageOfPerformances,
            "APPO" => Family::AverageOfPerfectPerformances,
            "RTNG" => Family::Rating,
            "STD" => Family::Standard,
            "TPN" => Family::PairingNumber,
            _ => return Err(CodeError::Unknown(text.to_owned())),
        };
        let cuttable = matches!(
            family,
            Family::Buchholz
                | Family::ForeBuchholz
                | Family::SonnebornBerger
                | Family::AverageOfBuchholz
                | Family::Progressive
                | Family::AverageRatingOfOpponents
                | Family::Performance
                | Family::PerfectPerformance
        );
        let rated = matches!(
            family,
            Family::AverageRatingOfOpponents
                | Family::Performance
                | Family::PerfectPerformance
                | Family::AverageOfPerformances
                | Family::AverageOfPerfectPerformances
                | Family::Rating
        );
        let (mut cut_low, mut cut_high) = (0, 0);
        let (mut unrated, mut koya_limit) = (None, KoyaLimit::default());
        let mut predetermined = false;
        let forfeits_count = matches!(
            family,
            Family::Buchholz
                | Family::ForeBuchholz
                | Family::SonnebornBerger
                | Family::DirectEncounter
        );
        for modifier in parts {
            let refused = || CodeError::Modifier {
                code: text.to_owned(),
                modifier: modifier.to_owned(),
            };
            let (kind, n) = modifier.split_at(modifier.len().min(1));
            match kind {
                "C" | "M" => {
                    let n: usize = n.parse().map_err(|_| refused())?;
                    match kind {
                        "C" if cuttable && n <= 9 => cut_low = n,
                        "M" if cuttable && n <= 9 && family != Family::Progressive => {
                            (cut_low, cut_high) = (n, n)
                        }
                        _ => return Err(refused()),
                    }
                }
                "U" if rated => {
                    let rating: u16 = n.parse().map_err(|_| refused())?;
                    unrated = Some(rating).filter(|r| (100..=3500).contains(r));
                    unrated.ok_or_else(refused)?;
                }
                "L" if family == Family::Koya => {
                    koya_limit = koya_limit_of(n).ok_or_else(refused)?;
                }
                "P" if forfeits_count && n.is_empty() => predetermined = true,
                _ => return Err(refused()),
            }
        }
        Ok(Tiebreak {
            text: text.trim().to_owned(),
            family,
            cut_low,
            cut_high,
            unrated,
            koya_limit,
            predetermined,
        })
    }
}

/// Koya's limit as `L` writes it, as gacrux reads it: `L60` 60 % of the possible score,
/// `L+2` / `L-2` two half points up or down, `L+1.5` a point and a half (a `.` counts
/// points).
fn koya_limit_of(text: &str) -> Option<KoyaLimit> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => {
            let percent: u32 = text.parse().ok().filter(|p| *p <= 100)?;
            return Some(KoyaLimit {
                percent,
                shift_tenths: 0,
            });
        }
    };
    let n = &text[1..];
    let tenths: u32 = if n.contains('.') {
        crate::core::pairings::tenths(n)?
    } else {
        u32::from(n.parse::<u16>().ok()?) * 5
    };
    Some(KoyaLimit {
        percent: 50,
        shift_tenths: sign * i64::from(tenths),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_fide_and_trf_2026_write_them() {
        let bh: Tiebreak = "BH-C1".parse().unwrap();
        assert_eq!(
            (bh.family, bh.cut_low, bh.cut_high),
            (Family::Buchholz, 1, 0)
        );
        let median: Tiebreak = "bh/m1".parse().unwrap();
        assert_eq!((median.cut_low, median.cut_high), (1, 1));
        assert_eq!(
            "GE".parse::<Tiebreak>().unwrap().family,
            Family::RoundsElected
        );
        assert!(matches!(
            "XYZ".parse::<Tiebreak>(),
            Err(CodeError::Unknown(_))
        ));
        assert!(matches!(
            "WIN/C1".parse::<Tiebreak>(),
            Err(CodeError::Modifier { .. })
        ));
        assert!(matches!(
            "BH:MP/C1".parse::<Tiebreak>(),
            Err(CodeError::Team(_))
        ));
        let aro: Tiebreak = "ARO-C1/U1400".parse().unwrap();
        assert_eq!((aro.cut_low, aro.unrated), (1, Some(1400)));
        assert_eq!(aro.trf_spelling(), "ARO/C1/U1400");
        assert!("BH/U1400".parse::<Tiebreak>().is_err(), "U is for ratings");
        let limits: Vec<KoyaLimit> = ["KS/L60", "KS/L+2", "KS/L-1.5"]
            .iter()
            .map(|c| c.parse::<Tiebreak>().unwrap().koya_limit)
            .collect();
        assert_eq!(
            limits
                .iter()
                .map(|l| (l.percent, l.shift_tenths))
                .collect::<Vec<_>>(),
            [(60, 0), (50, 10), (50, -15)]
        );
        assert_eq!(
            "ks/l-2".parse::<Tiebreak>().unwrap().trf_spelling(),
            "KS/L-2"
        );
        let sb: Tiebreak = "SB-C1/P".parse().unwrap();
        assert!(sb.predetermined && sb.cut_low == 1);
        assert!("DE/P".parse::<Tiebreak>().unwrap().predetermined);
        assert!(
            "WIN/P".parse::<Tiebreak>().is_err(),
            "P is for BH, SB and DE"
        );
        assert!("BH/P2".parse::<Tiebreak>().is_err());
    }
}
