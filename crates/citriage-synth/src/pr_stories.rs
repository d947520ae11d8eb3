//! Planted pull requests (with `pr_stories`): three presubmit jobs (e2e, unit, and an
//! alpha-features e2e lane that runs on some pushes only) and a base-branch periodic of
//! their own in kubernetes/kubernetes, run over the world's last 14 days by background
//! pull requests (pushes, `/retest` after a failure), with
//!
//! - two planted flaky tests (e2e and unit) that fail now and then anywhere;
//! - an ongoing base-branch pattern: one alpha-lane test failing on every run of the
//!   lane (periodic and presubmit) since 12 days before the world's end;
//! - an infrastructure event: three hours two days before the end in which every e2e
//!   run's setup step (`Up`) fails on an image pull;
//!
//! and planted pull requests whose latest runs fail for one known reason: the PR breaks
//! a test (new with this PR; a changed file named by the stack, a changed test file
//! holding the failing test, a build that no longer compiles naming a changed file, or
//! an e2e test its change breaks without naming it), or it is hit only by the planted
//! flaky tests, only by the base-branch pattern, or only by the infrastructure event.
//!
//! Written beside the world: the runs (`pr-logs/pull/N/JOB/ID`, `logs/JOB/ID`, the
//! `pr-logs/directory` pointers), the PRs' GitHub answers
//! (`github/api/repos/kubernetes/kubernetes/pulls/N`, and their changed files at
//! `github/api/repos/kubernetes/kubernetes/pulls-files/N`, which a server answers for
//! `/pulls/N/files`), and the truth, `truth/prs.json`: each planted PR's class, whether
//! it broke a test, and each failure of its latest runs with the class it must get.

use crate::out::{Sink, SynthError};
use crate::rng::{fake_sha, hash_parts, Rng};
use crate::text::{xml_attr, xml_text};
use citriage_model::time::{self, DAY, HOUR, MINUTE};
use serde::Serialize;
use std::collections::BTreeMap;

const REPO: &str = "kubernetes/kubernetes";
const BUCKET_ROOT: &str = "gcs/kubernetes-ci-logs";
/// The presubmit jobs and the periodic of the stories.
pub const E2E: &str = "pull-kubernetes-e2e-kind-canary";
pub const UNIT: &str = "pull-kubernetes-unit-canary";
pub const ALPHA: &str = "pull-kubernetes-e2e-kind-alpha-canary";
pub const PERIODIC: &str = "ci-kubernetes-e2e-kind-alpha-canary";
/// Planted pull requests per class.
const PER_CLASS: usize = 4;
/// Background pull requests.
const BACKGROUND: usize = 30;

struct TestDef {
    classname: &'static str,
    name: &'static str,
}

const E2E_TESTS: &[TestDef] = &[
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-network] Services should serve a basic endpoint from pods [Conformance]" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-node] Pods should be submitted and removed [Conformance]" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-storage] ConfigMap should be consumable from pods in volume [Conformance]" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-scheduling] SchedulerPredicates validates resource limits of pods that are allowed to run [Conformance]" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-cli] Kubectl client Kubectl apply should apply a new configuration to an existing RC" },
    TestDef { classname: "Kubernetes e2e suite", name: "[sig-auth] ServiceAccounts should mount an API token into pods [Conformance]" },
];

const UNIT_TESTS: &[TestDef] = &[
    TestDef { classname: "k8s.io/kubernetes/pkg/kubelet/status", name: "TestStatusManagerSyncsPodPhase" },
    TestDef { classname: "k8s.io/kubernetes/pkg/controller/endpointslice", name: "TestSyncServiceEndpointSlices" },
    TestDef { classname: "k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources", name: "TestFitScore" },
    TestDef { classname: "k8s.io/kubernetes/pkg/apis/core/validation", name: "TestValidatePodSpecVolumes" },
    TestDef { classname: "k8s.io/kubernetes/pkg/proxy/iptables", name: "TestProxierSyncRules" },
    TestDef {
        classname: "k8s.io/kubernetes/pkg/registry/core/service/ipallocator",
        name: "TestAllocateReleasesOnError",
    },
];

