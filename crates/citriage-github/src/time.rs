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
}
