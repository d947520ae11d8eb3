//! Metrics from raw builds: the kettle dashboard figures reproduced exactly
//! ([`kettle`]), and corrected figures beside them ([`corrected`]): pass rates with
//! sample sizes, failing streaks, always-failing jobs reported as failing, harness
//! steps excluded, tests keyed by (classname, name), errored builds counted, flake
//! signals that say which one fired, and bias flags. Pure: takes builds, returns data.

pub mod corrected;
pub mod kettle;
pub mod pfs;

use citriage_model::build::BuildRecord;

/// Seconds in a day.
pub const DAY: i64 = 86_400;

/// Kettle's `exclude_jobs` for `gs://kubernetes-ci-logs/logs/` (periodics and
/// postsubmits): `^ci-test-infra-benchmark-demo$`, `^ci-kubernetes-coverage-unit$`
/// and `.*(flaky|flake).*`; presubmits (`pr-logs/`) are not excluded. The published
/// failures dashboard still lists `ci-kubernetes-e2e-gci-gce-flaky` and
/// `ci-kubernetes-coverage-unit` (seed report), so the exclusion is applied to the
/// weekly table the flakes query reads, not to the all-time table of the failures query.
pub fn kettle_skips(b: &BuildRecord) -> bool {
    let presubmit = b.kind == "presubmit" || b.kind == "batch";
    !presubmit
        && (b.job == "ci-test-infra-benchmark-demo"
            || b.job == "ci-kubernetes-coverage-unit"
            || b.job.contains("flaky")
            || b.job.contains("flake"))
}

/// Whether a build is visible at `as_of`: finished by then, or (never finished)
/// started by then. Nothing later may leak into figures computed as of a time.
pub fn visible_at(b: &BuildRecord, as_of: i64) -> bool {
    match (b.finished, b.started) {
        (Some(f), _) => f <= as_of,
        (None, Some(s)) => s <= as_of,
        (None, None) => false,
    }
}

/// Which kettle table a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KettleTable {
    /// `all`: every ingested build (the failures query).
    All,
    /// `week`: recent builds with the bucket's `exclude_jobs` applied (the flakes query).
    Week,
}

/// Builds kettle has rows for at `as_of`: read from GCS, with a start time, visible
/// by then, and (for the weekly table) not excluded.
pub fn kettle_rows(builds: &[BuildRecord], as_of: i64, table: KettleTable) -> impl Iterator<Item = &BuildRecord> {
    builds.iter().filter(move |b| {
        b.origin == "gcs"
            && b.started.is_some()
            && (table == KettleTable::All || !kettle_skips(b))
            && visible_at(b, as_of)
    })
}
