//! The catalogue of planted failure modes and flaky tests: a data table of
//! patterns (id, class, signature, log-line and JUnit templates) modelled on
//! failure modes seen in Kubernetes and OpenShift CI. Templates carry
//! `{placeholders}` (see `text::Vars`) so that each occurrence is worded a
//! little differently while its signature stays verbatim.

use serde::Serialize;

/// Who is to blame for a failure mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The CI environment (quotas, leases, registries, timeouts).
    Infra,
    /// A bug in the software under test.
    Product,
    /// A bug in the test code itself.
    Test,
    /// Job configuration, pinned images, flags, step registry.
    CiConfig,
    /// Jobs that are expected to fail (e.g. `[Flaky]` focus lanes).
    ByDesign,
    /// The pull request under test broke the build (presubmit-only).
    PrChange,
    /// A flaky test: fails on some runs of the same code, passes on others.
    Flake,
}

/// Where in the build a failure shows up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Before tests run (cluster up, image build, flag parsing).
    Setup,
    /// While tests run.
    Tests,
}

/// What a failure mode does to the JUnit results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JunitEffect {
    /// The build dies before any JUnit is written.
    None,
    /// A harness step (`Up`, `Node Tests`, `Preparation hack_e2e_sh`...) fails.
    Harness(&'static str),
    /// Up to that many of the job's tests fail with the pattern's message.
    Some(u8),
    /// Most tests fail (an environment event, not N separate bugs).
    Mass,
    /// A specific test (appended to the job's suite) fails.
    Named(&'static str),
}

/// One planted failure mode.
#[derive(Debug)]
pub struct Pattern {
    pub id: &'static str,
    pub title: &'static str,
    pub class: Class,
    /// Verbatim text present on every error line this pattern emits.
    pub signature: &'static str,
    pub stage: Stage,
    /// Build-log error lines (each contains `signature`).
    pub errors: &'static [&'static str],
    /// Build-log lines printed right after the errors (context, not errors).
    pub context: &'static [&'static str],
    pub junit: JunitEffect,
    /// Prefer tests whose name contains this (e.g. `[sig-storage]`); empty: any.
    pub affects: &'static str,
    /// JUnit failure message (contains `signature` unless empty).
    pub message: &'static str,
    /// Which public failure mode it imitates.
    pub modelled_on: &'static str,
}

