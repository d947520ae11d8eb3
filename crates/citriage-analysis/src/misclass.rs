//! Misclassifications visible from a snapshot alone (runbook Phase 7 "Misclassified"
//! and algorithms §8): harness steps counted as flaky tests, the consistency paradox,
//! brand-new lane families with no baseline, by-design lanes and tests. Each finding
//! carries the snapshot entries that triggered it as evidence. Findings that need
//! build data are listed separately as open questions, never guessed.

use crate::categorize::Categorized;
use crate::config::AnalysisConfig;
use citriage_model::{Dataset, Evidence, EvidenceKind, JobStats, Snapshot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What kind of misclassification a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A harness step (`Up`, `Node Tests`, ...) listed in `test_flakes` as a test.
    HarnessTestName,
    /// Consistency 1.0 and zero flakes, yet tests are listed as flaking.
    ConsistencyParadox,
    /// A family of jobs all at 0-3 failing days: new lanes with no baseline.
    BrandNewLane,
    /// A lane that is flaky or failing by design (`-flaky` focus jobs, canaries).
    ByDesignLane,
    /// Tests tagged flaky by design (`[Flaky]`).
    ByDesignTest,
    /// Build data: every run failed, yet the dashboard scores the job consistent.
    AlwaysFailingConsistent,
    /// Build data: all failing runs come from one pull request.
    SinglePrPollution,
    /// Build data: builds in state=error that never reached GCS.
    StateErrorCascade,
    /// Build data: the newest builds pass though the snapshot lists the job.
    DatasetStale,
    /// Build data: the job's first build is recent and it never passed.
    NoBaseline,
    /// Build data: the corrected figures rate the job two or more levels below the
    /// dashboard's rating (e.g. a 25% pass rate rated good on consistency 1.0).
    ContradictedRating,
    /// Build data: builds whose result says SUCCESS although tests failed in them.
    PassedWithFailedTests,
}

impl FindingKind {
    pub fn title(self) -> &'static str {
        match self {
            FindingKind::HarnessTestName => "Harness step counted as a test",
            FindingKind::ConsistencyParadox => "Consistency paradox",
            FindingKind::BrandNewLane => "Brand-new lane (no baseline)",
            FindingKind::ByDesignLane => "By-design lane",
            FindingKind::ByDesignTest => "By-design flaky test",
            FindingKind::AlwaysFailingConsistent => "Always-failing scored consistent",
            FindingKind::SinglePrPollution => "Single-PR pollution",
            FindingKind::StateErrorCascade => "state=error cascade",
            FindingKind::DatasetStale => "Dataset-stale (latest build passes)",
            FindingKind::NoBaseline => "No baseline (new lane)",
            FindingKind::ContradictedRating => "Rating contradicted by the builds",
            FindingKind::PassedWithFailedTests => "Passed with failed tests",
        }
    }
}

/// One misclassification finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// What the finding is about: a test name, a family pattern, a job.
    pub subject: String,
    pub jobs: Vec<String>,
    /// Why this is not a real failure/flake, in one or two sentences.
    pub reality: String,
    pub evidence: Vec<Evidence>,
}

/// A question the snapshot cannot answer, with candidate jobs where a heuristic helps.
#[derive(Debug, Clone, Serialize)]
pub struct NeedsBuildData {
    pub question: String,
    pub candidates: Vec<String>,
    pub how_to_answer: String,
}

/// JSON-pointer escaping of one reference token (RFC 6901).
pub fn pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Evidence for one field of one job's snapshot entry.
pub fn entry_evidence(snap: &Snapshot, job: &str, field_path: &[&str], excerpt: String) -> Evidence {
    let mut loc = format!("{}#/{}", snap.meta.source, pointer_token(job));
    for f in field_path {
        loc.push('/');
        loc.push_str(&pointer_token(f));
    }
    Evidence::new(EvidenceKind::SnapshotEntry, loc, excerpt, snap.meta.sha256.clone(), snap.meta.date.to_string())
}

/// Runs every snapshot-only misclassification check.
pub fn find(snap: &Snapshot, cats: &Categorized, cfg: &AnalysisConfig) -> (Vec<Finding>, Vec<NeedsBuildData>) {
    let mut out = Vec::new();
    harness_names(snap, cfg, &mut out);
    paradox(snap, &mut out);
    brand_new(snap, cats, cfg, &mut out);
    by_design(snap, cfg, &mut out);
    out.sort_by(|a, b| {
        a.kind.cmp(&b.kind).then(b.jobs.len().cmp(&a.jobs.len())).then_with(|| a.subject.cmp(&b.subject))
    });
    (out, needs_build_data(snap))
}

