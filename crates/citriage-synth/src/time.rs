//! Calendar arithmetic and the timestamp spellings the generated files use
//! (RFC 3339, klog, Go `log`, release tags). UTC only; no wall clock.

pub const DAY: i64 = 86_400;
pub const HOUR: i64 = 3_600;
pub const MINUTE: i64 = 60;

/// Days since 1970-01-01 for a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let d = i64::from(d);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(year, month, day)` for days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = s.get(0..4)?.parse().ok()?;
    let m: u32 = s.get(5..7)?.parse().ok()?;
    let d: u32 = s.get(8..10)?.parse().ok()?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

/// Broken-down UTC time.
#[derive(Clone, Copy, Debug)]
pub struct Tm {
    pub y: i64,
    pub mo: u32,
    pub d: u32,
    pub h: u32,
    pub mi: u32,
    pub s: u32,
}

pub fn tm(ts: i64) -> Tm {
    let days = ts.div_euclid(DAY);
    let secs = ts.rem_euclid(DAY);
    let (y, mo, d) = civil_from_days(days);
    Tm { y, mo, d, h: (secs / HOUR) as u32, mi: ((secs % HOUR) / MINUTE) as u32, s: (secs % MINUTE) as u32 }
}

/// `YYYY-MM-DD` of a day number.
pub fn date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(ts: i64) -> String {
    let t = tm(ts);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.y, t.mo, t.d, t.h, t.mi, t.s)
}

/// `YYYY/MM/DD HH:MM:SS` (Go's `log` package).
pub fn golog(ts: i64) -> String {
    let t = tm(ts);
    format!("{:04}/{:02}/{:02} {:02}:{:02}:{:02}", t.y, t.mo, t.d, t.h, t.mi, t.s)
}

/// klog header time `MMDD HH:MM:SS.uuuuuu`.
pub fn klog(ts: i64, micros: u32) -> String {
    let t = tm(ts);
    format!("{:02}{:02} {:02}:{:02}:{:02}.{:06}", t.mo, t.d, t.h, t.mi, t.s, micros % 1_000_000)
}

/// `YYYYMMDD-HHMMSS` (junit file names).
pub fn compact(ts: i64) -> String {
    let t = tm(ts);
    format!("{:04}{:02}{:02}-{:02}{:02}{:02}", t.y, t.mo, t.d, t.h, t.mi, t.s)
}

/// `YYYY-MM-DD-HHMMSS` (release tags).
pub fn tag_stamp(ts: i64) -> String {
    let t = tm(ts);
    format!("{:04}-{:02}-{:02}-{:02}{:02}{:02}", t.y, t.mo, t.d, t.h, t.mi, t.s)
}

/// `MM/DD/YY HH:MM:SS.mmm` (Ginkgo v2 timestamps).
pub fn ginkgo(ts: i64, millis: u32) -> String {
    let t = tm(ts);
    format!("{:02}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", t.mo, t.d, t.y.rem_euclid(100), t.h, t.mi, t.s, millis % 1000)
}

/// Go duration spelling such as `1h2m3s`, `5m0s`, `42s`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for z in [-1000i64, 0, 1, 20_000, 20_778, 30_000] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(date(parse_date("2026-11-21").unwrap_or(0)), "2026-11-21");
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(rfc3339(1_595_284_709), "2020-07-20T22:38:29Z");
        assert_eq!(go_duration(7200), "2h0m0s");
    }
}
