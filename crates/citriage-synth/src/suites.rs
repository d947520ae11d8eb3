//! Test-name pools for each suite family (Ginkgo e2e specs, Go unit and
//! integration tests, kubetest harness steps, minikube, CAPI, OpenShift) and
//! the per-job test list built from them.

use crate::catalog::SuiteKind;
use crate::rng::Rng;

/// One test a job runs.
#[derive(Clone, Debug)]
pub struct TestDef {
    /// JUnit `classname` (Go package, Ginkgo suite, `e2e.go`...).
    pub classname: String,
    pub name: String,
    /// Skipped in every run (Ginkgo focus/skip, `t.Skip`).
    pub skipped: bool,
    /// Index into `catalog::FLAKY` when this test is a planted flaky test.
    pub flaky: Option<usize>,
}

const SIG_SUBJECTS: &[(&str, &str)] = &[
    ("sig-node", "Pods"),
    ("sig-node", "Container Runtime"),
    ("sig-node", "Probing container"),
    ("sig-node", "Security Context"),
    ("sig-node", "Kubelet"),
    ("sig-node", "Downward API volume"),
    ("sig-node", "Pod InPlace Resize Container"),
    ("sig-storage", "CSI Volumes"),
    ("sig-storage", "PersistentVolumes-local"),
    ("sig-storage", "Dynamic Provisioning"),
    ("sig-storage", "Volume expand"),
    ("sig-storage", "Subpath"),
    ("sig-storage", "VolumeAttributesClass"),
    ("sig-network", "Services"),
    ("sig-network", "DNS"),
    ("sig-network", "Networking"),
    ("sig-network", "EndpointSlice"),
    ("sig-network", "NetworkPolicy"),
    ("sig-network", "Conntrack"),
    ("sig-apps", "Deployment"),
    ("sig-apps", "StatefulSet"),
    ("sig-apps", "DaemonSet"),
    ("sig-apps", "Job"),
    ("sig-apps", "CronJob"),
    ("sig-apps", "DisruptionController"),
    ("sig-api-machinery", "CustomResourceDefinition resources"),
    ("sig-api-machinery", "Garbage collector"),
    ("sig-api-machinery", "ResourceQuota"),
    ("sig-api-machinery", "Watchers"),
    ("sig-api-machinery", "AdmissionWebhook"),
    ("sig-api-machinery", "ValidatingAdmissionPolicy"),
    ("sig-cli", "Kubectl client"),
    ("sig-cli", "Kubectl logs"),
    ("sig-auth", "ServiceAccounts"),
    ("sig-auth", "Certificates API"),
    ("sig-scheduling", "SchedulerPredicates"),
    ("sig-scheduling", "SchedulerPreemption"),
    ("sig-scheduling", "LimitRange"),
    ("sig-instrumentation", "Events API"),
    ("sig-instrumentation", "MetricsGrabber"),
    ("sig-autoscaling", "Horizontal pod autoscaling"),
    ("sig-windows", "Windows volume mounts"),
];
const VERBS: &[&str] = &[
    "create",
    "update",
    "patch",
    "delete",
    "list",
    "watch",
    "mount",
    "expose",
    "schedule",
    "evict",
    "restart",
    "resize",
    "scale",
    "roll back",
    "replace",
    "adopt",
];
const OBJECTS: &[&str] = &[
    "a pod with a readiness probe",
    "a headless service",
    "a persistent volume claim",
    "a configmap volume",
    "an ephemeral container",
    "a rolling update",
    "a pod disruption budget",
    "an endpoint slice",
    "a service account token",
    "a custom resource",
    "a cron job",
    "a node with taints",
    "a hostPath volume",
    "a projected secret",
    "a pod with init containers",
    "a sidecar container",
    "a resource claim",
    "a namespace",
];
const QUALS: &[&str] = &[
    "",
    "",
    " with defaults",
    " in a new namespace",
    " after kubelet restart",
    " across nodes",
    " with multiple containers",
    " [Serial]",
    " [Slow]",
];
const TAGS: &[&str] =
    &["", "", " [Conformance]", " [NodeConformance]", " [LinuxOnly]", " [Feature:SidecarContainers]", " [Disruptive]"];

