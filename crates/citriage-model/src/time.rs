//! The one calendar and time module of citriage (UTC only, no clock): calendar days
//! as a small integer type ([`Day`], days since 1970-01-01, printed and parsed as
//! `YYYY-MM-DD`), instants as Unix seconds ([`Epoch`]) with their broken-down
//! [`Civil`] form, parsing (RFC 3339 / ISO 8601, payload tag stamps) and every spelling
//! citriage reads or writes (RFC 3339, `… UTC` tables, Go `log`, klog, Ginkgo, release
//! tags, file names, ages and Go durations). Every other crate does its date arithmetic
//! here; callers that need the wall clock read it themselves and pass the instant.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Seconds since 1970-01-01T00:00:00Z.
pub type Epoch = i64;

pub const MINUTE: i64 = 60;
pub const HOUR: i64 = 3_600;
pub const DAY: i64 = 86_400;

/// The earliest instant accepted from CI data: 2000-01-01T00:00:00Z.
pub const SANE_MIN: Epoch = 946_684_800;
/// The latest instant accepted from CI data: 2100-01-01T00:00:00Z.
pub const SANE_MAX: Epoch = 4_102_444_800;

/// True when `t` lies in the window of instants accepted from CI data
/// ([`SANE_MIN`]..[`SANE_MAX`]).
pub fn is_sane(t: Epoch) -> bool {
    (SANE_MIN..SANE_MAX).contains(&t)
}

/// The longest duration accepted from CI data (a test case's `time`): 7 days, in
/// seconds. No CI job runs that long; a longer figure is a broken or hostile file.
pub const SANE_MAX_DURATION: i64 = 7 * DAY;

/// Reads a duration in seconds as CI data writes it (JUnit's `time="12.5"`): a finite
/// number from 0 to [`SANE_MAX_DURATION`]. `Err` says why the text is not one (not a
/// number, not finite, negative, too large); a value is never rounded or saturated.
pub fn parse_duration_secs(text: &str) -> Result<f64, &'static str> {
    let t = text.trim();
    let v: f64 = t.parse().map_err(|_| "not a number")?;
    if !v.is_finite() {
        return Err(if v.is_nan() { "not a number" } else { "not finite" });
    }
    if v < 0.0 {
        return Err("negative");
    }
    if v > SANE_MAX_DURATION as f64 {
        return Err("longer than 7 days");
    }
    Ok(v)
}

