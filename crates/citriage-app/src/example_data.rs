//! The bundled example dashboards: a deterministic generator of k8s-like
//! `failures-*.json` and `flakes-*.json` snapshots over consecutive days, with job
//! names across the runbook's categories and planted cases for every check (a
//! brand-new `-ko35` lane family, harness steps in `test_flakes`, the consistency
//! paradox, by-design lanes, a streak reset, a recovered job, a reappearing job).
//! The README's demo reads the copies checked in under `examples/k8s/`; a test keeps
//! them equal to this generator's output. The benchmark uses it at any size.

use citriage_model::Day;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The bundled example snapshots (the checked-in copies under `examples/k8s/`), embedded
/// so the demo runs from any folder.
pub const BUNDLED: &[(&str, &str)] = &[
    ("failures-2026-11-19.json", include_str!("../../../examples/k8s/failures-2026-11-19.json")),
    ("failures-2026-11-20.json", include_str!("../../../examples/k8s/failures-2026-11-20.json")),
    ("failures-2026-11-21.json", include_str!("../../../examples/k8s/failures-2026-11-21.json")),
    ("flakes-2026-11-19.json", include_str!("../../../examples/k8s/flakes-2026-11-19.json")),
    ("flakes-2026-11-20.json", include_str!("../../../examples/k8s/flakes-2026-11-20.json")),
    ("flakes-2026-11-21.json", include_str!("../../../examples/k8s/flakes-2026-11-21.json")),
];

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next_u64() % v.len() as u64) as usize]
    }
}

const CNIS: &[&str] = &["calico", "cilium", "cilium-eni", "flannel", "kindnet", "amazonvpc", "kuberouter"];
const DISTROS: &[&str] = &[
    "u2204",
    "u2404",
    "deb12",
    "deb13",
    "al2023",
    "flatcar",
    "rhel9",
    "rhel10",
    "rocky10",
    "u2404arm64",
    "rhel10arm64",
];

