//! Small time helpers: Unix seconds to a UTC timestamp, a day, or a human age. No
//! clock is read here; callers pass the instant.

use citriage_model::Day;

/// `2026-05-10 18:09:46 UTC`.
pub fn format_utc(secs: i64) -> String {
    let day = Day::from_unix_seconds(secs);
    let rem = secs.rem_euclid(86_400);
    format!("{day} {:02}:{:02}:{:02} UTC", rem / 3600, (rem / 60) % 60, rem % 60)
}

/// `2026-05-10`.
pub fn day_of(secs: i64) -> String {
    Day::from_unix_seconds(secs).to_string()
}

/// `45s`, `12m`, `3h 5m`, `2d 4h`.
pub fn format_age(secs: i64) -> String {
    let s = secs.max(0);
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m", s / 60)
    } else if s < 86_400 {
        format!("{}h {}m", s / 3600, (s / 60) % 60)
    } else {
        format!("{}d {}h", s / 86_400, (s / 3600) % 24)
    }
}

/// Unix seconds of a GitHub timestamp (`2026-05-10T18:09:46Z`, fractional seconds and
/// `+hh:mm` offsets accepted) or of a bare day (`2026-05-10`, its midnight UTC).
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let day = Day::parse(s.get(0..10)?)?;
    let mut secs = day.0 * 86_400;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(secs);
    }
    let rest = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' '))?;
    let num = |a: usize, b: usize| -> Option<i64> {
        let t = rest.get(a..b)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (h, m, sec) = (num(0, 2)?, num(3, 5)?, num(6, 8)?);
    if rest.get(2..3) != Some(":") || rest.get(5..6) != Some(":") || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    secs += h * 3600 + m * 60 + sec;
    let mut tail = &rest[8..];
    if let Some(frac) = tail.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        tail = &frac[n..];
    }
    match tail {
        "" | "Z" | "z" => Some(secs),
        t if (t.starts_with('+') || t.starts_with('-')) && t.len() == 6 && &t[3..4] == ":" => {
            let oh: i64 = t[1..3].parse().ok()?;
            let om: i64 = t[4..6].parse().ok()?;
            let off = oh * 3600 + om * 60;
            Some(if t.starts_with('+') { secs - off } else { secs + off })
        }
        _ => None,
    }
}

/// The wall clock in Unix seconds (the default clock of the client).
pub fn system_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(1_778_436_586), "2026-05-10 18:09:46 UTC");
        assert_eq!(day_of(1_778_436_586), "2026-05-10");
        assert_eq!(format_age(59), "59s");
        assert_eq!(format_age(3 * 3600 + 5 * 60), "3h 5m");
        assert_eq!(format_age(2 * 86_400 + 4 * 3600), "2d 4h");
        assert_eq!(format_age(-5), "0s");
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("2026-05-10T18:09:46Z"), Some(1_778_436_586));
        assert_eq!(parse_timestamp("2026-05-10T18:09:46.123Z"), Some(1_778_436_586));
        assert_eq!(parse_timestamp("2026-05-10T20:09:46+02:00"), Some(1_778_436_586));
        assert_eq!(parse_timestamp("2026-05-10"), Some(1_778_371_200));
        assert_eq!(parse_timestamp("2026-05-10T25:00:00Z"), None);
        assert_eq!(parse_timestamp("yesterday"), None);
    }
}