/// The planted flaky tests.
const FLAKY_E2E: TestDef = TestDef {
    classname: "Kubernetes e2e suite",
    name: "[sig-network] Services should be able to switch session affinity for service with type clusterIP",
};
const FLAKY_UNIT: TestDef = TestDef {
    classname: "k8s.io/kubernetes/staging/src/k8s.io/client-go/tools/watch",
    name: "TestRetryWatcherToFinishWithUnreadEvents",
};
const FLAKE_PROB: f64 = 0.2;
/// The base-branch pattern's test.
const BASE_TEST: TestDef = TestDef {
    classname: "Kubernetes e2e suite",
    name: "[sig-apps] StatefulSet Basic StatefulSet functionality should perform rolling updates",
};

/// How a planted PR breaks a test.
#[derive(Clone, Copy)]
struct Breakage {
    job: &'static str,
    /// The test it breaks (`None`: the build no longer compiles).
    test: Option<(&'static str, &'static str)>,
    changed: &'static [&'static str],
    /// The failure text; `{n}` is replaced by a line number.
    text: &'static str,
}

const BREAKAGES: &[Breakage] = &[
    Breakage {
        job: UNIT,
        test: Some(("k8s.io/kubernetes/pkg/kubelet/status", "TestStatusManagerSyncsPodPhase")),
        changed: &["pkg/kubelet/status/status_manager.go", "pkg/kubelet/status/generate.go"],
        text: "--- FAIL: TestStatusManagerSyncsPodPhase (0.02s)\npanic: runtime error: invalid memory address or nil pointer dereference [recovered]\n\tpanic: runtime error: invalid memory address or nil pointer dereference\ngoroutine 41 [running]:\nk8s.io/kubernetes/pkg/kubelet/status.(*manager).syncPod(0xc000a1e000)\n\tk8s.io/kubernetes/pkg/kubelet/status/status_manager.go:{n} +0x1f4\nk8s.io/kubernetes/pkg/kubelet/status.TestStatusManagerSyncsPodPhase(0xc0001b2000)\n\tk8s.io/kubernetes/pkg/kubelet/status/status_manager_test.go:212 +0x2a1",
    },
    Breakage {
        job: UNIT,
        test: Some(("k8s.io/kubernetes/pkg/registry/core/service/ipallocator", "TestAllocateReleasesOnError")),
        changed: &["pkg/registry/core/service/ipallocator/allocator_test.go", "pkg/registry/core/service/ipallocator/bitmap.go"],
        text: "--- FAIL: TestAllocateReleasesOnError (0.00s)\n    allocator_test.go:{n}: expected 10.0.0.1 to be released after the error, still allocated",
    },
    Breakage {
        job: UNIT,
        test: None,
        changed: &["pkg/proxy/iptables/proxier.go"],
        text: "# k8s.io/kubernetes/pkg/proxy/iptables\npkg/proxy/iptables/proxier.go:{n}:9: undefined: ipsetMatchRule\nFAIL\tk8s.io/kubernetes/pkg/proxy/iptables [build failed]",
    },
    Breakage {
        job: E2E,
        test: Some(("Kubernetes e2e suite", "[sig-scheduling] SchedulerPredicates validates resource limits of pods that are allowed to run [Conformance]")),
        changed: &["pkg/scheduler/framework/plugins/noderesources/fit.go"],
        text: "test/e2e/scheduling/predicates.go:{n}\nExpected pod filler-pod-0 to be scheduled on a node with enough cpu, but it is Pending: 0/3 nodes are available: 3 Insufficient cpu.",
    },
];

