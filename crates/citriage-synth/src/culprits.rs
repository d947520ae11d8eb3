//! Planted regressions (with `suspect_stories`): a real git history of a tested
//! repository and of a job-configuration repository, written under `git/` as bare
//! repositories (one `git fast-import` each, fixed names and dates: the same seed
//! gives the same commit ids), and periodic jobs that test that history (their
//! `repo-commit` is the repository's head when each build starts), each failing with
//! a pattern of its own from an onset:
//!
//! - `culprit` stories: the commit that introduces the failure adds its message (or
//!   an identifier of it) and touches the file its stack names or the failing test's
//!   own source file; decoys add the same text in vendored, generated and
//!   documentation files, a near miss touches the stack's file without the text, and
//!   bystanders change unrelated files. One story fails in two jobs whose windows
//!   narrow each other.
//!   Another's culprit and a decoy add the same identifier, and only the culprit
//!   touches a path the failing test's SIG owns (`OWNERS` files label the
//!   product folders with their SIG; the decoy's folder is another SIG's).
//! - `flaky` (the pattern failed now and then before its onset), `infrastructure` (a
//!   known signature of an environment cause) and `no-culprit` stories: no commit is
//!   their introducing change, though the flaky and infrastructure windows hold a
//!   tempting commit that adds their text.
//! - an `exposing` story: the tested repository's window holds bystanders only, and
//!   the job-configuration repository changes the job's image and flags
//!   (`config/jobs/**`) between its last pass and its first failure.
//! - an image-bump story (`exposing` too): the tested repository's window holds
//!   bystanders only and the job configuration does not change, but the image the two
//!   jobs run with (their `prowjob.json`) moves between their last pass and their first
//!   failure.
//!
//! The truth (`truth/suspects.json`) names each story's pattern, jobs, onset, culprit
//! and exposing commit (or the image move); nothing of the analysis reads it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use citriage_git::{Git, GitProgram, ImportStream, NewCommit, Signature};
use citriage_model::time::{self, DAY, HOUR, MINUTE};
use serde::Serialize;

use crate::catalog::{Class, JunitEffect, Pattern, Stage, SuiteKind};
use crate::jobs::{Broken, JobKind, JobSpec, Scenario};
use crate::out::{Sink, SynthError};
use crate::rng::{hash_parts, Rng};

/// The tested repository and its branch.
pub const REPO: &str = "kubernetes-sigs/kwok";
const BRANCH: &str = "main";
/// The job-configuration repository and its branch.
pub const CONFIG_REPO: &str = "kubernetes/test-infra";
const CONFIG_BRANCH: &str = "master";
/// The job-configuration file of the planted jobs.
const JOBS_FILE: &str = "config/jobs/kubernetes-sigs/kwok/kwok-periodics.yaml";
const IMAGE: &str = "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261101-5c1e2d3f4a-master";
const NEW_IMAGE: &str = "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261115-9ab8c7d6e5-master";
/// The image the image-bump story's jobs move to.
const BUMPED_IMAGE: &str = "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261127-0d9e8f7a6b-master";

/// What a story plants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Culprit,
    Flaky,
    Infrastructure,
    NoCulprit,
    Exposing,
}

/// A planted commit: its role, path and the lines it adds.
struct Planted {
    role: &'static str,
    subject: &'static str,
    path: &'static str,
    lines: &'static [&'static str],
}

struct Spec {
    id: &'static str,
    kind: Kind,
    pattern: &'static Pattern,
    /// (job name, period).
    jobs: &'static [(&'static str, i64)],
    /// Days before the world's last day the onset falls on.
    onset_days: i64,
    /// Commits in the window, in order; the one whose role is `culprit` is the answer.
    planted: &'static [Planted],
    /// The image the jobs move to just before the onset (an exposing story whose job
    /// configuration does not change).
    bump: Option<&'static str>,
}

macro_rules! story_pattern {
    ($name:ident, $id:expr, $class:expr, $sig:expr, $test:expr, $msg:expr) => {
        static $name: Pattern = Pattern {
            id: $id,
            title: $sig,
            class: $class,
            signature: $sig,
            stage: Stage::Tests,
            errors: &[concat!("{E} ", $msg)],
            context: &[],
            junit: JunitEffect::Named($test),
            affects: "",
            message: $msg,
            modelled_on: "a planted regression (suspect stories)",
        };
    };
}

