//! Every shipped signature matches a sample of the failure it documents, and user files
//! extend or override the catalogue.

use citriage_patterns::signatures::{Catalogue, FailureClass, SignatureError};

/// (signature id, sample text) — samples follow the failure write-ups the catalogue covers.
const SAMPLES: &[(&str, &str)] = &[
    ("stale-image-pin", "step 3: manifest for gcr.io/k8s-staging-test-infra/gcb-docker-gcloud:v20230111-cd1b3caf9c not found: manifest unknown"),
    ("hyperdisk-machine-type", "googleapi: Error 400: hyperdisk-balanced disk type cannot be used by e2-standard-2 machine type., badRequest"),
    ("boskos-exhausted", "failed to create cluster: could not allocate host after 3 tries"),
    ("admission-no-nodes", "pods \"installer-3\" is forbidden: autoscaling.openshift.io/ManagementCPUsOverride the cluster does not have any nodes"),
    ("crd-enum-unsupported-value", "ClusterVersion.config.openshift.io \"version\" is invalid: status.capabilities.enabledCapabilities[3]: Unsupported value: \"MachineAPI\": supported values: \"openshift-samples\", \"baremetal\""),
    ("featuregate-missing-version", "E1211 15:43:58.314619 1 simple_featuregate_reader.go:290] cluster failed with : unable to determine features: missing desired version \"4.14.38\" in featuregates.config.openshift.io/cluster"),
    ("job-deadline-version-pod", "Unable to download and prepare the update: deadline exceeded, reason: \"DeadlineExceeded\", message: \"Job was active longer than specified deadline\""),
    ("version-pod-signature", "version pod status: Init:SignatureValidationFailed"),
    ("client-rate-limiter-deadline", "clusterctl_helpers.go:397: client rate limiter Wait returned an error: context deadline exceeded"),
    ("azure-public-ip-quota", "Code=\"PublicIPCountLimitReached\" Message=\"Cannot create more than 250 public IP addresses for this subscription in this region.\" 400 Bad Request"),
    ("image-pull-backoff", "kube-proxy-x2x4z 0/1 ImagePullBackOff 0 12m"),
    ("unknown-flag", "Error: unknown flag: --ip-family"),
    ("aws-no-credentials", "Unable to locate credentials. You can configure credentials by running \"aws configure\"."),
    ("node-not-ready", "node e2e-node-2 is NotReady: Kubelet stopped posting node status."),
    // payload-step signatures
    ("cloud-quota-exhausted", "Error: creating EC2 Instance: VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit allows"),
    ("cloud-capacity-unavailable", "error creating instance: InsufficientInstanceCapacity: We currently do not have sufficient m6a.xlarge capacity"),
    ("cloud-api-throttling", "operation error EC2: DescribeInstances, api error RequestLimitExceeded: Request limit exceeded."),
    ("lost-connectivity", "Get \"https://api.ci-op-x.example.com:6443/version\": dial tcp 10.0.0.1:6443: connect: connection refused"),
    ("ci-control-plane-unavailable", "error: failed to create build: the server is currently unable to handle the request"),
    ("external-service-5xx", "the API gateway returned an unexpected status: 500"),
    ("cloud-credentials-invalid", "AuthFailure: AWS was not able to validate the provided access credentials"),
    ("ci-step-command-missing", "/bin/bash: line 12: yq: command not found"),
    ("ci-step-pod-invalid", "Pod can not be created: image reference is empty"),
    ("ci-step-script-broken", "/bin/bash: line 4: CLUSTER_PROFILE_DIR: unbound variable"),
    ("ci-config-unresolved", "failed to resolve the step ipi-conf-aws-custom: not found"),
];

#[test]
fn every_shipped_signature_matches_its_sample() {
    let c = Catalogue::builtin_all();
    let ids: Vec<&str> = c.specs().iter().map(|s| s.id.as_str()).collect();
    for id in &ids {
        assert!(SAMPLES.iter().any(|(s, _)| s == id), "shipped signature {id} has no sample");
    }
    for (id, text) in SAMPLES {
        let m = c.match_text(text);
        assert!(m.iter().any(|m| m.id == *id), "{id} did not match {text:?}: {m:?}");
        let hit = m.iter().find(|m| m.id == *id).unwrap();
        let ev = &hit.evidence[0];
        assert_eq!(ev.line, 1);
        assert!(ev.start < ev.end && ev.end <= ev.text.len());
        assert!(!hit.fix.is_empty());
    }
}

#[test]
fn unrelated_text_matches_nothing() {
    let c = Catalogue::builtin();
    assert!(c.match_text("everything passed in 3.2s").is_empty());
    assert!(c.match_text("").is_empty());
}