/// Unrelated diffs of the PRs that break nothing.
const HARMLESS: &[&[&str]] = &[
    &["pkg/apis/apps/validation/validation.go", "pkg/apis/apps/validation/validation_test.go"],
    &["cmd/kubeadm/app/phases/certs/certs.go"],
    &["staging/src/k8s.io/apiserver/pkg/server/config.go"],
    &["docs/proposals/dra-device-taints.md"],
];

/// The classes the truth names (those of `citriage_analysis::pr_risk::Class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Story {
    BreaksTest,
    FlakyOnly,
    BasePattern,
    Infrastructure,
}

#[derive(Clone, Debug, Serialize)]
pub struct FailureTruth {
    pub job: String,
    /// The test, or `build` for a failed build step.
    pub test: String,
    /// `new-with-pr`, `known-flake`, `failing-elsewhere`, `infrastructure`.
    pub class: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct PrTruth {
    pub pr: String,
    pub number: u64,
    pub story: Story,
    pub broke_test: bool,
    pub changed_files: Vec<String>,
    /// Every failure of the PR's latest runs, with the class it must get.
    pub failures: Vec<FailureTruth>,
}

#[derive(Serialize)]
struct TruthFile<'a> {
    repo: &'static str,
    jobs: [&'static str; 4],
    window_days: i64,
    flaky_tests: [&'static str; 2],
    base_pattern_test: &'static str,
    base_pattern_since: String,
    infrastructure_event: (String, String),
    prs: &'a [PrTruth],
}

/// What one run fails with.
#[derive(Clone, Default)]
struct Outcome {
    /// (classname, name, text) of failed tests.
    failed: Vec<(String, String, String)>,
    /// The setup step failed (nothing else ran).
    setup: Option<String>,
    /// The build failed before its tests (log lines).
    build: Option<String>,
}

impl Outcome {
    fn passed(&self) -> bool {
        self.failed.is_empty() && self.setup.is_none() && self.build.is_none()
    }
}

/// One run to write.
struct RunSpec {
    job: &'static str,
    /// The PR and the head the run tested.
    pr: Option<(u64, String)>,
    start: i64,
    outcome: Outcome,
}

struct World {
    seed: u64,
    end: i64,
    onset: i64,
    infra: (i64, i64),
    last_id: BTreeMap<String, u64>,
}

impl World {
    fn in_infra(&self, t: i64) -> bool {
        t >= self.infra.0 && t < self.infra.1
    }

    /// What a run of `job` at `t` fails with, from the world's events and chance.
    fn background(&self, job: &str, t: i64, r: &mut Rng) -> Outcome {
        let mut o = Outcome::default();
        if job != UNIT && self.in_infra(t) {
            o.setup = Some(infra_text(r));
            return o;
        }
        if (job == ALPHA || job == PERIODIC) && t >= self.onset {
            o.failed.push((BASE_TEST.classname.into(), BASE_TEST.name.into(), base_text(r)));
        }
        let flaky = match job {
            UNIT => Some(&FLAKY_UNIT),
            ALPHA => None,
            _ => Some(&FLAKY_E2E),
        };
        if let Some(f) = flaky {
            if r.chance(FLAKE_PROB) {
                o.failed.push((f.classname.into(), f.name.into(), flake_text(job, r)));
            }
        }
        o
    }

    fn build_id(&mut self, job: &str, t: i64) -> u64 {
        let mut id = crate::prow::build_id(t, hash_parts(self.seed, &["pr-stories", job, &t.to_string()]));
        let last = self.last_id.entry(job.to_string()).or_insert(0);
        if id <= *last {
            id = *last + 1;
        }
        *last = id;
        id
    }
}

fn infra_text(r: &mut Rng) -> String {
    format!(
        "error creating the kind cluster: node kind-control-plane: ImagePullBackOff: Back-off pulling image \"registry.k8s.io/kindest/node:v1.35.{}\"",
        r.below(4)
    )
}

fn base_text(r: &mut Rng) -> String {
    format!(
        "test/e2e/apps/statefulset.go:{}\nstatefulset ss2 in namespace statefulset-{}: pod ss2-1 not ready after 5m0s: timed out waiting for the condition (rolling update to revision ss2-7b9c)",
        380 + r.below(3),
        r.range(1000, 9999)
    )
}

fn flake_text(job: &str, r: &mut Rng) -> String {
    if job == UNIT {
        format!("    retrywatcher_test.go:{}: timed out waiting for 3 events, got {}", 590 + r.below(2), r.below(3))
    } else {
        format!(
            "test/e2e/network/service.go:{}\naffinity did not hold: {} of 15 requests reached another endpoint",
            4120 + r.below(2),
            1 + r.below(4)
        )
    }
}

/// Plants the stories into `sink` for a world ending at `world_end`; returns the truth.
pub fn generate(seed: u64, world_end: i64, sink: &mut Sink) -> Result<Vec<PrTruth>, SynthError> {
    let mut w = World {
        seed,
        end: world_end,
        onset: world_end - 12 * DAY,
        infra: (world_end - 2 * DAY + 6 * HOUR, world_end - 2 * DAY + 9 * HOUR),
        last_id: BTreeMap::new(),
    };
    let from = world_end - 14 * DAY + HOUR;
    let mut runs: Vec<RunSpec> = Vec::new();
    let mut r = Rng::for_key(seed, &["pr-stories"]);
    let want = BACKGROUND + 4 * PER_CLASS;
    let mut numbers: Vec<u64> =
        (0..want).map(|i| 390_000 + hash_parts(seed, &["pr-stories-number", &i.to_string()]) % 9_000).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut next = 399_100u64;
    while numbers.len() < want {
        numbers.push(next);
        next += 1;
    }
    // The periodic: every three hours.
    let mut t = from;
    while t < world_end - HOUR {
        let o = w.background(PERIODIC, t, &mut r);
        runs.push(RunSpec { job: PERIODIC, pr: None, start: t, outcome: o });
        t += 3 * HOUR;
    }
    // Background pull requests: one or two pushes, each tested by both jobs, a
    // /retest after a failure on the same head.
    for (i, n) in numbers.iter().take(BACKGROUND).enumerate() {
        let mut pr = Rng::for_key(seed, &["pr-stories-bg", &i.to_string()]);
        let opened = from + pr.below((12 * DAY) as u64) as i64;
        let pushes = 1 + pr.below(2);
        for k in 0..pushes {
            let at = opened + k as i64 * (6 * HOUR + pr.below((18 * HOUR) as u64) as i64);
            if at >= world_end - HOUR {
                break;
            }
            let sha = fake_sha(seed, &["pr-stories-head", &n.to_string(), &k.to_string()]);
            let alpha = pr.chance(0.5);
            for job in [E2E, UNIT, ALPHA] {
                if job == ALPHA && !alpha {
                    continue;
                }
                let mut t = at + 120 + pr.below(600) as i64;
                for _attempt in 0..3 {
                    let o = w.background(job, t, &mut pr);
                    let passed = o.passed();
                    runs.push(RunSpec { job, pr: Some((*n, sha.clone())), start: t, outcome: o });
                    if passed || !pr.chance(0.8) {
                        break;
                    }
                    t += 40 * MINUTE + pr.below(3600) as i64;
                }
            }
        }
    }
    // The planted pull requests.
    let mut truths = Vec::new();
    let stories = [Story::BreaksTest, Story::FlakyOnly, Story::BasePattern, Story::Infrastructure];
    for (si, story) in stories.iter().enumerate() {
        for k in 0..PER_CLASS {
            let n = numbers[BACKGROUND + si * PER_CLASS + k];
            let mut pr = Rng::for_key(seed, &["pr-stories-planted", &n.to_string()]);
            let (runs_of, truth) = plant(&w, *story, k, n, &mut pr);
            runs.extend(runs_of);
            truths.push(truth);
        }
    }
    runs.sort_by(|a, b| {
        (a.start, a.job, a.pr.as_ref().map(|p| p.0)).cmp(&(b.start, b.job, b.pr.as_ref().map(|p| p.0)))
    });
    for run in &runs {
        write_run(&mut w, run, sink)?;
    }
    for t in &truths {
        write_github(sink, t, world_end)?;
    }
    let file = TruthFile {
        repo: REPO,
        jobs: [E2E, UNIT, ALPHA, PERIODIC],
        window_days: 14,
        flaky_tests: [FLAKY_E2E.name, FLAKY_UNIT.name],
        base_pattern_test: BASE_TEST.name,
        base_pattern_since: time::rfc3339(w.onset),
        infrastructure_event: (time::rfc3339(w.infra.0), time::rfc3339(w.infra.1)),
        prs: &truths,
    };
    let mut body = serde_json::to_vec_pretty(&file).unwrap_or_default();
    body.push(b'\n');
    sink.write("truth/prs.json", &body)?;
    Ok(truths)
}

/// A planted PR's runs: an earlier push whose runs pass, then the latest push whose
/// runs fail for the story's reason.
fn plant(w: &World, story: Story, k: usize, n: u64, r: &mut Rng) -> (Vec<RunSpec>, PrTruth) {
    let latest = match story {
        Story::Infrastructure => w.infra.0 + 20 * MINUTE + (k as i64) * 30 * MINUTE,
        _ => w.end - 30 * HOUR + (k as i64) * 2 * HOUR + r.below(1800) as i64,
    };
    let earlier = latest - 20 * HOUR;
    let head = |k: &str| fake_sha(w.seed, &["pr-stories-head", &n.to_string(), k]);
    let mut runs = Vec::new();
    let mut failures = Vec::new();
    let mut changed: Vec<String> = HARMLESS[k % HARMLESS.len()].iter().map(|s| s.to_string()).collect();
    for job in [E2E, UNIT] {
        runs.push(RunSpec { job, pr: Some((n, head("0"))), start: earlier + 300, outcome: Outcome::default() });
    }
    let mut e2e = Outcome::default();
    let mut unit = Outcome::default();
    match story {
        Story::BreaksTest => {
            let b = BREAKAGES[k % BREAKAGES.len()];
            changed = b.changed.iter().map(|s| s.to_string()).collect();
            let text = b.text.replace("{n}", &(200 + r.below(400)).to_string());
            let target = if b.job == UNIT { &mut unit } else { &mut e2e };
            match b.test {
                Some((c, name)) => {
                    target.failed.push((c.into(), name.into(), text));
                    failures.push(FailureTruth { job: b.job.into(), test: name.into(), class: "new-with-pr" });
                }
                None => {
                    target.build = Some(text);
                    failures.push(FailureTruth { job: b.job.into(), test: "build".into(), class: "new-with-pr" });
                }
            }
            // Half of them are also hit by a planted flake in the other job.
            if k.is_multiple_of(2) {
                let (o, job, t) =
                    if b.job == UNIT { (&mut e2e, E2E, &FLAKY_E2E) } else { (&mut unit, UNIT, &FLAKY_UNIT) };
                o.failed.push((t.classname.into(), t.name.into(), flake_text(job, r)));
                failures.push(FailureTruth { job: job.into(), test: t.name.into(), class: "known-flake" });
            }
        }
        Story::FlakyOnly => {
            if k != 1 {
                e2e.failed.push((FLAKY_E2E.classname.into(), FLAKY_E2E.name.into(), flake_text(E2E, r)));
                failures.push(FailureTruth { job: E2E.into(), test: FLAKY_E2E.name.into(), class: "known-flake" });
            }
            if k != 0 {
                unit.failed.push((FLAKY_UNIT.classname.into(), FLAKY_UNIT.name.into(), flake_text(UNIT, r)));
                failures.push(FailureTruth { job: UNIT.into(), test: FLAKY_UNIT.name.into(), class: "known-flake" });
            }
        }
        Story::BasePattern => {}
        Story::Infrastructure => {
            e2e.setup = Some(infra_text(r));
            failures.push(FailureTruth { job: E2E.into(), test: "Up".into(), class: "infrastructure" });
        }
    }
    runs.push(RunSpec { job: E2E, pr: Some((n, head("1"))), start: latest, outcome: e2e });
    runs.push(RunSpec { job: UNIT, pr: Some((n, head("1"))), start: latest + 90, outcome: unit });
    if story == Story::BasePattern {
        // The alpha lane ran on this push: the base-branch pattern fails it.
        let o = Outcome {
            failed: vec![(BASE_TEST.classname.into(), BASE_TEST.name.into(), base_text(r))],
            ..Outcome::default()
        };
        runs.push(RunSpec { job: ALPHA, pr: Some((n, head("1"))), start: latest + 180, outcome: o });
        failures.push(FailureTruth { job: ALPHA.into(), test: BASE_TEST.name.into(), class: "failing-elsewhere" });
    }
    failures.sort_by(|a, b| (&a.job, &a.test).cmp(&(&b.job, &b.test)));
    changed.sort();
    let truth = PrTruth {
        pr: format!("{REPO}#{n}"),
        number: n,
        story,
        broke_test: story == Story::BreaksTest,
        changed_files: changed,
        failures,
    };
    (runs, truth)
}

fn write_run(w: &mut World, run: &RunSpec, sink: &mut Sink) -> Result<(), SynthError> {
    let id = w.build_id(run.job, run.start);
    let base = fake_sha(w.seed, &["pr-stories-base", &(run.start / DAY).to_string()]);
    let (rel, refs, pull) = match &run.pr {
        Some((n, head)) => {
            (format!("pr-logs/pull/{n}/{}/{id}", run.job), format!("master:{base},{n}:{head}"), Some(*n))
        }
        None => (format!("logs/{}/{id}", run.job), format!("master:{base}"), None),
    };
    let dir = format!("{BUCKET_ROOT}/{rel}");
    let o = &run.outcome;
    let duration = 1800 + (hash_parts(w.seed, &["pr-stories-dur", &id.to_string()]) % 1800) as i64;
    let end = run.start + duration;
    let passed = o.passed();
    let mut repos = serde_json::Map::new();
    repos.insert(REPO.into(), refs.into());
    let mut started = serde_json::json!({
        "timestamp": run.start,
        "repos": repos,
        "repo-version": base,
        "repo-commit": base,
    });
    if let Some(n) = pull {
        started["pull"] = n.to_string().into();
    }
    sink.write(&format!("{dir}/started.json"), &pretty(&started))?;
    let finished = serde_json::json!({
        "timestamp": end,
        "passed": passed,
        "result": if passed { "SUCCESS" } else { "FAILURE" },
        "revision": base,
    });
    sink.write(&format!("{dir}/finished.json"), &pretty(&finished))?;
    sink.write(&format!("{dir}/build-log.txt"), build_log(run).as_bytes())?;
    if o.build.is_none() {
        sink.write(&format!("{dir}/artifacts/junit_01.xml"), junit(run).as_bytes())?;
    }
    if pull.is_some() {
        let pointer = format!("gs://kubernetes-ci-logs/{rel}\n");
        sink.write(&format!("{BUCKET_ROOT}/pr-logs/directory/{}/{id}.txt", run.job), pointer.as_bytes())?;
    } else {
        sink.write(&format!("{BUCKET_ROOT}/logs/{}/latest-build.txt", run.job), id.to_string().as_bytes())?;
    }
    Ok(())
}

fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).unwrap_or_default();
    b.push(b'\n');
    b
}