story_pattern!(
    QUOTA,
    "suspect-story/quota-borrowing",
    Class::Product,
    "cohort borrowing limit exceeded",
    "[sig-scheduling] kwok ClusterQueue keeps admitted workloads within the cohort borrowing limit",
    "quota_reconciler.go:214] workload {ns}/{pod} admitted past its ClusterQueue: cohort borrowing limit exceeded"
);
story_pattern!(
    LEASE,
    "suspect-story/lease-renewal",
    Class::Product,
    "exceeds the renew deadline",
    "TestNodeLeaseRenewal",
    "lease_test.go:88: node lease renewed late: leaseRenewSkew of 40s exceeds the renew deadline of 10s"
);
story_pattern!(
    DNS,
    "suspect-story/sandbox-dns",
    Class::Product,
    "kwok-dns-stub returned SERVFAIL",
    "[sig-network] kwok sandbox DNS resolves the cluster service name",
    "dns_probe.go:57] pod {ns}/{pod} sandbox DNS probe failed: kwok-dns-stub returned SERVFAIL for kubernetes.default.svc"
);
story_pattern!(
    WATCH,
    "suspect-story/watch-compaction",
    Class::Product,
    "required revision has been compacted",
    "[sig-api-machinery] kwok watch cache resumes a watch after compaction",
    "watch_cache.go:311] watch of /registry/pods closed in {ns}: kwok watch cache resync: required revision has been compacted"
);
story_pattern!(
    PULL,
    "suspect-story/registry-mirror",
    Class::Infra,
    "kwok-registry-mirror returned 503",
    "[sig-node] kwok pods start from the registry mirror",
    "registry_mirror.go:92] pod {ns}/{pod} stuck in ImagePullBackOff: kwok-registry-mirror returned 503 for registry.k8s.io/pause:3.10"
);
story_pattern!(
    ASSUMED,
    "suspect-story/assumed-pod-expiry",
    Class::Product,
    "assumed pod expired before binding",
    "[sig-scheduling] kwok scheduler binds assumed pods before their ttl",
    "scheduler_cache.go:140] node kwok-node-{n}: assumed pod {ns}/{pod} expired before binding"
);
story_pattern!(
    FLAG,
    "suspect-story/lease-duration-flag",
    Class::CiConfig,
    "must be at least 10",
    "[sig-node] kwok controller starts with the job's flags",
    "kubelet_stub.go:63] kwok controller rejected --node-lease-duration-seconds=5: must be at least 10"
);

story_pattern!(
    DETACH,
    "suspect-story/volume-detach",
    Class::Product,
    "did not finish within detachGracePeriod",
    "[sig-storage] kwok detaches the volumes of deleted pods",
    "volume detach of {ns}/{pod} did not finish within detachGracePeriod"
);

story_pattern!(
    SHIM,
    "suspect-story/runc-shim-v1",
    Class::CiConfig,
    "unknown runtime io.containerd.runc.v1",
    "[sig-node] kwok cluster starts inside the job's container",
    "runtime_probe.go:77] kwok cluster for {ns}: the job's containerd rejects the shim: unknown runtime io.containerd.runc.v1"
);

