//! Benchmark input for clustering: failures generated from planted patterns, with the truth.
//!
//! Each planted pattern is one failure mode whose messages differ only in what identifies
//! an object or a moment: UUIDs, content hashes and commit ids, IPs and ports, pod and
//! namespace suffixes, node names, durations, timestamps, goroutine ids, pointer addresses
//! and source line numbers, plus Go stack traces whose frames keep their functions but
//! change their addresses. A perfect clustering puts every pattern in one cluster and no
//! two patterns together; [`PairScores`] measures how close a clustering comes.
//!
//! Failures are spread over tests, jobs and builds like CI results are: a pattern hits a
//! few tests often and many rarely, a build fails a handful of tests, a test fails at most
//! once per build. Generation is deterministic in `(n, seed)`. No I/O: callers write the
//! rows in whatever format they need (go.k8s.io/triage's `builds.json` and `tests.json`
//! for its reference implementation, for instance).

use std::collections::HashMap;
use std::fmt::Write;

/// One generated failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenFailure {
    /// Test name.
    pub test: String,
    /// Failure text.
    pub text: String,
    /// Index into [`GenData::builds`].
    pub build: u32,
    /// Planted pattern (index into [`PATTERNS`]).
    pub pattern: u16,
}

/// One generated build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenBuild {
    /// Job name.
    pub job: String,
    /// Build number.
    pub number: u64,
    /// `gs://bucket/logs/JOB/NUMBER`.
    pub path: String,
    /// Start, seconds since the epoch.
    pub started: i64,
    /// Tests failed in the build.
    pub tests_failed: u32,
}

/// Generated failures and their builds.
#[derive(Debug, Clone, Default)]
pub struct GenData {
    /// Builds, by job then number.
    pub builds: Vec<GenBuild>,
    /// Failures, in generation order.
    pub failures: Vec<GenFailure>,
}

/// Names of the planted patterns (the truth labels).
pub const PATTERNS: &[&str] = &[
    "disk-pvc-uuid",
    "pod-never-ready",
    "image-pull-digest",
    "apiserver-refused-ip",
    "nil-pointer-panic",
    "etcd-timeout-member",
    "git-not-a-tree",
    "webhook-deadline",
    "node-not-ready",
    "container-exit-code",
    "dns-no-such-host",
    "quota-request-id",
    "ginkgo-expected-count",
    "gcs-upload-generation",
    "unit-test-race-trace",
    "scheduler-insufficient",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// Zipf-like: small values much more likely.
    fn skewed(&mut self, n: u64) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(u) - 1.0).floor() as u64 % n.max(1)
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| b"0123456789abcdef"[self.below(16) as usize] as char).collect()
    }
    fn uuid(&mut self) -> String {
        format!("{}-{}-4{}-{}-{}", self.hex(8), self.hex(4), self.hex(3), self.hex(4), self.hex(12))
    }
    fn ip(&mut self) -> String {
        format!("10.{}.{}.{}", self.below(256), self.below(256), 1 + self.below(254))
    }
    fn suffix(&mut self, n: usize) -> String {
        const K8S: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n).map(|_| K8S[self.below(K8S.len() as u64) as usize] as char).collect()
    }
    fn duration(&mut self) -> String {
        match self.below(3) {
            0 => format!("{}s", 30 + self.below(900)),
            1 => format!("{}m{}s", 1 + self.below(20), self.below(60)),
            _ => format!("{}.{:03}s", 1 + self.below(600), self.below(1000)),
        }
    }
    fn timestamp(&mut self) -> String {
        format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            1 + self.below(28),
            self.below(24),
            self.below(60),
            self.below(60),
            self.below(1_000_000)
        )
    }
    fn node(&mut self) -> String {
        match self.below(3) {
            0 => format!("gke-e2e-default-pool-{}-{}", self.hex(8), self.suffix(4)),
            1 => format!("ip-10-0-{}-{}.ec2.internal", self.below(256), self.below(256)),
            _ => format!("kind-worker{}", 1 + self.below(3)),
        }
    }
}

const APPS: &[&str] = &["webserver", "agnhost", "pause", "httpd", "nginx", "coredns", "etcd-client", "busybox"];
const NS_WORDS: &[&str] = &["deployment", "statefulset", "services", "dns", "volume", "provisioning", "kubectl"];

fn ns(r: &mut Rng) -> String {
    format!("{}-{}", r.pick(NS_WORDS), 1000 + r.below(9000))
}

