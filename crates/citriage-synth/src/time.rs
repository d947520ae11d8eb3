//! Calendar arithmetic and the timestamp spellings the generated files use
//! (RFC 3339, klog, Go `log`, release tags). UTC only; no wall clock.

pub const DAY: i64 = 86_400;
pub const HOUR: i64 = 3_600;
pub const MINUTE: i64 = 60;

/// Days since 1970-01-01 for a proleptic Gregorian date (callers pass valid dates).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    citriage_model::Day::from_ymd(y, m, d).map(|d| d.0).unwrap_or(0)
}

/// `(year, month, day)` for days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    citriage_model::Day(z).ymd()
}

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date(s: &str) -> Option<i64> {
    citriage_model::Day::parse(s).map(|d| d.0)
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
