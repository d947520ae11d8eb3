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
    pub builds: Option<&'a crate::triage_builds::TriageBuilds>,
    /// Fix PRs the user linked to failures, with their states as read.
    pub links: &'a [crate::links::PrLink],
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
    /// Linked fix PRs placed against the patterns they match.
    pub links: Vec<crate::links::PlacedLink>,
    pub top_jobs: Vec<TopJob>,
    pub top_flaky_tests: Vec<TestRollup>,
    pub top_tests_by_lane: Vec<(String, Vec<TestRollup>)>,
    pub config: AnalysisConfig,
    /// Failure patterns that drifted between two dates, from the store's latest clustering
    /// run (None when the run read no clustering).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_drift: Option<PatternDriftReport>,
    /// The triage records' news as of the snapshot date (the banner's first sentences
    /// and Tier 0's first rows); None when the store keeps no record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<crate::resolution::digest::Digest>,
    /// Which change started each drifting pattern, when the triage read checkouts
    /// (`triage --checkout`): empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blame: Vec<PatternBlame>,
}

/// What started a failure pattern, from its regression windows and ranked commits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatternBlame {
    pub stable_id: String,
    /// `introduced` (a likely introducing change), `exposed` (a job-configuration
    /// change), or `unknown`.
    pub kind: String,
    /// One sentence: the change, or why none.
    pub verdict: String,
    /// Each line of evidence: a window's ends, a link quoted with its `file:line`.
    pub evidence: Vec<String>,
}

pub use citriage_patterns::drift::DriftKind;

/// Pattern drift between two dates (see `citriage_patterns::drift`).
#[derive(Debug, Clone, Serialize)]
pub struct PatternDriftReport {
    /// Normalization profile of the clustering run.
    pub profile: String,
    /// The windows' last days and their length.
    pub from: citriage_model::Day,
    pub to: citriage_model::Day,
    pub span_days: i64,
    /// Patterns that are new, growing, shrinking or gone (steady ones are left out).
    pub patterns: Vec<DriftingPattern>,
}

/// One drifting pattern with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct DriftingPattern {
    /// Stable cluster id.
    pub stable_id: String,
    pub kind: DriftKind,
    pub before: u64,
    pub after: u64,
    /// Failures per day from the first window's first day to the second date.
    pub per_day: Vec<u64>,
    /// First line of the pattern's representative failure text.
    pub text: String,
    /// Its newest failure.
    pub evidence: Option<citriage_model::Evidence>,
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
    if let Some(tb) = input.builds.filter(|b| !b.is_empty()) {
        let builds = tb.builds();
        let bf = crate::build_findings::find_with_figures(
            snap,
            builds,
            tb.figures().to_vec(),
            input.config.harness_test_names.clone(),
        );
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
    if let Some(builds) = input.builds.filter(|_| jobs_with_builds > 0).map(|tb| tb.builds()) {
        let end = snap.meta.date.end_seconds();
        let from = end - 7 * citriage_model::time::DAY;
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
    // Place each linked PR against the selected patterns (category, tests, failure text).
    let mut links = Vec::new();
    for l in input.links {
        let Ok(re) = regex::RegexBuilder::new(&l.matches).size_limit(1 << 20).build() else { continue };
        let mut labels = Vec::new();
        let mut jobs = std::collections::BTreeSet::new();
        for (i, p) in selection.picks.iter().enumerate() {
            let letter = crate::select::letter(i);
            let subs =
                patterns.iter().find(|cp| cp.category == p.category).map(|cp| &cp.sub_patterns[..]).unwrap_or(&[]);
            let mut any_sub = false;
            for (k, sp) in subs.iter().enumerate() {
                if re.is_match(&sp.text) || sp.tests.iter().any(|(t, _)| re.is_match(t)) {
                    labels.push(format!("Pattern {letter}.{} ({})", k + 1, p.category));
                    jobs.extend(sp.jobs.iter().cloned());
                    any_sub = true;
                }
            }
            if !any_sub && re.is_match(&p.category) {
                labels.push(format!("Pattern {letter} ({})", p.category));
                if let Some(c) = categorized.get(&p.category) {
                    jobs.extend(c.jobs.iter().map(|j| j.entry.job.clone()));
                }
            }
        }
        links.push(crate::links::PlacedLink { link: l.clone(), patterns: labels, jobs: jobs.len() });
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
        links,
        config: input.config.clone(),
        pattern_drift: None,
        records: None,
        blame: Vec::new(),
    }
}
