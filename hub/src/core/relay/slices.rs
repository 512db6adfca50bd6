//! A slice of a round: the boards an outlet carries, as organisers write them (`"1-100"`,
//! `"1-50,201-250"`, `"7"`). lichess shows at most 100 games a round and reads a polled
//! source's first 256 games before it slices them, so the biggest events are relayed as
//! several lichess rounds, each fed its own boards.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use super::super::ids::BoardNo;

/// Ranges of board numbers, in order, none overlapping another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardRanges(Vec<RangeInclusive<u16>>);

/// Why a board range was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangesError {
    #[error("no boards: write ranges such as \"1-100\" or \"1-50,201-250\"")]
    Empty,
    #[error("{0:?} is not a board number or a range of them (\"1-100\")")]
    NotARange(String),
    #[error("board numbers run from 1 to {max}: {0:?}", max = BoardNo::MAX.0)]
    OutOfHall(String),
    #[error("{0:?} runs backwards")]
    Backwards(String),
    #[error("{0} and {1} overlap")]
    Overlap(String, String),
    #[error("more than {MAX_RANGES} ranges")]
    TooMany,
}

/// Ranges a slice may list: more is no organiser's slice but a stranger's query.
pub const MAX_RANGES: usize = 64;

impl FromStr for BoardRanges {
    type Err = RangesError;

    fn from_str(text: &str) -> Result<BoardRanges, RangesError> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() > MAX_RANGES {
            return Err(RangesError::TooMany);
        }
        let mut ranges = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let number = |n: &str| -> Result<u16, RangesError> {
                let n: u16 = n
                    .trim()
                    .parse()
                    .map_err(|_| RangesError::NotARange(part.to_owned()))?;
                if n == 0 || n > BoardNo::MAX.0 {
                    return Err(RangesError::OutOfHall(part.to_owned()));
                }
                Ok(n)
            };
            let range = match part.split_once('-') {
                Some((from, to)) => number(from)?..=number(to)?,
                None => number(part)?..=number(part)?,
            };
            if range.is_empty() {
                return Err(RangesError::Backwards(part.to_owned()));
            }
            ranges.push(range);
        }
        if ranges.is_empty() {
            return Err(RangesError::Empty);
        }
        ranges.sort_by_key(|r| *r.start());
        for pair in ranges.windows(2) {
            if pair[1].start() <= pair[0].end() {
                return Err(RangesError::Overlap(show(&pair[0]), show(&pair[1])));
            }
        }
        Ok(BoardRanges(ranges))
    }
}

fn show(range: &RangeInclusive<u16>) -> String {
    if range.start() == range.end() {
        range.start().to_string()
    } else {
        format!("{}-{}", range.start(), range.end())
    }
}

impl fmt::Display for BoardRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(show).collect();
        f.write_str(&parts.join(","))
    }
}

impl BoardRanges {
    /// Whether `board` is one of these.
    pub fn contains(&self, board: BoardNo) -> bool {
        self.0.iter().any(|r| r.contains(&board.0))
    }

    /// How many board numbers the ranges hold.
    pub fn len(&self) -> usize {
        self.0
            .iter()
            .map(|r| usize::from(r.end() - r.start()) + 1)
            .sum()
    }

    /// Never: a slice has a board.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a board is in both.
    pub fn overlaps(&self, other: &BoardRanges) -> bool {
        self.0.iter().any(|a| {
            other
                .0
                .iter()
                .any(|b| a.start() <= b.end() && b.start() <= a.end())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(text: &str) -> Result<BoardRanges, RangesError> {
        text.parse()
    }

    #[test]
    fn organisers_write_ranges_lists_and_single_boards() {
        let slice = ranges("201-250, 1-50").unwrap();
        assert_eq!(slice.to_string(), "1-50,201-250");
        assert_eq!(slice.len(), 100);
        assert!(slice.contains(BoardNo(1)) && slice.contains(BoardNo(250)));
        assert!(!slice.contains(BoardNo(51)) && !slice.contains(BoardNo(200)));
        assert_eq!(ranges("7").unwrap().len(), 1);
        assert!(ranges("1-100")
            .unwrap()
            .overlaps(&ranges("100-120").unwrap()));
        assert!(!ranges("1-100")
            .unwrap()
            .overlaps(&ranges("101-120").unwrap()));
    }

    #[test]
    fn a_malformed_range_says_what_is_wrong() {
        assert_eq!(ranges(""), Err(RangesError::Empty));
        assert_eq!(ranges("a-b"), Err(RangesError::NotARange("a-b".into())));
        assert_eq!(ranges("1-2-3"), Err(RangesError::NotARange("1-2-3".into())));
        assert_eq!(ranges("0-10"), Err(RangesError::OutOfHall("0-10".into())));
        assert_eq!(ranges("9-3"), Err(RangesError::Backwards("9-3".into())));
        assert_eq!(
            ranges("1-10,5-20"),
            Err(RangesError::Overlap("1-10".into(), "5-20".into()))
        );
        let many = vec!["1"; MAX_RANGES + 1].join(",");
        assert_eq!(ranges(&many), Err(RangesError::TooMany));
    }
}
