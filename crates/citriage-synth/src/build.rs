//! Per-job simulation: schedules a job's builds (periodic ticks, PR pushes
//! and retests, post-merge triggers), decides each build's outcome from the
//! job's planted story, renders and writes its GCS folder immediately, and
//! keeps only small per-build records for job history, `prowjobs.js`, the
//! dashboards and `truth.json`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use crate::catalog::{self, Class, JunitEffect, Pattern, Stage, SuiteKind, FLAKY};
use crate::jobs::{JobKind, JobSpec, Scenario};
use crate::junit::{self, Case, JunitFile, Outcome, Root, Style, Suite};
use crate::kettle::{self, FlakeEntry, Row, Snapshot};
use crate::logs::{self, LogCause, LogSpec, LogTestFailure};
use crate::out::{Counter, Sink, SynthError};
use crate::prow::{self, HistoryEntry, JobDoc, Pull, Refs, State};
use crate::repos::{self, BranchCursor, PullRequest};
use crate::rng::{fake_sha, hash_parts, Rng};
use crate::suites::{self, TestDef};
use crate::testgrid;
use crate::text::Vars;
use citriage_model::time::{self, DAY, HOUR, MINUTE};

/// World-wide settings every job worker needs.
pub struct Ctx {
    pub seed: u64,
    pub start_day: i64,
    pub end_day: i64,
    pub world_end: i64,
    pub log_lines: usize,
    pub prowjobs_from: i64,
    pub snapshots: Vec<Snapshot>,
    pub flakes_from: i64,
    /// Prefix of build folders inside the output (`gcs/<bucket>`).
    pub gcs_root: &'static str,
    /// The start times `[from, to)` of the builds whose folders are written (a day
    /// slice; every build for the whole world).
    pub write_starts: (i64, i64),
    /// Whether the world's aggregate files are written (and so every build rendered
    /// for them): false only for a day slice without the world's last day.
    pub aggregates: bool,
}

impl Ctx {
    /// Whether the folder of a build started at `start` is written.
    fn writes(&self, start: i64) -> bool {
        start >= self.write_starts.0 && start < self.write_starts.1
    }
}

/// Counts per job.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct JobStats {
    pub builds: u64,
    pub gcs_builds: u64,
    pub success: u64,
    pub failure: u64,
    pub aborted: u64,
    pub error: u64,
    pub pending: u64,
    pub failed_tests: u64,
    pub in_run_retries: u64,
}

impl JobStats {
    pub fn add(&mut self, o: &JobStats) {
        self.builds += o.builds;
        self.gcs_builds += o.gcs_builds;
        self.success += o.success;
        self.failure += o.failure;
        self.aborted += o.aborted;
        self.error += o.error;
        self.pending += o.pending;
        self.failed_tests += o.failed_tests;
        self.in_run_retries += o.in_run_retries;
    }
}

#[derive(Serialize, Clone, Debug)]
pub struct BrokenTruth {
    pub pattern: &'static str,
    pub class: Class,
    pub from: Option<String>,
    pub to: Option<String>,
    pub rate: f64,
}

/// Dashboard expectations of a job, per snapshot date.
#[derive(Serialize, Clone, Debug, Default)]
pub struct DashTruth {
    /// date -> failing_days, for the snapshots that list the job.
    pub failures: BTreeMap<String, i64>,
    /// date -> consistency, for the snapshots that list the job.
    pub flakes: BTreeMap<String, f64>,
}

/// What `truth.json` says about a job.
#[derive(Serialize, Clone, Debug)]
pub struct JobTruth {
    pub name: String,
    pub kettle_name: String,
    pub kind: JobKind,
    pub bucket: &'static str,
    /// Job folder under `gcs/<bucket>/` (`logs/<job>` or `pr-logs/directory/<job>`).
    pub gcs_prefix: String,
    pub repo: String,
    pub branch: String,
    pub arch: &'static str,
    pub suite: SuiteKind,
    pub scenario: Scenario,
    pub description: String,
    pub first_build: Option<String>,
    pub last_build: Option<String>,
    pub broken: Vec<BrokenTruth>,
    pub flaky_tests: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_pr: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_state_since: Option<String>,
    pub stats: JobStats,
    pub dashboards: DashTruth,
}

/// What `truth.json` says about a planted flaky test.
#[derive(Serialize, Clone, Debug)]
pub struct FlakyTruth {
    pub job: String,
    pub kettle_job: String,
    pub test: String,
    pub kettle_test: Option<String>,
    pub pattern: String,
    pub signature: &'static str,
    /// Probability that one attempt fails.
    pub probability: f64,
    pub retried_in_run: bool,
    pub runs: u64,
    pub failed_attempts: u64,
    pub builds_failed_by_it: u64,
    pub recovered_in_run: u64,
}

/// A job's results handed back to the coordinator.
pub struct JobOutput {
    pub truth_lines: Vec<u8>,
    pub prowjobs: Vec<Vec<u8>>,
    pub truth: JobTruth,
    pub flaky: Vec<FlakyTruth>,
    pub failures: Vec<Option<i64>>,
    pub flakes: Vec<Option<FlakeEntry>>,
    pub count: Counter,
    pub stats: JobStats,
    /// Every build's start and final state.
    pub runs: Vec<(i64, State)>,
    /// The job's tabs on TestGrid (dashboard, tab) with each tab's summary entry.
    pub testgrid: Vec<(String, String, serde_json::Value)>,
    /// Builds whose folder was written (those of the day slice), and the files and
    /// bytes written.
    pub written_builds: u64,
    pub written: Counter,
}

enum Trig {
    Periodic,
    Post {
        sha: String,
    },
    Pre {
        pr: usize,
        push: usize,
        retest: u32,
    },
    /// A tide batch: several PR heads merged together.
    Batch {
        pulls: Vec<(usize, usize)>,
    },
}

struct Slot {
    start: i64,
    trig: Trig,
}

/// Small record kept per build (history pages, prowjobs.js).
struct Rec {
    id: u64,
    start: i64,
    end: Option<i64>,
    state: State,
    gcs_dir: Option<String>,
    refs: Option<Refs>,
}

/// One failure cause of a build.
struct Cause {
    pattern: Option<&'static Pattern>,
    /// Index into `job.flaky`.
    flaky: Option<usize>,
    retried_ok: bool,
    log: LogCause,
    description: Option<String>,
}

/// Evidence record for truth.
#[derive(Serialize)]
struct CauseTruth<'a> {
    pattern: String,
    class: Class,
    #[serde(skip_serializing_if = "Option::is_none")]
    test: Option<&'a str>,
    retried_ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<LogTruth>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    junit: Vec<JunitTruth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

#[derive(Serialize)]
struct LogTruth {
    file: String,
    error_lines: Vec<u32>,
    context_lines: Vec<u32>,
}

#[derive(Serialize)]
struct JunitTruth {
    file: String,
    test: String,
    kettle_test: Option<String>,
    line: u32,
}

#[derive(Serialize)]
struct BuildTruth<'a> {
    job: &'a str,
    kettle_job: &'a str,
    id: String,
    state: State,
    started: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    finished: Option<i64>,
    path: Option<String>,
    commit: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pr: Option<u32>,
    in_prowjobs_js: bool,
    failed_tests: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    junit_truncated: Vec<String>,
    causes: Vec<CauseTruth<'a>>,
}

/// The head of a written history at `t`: its newest commit made at or before `t`.
fn written_head(history: &[(i64, String)], t: i64) -> String {
    let i = history.partition_point(|(at, _)| *at <= t);
    history[..i].last().or(history.first()).map(|(_, s)| s.clone()).unwrap_or_default()
}

