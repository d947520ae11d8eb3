//! The built-in rules agree with the runbook's reference `categorize()`: a direct
//! hand translation of it here, golden names for every rule, a property test over
//! generated names, and — when the seed runbook and python3 are present — the
//! reference Python function itself.

use citriage_analysis::RuleSet;
use proptest::prelude::*;
use std::path::PathBuf;

/// The runbook's categorizer, translated line by line (Python precedence written out).
fn reference(job: &str) -> &'static str {
    let j = job.to_lowercase();
    let c = |s: &str| j.contains(s);
    let s = |p: &str| j.starts_with(p);
    if s("e2e-kops-grid-gce-") {
        return "kops-grid-gce-new";
    }
    if s("e2e-kops-grid-") {
        return "kops-grid-legacy";
    }
    if s("e2e-kops-pipeline") {
        return "kops-pipeline";
    }
    if s("e2e-kops-staging-registry") {
        return "kops-staging-registry";
    }
    if s("e2e-kops-aws-") {
        return "kops-aws";
    }
    if s("e2e-ci-kubernetes-kops-") {
        return "kops-canary";
    }
    if s("ci-kubernetes-kops-") {
        return "kops-ci-kubernetes";
    }
    if c("kops") {
        return "kops-other";
    }
    if c("cluster-api-provider-aws-eks") {
        return "capa-eks";
    }
    if c("cluster-api-provider-aws") {
        return "capa";
    }
    if c("cluster-api-provider-azure") {
        return "capz";
    }
    if c("cluster-api-provider-digitalocean") {
        return "capdo";
    }
    if c("cluster-api-provider-vsphere") {
        return "capv";
    }
    if c("cluster-api-addon-provider") {
        return "capi-addons";
    }
    if c("gcp-compute-persistent-disk-csi") || c("gce-pd-csi") {
        return "csi-gcp-pd";
    }
    if c("azuredisk-csi") {
        return "csi-azure-disk";
    }
    if c("snapshot-metadata") {
        return "csi-snapshot-metadata";
    }
    if c("volume-group-snapshots") {
        return "csi-vgs";
    }
    if c("external-health-monitor") {
        return "csi-health-monitor";
    }
    if c("nfs-subdir") {
        return "csi-nfs-subdir";
    }
    if c("nfs-ganesha") {
        return "csi-nfs-ganesha";
    }
    if c("object-storage-interface") {
        return "cosi";
    }
    if c("descheduler") {
        return "descheduler";
    }
    if s("cloud-provider-azure-") {
        return "cloud-provider-azure";
    }
    if c("gci-gce-flaky") {
        return "k/k-gci-gce-flaky";
    }
    if c("kind-network-deprecate") {
        return "k/k-kind-network";
    }
    if c("kind-snapshot-metadata") {
        return "k/k-kind-snap-metadata";
    }
    if c("kind-skip-version-upgrade") || c("kind-compatibility-versions") {
        return "k/k-kind-version-skew";
    }
    if c("azure-dra") {
        return "k/k-dra-azure";
    }
    if c("kubemark") {
        return "k/k-kubemark";
    }
    if c("node-swap") {
        return "k/k-node-swap";
    }
    if s("ci-kubernetes-coverage") {
        return "k/k-coverage";
    }
    if s("ci-kubernetes-e2e-windows") || c("capz-master-windows") || (c("capz-1-3") && c("windows")) {
        return "k/k-windows";
    }
    if s("ci-kubernetes-e2e-ec2") || s("pr:pull-kubernetes-e2e-ec2") {
        return "k/k-ec2";
    }
    if c("integration-master") {
        return "k/k-integration-master";
    }
    if c("integration") && (c("1-3") || c("s390x") || c("ppc64le") || c("arm64")) {
        return "k/k-integration-arch";
    }
    if c("integration") {
        return "k/k-integration";
    }
    if s("ci-kubernetes-unit") || s("pr:pull-kubernetes-unit") {
        return "k/k-unit";
    }
    if c("node-e2e") {
        return "k/k-node-e2e";
    }
    if c("kubernetes-conformance") {
        return "k/k-conformance";
    }
    if s("pr:pull-kubernetes-") {
        return "k/k-presubmit-other";
    }
    if s("ci-kubernetes-") {
        return "k/k-periodic-other";
    }
    if c("s390x") {
        return "s390x";
    }
    if c("ppc64le") {
        return "ppc64le";
    }
    if c("arm64") {
        return "arm64";
    }
    if c("minikube") {
        return "minikube";
    }
    if c("kueue") {
        return "kueue";
    }
    if s("pr:pull-etcd") || s("ci-etcd") {
        return "etcd";
    }
    if c("release-notes") {
        return "release-notes";
    }
    if c("perf-tests") {
        return "k/k-perf-tests";
    }
    if c("image-promo") || c("downloadkubernetes") {
        return "k8s-infra-tooling";
    }
    if c("push-images") || c("kicbase-image") {
        return "push-images";
    }
    if c("cloud-provider-kind") {
        return "cloud-provider-kind";
    }
    if c("apiserver-network-proxy") {
        return "apiserver-network-proxy";
    }
    if c("usage-metrics-collector") {
        return "usage-metrics-collector";
    }
    "other"
}

