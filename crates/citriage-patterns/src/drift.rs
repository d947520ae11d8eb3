//! Pattern drift between two dates: which failure patterns are new, growing, shrinking or
//! gone, from their failures per day.
//!
//! Each date closes a window of `span` days (the date included). A pattern is
//! * **new** when it had no failure in the first window and has some in the second;
//! * **gone** when it had failures in the first window and none in the second;
//! * **growing** / **shrinking** when its count changed by at least half of the smaller
//!   count and by at least [`DriftConfig::min_change`] failures;
//! * **steady** otherwise.
//!
//! Days are days since 1970-01-01 (UTC). Output is sorted by kind, then by the size of the
//! change (largest first), then by id, so it is deterministic.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a pattern changed between the two windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftKind {
    /// Absent from the first window, present in the second.
    New,
    /// More failures in the second window.
    Growing,
    /// Fewer failures in the second window.
    Shrinking,
    /// Present in the first window, absent from the second.
    Gone,
    /// About the same.
    Steady,
}

impl DriftKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            DriftKind::New => "new",
            DriftKind::Growing => "growing",
            DriftKind::Shrinking => "shrinking",
            DriftKind::Gone => "gone",
            DriftKind::Steady => "steady",
        }
    }
}

/// Drift settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftConfig {
    /// Days in each window (the date included).
    pub span: i64,
    /// Smallest change in failures that counts as growing or shrinking.
    pub min_change: u64,
}

impl Default for DriftConfig {
    fn default() -> Self {
        DriftConfig { span: 7, min_change: 3 }
    }
}

/// One pattern's drift.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternDrift {
    /// The pattern's id (a stable cluster id, or any label).
    pub id: String,
    /// How it changed.
    pub kind: DriftKind,
    /// Failures in the window closing at the first date.
    pub before: u64,
    /// Failures in the window closing at the second date.
    pub after: u64,
    /// Failures per day from the first window's start to the second date (zeros included).
    pub per_day: Vec<(i64, u64)>,
    /// First and last day with failures in that range.
    pub first_day: Option<i64>,
    pub last_day: Option<i64>,
}

/// Classify a change from `before` to `after` failures.
pub fn classify(before: u64, after: u64, cfg: &DriftConfig) -> DriftKind {
    match (before, after) {
        (0, 0) => DriftKind::Steady,
        (0, _) => DriftKind::New,
        (_, 0) => DriftKind::Gone,
        (b, a) => {
            let change = a.abs_diff(b);
            let enough = change >= cfg.min_change && change * 2 >= b.min(a);
            match (enough, a > b) {
                (true, true) => DriftKind::Growing,
                (true, false) => DriftKind::Shrinking,
                _ => DriftKind::Steady,
            }
        }
    }
}

/// Drift of every pattern in `daily` (`(id, day, failures)`, any order, repeats summed)
/// between the windows closing at `from_day` and `to_day`. Patterns with no failure in
/// either window are left out.
pub fn pattern_drift(daily: &[(String, i64, u64)], from_day: i64, to_day: i64, cfg: &DriftConfig) -> Vec<PatternDrift> {
    let span = cfg.span.max(1);
    let (from_day, to_day) = (from_day.min(to_day), from_day.max(to_day));
    let start = from_day - span + 1;
    let in_first = |d: i64| d > from_day - span && d <= from_day;
    let in_second = |d: i64| d > to_day - span && d <= to_day;
    let mut by_id: BTreeMap<&str, BTreeMap<i64, u64>> = BTreeMap::new();
    for (id, day, n) in daily {
        if *day >= start && *day <= to_day {
            *by_id.entry(id.as_str()).or_default().entry(*day).or_insert(0) += n;
        }
    }
    let mut out: Vec<PatternDrift> = by_id
        .into_iter()
        .filter_map(|(id, days)| {
            let before: u64 = days.iter().filter(|(d, _)| in_first(**d)).map(|(_, n)| n).sum();
            let after: u64 = days.iter().filter(|(d, _)| in_second(**d)).map(|(_, n)| n).sum();
            if before == 0 && after == 0 {
                return None;
            }
            let per_day = (start..=to_day).map(|d| (d, days.get(&d).copied().unwrap_or(0))).collect();
            let seen: Vec<i64> = days.iter().filter(|(_, n)| **n > 0).map(|(d, _)| *d).collect();
            Some(PatternDrift {
                id: id.to_string(),
                kind: classify(before, after, cfg),
                before,
                after,
                per_day,
                first_day: seen.first().copied(),
                last_day: seen.last().copied(),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then_with(|| b.after.abs_diff(b.before).cmp(&a.after.abs_diff(a.before)))
            .then_with(|| a.id.cmp(&b.id))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let cfg = DriftConfig::default();
        let d = |id: &str, day: i64, n: u64| (id.to_string(), day, n);
        let daily = vec![
            d("new", 19, 2),
            d("gone", 10, 4),
            d("grow", 10, 2),
            d("grow", 18, 9),
            d("shrink", 11, 10),
            d("shrink", 19, 2),
            d("steady", 9, 5),
            d("steady", 17, 6),
            d("old", 1, 50),
        ];
        let r = pattern_drift(&daily, 12, 19, &cfg);
        let kinds: Vec<(&str, DriftKind)> = r.iter().map(|p| (p.id.as_str(), p.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("new", DriftKind::New),
                ("grow", DriftKind::Growing),
                ("shrink", DriftKind::Shrinking),
                ("gone", DriftKind::Gone),
                ("steady", DriftKind::Steady)
            ]
        );
        let g = &r[1];
        assert_eq!((g.before, g.after), (2, 9));
        assert_eq!(g.per_day.len(), 14);
        assert_eq!(g.per_day.iter().map(|x| x.1).sum::<u64>(), 11);
        assert_eq!((g.first_day, g.last_day), (Some(10), Some(18)));
    }
}
