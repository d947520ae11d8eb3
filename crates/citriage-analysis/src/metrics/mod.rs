//! Metrics from raw builds: the kettle dashboard figures reproduced exactly
//! ([`kettle`]), and corrected figures beside them ([`corrected`]): pass rates with
//! sample sizes, failing streaks, always-failing jobs reported as failing, harness
//! steps excluded, tests keyed by (classname, name), errored builds counted, flake
//! signals that say which one fired, and bias flags. Pure: takes builds, returns data.

pub mod corrected;
pub mod kettle;
pub mod pfs;

use citriage_model::build::BuildRecord;

/// Seconds in a day (the calendar's own).
pub use citriage_model::time::DAY;

/// Kettle's `exclude_jobs` for `gs://kubernetes-ci-logs/logs/` (`^ci-test-infra-benchmark-demo$`,
/// `^ci-kubernetes-coverage-unit$`, `.*(flaky|flake).*`) exclude nothing in practice,
/// so citriage's kettle mode excludes no job. Kettle's bulk scan (`make_db.py`) applies
/// them as regexes when it walks `logs/`, but every build also reaches kettle through
/// its stream (`stream.py`), which tests each pattern as the literal text
/// `/<pattern>/` inside the object path: a regex never matches that way, so builds of
/// those jobs are inserted and emitted to the `all`, `day` and `week` tables alike (the
/// published failures dashboard lists `ci-kubernetes-e2e-gci-gce-flaky` and
/// `ci-kubernetes-coverage-unit`). Kept as a function so the rule has one place.
pub fn kettle_skips(_b: &BuildRecord) -> bool {
    false
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
    /// `all`: every emitted build (the failures query).
    All,
    /// `week`: recent emitted builds (the flakes query).
    Week,
}

/// Builds kettle has rows for at `as_of`: read from GCS, with a start time and a
/// `finished.json` with a timestamp by then (kettle emits a build only once its
/// `finished_time` is known: running builds never enter its tables), and not dropped
/// by kettle's row builder (see [`BuildRecord::kettle_dropped`]).
pub fn kettle_rows(builds: &[BuildRecord], as_of: i64, table: KettleTable) -> impl Iterator<Item = &BuildRecord> {
    builds.iter().filter(move |b| {
        b.origin == "gcs"
            && b.started.is_some()
            && b.finished.is_some_and(|f| f <= as_of)
            && b.kettle_dropped().is_none()
            && (table == KettleTable::All || !kettle_skips(b))
    })
}