/// One name per rule, plus the precedence traps of the Windows rule.
const GOLDEN: &[(&str, &str)] = &[
    ("e2e-kops-grid-gce-calico-u2404-k35-ko35", "kops-grid-gce-new"),
    ("e2e-kops-grid-cilium-rhel10-k34", "kops-grid-legacy"),
    ("e2e-kops-pipeline-updown-kops134", "kops-pipeline"),
    ("e2e-kops-staging-registry-azure", "kops-staging-registry"),
    ("e2e-kops-aws-upgrade-k133-ko133-to-k134-ko134", "kops-aws"),
    ("e2e-ci-kubernetes-kops-cilium-canary", "kops-canary"),
    ("ci-kubernetes-kops-gce-ipv6", "kops-ci-kubernetes"),
    ("pr:pull-kops-e2e-k8s-gce", "kops-other"),
    ("periodic-cluster-api-provider-aws-eks-e2e", "capa-eks"),
    ("periodic-cluster-api-provider-aws-e2e", "capa"),
    ("periodic-cluster-api-provider-azure-conformance", "capz"),
    ("periodic-cluster-api-provider-digitalocean-e2e-release-1-5", "capdo"),
    ("periodic-cluster-api-provider-vsphere-e2e", "capv"),
    ("periodic-cluster-api-addon-provider-helm-e2e", "capi-addons"),
    ("ci-gcp-compute-persistent-disk-csi-driver-e2e", "csi-gcp-pd"),
    ("pr:pull-gce-pd-csi-e2e", "csi-gcp-pd"),
    ("pull-azuredisk-csi-driver-e2e", "csi-azure-disk"),
    ("post-external-snapshot-metadata-push-images", "csi-snapshot-metadata"),
    ("ci-volume-group-snapshots-e2e", "csi-vgs"),
    ("canary-external-health-monitor-push-images", "csi-health-monitor"),
    ("canary-nfs-subdir-external-provisioner-push-images", "csi-nfs-subdir"),
    ("canary-nfs-ganesha-server-and-external-provisioner", "csi-nfs-ganesha"),
    ("post-container-object-storage-interface-push-images", "cosi"),
    ("post-descheduler-push-images", "descheduler"),
    ("cloud-provider-azure-master-capz", "cloud-provider-azure"),
    ("ci-kubernetes-e2e-gci-gce-flaky", "k/k-gci-gce-flaky"),
    ("ci-kubernetes-kind-network-deprecate-ipvs", "k/k-kind-network"),
    // Shadowed in the reference: `snapshot-metadata` matches first, so the
    // `k/k-kind-snap-metadata` rule never fires; reproduced as is.
    ("pr:pull-kubernetes-kind-snapshot-metadata", "csi-snapshot-metadata"),
    ("ci-kubernetes-kind-skip-version-upgrade", "k/k-kind-version-skew"),
    ("ci-kubernetes-kind-compatibility-versions-feature-gate-test", "k/k-kind-version-skew"),
    ("ci-kubernetes-e2e-azure-dra-scalability", "k/k-dra-azure"),
    ("ci-kubernetes-kubemark-100-benchmark", "k/k-kubemark"),
    ("ci-kubernetes-node-swap-fedora", "k/k-node-swap"),
    ("ci-kubernetes-coverage-unit", "k/k-coverage"),
    ("ci-kubernetes-e2e-windows-containerd-gce-master", "k/k-windows"),
    ("ci-kubernetes-e2e-capz-master-windows-serial-slow", "k/k-windows"),
    ("capz-1-33-windows", "k/k-windows"),
    // `capz-1-3` without `windows` must not match the Windows rule (and binds tighter than or).
    ("capz-1-33-linux", "other"),
    ("ci-kubernetes-e2e-ec2-alpha-features", "k/k-ec2"),
    ("pr:pull-kubernetes-e2e-ec2-quick", "k/k-ec2"),
    ("ci-kubernetes-integration-master", "k/k-integration-master"),
    ("ci-kubernetes-integration-arm64", "k/k-integration-arch"),
    ("ci-kubernetes-integration-1-34", "k/k-integration-arch"),
    ("ci-kubernetes-integration-go-canary", "k/k-integration"),
    ("ci-kubernetes-unit-ppc64le", "k/k-unit"),
    ("pr:pull-kubernetes-unit", "k/k-unit"),
    ("ci-kubernetes-node-e2e-containerd", "k/k-node-e2e"),
    ("ci-kubernetes-conformance-kind", "k/k-conformance"),
    ("periodic-kubernetes-conformance-image", "k/k-conformance"),
    ("pr:pull-kubernetes-e2e-gce", "k/k-presubmit-other"),
    ("ci-kubernetes-e2e-gce-serial", "k/k-periodic-other"),
    ("periodic-s390x-k8s-e2e", "s390x"),
    ("periodic-ppc64le-conformance", "ppc64le"),
    ("periodic-kind-e2e-arm64", "arm64"),
    ("periodic-minikube-integration-docker", "k/k-integration"),
    ("pr:pull-minikube-build", "minikube"),
    ("periodic-kueue-test-e2e-main", "kueue"),
    ("ci-etcd-robustness-amd64", "etcd"),
    ("pr:pull-etcd-unit-test", "etcd"),
    ("pr:pull-release-notes-lint", "release-notes"),
    ("ci-perf-tests-push-images", "k/k-perf-tests"),
    ("post-k8s-image-promo", "k8s-infra-tooling"),
    ("post-downloadkubernetes-push", "k8s-infra-tooling"),
    ("post-foo-push-images", "push-images"),
    ("post-minikube-kicbase-image", "minikube"),
    ("ci-cloud-provider-kind-e2e", "cloud-provider-kind"),
    ("ci-apiserver-network-proxy-e2e", "apiserver-network-proxy"),
    ("post-apiserver-network-proxy-push-images", "push-images"),
    ("ci-usage-metrics-collector-build", "usage-metrics-collector"),
    ("ci-cri-tools-e2e", "other"),
    ("E2E-KOPS-GRID-GCE-X", "kops-grid-gce-new"),
];