/// The image a job's build started at `start` runs with.
pub(crate) fn image_for(job: &JobSpec, start: i64) -> String {
    if let Some((_, image)) = job.image_bump.as_ref().filter(|(at, _)| start >= *at) {
        return image.clone();
    }
    match job.suite {
        SuiteKind::ImageBuild => "gcr.io/k8s-staging-test-infra/gcb-docker-gcloud:v20261105-4bd8f2a1c8".into(),
        SuiteKind::Kops => "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261118-7fa3c1d2e4-master".into(),
        _ => format!(
            "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261118-7fa3c1d2e4-{}",
            if job.branch.starts_with("release-1.") {
                job.branch.trim_start_matches("release-").to_string()
            } else {
                "master".to_string()
            }
        ),
    }
}

fn suite_label(job: &JobSpec) -> String {
    match job.suite {
        SuiteKind::Capi => {
            if job.name.contains("azure") || job.name.contains("capz") {
                "capz-e2e".into()
            } else if job.name.contains("vsphere") {
                "capv-e2e".into()
            } else {
                "capi-e2e".into()
            }
        }
        SuiteKind::Kubetest if job.name.contains("node") => "E2eNode Suite".into(),
        _ => "Kubernetes e2e suite".into(),
    }
}

/// The job's tests: generated suite plus planted flaky and named tests.
fn job_tests(job: &JobSpec, seed: u64) -> Vec<TestDef> {
    let mut r = Rng::for_key(seed, &["suite", &job.name]);
    let mut tests = suites::build_suite(job.suite, &mut r, job.tests, job.scenario == Scenario::ByDesign, &job.repo);
    let label = suite_label(job);
    for t in tests.iter_mut() {
        if matches!(job.suite, SuiteKind::Capi | SuiteKind::Kubetest) && t.classname == "Kubernetes e2e suite" {
            t.classname = label.clone();
        }
    }
    for (i, ft) in job.flaky.iter().enumerate() {
        let def = &FLAKY[ft.def];
        if matches!(def.suite, SuiteKind::Kubetest) || def.id == "capv-preparation" {
            continue; // harness steps live in the runner file
        }
        let classname = if def.suite == SuiteKind::Ginkgo || def.suite == SuiteKind::Capi {
            label.clone()
        } else {
            def.package.to_string()
        };
        if let Some(t) = tests.iter_mut().find(|t| t.name == def.name) {
            t.flaky = Some(i);
        } else {
            let at = (r.below(tests.len() as u64 + 1) as usize).min(tests.len());
            tests.insert(at, TestDef { classname, name: def.name.to_string(), skipped: false, flaky: Some(i) });
        }
    }
    let mut named: Vec<&'static str> = Vec::new();
    for b in &job.broken {
        if let JunitEffect::Named(n) = b.pattern.junit {
            named.push(n);
        }
    }
    for p in &job.infra {
        if let JunitEffect::Named(n) = p.junit {
            named.push(n);
        }
    }
    for n in named {
        if n == "Timeout" || tests.iter().any(|t| t.name == n) {
            continue;
        }
        let classname = match job.suite {
            SuiteKind::GoUnit | SuiteKind::GoIntegration | SuiteKind::Minikube => job.repo.clone(),
            _ => label.clone(),
        };
        tests.push(TestDef { classname, name: n.to_string(), skipped: false, flaky: None });
    }
    tests
}

struct Interner {
    names: Vec<String>,
    idx: BTreeMap<String, u32>,
}

impl Interner {
    fn get(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.idx.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.idx.insert(s.to_string(), i);
        i
    }
}

fn schedule(job: &JobSpec, ctx: &Ctx, prs: &mut Vec<PullRequest>) -> Vec<Slot> {
    let end = job.last_ts.min(ctx.world_end);
    let mut r = Rng::for_key(ctx.seed, &["schedule", &job.name]);
    let mut slots = Vec::new();
    match job.kind {
        JobKind::Periodic => {
            let phase = (hash_parts(ctx.seed, &["phase", &job.name]) % job.interval.max(1) as u64) as i64;
            let mut t = job.first_ts + phase.min(job.interval);
            let jitter_max = (job.interval / 10).clamp(1, 600) as u64;
            while t < end {
                slots.push(Slot { start: t + r.below(jitter_max) as i64, trig: Trig::Periodic });
                t += job.interval;
            }
        }
        JobKind::Postsubmit => {
            let cur = BranchCursor::new(ctx.seed, &job.repo, &job.branch);
            for (t, sha) in cur.merges_between(job.first_ts, end) {
                let u = (hash_parts(ctx.seed, &["post", &job.name, &sha]) >> 11) as f64 / (1u64 << 53) as f64;
                if u < job.run_prob {
                    slots.push(Slot { start: t + 30 + r.below(300) as i64, trig: Trig::Post { sha } });
                }
            }
        }
        JobKind::Presubmit => {
            if let Some(num) = job.single_pr {
                let opened = (ctx.world_end - 40 * DAY).max(job.first_ts);
                let mut pr = repos::pr_details(ctx.seed, &job.repo, num, opened);
                let mut t = opened;
                let mut pushes = Vec::new();
                while t < end {
                    pushes.push((t, r.hex(40)));
                    t += 3 * DAY + r.below(2 * DAY as u64) as i64;
                }
                pr.pushes = pushes;
                let idx = prs.len();
                for (k, (pt, _)) in pr.pushes.iter().enumerate() {
                    slots.push(Slot {
                        start: pt + 60 + r.below(600) as i64,
                        trig: Trig::Pre { pr: idx, push: k, retest: 0 },
                    });
                }
                prs.push(pr);
            } else {
                let info = repos::repo_info(&job.repo);
                let release = job.branch != info.default_branch;
                let first_day = job.first_ts.div_euclid(DAY) - 3;
                for day in first_day..=ctx.end_day {
                    for pr in repos::prs_opened_on(ctx.seed, &job.repo, day, ctx.start_day) {
                        if release != (pr.number % 8 == 0) {
                            continue;
                        }
                        let mut used = false;
                        let idx = prs.len();
                        for (k, (pt, _)) in pr.pushes.iter().enumerate() {
                            if *pt < job.first_ts || *pt >= end {
                                continue;
                            }
                            let key = repos::pr_key(ctx.seed, &job.name, pr.number, k);
                            let u = (key >> 11) as f64 / (1u64 << 53) as f64;
                            if u < job.run_prob {
                                used = true;
                                slots.push(Slot {
                                    start: pt + 60 + r.below(600) as i64,
                                    trig: Trig::Pre { pr: idx, push: k, retest: 0 },
                                });
                            }
                        }
                        if used {
                            prs.push(pr);
                        }
                    }
                }
            }
        }
    }
    // Tide batches for kubernetes/kubernetes presubmits (about one run in 20).
    if job.kind == JobKind::Presubmit
        && job.single_pr.is_none()
        && job.repo == "kubernetes/kubernetes"
        && prs.len() >= 4
    {
        let n = slots.len() / 20;
        for _ in 0..n {
            let t = job.first_ts + r.below((end - job.first_ts).max(1) as u64) as i64;
            let mut pulls: Vec<(usize, usize)> = Vec::new();
            let want = r.range(2, 4) as usize;
            let mut guard = 0;
            while pulls.len() < want && guard < 40 {
                guard += 1;
                let i = r.index(prs.len());
                let Some(k) = prs[i].pushes.iter().rposition(|(pt, _)| *pt < t) else { continue };
                if !pulls.iter().any(|(p, _)| *p == i) {
                    pulls.push((i, k));
                }
            }
            if pulls.len() >= 2 {
                pulls.sort_by_key(|(p, _)| prs[*p].number);
                slots.push(Slot { start: t, trig: Trig::Batch { pulls } });
            }
        }
    }
    slots.retain(|s| s.start < end && s.start >= job.first_ts);
    // Stories that must be visible in the latest dashboards get a run in
    // the last week even when the job rarely triggers.
    let recent = ctx.world_end - 6 * DAY;
    let visible = matches!(
        job.scenario,
        Scenario::LongBroken
            | Scenario::NeverPassed
            | Scenario::RareBroken
            | Scenario::FixedAfterSnapshot
            | Scenario::Crossing
            | Scenario::ByDesign
    );
    if visible && end > recent && !slots.iter().any(|s| s.start >= recent) {
        let at = recent + DAY + r.below(2 * DAY as u64) as i64;
        match job.kind {
            JobKind::Periodic => slots.push(Slot { start: at, trig: Trig::Periodic }),
            JobKind::Postsubmit => {
                let mut cur = BranchCursor::new(ctx.seed, &job.repo, &job.branch);
                let (sha, _) = cur.head_at(at);
                slots.push(Slot { start: at, trig: Trig::Post { sha } });
            }
            JobKind::Presubmit => {
                let info = repos::repo_info(&job.repo);
                let number = info.pr_base + 80_000 + (hash_parts(ctx.seed, &["late-pr", &job.name]) % 5000) as u32;
                let mut pr = repos::pr_details(ctx.seed, &job.repo, number, at);
                pr.pushes.truncate(1);
                slots.push(Slot { start: at + 120, trig: Trig::Pre { pr: prs.len(), push: 0, retest: 0 } });
                prs.push(pr);
            }
        }
    }
    slots.sort_by_key(|s| s.start);
    slots
}