pub const PATTERNS: &[Pattern] = &[
    Pattern {
        id: "image-pin-manifest-unknown",
        title: "Pinned build image was garbage-collected from the registry",
        class: Class::CiConfig,
        signature: "not found: manifest unknown",
        stage: Stage::Setup,
        errors: &["Step #{n}: Error response from daemon: manifest for gcr.io/k8s-staging-test-infra/gcb-docker-gcloud:{pin} not found: manifest unknown"],
        context: &[
            "ERROR: build step {n} \"gcr.io/k8s-staging-test-infra/gcb-docker-gcloud:{pin}\" failed: step exited with non-zero status: 1",
            "ERROR: (gcloud.builds.submit) build {uuid} completed with status \"FAILURE\"",
        ],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "k8s failures report, pattern A (stale gcb-docker-gcloud pins)",
    },
    Pattern {
        id: "hyperdisk-machine-type",
        title: "Storage class needs hyperdisk but workers use a machine type without it",
        class: Class::CiConfig,
        signature: "hyperdisk-balanced disk type cannot be used by",
        stage: Stage::Tests,
        errors: &["{E} controller.go:{line}] CreateVolume failed: googleapi: Error 400: hyperdisk-balanced disk type cannot be used by {machine} machine type., badRequest"],
        context: &["{W} provisioner.go:{line2}] Retrying syncing claim \"{ns}/{vol}\", failure 3"],
        junit: JunitEffect::Some(4),
        affects: "[sig-storage]",
        message: "failed to provision volume with StorageClass \"csi-gcepd-sc-hdb\": rpc error: code = InvalidArgument desc = CreateVolume failed: googleapi: Error 400: hyperdisk-balanced disk type cannot be used by {machine} machine type., badRequest",
        modelled_on: "k8s failures report, GCE PD CSI VAC jobs",
    },
    Pattern {
        id: "boskos-could-not-allocate",
        title: "Boskos pool exhausted: no project/account lease",
        class: Class::Infra,
        signature: "could not allocate host",
        stage: Stage::Setup,
        errors: &["{E} boskos.go:{line}] failed to acquire a {n}-node lease from pool aws-account: could not allocate host after {tries} tries"],
        context: &["{I} boskos.go:{line2}] giving up after {secs}s; pool has 0 free resources"],
        junit: JunitEffect::Harness("Up"),
        affects: "",
        message: "error during up: could not allocate host after {tries} tries",
        modelled_on: "k8s failures report, CAPA release-2.10 boskos exhaustion",
    },
    Pattern {
        id: "admission-no-nodes",
        title: "Admission plugin rejects operator pods while the cluster has no nodes",
        class: Class::Product,
        signature: "the cluster does not have any nodes",
        stage: Stage::Tests,
        errors: &["{E} bootstrap.go:{line}] pods \"{pod}\" is forbidden: autoscaling.openshift.io/ManagementCPUsOverride the cluster does not have any nodes"],
        context: &["level=error msg=\"Bootstrap failed to complete: timed out waiting for the condition\""],
        junit: JunitEffect::Named("[sig-installer] install should succeed: overall"),
        affects: "",
        message: "bootstrap did not complete: pods \"{pod}\" is forbidden: autoscaling.openshift.io/ManagementCPUsOverride the cluster does not have any nodes",
        modelled_on: "OpenShift payload report, TechPreview bootstrap deadlock",
    },
    Pattern {
        id: "crd-enum-unsupported-value",
        title: "Older CRD enum rejects capabilities added by the newer release",
        class: Class::Product,
        signature: "Unsupported value: \"",
        stage: Stage::Tests,
        errors: &["{E} cvo.go:{line}] Error handling openshift-cluster-version/version: ClusterVersion.config.openshift.io \"version\" is invalid: status.capabilities.enabledCapabilities[{i}]: Unsupported value: \"{cap}\": supported values: \"openshift-samples\", \"baremetal\", \"marketplace\", \"Console\", \"Insights\", \"Storage\", \"CSISnapshot\", \"NodeTuning\""],
        context: &["{I} cvo.go:{line2}] Finished syncing cluster version \"openshift-cluster-version/version\" ({dur})"],
        junit: JunitEffect::Named("[sig-cluster-lifecycle] Cluster version operator acknowledges rollback"),
        affects: "",
        message: "ClusterVersion status could not be written: status.capabilities.enabledCapabilities[{i}]: Unsupported value: \"{cap}\"",
        modelled_on: "CVO rollback write-up (CRD enum)",
    },
    Pattern {
        id: "featuregate-missing-version",
        title: "FeatureGate status dropped the outgoing version during an update",
        class: Class::Product,
        signature: "missing desired version",
        stage: Stage::Tests,
        errors: &["{E} simple_featuregate_reader.go:{line}] cluster failed with : unable to determine features: missing desired version \"{ocpver}\" in featuregates.config.openshift.io/cluster"],
        context: &["{I} leaderelection.go:{line2}] failed to renew lease openshift-network-operator/network-operator-lock"],
        junit: JunitEffect::Named("[sig-network] cluster-network-operator should stay Available during hosted control plane update"),
        affects: "",
        message: "operator crash looping: unable to determine features: missing desired version \"{ocpver}\" in featuregates.config.openshift.io/cluster",
        modelled_on: "HyperShift FeatureGate versions write-up",
    },
    Pattern {
        id: "version-pod-deadline",
        title: "Update payload retrieval hides the version pod's real error",
        class: Class::Product,
        signature: "Job was active longer than specified deadline",
        stage: Stage::Tests,
        errors: &["{E} sync_worker.go:{line}] unable to synchronize image (waiting {dur}): Unable to download and prepare the update: deadline exceeded, reason: \"DeadlineExceeded\", message: \"Job was active longer than specified deadline\""],
        context: &["{I} cvo.go:{line2}] ClusterVersion condition RetrievePayload=False reason=RetrievePayload"],
        junit: JunitEffect::Named("[sig-cluster-lifecycle] cluster upgrade should complete in a reasonable time"),
        affects: "",
        message: "RetrievePayload failed: Unable to download and prepare the update: deadline exceeded, reason: \"DeadlineExceeded\", message: \"Job was active longer than specified deadline\"",
        modelled_on: "CVO version-pod errors epic",
    },
    Pattern {
        id: "client-rate-limiter",
        title: "Test framework client QPS too low for parallel cluster creation",
        class: Class::Test,
        signature: "client rate limiter Wait returned an error: context deadline exceeded",
        stage: Stage::Tests,
        errors: &["  clusterctl_helpers.go:{line}: failed to list MachineDeployments for cluster {cluster}: client rate limiter Wait returned an error: context deadline exceeded"],
        context: &["  In [It] at: /home/prow/go/pkg/mod/sigs.k8s.io/cluster-api/test@v1.13.1/framework/clusterctl/clusterctl_helpers.go:{line2}"],
        junit: JunitEffect::Some(2),
        affects: "[It]",
        message: "Timed out after {dur}: client rate limiter Wait returned an error: context deadline exceeded",
        modelled_on: "k8s flakes report, CAPZ HA-cluster rate limit",
    },
    Pattern {
        id: "image-pull-backoff",
        title: "Workers cannot pull the freshly pushed image",
        class: Class::Infra,
        signature: "ImagePullBackOff",
        stage: Stage::Setup,
        errors: &["pod kube-system/kube-proxy-{suffix} on {node} is not ready: container kube-proxy waiting: ImagePullBackOff (Back-off pulling image \"capzci.azurecr.io/kube-proxy:{kver}\")"],
        context: &["{W} wait.go:{line}] {count} of 100 kube-proxy pods not ready after {dur}"],
        junit: JunitEffect::Harness("Up"),
        affects: "",
        message: "cluster never became ready: kube-proxy pods in ImagePullBackOff",
        modelled_on: "k8s failures report, Azure DRA scalability",
    },
    Pattern {
        id: "unknown-flag",
        title: "Job passes a flag the deployer does not define",
        class: Class::CiConfig,
        signature: "unknown flag: --ip-family",
        stage: Stage::Setup,
        errors: &["Error: unknown flag: --ip-family"],
        context: &[
            "Usage:",
            "  kubetest2 ec2 [Flags] [DeployerFlags] -- [TesterArgs]",
        ],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "k8s failures report, kubetest2-ec2 --ip-family",
    },
    Pattern {
        id: "md-win-timeout",
        title: "Windows MachineDeployment never becomes Ready",
        class: Class::Product,
        signature: "timed out waiting for the condition on machinedeployments/",
        stage: Stage::Setup,
        errors: &["error: timed out waiting for the condition on machinedeployments/{cluster}-md-win"],
        context: &["{I} helpers.go:{line}] Windows node kubelet.log is empty (0 bytes)"],
        junit: JunitEffect::Named("[It] Conformance Tests conformance-tests"),
        affects: "",
        message: "machinedeployments/{cluster}-md-win did not become Ready: error: timed out waiting for the condition on machinedeployments/{cluster}-md-win",
        modelled_on: "k8s failures report, Windows CAPZ trio",
    },
    Pattern {
        id: "nft-only-iptables",
        title: "Node bootstrap uses legacy iptables on an nft-only distro",
        class: Class::Product,
        signature: "can't initialize iptables table `nat'",
        stage: Stage::Setup,
        errors: &["nodeup[{hiport}]: cni-iptables-setup.service: iptables v1.8.11 (legacy): can't initialize iptables table `nat': Table does not exist (do you need to insmod?)"],
        context: &[
            "Validation failed: machine \"i-{hex17}\" has not yet joined cluster",
            "{E} validate_cluster.go:{line}] cluster did not validate within {secs}s",
        ],
        junit: JunitEffect::Harness("Up"),
        affects: "",
        message: "kops validate cluster failed: cni-iptables-setup: can't initialize iptables table `nat': Table does not exist",
        modelled_on: "k8s failures report, kops RHEL10/Rocky10 nft",
    },
    Pattern {
        id: "feature-gate-not-in-metrics",
        title: "Release branch feature list still carries a renamed gate",
        class: Class::Product,
        signature: "not found in metrics",
        stage: Stage::Tests,
        errors: &["FAIL: expected feature gate '{gate}' not found in metrics"],
        context: &["    versioned_feature_list_test.go:{line}: compared against release-1.36 reference list"],
        junit: JunitEffect::Named("[It] [sig-api-machinery] compatibility versions feature gates should match the versioned feature list"),
        affects: "",
        message: "expected feature gate '{gate}' not found in metrics",
        modelled_on: "k8s failures report, compatibility-versions feature gate test",
    },
    Pattern {
        id: "apiserver-startup-timeout",
        title: "Integration apiserver misses its 10s start-up poll on slow arches",
        class: Class::Test,
        signature: "apiserver did not become ready",
        stage: Stage::Tests,
        errors: &["    test_server.go:{line}: timed out waiting for the condition: apiserver did not become ready within 10s"],
        context: &["    test_server.go:{line2}: last healthz error: Get \"https://127.0.0.1:{hiport}/healthz\": dial tcp 127.0.0.1:{hiport}: connect: connection refused"],
        junit: JunitEffect::Some(3),
        affects: "",
        message: "test_server.go:{line}: timed out waiting for the condition: apiserver did not become ready within 10s",
        modelled_on: "k8s flakes report, s390x integration start-up",
    },
    Pattern {
        id: "process-timeout",
        title: "Job hit Prow's decoration timeout",
        class: Class::Infra,
        signature: "Process did not finish before",
        stage: Stage::Tests,
        errors: &["{\"component\":\"entrypoint\",\"file\":\"sigs.k8s.io/prow/pkg/entrypoint/run.go:169\",\"func\":\"sigs.k8s.io/prow/pkg/entrypoint.Options.ExecuteProcess\",\"level\":\"error\",\"msg\":\"Process did not finish before 2h0m0s timeout\",\"severity\":\"error\",\"time\":\"{ts}\"}"],
        context: &["{\"component\":\"entrypoint\",\"level\":\"error\",\"msg\":\"Process gracefully exited before 15m0s grace period\",\"severity\":\"error\",\"time\":\"{ts}\"}"],
        junit: JunitEffect::Named("Timeout"),
        affects: "",
        message: "Process did not finish before 2h0m0s timeout",
        modelled_on: "Prow entrypoint timeout",
    },
    Pattern {
        id: "windows-empty-volume-id",
        title: "Snapshot-restored NTFS volume has no target on Windows",
        class: Class::Test,
        signature: "resolved empty volumeID for mountPath",
        stage: Stage::Tests,
        errors: &["  provisioning.go:{line}: resolved empty volumeID for mountPath \"C:\\\\mnt\\\\volume{n}\""],
        context: &["  In [It] at: k8s.io/kubernetes/test/e2e/storage/testsuites/provisioning.go:{line2}"],
        junit: JunitEffect::Some(2),
        affects: "[sig-storage]",
        message: "resolved empty volumeID for mountPath \"C:\\\\mnt\\\\volume{n}\"",
        modelled_on: "k8s failures report, GCE PD CSI Windows snapshot restore",
    },
    Pattern {
        id: "dockerhub-rate-limit",
        title: "Anonymous Docker Hub pulls rate-limited",
        class: Class::Infra,
        signature: "toomanyrequests: You have reached your pull rate limit",
        stage: Stage::Setup,
        errors: &["Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading"],
        context: &["! StartHost failed, but will try again: creating host: pulling base image: {dur}"],
        junit: JunitEffect::Some(3),
        affects: "",
        message: "docker pull failed: toomanyrequests: You have reached your pull rate limit",
        modelled_on: "k8s flakes report, minikube Docker Hub rate limit",
    },
    Pattern {
        id: "aws-credentials-missing",
        title: "AMI build cannot read checksums: no credentials for S3",
        class: Class::CiConfig,
        signature: "Unable to locate credentials",
        stage: Stage::Setup,
        errors: &["==> amazon-ebs: Unable to locate credentials. You can configure credentials by running \"aws configure\"."],
        context: &["==> amazon-ebs: An error occurred (403) when calling the HeadObject operation: Forbidden"],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "k8s failures report, EC2 alpha AMI build",
    },
    Pattern {
        id: "public-ip-quota",
        title: "Azure subscription out of public IPs",
        class: Class::Infra,
        signature: "PublicIPCountLimitReached",
        stage: Stage::Setup,
        errors: &["  azure.BearerAuthorizer#WithAuthorization: PUT publicIPAddresses/{cluster}-api-{suffix}: StatusCode=400 Code=\"PublicIPCountLimitReached\" Message=\"Cannot create more than 1000 public IP addresses for this subscription in this region.\""],
        context: &["{E} machinepool_controller.go:{line}] reconcile failed, requeueing after {secs}s"],
        junit: JunitEffect::Some(1),
        affects: "",
        message: "cluster creation failed: Code=\"PublicIPCountLimitReached\"",
        modelled_on: "k8s flakes report, CAPZ public IP quota",
    },
    Pattern {
        id: "cloud-vcpu-quota",
        title: "Cloud account out of vCPU quota during install",
        class: Class::Infra,
        signature: "VcpuLimitExceeded",
        stage: Stage::Setup,
        errors: &["level=error msg=\"Error: creating EC2 Instance: VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of {vcpu} allows for the instance bucket that the specified instance type belongs to.\""],
        context: &["level=error msg=\"failed to fetch Cluster: failed to generate asset \\\"Cluster\\\": failure applying terraform for \\\"cluster\\\" stage\""],
        junit: JunitEffect::Named("[sig-installer] install should succeed: infrastructure"),
        affects: "",
        message: "install failed: VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of {vcpu} allows",
        modelled_on: "OpenShift payload infra rejections (cloud quota)",
    },
    Pattern {
        id: "data-race",
        title: "Data race detected by the race detector",
        class: Class::Product,
        signature: "WARNING: DATA RACE",
        stage: Stage::Tests,
        errors: &["WARNING: DATA RACE"],
        context: &[
            "Write at {addr} by goroutine {goroutine}:",
            "  k8s.io/apiserver/pkg/admission/plugin/policy/validating.(*paramRefTracker).record()",
        ],
        junit: JunitEffect::Named("TestParamRef"),
        affects: "",
        message: "race detected during execution of test (WARNING: DATA RACE in paramRefTracker)",
        modelled_on: "k8s flakes report, TestParamRef data race",
    },
    Pattern {
        id: "cluster-connection-refused",
        title: "Test cluster's apiserver went away mid-run",
        class: Class::Infra,
        signature: "connect: connection refused",
        stage: Stage::Tests,
        errors: &["  Get \"https://{ip}:6443/api/v1/namespaces/{ns}/pods\": dial tcp {ip}:6443: connect: connection refused"],
        context: &["{E} reflector.go:{line}] watch of *v1.Pod ended with: very short watch"],
        junit: JunitEffect::Mass,
        affects: "",
        message: "Get \"https://{ip}:6443/api/v1/namespaces/{ns}/pods\": dial tcp {ip}:6443: connect: connection refused",
        modelled_on: "mass failure (environment event)",
    },
    Pattern {
        id: "nodes-not-ready",
        title: "Test cluster nodes stopped reporting mid-run",
        class: Class::Infra,
        signature: "Kubelet stopped posting node status",
        stage: Stage::Tests,
        errors: &["{E} node_lifecycle_controller.go:{line}] node {node} hasn't been updated for {dur}. Last Ready is: &NodeCondition{Type:Ready,Status:Unknown,Reason:NodeStatusUnknown,Message:Kubelet stopped posting node status.}"],
        context: &["{I} taint_eviction.go:{line2}] Marking pods on {node} for deletion"],
        junit: JunitEffect::Mass,
        affects: "",
        message: "Timed out after {dur}: pod {ns}/{pod} never became Ready: node {node} is NotReady: Kubelet stopped posting node status.",
        modelled_on: "mass failure (node loss)",
    },
    Pattern {
        id: "compile-error",
        title: "Pull request does not compile",
        class: Class::PrChange,
        signature: "undefined: ",
        stage: Stage::Setup,
        errors: &["pkg/{area}/{file}.go:{line}:{n}: undefined: {symbol}"],
        context: &["make: *** [Makefile:{line2}: all] Error 1"],
        junit: JunitEffect::None,
        affects: "",
        message: "pkg/{area}/{file}.go:{line}:{n}: undefined: {symbol}",
        modelled_on: "presubmit failures caused by the PR itself",
    },
    Pattern {
        id: "pr-unit-regression",
        title: "Pull request breaks a unit test",
        class: Class::PrChange,
        signature: "got unexpected result",
        stage: Stage::Tests,
        errors: &["    {file}_test.go:{line}: {symbol}: got unexpected result (-want +got): {count} fields differ"],
        context: &["--- FAIL: Test{symbol} ({dur})"],
        junit: JunitEffect::Some(2),
        affects: "",
        message: "{file}_test.go:{line}: {symbol}: got unexpected result (-want +got): {count} fields differ",
        modelled_on: "presubmit failures caused by the PR itself",
    },
    Pattern {
        id: "flaky-lane-by-design",
        title: "[Flaky]-focused lane fails by design",
        class: Class::ByDesign,
        signature: "[Flaky]",
        stage: Stage::Tests,
        errors: &["  [FAILED] [Flaky] test failed as expected in the holding lane after {dur}"],
        context: &["  In [It] at: k8s.io/kubernetes/test/e2e/framework/util.go:{line}"],
        junit: JunitEffect::Some(3),
        affects: "[Flaky]",
        message: "[Flaky] test failed as expected in the holding lane after {dur}",
        modelled_on: "k8s failures report, ci-kubernetes-e2e-gci-gce-flaky (by design)",
    },
    Pattern {
        id: "aborted-superseded",
        title: "Build aborted (superseded by a newer run)",
        class: Class::Infra,
        signature: "received interrupt: terminated",
        stage: Stage::Tests,
        errors: &["{\"component\":\"entrypoint\",\"level\":\"error\",\"msg\":\"Entrypoint received interrupt: terminated\",\"severity\":\"error\",\"time\":\"{ts}\"}"],
        context: &[],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "Prow aborts of superseded presubmits",
    },
    Pattern {
        id: "pod-not-created",
        title: "Prow could not create the test pod (state=error, no GCS artifacts)",
        class: Class::CiConfig,
        signature: "Pod can not be created",
        stage: Stage::Setup,
        errors: &[],
        context: &[],
        junit: JunitEffect::None,
        affects: "",
        message: "Pod can not be created: pods \"{uuid}\" is invalid: spec.initContainers[0].image: Required value",
        modelled_on: "k8s failures report, cross-canary 24/24 state=error",
    },
    Pattern {
        id: "culprit-pr-symbol",
        title: "A pull request in the payload broke a component; the log names its symbol",
        class: Class::Product,
        signature: "",
        stage: Stage::Tests,
        errors: &[],
        context: &[],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "OpenShift payload analysis (culprit PR, error-message match)",
    },
    Pattern {
        id: "ci-config-step-change",
        title: "A step-registry change in the CI configuration broke payload jobs",
        class: Class::CiConfig,
        signature: "unknown flag: --",
        stage: Stage::Setup,
        errors: &[],
        context: &[],
        junit: JunitEffect::None,
        affects: "",
        message: "",
        modelled_on: "OpenShift payload analysis (CI configuration causes)",
    },
];