#[test]
fn golden_cases_cover_every_rule() {
    let rules = RuleSet::builtin();
    for (job, want) in GOLDEN {
        assert_eq!(reference(job), *want, "the reference translation disagrees on {job}");
        assert_eq!(rules.categorize(job), *want, "built-in rules disagree on {job}");
    }
    let covered: std::collections::BTreeSet<&str> = GOLDEN.iter().map(|(_, c)| *c).collect();
    for r in &rules.rules {
        if r.category == "k/k-kind-snap-metadata" {
            continue; // unreachable in the reference, see above
        }
        assert!(covered.contains(r.category.as_str()), "no golden case for {}", r.category);
    }
}

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("e2e-kops-grid-gce-".to_string()),
        Just("e2e-kops-grid-".to_string()),
        Just("kops".to_string()),
        Just("e2e-ci-kubernetes-kops-".to_string()),
        Just("ci-kubernetes-".to_string()),
        Just("pr:pull-kubernetes-".to_string()),
        Just("cluster-api-provider-aws".to_string()),
        Just("-eks".to_string()),
        Just("cluster-api-provider-aws-eks".to_string()),
        Just("capz-1-3".to_string()),
        Just("windows".to_string()),
        Just("capz-master-windows".to_string()),
        Just("ci-kubernetes-e2e-windows".to_string()),
        Just("integration".to_string()),
        Just("1-3".to_string()),
        Just("s390x".to_string()),
        Just("ppc64le".to_string()),
        Just("arm64".to_string()),
        Just("unit".to_string()),
        Just("node-e2e".to_string()),
        Just("push-images".to_string()),
        Just("release-notes".to_string()),
        Just("pr:pull-etcd".to_string()),
        Just("ci-etcd".to_string()),
        Just("e2e-ec2".to_string()),
        Just("gce-pd-csi".to_string()),
        Just("nfs-subdir".to_string()),
        Just("kubemark".to_string()),
        Just("cloud-provider-azure-".to_string()),
        Just("cloud-provider-kind".to_string()),
        Just("KOPS".to_string()),
        Just("Windows".to_string()),
        "[a-z0-9-]{0,6}".prop_map(|s| s),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
    #[test]
    fn builtin_rules_match_the_reference(parts in prop::collection::vec(fragment(), 1..6)) {
        let job = parts.join("-");
        let rules = RuleSet::builtin();
        prop_assert_eq!(rules.categorize(&job), reference(&job), "job {}", job);
    }
}