const KK_PACKAGES: &[&str] = &[
    "k8s.io/kubernetes/pkg/kubelet",
    "k8s.io/kubernetes/pkg/kubelet/cm",
    "k8s.io/kubernetes/pkg/kubelet/kuberuntime",
    "k8s.io/kubernetes/pkg/kubelet/volumemanager/reconciler",
    "k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources",
    "k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding",
    "k8s.io/kubernetes/pkg/controller/endpointslice",
    "k8s.io/kubernetes/pkg/controller/garbagecollector",
    "k8s.io/kubernetes/pkg/controller/podgc",
    "k8s.io/kubernetes/pkg/proxy/iptables",
    "k8s.io/kubernetes/pkg/proxy/nftables",
    "k8s.io/kubernetes/pkg/volume/csi",
    "k8s.io/kubernetes/pkg/registry/core/pod",
    "k8s.io/kubernetes/pkg/apis/core/validation",
    "k8s.io/apiserver/pkg/storage/cacher",
    "k8s.io/apiserver/pkg/server/filters",
    "k8s.io/apiserver/pkg/admission/plugin/policy/validating",
    "k8s.io/client-go/tools/cache",
    "k8s.io/kubectl/pkg/drain",
    "k8s.io/kubectl/pkg/cmd/apply",
    "k8s.io/component-base/featuregate",
    "k8s.io/dynamic-resource-allocation/resourceslice",
];
const INT_PACKAGES: &[&str] = &[
    "k8s.io/kubernetes/test/integration/apiserver",
    "k8s.io/kubernetes/test/integration/scheduler",
    "k8s.io/kubernetes/test/integration/garbagecollector",
    "k8s.io/kubernetes/test/integration/volume",
    "k8s.io/kubernetes/test/integration/quota",
    "k8s.io/kubernetes/test/integration/serviceaccount",
    "k8s.io/kubernetes/test/integration/apimachinery",
    "k8s.io/kubernetes/test/integration/dra",
    "k8s.io/kubernetes/test/integration/pods",
    "k8s.io/kubernetes/test/integration/storageversionmigrator",
];
const ETCD_PACKAGES: &[&str] = &[
    "go.etcd.io/etcd/server/v3/etcdserver",
    "go.etcd.io/etcd/server/v3/storage/mvcc",
    "go.etcd.io/etcd/client/v3",
    "go.etcd.io/etcd/tests/v3/integration",
    "go.etcd.io/etcd/tests/v3/robustness",
];
const GO_VERBS: &[&str] = &[
    "Reconcile",
    "Sync",
    "Handle",
    "Validate",
    "Convert",
    "Admit",
    "Schedule",
    "Evict",
    "Mount",
    "Watch",
    "List",
    "Update",
    "Patch",
    "Compute",
    "Parse",
    "Merge",
    "Prune",
    "Resolve",
];
const GO_NOUNS: &[&str] = &[
    "Pod",
    "Node",
    "Volume",
    "Lease",
    "Endpoints",
    "Deployment",
    "Service",
    "Quota",
    "Token",
    "Cache",
    "Config",
    "Status",
    "Conditions",
    "Selector",
    "Claim",
    "Slice",
    "Manifest",
];
const GO_SUFFIX: &[&str] = &["", "", "WithTimeout", "Concurrently", "Fallback", "AfterRestart", "Errors", "Defaults"];
const GO_CASES: &[&str] = &[
    "nil_input",
    "empty_list",
    "single_item",
    "conflict",
    "timeout",
    "invalid_spec",
    "happy_path",
    "retry_on_conflict",
    "stale_cache",
    "missing_owner",
];
const MINIKUBE_TESTS: &[&str] = &[
    "TestFunctional/parallel/ServiceCmd",
    "TestFunctional/parallel/DashboardCmd",
    "TestFunctional/parallel/MountCmd/any-port",
    "TestFunctional/serial/SoftStart",
    "TestMultiControlPlane/serial/StartCluster",
    "TestMultiControlPlane/serial/DeleteSecondaryNode",
    "TestMultiNode/serial/FreshStart2Nodes",
    "TestStartStop/group/old-k8s-version/serial/FirstStart",
    "TestStartStop/group/embed-certs/serial/SecondStart",
    "TestAddons/parallel/Ingress",
    "TestAddons/parallel/CSI",
    "TestNetworkPlugins/group/calico/Start",
    "TestNetworkPlugins/group/kindnet/DNS",
    "TestDownloadOnly/v1.35.0/preload-exists",
    "TestErrorSpam/setup",
    "TestPause/serial/Start",
];
const OPENSHIFT_AREAS: &[&str] = &[
    "sig-network",
    "sig-storage",
    "sig-apps",
    "sig-auth",
    "sig-node",
    "sig-cli",
    "sig-arch",
    "sig-api-machinery",
    "sig-imageregistry",
    "sig-operator",
];