const SPECS: &[Spec] = &[
    Spec {
        id: "culprit-adds-message",
        kind: Kind::Culprit,
        pattern: &QUOTA,
        jobs: &[("ci-kwok-e2e-quota", 2 * HOUR)],
        onset_days: 6,
        planted: &[
            Planted {
                role: "near-miss",
                subject: "Log the cohort of each reconciled ClusterQueue",
                path: "pkg/quota/quota_reconciler.go",
                lines: &["\tklog.V(4).InfoS(\"reconciling\", \"clusterQueue\", cq.Name, \"cohort\", cq.Cohort)"],
            },
            Planted {
                role: "culprit",
                subject: "Let workloads borrow from the cohort before preemption",
                path: "pkg/quota/quota_reconciler.go",
                lines: &[
                    "\tif borrowed > limit {",
                    "\t\treturn fmt.Errorf(\"workload %s admitted past its ClusterQueue: cohort borrowing limit exceeded\", key)",
                    "\t}",
                ],
            },
            Planted {
                role: "decoy-vendored",
                subject: "Update vendored kueue quota helpers",
                path: "vendor/sigs.k8s.io/kueue/pkg/quota/quota_reconciler.go",
                lines: &["\treturn errors.New(\"admitted past its ClusterQueue: cohort borrowing limit exceeded\")"],
            },
            Planted {
                role: "decoy-generated",
                subject: "Regenerate deepcopy functions",
                path: "pkg/apis/v1alpha1/zz_generated.deepcopy.go",
                lines: &["// cohort borrowing limit exceeded: ClusterQueue quota deep copy"],
            },
            Planted {
                role: "decoy-docs",
                subject: "Document cohort borrowing limits",
                path: "site/content/en/docs/quota.md",
                lines: &["A workload admitted past its ClusterQueue fails with `cohort borrowing limit exceeded`."],
            },
        ],
        bump: None,
    },
    Spec {
        id: "culprit-touches-test",
        kind: Kind::Culprit,
        pattern: &LEASE,
        jobs: &[("ci-kwok-unit-node-lease", 2 * HOUR)],
        onset_days: 9,
        planted: &[
            Planted {
                role: "culprit",
                subject: "Renew node leases with a skew and tighten the lease test",
                path: "pkg/node/lease.go",
                lines: &["const leaseRenewSkew = 40 * time.Second"],
            },
            Planted {
                role: "decoy-docs",
                subject: "Explain leaseRenewSkew in the node docs",
                path: "site/content/en/docs/node-lease.md",
                lines: &["`leaseRenewSkew` delays each renewal; it must stay below the renew deadline."],
            },
        ],
        bump: None,
    },
    Spec {
        id: "culprit-two-jobs",
        kind: Kind::Culprit,
        pattern: &DNS,
        jobs: &[("ci-kwok-e2e-dns", 2 * HOUR), ("ci-kwok-e2e-dns-ipv6", 3 * HOUR)],
        onset_days: 4,
        planted: &[Planted {
            role: "culprit",
            subject: "Answer sandbox DNS from the stub resolver",
            path: "pkg/dns/dns_probe.go",
            lines: &[
                "\tif rcode == dns.RcodeServerFailure {",
                "\t\treturn fmt.Errorf(\"kwok-dns-stub returned SERVFAIL for %s\", name)",
                "\t}",
            ],
        }],
        bump: None,
    },
    Spec {
        id: "culprit-owned-by-sig",
        kind: Kind::Culprit,
        pattern: &DETACH,
        jobs: &[("ci-kwok-e2e-volume-detach", 2 * HOUR)],
        onset_days: 10,
        planted: &[
            Planted {
                role: "decoy-other-sig",
                subject: "Export the volume detach grace period as a metric",
                path: "pkg/metrics/metrics.go",
                lines: &["\tdetachGrace.Set(volume.detachGracePeriod.Seconds())"],
            },
            Planted {
                role: "culprit",
                subject: "Wait for volume detach with a grace period",
                path: "pkg/volume/detach.go",
                lines: &["const detachGracePeriod = 2 * time.Second"],
            },
        ],
        bump: None,
    },
    Spec {
        id: "flaky-before-onset",
        kind: Kind::Flaky,
        pattern: &WATCH,
        jobs: &[("ci-kwok-e2e-watch", 2 * HOUR)],
        onset_days: 5,
        planted: &[Planted {
            role: "tempting",
            subject: "Resync the watch cache after compaction",
            path: "pkg/cache/watch_cache.go",
            lines: &["\treturn fmt.Errorf(\"kwok watch cache resync: required revision has been compacted\")"],
        }],
        bump: None,
    },
    Spec {
        id: "infrastructure",
        kind: Kind::Infrastructure,
        pattern: &PULL,
        jobs: &[("ci-kwok-e2e-image-pull", 2 * HOUR)],
        onset_days: 7,
        planted: &[Planted {
            role: "tempting",
            subject: "Report registry mirror errors with their status",
            path: "pkg/registry/registry_mirror.go",
            lines: &["\treturn fmt.Errorf(\"kwok-registry-mirror returned %d for %s\", resp.StatusCode, ref)"],
        }],
        bump: None,
    },
    Spec {
        id: "no-culprit",
        kind: Kind::NoCulprit,
        pattern: &ASSUMED,
        jobs: &[("ci-kwok-e2e-scheduler", 2 * HOUR)],
        onset_days: 8,
        planted: &[],
        bump: None,
    },
    Spec {
        id: "exposed-by-job-config",
        kind: Kind::Exposing,
        pattern: &FLAG,
        jobs: &[("ci-kwok-e2e-node-lease-flags", 2 * HOUR)],
        onset_days: 3,
        planted: &[],
        bump: None,
    },
    Spec {
        id: "exposed-by-image-bump",
        kind: Kind::Exposing,
        pattern: &SHIM,
        jobs: &[("ci-kwok-e2e-runtime", 2 * HOUR), ("ci-kwok-e2e-runtime-cgroupv2", 3 * HOUR)],
        onset_days: 2,
        planted: &[],
        bump: Some(BUMPED_IMAGE),
    },
];