/// Runs the runbook's own Python `categorize()` (extracted from the seed) over many
/// names and compares. Skips with a reason when the seed or python3 is absent.
#[test]
fn agrees_with_the_runbook_python() {
    let seed =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds/k8s-ci-triage-runbook-and-reports.txt");
    let Ok(text) = std::fs::read_to_string(&seed) else {
        eprintln!("skipped: the seed runbook is not beside the checkout ({})", seed.display());
        return;
    };
    let Some(start) = text.find("def categorize(job):") else {
        panic!("the seed runbook has no categorize() function");
    };
    let end = text[start..].find("\ncats = defaultdict(list)").map(|e| start + e).expect("end of categorize()");
    let func = &text[start..end];
    let mut names: Vec<String> = GOLDEN.iter().map(|(j, _)| j.to_string()).collect();
    // Deterministic combinations of tricky fragments.
    let frags = [
        "kops",
        "capz-1-3",
        "windows",
        "integration",
        "1-3",
        "arm64",
        "pr:pull-kubernetes-unit",
        "ci-kubernetes-e2e-ec2",
        "push-images",
        "perf-tests",
        "snapshot-metadata",
        "kind-snapshot-metadata",
        "x",
    ];
    for a in frags {
        for b in frags {
            for c in frags {
                names.push(format!("{a}-{b}-{c}"));
            }
        }
    }
    let input = names.join("\n");
    let script =
        format!("import sys\n{func}\nfor line in sys.stdin.read().split('\\n'):\n    print(categorize(line))\n");
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().map(|mut s| s.write_all(input.as_bytes()));
            child.wait_with_output()
        });
    let Ok(out) = out else {
        eprintln!("skipped: python3 is not available");
        return;
    };
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let got = String::from_utf8_lossy(&out.stdout);
    let rules = RuleSet::builtin();
    let py: Vec<&str> = got.lines().collect();
    assert_eq!(py.len(), names.len());
    for (name, cat) in names.iter().zip(py) {
        assert_eq!(rules.categorize(name), cat, "job {name}");
    }
}