fn pod(r: &mut Rng) -> String {
    format!("{}-{}-{}", r.pick(APPS), r.hex(9), r.suffix(5))
}

const FRAMES: &[&str] = &[
    "k8s.io/kubernetes/pkg/controller/volume/attachdetach.(*attachDetachController).reconcile",
    "k8s.io/kubernetes/pkg/controller/volume/attachdetach/reconciler.(*reconciler).syncStates",
    "k8s.io/kubernetes/pkg/volume/util/operationexecutor.(*operationGenerator).GenerateAttachVolumeFunc.func2",
    "k8s.io/kubernetes/pkg/volume/util/types.(*GeneratedOperations).Run",
    "k8s.io/kubernetes/pkg/volume/util/nestedpendingoperations.(*nestedPendingOperations).Run.func1",
    "k8s.io/apimachinery/pkg/util/wait.BackoffUntil.func1",
    "k8s.io/apimachinery/pkg/util/wait.BackoffUntil",
    "k8s.io/apimachinery/pkg/util/wait.JitterUntil",
    "k8s.io/client-go/tools/cache.(*processorListener).run",
    "k8s.io/client-go/tools/cache.(*sharedIndexInformer).Run",
];

fn stack(r: &mut Rng, out: &mut String, frames: usize) {
    let _ = write!(out, "\n\ngoroutine {} [running]:", 100 + r.below(90000));
    for f in FRAMES.iter().take(frames) {
        let file = f.rsplit('/').next().unwrap_or(f).split('.').next().unwrap_or("x");
        let _ = write!(
            out,
            "\n{}(0xc{}, 0xc{})\n\t/go/src/k8s.io/kubernetes/{}.go:{} +0x{:x}",
            f,
            r.hex(9),
            r.hex(9),
            file,
            40 + r.below(900),
            r.below(0x400)
        );
    }
}

