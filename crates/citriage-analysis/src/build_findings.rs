//! Misclassifications that need build data (algorithms §8), found from ingested
//! builds and carrying build evidence: always-failing jobs scored consistent,
//! single-PR pollution, state=error builds invisible to the dashboards,
//! dataset-stale entries whose newest builds pass, and brand-new lanes with no
//! baseline. Pure: takes builds and the corrected figures, returns findings.

use crate::metrics::corrected::{failed_for_good, job_figures, JobFigures, Settings};
use crate::misclass::{Finding, FindingKind};
use citriage_model::build::BuildRecord;
use citriage_model::{Dataset, Evidence, EvidenceKind, Snapshot};
use std::collections::{BTreeMap, BTreeSet};

/// The Spyglass page of a build (or, for prowjob-only builds, its Prow job page).
pub fn build_url(b: &BuildRecord) -> String {
    if b.origin == "prowjob" {
        format!("https://prow.k8s.io/prowjob?prowjob={}#{}", b.build_id, b.job)
    } else {
        citriage_model::build::prow_url(&b.bucket, &b.path)
    }
}

/// Evidence for one build's result.
pub fn build_evidence(b: &BuildRecord) -> Evidence {
    let started = b.started.map(|t| citriage_model::Day::from_unix_seconds(t).to_string()).unwrap_or_default();
    let excerpt = format!(
        "result={} started={}{}{}",
        b.result.as_deref().unwrap_or("PENDING"),
        started,
        b.pr.map(|p| format!(" pr={p}")).unwrap_or_default(),
        b.state.as_deref().map(|s| format!(" state={s}")).unwrap_or_default()
    );
    let (kind, locator) = if b.origin == "prowjob" {
        (EvidenceKind::ProwjobState, build_url(b))
    } else {
        (EvidenceKind::BuildResult, format!("{}/finished.json", build_url(b)))
    };
    Evidence::new(kind, locator, excerpt, String::new(), started)
}

/// What the build data adds to a triage.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct BuildFindings {
    pub findings: Vec<Finding>,
    /// Dashboard jobs with builds in the store.
    pub jobs_with_builds: usize,
    /// Corrected figures of the dashboard's jobs (by dashboard name).
    pub figures: Vec<JobFigures>,
    pub as_of: i64,
}

/// Runs the build-backed checks for the jobs of a snapshot, as of the snapshot's day.
pub fn find(snap: &Snapshot, builds: &[BuildRecord], harness: Vec<String>) -> BuildFindings {
    let listed: BTreeSet<&str> = snap.jobs.iter().map(|j| j.job.as_str()).collect();
    let mine: Vec<BuildRecord> =
        builds.iter().filter(|b| listed.contains(b.dashboard_job().as_str())).cloned().collect();
    let figures = job_figures(&mine, &Settings::new(snap.meta.date.end_seconds(), harness.clone()));
    find_with_figures(snap, builds, figures, harness)
}

