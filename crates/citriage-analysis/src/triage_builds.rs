//! The builds a triage reads, gathered one stored job at a time and held compactly.
//! Each job's corrected figures are computed from its full test results when the job
//! is added; then its builds keep only what the rest of the triage reads: the build's
//! own fields, and of its test results the failed ones with every attempt of the same
//! test (whether a build failed a test for good), their failure texts only where the
//! selected categories' sub-patterns cluster them (their jobs' builds of the last 7
//! days). Passing results, log excerpts and artifacts are dropped as each job is added,
//! so memory is bounded by one job's full history plus the window's failures.

use crate::categorize::categorize_snapshot;
use crate::config::AnalysisConfig;
use crate::metrics::corrected::{job_figures, JobFigures, Settings};
use crate::rules::RuleSet;
use crate::select::select;
use citriage_model::build::BuildRecord;
use citriage_model::time::DAY;
use citriage_model::Snapshot;
use std::collections::{BTreeSet, HashSet};

/// A triage's builds, with the corrected figures of the snapshot's jobs among them.
#[derive(Debug, Clone)]
pub struct TriageBuilds {
    builds: Vec<BuildRecord>,
    /// By job name.
    figures: Vec<JobFigures>,
    /// The snapshot's jobs (dashboard names).
    listed: BTreeSet<String>,
    /// The jobs of the selected categories: their failure texts are clustered.
    pattern_jobs: BTreeSet<String>,
    /// The figures' settings (as of the snapshot day's end).
    settings: Settings,
}

impl TriageBuilds {
    /// Empty, for a triage of `snapshot` judged by `rules` and `config`.
    pub fn new(snapshot: &Snapshot, rules: &RuleSet, config: &AnalysisConfig) -> TriageBuilds {
        let categorized = categorize_snapshot(snapshot, rules);
        let selection = select(&categorized, snapshot.meta.dataset, config);
        let picked: BTreeSet<&str> = selection.picks.iter().map(|p| p.category.as_str()).collect();
        let pattern_jobs = categorized
            .category_of()
            .into_iter()
            .filter(|(_, c)| picked.contains(c))
            .map(|(j, _)| j.to_string())
            .collect();
        TriageBuilds {
            builds: Vec::new(),
            figures: Vec::new(),
            listed: snapshot.jobs.iter().map(|j| j.job.clone()).collect(),
            pattern_jobs,
            settings: Settings::new(snapshot.meta.date.end_seconds(), config.harness_test_names.clone()),
        }
    }

    /// Builds of any jobs at once (grouped by stored job name, each group added in the
    /// order the builds come).
    pub fn from_builds(
        snapshot: &Snapshot,
        rules: &RuleSet,
        config: &AnalysisConfig,
        builds: &[BuildRecord],
    ) -> TriageBuilds {
        let mut out = TriageBuilds::new(snapshot, rules, config);
        let jobs: BTreeSet<&str> = builds.iter().map(|b| b.job.as_str()).collect();
        for job in jobs {
            out.add_job(builds.iter().filter(|b| b.job == job).cloned().collect());
        }
        out
    }

    /// Adds the builds of one stored job name (all of them, with their test results):
    /// computes the figures of its jobs the snapshot lists, then keeps the builds
    /// compactly. Each stored job is added once.
    pub fn add_job(&mut self, mut builds: Vec<BuildRecord>) {
        let listed = |b: &BuildRecord| self.listed.contains(b.dashboard_job().as_str());
        let figures = if builds.iter().all(listed) {
            job_figures(&builds, &self.settings)
        } else {
            let mine: Vec<BuildRecord> = builds.iter().filter(|b| listed(b)).cloned().collect();
            job_figures(&mine, &self.settings)
        };
        if !figures.is_empty() {
            self.figures.extend(figures);
            self.figures.sort_by(|x, y| x.job.cmp(&y.job));
        }
        let end = self.settings.as_of;
        let from = end - 7 * DAY;
        for b in &mut builds {
            let clustered = self.pattern_jobs.contains(b.dashboard_job().as_str())
                && b.started.is_some_and(|t| t > from && t <= end);
            slim(b, clustered);
        }
        self.builds.extend(builds);
    }