/// The newest instant of a data set, robust to a few wrong ones: instants outside the
/// sane window are ignored, and so is any instant more than 90 days after the 90th
/// percentile (one build dated years ahead does not move "now" for the others).
/// `None` when no instant is sane.
pub fn robust_newest(instants: impl IntoIterator<Item = Epoch>) -> Option<Epoch> {
    let mut v: Vec<Epoch> = instants.into_iter().filter(|t| is_sane(*t)).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let p90 = v[(v.len() - 1) * 9 / 10];
    v.into_iter().rev().find(|t| *t <= p90 + 90 * DAY)
}

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
        Day(secs.div_euclid(DAY))
    }

    /// Unix seconds of this day's first second (00:00:00 UTC).
    pub fn start_seconds(self) -> Epoch {
        self.0.saturating_mul(DAY)
    }

    /// Unix seconds of this day's last second (23:59:59 UTC).
    pub fn end_seconds(self) -> Epoch {
        self.0.saturating_mul(DAY).saturating_add(DAY - 1)
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

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// The broken-down UTC time of an instant.
pub fn civil(t: Epoch) -> Civil {
    let (year, month, day) = Day::from_unix_seconds(t).ymd();
    let secs = t.rem_euclid(DAY);
    Civil {
        year,
        month,
        day,
        hour: (secs / HOUR) as u32,
        minute: (secs % HOUR / MINUTE) as u32,
        second: (secs % MINUTE) as u32,
    }
}

/// The instant of calendar fields, validating their ranges (a leap second, `:60`,
/// is accepted and counts as the next second); `None` when the date does not exist.
pub fn from_civil(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Option<Epoch> {
    let day = Day::from_ymd(y, mo, d)?;
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(day.start_seconds() + i64::from(h) * HOUR + i64::from(mi) * MINUTE + i64::from(s))
}

fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]` (a space or `t` may
/// replace the `T`; no zone means UTC, as in BigQuery exports). A bare `YYYY-MM-DD` is
/// midnight UTC. Fractions of a second are dropped. Out-of-range fields are refused.
pub fn parse_rfc3339(input: &str) -> Option<Epoch> {
    parse_rfc3339_any(input)
}

/// [`parse_rfc3339`] limited to the sane window ([`is_sane`]): what CI data may say.
pub fn parse_rfc3339_sane(input: &str) -> Option<Epoch> {
    parse_rfc3339(input).filter(|t| is_sane(*t))
}

fn parse_rfc3339_any(input: &str) -> Option<Epoch> {
    let s = input.trim();
    if s.len() < 10 || !s.is_ascii() {
        return None;
    }
    let (date, rest) = s.split_at(10);
    let mut dp = date.split('-');
    let y: i64 = num(dp.next()?)? as i64;
    let mo = num(dp.next()?)?;
    let d = num(dp.next()?)?;
    if rest.is_empty() {
        return from_civil(y, mo, d, 0, 0, 0);
    }
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix('t')).or_else(|| rest.strip_prefix(' '))?;
    if rest.len() < 8 {
        return None;
    }
    let (clock, mut zone) = rest.split_at(8);
    let mut cp = clock.split(':');
    let h = num(cp.next()?)?;
    let mi = num(cp.next()?)?;
    let sec = num(cp.next()?)?;
    if let Some(frac) = zone.strip_prefix('.') {
        let end = frac.find(|c: char| !c.is_ascii_digit()).unwrap_or(frac.len());
        zone = &frac[end..];
    }
    let offset: i64 = match zone.trim() {
        "" | "Z" | "z" | "UTC" | "+00:00" | "-00:00" => 0,
        z => {
            let sign = match z.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let body = &z[1..];
            let (hh, mm) = if let Some((a, b)) = body.split_once(':') {
                (num(a)?, num(b)?)
            } else if body.len() == 4 {
                (num(&body[..2])?, num(&body[2..])?)
            } else {
                (num(body)?, 0)
            };
            sign * (i64::from(hh) * HOUR + i64::from(mm) * MINUTE)
        }
    };
    Some(from_civil(y, mo, d, h, mi, sec)? - offset)
}

/// Parses an HTTP date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, as
/// in `Retry-After`); `None` for anything else.
pub fn parse_http_date(s: &str) -> Option<Epoch> {
    let s = s.trim();
    let (_, rest) = s.split_once(", ")?;
    let mut it = rest.split(' ');
    let d = num(it.next()?)?;
    let mon = it.next()?;
    let y = i64::from(num(it.next()?)?);
    let clock = it.next()?;
    if it.next()? != "GMT" || it.next().is_some() || clock.len() != 8 {
        return None;
    }
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mo = MONTHS.iter().position(|m| *m == mon)? as u32 + 1;
    let mut cp = clock.split(':');
    let (h, mi, sec) = (num(cp.next()?)?, num(cp.next()?)?, num(cp.next()?)?);
    from_civil(y, mo, d, h, mi, sec)
}

/// The time stamp at the end of a payload tag: `4.22.0-0.nightly-2026-03-04-084819`
/// → 2026-03-04T08:48:19Z. Tags without one give `None`.
pub fn tag_timestamp(tag: &str) -> Option<Epoch> {
    if tag.len() < 17 || !tag.is_char_boundary(tag.len() - 17) {
        return None;
    }
    let tail = &tag[tag.len() - 17..];
    let tb = tail.as_bytes();
    if tb[4] != b'-' || tb[7] != b'-' || tb[10] != b'-' {
        return None;
    }
    let y = num(&tail[0..4])? as i64;
    let mo = num(&tail[5..7])?;
    let d = num(&tail[8..10])?;
    let h = num(&tail[11..13])?;
    let mi = num(&tail[13..15])?;
    let s = num(&tail[15..17])?;
    from_civil(y, mo, d, h, mi, s)
}

/// `2026-05-01T13:28:38Z`.
pub fn rfc3339(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// `Sat, 21 Nov 2026 13:28:38 +0000`: the date of an e-mail (RFC 5322).
pub fn rfc5322(t: Epoch) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let c = civil(t);
    let weekday = DAYS[t.div_euclid(DAY).rem_euclid(7) as usize];
    let month = MONTHS[(c.month as usize).clamp(1, 12) - 1];
    format!("{weekday}, {:02} {month} {:04} {:02}:{:02}:{:02} +0000", c.day, c.year, c.hour, c.minute, c.second)
}

/// `2026-05-10 18:09:46 UTC`.
pub fn utc(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// `2026-05-10 18:09` (UTC, for tables and pages).
pub fn date_hm(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}-{:02}-{:02} {:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute)
}

/// A recorded time as pages and reports show every time: an RFC 3339 instant as
/// [`date_hm`] (`2026-05-10 18:09`, UTC); anything else (a day, an unreadable text) as
/// written.
pub fn shown(s: &str) -> String {
    match parse_rfc3339(s.trim()) {
        Some(t) => date_hm(t),
        None => s.to_string(),
    }
}

/// `2026-05-10`: the day of an instant.
pub fn date_of(t: Epoch) -> String {
    Day::from_unix_seconds(t).to_string()
}

/// `YYYY/MM/DD HH:MM:SS` (Go's `log` package).
pub fn golog(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}/{:02}/{:02} {:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// klog's header time `MMDD HH:MM:SS.uuuuuu`.
pub fn klog(t: Epoch, micros: u32) -> String {
    let c = civil(t);
    format!("{:02}{:02} {:02}:{:02}:{:02}.{:06}", c.month, c.day, c.hour, c.minute, c.second, micros % 1_000_000)
}

/// `YYYYMMDD-HHMMSS` (JUnit file names).
pub fn compact(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}{:02}{:02}-{:02}{:02}{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// `YYYY-MM-DD-HHMMSS` (release tags; see [`tag_timestamp`]).
pub fn tag_stamp(t: Epoch) -> String {
    let c = civil(t);
    format!("{:04}-{:02}-{:02}-{:02}{:02}{:02}", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// `MM/DD/YY HH:MM:SS.mmm` (Ginkgo v2 time stamps).
pub fn ginkgo(t: Epoch, millis: u32) -> String {
    let c = civil(t);
    format!(
        "{:02}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}",
        c.month,
        c.day,
        c.year.rem_euclid(100),
        c.hour,
        c.minute,
        c.second,
        millis % 1000
    )
}

/// A human age: `45s`, `12m`, `3h 5m`, `2d 4h` (negative ages are `0s`).
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    if s < MINUTE {
        format!("{s}s")
    } else if s < HOUR {
        format!("{}m", s / MINUTE)
    } else if s < DAY {
        format!("{}h {}m", s / HOUR, (s / MINUTE) % 60)
    } else {
        format!("{}d {}h", s / DAY, (s / HOUR) % 24)
    }
}

/// Go's duration spelling: `1h2m3s`, `5m0s`, `42s`.
pub fn go_duration(secs: i64) -> String {
    let h = secs / HOUR;
    let m = (secs % HOUR) / MINUTE;
    let s = secs % MINUTE;
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// Reads a duration spelled as whole numbers with units, Go's way or with days:
/// `90s`, `15m`, `1h30m`, `2d`, `1d12h`. Seconds; `None` for anything else (no unit,
/// an unknown unit, an empty string, an overflow).
pub fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut total: i64 = 0;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => MINUTE,
            'h' => HOUR,
            'd' => DAY,
            _ => return None,
        };
        let n: i64 = num.parse().ok()?;
        num.clear();
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    if !num.is_empty() {
        return None;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robust_newest_ignores_insane_and_isolated_instants() {
        let day = 1_700_000_000;
        let mut v: Vec<Epoch> = (0..20).map(|i| day + i * HOUR).collect();
        let newest = day + 19 * HOUR;
        assert_eq!(robust_newest(v.clone()), Some(newest));
        v.push(i64::MAX);
        v.push(-5);
        v.push(4_000_000_000); // 2096: sane, but years after everything else
        assert_eq!(robust_newest(v), Some(newest));
        assert_eq!(robust_newest([i64::MAX, i64::MIN]), None);
        assert_eq!(Day::from_unix_seconds(i64::MAX).end_seconds(), i64::MAX);
        assert!(parse_rfc3339_sane("9999-12-31T00:00:00Z").is_none());
        assert!(parse_rfc3339_sane("2024-01-01T00:00:00Z").is_some());
    }

    #[test]
    fn email_dates() {
        // 2026-11-21 was a Saturday; 1970-01-01 a Thursday.
        let t = from_civil(2026, 11, 21, 13, 28, 38).unwrap();
        assert_eq!(rfc5322(t), "Sat, 21 Nov 2026 13:28:38 +0000");
        assert_eq!(rfc5322(0), "Thu, 01 Jan 1970 00:00:00 +0000");
        assert_eq!(parse_http_date("Sat, 21 Nov 2026 13:28:38 GMT"), Some(t));
    }

    #[test]
    fn duration_seconds_are_finite_and_bounded() {
        assert_eq!(parse_duration_secs(" 1.5 "), Ok(1.5));
        assert_eq!(parse_duration_secs("0"), Ok(0.0));
        assert_eq!(parse_duration_secs("604800"), Ok(604_800.0));
        assert_eq!(parse_duration_secs("1e400"), Err("not finite"));
        assert_eq!(parse_duration_secs("inf"), Err("not finite"));
        assert_eq!(parse_duration_secs("-Infinity"), Err("not finite"));
        assert_eq!(parse_duration_secs("NaN"), Err("not a number"));
        assert_eq!(parse_duration_secs("1.5s"), Err("not a number"));
        assert_eq!(parse_duration_secs("-1"), Err("negative"));
        assert_eq!(parse_duration_secs("604800.5"), Err("longer than 7 days"));
        assert_eq!(parse_duration_secs("1e300"), Err("longer than 7 days"));
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90s"), Some(90));
        assert_eq!(parse_duration("15m"), Some(900));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("1d12h"), Some(DAY + 12 * HOUR));
        assert_eq!(parse_duration("15"), None);
        assert_eq!(parse_duration("m"), None);
        assert_eq!(parse_duration("5w"), None);
        assert_eq!(parse_duration(""), None);
    }

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

    #[test]
    fn day_bounds() {
        let d = Day::parse("2026-11-21").unwrap();
        assert_eq!(rfc3339(d.start_seconds()), "2026-11-21T00:00:00Z");
        assert_eq!(rfc3339(d.end_seconds()), "2026-11-21T23:59:59Z");
        assert_eq!(Day::from_unix_seconds(d.end_seconds()), d);
        assert_eq!(Day::from_unix_seconds(d.end_seconds() + 1), d.plus(1));
        assert_eq!(Day::from_unix_seconds(-1), Day(-1));
    }

    #[test]
    fn rfc3339_round_trips_and_refuses_nonsense() {
        let t = parse_rfc3339("2026-05-01T13:28:38Z").unwrap();
        assert_eq!(rfc3339(t), "2026-05-01T13:28:38Z");
        assert_eq!(parse_rfc3339("2026-05-01T13:28:38"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01 13:28:38.123456+00:00"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01T15:28:38+02:00"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01T15:28:38+0200"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01T11:28:38-02"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01"), parse_rfc3339("2026-05-01T00:00:00Z"));
        assert_eq!(parse_rfc3339("2026-11-20T01:02:03Z"), Some(1_795_136_523));
        assert_eq!(parse_rfc3339("2026-11-20T01:02:03.5+01:00"), Some(1_795_136_523 - 3600));
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z").map(rfc3339).as_deref(), Some("2024-02-29T00:00:00Z"));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some(-1));
        // GitHub's spellings.
        assert_eq!(parse_rfc3339("2026-05-10T18:09:46Z"), Some(1_778_436_586));
        assert_eq!(parse_rfc3339("2026-05-10T18:09:46.123Z"), Some(1_778_436_586));
        assert_eq!(parse_rfc3339("2026-05-10T20:09:46+02:00"), Some(1_778_436_586));
        assert_eq!(parse_rfc3339("2026-05-10"), Some(1_778_371_200));
        assert_eq!(parse_rfc3339("2026-05-10T25:00:00Z"), None);
        for bad in [
            "2023-02-29T00:00:00Z",
            "yesterday",
            "2026-05-0é13:28:38Z",
            "２０２６-05-01T13:28:38Z",
            "2026-05-01X13:28:38Z",
            "2026-05-01T24:00:00Z",
            "2026-05-01T13:61:00Z",
            "2026-05-01T13:28:38+x",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(from_civil(2026, 2, 30, 0, 0, 0), None);
        assert_eq!(civil(1_595_284_709), Civil { year: 2020, month: 7, day: 20, hour: 22, minute: 38, second: 29 });
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").map(rfc3339).as_deref(),
            Some("1994-11-06T08:49:37Z")
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"), None);
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 31 Feb 1994 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("120"), None);
    }

    #[test]
    fn tag_stamps_round_trip() {
        let t = tag_timestamp("4.22.0-0.nightly-2026-03-04-084819").unwrap();
        assert_eq!(rfc3339(t), "2026-03-04T08:48:19Z");
        assert_eq!(tag_stamp(t), "2026-03-04-084819");
        assert_eq!(
            tag_timestamp("4.22.0-0.nightly-arm64-2026-03-04-084819").map(rfc3339).as_deref(),
            Some("2026-03-04T08:48:19Z")
        );
        assert_eq!(tag_timestamp("4.12.1"), None);
        assert_eq!(tag_timestamp("ééééééééééééééééé"), None);
        assert_eq!(tag_timestamp("4.22.0-0.nightly-2026-02-30-084819"), None);
    }

    #[test]
    fn spellings() {
        let t = 1_778_436_586;
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(t), "2026-05-10 18:09:46 UTC");
        assert_eq!(date_hm(t), "2026-05-10 18:09");
        assert_eq!(date_hm(86_400 + 3600 + 120), "1970-01-02 01:02");
        assert_eq!(date_of(t), "2026-05-10");
        assert_eq!(golog(t), "2026/05/10 18:09:46");
        assert_eq!(klog(t, 1_234_567), "0510 18:09:46.234567");
        assert_eq!(compact(t), "20260510-180946");
        assert_eq!(ginkgo(t, 1042), "05/10/26 18:09:46.042");
        assert_eq!(rfc3339(1_595_284_709), "2020-07-20T22:38:29Z");
        assert_eq!(age(59), "59s");
        assert_eq!(age(12 * 60), "12m");
        assert_eq!(age(3 * 3600 + 5 * 60), "3h 5m");
        assert_eq!(age(2 * 86_400 + 4 * 3600), "2d 4h");
        assert_eq!(age(-5), "0s");
        assert_eq!(go_duration(7200), "2h0m0s");
        assert_eq!(go_duration(300), "5m0s");
        assert_eq!(go_duration(42), "42s");
    }
}