fn harness_names(snap: &Snapshot, cfg: &AnalysisConfig, out: &mut Vec<Finding>) {
    let mut by_name: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
    for e in &snap.jobs {
        if let JobStats::Flakes(f) = &e.stats {
            for (t, n) in f.test_flakes.iter().flatten() {
                if cfg.is_harness(t) {
                    by_name.entry(t.as_str()).or_default().push((e.job.as_str(), *n));
                }
            }
        }
    }
    for (name, hits) in by_name {
        let evidence = hits
            .iter()
            .map(|(job, n)| entry_evidence(snap, job, &["test_flakes", name], format!("{name:?}: {n}")))
            .collect();
        out.push(Finding {
            kind: FindingKind::HarnessTestName,
            subject: name.to_string(),
            jobs: hits.iter().map(|(j, _)| j.to_string()).collect(),
            reality: format!(
                "`{name}` is a harness step written into JUnit, not a test: a flake here is the whole \
                 environment (cluster bring-up, log dump, resource diff) failing on some runs. The \
                 dashboard's exclusion list misses it, so it inflates the flaky-test counts."
            ),
            evidence,
        });
    }
}

fn paradox(snap: &Snapshot, out: &mut Vec<Finding>) {
    for e in &snap.jobs {
        if let JobStats::Flakes(f) = &e.stats {
            let tests = f.test_flakes.as_ref().map(|t| t.len()).unwrap_or(0);
            if f.consistency >= 1.0 && f.flakes == 0 && tests > 0 {
                out.push(Finding {
                    kind: FindingKind::ConsistencyParadox,
                    subject: e.job.clone(),
                    jobs: vec![e.job.clone()],
                    reality: format!(
                        "consistency 1.0 with 0 flakes, yet {tests} test(s) flaked: the dashboard counts a \
                         commit whose runs all failed as consistent, while tests failing on only some runs \
                         still count. The job is failing (or flaking per test), not healthy."
                    ),
                    evidence: vec![
                        entry_evidence(snap, &e.job, &["consistency"], format!("\"consistency\": {}", f.consistency)),
                        entry_evidence(snap, &e.job, &["flakes"], format!("\"flakes\": {}", f.flakes)),
                        entry_evidence(snap, &e.job, &["test_flakes"], format!("{tests} test(s) listed")),
                    ],
                });
            }
        }
    }
}

/// Name tokens of a job (`pr:` stripped, split on `-`).
fn tokens(job: &str) -> Vec<&str> {
    job.strip_prefix("pr:").unwrap_or(job).split('-').filter(|t| !t.is_empty()).collect()
}

fn brand_new(snap: &Snapshot, cats: &Categorized, cfg: &AnalysisConfig, out: &mut Vec<Finding>) {
    if snap.meta.dataset != Dataset::Failures {
        return;
    }
    // A family is a name token shared by jobs of one category.
    for c in &cats.categories {
        let mut groups: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
        for j in &c.jobs {
            if let JobStats::Failures { failing_days } = j.entry.stats {
                let uniq: BTreeSet<&str> = tokens(&j.entry.job).into_iter().collect();
                for t in uniq {
                    groups.entry(t).or_default().push((j.entry.job.as_str(), failing_days));
                }
            }
        }
        let mut families: Vec<(&str, Vec<(&str, u32)>)> = groups
            .into_iter()
            .filter(|(t, jobs)| {
                jobs.len() >= cfg.brand_new_min_family
                    && jobs.iter().all(|(_, d)| *d <= cfg.brand_new_max_days)
                    && t.chars().any(|ch| ch.is_ascii_alphabetic())
            })
            .collect();
        families.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(b.0)));
        let mut covered: Vec<BTreeSet<&str>> = Vec::new();
        for (token, mut jobs) in families {
            let set: BTreeSet<&str> = jobs.iter().map(|(j, _)| *j).collect();
            if covered.iter().any(|c| set.is_subset(c)) {
                continue;
            }
            covered.push(set);
            jobs.sort();
            let max = jobs.iter().map(|(_, d)| *d).max().unwrap_or(0);
            let older_siblings = c
                .jobs
                .iter()
                .filter(|j| !tokens(&j.entry.job).contains(&token))
                .filter(|j| j.entry.stats.failing_days().is_some_and(|d| d > cfg.brand_new_max_days))
                .count();
            out.push(Finding {
                kind: FindingKind::BrandNewLane,
                subject: format!("{} jobs named `*-{token}*`", c.name),
                jobs: jobs.iter().map(|(j, _)| j.to_string()).collect(),
                reality: format!(
                    "{} jobs of `{}` share the name token `{token}` and all sit at 0-{max} failing days, while \
                     {older_siblings} other jobs of the category are older: a lane family that just started and \
                     has never passed. Expected churn with no baseline, not a regression; judge it after its \
                     first week.",
                    jobs.len(),
                    c.name
                ),
                evidence: jobs
                    .iter()
                    .take(5)
                    .map(|(j, d)| entry_evidence(snap, j, &["failing_days"], format!("\"failing_days\": {d}")))
                    .collect(),
            });
        }
    }
}

