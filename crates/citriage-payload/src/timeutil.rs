//! Time stamps without a clock: parsing RFC 3339 / ISO 8601 strings and payload
//! tag time stamps (`...-YYYY-MM-DD-HHMMSS`) into seconds since the Unix epoch
//! (UTC), and formatting them back. Nothing here reads the wall clock: the
//! analysis only knows the times its inputs carry and the explicit `as_of`.

/// Seconds since 1970-01-01T00:00:00Z.
pub type Epoch = i64;

/// Days since the epoch for a proleptic Gregorian date (0 when the date does not exist;
/// callers validate first).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    citriage_model::Day::from_ymd(y, m, d).map(|d| d.0).unwrap_or(0)
}

/// The civil date of a day count since the epoch.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    citriage_model::Day(z).ymd()
}

/// Whether the calendar date exists.
fn valid_date(y: i64, m: u32, d: u32) -> bool {
    citriage_model::Day::from_ymd(y, m, d).is_some()
}

/// Builds an epoch from calendar fields, validating ranges.
pub fn from_fields(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Option<Epoch> {
    if !valid_date(y, mo, d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86400 + h as i64 * 3600 + mi as i64 * 60 + s as i64)
}

fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]` (a space may replace the `T`; no
/// zone means UTC, as in BigQuery exports). A bare `YYYY-MM-DD` is midnight UTC.
/// Fractions of a second are dropped.
pub fn parse_rfc3339(input: &str) -> Option<Epoch> {
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
        return from_fields(y, mo, d, 0, 0, 0);
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
            sign * (hh as i64 * 3600 + mm as i64 * 60)
        }
    };
    Some(from_fields(y, mo, d, h, mi, sec)? - offset)
}

/// The time stamp at the end of a payload tag: `4.22.0-0.nightly-2026-03-04-084819`
/// → 2026-03-04T08:48:19Z. Tags without one give `None`.
pub fn tag_timestamp(tag: &str) -> Option<Epoch> {
    let b = tag.as_bytes();
    if b.len() < 17 || !tag.is_char_boundary(tag.len() - 17) {
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
    from_fields(y, mo, d, h, mi, s)
}

/// `2026-05-01T13:28:38Z`.
pub fn format_rfc3339(t: Epoch) -> String {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, (secs % 3600) / 60, secs % 60)
}

/// `2026-05-01 13:28 UTC`, for tables.
pub fn format_short(t: Epoch) -> String {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", secs / 3600, (secs % 3600) / 60)
}

/// `2026-05-01`.
pub fn format_date(t: Epoch) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(86400));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let t = parse_rfc3339("2026-05-01T13:28:38Z").unwrap();
        assert_eq!(format_rfc3339(t), "2026-05-01T13:28:38Z");
        assert_eq!(parse_rfc3339("2026-05-01T13:28:38"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01 13:28:38.123456+00:00"), Some(t));
        assert_eq!(parse_rfc3339("2026-05-01T15:28:38+02:00"), Some(t));
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z").map(format_rfc3339).as_deref(), Some("2024-02-29T00:00:00Z"));
        assert_eq!(parse_rfc3339("2023-02-29T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(parse_rfc3339("2026-05-0é13:28:38Z"), None);
        assert_eq!(parse_rfc3339("２０２６-05-01T13:28:38Z"), None);
    }

    #[test]
    fn tag_stamps() {
        let t = tag_timestamp("4.22.0-0.nightly-2026-03-04-084819").unwrap();
        assert_eq!(format_rfc3339(t), "2026-03-04T08:48:19Z");
        assert_eq!(
            tag_timestamp("4.22.0-0.nightly-arm64-2026-03-04-084819").map(format_rfc3339).as_deref(),
            Some("2026-03-04T08:48:19Z")
        );
        assert_eq!(tag_timestamp("4.12.1"), None);
        assert_eq!(tag_timestamp("ééééééééééééééééé"), None);
        assert_eq!(format_short(t), "2026-03-04 08:48 UTC");
    }
}