/// Simulates and writes one job. Only small summaries are kept in memory.
pub fn run_job(job: &JobSpec, ctx: &Ctx, sink: &mut Sink) -> Result<JobOutput, SynthError> {
    let mut prs: Vec<PullRequest> = Vec::new();
    let slots = schedule(job, ctx, &mut prs);
    let tests = job_tests(job, ctx.seed);
    let kettle_job = job.kettle_name();
    let mut interner = Interner { names: Vec::new(), idx: BTreeMap::new() };
    let mut rows: Vec<Row> = Vec::new();
    let mut recs: Vec<Rec> = Vec::new();
    let mut truth_lines = Vec::new();
    let mut prowjobs = Vec::new();
    let mut stats = JobStats::default();
    let mut written_builds = 0u64;
    let mut flaky_truth: Vec<FlakyTruth> = job
        .flaky
        .iter()
        .map(|ft| {
            let def = &FLAKY[ft.def];
            FlakyTruth {
                job: job.name.clone(),
                kettle_job: kettle_job.clone(),
                test: def.name.to_string(),
                kettle_test: None,
                pattern: format!("flake/{}", def.id),
                signature: def.signature,
                probability: ft.prob,
                retried_in_run: ft.retried,
                runs: 0,
                failed_attempts: 0,
                builds_failed_by_it: 0,
                recovered_in_run: 0,
            }
        })
        .collect();
    let mut main_cur = BranchCursor::new(ctx.seed, &job.repo, &job.branch);
    let mut extra_curs: Vec<BranchCursor> =
        job.extra_refs.iter().map(|(r, b)| BranchCursor::new(ctx.seed, r, b)).collect();

    let mut heap: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut pool: Vec<Option<Slot>> = Vec::new();
    for s in slots {
        heap.push(Reverse((s.start, pool.len())));
        pool.push(Some(s));
    }
    let mut last_id = 0u64;
    let mut tg_columns: Vec<testgrid::Column> = Vec::new();
    while let Some(Reverse((_, si))) = heap.pop() {
        let Some(slot) = pool.get_mut(si).and_then(Option::take) else {
            continue;
        };
        let mut id = prow::build_id(slot.start, hash_parts(ctx.seed, &["id", &job.name, &si.to_string()]));
        if id <= last_id {
            id = last_id + 1;
        }
        last_id = id;
        let idstr = id.to_string();
        let mut br = Rng::for_key(ctx.seed, &["build", &job.name, &idstr]);

        // References of this build.
        let (refs, extra_refs, repo_commit, kettle_commit, pr_number, single_pull) = match &slot.trig {
            Trig::Periodic => {
                let sha = match &job.history {
                    Some(h) => written_head(h, slot.start),
                    None => main_cur.head_at(slot.start).0,
                };
                let mut extra = vec![Refs::new(&job.repo, &job.branch, &sha)];
                for (i, c) in extra_curs.iter_mut().enumerate() {
                    let (s2, _) = c.head_at(slot.start);
                    let (rp, b) = &job.extra_refs[i];
                    extra.push(Refs::new(rp, b, &s2));
                }
                (None, extra, sha.clone(), sha, None, false)
            }
            Trig::Post { sha, .. } => {
                let r = Refs::new(&job.repo, &job.branch, sha);
                (Some(r), Vec::new(), sha.clone(), sha.clone(), None, false)
            }
            Trig::Pre { pr, push, .. } => {
                let p = &prs[*pr];
                let (base, _) = main_cur.head_at(slot.start);
                let pr_sha = p.pushes.get(*push).map(|x| x.1.clone()).unwrap_or_default();
                let mut r = Refs::new(&job.repo, &job.branch, &base);
                r.pulls.push(Pull {
                    number: p.number,
                    author: p.author.clone(),
                    sha: pr_sha.clone(),
                    title: p.title.clone(),
                    link: format!("https://github.com/{}/pull/{}", job.repo, p.number),
                    commit_link: format!("https://github.com/{}/pull/{}/commits/{}", job.repo, p.number, pr_sha),
                    author_link: format!("https://github.com/{}", p.author),
                });
                let extra: Vec<Refs> = job
                    .extra_refs
                    .iter()
                    .zip(extra_curs.iter_mut())
                    .map(|((rp, b), c)| Refs::new(rp, b, &c.head_at(slot.start).0))
                    .collect();
                let merged = fake_sha(ctx.seed, &["merge", &base, &pr_sha]);
                (Some(r), extra, merged, pr_sha, Some(p.number), true)
            }
            Trig::Batch { pulls } => {
                let (base, _) = main_cur.head_at(slot.start);
                let mut r = Refs::new(&job.repo, &job.branch, &base);
                for (pi, k) in pulls {
                    let p = &prs[*pi];
                    let sha = p.pushes.get(*k).map(|x| x.1.clone()).unwrap_or_default();
                    r.pulls.push(Pull {
                        number: p.number,
                        author: p.author.clone(),
                        sha: sha.clone(),
                        title: p.title.clone(),
                        link: format!("https://github.com/{}/pull/{}", job.repo, p.number),
                        commit_link: format!("https://github.com/{}/pull/{}/commits/{}", job.repo, p.number, sha),
                        author_link: format!("https://github.com/{}", p.author),
                    });
                }
                let last = r.pulls.last().map(|p| p.sha.clone()).unwrap_or_default();
                let merged = fake_sha(ctx.seed, &["batch", &base, &last]);
                (Some(r), Vec::new(), merged, last, None, false)
            }
        };
        let batch = matches!(slot.trig, Trig::Batch { .. });
        let prow_type = if batch { "batch" } else { job.kind.prow_type() };

        let gcs_rel = prow::build_dir(prow_type, &job.name, id, &job.repo, pr_number);
        let url = format!("https://prow.k8s.io/view/gs/{}/{}", job.bucket, gcs_rel);
        stats.builds += 1;
        // Outside a day slice the build's files are not written, and not even rendered
        // unless the aggregate files need them; its random draws are made all the same.
        let write = ctx.writes(slot.start);
        let render = write || ctx.aggregates;
        sink.skip = !write;

        // state=error: no pod, no GCS folder.
        let in_error_window = job.error_window.is_some_and(|(a, b)| slot.start >= a && slot.start < b);
        if in_error_window || br.chance(0.002) {
            stats.error += 1;
            let p = catalog::pattern("pod-not-created").unwrap_or(&catalog::PATTERNS[0]);
            let mut v = Vars::new(br.fork("vars"), slot.start);
            let desc = v.render(p.message);
            let end = slot.start + 2 + br.below(30) as i64;
            let in_js = slot.start >= ctx.prowjobs_from;
            if in_js {
                prowjobs.push(prow::prowjob_json(
                    &JobDoc {
                        uid: br.uuid(),
                        job: &job.name,
                        prow_type,
                        cluster: "k8s-infra-prow-build",
                        bucket: job.bucket,
                        build_id: id,
                        start: slot.start,
                        end: Some(end),
                        state: State::Error,
                        description: desc.clone(),
                        url: url.clone(),
                        refs: refs.clone(),
                        extra_refs: extra_refs.clone(),
                        image: image_for(job, slot.start),
                        args: vec![],
                    },
                    false,
                ));
            }
            let bt = BuildTruth {
                job: &job.name,
                kettle_job: &kettle_job,
                id: idstr.clone(),
                state: State::Error,
                started: slot.start,
                finished: None,
                path: None,
                commit: &kettle_commit,
                pr: pr_number,
                in_prowjobs_js: in_js,
                failed_tests: 0,
                junit_truncated: vec![],
                causes: vec![CauseTruth {
                    pattern: p.id.to_string(),
                    class: p.class,
                    test: None,
                    retried_ok: false,
                    log: None,
                    junit: vec![],
                    description: Some(desc),
                }],
            };
            push_jsonl(&mut truth_lines, &bt);
            recs.push(Rec { id, start: slot.start, end: Some(end), state: State::Error, gcs_dir: None, refs });
            continue;
        }

        // Decide causes.
        let mut vars = Vars::new(br.fork("vars"), slot.start);
        vars.set("pin", job.pin.clone());
        let aborted = br.chance(if job.kind == JobKind::Presubmit { 0.02 } else { 0.004 });
        let mut causes: Vec<Cause> = Vec::new();
        let pattern_cause = |p: &'static Pattern, vars: &mut Vars| -> Cause {
            let errors = p.errors.iter().map(|e| vars.render(e)).collect();
            let context = p.context.iter().map(|e| vars.render(e)).collect();
            let setup = p.stage == Stage::Setup
                && matches!(p.junit, JunitEffect::None | JunitEffect::Harness(_) | JunitEffect::Named(_));
            Cause {
                pattern: Some(p),
                flaky: None,
                retried_ok: false,
                log: LogCause { errors, context, setup },
                description: None,
            }
        };
        if aborted {
            if let Some(p) = catalog::pattern("aborted-superseded") {
                let mut c = pattern_cause(p, &mut vars);
                c.log.setup = false;
                causes.push(c);
            }
        } else {
            for b in &job.broken {
                if slot.start >= b.from && slot.start < b.to && br.chance(b.rate) {
                    causes.push(pattern_cause(b.pattern, &mut vars));
                    break;
                }
            }
            if causes.is_empty() && !job.infra.is_empty() && br.chance(job.infra_rate * 0.5) {
                let p = job.infra[br.index(job.infra.len())];
                causes.push(pattern_cause(p, &mut vars));
            }
            let heads: Vec<(usize, usize)> = match &slot.trig {
                Trig::Pre { pr, push, .. } => vec![(*pr, *push)],
                Trig::Batch { pulls } => pulls.clone(),
                _ => Vec::new(),
            };
            for (pr, push) in heads {
                if job.single_pr.is_none() {
                    let key = repos::pr_key(ctx.seed, "bad-pr", prs[pr].number, push);
                    if key % 1000 < 110 && !matches!(job.suite, SuiteKind::ImageBuild) {
                        let id = if matches!(job.suite, SuiteKind::GoUnit | SuiteKind::GoIntegration)
                            && key.is_multiple_of(2)
                        {
                            "pr-unit-regression"
                        } else {
                            "compile-error"
                        };
                        if let Some(p) = catalog::pattern(id) {
                            causes.push(pattern_cause(p, &mut vars));
                        }
                        break;
                    }
                }
            }
            let setup_failed = causes.iter().any(|c| c.log.setup);
            if !setup_failed {
                for (fi, ft) in job.flaky.iter().enumerate() {
                    flaky_truth[fi].runs += 1;
                    if br.chance(ft.prob) {
                        flaky_truth[fi].failed_attempts += 1;
                        let recovered = if ft.retried {
                            let second_fails = br.chance(ft.prob);
                            if second_fails {
                                flaky_truth[fi].failed_attempts += 1;
                            }
                            !second_fails
                        } else {
                            false
                        };
                        if recovered {
                            flaky_truth[fi].recovered_in_run += 1;
                            stats.in_run_retries += 1;
                        } else {
                            flaky_truth[fi].builds_failed_by_it += 1;
                        }
                        causes.push(Cause {
                            pattern: None,
                            flaky: Some(fi),
                            retried_ok: recovered,
                            log: LogCause { errors: vec![], context: vec![], setup: false },
                            description: None,
                        });
                    }
                }
            }
        }

        // Timing and state.
        let (dmin, dmax) = job.duration;
        let mut dur = br.range(dmin as u64, dmax as u64) as i64;
        if causes.iter().any(|c| c.log.setup) {
            dur = dur / 3 + 5 * MINUTE;
        }
        if causes.iter().any(|c| c.pattern.is_some_and(|p| p.id == "process-timeout")) {
            dur = 2 * HOUR + 15 * MINUTE;
        }
        if aborted {
            dur = dur / 4 + MINUTE;
        }
        let end = slot.start + dur;
        let failing = causes.iter().any(|c| !c.retried_ok);
        let state = if end > ctx.world_end {
            State::Pending
        } else if aborted {
            State::Aborted
        } else if failing {
            State::Failure
        } else {
            State::Success
        };

        // Tests and their outcomes.
        let setup_cause = causes.iter().position(|c| c.log.setup);
        let mut failures_log: Vec<LogTestFailure> = Vec::new();
        // test index -> list of (cause, message, body)
        let mut fails: BTreeMap<usize, Vec<(usize, String, String)>> = BTreeMap::new();
        let mut harness_fail: Option<(String, usize, String)> = None;
        let mut timeout_error = false;
        let runnable: Vec<usize> = tests
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.skipped && t.flaky.is_none() && !t.name.starts_with("[Synchronized"))
            .map(|(i, _)| i)
            .collect();
        for (ci, c) in causes.iter().enumerate() {
            if let Some(fi) = c.flaky {
                let def = &FLAKY[job.flaky[fi].def];
                vars.forget(&["line", "ns", "pod", "dur", "n", "count", "vol", "hiport", "node", "ip"]);
                let msg = vars.render(def.message);
                if let Some(ti) = tests.iter().position(|t| t.flaky == Some(fi)) {
                    fails.entry(ti).or_default().push((ci, msg.clone(), flaky_body(&mut br)));
                    failures_log.push(LogTestFailure {
                        cause: ci,
                        name: tests[ti].name.clone(),
                        message: msg,
                        retried_ok: c.retried_ok,
                    });
                } else {
                    // Harness-step flakes (Up, Node Tests, diffResources, Preparation).
                    harness_fail = Some((def.name.to_string(), ci, msg));
                }
                continue;
            }
            let Some(p) = c.pattern else { continue };
            if p.id == "process-timeout" {
                timeout_error = true;
                continue;
            }
            match p.junit {
                JunitEffect::None => {}
                JunitEffect::Harness(step) => {
                    let msg = vars.render(p.message);
                    harness_fail = Some((step.to_string(), ci, msg));
                }
                JunitEffect::Named(n) => {
                    if let Some(ti) = tests.iter().position(|t| t.name == n) {
                        let msg = vars.render(p.message);
                        fails.entry(ti).or_default().push((ci, msg.clone(), pattern_body(&mut br)));
                        failures_log.push(LogTestFailure {
                            cause: ci,
                            name: n.to_string(),
                            message: msg,
                            retried_ok: false,
                        });
                    }
                }
                JunitEffect::Some(_) | JunitEffect::Mass if setup_cause.is_none() || setup_cause == Some(ci) => {
                    if runnable.is_empty() {
                        continue;
                    }
                    let mass = matches!(p.junit, JunitEffect::Mass);
                    let want = match p.junit {
                        JunitEffect::Some(k) => br.range(1, u64::from(k.max(1))) as usize,
                        _ => {
                            // The environment breaks at some point of the run: every test
                            // after it fails, those before passed (30-100% of the run).
                            let pct = br.range(30, 100) as usize;
                            (runnable.len() * pct / 100).max(1)
                        }
                    }
                    .min(runnable.len());
                    let preferred: Vec<usize> = if p.affects.is_empty() {
                        Vec::new()
                    } else {
                        runnable.iter().copied().filter(|&i| tests[i].name.contains(p.affects)).collect()
                    };
                    let pool: &[usize] = if preferred.is_empty() { &runnable } else { &preferred };
                    let want = want.min(pool.len());
                    let mut chosen: Vec<usize> = Vec::new();
                    if mass {
                        // The tests that ran after the break, in run order.
                        chosen.extend(pool[pool.len() - want..].iter().copied());
                    }
                    let mut guard = 0;
                    while chosen.len() < want && guard < want * 20 {
                        guard += 1;
                        let ti = pool[br.index(pool.len())];
                        if !chosen.contains(&ti) {
                            chosen.push(ti);
                        }
                    }
                    chosen.sort_unstable();
                    for (k, ti) in chosen.into_iter().enumerate() {
                        vars.forget(&["ns", "pod", "vol", "line", "dur", "n"]);
                        let msg = vars.render(p.message);
                        fails.entry(ti).or_default().push((ci, msg.clone(), pattern_body(&mut br)));
                        if k < 30 {
                            failures_log.push(LogTestFailure {
                                cause: ci,
                                name: tests[ti].name.clone(),
                                message: msg,
                                retried_ok: false,
                            });
                        }
                    }
                }
                _ => {}
            }
        }

        // Render and write files.
        let mut written_junit: Vec<(String, Vec<junit::FailureLine>)> = Vec::new();
        let mut kettle_tests: Vec<(u32, bool)> = Vec::new();
        let mut truncated_files: Vec<String> = Vec::new();
        let mut failed_tests = 0u64;
        let mut log_ev: Vec<logs::LogEvidence> = Vec::new();
        let gcs_prefix = format!("{}/{}", ctx.gcs_root, gcs_rel);
        let junit_plan = JunitPlan {
            job,
            tests: &tests,
            causes: &causes,
            fails: &fails,
            harness_fail: harness_fail.as_ref(),
            timeout_error,
            setup_cause,
            aborted,
            start: slot.start,
            end,
        };
        'files: {
            if !render {
                // Outside the slice and without the world files: nothing is rendered. Only a
                // failed presubmit that may be retested draws again after its files (the
                // retest's chance), so only then are the files' draws made, in their order.
                let retested = matches!(slot.trig, Trig::Pre { retest, .. } if retest < 3);
                if retested && state == State::Failure {
                    let _ = br.uuid();
                    let _ = compose_junit(&junit_plan, &mut br);
                    let _ = log_factor(&mut br);
                    let _ = br.fork("log");
                }
                break 'files;
            }
            let started = prow::Started {
                timestamp: slot.start,
                pull: pr_number.map(|n| n.to_string()),
                repos: {
                    let mut m = BTreeMap::new();
                    match &refs {
                        Some(r) => {
                            m.insert(r.full(), r.started_value());
                        }
                        None => {
                            if let Some(r) = extra_refs.first() {
                                m.insert(r.full(), r.base_ref.clone());
                            }
                        }
                    }
                    for r in extra_refs.iter().skip(if refs.is_some() { 0 } else { 1 }) {
                        m.entry(r.full()).or_insert_with(|| r.base_ref.clone());
                    }
                    m
                },
                repo_version: repo_commit.clone(),
                repo_commit: repo_commit.clone(),
            };
            let started_bytes = pretty(&started);
            sink.write(&format!("{gcs_prefix}/started.json"), &started_bytes)?;
            let uid = br.uuid();
            let description = state.description().to_string();
            let doc = JobDoc {
                uid,
                job: &job.name,
                prow_type,
                cluster: "k8s-infra-prow-build",
                bucket: job.bucket,
                build_id: id,
                start: slot.start,
                end: if state == State::Pending { None } else { Some(end) },
                state,
                description,
                url: url.clone(),
                refs: refs.clone(),
                extra_refs: extra_refs.clone(),
                image: image_for(job, slot.start),
                args: vec![format!("--job={}", job.name)],
            };
            sink.write(&format!("{gcs_prefix}/prowjob.json"), &prow::prowjob_json(&doc, true))?;
            if slot.start >= ctx.prowjobs_from {
                prowjobs.push(prow::prowjob_json(&doc, false));
            }
            if job.kind == JobKind::Presubmit {
                sink.write(
                    &format!("{}/pr-logs/directory/{}/{}.txt", ctx.gcs_root, job.name, id),
                    format!("gs://{}/{}", job.bucket, gcs_rel).as_bytes(),
                )?;
            }
            if state == State::Pending {
                tg_columns.push(testgrid::running_column(&idstr, slot.start, &repo_commit));
            }
            if state != State::Pending {
                // JUnit.
                let files = compose_junit(&junit_plan, &mut br);
                if state != State::Pending {
                    tg_columns.push(testgrid::finished_column(
                        &idstr,
                        slot.start,
                        &repo_commit,
                        &files,
                        state == State::Success,
                    ));
                }
                for f in files.into_iter().filter(|_| render) {
                    let (bytes, mut fl, kt) = junit::render(&f);
                    if !junit::kettle_reads(&f.rel) {
                        for l in &mut fl {
                            l.kettle_name = None;
                        }
                    }
                    let path = format!("{gcs_prefix}/{}", f.rel);
                    if f.truncate_permille.is_some() {
                        truncated_files.push(path.clone());
                    }
                    failed_tests += count_failures(&f.root);
                    for k in kt.into_iter().filter(|_| junit::kettle_reads(&f.rel)) {
                        let n = interner.get(&k.name);
                        kettle_tests.push((n, k.failed));
                    }
                    sink.write(&path, &bytes)?;
                    written_junit.push((path, fl));
                }
                // Build log.
                let passing: Vec<&str> =
                    tests.iter().filter(|t| !t.skipped).take(60).map(|t| t.name.as_str()).collect();
                let lines = (ctx.log_lines as f64 * log_factor(&mut br)).round().max(20.0) as usize;
                let lcauses: Vec<LogCause> = causes
                    .iter()
                    .map(|c| LogCause {
                        errors: c.log.errors.clone(),
                        context: c.log.context.clone(),
                        setup: c.log.setup,
                    })
                    .collect();
                let spec = LogSpec {
                    suite: job.suite,
                    job: &job.name,
                    build_id: &idstr,
                    start: slot.start,
                    end,
                    target_lines: lines,
                    passed: state == State::Success,
                    aborted,
                    tests_run: tests.iter().filter(|t| !t.skipped).count(),
                    tests_skipped: tests.iter().filter(|t| t.skipped).count(),
                    passing,
                    causes: &lcauses,
                    failures: &failures_log,
                };
                let mut lr = br.fork("log");
                if render {
                    let (text, ev) = logs::render(&spec, &mut lr, &mut vars);
                    log_ev = ev;
                    sink.write(&format!("{gcs_prefix}/build-log.txt"), &text.buf)?;
                }
                // finished.json
                let mut metadata = BTreeMap::new();
                if matches!(job.suite, SuiteKind::Ginkgo | SuiteKind::Kubetest | SuiteKind::Kops) {
                    metadata.insert(
                        "job-version".to_string(),
                        format!("v1.36.0-alpha.0.{}+{}", id % 997, &repo_commit[..14.min(repo_commit.len())]),
                    );
                }
                let fin = prow::Finished {
                    timestamp: end,
                    passed: state == State::Success,
                    result: state.result().unwrap_or("FAILURE"),
                    revision: match &refs {
                        Some(r) if !r.pulls.is_empty() => r.pulls[0].sha.clone(),
                        _ => repo_commit.clone(),
                    },
                    metadata,
                };
                sink.write(&format!("{gcs_prefix}/finished.json"), &pretty(&fin))?;
                rows.push(Row {
                    started: slot.start,
                    finished: end,
                    success: state == State::Success,
                    commit: kettle_commit.clone(),
                    single_pull,
                    tests: if slot.start > ctx.flakes_from { kettle_tests } else { Vec::new() },
                });
            }
        }
        match state {
            State::Success => stats.success += 1,
            State::Failure => stats.failure += 1,
            State::Aborted => stats.aborted += 1,
            State::Pending => stats.pending += 1,
            State::Error => stats.error += 1,
        }
        stats.gcs_builds += 1;
        written_builds += u64::from(write);
        stats.failed_tests += failed_tests;

        // Flaky truth: kettle names.
        for (_, fl) in &written_junit {
            for f in fl {
                if let Some(fi) = causes.get(f.cause).and_then(|c| c.flaky) {
                    if flaky_truth[fi].kettle_test.is_none() {
                        flaky_truth[fi].kettle_test = f.kettle_name.clone();
                    }
                }
            }
        }

        // Truth line for every build that is not a clean pass.
        if state != State::Success || !causes.is_empty() || !truncated_files.is_empty() {
            let mut ct: Vec<CauseTruth> = Vec::new();
            for (ci, c) in causes.iter().enumerate() {
                let (pattern, class, test) = match (c.pattern, c.flaky) {
                    (Some(p), _) => (p.id.to_string(), p.class, None),
                    (None, Some(fi)) => {
                        let def = &FLAKY[job.flaky[fi].def];
                        (format!("flake/{}", def.id), Class::Flake, Some(def.name))
                    }
                    _ => continue,
                };
                let log = log_ev.get(ci).filter(|e| !e.errors.is_empty() || !e.context.is_empty()).map(|e| LogTruth {
                    file: format!("{gcs_prefix}/build-log.txt"),
                    error_lines: e.errors.clone(),
                    context_lines: e.context.clone(),
                });
                let mut jt = Vec::new();
                for (path, fl) in &written_junit {
                    for f in fl.iter().filter(|f| f.cause == ci) {
                        jt.push(JunitTruth {
                            file: path.clone(),
                            test: f.name.clone(),
                            kettle_test: f.kettle_name.clone(),
                            line: f.line,
                        });
                    }
                }
                ct.push(CauseTruth {
                    pattern,
                    class,
                    test,
                    retried_ok: c.retried_ok,
                    log,
                    junit: jt,
                    description: c.description.clone(),
                });
            }
            let bt = BuildTruth {
                job: &job.name,
                kettle_job: &kettle_job,
                id: idstr.clone(),
                state,
                started: slot.start,
                finished: if state == State::Pending { None } else { Some(end) },
                path: Some(gcs_prefix.clone()),
                commit: &kettle_commit,
                pr: pr_number,
                in_prowjobs_js: slot.start >= ctx.prowjobs_from,
                failed_tests,
                junit_truncated: truncated_files,
                causes: ct,
            };
            push_jsonl(&mut truth_lines, &bt);
        }

        recs.push(Rec {
            id,
            start: slot.start,
            end: if state == State::Pending { None } else { Some(end) },
            state,
            gcs_dir: Some(gcs_rel.clone()),
            refs: refs.clone(),
        });

        // Retest failed presubmits on the same commit.
        if let Trig::Pre { pr, push, retest } = slot.trig {
            if state == State::Failure && retest < 3 && br.chance(if job.single_pr.is_some() { 0.8 } else { 0.55 }) {
                let t = end + 5 * MINUTE + br.below(55 * MINUTE as u64) as i64;
                if t < job.last_ts.min(ctx.world_end) {
                    heap.push(Reverse((t, pool.len())));
                    pool.push(Some(Slot { start: t, trig: Trig::Pre { pr, push, retest: retest + 1 } }));
                }
            }
        }
    }

    // Job history pages and latest-build.txt: world files, not a day slice's.
    sink.skip = !ctx.aggregates;
    let history_prefix = match job.kind {
        JobKind::Presubmit => format!("pr-logs/directory/{}", job.name),
        _ => format!("logs/{}", job.name),
    };
    let mut with_gcs: Vec<&Rec> = recs.iter().filter(|r| r.gcs_dir.is_some()).collect();
    with_gcs.sort_by_key(|r| std::cmp::Reverse(r.id));
    if let Some(latest) = with_gcs.first() {
        sink.write(&format!("{}/{}/latest-build.txt", ctx.gcs_root, history_prefix), latest.id.to_string().as_bytes())?;
    }
    write_history(sink, job, &history_prefix, &with_gcs)?;

    // The job's tabs on TestGrid.
    let mut tabs = Vec::new();
    if let Some((dashboards, tab)) = prow::testgrid_of(&job.name).filter(|_| !tg_columns.is_empty()) {
        let tab = tab.unwrap_or_else(|| job.name.clone());
        let query = format!("{}/{}", job.bucket, history_prefix);
        let table = testgrid::table_json(&query, &job.name.replace(['-', '.'], ""), &tg_columns);
        for d in dashboards.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            sink.write(&format!("testgrid/{d}/table/{tab}"), &table)?;
            tabs.push((d.to_string(), tab.clone(), testgrid::summary_entry(&tg_columns)));
        }
    }

    // Dashboards for each snapshot.
    let failures: Vec<Option<i64>> = ctx.snapshots.iter().map(|s| kettle::failures_entry(&rows, *s)).collect();
    let flakes: Vec<Option<FlakeEntry>> =
        ctx.snapshots.iter().map(|s| kettle::flakes_entry(&kettle_job, &rows, &interner.names, *s)).collect();
    let mut dash = DashTruth::default();
    for (i, s) in ctx.snapshots.iter().enumerate() {
        if let Some(d) = failures[i] {
            dash.failures.insert(citriage_model::Day(s.day).to_string(), d);
        }
        if let Some(e) = &flakes[i] {
            dash.flakes.insert(citriage_model::Day(s.day).to_string(), e.consistency);
        }
    }
    let first = recs.iter().map(|r| r.start).min();
    let last = recs.iter().map(|r| r.start).max();
    let truth = JobTruth {
        name: job.name.clone(),
        kettle_name: kettle_job.clone(),
        kind: job.kind,
        bucket: job.bucket,
        gcs_prefix: history_prefix,
        repo: job.repo.clone(),
        branch: job.branch.clone(),
        arch: job.arch,
        suite: job.suite,
        scenario: job.scenario,
        description: job.description.clone(),
        first_build: first.map(time::rfc3339),
        last_build: last.map(time::rfc3339),
        broken: job
            .broken
            .iter()
            .map(|b| BrokenTruth {
                pattern: b.pattern.id,
                class: b.pattern.class,
                from: (b.from != i64::MIN).then(|| time::rfc3339(b.from)),
                to: (b.to != i64::MAX).then(|| time::rfc3339(b.to)),
                rate: b.rate,
            })
            .collect(),
        flaky_tests: job.flaky.iter().map(|f| FLAKY[f.def].name.to_string()).collect(),
        single_pr: job.single_pr,
        error_state_since: job.error_window.map(|(a, _)| time::rfc3339(a)),
        stats,
        dashboards: dash,
    };
    let runs = recs.iter().map(|r| (r.start, r.state)).collect();
    Ok(JobOutput {
        truth_lines,
        prowjobs,
        truth,
        flaky: flaky_truth,
        failures,
        flakes,
        count: sink.count,
        stats,
        runs,
        testgrid: tabs,
        written_builds,
        written: sink.written,
    })
}