/// Looks up a pattern by id.
pub fn pattern(id: &str) -> Option<&'static Pattern> {
    PATTERNS.iter().find(|p| p.id == id)
}

/// The suite family a test belongs to (decides JUnit shape and log style).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteKind {
    Ginkgo,
    GoUnit,
    GoIntegration,
    Kubetest,
    Kops,
    Capi,
    Minikube,
    ImageBuild,
    OpenShift,
}

/// A test that flakes (same code, different outcomes).
#[derive(Debug)]
pub struct FlakyDef {
    pub id: &'static str,
    pub suite: SuiteKind,
    /// Go package or Ginkgo suite the test lives in.
    pub package: &'static str,
    pub name: &'static str,
    /// Failure message template; contains `signature`.
    pub message: &'static str,
    pub signature: &'static str,
    pub modelled_on: &'static str,
}

pub const FLAKY: &[FlakyDef] = &[
    FlakyDef {
        id: "drain-namespace-terminating",
        suite: SuiteKind::GoUnit,
        package: "k8s.io/kubectl/pkg/drain",
        name: "TestEvictDuringNamespaceTerminating",
        message: "drain_test.go:{line}: eviction still pending while namespace {ns} was terminating (waited {dur})",
        signature: "eviction still pending while namespace",
        modelled_on: "k8s flakes report A.D.2",
    },
    FlakyDef {
        id: "volumemanager-unmount",
        suite: SuiteKind::GoUnit,
        package: "k8s.io/kubernetes/pkg/kubelet/volumemanager/reconciler",
        name: "TestReconstructedVolumeShouldUnmountSucceedAfterSetupFailed",
        message: "reconciler_test.go:{line}: volume \"{vol}\" is still reported as mounted after {count} reconciler loops",
        signature: "is still reported as mounted after",
        modelled_on: "k8s flakes report A.D.1",
    },
    FlakyDef {
        id: "kubelet-windows-tempdir",
        suite: SuiteKind::GoUnit,
        package: "k8s.io/kubernetes/pkg/kubelet",
        name: "TestNewMainKubeletStandAlone",
        message: "kubelet_test.go:{line}: unlinkat C:\\Users\\ContainerAdministrator\\AppData\\Local\\Temp\\TestNewMainKubeletStandAlone{count}\\001\\containers: The process cannot access the file because it is being used by another process.",
        signature: "The process cannot access the file because it is being used by another process",
        modelled_on: "k8s flakes report A.D.3",
    },
    FlakyDef {
        id: "apf-watch-panic",
        suite: SuiteKind::GoUnit,
        package: "k8s.io/apiserver/pkg/server/filters",
        name: "TestApfWatchHandlePanic",
        message: "priority-and-fairness_test.go:{line}: expected inflight watch count 0, got {n}",
        signature: "expected inflight watch count 0",
        modelled_on: "k8s flakes report A.D.6a",
    },
    FlakyDef {
        id: "async-preemption",
        suite: SuiteKind::GoIntegration,
        package: "k8s.io/kubernetes/test/integration/scheduler/preemption",
        name: "TestAsyncPreemption",
        message: "preemption_test.go:{line}: pod {ns}/{pod} was not scheduled within {dur}: mid-priority pod popped before preemption finished",
        signature: "mid-priority pod popped before preemption finished",
        modelled_on: "k8s flakes report B.C",
    },
    FlakyDef {
        id: "event-series",
        suite: SuiteKind::GoIntegration,
        package: "k8s.io/kubernetes/test/integration/events",
        name: "TestEventSeries",
        message: "events_test.go:{line}: first event of the series was not persisted before the series update (count={n})",
        signature: "first event of the series was not persisted",
        modelled_on: "k8s flakes report B.E",
    },
    FlakyDef {
        id: "podgroup-admission",
        suite: SuiteKind::GoIntegration,
        package: "k8s.io/kubernetes/test/integration/scheduler/podgroup/admission",
        name: "TestPodGroupAdmission",
        message: "admission_test.go:{line}: pod admitted into terminating Workload {ns}/{pod}",
        signature: "pod admitted into terminating Workload",
        modelled_on: "k8s flakes report B.B",
    },
    FlakyDef {
        id: "etcd-port-conflict",
        suite: SuiteKind::GoIntegration,
        package: "go.etcd.io/etcd/tests/v3/integration",
        name: "TestEnableAuth",
        message: "cluster.go:{line}: listen tcp 127.0.0.1:{hiport}: bind: address already in use",
        signature: "bind: address already in use",
        modelled_on: "k8s flakes report D.E1",
    },
    FlakyDef {
        id: "endpoints-http",
        suite: SuiteKind::Ginkgo,
        package: "Kubernetes e2e suite",
        name: "[It] [sig-network] Networking Granular Checks: Services should update endpoints: http",
        message: "failed dialing endpoint, did not find expected responses after {count} tries: hostnames map[netserver-0:{{}} netserver-1:{{}}]",
        signature: "failed dialing endpoint, did not find expected responses",
        modelled_on: "k8s flakes report G.3",
    },
    FlakyDef {
        id: "resourcequota-terminating-scopes",
        suite: SuiteKind::Ginkgo,
        package: "Kubernetes e2e suite",
        name: "[It] [sig-api-machinery] ResourceQuota should verify ResourceQuota with terminating scopes through scope selectors.",
        message: "Expected <int>: {n} to equal <int>: 0: resource quota usage not released for terminating pod {pod}",
        signature: "resource quota usage not released for terminating pod",
        modelled_on: "k8s flakes report G.1",
    },
    FlakyDef {
        id: "gc-orphan-cr",
        suite: SuiteKind::Ginkgo,
        package: "Kubernetes e2e suite",
        name: "[It] [sig-api-machinery] Garbage collector should orphan dependents of a custom resource when the owner is deleted with orphan policy",
        message: "Timed out after {dur}. dependent {ns}/{pod} was deleted but should have been orphaned",
        signature: "was deleted but should have been orphaned",
        modelled_on: "k8s flakes report C.D",
    },
    FlakyDef {
        id: "container-metrics",
        suite: SuiteKind::Ginkgo,
        package: "Kubernetes e2e suite",
        name: "[It] [sig-node] ContainerMetrics should report block I/O usage for running containers",
        message: "metric container_blkio_device_usage_total missing for pod {ns}/{pod} after {dur}",
        signature: "metric container_blkio_device_usage_total missing",
        modelled_on: "k8s flakes report C.A",
    },
    FlakyDef {
        id: "kubetest-up",
        suite: SuiteKind::Kubetest,
        package: "e2e.go",
        name: "Up",
        message: "error during ./hack/e2e-internal/e2e-up.sh: exit status 1 (instance group {node} did not report ready in {dur})",
        signature: "error during ./hack/e2e-internal/e2e-up.sh",
        modelled_on: "k8s flakes report I.1 (kubetest Up wrapper)",
    },
    FlakyDef {
        id: "kubetest-node-tests",
        suite: SuiteKind::Kubetest,
        package: "e2e.go",
        name: "Node Tests",
        message: "error during go run /go/src/k8s.io/kubernetes/test/e2e_node/runner/remote/run_remote.go: exit status 1 (instance {node} lost ssh after {dur})",
        signature: "error during go run",
        modelled_on: "k8s flakes report C.F",
    },
    FlakyDef {
        id: "kubetest-diffresources",
        suite: SuiteKind::Kubetest,
        package: "e2e.go",
        name: "diffResources",
        message: "Error: {n} leaked resources\n+ instances {node}",
        signature: "leaked resources",
        modelled_on: "k8s flakes report I.3 (camel-case diffResources)",
    },
    FlakyDef {
        id: "capz-ha-rate-limit",
        suite: SuiteKind::Capi,
        package: "capz-e2e",
        name: "[It] Workload cluster creation Creating a highly available cluster [REQUIRED] With 3 control-plane nodes and 2 Linux and 2 Windows worker nodes",
        message: "Timed out after {dur}: client rate limiter Wait returned an error: context deadline exceeded",
        signature: "client rate limiter Wait returned an error",
        modelled_on: "k8s flakes report E.3",
    },
    FlakyDef {
        id: "capv-preparation",
        suite: SuiteKind::Capi,
        package: "capv-e2e",
        name: "Preparation hack_e2e_sh",
        message: "hack/e2e.sh: failed to reach vSphere endpoint {ip}: i/o timeout after {dur}",
        signature: "failed to reach vSphere endpoint",
        modelled_on: "k8s flakes report E.1 (CAPV junit naming)",
    },
    FlakyDef {
        id: "minikube-multi-control-plane",
        suite: SuiteKind::Minikube,
        package: "k8s.io/minikube/test/integration",
        name: "TestMultiControlPlane/serial/RestartCluster",
        message: "ha_test.go:{line}: failed to restart cluster: context deadline exceeded after {dur}",
        signature: "failed to restart cluster: context deadline exceeded",
        modelled_on: "k8s flakes report F.4",
    },
    FlakyDef {
        id: "minikube-preload",
        suite: SuiteKind::Minikube,
        package: "k8s.io/minikube/test/integration",
        name: "TestPreload",
        message: "preload_test.go:{line}: expected image gcr.io/k8s-minikube/busybox to be present after restart, got images: [{count} entries]",
        signature: "to be present after restart",
        modelled_on: "k8s flakes report F.5",
    },
    FlakyDef {
        id: "openshift-monitor-alerts",
        suite: SuiteKind::OpenShift,
        package: "openshift-tests",
        name: "[sig-instrumentation][Late] Alerts shouldn't report any unexpected alerts in firing or pending state [Suite:openshift/conformance/parallel]",
        message: "fail [github.com/openshift/origin/test/extended/prometheus/prometheus.go:{line}]: Unexpected alert: KubePodNotReady fired for {dur} on pod {ns}/{pod}",
        signature: "Unexpected alert: KubePodNotReady fired",
        modelled_on: "OpenShift informing failures",
    },
];

/// Looks up a flaky test by id.
pub fn flaky(id: &str) -> Option<&'static FlakyDef> {
    FLAKY.iter().find(|f| f.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_consistent() {
        let mut ids: Vec<&str> = PATTERNS.iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PATTERNS.len(), "pattern ids are unique");
        for p in PATTERNS {
            for e in p.errors {
                assert!(e.contains(p.signature), "{} error line lacks signature", p.id);
            }
            if !p.message.is_empty() && !p.signature.is_empty() {
                assert!(p.message.contains(p.signature), "{} message lacks signature", p.id);
            }
        }
        for f in FLAKY {
            assert!(f.message.contains(f.signature), "{} flaky signature", f.id);
        }
    }
}