fn build_log(run: &RunSpec) -> String {
    let o = &run.outcome;
    let mut log = String::from("+ ./hack/jenkins/test-dockerized.sh\nRunning tests of kubernetes/kubernetes\n");
    if let Some(t) = &o.setup {
        log.push_str(&format!("ERROR: {t}\nFAIL: setup step Up failed\n"));
    }
    if let Some(t) = &o.build {
        log.push_str(t);
        log.push_str("\nmake: *** [Makefile:191: test] Error 1\n");
    }
    for (_, name, text) in &o.failed {
        log.push_str(&format!("--- FAIL: {name}\n{}\n", text.lines().next().unwrap_or("")));
    }
    log.push_str(if o.passed() { "PASS\n" } else { "FAIL\n" });
    log
}

fn junit(run: &RunSpec) -> String {
    let o = &run.outcome;
    let mut all: Vec<&TestDef> = match run.job {
        UNIT => UNIT_TESTS.iter().chain([&FLAKY_UNIT]).collect(),
        ALPHA => E2E_TESTS.iter().take(3).chain([&BASE_TEST]).collect(),
        PERIODIC => E2E_TESTS.iter().chain([&FLAKY_E2E, &BASE_TEST]).collect(),
        _ => E2E_TESTS.iter().chain([&FLAKY_E2E]).collect(),
    };
    all.sort_by_key(|t| (t.classname, t.name));
    let mut cases: Vec<(String, String, Option<String>)> = Vec::new();
    if run.job != UNIT {
        cases.push(("Kubernetes e2e suite".into(), "Up".into(), o.setup.clone()));
    }
    if o.setup.is_none() {
        for t in all {
            let fail = o.failed.iter().find(|f| f.0 == t.classname && f.1 == t.name).map(|f| f.2.clone());
            cases.push((t.classname.into(), t.name.into(), fail));
        }
    }
    let failures = cases.iter().filter(|c| c.2.is_some()).count();
    let mut x = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n", run.job, cases.len());
    for (classname, name, fail) in &cases {
        x.push_str("<testcase classname=\"");
        xml_attr(classname, &mut x);
        x.push_str("\" name=\"");
        xml_attr(name, &mut x);
        x.push_str("\" time=\"1.5\">");
        if let Some(text) = fail {
            x.push_str("<failure message=\"");
            xml_attr(text.lines().next().unwrap_or(""), &mut x);
            x.push_str("\" type=\"Failure\">");
            xml_text(text, &mut x);
            x.push_str("</failure>");
        }
        x.push_str("</testcase>\n");
    }
    x.push_str("</testsuite>\n</testsuites>\n");
    x
}

