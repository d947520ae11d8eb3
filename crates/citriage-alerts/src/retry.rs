//! When a delivery that failed is tried again: a backoff doubled per failed attempt up
//! to a ceiling, never sooner than the receiver asked (`Retry-After`, an SMTP 4xx
//! reply's wait is the backoff). Deterministic: no jitter beyond a spread taken from
//! the message's key, so two messages that failed together are not retried in step.

use serde::{Deserialize, Serialize};

/// The backoff settings, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backoff {
    /// The wait after the first failure.
    pub first: i64,
    /// The longest wait.
    pub max: i64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { first: 30, max: 3_600 }
    }
}

impl Backoff {
    /// The wait after `failures` failed attempts in a row (1 for the first), at least
    /// what the receiver asked, spread by up to a tenth by `key`.
    pub fn wait(&self, failures: u32, asked: Option<i64>, key: &str) -> i64 {
        let exp = failures.saturating_sub(1).min(30);
        let base = self.first.max(1).saturating_mul(1i64 << exp).min(self.max.max(1));
        let spread = key.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)) % 1000;
        let base = base + base * spread as i64 / 10_000;
        // A receiver may ask for longer than the ceiling, within a day.
        base.max(asked.unwrap_or(0).clamp(0, citriage_model::time::DAY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_ceiling_and_honour_the_receiver() {
        let b = Backoff { first: 10, max: 100 };
        let w: Vec<i64> = (1..=6).map(|n| b.wait(n, None, "")).collect();
        assert_eq!(w, vec![10, 20, 40, 80, 100, 100]);
        assert_eq!(b.wait(1, Some(300), ""), 300);
        assert_eq!(b.wait(1, Some(3), ""), 10);
        assert_eq!(b.wait(1, Some(i64::MAX), ""), 86_400);
        assert_eq!(b.wait(u32::MAX, None, ""), 100);
        let spread = b.wait(3, None, "al-ffff");
        assert!((40..=44).contains(&spread), "{spread}");
        assert_eq!(spread, b.wait(3, None, "al-ffff"));
    }
}
