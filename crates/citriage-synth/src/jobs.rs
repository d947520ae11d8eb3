//! The job universe: realistic Prow job names (periodics `ci-kubernetes-*`,
//! presubmits `pull-*`, the kops grid, CAPI providers, arch and Windows
//! lanes...), what each job runs, how often, and the scenario planted in it
//! (healthy, flaky, broken for weeks, by design, brand new, stale, state=error
//! cascade, single-PR pollution...).

use serde::Serialize;

use crate::catalog::{self, Pattern, SuiteKind, FLAKY};
use crate::repos::repo_info;
use crate::rng::{hash_parts, Rng};
use citriage_model::time::{DAY, HOUR, MINUTE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    Periodic,
    Presubmit,
    Postsubmit,
}

impl JobKind {
    pub fn prow_type(self) -> &'static str {
        match self {
            JobKind::Periodic => "periodic",
            JobKind::Presubmit => "presubmit",
            JobKind::Postsubmit => "postsubmit",
        }
    }
}

/// The story planted in a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Mostly green; rare infra failures and low-rate flakes.
    Healthy,
    /// Green code, flaky tests at noticeable rates.
    Flaky,
    /// Failing with one pattern for more than 30 days.
    LongBroken,
    /// Failing since before the history starts: never passed.
    NeverPassed,
    /// Failing with one pattern for less than 30 days.
    RecentlyBroken,
    /// Broken for a few weeks, always the same commit outcome: the kettle
    /// consistency metric calls it consistent (1.0).
    AlwaysFailingConsistent,
    /// Created in the last days and not passing yet.
    BrandNew,
    /// Expected to fail (`[Flaky]` focus lane).
    ByDesign,
    /// Stopped running days ago.
    Stale,
    /// Recent runs are all `state=error` (no GCS artifacts).
    ErrorCascade,
    /// A presubmit that only ran on one pull request lately.
    SinglePr,
    /// Broken for over 30 days, fixed after the latest dashboard snapshot.
    FixedAfterSnapshot,
    /// Broken for over 30 days, fixed a few days ago (drift between dated
    /// dashboards).
    Recovered,
    /// Broken for about 30 days: crosses the dashboard threshold during the
    /// dated snapshots.
    Crossing,
    /// Weekly or run-if-changed job broken for long: failing_days is large
    /// although few builds failed.
    RareBroken,
    /// A job of a planted fix story (`fixes.rs`): a pattern at a steady rate until a
    /// fix merges (or whatever the fix).
    PlantedFix,
    /// A job of a planted regression story (`culprits.rs`): a pattern from an onset a
    /// commit of a written history introduced or exposed (or none did).
    PlantedRegression,
}

/// A time window in which builds fail with `pattern` at `rate`.
#[derive(Clone, Debug)]
pub struct Broken {
    pub from: i64,
    /// Exclusive end; `i64::MAX` when still broken.
    pub to: i64,
    pub pattern: &'static Pattern,
    pub rate: f64,
}

/// A flaky test planted in a job.
#[derive(Clone, Debug)]
pub struct FlakyTest {
    pub def: usize,
    /// Probability that one attempt fails.
    pub prob: f64,
    /// Whether the runner retries a failed attempt within the run.
    pub retried: bool,
}

/// Everything needed to generate one job's builds.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub name: String,
    pub kind: JobKind,
    pub suite: SuiteKind,
    pub repo: String,
    pub branch: String,
    /// Further repositories cloned (periodics testing k/k plus test-infra).
    pub extra_refs: Vec<(String, String)>,
    pub arch: &'static str,
    pub bucket: &'static str,
    pub scenario: Scenario,
    /// Activity window: no builds before `first_ts` or after `last_ts`.
    pub first_ts: i64,
    pub last_ts: i64,
    /// Periodic interval in seconds.
    pub interval: i64,
    /// Presubmit/postsubmit: probability of running on a push/merge.
    pub run_prob: f64,
    pub duration: (i64, i64),
    pub broken: Vec<Broken>,
    /// Patterns for random environment failures in healthy periods.
    pub infra: Vec<&'static Pattern>,
    pub infra_rate: f64,
    pub flaky: Vec<FlakyTest>,
    pub tests: usize,
    /// Builds in this window end in `state=error` (no GCS folder).
    pub error_window: Option<(i64, i64)>,
    pub single_pr: Option<u32>,
    /// Pinned image tag (image-pin pattern).
    pub pin: String,
    pub description: String,
    /// The tested branch's history when it is a written repository (`culprits`):
    /// (commit time, commit id), oldest first; periodic builds test its head.
    pub history: Option<std::sync::Arc<Vec<(i64, String)>>>,
    /// From this start time on the job runs this image instead of its usual one (the
    /// image-bump story of `culprits`).
    pub image_bump: Option<(i64, String)>,
}

