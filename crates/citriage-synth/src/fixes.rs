//! Planted fixes (with `fix_stories`): three failure patterns in jobs of their own,
//! an issue filed about each, and a pull request that claims to fix it:
//!
//! - `works`: the pull request removes the pattern; after it merged, builds that test
//!   a commit containing it (every periodic build started after the merge: they check
//!   out the branch's head) run clean;
//! - `does-not-work`: the pattern goes on after the merge at the same rate;
//! - `one-branch`: the pattern strikes a master job and a release-1.35 job; the fix
//!   merges into master only, so the release job goes on failing.
//!
//! The issues and pull requests are written as GitHub answers
//! (`github/api/repos/<org>/<repo>/{issues,pulls}/<n>`) with their opening, merge and
//! closing times and merge commits (a merge of the branch's own history, so the
//! builds' tested commits contain it from the moment it merged); a server can answer
//! with the state as of any instant. The truth (`fixes` in `truth.json`) says on which
//! day each pattern's record must reach each state, computed from the generated builds
//! with the documented confirmation rule (per-job failure rate `f / (r + 1)` over the 14
//! days before the merge; confirmed at the first clean run after which the chance of
//! that many clean runs, were the fix useless, is under 5%).

use crate::catalog::{Class, JunitEffect, Pattern, Stage, SuiteKind};
use crate::jobs::{Broken, JobKind, JobSpec, Scenario};
use crate::out::{Sink, SynthError};
use crate::prow::State;
use crate::repos::{merges_on, repo_info, BranchCursor};
use citriage_model::time::{self, DAY, HOUR, MINUTE};
use citriage_model::Day;
use serde::Serialize;
use std::collections::BTreeMap;

/// The repository the planted fixes land in.
const REPO: &str = "kubernetes/kubernetes";

static ROLLOVER: Pattern = Pattern {
    id: "fix-story/deployment-rollover",
    title: "Deployment rollover never reaches the new revision",
    class: Class::Product,
    signature: "never reached revision 2",
    stage: Stage::Tests,
    errors: &["{E} deployment.go:{line}] deployment \"test-rollover-deployment\" in {ns} never reached revision 2: timed out waiting for the condition"],
    context: &["{I} deployment.go:{line2}] Waiting for deployment \"test-rollover-deployment\" to complete"],
    junit: JunitEffect::Named("[sig-apps] Deployment deployment should support rollover [Conformance]"),
    affects: "",
    message: "deployment \"test-rollover-deployment\" in {ns} never reached revision 2: timed out waiting for the condition",
    modelled_on: "a planted fix that works",
};

static BACKOFF: Pattern = Pattern {
    id: "fix-story/container-backoff",
    title: "Container restart back-off exceeds its cap",
    class: Class::Product,
    signature: "back-off exceeded MaxContainerBackOff",
    stage: Stage::Tests,
    errors: &["{E} pods.go:{line}] pod {pod}: back-off exceeded MaxContainerBackOff (300s) between restarts"],
    context: &["{I} pods.go:{line2}] Restart count of pod {pod} is now 7"],
    junit: JunitEffect::Named("[sig-node] Pods should cap back-off at MaxContainerBackOff [Slow]"),
    affects: "",
    message: "pod {pod}: back-off exceeded MaxContainerBackOff (300s) between restarts",
    modelled_on: "a planted fix that does not work",
};

static PROTOCOLS: Pattern = Pattern {
    id: "fix-story/service-protocols",
    title: "Service endpoints missing for one of two protocols on the same port",
    class: Class::Product,
    signature: "no endpoints for protocol UDP on port 80",
    stage: Stage::Tests,
    errors: &[
        "{E} service.go:{line}] service {ns}/multiprotocol-test: no endpoints for protocol UDP on port 80 after 2m0s",
    ],
    context: &["{I} service.go:{line2}] endpoints for TCP on port 80 are ready"],
    junit: JunitEffect::Named(
        "[sig-network] Services should serve endpoints on same port and different protocols [Conformance]",
    ),
    affects: "",
    message: "service {ns}/multiprotocol-test: no endpoints for protocol UDP on port 80 after 2m0s",
    modelled_on: "a planted fix of one branch only",
};