fn log_factor(r: &mut Rng) -> f64 {
    match r.weighted(&[70, 25, 5]) {
        0 => 0.5 + r.unit(),
        1 => 1.5 + r.unit(),
        _ => 3.0 + 3.0 * r.unit(),
    }
}

fn flaky_body(r: &mut Rng) -> String {
    format!(
        "In [It] at: k8s.io/kubernetes/test/e2e/framework/util.go:{} @ {}\n\nFull Stack Trace\n  k8s.io/kubernetes/test/e2e/framework.ExpectNoError(...)\n  \t/home/prow/go/src/k8s.io/kubernetes/test/e2e/framework/expect.go:{}",
        r.range(40, 900),
        r.hex(6),
        r.range(20, 90)
    )
}

fn pattern_body(r: &mut Rng) -> String {
    format!(
        "goroutine {} [running]:\nk8s.io/kubernetes/test/e2e/framework.Fail({{0xc{}, 0x{:x}}})\n\t/home/prow/go/src/k8s.io/kubernetes/test/e2e/framework/log.go:{} +0x{:x}",
        r.range(100, 9000),
        r.hex(9),
        r.range(16, 512),
        r.range(40, 90),
        r.range(16, 400)
    )
}

fn count_failures(root: &Root) -> u64 {
    fn suite(s: &Suite) -> u64 {
        s.cases.iter().filter(|c| matches!(c.outcome, Outcome::Fail { .. })).count() as u64
            + s.nested.iter().map(suite).sum::<u64>()
    }
    match root {
        Root::Suite(s) => suite(s),
        Root::Suites(ss) => ss.iter().map(suite).sum(),
    }
}

