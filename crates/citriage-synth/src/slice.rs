//! A day slice of the world: the builds started on some of its days, written alone so
//! that a world too large for the disk can be generated, fetched and removed piece by
//! piece. Every build is still planned and its random draws made (the slice's builds
//! are exactly the whole world's); only the slice's build folders are written, and the
//! world's aggregate files (job histories, `prowjobs.js`, dashboards, TestGrid, the
//! payload stream, truth) only by the slice holding the world's last day.

use crate::out::SynthError;
use citriage_model::time;
use std::fmt;

/// Days `first..=last` of the world, day 1 being its first (`end_date - days + 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DaySlice {
    pub first: u32,
    pub last: u32,
}

impl DaySlice {
    /// `N` (one day) or `A..B` (days A to B, both included), days counted from 1.
    pub fn parse(s: &str) -> Result<DaySlice, String> {
        let num = |t: &str| {
            t.trim().parse::<u32>().map_err(|_| format!("{s:?}: expected a day number N or a range A..B (days from 1)"))
        };
        let (first, last) = match s.split_once("..") {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(s)?;
                (n, n)
            }
        };
        if first == 0 || last < first {
            return Err(format!("{s:?}: days count from 1 and a range A..B needs A <= B"));
        }
        Ok(DaySlice { first, last })
    }

    /// Checked against the world's number of days.
    pub fn validate(&self, days: u32) -> Result<(), SynthError> {
        if self.last > days {
            return Err(SynthError::Params(format!("day slice {self}: the world has {days} days")));
        }
        Ok(())
    }

    /// Whether the slice holds the world's last day (and so writes the aggregate files).
    pub fn has_last_day(&self, days: u32) -> bool {
        self.last >= days
    }

    /// The start times `[from, to)` of the builds written, for a world whose first day
    /// is `start_day` and which has `days` days: the first slice reaches back without
    /// limit and the last forward, so slices covering every day cover every build.
    pub fn starts(&self, start_day: i64, days: u32) -> (i64, i64) {
        let from = if self.first <= 1 { i64::MIN } else { (start_day + i64::from(self.first) - 1) * time::DAY };
        let to = if self.has_last_day(days) { i64::MAX } else { (start_day + i64::from(self.last)) * time::DAY };
        (from, to)
    }
}

impl fmt::Display for DaySlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}..{}", self.first, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_parse_and_bound_their_builds() {
        assert_eq!(DaySlice::parse("3").unwrap(), DaySlice { first: 3, last: 3 });
        assert_eq!(DaySlice::parse("2..10").unwrap(), DaySlice { first: 2, last: 10 });
        for bad in ["0", "5..4", "a", "1..", "..3", "-1"] {
            assert!(DaySlice::parse(bad).is_err(), "{bad}");
        }
        let s = DaySlice { first: 2, last: 3 };
        assert_eq!(s.starts(100, 10), (101 * time::DAY, 103 * time::DAY));
        assert_eq!(DaySlice { first: 1, last: 1 }.starts(100, 10).0, i64::MIN);
        assert_eq!(DaySlice { first: 10, last: 10 }.starts(100, 10).1, i64::MAX);
        assert!(DaySlice { first: 4, last: 11 }.validate(10).is_err());
        assert!(DaySlice { first: 4, last: 10 }.validate(10).is_ok());
        assert_eq!(DaySlice::parse("2..10").unwrap().to_string(), "2..10");
    }
}
