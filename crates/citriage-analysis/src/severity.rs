//! Severity rubrics per dataset, as the runbook and the dashboards define them:
//! failures by `failing_days`, flakes by commit consistency.

use citriage_model::JobStats;
use serde::Serialize;

/// Severity levels, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    Severe,
    Warning,
    Moderate,
    Low,
    Good,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Severe => "severe",
            Severity::Warning => "warning",
            Severity::Moderate => "moderate",
            Severity::Low => "low",
            Severity::Good => "good",
        }
    }

    pub const ALL: [Severity; 6] =
        [Severity::Critical, Severity::Severe, Severity::Warning, Severity::Moderate, Severity::Low, Severity::Good];
}

/// Failures rubric: ≥ 365 critical, 180-364 severe, 90-179 warning, 30-89 moderate,
/// below 30 low.
pub fn of_failing_days(days: u32) -> Severity {
    match days {
        365.. => Severity::Critical,
        180..=364 => Severity::Severe,
        90..=179 => Severity::Warning,
        30..=89 => Severity::Moderate,
        _ => Severity::Low,
    }
}

/// Flakes rubric (the dashboard's colours): < 0.5 critical, < 0.7 severe, < 0.85
/// warning, < 0.95 moderate, else good.
pub fn of_consistency(c: f64) -> Severity {
    if c < 0.5 {
        Severity::Critical
    } else if c < 0.7 {
        Severity::Severe
    } else if c < 0.85 {
        Severity::Warning
    } else if c < 0.95 {
        Severity::Moderate
    } else {
        Severity::Good
    }
}

/// Severity of one job's stats.
pub fn of(stats: &JobStats) -> Severity {
    match stats {
        JobStats::Failures { failing_days } => of_failing_days(*failing_days),
        JobStats::Flakes(f) => of_consistency(f.consistency),
    }
}

/// A sort key: smaller is more severe (larger failing_days, lower consistency).
pub fn sort_key(stats: &JobStats) -> f64 {
    match stats {
        JobStats::Failures { failing_days } => -f64::from(*failing_days),
        JobStats::Flakes(f) => f.consistency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rubric_edges() {
        assert_eq!(of_failing_days(365), Severity::Critical);
        assert_eq!(of_failing_days(364), Severity::Severe);
        assert_eq!(of_failing_days(180), Severity::Severe);
        assert_eq!(of_failing_days(179), Severity::Warning);
        assert_eq!(of_failing_days(90), Severity::Warning);
        assert_eq!(of_failing_days(89), Severity::Moderate);
        assert_eq!(of_failing_days(30), Severity::Moderate);
        assert_eq!(of_failing_days(29), Severity::Low);
        assert_eq!(of_consistency(0.49), Severity::Critical);
        assert_eq!(of_consistency(0.5), Severity::Severe);
        assert_eq!(of_consistency(0.7), Severity::Warning);
        assert_eq!(of_consistency(0.85), Severity::Moderate);
        assert_eq!(of_consistency(0.95), Severity::Good);
    }
}