#[test]
fn log_lines_give_line_numbers() {
    let c = Catalogue::builtin();
    let log = ["starting", "pulling image", "Back-off pulling image: ErrImagePull", "done"];
    let m = c.match_lines(log.iter().enumerate().map(|(i, l)| (i + 1, *l)));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].id, "image-pull-backoff");
    assert_eq!(m[0].evidence[0].line, 3);
    assert_eq!(m[0].class, FailureClass::Infra);
}

#[test]
fn user_file_overrides_and_extends() {
    let user = r#"
[[signature]]
id = "image-pull-backoff"
name = "Our registry is flaky"
class = "infra"
fix = "Retry."
any = [{ literal = "ImagePullBackOff" }]
none = [{ regex = "(?i)expected" }]

[[signature]]
id = "etcd-leader"
name = "etcd leader changed"
class = "product"
any = [{ regex = "etcdserver: leader changed", case_insensitive = true }]
all = [{ literal = "request" }]
"#;
    let c = Catalogue::builtin_with(user).expect("user catalogue");
    let base = Catalogue::builtin();
    assert_eq!(c.len(), base.len() + 1);
    let m = c.match_text("pod in ImagePullBackOff");
    assert_eq!(m[0].name, "Our registry is flaky");
    assert!(c.match_text("ImagePullBackOff as expected").is_empty());
    let m = c.match_text("request failed\nETCDSERVER: LEADER CHANGED");
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].evidence.len(), 2);
    assert_eq!(m[0].evidence[0].line, 2);
    assert!(c.match_text("etcdserver: leader changed").is_empty());
}

#[test]
fn invalid_catalogues_are_errors_not_panics() {
    let bad_regex = "[[signature]]\nid='x'\nname='x'\nclass='infra'\nany=[{regex='('}]\n";
    assert!(matches!(Catalogue::from_toml(bad_regex), Err(SignatureError::Invalid { .. })));
    let empty_any = "[[signature]]\nid='x'\nname='x'\nclass='infra'\nany=[]\n";
    assert!(Catalogue::from_toml(empty_any).is_err());
    let bad_class = "[[signature]]\nid='x'\nname='x'\nclass='weather'\nany=[{literal='a'}]\n";
    assert!(matches!(Catalogue::from_toml(bad_class), Err(SignatureError::Toml(_))));
    let dup = "[[signature]]\nid='x'\nname='x'\nclass='test'\nany=[{literal='a'}]\n[[signature]]\nid='x'\nname='y'\nclass='test'\nany=[{literal='b'}]\n";
    assert!(Catalogue::from_toml(dup).is_err());
    assert!(Catalogue::from_toml("not toml [[[").is_err());
}

#[test]
fn scopes_split_the_one_catalogue_between_jobs_and_payloads() {
    use citriage_patterns::signatures::Scope;
    let all = Catalogue::builtin_all();
    let jobs = Catalogue::builtin();
    let payload = Catalogue::builtin_payload();
    let ids = |c: &Catalogue| c.specs().iter().map(|s| s.id.clone()).collect::<Vec<_>>();
    // every entry is in at least one of the two views, the shared ones in both
    for s in all.specs() {
        assert_eq!(ids(&jobs).contains(&s.id), s.scope.jobs(), "{}", s.id);
        assert_eq!(ids(&payload).contains(&s.id), s.scope.payload(), "{}", s.id);
        if s.transient {
            assert_eq!(
                s.class,
                citriage_patterns::signatures::FailureClass::Infra,
                "{}: transient but not infra",
                s.id
            );
        }
    }
    assert!(all.specs().iter().any(|s| s.scope == Scope::Both));
    // a refused connection is a payload step's cause, not a job failure signature:
    // in a test's failure text the same words often describe the product's bug
    let line = "dial tcp 10.0.0.1:6443: connect: connection refused";
    assert!(jobs.match_text(line).is_empty());
    let m = payload.match_text(line);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].transient);
    // a shared entry fires in both views
    assert!(!jobs.match_text("Error: unknown flag: --ip-family").is_empty());
    assert!(!payload.match_text("Error: unknown flag: --ip-family").is_empty());
    // user files default to the jobs scope and are filtered like the built-in file
    let user = "[[signature]]\nid='p'\nname='p'\nclass='infra'\nscope='payload'\nany=[{literal='zzq-payload-only'}]\n";
    assert!(Catalogue::builtin_with(user).unwrap().match_text("zzq-payload-only").is_empty());
    let bad = "[[signature]]\nid='p'\nname='p'\nclass='infra'\nscope='weather'\nany=[{literal='a'}]\n";
    assert!(Catalogue::from_toml(bad).is_err());
}