/// Job families: (template, failing-days range, flakes consistency range). `{i}` is an
/// index, `{cni}`/`{distro}` pick from the lists above, `{k}` a minor version.
/// (name template, failing-days range, consistency range).
type Family = (&'static str, (u32, u32), (f64, f64));

const FAMILIES: &[Family] = &[
    ("e2e-kops-grid-{cni}-{distro}-k{k}", (148, 158), (0.55, 0.98)),
    ("e2e-kops-grid-gce-{cni}-{distro}-k{k}", (40, 160), (0.6, 0.99)),
    ("e2e-kops-aws-upgrade-k{k}-ko{k}-to-klatest-kolatest-many-addons", (31, 70), (0.7, 0.99)),
    ("e2e-kops-pipeline-updown-kops{k}", (35, 60), (0.8, 0.99)),
    ("e2e-kops-staging-registry-{cloud}", (140, 150), (0.8, 0.99)),
    ("e2e-ci-kubernetes-kops-{cni}-canary-{i}", (32, 90), (0.7, 0.99)),
    ("periodic-cluster-api-provider-aws-e2e-k8s-ci-artifacts-{i}", (60, 75), (0.5, 0.95)),
    ("periodic-cluster-api-provider-aws-eks-e2e-release-2-{i}", (40, 50), (0.6, 0.95)),
    ("periodic-cluster-api-provider-azure-conformance-{i}", (33, 45), (0.4, 0.9)),
    ("periodic-cluster-api-provider-digitalocean-e2e-release-1-{i}", (720, 760), (0.9, 1.0)),
    ("periodic-cluster-api-provider-vsphere-e2e-conformance-{i}", (31, 40), (0.5, 0.9)),
    ("periodic-cluster-api-addon-provider-helm-e2e-{i}", (35, 50), (0.7, 0.95)),
    ("ci-gcp-compute-persistent-disk-csi-driver-e2e-{variant}", (120, 140), (0.6, 0.95)),
    ("canary-external-health-monitor-push-images-{i}", (30, 35), (0.9, 1.0)),
    ("post-external-snapshot-metadata-push-images-{i}", (31, 40), (0.9, 1.0)),
    ("canary-nfs-subdir-external-provisioner-push-images-{i}", (31, 33), (0.9, 1.0)),
    ("post-descheduler-push-images-{i}", (44, 50), (0.9, 1.0)),
    ("cloud-provider-azure-master-capz-{variant}", (50, 80), (0.5, 0.9)),
    ("ci-kubernetes-e2e-gci-gce-flaky-{i}", (400, 420), (0.3, 0.6)),
    ("ci-kubernetes-kind-compatibility-versions-feature-gate-test-{i}", (45, 55), (0.7, 0.95)),
    ("ci-kubernetes-e2e-azure-dra-with-workload-{i}", (150, 160), (0.6, 0.9)),
    ("ci-kubernetes-kubemark-100-benchmark-{i}", (300, 320), (0.8, 1.0)),
    ("ci-kubernetes-node-swap-{variant}", (60, 80), (0.5, 0.9)),
    ("ci-kubernetes-coverage-unit-{i}", (31, 40), (0.8, 0.99)),
    ("ci-kubernetes-e2e-windows-containerd-gce-{variant}", (90, 130), (0.4, 0.8)),
    ("ci-kubernetes-e2e-capz-master-windows-{variant}", (60, 90), (0.4, 0.8)),
    ("ci-kubernetes-e2e-ec2-alpha-features-{variant}", (35, 60), (0.5, 0.9)),
    ("ci-kubernetes-integration-master-{i}", (31, 35), (0.6, 0.95)),
    ("ci-kubernetes-integration-arm64-{i}", (31, 40), (0.5, 0.9)),
    ("ci-kubernetes-unit-{variant}", (31, 35), (0.5, 0.9)),
    ("ci-kubernetes-node-e2e-containerd-{variant}", (40, 90), (0.3, 0.8)),
    ("ci-kubernetes-e2e-gce-{variant}", (31, 200), (0.5, 0.99)),
    ("pr:pull-kubernetes-e2e-gce-{variant}", (31, 45), (0.6, 0.99)),
    ("pr:pull-kubernetes-unit-{variant}", (31, 35), (0.6, 0.99)),
    ("pr:pull-release-notes-{variant}", (31, 33), (0.9, 1.0)),
    ("periodic-s390x-k8s-e2e-conformance-{i}", (60, 90), (0.5, 0.9)),
    ("periodic-ppc64le-conformance-{i}", (40, 100), (0.5, 0.9)),
    ("periodic-kind-e2e-arm64-{i}", (31, 50), (0.5, 0.9)),
    ("periodic-minikube-integration-{variant}", (31, 60), (0.5, 0.9)),
    ("periodic-kueue-test-e2e-{variant}", (31, 45), (0.6, 0.95)),
    ("ci-etcd-robustness-{variant}", (31, 50), (0.6, 0.95)),
    ("ci-perf-tests-push-images-{i}", (40, 50), (0.9, 1.0)),
    ("post-minikube-kicbase-image-{i}", (60, 70), (0.9, 1.0)),
    ("ci-cloud-provider-kind-e2e-{i}", (31, 40), (0.7, 0.95)),
    ("post-apiserver-network-proxy-push-images-{i}", (31, 40), (0.9, 1.0)),
    ("ci-cri-tools-e2e-{variant}", (31, 120), (0.6, 0.95)),
    ("periodic-kwok-e2e-{variant}", (31, 60), (0.6, 0.95)),
    ("ci-kjob-release-0-1-{i}", (400, 420), (0.9, 1.0)),
];

const VARIANTS: &[&str] = &[
    "serial",
    "alpha",
    "ipv6",
    "slow",
    "reboot",
    "cos",
    "ubuntu",
    "containerd",
    "dual-stack",
    "ha-master",
    "canary",
    "arm64",
    "beta",
    "1-34",
    "1-35",
];
const CLOUDS: &[&str] = &["azure", "gcp", "aws"];

const E2E_TESTS: &[&str] = &[
    "Kubernetes e2e suite.[It] [sig-network] Services should serve endpoints on same port and different protocols",
    "Kubernetes e2e suite.[It] [sig-storage] CSI Mock volume expansion should expand volume by restarting pod",
    "Kubernetes e2e suite.[It] [sig-node] Pods should run through the lifecycle of Pods and PodStatus",
    "Kubernetes e2e suite.[It] [sig-apps] Deployment should run the lifecycle of a Deployment",
    "Kubernetes e2e suite.[It] [sig-scheduling] SchedulerPreemption [Serial] validates basic preemption works",
    "Kubernetes e2e suite.[It] [sig-network] Networking Granular Checks: Services should function for node-Service: udp",
    "Kubernetes e2e suite.[It] [sig-storage] [Flaky] Volume snapshot restore should survive a kubelet restart",
    "Kubernetes e2e suite.[It] [sig-api-machinery] Garbage collector should orphan pods created by rc",
];
const UNIT_TESTS: &[&str] = &[
    "k8s.io/kubernetes/pkg/kubectl/cmd/drain.TestDrain",
    "k8s.io/kubernetes/pkg/kubelet/volumemanager.TestVolumeManagerReconcile",
    "k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset.TestNoRestraint",
    "k8s.io/apiserver/pkg/storage/cacher.TestWatchCacheBookmarks",
    "k8s.io/kubernetes/test/integration/apiserver/apply.TestApplyStatus",
];

fn fill(template: &str, i: usize, rng: &mut Rng) -> String {
    let mut s = template.replace("{i}", &(i + 1).to_string());
    if s.contains("{cni}") {
        s = s.replacen("{cni}", rng.pick::<&str>(CNIS), 1);
    }
    if s.contains("{distro}") {
        s = s.replacen("{distro}", rng.pick::<&str>(DISTROS), 1);
    }
    while s.contains("{k}") {
        let k = rng.range(32, 35).to_string();
        s = s.replacen("{k}", &k, 1);
    }
    if s.contains("{variant}") {
        s = s.replacen("{variant}", rng.pick::<&str>(VARIANTS), 1);
    }
    if s.contains("{cloud}") {
        s = s.replacen("{cloud}", rng.pick::<&str>(CLOUDS), 1);
    }
    s
}

/// One job of the generated world, with its figures on the newest day.
#[derive(Debug, Clone)]
struct GenJob {
    days: u32,
    consistency: f64,
    tests: BTreeMap<String, u64>,
    /// Index of the family, for planting.
    family: usize,
}

/// Generated snapshots: `(file name, JSON text)` for every dataset and day.
pub fn generate(jobs: usize, days: usize, end: Day, seed: u64) -> Vec<(String, String)> {
    let mut rng = Rng::new(seed);
    let mut world: BTreeMap<String, GenJob> = BTreeMap::new();
    let mut attempts = 0usize;
    while world.len() < jobs && attempts < jobs * 20 {
        attempts += 1;
        // The kops grid dominates the real dashboards; weight it the same way.
        let fam =
            if rng.chance(0.4) { rng.range(0, 1) as usize } else { (rng.next_u64() % FAMILIES.len() as u64) as usize };
        let (tpl, (dlo, dhi), (clo, chi)) = FAMILIES[fam];
        let idx = (rng.next_u64() % (1 + jobs as u64 / 8)) as usize;
        let mut name = fill(tpl, idx, &mut rng);
        if world.contains_key(&name) {
            name = format!("{name}-{}", attempts);
        }
        let days = rng.range(u64::from(dlo), u64::from(dhi)) as u32;
        let consistency = ((clo + (chi - clo) * (rng.range(0, 1000) as f64 / 1000.0)) * 1000.0).round() / 1000.0;
        let mut tests = BTreeMap::new();
        let flaky = consistency < 1.0;
        if flaky {
            let pool: &[&str] =
                if name.contains("unit") || name.contains("integration") { UNIT_TESTS } else { E2E_TESTS };
            for _ in 0..rng.range(1, 3) {
                tests.insert(rng.pick(pool).to_string(), rng.range(1, 4));
            }
            if name.contains("kops") && rng.chance(0.6) {
                tests.insert("Up".into(), rng.range(1, 3));
            }
            if name.contains("node-e2e") {
                tests.insert("Node Tests".into(), rng.range(1, 2));
            }
            if name.contains("vsphere") {
                tests.insert("Preparation hack_e2e_sh".into(), 1);
            }
            if name.contains("kops-aws") {
                tests.insert("diffResources".into(), 1);
            }
        }
        world.insert(name, GenJob { days, consistency, tests, family: fam });
    }
    // Planted: a brand-new kops lane family, present only on the newest day.
    let new_lane: Vec<String> = (0..(jobs / 20).clamp(3, 2000))
        .map(|i| {
            format!(
                "e2e-kops-grid-gce-{}-{}-k35-ko35{}",
                CNIS[i % CNIS.len()],
                DISTROS[(i / CNIS.len()) % DISTROS.len()],
                if i >= CNIS.len() * DISTROS.len() { format!("-{i}") } else { String::new() }
            )
        })
        .collect();
    let names: Vec<String> = world.keys().cloned().collect();
    // Planted day-to-day events on the newest day, chosen deterministically.
    let recovered: Vec<&String> = names.iter().step_by(37).take(3).collect();
    let reset: Vec<&String> = names.iter().skip(5).step_by(41).take(2).collect();
    let reappearing: Option<&String> = names.iter().skip(11).step_by(53).next();
    let mut out = Vec::new();
    for d in 0..days {
        let day = end.plus(d as i64 + 1 - days as i64);
        let back = (days - 1 - d) as u32; // days before the newest day
        let newest = back == 0;
        let mut failures = String::from("{");
        let mut flakes = String::from("{");
        let mut first_f = true;
        let mut first_k = true;
        for (name, j) in &world {
            let is_recovered = recovered.contains(&name);
            if newest && is_recovered {
                continue;
            }
            if Some(name) == reappearing && back == 1 && days >= 3 {
                continue;
            }
            let mut fd = j.days.saturating_sub(back);
            if newest && reset.contains(&name) {
                fd = 31; // passed in between, failing again since
            }
            if fd > 30 || is_recovered {
                let key = if let Some(rest) = name.strip_prefix("pr:") { format!("pr:{rest}") } else { name.clone() };
                let _ = write!(
                    failures,
                    "{}\n  {}: {{\"failing_days\": {}}}",
                    if first_f { "" } else { "," },
                    json_str(&key),
                    fd.max(31)
                );
                first_f = false;
            }
            // Flakes: only ci-* and pr: jobs in kettle; the example keeps them all so
            // every category shows, plus a paradox and the by-design lane.
            let drift = if back > 0 && j.family % 5 == 0 { 0.15 } else { 0.0 };
            let mut c = (j.consistency + drift).min(1.0);
            let mut fl = ((1.0 - c) * 20.0).round() as u64;
            let mut tests = j.tests.clone();
            if name.contains("kjob") {
                c = 1.0;
                fl = 0;
                tests.insert("Kubernetes e2e suite.[It] [sig-apps] Job should run a job to completion".into(), 2);
            }
            let tf = if tests.is_empty() {
                "null".to_string()
            } else {
                let items: Vec<String> = tests.iter().map(|(t, n)| format!("{}: {n}", json_str(t))).collect();
                format!("{{{}}}", items.join(", "))
            };
            let _ = write!(
                flakes,
                "{}\n  {}: {{\"consistency\": {}, \"flakes\": {fl}, \"test_flakes\": {tf}}}",
                if first_k { "" } else { "," },
                json_str(name),
                fmt_consistency(c)
            );
            first_k = false;
        }
        if newest {
            for (i, n) in new_lane.iter().enumerate() {
                let _ = write!(failures, ",\n  {}: {{\"failing_days\": {}}}", json_str(n), i % 4);
            }
        }
        failures.push_str("\n}\n");
        flakes.push_str("\n}\n");
        out.push((format!("failures-{day}.json"), failures));
        out.push((format!("flakes-{day}.json"), flakes));
    }
    out.sort();
    out
}

fn fmt_consistency(c: f64) -> String {
    let s = format!("{c:.3}");
    let s = s.trim_end_matches('0');
    let s = s.strip_suffix('.').map(|x| format!("{x}.0")).unwrap_or_else(|| s.to_string());
    s
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The example set checked in under `examples/k8s/`.
pub fn bundled() -> Vec<(String, String)> {
    generate(260, 3, Day::from_ymd(2026, 11, 21).unwrap_or(Day(0)), 20_261_121)
}