fn by_design(snap: &Snapshot, cfg: &AnalysisConfig, out: &mut Vec<Finding>) {
    for pat in &cfg.by_design_job_patterns {
        let p = pat.to_lowercase();
        let jobs: Vec<&str> =
            snap.jobs.iter().filter(|e| e.job.to_lowercase().contains(&p)).map(|e| e.job.as_str()).collect();
        if jobs.is_empty() {
            continue;
        }
        out.push(Finding {
            kind: FindingKind::ByDesignLane,
            subject: format!("job names containing `{pat}`"),
            jobs: jobs.iter().map(|j| j.to_string()).collect(),
            reality: format!(
                "lanes matching `{pat}` run tests that are known to fail or flake (quarantine focus, canaries); \
                 their failures are expected and should not be triaged as regressions."
            ),
            evidence: jobs
                .iter()
                .take(5)
                .filter_map(|j| snap.get(j))
                .map(|e| entry_evidence(snap, &e.job, &[], entry_excerpt(&e.stats)))
                .collect(),
        });
    }
    for pat in &cfg.by_design_test_patterns {
        let mut jobs = BTreeSet::new();
        let mut evidence = Vec::new();
        for e in &snap.jobs {
            if let JobStats::Flakes(f) = &e.stats {
                for (t, n) in f.test_flakes.iter().flatten() {
                    if t.contains(pat.as_str()) {
                        jobs.insert(e.job.clone());
                        if evidence.len() < 5 {
                            evidence.push(entry_evidence(snap, &e.job, &["test_flakes", t], format!("{t:?}: {n}")));
                        }
                    }
                }
            }
        }
        if !jobs.is_empty() {
            out.push(Finding {
                kind: FindingKind::ByDesignTest,
                subject: format!("tests tagged `{pat}`"),
                jobs: jobs.into_iter().collect(),
                reality: format!(
                    "tests tagged `{pat}` are quarantined as flaky by their owners; flakes there are by design."
                ),
                evidence,
            });
        }
    }
}

/// A one-line excerpt of a job's entry.
pub fn entry_excerpt(stats: &JobStats) -> String {
    match stats {
        JobStats::Failures { failing_days } => format!("{{\"failing_days\": {failing_days}}}"),
        JobStats::Flakes(f) => format!(
            "{{\"consistency\": {}, \"flakes\": {}, \"test_flakes\": {}}}",
            f.consistency,
            f.flakes,
            f.test_flakes.as_ref().map(|t| format!("{} test(s)", t.len())).unwrap_or_else(|| "null".into())
        ),
    }
}

fn needs_build_data(snap: &Snapshot) -> Vec<NeedsBuildData> {
    let mut v = Vec::new();
    // Several presubmit entries of one family may come from a single PR's retests.
    let mut fam: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in snap.jobs.iter().filter(|e| e.job.starts_with("pr:")) {
        let t = tokens(&e.job);
        if t.len() >= 2 {
            fam.entry(t[..t.len().min(3)].join("-")).or_default().push(e.job.clone());
        }
    }
    let candidates: Vec<String> = fam.into_values().filter(|j| j.len() >= 3).flatten().collect();
    v.push(NeedsBuildData {
        question: "Single-PR pollution: are some presubmit entries one pull request's retests?".into(),
        candidates,
        how_to_answer: "needs the builds' PR numbers (started.json `pull`) of each presubmit entry".into(),
    });
    match snap.meta.dataset {
        Dataset::Flakes => {
            let always: Vec<String> = snap
                .jobs
                .iter()
                .filter(|e| e.stats.flake().is_some_and(|f| f.consistency >= 1.0 && f.flakes == 0))
                .map(|e| e.job.clone())
                .collect();
            v.push(NeedsBuildData {
                question: "Always-failing jobs scored consistent: which consistency-1.0 jobs failed every run?".into(),
                candidates: always,
                how_to_answer: "needs each job's build results in the 7-day window (a commit whose runs all failed counts as consistent)".into(),
            });
        }
        Dataset::Failures => {
            v.push(NeedsBuildData {
                question: "Dataset-stale entries: do the latest builds of listed jobs pass already?".into(),
                candidates: Vec::new(),
                how_to_answer: "needs each job's newest builds (finished.json `passed`)".into(),
            });
        }
    }
    v.push(NeedsBuildData {
        question: "state=error cascades: are jobs failing before a pod exists (invisible in GCS)?".into(),
        candidates: Vec::new(),
        how_to_answer: "needs Prow's prowjob list (`prowjobs.js`), which shows builds that never reached GCS".into(),
    });
    v
}