/// Files of the tested repository at its first commit: (path, content).
const BASE_FILES: &[(&str, &str)] = &[
    ("pkg/quota/quota_reconciler.go", "package quota\n\nimport \"fmt\"\n\nfunc reconcile(key string, borrowed, limit int) error {\n\t_ = fmt.Sprint(key)\n\treturn nil\n}\n"),
    ("pkg/node/lease.go", "package node\n\nimport \"time\"\n\nconst renewDeadline = 10 * time.Second\n"),
    ("pkg/node/lease_test.go", "package node\n\nimport \"testing\"\n\nfunc TestNodeLeaseRenewal(t *testing.T) {\n\tif renewDeadline <= 0 {\n\t\tt.Fatal(\"no deadline\")\n\t}\n}\n"),
    ("pkg/dns/dns_probe.go", "package dns\n\nfunc probe(name string) error {\n\treturn nil\n}\n"),
    ("pkg/cache/watch_cache.go", "package cache\n\nfunc resync() error {\n\treturn nil\n}\n"),
    ("pkg/registry/registry_mirror.go", "package registry\n\nfunc pull(ref string) error {\n\treturn nil\n}\n"),
    ("pkg/scheduler/scheduler_cache.go", "package scheduler\n\nfunc assume(pod string) error {\n\treturn nil\n}\n"),
    ("pkg/kubelet/kubelet_stub.go", "package kubelet\n\nfunc validate(seconds int) error {\n\treturn nil\n}\n"),
    ("pkg/volume/detach.go", "package volume\n\nimport \"time\"\n\nconst attachGracePeriod = 30 * time.Second\n"),
    ("pkg/util/retry.go", "package util\n"),
    ("pkg/metrics/metrics.go", "package metrics\n"),
    ("pkg/config/defaults.go", "package config\n"),
    ("cmd/kwok/main.go", "package main\n\nfunc main() {}\n"),
    ("pkg/apis/v1alpha1/types.go", "package v1alpha1\n"),
];

/// OWNERS files of the tested repository: the root names approvers only, the
/// product folders label their SIG (owners links: the failing test's SIG against
/// the SIGs of the touched paths; `pkg/metrics` is another SIG's, for the decoy).
const OWNERS_FILES: &[(&str, &str)] = &[
    ("OWNERS", "approvers:\n- wzshiming\n"),
    ("pkg/quota/OWNERS", "approvers:\n- hsato\nlabels:\n- sig/scheduling\n"),
    ("pkg/scheduler/OWNERS", "approvers:\n- hsato\nlabels:\n- sig/scheduling\n"),
    ("pkg/node/OWNERS", "approvers:\n- nsingh\nlabels:\n- sig/node\n"),
    ("pkg/kubelet/OWNERS", "approvers:\n- nsingh\nlabels:\n- sig/node\n"),
    ("pkg/registry/OWNERS", "approvers:\n- nsingh\nlabels:\n- sig/node\n"),
    ("pkg/dns/OWNERS", "approvers:\n- lrossi\nlabels:\n- sig/network\n"),
    ("pkg/cache/OWNERS", "approvers:\n- qliu\nlabels:\n- sig/api-machinery\n"),
    ("pkg/volume/OWNERS", "approvers:\n- ovargas\nlabels:\n- sig/storage\n"),
    ("pkg/metrics/OWNERS", "approvers:\n- carmen-dev\nlabels:\n- sig/instrumentation\n"),
];

