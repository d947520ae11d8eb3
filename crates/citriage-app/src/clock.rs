//! The wall clock, read here only, for what has no date of its own: a snapshot whose
//! date is neither given nor in its name, the time store rows are written at (import
//! times, the evidence ledger's `read_at`), and the worker's schedules, leases and
//! backoff. Everything a result describes carries the input's dates instead.

use citriage_model::Day;

/// Now, in Unix seconds.
pub fn now() -> i64 {
    citriage_sources::http::unix_now()
}

/// Today's date (UTC).
pub fn today() -> Day {
    Day::from_unix_seconds(now())
}

/// Now as RFC 3339 (UTC), as store rows record the time they were written.
pub fn now_rfc3339() -> String {
    citriage_model::time::rfc3339(now())
}