/// Render one failure text of `pattern`.
pub fn render(pattern: usize, r_seed: u64) -> String {
    let mut r = Rng(r_seed | 1);
    let mut out = String::with_capacity(256);
    match pattern {
        0 => {
            let _ = write!(
                out,
                "error creating disk pvc-{} in zone us-central1-b: googleapi: Error 503: The zone 'projects/k8s-e2e/zones/us-central1-b' does not have enough resources available to fulfill the request, resourceExhausted; operation operation-{}-{} failed after {}",
                r.uuid(),
                r.below(10_000_000_000_000),
                r.hex(12),
                r.duration()
            );
        }
        1 => {
            let _ = write!(
                out,
                "Timed out after {}: pod {}/{} never became Ready: containers with unready status: [{}]",
                r.duration(),
                ns(&mut r),
                pod(&mut r),
                r.pick(APPS)
            );
        }
        2 => {
            let _ = write!(
                out,
                "Failed to pull image \"registry.k8s.io/e2e-test-images/agnhost@sha256:{}\": rpc error: code = Unknown desc = failed to pull and unpack image: failed to resolve reference: unexpected status from HEAD request: 503 Service Unavailable (request {})",
                r.hex(64),
                r.uuid()
            );
        }
        3 => {
            let ip = r.ip();
            let _ = write!(
                out,
                "Get \"https://{ip}:6443/api/v1/namespaces/{}/pods?labelSelector=app%3D{}\": dial tcp {ip}:6443: connect: connection refused",
                ns(&mut r),
                r.pick(APPS)
            );
        }
        4 => {
            let _ = write!(
                out,
                "panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n\tpanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x{:x} pc=0x{}]",
                r.below(0x100),
                r.hex(7)
            );
            stack(&mut r, &mut out, 10);
        }
        5 => {
            let _ = write!(
                out,
                "etcdserver: request timed out, possibly due to previous leader failure (took {}, member {} at https://{}:2379, revision {})",
                r.duration(),
                r.hex(16),
                r.ip(),
                r.below(10_000_000)
            );
        }
        6 => {
            let _ = write!(
                out,
                "error: failed to checkout kubernetes/kubernetes: fatal: reference is not a tree: {}\nprocess exited with code 128 after {}",
                r.hex(40),
                r.duration()
            );
        }
        7 => {
            let n = ns(&mut r);
            let _ = write!(
                out,
                "Internal error occurred: failed calling webhook \"validate.{}.example.com\": failed to call webhook: Post \"https://e2e-test-webhook.{n}.svc:8443/validate?timeout=10s\": context deadline exceeded (Client.Timeout exceeded while awaiting headers) after {}",
                r.suffix(5),
                r.duration()
            );
        }
        8 => {
            let _ = write!(
                out,
                "node {} is NotReady since {}: Kubelet stopped posting node status. Last heartbeat {} ago (lease kube-node-lease/{})",
                r.node(),
                r.timestamp(),
                r.duration(),
                r.uuid()
            );
        }
        9 => {
            let _ = write!(
                out,
                "[FAILED] 1 errors:\npod pod-terminate-status-{}-{} on node {} container unexpected exit code 2: start={} end={} reason=Error message=\nIn [It] at: k8s.io/kubernetes/test/e2e/node/pods.go:{} @ 11/{:02}/26 {:02}:{:02}:{:02}.{:03}",
                r.below(3),
                r.below(20),
                r.node(),
                r.timestamp(),
                r.timestamp(),
                500 + r.below(900),
                1 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60),
                r.below(1000)
            );
        }
        10 => {
            let _ = write!(
                out,
                "lookup e2e-svc-{}.{}.svc.cluster.local on {}:53: read udp {}:{}->{}:53: i/o timeout",
                r.suffix(5),
                ns(&mut r),
                r.ip(),
                r.ip(),
                30000 + r.below(30000),
                r.ip()
            );
        }
        11 => {
            let _ = write!(
                out,
                "googleapi: Error 403: Quota 'CPUS' exceeded. Limit: 500.0 in region us-central1., quotaExceeded; request {} (project k8s-e2e-{})",
                r.uuid(),
                r.suffix(6)
            );
        }
        12 => {
            let _ = write!(
                out,
                "[FAILED] Expected\n    <int>: {}\nto equal\n    <int>: 3\nIn [It] at: k8s.io/kubernetes/test/e2e/apps/deployment.go:{} @ 11/{:02}/26 {:02}:{:02}:{:02}.{:03}",
                r.below(3),
                900 + r.below(300),
                1 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60),
                r.below(1000)
            );
        }
        13 => {
            let _ = write!(
                out,
                "failed to upload artifacts to gs://kubernetes-ci-logs/logs/ci-e2e/{}/artifacts: googleapi: Error 412: At least one of the pre-conditions you specified did not hold., conditionNotMet; generation {} (upload id {})",
                r.below(1u64 << 60),
                r.below(1u64 << 50),
                r.hex(32)
            );
        }
        14 => {
            let _ = write!(
                out,
                "==================\nWARNING: DATA RACE\nWrite at 0x00c{} by goroutine {}:",
                r.hex(9),
                r.below(1000)
            );
            stack(&mut r, &mut out, 6);
            let _ = write!(out, "\n\nPrevious read at 0x00c{} by goroutine {}:", r.hex(9), r.below(1000));
            stack(&mut r, &mut out, 6);
            out.push_str("\n==================\ntesting.go:1490: race detected during execution of test");
        }
        _ => {
            let _ = write!(
                out,
                "0/{} nodes are available: {} Insufficient cpu, {} node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}. preemption: 0/{} nodes are available: pod {}/{} cannot be scheduled (waited {})",
                3 + r.below(4),
                1 + r.below(3),
                1,
                3 + r.below(4),
                ns(&mut r),
                pod(&mut r),
                r.duration()
            );
        }
    }
    // 2% carry a long test output after the message (the same lines every time, with
    // timestamps), like a failing unit test's log.
    if r.below(50) == 0 {
        let lines = 20 + r.below(60);
        for i in 0..lines {
            let _ = write!(
                out,
                "\n    I{} {:02}:{:02}:{:02}.{:06} step {i} of the {} check",
                1100 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60),
                r.below(1_000_000),
                PATTERNS[pattern]
            );
        }
    }
    out
}

/// Generate `n` failures (deterministic in `n` and `seed`).
pub fn generate(n: usize, seed: u64) -> GenData {
    let mut failures = Vec::with_capacity(n);
    let builds = generate_each(n, seed, |_, f| failures.push(f));
    GenData { builds, failures }
}