fn ginkgo_name(r: &mut Rng, flaky_lane: bool) -> String {
    let (sig, subj) = SIG_SUBJECTS[r.index(SIG_SUBJECTS.len())];
    let tag = if flaky_lane { " [Flaky]" } else { r.pick_str(TAGS) };
    format!("[It] [{sig}] {subj} should {} {}{}{tag}", r.pick_str(VERBS), r.pick_str(OBJECTS), r.pick_str(QUALS))
}

fn go_name(r: &mut Rng) -> String {
    let mut s = format!("Test{}{}{}", r.pick_str(GO_VERBS), r.pick_str(GO_NOUNS), r.pick_str(GO_SUFFIX));
    if r.chance(0.3) {
        s.push('/');
        s.push_str(r.pick_str(GO_CASES));
    }
    s
}

/// Harness steps kubetest writes into `junit_runner.xml`, in run order.
pub const KUBETEST_STEPS: &[&str] = &[
    "TearDown Previous",
    "Up",
    "test setup",
    "Node Tests",
    "DumpClusterLogs",
    "diffResources",
    "TearDown",
    "Deferred TearDown",
];
/// Harness steps of kubetest2-based (kops) runs.
pub const KUBETEST2_STEPS: &[&str] = &["Build", "Up", "Test", "DumpClusterLogs", "Down"];

/// Builds the job's test list: `n` runnable tests (plus a share of always
/// skipped ones for Ginkgo), names unique within the job.
pub fn build_suite(kind: SuiteKind, r: &mut Rng, n: usize, flaky_lane: bool, repo: &str) -> Vec<TestDef> {
    let mut out: Vec<TestDef> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut push = |out: &mut Vec<TestDef>, classname: String, name: String, skipped: bool| {
        if seen.insert(name.clone()) {
            out.push(TestDef { classname, name, skipped, flaky: None });
        }
    };
    let n = n.max(1);
    let mut guard = 0;
    match kind {
        SuiteKind::Ginkgo | SuiteKind::Kubetest | SuiteKind::Kops | SuiteKind::Capi => {
            let class = match kind {
                SuiteKind::Capi => "capi-e2e",
                _ => "Kubernetes e2e suite",
            };
            push(&mut out, class.to_string(), "[SynchronizedBeforeSuite]".to_string(), false);
            while out.len() < n + 1 && guard < n * 20 {
                guard += 1;
                let name = ginkgo_name(r, flaky_lane);
                push(&mut out, class.to_string(), name, false);
            }
            // Ginkgo junit also lists the specs that were skipped by focus.
            let skipped = n / 4;
            let base = out.len();
            while out.len() < base + skipped && guard < n * 40 {
                guard += 1;
                let name = ginkgo_name(r, false);
                push(&mut out, class.to_string(), name, true);
            }
            push(&mut out, class.to_string(), "[SynchronizedAfterSuite]".to_string(), false);
        }
        SuiteKind::GoUnit | SuiteKind::GoIntegration => {
            let pkgs: &[&str] = if repo.contains("etcd") {
                ETCD_PACKAGES
            } else if kind == SuiteKind::GoIntegration {
                INT_PACKAGES
            } else {
                KK_PACKAGES
            };
            while out.len() < n && guard < n * 20 {
                guard += 1;
                let pkg = pkgs[r.index(pkgs.len())].to_string();
                let name = go_name(r);
                let skipped = r.chance(0.03);
                push(&mut out, pkg, name, skipped);
            }
        }
        SuiteKind::Minikube => {
            for t in MINIKUBE_TESTS.iter().take(n.max(4)) {
                push(&mut out, "k8s.io/minikube/test/integration".to_string(), t.to_string(), false);
            }
        }
        SuiteKind::OpenShift => {
            while out.len() < n && guard < n * 20 {
                guard += 1;
                let area = r.pick_str(OPENSHIFT_AREAS);
                let (_, subj) = SIG_SUBJECTS[r.index(SIG_SUBJECTS.len())];
                let name = format!(
                    "[{area}] {subj} should {} {} [Suite:openshift/conformance/parallel]",
                    r.pick_str(VERBS),
                    r.pick_str(OBJECTS)
                );
                push(&mut out, "openshift-tests".to_string(), name, false);
            }
        }
        SuiteKind::ImageBuild => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_have_unique_names() {
        let mut r = Rng::new(5);
        for kind in
            [SuiteKind::Ginkgo, SuiteKind::GoUnit, SuiteKind::GoIntegration, SuiteKind::Minikube, SuiteKind::OpenShift]
        {
            let s = build_suite(kind, &mut r, 30, false, "kubernetes");
            let mut names: Vec<&str> = s.iter().map(|t| t.name.as_str()).collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(n, names.len());
            assert!(n >= 4);
        }
    }
}