/// Which story.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Works,
    DoesNotWork,
    OneBranch,
}

/// A planted job: name, branch, period, failure rate before the fix, and whether the
/// fix reaches it.
struct PlantedJob {
    name: &'static str,
    branch: &'static str,
    every: i64,
    rate: f64,
    fixed: bool,
}

struct Spec {
    kind: Kind,
    pattern: &'static Pattern,
    jobs: &'static [PlantedJob],
    /// Days before the world's last day: issue opened, pull request opened, merged.
    issue: i64,
    pr: i64,
    merge: i64,
    pr_title: &'static str,
}

const SPECS: &[Spec] = &[
    Spec {
        kind: Kind::Works,
        pattern: &ROLLOVER,
        jobs: &[
            PlantedJob {
                name: "ci-kubernetes-e2e-gci-gce-apps",
                branch: "master",
                every: 6 * HOUR,
                rate: 0.3,
                fixed: true,
            },
            PlantedJob {
                name: "ci-kubernetes-e2e-kind-apps",
                branch: "master",
                every: 12 * HOUR,
                rate: 0.15,
                fixed: true,
            },
        ],
        issue: 20,
        pr: 16,
        merge: 12,
        pr_title: "Fix deployment rollover stuck on revision 2",
    },
    Spec {
        kind: Kind::DoesNotWork,
        pattern: &BACKOFF,
        jobs: &[PlantedJob {
            name: "ci-kubernetes-node-e2e-containerd-backoff",
            branch: "master",
            every: 3 * HOUR,
            rate: 0.4,
            fixed: false,
        }],
        issue: 19,
        pr: 15,
        merge: 10,
        pr_title: "kubelet: cap container restart back-off at MaxContainerBackOff",
    },
    Spec {
        kind: Kind::OneBranch,
        pattern: &PROTOCOLS,
        jobs: &[
            PlantedJob {
                name: "ci-kubernetes-e2e-gce-network-services",
                branch: "master",
                every: 4 * HOUR,
                rate: 0.5,
                fixed: true,
            },
            PlantedJob {
                name: "ci-kubernetes-e2e-gce-network-services-1-35",
                branch: "release-1.35",
                every: 4 * HOUR,
                rate: 0.5,
                fixed: false,
            },
        ],
        issue: 18,
        pr: 14,
        merge: 9,
        pr_title: "kube-proxy: program UDP endpoints of multi-protocol services",
    },
];

/// The fewest days of history the stories need (14 days before the earliest merge).
pub const MIN_DAYS: u32 = 30;

/// A planted story, ready to generate.
pub struct Story {
    spec: &'static Spec,
    pub jobs: Vec<JobSpec>,
    issue: (u32, i64),
    pr: (u32, i64),
    merged_at: i64,
    merge_commit: String,
}

/// A number GitHub never gives the generated pull requests of `day` (their numbers
/// run `base + (day - start) * window + i` with `i < window - 1`).
fn free_number(day: i64, start_day: i64) -> u32 {
    let info = repo_info(REPO);
    let window = info.prs_per_day * 2 + 2;
    info.pr_base + ((day - start_day).max(0) as u32) * window + window - 1
}

/// The first merge into master at or after noon of `day` (the next days if none):
/// the fix's merge time and merge commit, from the branch's own history.
fn merge_point(seed: u64, day: i64) -> (i64, String) {
    for d in day..day + 30 {
        let noon = d * DAY + 12 * HOUR;
        if let Some(&t) = merges_on(seed, REPO, "master", d).iter().find(|&&t| t >= noon) {
            let (sha, at) = BranchCursor::new(seed, REPO, "master").head_at(t);
            return (at, sha);
        }
    }
    let t = day * DAY + 12 * HOUR;
    (t, BranchCursor::new(seed, REPO, "master").head_at(t).0)
}