/// [`find`] with the corrected figures of the snapshot's jobs already computed
/// (`figures`, by job name): `builds` then need only carry their failed test results
/// and the other attempts of those tests ([`crate::triage_builds::TriageBuilds`]).
pub fn find_with_figures(
    snap: &Snapshot,
    builds: &[BuildRecord],
    figures: Vec<JobFigures>,
    harness: Vec<String>,
) -> BuildFindings {
    let as_of = snap.meta.date.end_seconds();
    let listed: BTreeSet<&str> = snap.jobs.iter().map(|j| j.job.as_str()).collect();
    let mine = builds.iter().filter(|b| listed.contains(b.dashboard_job().as_str()));
    let mut by_job: BTreeMap<String, Vec<&BuildRecord>> = BTreeMap::new();
    for b in mine {
        if crate::metrics::visible_at(b, as_of) {
            by_job.entry(b.dashboard_job()).or_default().push(b);
        }
    }
    for v in by_job.values_mut() {
        v.sort_by(|a, b| a.started.cmp(&b.started).then_with(|| a.build_id.cmp(&b.build_id)));
    }
    let harness_set: BTreeSet<&str> = harness.iter().map(String::as_str).collect();
    // kind → (job, detail, evidence)
    let mut per_kind: BTreeMap<FindingKind, Vec<(String, String, Vec<Evidence>)>> = BTreeMap::new();
    let newest = |job: &str, pred: &dyn Fn(&BuildRecord) -> bool, n: usize| -> Vec<Evidence> {
        by_job
            .get(job)
            .map(|v| v.iter().rev().filter(|b| pred(b)).take(n).map(|b| build_evidence(b)).collect())
            .unwrap_or_default()
    };
    let mut group = |kind: FindingKind, job: String, _jobs: Vec<String>, detail: String, evidence: Vec<Evidence>| {
        per_kind.entry(kind).or_default().push((job, detail, evidence));
    };
    for f in &figures {
        for flag in &f.flags {
            match flag.kind.as_str() {
                "always-failing-scored-consistent" if snap.meta.dataset == Dataset::Flakes => group(
                    FindingKind::AlwaysFailingConsistent,
                    f.job.clone(),
                    vec![f.job.clone()],
                    flag.detail.clone(),
                    newest(&f.job, &|b| b.result.as_deref() == Some("FAILURE"), 3),
                ),
                "contradicted-rating" if snap.meta.dataset == Dataset::Flakes => group(
                    FindingKind::ContradictedRating,
                    f.job.clone(),
                    vec![f.job.clone()],
                    flag.detail.clone(),
                    newest(&f.job, &|b| b.result.as_deref() == Some("FAILURE"), 3),
                ),
                "single-pr" => group(
                    FindingKind::SinglePrPollution,
                    f.job.clone(),
                    vec![f.job.clone()],
                    flag.detail.clone(),
                    newest(&f.job, &|b| b.result.as_deref() == Some("FAILURE"), 3),
                ),
                "passed-with-failed-tests" => group(
                    FindingKind::PassedWithFailedTests,
                    f.job.clone(),
                    vec![f.job.clone()],
                    flag.detail.clone(),
                    newest(
                        &f.job,
                        &|b| b.result.as_deref() == Some("SUCCESS") && !failed_for_good(b, &harness_set).is_empty(),
                        3,
                    ),
                ),
                "state-error-builds" => group(
                    FindingKind::StateErrorCascade,
                    f.job.clone(),
                    vec![f.job.clone()],
                    flag.detail.clone(),
                    newest(&f.job, &|b| b.origin == "prowjob", 3),
                ),
                _ => {}
            }
        }
        if snap.meta.dataset == Dataset::Failures && f.latest_result.as_deref() == Some("SUCCESS") {
            group(
                FindingKind::DatasetStale,
                f.job.clone(),
                vec![f.job.clone()],
                format!("newest completed build passed on {}", f.last_pass.map(|d| d.to_string()).unwrap_or_default()),
                newest(&f.job, &|b| b.result.as_deref() == Some("SUCCESS"), 1),
            );
        }
        if let Some(first) = by_job.get(&f.job).and_then(|v| v.iter().filter_map(|b| b.started).min()) {
            if first > as_of - 7 * citriage_model::time::DAY && f.last_pass.is_none() {
                group(
                    FindingKind::NoBaseline,
                    f.job.clone(),
                    vec![f.job.clone()],
                    format!("first build {}, never passed", citriage_model::Day::from_unix_seconds(first)),
                    by_job
                        .get(&f.job)
                        .map(|v| v.iter().take(1).map(|b| build_evidence(b)).collect())
                        .unwrap_or_default(),
                );
            }
        }
    }
    let findings = per_kind
        .into_iter()
        .map(|(kind, rows)| {
            let why = match kind {
                FindingKind::AlwaysFailingConsistent => "every run in the window failed, which the dashboard scores as consistent: these jobs are failing, not healthy",
                FindingKind::SinglePrPollution => "all failing runs come from one pull request: its retests, not a failing job",
                FindingKind::StateErrorCascade => "builds in state=error never started a pod: the failure is in Prow or the build cluster, not in the tests",
                FindingKind::DatasetStale => "listed, but the newest completed build passed: the dashboard lags; nothing to fix",
                FindingKind::NoBaseline => "the first build is recent and the job never passed: a brand-new lane with no baseline, not a regression",
                FindingKind::PassedWithFailedTests => "the build's result says SUCCESS although tests failed in it (no later attempt passed): the dashboards count it as a pass",
                FindingKind::ContradictedRating => "the builds rate these jobs at least two levels worse than the dashboard's consistency does (the dashboard counts a commit that always failed as consistent)",
                _ => "",
            };
            let examples: Vec<String> = rows.iter().take(3).map(|(j, d, _)| format!("`{j}`: {d}")).collect();
            Finding {
                kind,
                subject: format!("{} job(s) (build data)", rows.len()),
                jobs: rows.iter().map(|(j, _, _)| j.clone()).collect(),
                reality: format!("{why}. E.g. {}", examples.join("; ")),
                evidence: rows.iter().flat_map(|(_, _, e)| e.iter().take(2).cloned()).take(8).collect(),
            }
        })
        .collect();
    BuildFindings { findings, jobs_with_builds: by_job.len(), figures, as_of }
}