/// Files bystanders change, and what they say.
const BYSTANDER_FILES: &[&str] = &[
    "pkg/util/retry.go",
    "pkg/metrics/metrics.go",
    "pkg/config/defaults.go",
    "cmd/kwok/main.go",
    "pkg/apis/v1alpha1/types.go",
];
const BYSTANDER_SUBJECTS: &[&str] = &[
    "Tidy retry helpers",
    "Add a histogram for stage durations",
    "Default the node heartbeat interval",
    "Print the version at start-up",
    "Bump golang.org/x/net to v0.47.0",
    "Rename the stage selector field",
    "Use context-aware waits in the controller",
    "Drop an unused metrics label",
];
const AUTHORS: &[&str] = &["wzshiming", "carmen-dev", "hsato", "nsingh", "lrossi", "ovargas", "qliu"];
const CONFIG_FILES: &[&str] =
    &["config/jobs/kubernetes/sig-node/node-kubelet.yaml", "config/jobs/kubernetes-sigs/kind/kind-periodics.yaml"];

/// One story ready to generate: its jobs, its onset and its planted commits' times.
pub struct Story {
    spec: &'static Spec,
    pub jobs: Vec<JobSpec>,
    onset: i64,
}

/// The planted world: stories, histories, and what the truth says.
pub struct Plant {
    pub stories: Vec<Story>,
    truth: Truth,
}

#[derive(Serialize)]
struct Truth {
    schema: &'static str,
    repositories: Vec<RepoTruth>,
    stories: Vec<StoryTruth>,
}

#[derive(Serialize)]
struct RepoTruth {
    repo: &'static str,
    branch: &'static str,
    /// Where the bare repository is, under the world's folder.
    path: String,
    head: String,
    commits: usize,
}

#[derive(Serialize)]
struct StoryTruth {
    id: &'static str,
    kind: Kind,
    pattern: &'static str,
    signature: &'static str,
    test: &'static str,
    jobs: Vec<String>,
    repo: &'static str,
    onset: String,
    /// The introducing commit (culprit stories only).
    culprit: Option<String>,
    /// The job-configuration commit that exposed the failure (exposing story only).
    exposing: Option<String>,
    /// The image move that exposed the failure (image-bump story only).
    #[serde(skip_serializing_if = "Option::is_none")]
    exposing_image: Option<ImageMove>,
    /// Other planted commits of the window: (role, commit).
    planted: Vec<(String, String)>,
}

/// An image the story's jobs moved from and to.
#[derive(Serialize)]
struct ImageMove {
    from: String,
    to: String,
}

fn sig(name: &str, t: i64) -> Signature {
    Signature { name: name.to_string(), email: format!("{name}@users.noreply.github.com"), time: t }
}

/// Nominal start of the periodic slots of a job (before their jitter), as `build`
/// schedules them, and the largest jitter.
fn slots(seed: u64, name: &str, first: i64, every: i64) -> (i64, i64) {
    let phase = (hash_parts(seed, &["phase", name]) % every.max(1) as u64) as i64;
    (first + phase.min(every), (every / 10).clamp(1, 600))
}

/// An onset near `target` that falls well between two slots of every job, so the
/// planted commits (within five minutes after it) are all in every job's window.
fn onset_near(seed: u64, target: i64, first: i64, jobs: &[(String, i64)]) -> i64 {
    let clear = |t: i64| {
        jobs.iter().all(|(name, every)| {
            let (start, jitter) = slots(seed, name, first, *every);
            let since = (t - start).rem_euclid(*every);
            since >= jitter + 10 * MINUTE && *every - since >= 15 * MINUTE
        })
    };
    (0..2000).map(|k| target + k * 5 * MINUTE).find(|t| clear(*t)).unwrap_or(target)
}

fn job_name(base: &str, taken: &[JobSpec]) -> String {
    let mut name = base.to_string();
    while taken.iter().any(|t| t.name == name) {
        name.push_str("-planted");
    }
    name
}