fn pretty<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_default()
}

fn push_jsonl<T: Serialize>(buf: &mut Vec<u8>, v: &T) {
    if serde_json::to_writer(&mut *buf, v).is_ok() {
        buf.push(b'\n');
    }
}

fn case(classname: &str, name: &str, ms: u64, outcome: Outcome) -> Case {
    Case { classname: classname.to_string(), name: Some(name.to_string()), time_ms: ms, outcome, lifecycle: None }
}

/// What a build's JUnit files are made from (its outcome decided before any file).
struct JunitPlan<'a> {
    job: &'a JobSpec,
    tests: &'a [TestDef],
    causes: &'a [Cause],
    fails: &'a BTreeMap<usize, Vec<(usize, String, String)>>,
    harness_fail: Option<&'a (String, usize, String)>,
    timeout_error: bool,
    setup_cause: Option<usize>,
    aborted: bool,
    start: i64,
    end: i64,
}

fn compose_junit(plan: &JunitPlan, r: &mut Rng) -> Vec<JunitFile> {
    let JunitPlan { job, tests, causes, fails, harness_fail, timeout_error, setup_cause, aborted, start, end } = *plan;
    let mut files = Vec::new();
    if aborted || job.suite == SuiteKind::ImageBuild {
        return files;
    }
    let setup = setup_cause.and_then(|i| causes.get(i)).and_then(|c| c.pattern);
    let setup_effect = setup.map(|p| p.junit);
    let has_runner = matches!(job.suite, SuiteKind::Kubetest | SuiteKind::Kops);
    let node = job.suite == SuiteKind::Kubetest && job.name.contains("node");
    let any_test_failed = fails.values().flatten().any(|(ci, _, _)| !causes[*ci].retried_ok);

    // Runner (harness) file.
    if has_runner {
        let steps: Vec<&str> = if job.suite == SuiteKind::Kops {
            suites::KUBETEST2_STEPS.to_vec()
        } else if node {
            suites::KUBETEST_STEPS.to_vec()
        } else {
            vec![
                "TearDown Previous",
                "Up",
                "test setup",
                "Test",
                "DumpClusterLogs",
                "diffResources",
                "TearDown",
                "Deferred TearDown",
            ]
        };
        let mut cases = Vec::new();
        let mut stop = false;
        for st in steps {
            if stop && !matches!(st, "DumpClusterLogs" | "TearDown" | "Deferred TearDown" | "Down") {
                continue;
            }
            let ms = 1000 + r.below(600_000);
            let outcome = match harness_fail {
                Some((h, ci, msg)) if h == st => {
                    if setup.is_some() {
                        stop = true;
                    }
                    Outcome::Fail { message: msg.clone(), body: String::new(), cause: *ci }
                }
                _ if (st == "Test" || st == "Node Tests") && any_test_failed && !stop => {
                    // A consequence of the failed tests, not evidence of their cause.
                    let ci = usize::MAX;
                    Outcome::Fail {
                        message: if st == "Node Tests" {
                            "error during go run /go/src/k8s.io/kubernetes/test/e2e_node/runner/remote/run_remote.go: exit status 1".into()
                        } else {
                            "error during ./hack/ginkgo-e2e.sh: exit status 1".into()
                        },
                        body: String::new(),
                        cause: ci,
                    }
                }
                _ => Outcome::Pass,
            };
            cases.push(Case {
                classname: if job.suite == SuiteKind::Kops { "kubetest2".into() } else { "e2e.go".into() },
                name: Some(st.to_string()),
                time_ms: ms,
                outcome,
                lifecycle: None,
            });
            if st == "test setup" && r.chance(0.01) {
                cases.push(Case {
                    classname: "e2e.go".into(),
                    name: None,
                    time_ms: 5,
                    outcome: Outcome::Pass,
                    lifecycle: None,
                });
            }
        }
        if timeout_error {
            cases.push(Case {
                classname: "e2e.go".into(),
                name: Some("Timeout".into()),
                time_ms: 7_200_000,
                outcome: Outcome::Error { message: "Process did not finish before 2h0m0s timeout".into() },
                lifecycle: None,
            });
        }
        files.push(JunitFile {
            rel: "artifacts/junit_runner.xml".into(),
            style: Style::Kubetest,
            root: Root::Suite(Suite { name: None, cases, ..Default::default() }),
            truncate_permille: None,
        });
    }
    if timeout_error {
        return files; // the test process was killed: no test report
    }
    // Set-up failures that write no test report.
    match setup_effect {
        Some(JunitEffect::None) => return files,
        Some(JunitEffect::Harness(_)) if has_runner => return files,
        Some(JunitEffect::Harness(_)) if !matches!(job.suite, SuiteKind::Ginkgo | SuiteKind::Capi) => return files,
        _ => {}
    }
    let go = matches!(job.suite, SuiteKind::GoUnit | SuiteKind::GoIntegration | SuiteKind::Minikube);
    let mut cases: Vec<Case> = Vec::new();
    let before_suite_fail = match (setup_effect, harness_fail) {
        (Some(JunitEffect::Harness(_)), Some((_, ci, msg))) => Some((*ci, msg.clone())),
        _ => None,
    };
    let only_named = matches!(setup_effect, Some(JunitEffect::Named(_)));
    // Harness flakes of suites without a runner file (CAPV's "Preparation").
    if !has_runner {
        if let Some((h, ci, msg)) = harness_fail {
            if setup.is_none() {
                cases.push(case(
                    &tests.first().map(|t| t.classname.clone()).unwrap_or_default(),
                    h,
                    1000 + r.below(90_000),
                    Outcome::Fail { message: msg.clone(), body: String::new(), cause: *ci },
                ));
            }
        }
    }
    for (ti, t) in tests.iter().enumerate() {
        let ms = if t.skipped { 0 } else { 10 + r.below(if go { 5_000 } else { 200_000 }) };
        if let Some((ci, msg)) = &before_suite_fail {
            let outcome = if t.name == "[SynchronizedBeforeSuite]" {
                Outcome::Fail { message: msg.clone(), body: String::new(), cause: *ci }
            } else {
                Outcome::Skipped
            };
            cases.push(case(&t.classname, &t.name, ms, outcome));
            continue;
        }
        if only_named && !fails.contains_key(&ti) {
            if !go {
                cases.push(case(&t.classname, &t.name, 0, Outcome::Skipped));
            }
            continue;
        }
        if t.skipped {
            cases.push(case(&t.classname, &t.name, 0, Outcome::Skipped));
            continue;
        }
        match fails.get(&ti) {
            None => cases.push(case(&t.classname, &t.name, ms, Outcome::Pass)),
            Some(list) => {
                for (ci, msg, body) in list {
                    cases.push(case(
                        &t.classname,
                        &t.name,
                        ms,
                        Outcome::Fail { message: msg.clone(), body: body.clone(), cause: *ci },
                    ));
                    if causes[*ci].retried_ok {
                        cases.push(case(&t.classname, &t.name, ms / 2 + 1, Outcome::Pass));
                    } else if causes[*ci].flaky.is_some() && job.flaky[causes[*ci].flaky.unwrap_or(0)].retried {
                        // Retried and failed again.
                        cases.push(case(
                            &t.classname,
                            &t.name,
                            ms / 2 + 1,
                            Outcome::Fail { message: msg.clone(), body: body.clone(), cause: *ci },
                        ));
                    }
                }
            }
        }
    }
    let truncate = if r.chance(0.012) { Some(550 + r.below(300) as u32) } else { None };
    if go {
        // One suite per package, in order of first appearance.
        let mut order: Vec<String> = Vec::new();
        let mut by: BTreeMap<String, Vec<Case>> = BTreeMap::new();
        for c in cases {
            if !by.contains_key(&c.classname) {
                order.push(c.classname.clone());
            }
            by.entry(c.classname.clone()).or_default().push(c);
        }
        let suites: Vec<Suite> = order
            .into_iter()
            .map(|pkg| Suite {
                name: Some(pkg.clone()),
                cases: by.remove(&pkg).unwrap_or_default(),
                nested: vec![],
                properties: vec![("go.version".into(), "go1.25.4 linux/amd64".into())],
                timestamp: time::rfc3339(start).trim_end_matches('Z').to_string(),
            })
            .collect();
        files.push(JunitFile {
            rel: format!("artifacts/junit_{}.xml", time::compact(end)),
            style: Style::GoJunit,
            root: Root::Suites(suites),
            truncate_permille: truncate,
        });
    } else {
        let label = suite_label(job);
        let failed = cases.iter().any(|c| matches!(c.outcome, Outcome::Fail { .. }));
        let suite = Suite {
            name: Some(label),
            cases,
            nested: vec![],
            properties: vec![
                ("SuiteSucceeded".into(), (!failed).to_string()),
                ("SuiteHasProgrammaticFocus".into(), "false".into()),
                ("SpecialSuiteFailureReason".into(), String::new()),
                ("SuiteLabels".into(), "[]".into()),
                ("RandomSeed".into(), (start % 1_000_000_007).to_string()),
                ("RandomizeAllSpecs".into(), "true".into()),
            ],
            timestamp: time::rfc3339(start).trim_end_matches('Z').to_string(),
        };
        let rel = match job.suite {
            SuiteKind::Capi => "artifacts/junit.e2e_suite.1.xml".to_string(),
            _ if node => "artifacts/n1-standard-2-ubuntu-2404-noble-v20261110/junit_01.xml".to_string(),
            _ => "artifacts/junit_01.xml".to_string(),
        };
        files.push(JunitFile {
            rel,
            style: Style::Ginkgo,
            root: Root::Suites(vec![suite]),
            truncate_permille: truncate,
        });
    }
    files
}