/// The PR's GitHub answers: the pull request and its changed files.
fn write_github(sink: &mut Sink, t: &PrTruth, world_end: i64) -> Result<(), SynthError> {
    let head = fake_sha(0, &["pr-stories-gh", &t.number.to_string()]);
    let pull = serde_json::json!({
        "number": t.number,
        "state": "open",
        "title": format!("Planted pull request {} ({:?})", t.number, t.story),
        "html_url": format!("https://github.com/{REPO}/pull/{}", t.number),
        "draft": false,
        "merged": false,
        "merged_at": null,
        "labels": [],
        "user": {"login": "planted-author"},
        "head": {"sha": head, "repo": {"full_name": "planted-author/kubernetes"}},
        "base": {"ref": "master", "repo": {"full_name": REPO}},
        "created_at": time::rfc3339(world_end - 3 * DAY),
        "updated_at": time::rfc3339(world_end - HOUR),
    });
    sink.write(&format!("github/api/repos/{REPO}/pulls/{}", t.number), &pretty(&pull))?;
    let files: Vec<serde_json::Value> = t
        .changed_files
        .iter()
        .map(|f| serde_json::json!({"filename": f, "status": "modified", "additions": 3, "deletions": 1}))
        .collect();
    sink.write(
        &format!("github/api/repos/{REPO}/pulls-files/{}", t.number),
        &pretty(&serde_json::Value::Array(files)),
    )?;
    Ok(())
}