/// Plans the stories, writes both histories under `out/git/` and the truth; the
/// jobs returned test the written history.
pub fn plant(seed: u64, start_day: i64, end_day: i64, taken: &[JobSpec], out: &Path) -> Result<Plant, SynthError> {
    let world_start = start_day * DAY;
    let world_end = (end_day + 1) * DAY - 1;
    let first = world_start + 17 * MINUTE;
    let mut stories = Vec::new();
    for spec in SPECS {
        let jobs: Vec<(String, i64)> = spec.jobs.iter().map(|(n, e)| (job_name(n, taken), *e)).collect();
        let target = (end_day - spec.onset_days) * DAY + 13 * HOUR;
        let onset = onset_near(seed, target, first, &jobs);
        let jobs = jobs.iter().map(|(n, every)| job(spec, n.clone(), *every, first, world_end, onset)).collect();
        stories.push(Story { spec, jobs, onset });
    }
    let program = GitProgram::locate().map_err(|e| SynthError::Params(format!("suspect stories need git: {e}")))?;
    let tested = write_tested(seed, start_day, end_day, &stories, &program, out)?;
    let config = write_config(seed, start_day, end_day, &stories, &program, out)?;
    let history: Arc<Vec<(i64, String)>> = Arc::new(tested.timeline.clone());
    for s in &mut stories {
        for j in &mut s.jobs {
            j.history = Some(history.clone());
        }
    }
    let truth = Truth {
        schema: "citriage-synth-suspects/1",
        repositories: vec![tested.truth(REPO, BRANCH), config.truth(CONFIG_REPO, CONFIG_BRANCH)],
        stories: stories
            .iter()
            .map(|s| {
                let planted = tested.planted.get(s.spec.id).cloned().unwrap_or_default();
                StoryTruth {
                    id: s.spec.id,
                    kind: s.spec.kind,
                    pattern: s.spec.pattern.id,
                    signature: s.spec.pattern.signature,
                    test: match s.spec.pattern.junit {
                        JunitEffect::Named(n) => n,
                        _ => "",
                    },
                    jobs: s.jobs.iter().map(|j| j.name.clone()).collect(),
                    repo: REPO,
                    onset: time::rfc3339(s.onset),
                    culprit: planted.iter().find(|(r, _)| r == "culprit").map(|(_, c)| c.clone()),
                    exposing: config.planted.get(s.spec.id).and_then(|p| p.first()).map(|(_, c)| c.clone()),
                    exposing_image: s.spec.bump.and_then(|to| {
                        let j = s.jobs.first()?;
                        Some(ImageMove { from: crate::build::image_for(j, s.onset - DAY), to: to.to_string() })
                    }),
                    planted: planted.into_iter().filter(|(r, _)| r != "culprit").collect(),
                }
            })
            .collect(),
    };
    Ok(Plant { stories, truth })
}

impl Plant {
    /// Writes `truth/suspects.json`.
    pub fn write_truth(&self, sink: &mut Sink) -> Result<(), SynthError> {
        let mut bytes = serde_json::to_vec_pretty(&self.truth).unwrap_or_default();
        bytes.push(b'\n');
        sink.write("truth/suspects.json", &bytes)
    }
}

fn job(spec: &Spec, name: String, every: i64, first: i64, end: i64, onset: i64) -> JobSpec {
    let broken = match spec.kind {
        Kind::Flaky => vec![
            Broken { from: first, to: onset, pattern: spec.pattern, rate: 0.3 },
            Broken { from: onset, to: i64::MAX, pattern: spec.pattern, rate: 1.0 },
        ],
        _ => vec![Broken { from: onset, to: i64::MAX, pattern: spec.pattern, rate: 1.0 }],
    };
    JobSpec {
        kind: JobKind::Periodic,
        suite: SuiteKind::Ginkgo,
        repo: REPO.to_string(),
        branch: BRANCH.to_string(),
        extra_refs: Vec::new(),
        arch: "amd64",
        bucket: "kubernetes-ci-logs",
        scenario: Scenario::PlantedRegression,
        first_ts: first,
        last_ts: end,
        interval: every,
        run_prob: 1.0,
        duration: (20 * MINUTE, 40 * MINUTE),
        broken,
        infra: Vec::new(),
        infra_rate: 0.0,
        flaky: Vec::new(),
        tests: 12,
        error_window: None,
        single_pr: None,
        pin: String::new(),
        description: format!("planted regression story {}: {}", spec.id, spec.pattern.id),
        history: None,
        // Just before the onset, after the last pass started (the onset falls well
        // between two builds of every job).
        image_bump: spec.bump.map(|image| (onset - 5 * MINUTE, image.to_string())),
        name,
    }
}