fn write_history(sink: &mut Sink, job: &JobSpec, prefix: &str, recs: &[&Rec]) -> Result<(), SynthError> {
    let base = format!("prow/job-history/gs/{}/{}", job.bucket, prefix);
    let pages: Vec<&[&Rec]> = recs.chunks(20).collect();
    if pages.is_empty() {
        sink.write(
            &format!("{base}/index.html"),
            &prow::history_page(&format!("{}/{}", job.bucket, prefix), &[], None, None, 0),
        )?;
        return Ok(());
    }
    for (pi, page) in pages.iter().enumerate() {
        let entries: Vec<HistoryEntry> = page
            .iter()
            .map(|r| HistoryEntry {
                spyglass_link: format!("/view/gs/{}/{}", job.bucket, r.gcs_dir.clone().unwrap_or_default()),
                id: r.id.to_string(),
                started: time::rfc3339(r.start),
                duration: r.end.map(|e| (e - r.start) * 1_000_000_000).unwrap_or(0),
                result: r.state.result().unwrap_or("Pending").to_string(),
                refs: r.refs.clone(),
            })
            .collect();
        let older = pages.get(pi + 1).and_then(|p| p.first()).map(|r| format!("?buildId={}", r.id));
        let newer = if pi == 0 {
            None
        } else if pi == 1 {
            Some("?buildId=".to_string())
        } else {
            pages.get(pi - 1).and_then(|p| p.first()).map(|r| format!("?buildId={}", r.id))
        };
        let html = prow::history_page(
            &format!("{}/{}", job.bucket, prefix),
            &entries,
            older.as_deref(),
            newer.as_deref(),
            recs.len(),
        );
        let name = if pi == 0 { "index.html".to_string() } else { format!("buildId={}.html", page[0].id) };
        sink.write(&format!("{base}/{name}"), &html)?;
    }
    Ok(())
}