/// Plans the stories of a world (their jobs named apart from `taken`).
pub fn plan(seed: u64, start_day: i64, end_day: i64, taken: &[JobSpec]) -> Vec<Story> {
    let world_start = start_day * DAY;
    let world_end = (end_day + 1) * DAY - 1;
    SPECS
        .iter()
        .map(|spec| {
            let (merged_at, merge_commit) = merge_point(seed, end_day - spec.merge);
            let jobs = spec
                .jobs
                .iter()
                .map(|j| {
                    let mut name = j.name.to_string();
                    while taken.iter().any(|t| t.name == name) {
                        name.push_str("-planted");
                    }
                    job(j, name, spec.pattern, world_start, world_end, merged_at)
                })
                .collect();
            let issue_day = end_day - spec.issue;
            let pr_day = end_day - spec.pr;
            Story {
                spec,
                jobs,
                issue: (free_number(issue_day, start_day), issue_day * DAY + 9 * HOUR + spec.issue * MINUTE),
                pr: (free_number(pr_day, start_day), pr_day * DAY + 10 * HOUR + spec.pr * MINUTE),
                merged_at,
                merge_commit,
            }
        })
        .collect()
}

fn job(j: &PlantedJob, name: String, p: &'static Pattern, start: i64, end: i64, merged_at: i64) -> JobSpec {
    JobSpec {
        kind: JobKind::Periodic,
        suite: SuiteKind::Ginkgo,
        repo: REPO.to_string(),
        branch: j.branch.to_string(),
        extra_refs: Vec::new(),
        arch: "amd64",
        bucket: "kubernetes-ci-logs",
        scenario: Scenario::PlantedFix,
        first_ts: start + 17 * MINUTE,
        last_ts: end,
        interval: j.every,
        run_prob: 1.0,
        duration: (30 * MINUTE, 90 * MINUTE),
        broken: vec![Broken {
            from: i64::MIN,
            to: if j.fixed { merged_at } else { i64::MAX },
            pattern: p,
            rate: j.rate,
        }],
        infra: Vec::new(),
        infra_rate: 0.0,
        flaky: Vec::new(),
        tests: 12,
        error_window: None,
        single_pr: None,
        pin: String::new(),
        description: format!(
            "planted fix story: {} at rate {}{}",
            p.id,
            j.rate,
            if j.fixed { ", until the fix merged" } else { ", whatever the fix" }
        ),
        history: None,
        image_bump: None,
        name,
    }
}

/// How a build went for a story's pattern: `Some(true)` failed with it, `Some(false)`
/// clean, `None` not counted (aborted, error, still running).
type Outcome = Option<bool>;

/// The builds of the story jobs: job → (start, outcome), from their truth lines.
#[derive(Default)]
pub struct Runs(BTreeMap<String, Vec<(i64, Outcome)>>);

impl Runs {
    /// Keeps the builds of `job` if it is a story job: every build's start and state,
    /// and from the truth lines (written for every build but clean passes) which
    /// builds failed with the story's pattern.
    pub fn collect(&mut self, stories: &[Story], job: &str, all: &[(i64, State)], truth_lines: &[u8]) {
        let Some(story) = stories.iter().find(|s| s.jobs.iter().any(|j| j.name == job)) else { return };
        let id = story.spec.pattern.id;
        let mut hits = std::collections::BTreeSet::new();
        for line in truth_lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
            if v["causes"].as_array().is_some_and(|c| c.iter().any(|c| c["pattern"] == id)) {
                hits.extend(v["started"].as_i64());
            }
        }
        let runs = self.0.entry(job.to_string()).or_default();
        for &(started, state) in all {
            let outcome = match state {
                State::Success | State::Failure => Some(hits.contains(&started)),
                State::Aborted | State::Error | State::Pending => None,
            };
            runs.push((started, outcome));
        }
        runs.sort_by_key(|r| r.0);
    }
}