/// A written history: each commit's time and id, oldest first, and the planted ones.
struct Written {
    path: String,
    timeline: Vec<(i64, String)>,
    /// Story id → (role, commit id).
    planted: BTreeMap<&'static str, Vec<(String, String)>>,
}

impl Written {
    fn truth(&self, repo: &'static str, branch: &'static str) -> RepoTruth {
        RepoTruth {
            repo,
            branch,
            path: self.path.clone(),
            head: self.timeline.last().map(|(_, s)| s.clone()).unwrap_or_default(),
            commits: self.timeline.len(),
        }
    }
}

/// What a commit does to a file.
enum Edit {
    /// Appends the text.
    Append(String),
    /// Replaces the whole content.
    Replace(String),
}

/// A commit to write: when, who, what; `story` and `role` when planted.
struct Pending {
    at: i64,
    author: &'static str,
    subject: String,
    changes: Vec<(String, Edit)>,
    story: Option<(&'static str, &'static str)>,
}

/// Daily bystanders: about `per_day` commits at random times of each day.
fn bystanders(seed: u64, key: &str, start_day: i64, end_day: i64, per_day: u64, files: &[&str]) -> Vec<Pending> {
    let mut out = Vec::new();
    let mut n = 0u32;
    for day in start_day..=end_day {
        let mut r = Rng::for_key(seed, &["bystanders", key, &day.to_string()]);
        for _ in 0..r.range(per_day / 2, per_day + per_day / 2 + 1) {
            n += 1;
            let file = files[r.index(files.len())];
            let subject = format!("{} (#{})", r.pick_str(BYSTANDER_SUBJECTS), 1000 + n);
            out.push(Pending {
                at: day * DAY + r.below(DAY as u64) as i64,
                author: r.pick_str(AUTHORS),
                changes: vec![(file.to_string(), Edit::Append(format!("// change {n}: {subject}\n")))],
                subject,
                story: None,
            });
        }
    }
    out
}

/// Writes the commits in time order (equal times keep their order; each commit at
/// least a second after the previous one).
fn write_history(
    program: &GitProgram,
    out: &Path,
    rel: &str,
    branch: &str,
    base: &[(&str, String)],
    base_at: i64,
    mut commits: Vec<Pending>,
) -> Result<Written, SynthError> {
    commits.sort_by_key(|c| c.at);
    let mut files: BTreeMap<String, String> = base.iter().map(|(p, c)| (p.to_string(), c.clone())).collect();
    let mut stream = ImportStream::new();
    let fail = |e: citriage_git::GitError| SynthError::Params(format!("writing {rel}: {e}"));
    let first = stream
        .commit(&NewCommit {
            branch: branch.to_string(),
            author: sig("k8s-ci-robot", base_at),
            committer: sig("k8s-ci-robot", base_at),
            message: "Initial import\n".into(),
            changes: files.iter().map(|(p, c)| (p.clone(), Some(c.clone().into_bytes()))).collect(),
        })
        .map_err(fail)?;
    let mut marks = vec![(base_at, first, None)];
    let mut last = base_at;
    for c in &commits {
        let at = c.at.max(last + 1);
        last = at;
        let mut changes = Vec::new();
        for (path, edit) in &c.changes {
            let now = files.entry(path.clone()).or_default();
            match edit {
                Edit::Append(t) => now.push_str(t),
                Edit::Replace(t) => *now = t.clone(),
            }
            changes.push((path.clone(), Some(now.clone().into_bytes())));
        }
        let mark = stream
            .commit(&NewCommit {
                branch: branch.to_string(),
                author: sig(c.author, at),
                committer: sig("k8s-ci-robot", at),
                message: format!("{}\n", c.subject),
                changes,
            })
            .map_err(fail)?;
        marks.push((at, mark, c.story));
    }
    let git = Git::init_bare(program, &out.join(rel), branch).map_err(fail)?;
    let ids = git.fast_import(&stream).map_err(fail)?;
    let mut timeline = Vec::new();
    let mut planted: BTreeMap<&'static str, Vec<(String, String)>> = BTreeMap::new();
    for (at, mark, story) in marks {
        let sha = ids.get(&mark).cloned().unwrap_or_default();
        if let Some((id, role)) = story {
            planted.entry(id).or_default().push((role.to_string(), sha.clone()));
        }
        timeline.push((at, sha));
    }
    Ok(Written { path: rel.to_string(), timeline, planted })
}