/// [`generate`] without holding the failures: each is handed to `each` with its build (whose
/// `tests_failed` is not final until the build's last failure) as it is made, in the same
/// order; the builds are returned.
pub fn generate_each(n: usize, seed: u64, mut each: impl FnMut(&GenBuild, GenFailure)) -> Vec<GenBuild> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let tests: Vec<String> = (0..(n / 50).clamp(20, 4000))
        .map(|i| {
            let sig = ["apps", "node", "storage", "network", "scheduling", "api-machinery"][i % 6];
            format!("[sig-{sig}] Feature {} should behave case {i}", i % 97)
        })
        .collect();
    let jobs: Vec<String> =
        (0..(n / 500).clamp(5, 1500)).map(|i| format!("ci-kubernetes-e2e-gce-variant-{i}")).collect();
    // each pattern hits its own few tests often and every test rarely
    let mut builds: Vec<GenBuild> = Vec::new();
    let mut made = 0usize;
    let mut next_number: HashMap<usize, u64> = HashMap::new();
    let t0 = 1_764_000_000i64;
    while made < n {
        let job = r.skewed(jobs.len() as u64) as usize;
        let num = next_number.entry(job).or_insert(1000 + r.below(5000));
        *num += 1;
        let bi = builds.len() as u32;
        let started = t0 + r.below(14 * 86_400) as i64;
        let name = &jobs[job];
        let mut build = GenBuild {
            job: name.clone(),
            number: *num,
            path: format!("gs://kubernetes-jenkins/logs/{name}/{num}"),
            started,
            tests_failed: 0,
        };
        let k = (1 + r.skewed(6) as usize).min(n - made);
        let mut used: Vec<usize> = Vec::with_capacity(k);
        for _ in 0..k {
            let pattern = r.skewed(PATTERNS.len() as u64) as usize;
            let test = if r.below(4) == 0 {
                r.below(tests.len() as u64) as usize
            } else {
                (pattern * 7 + r.skewed(12) as usize) % tests.len()
            };
            if used.contains(&test) {
                continue;
            }
            used.push(test);
            let text = render(pattern, r.next());
            build.tests_failed = used.len() as u32;
            made += 1;
            each(&build, GenFailure { test: tests[test].clone(), text, build: bi, pattern: pattern as u16 });
        }
        builds.push(build);
    }
    builds
}

/// Agreement of a clustering with the planted truth, over pairs of failures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairScores {
    /// Of the pairs put together, the share that share a pattern.
    pub precision: f64,
    /// Of the pairs that share a pattern, the share put together.
    pub recall: f64,
    /// Adjusted Rand index.
    pub ari: f64,
    /// Clusters.
    pub clusters: usize,
}

/// Score `labels` (cluster per failure) against `truth` (pattern per failure).
pub fn pair_scores(labels: &[u64], truth: &[u64]) -> PairScores {
    let pairs = |c: u64| (c as f64) * (c as f64 - 1.0) / 2.0;
    let mut cont: HashMap<(u64, u64), u64> = HashMap::new();
    let mut a: HashMap<u64, u64> = HashMap::new();
    let mut b: HashMap<u64, u64> = HashMap::new();
    for (&l, &t) in labels.iter().zip(truth) {
        *cont.entry((l, t)).or_insert(0) += 1;
        *a.entry(l).or_insert(0) += 1;
        *b.entry(t).or_insert(0) += 1;
    }
    let together: f64 = cont.values().map(|&c| pairs(c)).sum();
    let pred: f64 = a.values().map(|&c| pairs(c)).sum();
    let real: f64 = b.values().map(|&c| pairs(c)).sum();
    let all = pairs(labels.len() as u64);
    let expected = if all > 0.0 { pred * real / all } else { 0.0 };
    let max = (pred + real) / 2.0;
    PairScores {
        precision: if pred > 0.0 { together / pred } else { 1.0 },
        recall: if real > 0.0 { together / real } else { 1.0 },
        ari: if max - expected != 0.0 { (together - expected) / (max - expected) } else { 1.0 },
        clusters: a.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_unique_per_build() {
        let a = generate(3000, 7);
        let b = generate(3000, 7);
        assert_eq!(a.failures, b.failures);
        assert_eq!(a.failures.len(), 3000);
        let mut seen = std::collections::HashSet::new();
        for f in &a.failures {
            assert!(seen.insert((f.build, f.test.clone())), "a test fails twice in one build");
        }
        assert!(a.failures.iter().map(|f| f.pattern).collect::<std::collections::BTreeSet<_>>().len() >= 12);
    }

    #[test]
    fn scores() {
        let s = pair_scores(&[1, 1, 2, 2], &[5, 5, 6, 6]);
        assert_eq!((s.precision, s.recall, s.ari), (1.0, 1.0, 1.0));
        let s = pair_scores(&[1, 2, 3, 4], &[5, 5, 6, 6]);
        assert_eq!(s.recall, 0.0);
        let s = pair_scores(&[1, 1, 1, 1], &[5, 5, 6, 6]);
        assert!((s.precision - 2.0 / 6.0).abs() < 1e-9);
        assert_eq!(s.recall, 1.0);
    }
}