/// A story as `truth.json` tells it.
#[derive(Serialize)]
pub struct StoryTruth {
    pub story: Kind,
    pub pattern: &'static str,
    pub test: &'static str,
    pub signature: &'static str,
    pub jobs: Vec<StoryJob>,
    pub issue: GhTruth,
    pub pull_request: GhTruth,
    pub merged_at: String,
    pub merge_commit: String,
    pub base: &'static str,
    /// The states the pattern's record must reach, with the day (and the instant of the
    /// evidence that moves it, when it is a build).
    pub expected: Vec<Expected>,
}

#[derive(Serialize)]
pub struct StoryJob {
    pub name: String,
    pub branch: String,
    pub every_hours: f64,
    pub rate_before: f64,
    pub fixed: bool,
}

#[derive(Serialize)]
pub struct GhTruth {
    pub reference: String,
    pub opened: String,
}

#[derive(Serialize)]
pub struct Expected {
    pub state: &'static str,
    pub day: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

fn expected(state: &'static str, t: i64, exact: bool) -> Expected {
    Expected { state, day: Day(t.div_euclid(DAY)).to_string(), at: exact.then(|| time::rfc3339(t)) }
}

/// The run after the merge whose clean outcome brings the chance of luck under 5%.
fn confirming_run(runs: &BTreeMap<&str, &Vec<(i64, Outcome)>>, merged_at: i64) -> Option<i64> {
    let mut log_chance = 0.0f64;
    let mut after: Vec<(i64, &str, Outcome)> = Vec::new();
    let mut rates = BTreeMap::new();
    for (job, rs) in runs {
        let before: Vec<bool> =
            rs.iter().filter(|r| r.0 < merged_at && r.0 >= merged_at - 14 * DAY).filter_map(|r| r.1).collect();
        let fails = before.iter().filter(|f| **f).count() as f64;
        rates.insert(*job, fails / (before.len() as f64 + 1.0));
        after.extend(rs.iter().filter(|r| r.0 >= merged_at).map(|r| (r.0, *job, r.1)));
    }
    after.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (t, job, o) in after {
        match o {
            Some(true) => return None,
            Some(false) if rates[job] > 0.0 => {
                log_chance += (1.0 - rates[job]).ln();
                if log_chance < 0.05f64.ln() {
                    return Some(t);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first failure of the pattern after the merge.
fn failure_after(runs: &BTreeMap<&str, &Vec<(i64, Outcome)>>, merged_at: i64) -> Option<i64> {
    runs.values().flat_map(|rs| rs.iter()).filter(|r| r.0 >= merged_at && r.1 == Some(true)).map(|r| r.0).min()
}

/// Writes the stories' issues and pull requests and returns their truth.
pub fn finish(stories: &[Story], runs: &Runs, sink: &mut Sink) -> Result<Vec<StoryTruth>, SynthError> {
    let mut out = Vec::new();
    for s in stories {
        let jobs: BTreeMap<&str, &Vec<(i64, Outcome)>> =
            s.jobs.iter().filter_map(|j| runs.0.get(&j.name).map(|r| (j.name.as_str(), r))).collect();
        let mut exp = vec![expected("triaged", s.issue.1, false), expected("fix-merged", s.merged_at, false)];
        let last = match s.spec.kind {
            Kind::Works => confirming_run(&jobs, s.merged_at).map(|t| ("fix-confirmed", t)),
            Kind::DoesNotWork | Kind::OneBranch => failure_after(&jobs, s.merged_at).map(|t| ("failed-after-fix", t)),
        };
        if let Some((state, t)) = last {
            exp.push(expected(state, t, true));
        }
        write_github(s, sink)?;
        out.push(StoryTruth {
            story: s.spec.kind,
            pattern: s.spec.pattern.id,
            test: match s.spec.pattern.junit {
                JunitEffect::Named(n) => n,
                _ => "",
            },
            signature: s.spec.pattern.signature,
            jobs: s
                .spec
                .jobs
                .iter()
                .zip(&s.jobs)
                .map(|(p, j)| StoryJob {
                    name: j.name.clone(),
                    branch: p.branch.into(),
                    every_hours: p.every as f64 / HOUR as f64,
                    rate_before: p.rate,
                    fixed: p.fixed,
                })
                .collect(),
            issue: GhTruth { reference: format!("{REPO}#{}", s.issue.0), opened: time::rfc3339(s.issue.1) },
            pull_request: GhTruth { reference: format!("{REPO}#{}", s.pr.0), opened: time::rfc3339(s.pr.1) },
            merged_at: time::rfc3339(s.merged_at),
            merge_commit: s.merge_commit.clone(),
            base: "master",
            expected: exp,
        });
    }
    Ok(out)
}

fn write_json(sink: &mut Sink, path: &str, v: &serde_json::Value) -> Result<(), SynthError> {
    let mut b = serde_json::to_vec_pretty(v).unwrap_or_default();
    b.push(b'\n');
    sink.write(path, &b)
}

/// The issue and the pull request as GitHub's REST API answers them once everything
/// happened (opened, merged, closed); `created_at`, `merged_at` and `closed_at` let a
/// server answer as of an earlier instant.
fn write_github(s: &Story, sink: &mut Sink) -> Result<(), SynthError> {
    let p = s.spec.pattern;
    let test = match p.junit {
        JunitEffect::Named(n) => n,
        _ => p.title,
    };
    let jobs: Vec<&str> = s.jobs.iter().map(|j| j.name.as_str()).collect();
    let (issue, pr) = (s.issue.0, s.pr.0);
    let base = format!("github/api/repos/{REPO}");
    let html = |n: u32, kind: &str| format!("https://github.com/{REPO}/{kind}/{n}");
    let user = serde_json::json!({ "login": "ci-signal-bot" });
    let issue_body = format!(
        "Which jobs are failing: {}\n\nWhich tests are failing: {test}\n\nReason for failure:\n\n```\n{}\n```\n",
        jobs.join(", "),
        p.signature
    );
    let issue_json = serde_json::json!({
        "number": issue, "title": format!("[Failing Test] {test}"), "state": "closed", "state_reason": "completed",
        "body": issue_body, "user": user, "labels": [{"name": "kind/failing-test"}, {"name": "sig/testing"}],
        "html_url": html(issue, "issues"), "created_at": time::rfc3339(s.issue.1),
        "updated_at": time::rfc3339(s.merged_at), "closed_at": time::rfc3339(s.merged_at),
    });
    write_json(sink, &format!("{base}/issues/{issue}"), &issue_json)?;
    let pr_body = format!("Fixes #{issue}\n\nThe test `{test}` fails with `{}`.\n", p.signature);
    let merged = time::rfc3339(s.merged_at);
    let pr_issue = serde_json::json!({
        "number": pr, "title": s.spec.pr_title, "state": "closed", "body": pr_body, "user": user,
        "labels": [{"name": "lgtm"}, {"name": "approved"}], "html_url": html(pr, "pull"),
        "created_at": time::rfc3339(s.pr.1), "updated_at": merged, "closed_at": merged, "draft": false,
        "pull_request": { "url": format!("https://api.github.com/repos/{REPO}/pulls/{pr}"), "merged_at": merged },
    });
    write_json(sink, &format!("{base}/issues/{pr}"), &pr_issue)?;
    let pull = serde_json::json!({
        "number": pr, "title": s.spec.pr_title, "state": "closed", "body": pr_body, "user": user,
        "labels": [{"name": "lgtm"}, {"name": "approved"}], "html_url": html(pr, "pull"),
        "created_at": time::rfc3339(s.pr.1), "updated_at": merged, "closed_at": merged,
        "merged": true, "merged_at": merged, "merge_commit_sha": s.merge_commit, "draft": false,
        "head": { "ref": format!("fix-{}", pr), "sha": crate::rng::fake_sha(u64::from(pr), &[REPO, "head"]) },
        "base": { "ref": "master", "sha": crate::rng::fake_sha(u64::from(pr), &[REPO, "base"]) },
    });
    write_json(sink, &format!("{base}/pulls/{pr}"), &pull)
}
