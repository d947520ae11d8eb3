//! Calendar days (UTC) as a small integer type: days since 1970-01-01, printed and
//! parsed as `YYYY-MM-DD`. Used for snapshot dates and day arithmetic in drift.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A calendar day, counted in days since the Unix epoch (1970-01-01 = 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub i64);

impl Day {
    /// Builds a day from a proleptic Gregorian date; `None` when the date does not exist.
    pub fn from_ymd(y: i64, m: u32, d: u32) -> Option<Day> {
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
            return None;
        }
        // Days-from-civil (Howard Hinnant's algorithm).
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m as i64 + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Some(Day(era * 146_097 + doe - 719_468))
    }

    /// Year, month and day of this calendar day.
    pub fn ymd(self) -> (i64, u32, u32) {
        let z = self.0 + 719_468;
        let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i64::from(m <= 2);
        (y, m, d)
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse(s: &str) -> Option<Day> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let y: i64 = s[0..4].parse().ok()?;
        let m: u32 = s[5..7].parse().ok()?;
        let d: u32 = s[8..10].parse().ok()?;
        Day::from_ymd(y, m, d)
    }

    /// Finds the first `YYYY-MM-DD` date embedded in a string such as a file name.
    pub fn find_in(s: &str) -> Option<Day> {
        let b = s.as_bytes();
        if b.len() < 10 {
            return None;
        }
        (0..=b.len() - 10).find_map(|i| {
            let w = &b[i..i + 10];
            let shaped = w.iter().enumerate().all(|(k, c)| match k {
                4 | 7 => *c == b'-',
                _ => c.is_ascii_digit(),
            });
            let bounded = i == 0 || !b[i - 1].is_ascii_digit();
            if shaped && bounded {
                std::str::from_utf8(w).ok().and_then(Day::parse)
            } else {
                None
            }
        })
    }

    /// The day that contains a Unix timestamp (seconds).
    pub fn from_unix_seconds(secs: i64) -> Day {
        Day(secs.div_euclid(86_400))
    }

    /// This day plus `n` days.
    pub fn plus(self, n: i64) -> Day {
        Day(self.0 + n)
    }

    /// Days from `earlier` to `self` (negative when `earlier` is later).
    pub fn days_since(self, earlier: Day) -> i64 {
        self.0 - earlier.0
    }
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl Serialize for Day {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Day {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Day, D::Error> {
        let s = String::deserialize(d)?;
        Day::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("not a YYYY-MM-DD date: {s}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_arithmetic() {
        let d = Day::parse("2026-05-10").unwrap();
        assert_eq!(d.to_string(), "2026-05-10");
        assert_eq!(Day::parse("1970-01-01").unwrap(), Day(0));
        assert_eq!(Day::parse("2024-02-29").unwrap().plus(1).to_string(), "2024-03-01");
        assert!(Day::parse("2023-02-29").is_none());
        assert!(Day::parse("2026-13-01").is_none());
        assert_eq!(Day::parse("2026-05-10").unwrap().days_since(Day::parse("2026-05-09").unwrap()), 1);
        for n in -800_000..800_000i64 {
            if n % 997 == 0 {
                let (y, m, dd) = Day(n).ymd();
                assert_eq!(Day::from_ymd(y, m, dd), Some(Day(n)));
            }
        }
    }

    #[test]
    fn finds_dates_in_names() {
        assert_eq!(Day::find_in("failures-2026-11-21.json").map(|d| d.to_string()), Some("2026-11-21".into()));
        assert_eq!(Day::find_in("failures-latest.json"), None);
        assert_eq!(Day::find_in("x12026-11-21"), None);
    }
}