impl JobSpec {
    /// Name as kettle and the dashboards spell it.
    pub fn kettle_name(&self) -> String {
        if self.kind == JobKind::Presubmit {
            format!("pr:{}", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// Attributes implied by a job name (like the runbook's categorisation).
struct Inferred {
    kind: JobKind,
    suite: SuiteKind,
    repo: &'static str,
    branch: String,
    arch: &'static str,
}

fn infer(name: &str) -> Inferred {
    let kind = if name.starts_with("pull-") {
        JobKind::Presubmit
    } else if name.starts_with("post-") {
        JobKind::Postsubmit
    } else {
        JobKind::Periodic
    };
    let table: &[(&str, &str)] = &[
        ("kops", "kubernetes/kops"),
        ("cluster-api-provider-aws", "kubernetes-sigs/cluster-api-provider-aws"),
        ("cluster-api-provider-azure", "kubernetes-sigs/cluster-api-provider-azure"),
        ("cluster-api-provider-vsphere", "kubernetes-sigs/cluster-api-provider-vsphere"),
        ("cluster-api-provider-gcp", "kubernetes-sigs/cluster-api-provider-gcp"),
        ("cluster-api-provider-digitalocean", "kubernetes-sigs/cluster-api-provider-digitalocean"),
        ("cluster-api-addon-provider-helm", "kubernetes-sigs/cluster-api-addon-provider-helm"),
        ("gcp-compute-persistent-disk-csi-driver", "kubernetes-sigs/gcp-compute-persistent-disk-csi-driver"),
        ("azuredisk-csi", "kubernetes-sigs/azuredisk-csi-driver"),
        ("minikube", "kubernetes/minikube"),
        ("etcd", "etcd-io/etcd"),
        ("kueue", "kubernetes-sigs/kueue"),
        ("release-notes", "kubernetes/release"),
        ("descheduler", "kubernetes-sigs/descheduler"),
        ("perf-tests", "kubernetes/perf-tests"),
        ("cloud-provider-azure", "kubernetes-sigs/cloud-provider-azure"),
        ("csi-driver-host-path", "kubernetes-csi/csi-driver-host-path"),
        ("external-snapshotter", "kubernetes-csi/external-snapshotter"),
        ("test-infra", "kubernetes/test-infra"),
        ("cloud-provider-kind", "kubernetes-sigs/cloud-provider-kind"),
        ("apiserver-network-proxy", "kubernetes-sigs/apiserver-network-proxy"),
    ];
    let repo = table.iter().find(|(k, _)| name.contains(k)).map(|(_, r)| *r).unwrap_or("kubernetes/kubernetes");
    let info = repo_info(repo);
    let mut branch = info.default_branch.to_string();
    for minor in 30..=36 {
        if name.contains(&format!("-1-{minor}")) && repo == "kubernetes/kubernetes" {
            branch = format!("release-1.{minor}");
        }
    }
    for minor in 8..=12 {
        if name.ends_with(&format!("release-2-{minor}")) {
            branch = format!("release-2.{minor}");
        }
    }
    let arch = ["s390x", "ppc64le", "arm64", "windows"].into_iter().find(|a| name.contains(a)).unwrap_or("amd64");
    let suite = if name.contains("push-images") || name.contains("-image-") || name.contains("ami-build") {
        SuiteKind::ImageBuild
    } else if name.contains("kops") {
        SuiteKind::Kops
    } else if name.contains("cluster-api") || name.contains("cloud-provider-azure") || name.contains("-capz") {
        SuiteKind::Capi
    } else if name.contains("minikube") {
        SuiteKind::Minikube
    } else if name.contains("integration") || repo == "etcd-io/etcd" {
        SuiteKind::GoIntegration
    } else if name.contains("unit")
        || name.contains("verify")
        || name.contains("typecheck")
        || name.contains("release-notes")
    {
        SuiteKind::GoUnit
    } else if name.contains("node-e2e")
        || name.contains("node-kubelet")
        || name.contains("gci-gce")
        || name.contains("e2e-gce")
    {
        SuiteKind::Kubetest
    } else {
        SuiteKind::Ginkgo
    };
    Inferred { kind, suite, repo, branch, arch }
}

/// The anchor jobs: one per planted story, modelled on the seed reports.
/// Smaller worlds take a prefix of this list.
const ANCHORS: &[(&str, Scenario, &str)] = &[
    ("ci-kubernetes-e2e-gci-gce-flaky", Scenario::ByDesign, "flaky-lane-by-design"),
    ("post-descheduler-push-images", Scenario::RareBroken, "image-pin-manifest-unknown"),
    ("e2e-kops-grid-calico-rhel10-k34", Scenario::LongBroken, "nft-only-iptables"),
    ("ci-kubernetes-integration-s390x", Scenario::Flaky, "apiserver-startup-timeout"),
    ("ci-kubernetes-cross-canary", Scenario::ErrorCascade, "pod-not-created"),
    ("pull-kubernetes-e2e-storage-kind-volume-group-snapshots", Scenario::SinglePr, "pr-unit-regression"),
    ("ci-gcp-compute-persistent-disk-csi-driver-latest-sidecars", Scenario::LongBroken, "hyperdisk-machine-type"),
    ("e2e-kops-grid-gce-cilium-u2404-k35-ko35", Scenario::BrandNew, "nft-only-iptables"),
    ("ci-minikube-docker-crio-linux-x86", Scenario::AlwaysFailingConsistent, "dockerhub-rate-limit"),
    ("ci-kubernetes-unit-windows-master", Scenario::Flaky, ""),
    (
        "periodic-cluster-api-provider-aws-e2e-conformance-release-2-10",
        Scenario::LongBroken,
        "boskos-could-not-allocate",
    ),
    (
        "ci-kubernetes-e2e-kind-compatibility-versions-feature-gate-test",
        Scenario::Crossing,
        "feature-gate-not-in-metrics",
    ),
    ("cloud-provider-azure-conformance-windows-capz", Scenario::NeverPassed, "md-win-timeout"),
    ("ci-kubernetes-node-e2e-containerd", Scenario::Flaky, ""),
    ("ci-kubernetes-e2e-azure-dra-with-workload-scalability", Scenario::Recovered, "image-pull-backoff"),
    ("ci-kubernetes-e2e-ec2-dualstack", Scenario::LongBroken, "unknown-flag"),
    ("ci-perf-tests-kubemark-100-benchmark", Scenario::Stale, "process-timeout"),
    ("pull-kubernetes-unit", Scenario::Healthy, ""),
    ("ci-kubernetes-e2e-gce-cos-k8sbeta-default", Scenario::Flaky, ""),
    ("ci-cloud-provider-kind-conformance", Scenario::FixedAfterSnapshot, "cluster-connection-refused"),
    ("periodic-cluster-api-provider-azure-e2e-ha-main", Scenario::Flaky, ""),
    ("pull-release-notes-test", Scenario::SinglePr, ""),
    ("ci-kubernetes-e2e-azure-dra-scalability", Scenario::RareBroken, "image-pull-backoff"),
    ("ci-aws-ami-build-kubelet-alpha", Scenario::LongBroken, "aws-credentials-missing"),
    ("ci-etcd-unit-test-ppc64le", Scenario::Flaky, ""),
    ("ci-kubernetes-e2e-gci-gce-windows-snapshot-restore", Scenario::RecentlyBroken, "windows-empty-volume-id"),
    ("ci-kubernetes-unit-1-34", Scenario::RecentlyBroken, "data-race"),
    ("pull-cluster-api-provider-azure-e2e-ccm-capz", Scenario::Flaky, "public-ip-quota"),
];

const CNIS: &[&str] = &["calico", "cilium", "cilium-eni", "flannel", "kindnet", "amazonvpc", "kuberouter"];
const DISTROS: &[&str] = &[
    "al2023",
    "amzn2",
    "deb12",
    "deb13",
    "u2204",
    "u2404",
    "u2404arm64",
    "rhel9",
    "rhel10",
    "rhel10arm64",
    "rocky10",
    "flatcar",
    "cos121",
];

fn gen_name(r: &mut Rng) -> String {
    let fam = r.weighted(&[30, 3, 14, 6, 5, 10, 8, 5, 5, 3, 4, 4, 2, 2, 3]);
    let branch = |r: &mut Rng| r.pick_str(&["", "", "", "-1-33", "-1-34", "-1-35", "-1-36", "-beta"]);
    let arch = |r: &mut Rng| r.pick_str(&["", "", "", "-arm64", "-s390x", "-ppc64le"]);
    match fam {
        0 => format!(
            "e2e-kops-grid-{}{}-{}-k{}{}",
            r.pick_str(&["", "", "gce-"]),
            r.pick_str(CNIS),
            r.pick_str(DISTROS),
            r.range(32, 35),
            r.pick_str(&["", "", "-ko33", "-ko34", "-ko35"])
        ),
        1 => r
            .pick_str(&[
                "e2e-kops-aws-hostname-bug121018",
                "ci-kubernetes-kops-gce-small-scale-kindnet-using-cl2",
                "e2e-kops-staging-registry-azure",
                "e2e-kops-staging-registry-gcp",
                "e2e-ci-kubernetes-kops-ubuntu-aws-canary",
                "e2e-ci-kubernetes-kops-al2023-aws-serial-canary",
                "e2e-ci-kubernetes-kops-cos-gce-reboot-canary",
                "e2e-kops-aws-upgrade-gossip",
                "e2e-kops-gce-upgrade-gossip",
                "e2e-kops-pipeline-updown-kopsmaster",
            ])
            .to_string(),
        2 => format!(
            "ci-kubernetes-e2e-{}{}{}",
            r.pick_str(&[
                "gci-gce",
                "gce-cos",
                "kind",
                "kind-ipv6",
                "ec2",
                "gce-ubuntu",
                "gci-gce-ingress",
                "kind-alpha-beta-features"
            ]),
            r.pick_str(&[
                "",
                "",
                "-serial",
                "-slow",
                "-alpha-features",
                "-reboot",
                "-storage",
                "-network-policies",
                "-scalability-100",
                "-dual-stack",
                "-nftables"
            ]),
            branch(r)
        ),
        3 => format!(
            "ci-kubernetes-{}{}{}",
            r.pick_str(&["unit", "integration", "unit-race", "integration-race"]),
            branch(r),
            arch(r)
        ),
        4 => format!(
            "ci-kubernetes-node-{}{}{}",
            r.pick_str(&[
                "e2e-containerd",
                "e2e-crio",
                "kubelet-serial-containerd",
                "kubelet-serial-crio-cgroupv1",
                "swap-ubuntu-serial",
                "e2e-cri-proxy-serial",
                "kubelet-credential-provider"
            ]),
            r.pick_str(&["", "", "-features", "-alpha", "-eviction"]),
            branch(r)
        ),
        5 => format!(
            "pull-kubernetes-{}{}",
            r.pick_str(&[
                "e2e-kind",
                "integration",
                "verify",
                "node-e2e-containerd",
                "e2e-gce",
                "typecheck",
                "conformance-kind-ga-only-parallel",
                "e2e-kind-ipv6",
                "cmd",
                "dependencies",
                "unit-windows-master",
                "e2e-kind-alpha-features",
                "node-kubelet-serial-crio-cgroupv2",
                "e2e-ec2",
                "linter-hints"
            ]),
            r.pick_str(&["", "", "", "-1-34", "-1-35"])
        ),
        6 => {
            let p = r.pick_str(&["aws", "azure", "vsphere", "gcp", "digitalocean"]);
            let v = r.pick_str(&[
                "e2e-conformance",
                "e2e-full",
                "e2e-workload-upgrade",
                "e2e-conformance-with-k8s-ci-artifacts",
                "e2e-eks",
                "capi-e2e",
                "e2e-windows",
            ]);
            if r.chance(0.3) {
                format!("pull-cluster-api-provider-{p}-{v}{}", r.pick_str(&["", "-main"]))
            } else {
                format!(
                    "periodic-cluster-api-provider-{p}-{v}-{}",
                    r.pick_str(&[
                        "main",
                        "main",
                        "release-2-9",
                        "release-2-10",
                        "release-2-11",
                        "release-1-5",
                        "release-1-6"
                    ])
                )
            }
        }
        7 => format!(
            "{}{}",
            r.pick_str(&[
                "ci-gcp-compute-persistent-disk-csi-driver-",
                "pull-gcp-compute-persistent-disk-csi-driver-",
                "ci-azuredisk-csi-driver-",
                "pull-kubernetes-csi-external-snapshotter-",
                "pull-kubernetes-csi-csi-driver-host-path-",
            ]),
            r.pick_str(&[
                "e2e",
                "unit",
                "e2e-windows",
                "sanity",
                "1-34-on-kubernetes-master",
                "e2e-capz-windows",
                "latest-sidecars",
                "kubernetes-integration"
            ])
        ),
        8 => format!(
            "{}-{}-push-images",
            r.pick_str(&["post", "post", "canary"]),
            r.pick_str(&[
                "descheduler",
                "perf-tests-networknetperfbenchmark",
                "perf-tests-access-tokens",
                "perf-tests-request-benchmark",
                "perf-tests-probes",
                "perf-tests-watch-list",
                "apiserver-network-proxy",
                "external-snapshot-metadata",
                "container-object-storage-interface",
                "gcp-compute-persistent-disk-csi-driver",
                "csi-driver-host-path",
                "external-health-monitor",
                "lib-volume-populator",
                "volume-data-source-validator",
                "nfs-subdir-external-provisioner",
                "kueue",
                "cloud-provider-kind",
            ])
        ),
        9 => format!(
            "{}-minikube-{}-{}-linux-{}",
            r.pick_str(&["ci", "pull"]),
            r.pick_str(&["docker", "kvm2", "podman"]),
            r.pick_str(&["docker", "containerd", "crio"]),
            r.pick_str(&["x86", "arm64"])
        ),
        10 => format!(
            "{}-etcd-{}-{}",
            r.pick_str(&["ci", "pull"]),
            r.pick_str(&[
                "unit-test",
                "integration-1-cpu",
                "integration-4-cpu",
                "e2e",
                "robustness",
                "grpcproxy-integration"
            ]),
            r.pick_str(&["amd64", "arm64", "s390x", "ppc64le"])
        ),
        11 => format!(
            "{}-kueue-{}-{}",
            r.pick_str(&["periodic", "pull"]),
            r.pick_str(&["test-e2e", "test-integration", "test-multikueue-e2e", "test-tas-e2e"]),
            r.pick_str(&["main", "release-0-13", "release-0-14"])
        ),
        12 => format!(
            "cloud-provider-azure-{}-capz{}",
            r.pick_str(&["conformance", "ccm", "conformance-windows", "ccm-windows", "e2e"]),
            r.pick_str(&["", "-1-33", "-1-34"])
        ),
        13 => format!(
            "pull-{}-{}",
            r.pick_str(&["release-notes", "test-infra", "release"]),
            r.pick_str(&["test", "verify", "lint", "unit-test", "bazel"])
        ),
        _ => format!(
            "ci-kubernetes-e2e-{}{}",
            r.pick_str(&["windows-containerd-gce-", "capz-", "windows-containerd-capz-"]),
            r.pick_str(&["master", "1-34", "1-35", "master-serial-slow", "1-34-serial-slow", "master-hpa"])
        ),
    }
}

fn family_patterns(name: &str, suite: SuiteKind, arch: &str) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = match suite {
        SuiteKind::ImageBuild => vec!["image-pin-manifest-unknown", "aws-credentials-missing"],
        SuiteKind::Kops => {
            if name.contains("rhel10") || name.contains("rocky10") {
                vec!["nft-only-iptables"]
            } else {
                vec!["boskos-could-not-allocate", "cluster-connection-refused", "nodes-not-ready", "nft-only-iptables"]
            }
        }
        SuiteKind::Capi => {
            if arch == "windows" || name.contains("windows") {
                vec!["md-win-timeout"]
            } else if name.contains("azure") || name.contains("capz") {
                vec!["public-ip-quota", "image-pull-backoff", "client-rate-limiter"]
            } else {
                vec!["boskos-could-not-allocate", "client-rate-limiter", "nodes-not-ready"]
            }
        }
        SuiteKind::GoUnit | SuiteKind::GoIntegration => vec!["data-race", "apiserver-startup-timeout"],
        SuiteKind::Minikube => vec!["dockerhub-rate-limit"],
        SuiteKind::Kubetest => {
            vec!["boskos-could-not-allocate", "cluster-connection-refused", "nodes-not-ready", "process-timeout"]
        }
        SuiteKind::Ginkgo | SuiteKind::OpenShift => vec![
            "cluster-connection-refused",
            "cluster-connection-refused",
            "nodes-not-ready",
            "process-timeout",
            "feature-gate-not-in-metrics",
        ],
    };
    if name.contains("persistent-disk") && suite != SuiteKind::ImageBuild {
        v = if name.contains("windows") { vec!["windows-empty-volume-id"] } else { vec!["hyperdisk-machine-type"] };
    }
    if name.contains("ec2") && suite != SuiteKind::ImageBuild {
        v.push("unknown-flag");
    }
    v
}

fn infra_patterns(suite: SuiteKind, name: &str) -> Vec<&'static str> {
    match suite {
        SuiteKind::Kops | SuiteKind::Kubetest => {
            vec!["boskos-could-not-allocate", "cluster-connection-refused", "nodes-not-ready", "process-timeout"]
        }
        SuiteKind::Capi => {
            if name.contains("azure") || name.contains("capz") {
                vec!["public-ip-quota", "process-timeout"]
            } else {
                vec!["boskos-could-not-allocate", "nodes-not-ready"]
            }
        }
        SuiteKind::Ginkgo => vec!["cluster-connection-refused", "nodes-not-ready", "process-timeout"],
        SuiteKind::Minikube => vec!["dockerhub-rate-limit"],
        SuiteKind::GoUnit | SuiteKind::GoIntegration => vec!["process-timeout"],
        SuiteKind::ImageBuild | SuiteKind::OpenShift => vec![],
    }
}

fn flaky_candidates(suite: SuiteKind, name: &str, arch: &str) -> Vec<usize> {
    FLAKY
        .iter()
        .enumerate()
        .filter(|(_, f)| match suite {
            SuiteKind::Kubetest => {
                f.suite == SuiteKind::Kubetest && (f.id != "kubetest-node-tests" || name.contains("node"))
                    || f.suite == SuiteKind::Ginkgo && !name.contains("node")
            }
            SuiteKind::Kops => f.id == "kubetest-up" || f.suite == SuiteKind::Ginkgo,
            SuiteKind::Capi => {
                if name.contains("vsphere") {
                    f.id == "capv-preparation"
                } else {
                    f.id == "capz-ha-rate-limit" && (name.contains("azure") || name.contains("capz"))
                        || f.suite == SuiteKind::Ginkgo
                }
            }
            SuiteKind::GoUnit => {
                f.suite == SuiteKind::GoUnit
                    && (f.id != "kubelet-windows-tempdir" || arch == "windows")
                    && !name.contains("etcd")
            }
            SuiteKind::GoIntegration => {
                if name.contains("etcd") {
                    f.id == "etcd-port-conflict"
                } else {
                    f.suite == SuiteKind::GoIntegration && f.id != "etcd-port-conflict"
                }
            }
            s => f.suite == s,
        })
        .map(|(i, _)| i)
        .collect()
}

/// Parameters of the job planner (a subset of `SynthParams`).
pub struct PlanParams {
    pub seed: u64,
    pub jobs: usize,
    pub builds_per_job: usize,
    pub start_day: i64,
    pub end_day: i64,
    pub failure_rate: f64,
    pub tests_per_build: usize,
    pub dashboard_days: u32,
}

fn duration_for(suite: SuiteKind) -> (i64, i64) {
    match suite {
        SuiteKind::ImageBuild => (6 * MINUTE, 20 * MINUTE),
        SuiteKind::GoUnit => (15 * MINUTE, 45 * MINUTE),
        SuiteKind::GoIntegration => (30 * MINUTE, 70 * MINUTE),
        SuiteKind::Minikube => (40 * MINUTE, 100 * MINUTE),
        SuiteKind::Kubetest | SuiteKind::Kops => (35 * MINUTE, 110 * MINUTE),
        SuiteKind::Capi => (50 * MINUTE, 140 * MINUTE),
        SuiteKind::Ginkgo | SuiteKind::OpenShift => (30 * MINUTE, 100 * MINUTE),
    }
}

/// Plans the job universe (deterministic for the seed and parameters).
pub fn plan(p: &PlanParams) -> Vec<JobSpec> {
    let mut r = Rng::for_key(p.seed, &["job-universe"]);
    let mut names: Vec<(String, Option<(Scenario, &'static str)>)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, sc, pat) in ANCHORS.iter().take(p.jobs) {
        seen.insert(name.to_string());
        names.push((name.to_string(), Some((*sc, pat))));
    }
    let mut attempts = 0usize;
    while names.len() < p.jobs {
        attempts += 1;
        let mut name = gen_name(&mut r);
        if attempts > p.jobs * 50 {
            name = format!("{name}-{}", names.len());
        }
        if seen.insert(name.clone()) {
            names.push((name, None));
        }
    }
    // Normalise build-count weights so the world has about jobs * builds_per_job builds.
    let weights: Vec<f64> = names
        .iter()
        .map(|(n, _)| {
            let mut wr = Rng::for_key(p.seed, &["job-weight", n]);
            match wr.weighted(&[70, 25, 5]) {
                0 => 0.3 + 0.7 * wr.unit(),
                1 => 1.0 + 1.5 * wr.unit(),
                _ => 3.0 + 3.0 * wr.unit(),
            }
        })
        .collect();
    let wsum: f64 = weights.iter().sum::<f64>().max(1e-9);
    let scale = names.len() as f64 / wsum;
    names.into_iter().zip(weights).map(|((name, anchor), w)| make_job(p, name, anchor, w * scale)).collect()
}

fn make_job(p: &PlanParams, name: String, anchor: Option<(Scenario, &'static str)>, weight: f64) -> JobSpec {
    let mut r = Rng::for_key(p.seed, &["job-spec", &name]);
    let inf = infer(&name);
    let world_start = p.start_day * DAY;
    let world_end = (p.end_day + 1) * DAY - 1;
    let hist_days = (p.end_day - p.start_day + 1).max(1);
    let (scenario, anchor_pattern) = match anchor {
        Some((s, pat)) => (s, pat),
        None => {
            let s = match r.weighted(&[58, 16, 10, 2, 5, 2, 3, 3, 1]) {
                0 => Scenario::Healthy,
                1 => Scenario::Flaky,
                2 => Scenario::LongBroken,
                3 => Scenario::NeverPassed,
                4 => Scenario::RecentlyBroken,
                5 => Scenario::AlwaysFailingConsistent,
                6 => Scenario::Stale,
                7 => Scenario::BrandNew,
                _ => Scenario::RareBroken,
            };
            (s, "")
        }
    };
    let fam = family_patterns(&name, inf.suite, inf.arch);
    let pattern: &'static Pattern = catalog::pattern(anchor_pattern)
        .filter(|_| !anchor_pattern.is_empty())
        .or_else(|| fam.get(r.index(fam.len())).and_then(|id| catalog::pattern(id)))
        .unwrap_or(&catalog::PATTERNS[0]);

    let mut first_ts = world_start + r.below(6 * HOUR as u64) as i64;
    let mut last_ts = world_end;
    let mut broken = Vec::new();
    let mut error_window = None;
    let mut single_pr = None;
    let mut flaky_n = r.range(0, 2) as usize;
    let mut flaky_scale = 1.0;
    let end_noon = p.end_day * DAY + 12 * HOUR;
    let days_ago = |d: i64| (p.end_day - d) * DAY + 12 * HOUR;
    let max_back = (hist_days - 3).max(32);
    let mut interval_mult = 1.0;
    match scenario {
        Scenario::Healthy | Scenario::SinglePr | Scenario::PlantedFix | Scenario::PlantedRegression => {}
        Scenario::Flaky => {
            flaky_n = r.range(1, 3) as usize;
            flaky_scale = 6.0;
        }
        Scenario::LongBroken => {
            let back = r.range(35.min(max_back as u64), max_back as u64) as i64;
            broken.push(Broken {
                from: days_ago(back) + r.below(8 * HOUR as u64) as i64,
                to: i64::MAX,
                pattern,
                rate: 1.0,
            });
        }
        Scenario::NeverPassed | Scenario::ByDesign => {
            broken.push(Broken { from: i64::MIN, to: i64::MAX, pattern, rate: 1.0 });
        }
        Scenario::RecentlyBroken => {
            let back = r.range(3, 20) as i64;
            broken.push(Broken { from: days_ago(back), to: i64::MAX, pattern, rate: 1.0 });
        }
        Scenario::AlwaysFailingConsistent => {
            let back = r.range(12, 24) as i64;
            broken.push(Broken { from: days_ago(back), to: i64::MAX, pattern, rate: 1.0 });
            interval_mult = 0.35;
        }
        Scenario::BrandNew => {
            first_ts = p.end_day * DAY - r.range(0, 3) as i64 * DAY + r.below(6 * HOUR as u64) as i64;
            broken.push(Broken { from: i64::MIN, to: i64::MAX, pattern, rate: 0.9 });
            interval_mult = 0.05;
        }
        Scenario::Stale => {
            let back = r.range(10, 25.min(hist_days as u64 - 2).max(11)) as i64;
            last_ts = days_ago(back);
            broken.push(Broken { from: last_ts - 6 * DAY, to: i64::MAX, pattern, rate: 1.0 });
        }
        Scenario::ErrorCascade => {
            error_window = Some((days_ago(8), i64::MAX));
            interval_mult = 0.3;
        }
        Scenario::FixedAfterSnapshot => {
            let back = r.range(36.min(max_back as u64), max_back as u64) as i64;
            broken.push(Broken { from: days_ago(back), to: end_noon + 2 * HOUR, pattern, rate: 1.0 });
            interval_mult = 0.5;
        }
        Scenario::Recovered => {
            let back = r.range(38.min(max_back as u64), max_back as u64) as i64;
            broken.push(Broken { from: days_ago(back), to: days_ago(3), pattern, rate: 1.0 });
            interval_mult = 0.3;
        }
        Scenario::Crossing => {
            let back = 31 + i64::from(p.dashboard_days / 2);
            broken.push(Broken { from: days_ago(back) - 14 * HOUR, to: i64::MAX, pattern, rate: 1.0 });
            interval_mult = 0.25;
        }
        Scenario::RareBroken => {
            let back = r.range(35.min(max_back as u64), max_back as u64) as i64;
            broken.push(Broken { from: days_ago(back), to: i64::MAX, pattern, rate: 1.0 });
        }
    }
    if scenario == Scenario::ByDesign {
        flaky_n = 0;
    }
    if first_ts < world_start {
        first_ts = world_start;
    }
    let span = (last_ts.min(world_end) - first_ts).max(HOUR);
    let target = (p.builds_per_job as f64 * weight).max(1.0);
    let mut interval = ((span as f64 / target) * interval_mult) as i64;
    if scenario == Scenario::RareBroken && inf.kind == JobKind::Periodic {
        interval = 7 * DAY;
    }
    // Jobs whose story must be visible in the dashboards run at least every
    // few days; the cascade job runs twice a day so the window shows errors.
    let max_interval = match scenario {
        Scenario::RareBroken => 7 * DAY,
        Scenario::ErrorCascade => 12 * HOUR,
        _ => 3 * DAY,
    };
    interval = interval.clamp(30 * MINUTE, max_interval);
    // Presubmits and postsubmits: translate the build target into a run probability.
    let info = repo_info(inf.repo);
    let run_prob = match inf.kind {
        JobKind::Periodic => 1.0,
        JobKind::Presubmit => {
            let per_day = if inf.branch == info.default_branch { f64::from(info.prs_per_day) } else { 0.3 };
            let pushes = per_day * 0.8 * 1.7 * (span as f64 / DAY as f64);
            (target / (pushes * 1.3).max(1.0)).clamp(0.002, 1.0)
        }
        JobKind::Postsubmit => {
            let merges = f64::from(info.merges_per_day) * 0.8 * (span as f64 / DAY as f64);
            let f = if scenario == Scenario::RareBroken { 0.25 } else { 1.0 };
            (f * target / merges.max(1.0)).clamp(0.01, 1.0)
        }
    };
    if scenario == Scenario::SinglePr {
        single_pr = Some(info.pr_base + 90_000 + (hash_parts(p.seed, &[&name]) % 900) as u32);
    }

    let mut flaky = Vec::new();
    let cands = flaky_candidates(inf.suite, &name, inf.arch);
    let mut chosen: Vec<usize> = Vec::new();
    // Anchors whose pattern id names a flaky def's suite still get generic flakes.
    while chosen.len() < flaky_n.min(cands.len()) {
        let c = cands[r.index(cands.len())];
        if !chosen.contains(&c) {
            chosen.push(c);
        }
    }
    chosen.sort_unstable();
    for def in chosen {
        let base = 0.01 + 0.03 * r.unit();
        let prob = (base * flaky_scale).min(0.45);
        let retried =
            matches!(FLAKY[def].suite, SuiteKind::Ginkgo | SuiteKind::OpenShift | SuiteKind::Minikube) && r.chance(0.5);
        flaky.push(FlakyTest { def, prob, retried });
    }
    // Planted flaky anchors whose story is a pattern rather than a flaky test:
    // the pattern strikes intermittently.
    if scenario == Scenario::Flaky && !anchor_pattern.is_empty() {
        broken.push(Broken { from: i64::MIN, to: i64::MAX, pattern, rate: 0.25 });
    }
    if scenario == Scenario::SinglePr && !anchor_pattern.is_empty() {
        broken.push(Broken { from: i64::MIN, to: i64::MAX, pattern, rate: 1.0 });
    }
    if scenario == Scenario::SinglePr && anchor_pattern.is_empty() && flaky.is_empty() {
        if let Some(&c) = cands.first() {
            flaky.push(FlakyTest { def: c, prob: 0.4, retried: false });
        }
    }
    let infra: Vec<&'static Pattern> =
        infra_patterns(inf.suite, &name).into_iter().filter_map(catalog::pattern).collect();
    let extra_refs = if inf.repo != "kubernetes/kubernetes"
        && matches!(inf.suite, SuiteKind::Ginkgo | SuiteKind::Kops | SuiteKind::Capi)
    {
        vec![("kubernetes/kubernetes".to_string(), "master".to_string())]
    } else if inf.kind == JobKind::Periodic && inf.repo == "kubernetes/kubernetes" && inf.suite == SuiteKind::Kubetest {
        vec![("kubernetes/test-infra".to_string(), "master".to_string())]
    } else {
        Vec::new()
    };
    let tests = match inf.suite {
        SuiteKind::ImageBuild => 0,
        SuiteKind::Minikube => 16,
        _ => ((p.tests_per_build as f64) * (0.4 + 1.2 * r.unit())).round().max(3.0) as usize,
    };
    let description = describe(scenario, pattern, &broken);
    let pin = format!("v2021{:02}{:02}-{}", r.range(1, 12), r.range(10, 28), r.hex(10));
    JobSpec {
        kind: inf.kind,
        suite: inf.suite,
        repo: inf.repo.to_string(),
        branch: inf.branch,
        extra_refs,
        arch: inf.arch,
        bucket: "kubernetes-ci-logs",
        scenario,
        first_ts,
        last_ts,
        interval,
        run_prob,
        duration: duration_for(inf.suite),
        broken,
        infra,
        infra_rate: p.failure_rate,
        flaky,
        tests,
        error_window,
        single_pr,
        pin,
        description,
        history: None,
        image_bump: None,
        name,
    }
}

fn describe(s: Scenario, p: &Pattern, broken: &[Broken]) -> String {
    let pat = if broken.is_empty() { "" } else { p.id };
    match s {
        Scenario::Healthy => "mostly green; occasional infra failures and low-rate flakes".into(),
        Scenario::Flaky => format!(
            "flaky tests at noticeable rates{}",
            if pat.is_empty() { String::new() } else { format!("; intermittent {pat}") }
        ),
        Scenario::LongBroken => format!("failing with {pat} for more than 30 days"),
        Scenario::NeverPassed => format!("never passed: {pat} since the first run"),
        Scenario::RecentlyBroken => format!("failing with {pat} for under 30 days"),
        Scenario::AlwaysFailingConsistent => format!("always failing with {pat}; kettle calls it consistent"),
        Scenario::BrandNew => format!("new lane, not passing yet ({pat})"),
        Scenario::ByDesign => "expected to fail: [Flaky] focus lane".into(),
        Scenario::Stale => format!("stopped running; was failing with {pat}"),
        Scenario::ErrorCascade => "recent runs all state=error (pod never created, no GCS artifacts)".into(),
        Scenario::SinglePr => "only one pull request triggered it lately".into(),
        Scenario::FixedAfterSnapshot => {
            format!("failing with {pat} for over 30 days, fixed after the latest dashboard snapshot")
        }
        Scenario::Recovered => format!("failed with {pat} for over 30 days, fixed three days ago"),
        Scenario::Crossing => format!("failing with {pat} for about 30 days: crosses the dashboard threshold"),
        Scenario::RareBroken => format!("rarely runs; failing with {pat} for long: failing_days overstates it"),
        Scenario::PlantedFix => format!("planted fix story: {pat}"),
        Scenario::PlantedRegression => format!("planted regression story: {pat}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_deterministic_and_unique() {
        let p = PlanParams {
            seed: 1,
            jobs: 200,
            builds_per_job: 20,
            start_day: 20_000,
            end_day: 20_059,
            failure_rate: 0.05,
            tests_per_build: 20,
            dashboard_days: 3,
        };
        let a = plan(&p);
        let b = plan(&p);
        assert_eq!(a.len(), 200);
        let na: Vec<&str> = a.iter().map(|j| j.name.as_str()).collect();
        let nb: Vec<&str> = b.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(na, nb);
        let mut sorted = na.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 200);
        assert!(a.iter().any(|j| j.kind == JobKind::Presubmit));
        assert!(a.iter().any(|j| j.name.starts_with("e2e-kops-grid-")));
    }
}
