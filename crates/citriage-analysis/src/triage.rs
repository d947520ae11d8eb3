//! The snapshot triage pipeline in one pure call: categorize, select clusters,
//! compare with the prior snapshot, find misclassifications and build the flakes
//! roll-ups. The result is plain data that the report crate renders.

use crate::categorize::{categorize_snapshot, Categorized};
use crate::config::AnalysisConfig;
use crate::drift::{drift, Drift};
use crate::flakes::{top_flaky_tests, top_jobs, top_tests_by_lane, TestRollup, TopJob};
use crate::misclass::{self, Finding, NeedsBuildData};
use crate::rules::RuleSet;
use crate::select::{select, Selection};
use crate::severity::Severity;
use citriage_model::{Day, Snapshot, SnapshotMeta};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What the triage reads.
pub struct TriageInput<'a> {
    pub snapshot: &'a Snapshot,
    /// The previous snapshot of the same dataset, if any.
    pub prior: Option<&'a Snapshot>,
    /// Job sets of snapshots older than the prior, newest first (for reappearances).
    pub older: &'a [(Day, BTreeSet<String>)],
    pub rules: &'a RuleSet,
    pub config: &'a AnalysisConfig,
    /// Ingested builds, when there are any: they answer the checks a snapshot cannot.
    pub builds: Option<&'a [citriage_model::build::BuildRecord]>,
}

/// Everything the snapshot supports, ready to render.
#[derive(Debug, Clone, Serialize)]
pub struct Triage {
    pub snapshot: SnapshotMeta,
    pub job_count: usize,
    pub rules_origin: String,
    pub rule_count: usize,
    pub severity_totals: BTreeMap<Severity, usize>,
    pub categorized: Categorized,
    pub selection: Selection,
    pub drift: Option<Drift>,
    pub misclassifications: Vec<Finding>,
    pub needs_build_data: Vec<NeedsBuildData>,
    /// Dashboard jobs with ingested builds (0 when the run read no builds).
    pub jobs_with_builds: usize,
    /// Corrected figures of the dashboard's jobs that have builds.
    pub job_figures: Vec<crate::metrics::corrected::JobFigures>,
    /// Sub-patterns of each selected category from its builds' failures (empty without builds).
    pub patterns: Vec<crate::patterns::CategoryPatterns>,
    pub top_jobs: Vec<TopJob>,
    pub top_flaky_tests: Vec<TestRollup>,
    pub top_tests_by_lane: Vec<(String, Vec<TestRollup>)>,
    pub config: AnalysisConfig,
}

/// Runs the snapshot triage.
pub fn triage(input: &TriageInput<'_>) -> Triage {
    let snap = input.snapshot;
    let categorized = categorize_snapshot(snap, input.rules);
    let selection = select(&categorized, snap.meta.dataset, input.config);
    let drift = input.prior.map(|p| drift(snap, p, input.older, input.config.consistency_drift_threshold));
    let (mut misclassifications, mut needs_build_data) = misclass::find(snap, &categorized, input.config);
    let mut jobs_with_builds = 0;
    let mut job_figures = Vec::new();
    if let Some(builds) = input.builds.filter(|b| !b.is_empty()) {
        let bf = crate::build_findings::find(snap, builds, input.config.harness_test_names.clone());
        jobs_with_builds = bf.jobs_with_builds;
        if jobs_with_builds > 0 {
            misclassifications.extend(bf.findings);
            misclassifications.sort_by(|a, b| {
                a.kind.cmp(&b.kind).then(b.jobs.len().cmp(&a.jobs.len())).then_with(|| a.subject.cmp(&b.subject))
            });
            // What the builds answered is no longer an open question.
            needs_build_data
                .retain(|n| n.question.starts_with("state=error") && builds.iter().all(|b| b.origin != "prowjob"));
            job_figures = bf.figures;
        }
    }
    let mut patterns = Vec::new();
    if let Some(builds) = input.builds.filter(|_| jobs_with_builds > 0) {
        let end = snap.meta.date.0 * 86_400 + 86_399;
        let from = end - 7 * 86_400;
        let catalogue = citriage_patterns::signatures::Catalogue::builtin();
        let cat_of = categorized.category_of();
        for p in &selection.picks {
            let mine: Vec<&citriage_model::build::BuildRecord> = builds
                .iter()
                .filter(|b| b.started.is_some_and(|t| t > from && t <= end))
                .filter(|b| cat_of.get(b.dashboard_job().as_str()) == Some(&p.category.as_str()))
                .collect();
            if !mine.is_empty() {
                patterns.push(crate::patterns::sub_patterns(
                    &p.category,
                    &mine,
                    &input.config.harness_test_names,
                    &catalogue,
                ));
            }
        }
    }
    let mut severity_totals = BTreeMap::new();
    for c in &categorized.categories {
        for (s, n) in c.severity_counts() {
            *severity_totals.entry(s).or_insert(0) += n;
        }
    }
    Triage {
        snapshot: snap.meta.clone(),
        job_count: snap.jobs.len(),
        rules_origin: input.rules.origin.clone(),
        rule_count: input.rules.rules.len(),
        severity_totals,
        top_jobs: top_jobs(&categorized, input.config.top_n),
        top_flaky_tests: top_flaky_tests(snap),
        top_tests_by_lane: top_tests_by_lane(&categorized),
        categorized,
        selection,
        drift,
        misclassifications,
        needs_build_data,
        jobs_with_builds,
        job_figures,
        patterns,
        config: input.config.clone(),
    }
}