    /// The builds as added (in that order), compacted.
    pub fn builds(&self) -> &[BuildRecord] {
        &self.builds
    }

    /// The corrected figures of the snapshot's jobs with builds, by job name.
    pub fn figures(&self) -> &[JobFigures] {
        &self.figures
    }

    pub fn is_empty(&self) -> bool {
        self.builds.is_empty()
    }
}

fn is_failure(status: &str) -> bool {
    status == "failed" || status == "error"
}

/// Keeps of a build what a triage reads past the figures: the failed results and every
/// attempt of the tests they name (with failure texts only when `clustered`).
fn slim(b: &mut BuildRecord, clustered: bool) {
    b.excerpts = Vec::new();
    b.artifacts = Vec::new();
    let failing: HashSet<(&str, &str)> =
        b.tests.iter().filter(|t| is_failure(&t.status)).map(|t| (t.classname.as_str(), t.name.as_str())).collect();
    let keep: Vec<bool> = b.tests.iter().map(|t| failing.contains(&(t.classname.as_str(), t.name.as_str()))).collect();
    let mut k = keep.into_iter();
    b.tests.retain(|_| k.next().unwrap_or(false));
    if !clustered {
        for t in &mut b.tests {
            t.failure_text = None;
        }
    }
    b.tests.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build_findings::{find, find_with_figures};
    use crate::patterns::sub_patterns;
    use crate::{triage, TriageInput};
    use citriage_model::build::{LogExcerpt, StoredTest};
    use citriage_model::{Dataset, Day, JobEntry, JobStats, SnapshotMeta};

    const T0: i64 = 1_795_000_000;

    fn test(name: &str, status: &str, attempt: u32, text: &str) -> StoredTest {
        StoredTest {
            file: "artifacts/junit_01.xml".into(),
            suite: "s".into(),
            classname: "c".into(),
            name: name.into(),
            status: status.into(),
            duration: Some(1.5),
            failure_text: (status == "failed").then(|| text.to_string()),
            attempt,
            informing: false,
            kettle_name: Some(name.into()),
        }
    }

    /// Build `n` of `job`: every third fails test `b` for good, every fourth fails `c`
    /// then passes it on a retry, every fifth says SUCCESS although `d` failed.
    fn build(job: &str, kind: &str, n: i64) -> BuildRecord {
        let mut tests = vec![test("a", "passed", 0, "")];
        if n % 3 == 0 {
            tests.push(test("[sig-node] b", "failed", 0, &format!("timed out after {n}s waiting for pod\nat x.go:1")));
        }
        if n % 4 == 0 {
            tests.push(test("c", "failed", 0, "connection refused"));
            tests.push(test("c", "passed", 1, ""));
        } else {
            tests.push(test("c", "passed", 0, ""));
        }
        let quiet = n % 5 == 0;
        if quiet {
            tests.push(test("d", "failed", 0, "expected 1 got 2"));
        }
        let failed = n % 3 == 0 || n % 7 == 0;
        BuildRecord {
            bucket: "b".into(),
            path: format!("logs/{job}/{n}"),
            job: job.into(),
            build_id: n.to_string(),
            kind: kind.into(),
            pr: (kind == "presubmit").then_some(100 + (n % 2) as u64),
            commit_sha: Some(format!("c{}", n / 2)),
            repo_commit: Some(format!("c{}", n / 2)),
            repo_version: Some(format!("c{}", n / 2)),
            repos: None,
            started: Some(T0 + n * 4 * 3_600),
            finished: Some(T0 + n * 4 * 3_600 + 600),
            duration: Some(600),
            result: Some(if failed && !quiet { "FAILURE" } else { "SUCCESS" }.into()),
            state: None,
            executor: None,
            origin: "gcs".into(),
            problems: Vec::new(),
            complete: true,
            tests,
            artifacts: vec![("build-log.txt".into(), Some(10))],
            excerpts: vec![LogExcerpt { source: "build-log.txt".into(), line_start: 1, line_end: 1, text: "E".into() }],
            kettle: None,
            testgrid: None,
            versions: Vec::new(),
        }
    }

    fn world() -> (Snapshot, Vec<BuildRecord>) {
        let mut builds = Vec::new();
        for n in 0..60 {
            builds.push(build("ci-kubernetes-e2e-gce", "periodic", n));
            builds.push(build("pull-kubernetes-e2e-kind", "presubmit", n));
            // the same stored job run as a periodic the snapshot does not list
            builds.push(build("pull-kubernetes-e2e-kind", "periodic", n + 1000));
        }
        let day = Day::from_unix_seconds(T0 + 59 * 4 * 3_600);
        let entry = |job: &str, days| JobEntry { job: job.into(), stats: JobStats::Failures { failing_days: days } };
        let snap = Snapshot::new(
            SnapshotMeta {
                dataset: Dataset::Failures,
                date: day,
                source: "failures.json".into(),
                sha256: String::new(),
            },
            vec![entry("ci-kubernetes-e2e-gce", 9), entry("pr:pull-kubernetes-e2e-kind", 4)],
        );
        (snap, builds)
    }

    #[test]
    fn compact_builds_give_the_findings_of_the_full_builds() {
        let (snap, builds) = world();
        let config = AnalysisConfig::default();
        let tb = TriageBuilds::from_builds(&snap, &RuleSet::builtin(), &config, &builds);
        // Passing results of tests that never failed, excerpts and artifacts are gone.
        assert_eq!(tb.builds().len(), builds.len());
        let kept: usize = tb.builds().iter().map(|b| b.tests.len()).sum();
        let all: usize = builds.iter().map(|b| b.tests.len()).sum();
        assert!(kept < all / 2, "kept {kept} of {all}");
        assert!(tb.builds().iter().all(|b| b.excerpts.is_empty() && b.artifacts.is_empty()));
        assert_eq!(tb.figures().len(), 2);
        let full = find(&snap, &builds, config.harness_test_names.clone());
        let compact = find_with_figures(&snap, tb.builds(), tb.figures().to_vec(), config.harness_test_names.clone());
        assert!(!full.findings.is_empty());
        assert_eq!(serde_json::to_string(&full).unwrap(), serde_json::to_string(&compact).unwrap());
    }

    #[test]
    fn compact_builds_give_the_sub_patterns_of_the_full_builds() {
        let (snap, builds) = world();
        let (rules, config) = (RuleSet::builtin(), AnalysisConfig::default());
        let tb = TriageBuilds::from_builds(&snap, &rules, &config, &builds);
        let t = triage(&TriageInput {
            snapshot: &snap,
            prior: None,
            older: &[],
            rules: &rules,
            config: &config,
            builds: Some(&tb),
            links: &[],
        });
        assert!(!t.patterns.is_empty());
        let end = snap.meta.date.end_seconds();
        let cat_of = t.categorized.category_of();
        let catalogue = citriage_patterns::signatures::Catalogue::builtin();
        for cp in &t.patterns {
            let mine: Vec<&BuildRecord> = builds
                .iter()
                .filter(|b| b.started.is_some_and(|s| s > end - 7 * DAY && s <= end))
                .filter(|b| cat_of.get(b.dashboard_job().as_str()) == Some(&cp.category.as_str()))
                .collect();
            let expected = sub_patterns(&cp.category, &mine, &config.harness_test_names, &catalogue);
            assert!(expected.failures > 0);
            assert_eq!(&expected, cp);
        }
        assert_eq!(t.job_figures.len(), 2);
    }
}