fn write_tested(
    seed: u64,
    start_day: i64,
    end_day: i64,
    stories: &[Story],
    program: &GitProgram,
    out: &Path,
) -> Result<Written, SynthError> {
    let mut commits = bystanders(seed, REPO, start_day, end_day, 6, BYSTANDER_FILES);
    for s in stories {
        let mut r = Rng::for_key(seed, &["planted", s.spec.id]);
        for (i, p) in s.spec.planted.iter().enumerate() {
            let text: String = p.lines.iter().map(|l| format!("{l}\n")).collect();
            let mut changes = vec![(p.path.to_string(), Edit::Append(text))];
            if s.spec.id == "culprit-touches-test" && p.role == "culprit" {
                changes.push((
                    "pkg/node/lease_test.go".to_string(),
                    Edit::Append("\nfunc renewedWithin(d time.Duration) bool { return leaseRenewSkew < d }\n".into()),
                ));
            }
            commits.push(Pending {
                at: s.onset + i as i64 * 40,
                author: r.pick_str(AUTHORS),
                subject: format!("{} (#{})", p.subject, 900 + r.below(90)),
                changes,
                story: Some((s.spec.id, p.role)),
            });
        }
    }
    let base: Vec<(&str, String)> = BASE_FILES.iter().chain(OWNERS_FILES).map(|(p, c)| (*p, c.to_string())).collect();
    let rel = format!("git/{REPO}");
    write_history(program, out, &rel, BRANCH, &base, (start_day - 30) * DAY, commits)
}

/// A job's block of the job-configuration file.
fn job_block(name: &str, every: i64) -> String {
    format!(
        "- name: {name}\n  interval: {}h\n  decorate: true\n  spec:\n    containers:\n    - image: {IMAGE}\n      args:\n      - --job={name}\n      - --node-lease-duration-seconds=40\n",
        every / HOUR
    )
}

/// The job-configuration file: one block per planted job.
fn jobs_file(stories: &[Story]) -> String {
    let mut s = String::from("periodics:\n");
    for j in stories.iter().flat_map(|s| &s.jobs) {
        s.push_str(&job_block(&j.name, j.interval));
    }
    s
}

fn write_config(
    seed: u64,
    start_day: i64,
    end_day: i64,
    stories: &[Story],
    program: &GitProgram,
    out: &Path,
) -> Result<Written, SynthError> {
    let mut commits = bystanders(seed, CONFIG_REPO, start_day, end_day, 3, CONFIG_FILES);
    let base_text = jobs_file(stories);
    let mut text = base_text.clone();
    for s in stories.iter().filter(|s| s.spec.kind == Kind::Exposing && s.spec.bump.is_none()) {
        // The job's next build runs with the new image and flag.
        for j in &s.jobs {
            let block = job_block(&j.name, j.interval);
            let new = block
                .replace(IMAGE, NEW_IMAGE)
                .replace("--node-lease-duration-seconds=40", "--node-lease-duration-seconds=5");
            text = text.replace(&block, &new);
        }
        commits.push(Pending {
            at: s.onset - 10 * MINUTE,
            author: "kwok-maintainer",
            subject: format!("kwok: move {} to the new kubekins image and a shorter node lease", s.jobs[0].name),
            changes: vec![(JOBS_FILE.to_string(), Edit::Replace(text.clone()))],
            story: Some((s.spec.id, "exposing")),
        });
    }
    let mut base: Vec<(&str, String)> = CONFIG_FILES.iter().map(|p| (*p, "periodics: []\n".to_string())).collect();
    base.push((JOBS_FILE, base_text));
    let rel = format!("git/{CONFIG_REPO}");
    write_history(program, out, &rel, CONFIG_BRANCH, &base, (start_day - 30) * DAY, commits)
}
