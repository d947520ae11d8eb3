//! The traps real payloads set, each in a small payload-snapshot fixture
//! written here (modelled on what rejected payloads show): test binaries that
//! cannot be extracted, symbols in vendored / generated / documentation files,
//! info lines, flags, aggregated jobs with only `results.json`, culprits that
//! came in two payloads before the target across a run without evidence,
//! run-level aggregated failures, an external service answering HTTP 500, an
//! empty JUnit export, a failing resource named by a PR title, a CI step whose
//! change sits in an `openshift/release` checkout — and the truth-file eval.

use std::path::Path;

use citriage_payload::action::{CandidateAction, Verdict};
use citriage_payload::classify::FailureClass;
use citriage_payload::result::PayloadAnalysis;
use citriage_payload::scoring::Signal;
use citriage_payload::{analyze, AnalyzeOptions, SnapshotDir};
use serde_json::json;

const STREAM_TAG: &str = "4.22.0-0.nightly-2026-04-0";

fn tag(day: u32, hour: u32) -> String {
    format!("{STREAM_TAG}{day}-{hour:02}0000")
}

fn w(p: &Path, body: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn url(job: &str, id: u64) -> String {
    format!("https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-nightly-4.22-{job}/{id}")
}

/// A payload: its jobs (name, state, build id).
fn payload(root: &Path, t: &str, phase: &str, jobs: &[(&str, &str, u64)]) {
    let mut blocking = serde_json::Map::new();
    for (name, state, id) in jobs {
        blocking.insert(name.to_string(), json!({"state": state, "url": url(name, *id)}));
        w(
            &root.join(t).join("jobs/blocking").join(name).join("job.json"),
            json!({"name": name, "state": state, "url": url(name, *id), "gcs_url": format!("https://gcsweb/gcs/test-platform-results/logs/{name}/{id}/")}).to_string(),
        );
    }
    w(
        &root.join(t).join("payload.json"),
        json!({"name": t, "phase": phase, "results": {"blockingJobs": blocking}}).to_string(),
    );
}

/// A changelog from `from`: (org/repo, image, number, title).
fn changelog(root: &Path, t: &str, from: &str, prs: &[(&str, &str, u64, &str)]) {
    let images: Vec<serde_json::Value> = prs
        .iter()
        .map(|(repo, image, n, title)| {
            json!({"name": image, "path": format!("https://github.com/{repo}/tree/abc"),
                   "commits": [{"subject": title, "pullID": n, "pullURL": format!("https://github.com/{repo}/pull/{n}")}]})
        })
        .collect();
    w(
        &root.join(t).join("changelog.json"),
        json!({"changeLogJson": {"from": {"name": from}, "to": {"name": t}, "updatedImages": images}}).to_string(),
    );
}

fn diff(root: &Path, t: &str, image: &str, n: u64, text: &str) {
    w(&root.join(t).join(image).join("prs").join(n.to_string()).join("code.diff"), text);
}

fn file(root: &Path, t: &str, job: &str, rel: &str, body: impl AsRef<[u8]>) {
    w(&root.join(t).join("jobs/blocking").join(job).join(rel), body);
}

fn junit(cases: &[(&str, Option<&str>)]) -> String {
    let esc = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;");
    let mut s = String::from("<testsuite name=\"openshift-tests\">\n");
    for (name, fail) in cases {
        match fail {
            None => s.push_str(&format!("<testcase name=\"{}\"/>\n", esc(name))),
            Some(m) => s.push_str(&format!(
                "<testcase name=\"{}\"><failure message=\"\">{}</failure></testcase>\n",
                esc(name),
                esc(m)
            )),
        }
    }
    s.push_str("</testsuite>\n");
    s
}

fn step_junit(step: &str, text: &str) -> String {
    junit(&[
        (&format!("Run multi-stage test {step} container test"), Some(text)),
        ("Run multi-stage test test phase", Some("container test exited with code 1")),
    ])
}

fn build_log(errors: &[(u32, &str)], tail: &[&str]) -> String {
    json!({"total_lines": 900,
           "error_warning_lines": errors.iter().map(|(n, t)| json!({"line_number": n, "text": t})).collect::<Vec<_>>(),
           "tail_start_line": 880, "tail_lines": tail})
    .to_string()
}

fn run(root: &Path, target: &str) -> PayloadAnalysis {
    let snap = SnapshotDir::open(root).unwrap();
    let a = analyze(&snap, &snap, &AnalyzeOptions::new(target)).unwrap();
    let md = citriage_payload::render_markdown(&a);
    let problems = citriage_payload::report::consistency::contradictions(&a, &md);
    assert!(problems.is_empty(), "the report contradicts itself: {problems:?}");
    a
}

fn suspect<'a>(a: &'a PayloadAnalysis, id: &str) -> Option<&'a citriage_payload::result::Suspect> {
    a.suspects.iter().filter(|s| s.candidate == id).max_by_key(|s| s.score.total)
}

fn non_culprit_actions(a: &PayloadAnalysis, culprit: &str) -> Vec<String> {
    a.suspects
        .iter()
        .filter(|s| {
            s.candidate != culprit && matches!(s.action, CandidateAction::StageRevert | CandidateAction::Bisect)
        })
        .map(|s| format!("{} {}", s.candidate, s.score.total))
        .collect()
}

const EXTRACT_ERR: &str = r#"error: couldn't retrieve test suites: failed to extract test binaries: encountered errors while extracting binaries: extracted binary at path "/tmp/home/.cache/openshift-tests/registry_x_4_22/widget-mirror-tests-ext.gz" does not exist in image "quay.io/ocp/release@sha256:0f3e""#;

/// Test binaries that cannot be extracted belong to the change that asks for
/// them; the image named in the error is a component, not the culprit; info
/// lines, vendored copies, generated files and docs earn nothing.
#[test]
fn test_binary_extraction_vendored_and_info_line_decoys() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (a, b) = (tag(1, 8), tag(2, 8));
    let jobs = ["e2e-aws-ovn-serial", "e2e-metal-ipi-ovn"];
    payload(root, &a, "Accepted", &[(jobs[0], "Succeeded", 11), (jobs[1], "Succeeded", 12)]);
    payload(root, &b, "Rejected", &[(jobs[0], "Failed", 21), (jobs[1], "Failed", 22)]);
    changelog(
        root,
        &b,
        &a,
        &[
            ("openshift/origin", "tests", 101, "add widget-mirror to extensionBinaries"),
            ("openshift/widget-mirror", "widget-mirror", 102, "Add testing docs and skills"),
            ("openshift/router", "haproxy-router", 103, "Configure the TLS profile for metrics"),
            ("openshift/api", "cluster-config-api", 104, "Add the no-overlay feature gate"),
            ("openshift/cluster-version-operator", "cluster-version-operator", 105, "Log proxy reconciliation"),
        ],
    );
    diff(root, &b, "tests", 101, "diff --git a/pkg/test/extensions/binary.go b/pkg/test/extensions/binary.go\n--- a/pkg/test/extensions/binary.go\n+++ b/pkg/test/extensions/binary.go\n@@ -340,2 +340,5 @@ var extensionBinaries = []TestBinary{\n \t{\n+\t\timageTag:   \"widget-mirror\",\n+\t\tbinaryPath: \"/usr/bin/widget-mirror-tests-ext.gz\",\n+\t},\n \t}\n");
    diff(root, &b, "widget-mirror", 102, "diff --git a/docs/testing.md b/docs/testing.md\n--- a/docs/testing.md\n+++ b/docs/testing.md\n@@ -1,1 +1,2 @@\n # Testing\n+Run widget-mirror-tests-ext.gz locally with `make test`.\n");
    diff(root, &b, "haproxy-router", 103, "diff --git a/vendor/github.com/openshift/api/config/v1/types_network.go b/vendor/github.com/openshift/api/config/v1/types_network.go\n--- a/vendor/github.com/openshift/api/config/v1/types_network.go\n+++ b/vendor/github.com/openshift/api/config/v1/types_network.go\n@@ -48,1 +48,2 @@\n type NetworkSpec struct {\n+\tclusterNetworkMTUProbe []ClusterNetworkEntry `json:\"clusterNetworkMTUProbe\"`\n");
    diff(root, &b, "cluster-config-api", 104, "diff --git a/operator/v1/zz_generated.crd-manifests/0000_70_network.crd.yaml b/operator/v1/zz_generated.crd-manifests/0000_70_network.crd.yaml\n--- a/operator/v1/zz_generated.crd-manifests/0000_70_network.crd.yaml\n+++ b/operator/v1/zz_generated.crd-manifests/0000_70_network.crd.yaml\n@@ -210,1 +210,2 @@\n properties:\n+  clusterNetworkMTUProbe:\n");
    diff(root, &b, "cluster-version-operator", 105, "diff --git a/pkg/cvo/proxy.go b/pkg/cvo/proxy.go\n--- a/pkg/cvo/proxy.go\n+++ b/pkg/cvo/proxy.go\n@@ -1,1 +1,2 @@\n package cvo\n+func reconcileProxyStatusNow() error { return nil }\n");
    for (i, j) in jobs.iter().enumerate() {
        file(
            root,
            &b,
            j,
            "junit/junit_operator.xml",
            step_junit(&format!("{j} - {j}-openshift-e2e-test"), EXTRACT_ERR),
        );
        file(
            root,
            &b,
            j,
            "build_log.json",
            build_log(
                &[(200 + i as u32, EXTRACT_ERR), (204, "error: failed to execute wrapped command: exit status 1")],
                &[
                    r#"time="2026-04-02T09:00:00Z" level=info msg="reconcileProxyStatusNow: clusterNetworkMTUProbe unchanged""#,
                    r#"time="2026-04-02T09:00:01Z" level=info msg="Extracted /usr/bin/machine-config-tests-ext.gz for tag machine-config-operator""#,
                ],
            ),
        );
    }
    let a_ = run(root, &b);
    let culprit = "pr:openshift/origin#101";
    let s = suspect(&a_, culprit).expect("the change asking for the binary is a suspect");
    assert_eq!(s.rank, 1);
    assert_eq!(s.action, CandidateAction::StageRevert, "{:?}", s.score);
    let em = s.score.error_match.as_ref().unwrap();
    assert_eq!((em.token.as_str(), em.df), ("widget-mirror-tests-ext.gz", 1));
    assert!(em.why_specific.contains("1 of the 5"), "{}", em.why_specific);
    assert!(s.score.items.iter().any(|i| i.signal == Signal::Component));
    assert!(s.score.items.iter().any(|i| i.signal == Signal::MultiJobCorrelation));
    // The failure is a product failure (a test binary), never "unknown".
    assert!(a_.root_causes.iter().all(|r| r.class.class == FailureClass::ProductRegression));
    assert_eq!(a_.root_causes.len(), 1, "one binary, one root cause");
    // Decoys: docs, vendored, generated, info-line symbols earn no verbatim match.
    for id in [
        "pr:openshift/widget-mirror#102",
        "pr:openshift/router#103",
        "pr:openshift/api#104",
        "pr:openshift/cluster-version-operator#105",
    ] {
        assert!(a_.scores.iter().filter(|x| x.candidate == id).all(|x| x.error_match.is_none()), "{id}");
    }
    assert!(non_culprit_actions(&a_, culprit).is_empty(), "{:?}", non_culprit_actions(&a_, culprit));
    // The recommendation quotes both sides and why the token is specific.
    let rec = a_.recommendations.iter().find(|r| r.text.starts_with("Revert")).unwrap();
    assert!(rec.evidence.iter().any(|e| e.starts_with("why specific:")), "{:?}", rec.evidence);
    assert!(rec.evidence.iter().any(|e| e.contains("binary.go:342")), "{:?}", rec.evidence);
}

/// The failure began two payloads before the target; the run in between has no
/// evidence. Candidates come from the payload where it began.
#[test]
fn onset_across_a_run_without_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (a, b, c, d) = (tag(1, 8), tag(2, 8), tag(3, 8), tag(4, 8));
    let j = "e2e-gcp-ovn";
    payload(root, &a, "Accepted", &[(j, "Succeeded", 1)]);
    payload(root, &b, "Rejected", &[(j, "Failed", 2)]);
    payload(root, &c, "Rejected", &[(j, "Failed", 3)]);
    payload(root, &d, "Rejected", &[(j, "Failed", 4)]);
    changelog(
        root,
        &b,
        &a,
        &[("openshift/cluster-network-operator", "cluster-network-operator", 501, "Check the MTU while rendering")],
    );
    changelog(root, &c, &b, &[("openshift/console", "console", 502, "Tweak labels")]);
    changelog(root, &d, &c, &[("openshift/installer", "installer", 503, "Tidy messages")]);
    diff(root, &b, "cluster-network-operator", 501, "diff --git a/pkg/network/mtu.go b/pkg/network/mtu.go\n--- a/pkg/network/mtu.go\n+++ b/pkg/network/mtu.go\n@@ -70,1 +70,3 @@\n func x() {\n+func validateClusterNetworkMTU(mtu int) error {\n+\treturn fmt.Errorf(\"MTU %d exceeds the underlay\", mtu)\n");
    diff(root, &c, "console", 502, "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-a\n+b\n");
    diff(
        root,
        &d,
        "installer",
        503,
        "diff --git a/pkg/x.go b/pkg/x.go\n--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1 +1 @@\n-a\n+b\n",
    );
    let failing = junit(&[
        (
            "[sig-network][bz-Networking] clusteroperator/network MTU probes should succeed",
            Some("E0402 1 mtu.go:77] validateClusterNetworkMTU: MTU 9001 exceeds the underlay"),
        ),
        ("[sig-x] ok", None),
    ]);
    file(root, &b, j, "junit/junit_e2e.xml", &failing);
    // C: the run failed, its JUnit export is empty and the log is gone.
    file(root, &c, j, "junit/results.json", "[]");
    file(root, &d, j, "junit/junit_e2e.xml", &failing);
    let an = run(root, &d);
    let m = &an.failed_jobs[0].modes[0];
    assert_eq!(m.first_failed_in, b);
    assert_eq!(m.onset_assumed_on, vec![c.clone()]);
    assert!(m.before.established());
    let s = suspect(&an, "pr:openshift/cluster-network-operator#501").expect("the culprit two payloads back");
    assert_eq!(s.rank, 1);
    assert!(s.score.items.iter().any(|i| i.signal == Signal::NewFailureMode && i.evidence.contains("assumed")));
    assert_eq!(s.action, CandidateAction::StageRevert, "{:?}", s.score);
    // The payload in between: insufficient evidence, no classification, no action.
    let mid = run(root, &c);
    assert_eq!(mid.root_causes[0].class.class, FailureClass::Unknown);
    assert!(mid.root_causes[0].title.contains("results.json) is empty"), "{}", mid.root_causes[0].title);
    assert_eq!(mid.decision.verdict, Verdict::ReportOnly);
    assert!(mid.decision.summary.contains("insufficient evidence"), "{}", mid.decision.summary);
    assert!(mid.data_gaps.iter().any(|g| g.contains("empty")), "{:?}", mid.data_gaps);
    assert!(mid.suspects.is_empty());
}

fn agg_entry(name: &str, fails: &[u64], passes: &[u64], msg: &str) -> serde_json::Value {
    let r = |id: &u64| json!({"jobrunid": id.to_string(), "humanurl": url("e2e-aws-ovn-upgrade", *id)});
    json!({"name": name, "status": "failed", "suite_name": "aggregated", "failure_message": msg,
           "aggregated": {"passes": passes.iter().map(r).collect::<Vec<_>>(), "failures": fails.iter().map(r).collect::<Vec<_>>(), "skips": []}})
}

/// Aggregated jobs whose XML holds only the step failure: `results.json` is read
/// too. A test owned by the component whose PR's title names the failing
/// condition: the PR ranks first. The same subset of runs failing unrelated
/// tests: temporary infrastructure, and force-accept.
#[test]
fn aggregated_results_json_component_title_and_run_level() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (a, b) = (tag(1, 8), tag(2, 20));
    let jobs = ["aggregated-aws-upgrade", "aggregated-gcp-upgrade"];
    payload(root, &a, "Accepted", &[(jobs[0], "Succeeded", 1), (jobs[1], "Succeeded", 2)]);
    payload(root, &b, "Rejected", &[(jobs[0], "Failed", 3), (jobs[1], "Failed", 4)]);
    changelog(
        root,
        &b,
        &a,
        &[
            (
                "openshift/widget-operator",
                "widget-operator",
                978,
                "Set the operator condition to Progressing while webhook pods update",
            ),
            ("openshift/console", "console", 16182, "Update the list of supported packages"),
            ("openshift/hypershift", "hypershift", 8124, "test(e2e): extend the guest cleanup timeout"),
        ],
    );
    diff(root, &b, "widget-operator", 978, "diff --git a/pkg/operator/status.go b/pkg/operator/status.go\n--- a/pkg/operator/status.go\n+++ b/pkg/operator/status.go\n@@ -1,1 +1,2 @@\n package status\n+\tconds = append(conds, configv1.OperatorProgressing)\n");
    diff(root, &b, "console", 16182, "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-a\n+b\n");
    diff(root, &b, "hypershift", 8124, "diff --git a/test/e2e/util/fixture.go b/test/e2e/util/fixture.go\n--- a/test/e2e/util/fixture.go\n+++ b/test/e2e/util/fixture.go\n@@ -1 +1 @@\n-15*time.Minute\n+25*time.Minute\n");
    let test = "[Monitor:legacy-cvo-invariants][bz-Widget Operator] clusteroperator/widget should stay Progressing=False while MCO is Progressing=True";
    for j in jobs {
        file(
            root,
            &b,
            j,
            "junit/junit_operator.xml",
            step_junit(
                "release-analysis-aggregator - release-analysis-aggregator-openshift-release-analysis-aggregator",
                "Some tests failed aggregation",
            ),
        );
        file(
            root,
            &b,
            j,
            "junit/results.json",
            json!([agg_entry(test, &[1, 2, 3, 4, 5], &[6, 7, 8, 9], "Failed: Passed 4 times, failed 5 times.  The historical pass rate is 95%.  The required number of passes is 6.")]).to_string(),
        );
    }
    let an = run(root, &b);
    let agg = an.failed_jobs[0].aggregated.as_ref().expect("results.json read beside the step XML");
    assert_eq!(agg.failed_tests.len(), 1);
    let s = suspect(&an, "pr:openshift/widget-operator#978").expect("the component's PR");
    assert_eq!(s.rank, 1);
    assert!(s.score.items.iter().any(|i| i.signal == Signal::TitleMatch && i.evidence.contains("progressing")));
    assert!(s.score.items.iter().any(|i| i.signal == Signal::Component && i.points == 20));
    assert_eq!(s.action, CandidateAction::Bisect, "no verbatim match: a bisect, never a revert ({:?})", s.score);
    assert!(non_culprit_actions(&an, "pr:openshift/widget-operator#978").is_empty());

    // Run-level: the same 3 of 10 runs failed unrelated tests.
    let bad = [1, 2, 3];
    let good = [4, 5, 6, 7, 8, 9, 10];
    let msg = "Failed: Passed 7 times, failed 3 times.  The historical pass rate is 100%.  The required number of passes is 8.";
    for j in jobs {
        file(
            root,
            &b,
            j,
            "junit/results.json",
            json!([
                agg_entry("[sig-apps] StatefulSet should provide basic identity", &bad, &good, msg),
                agg_entry("[sig-storage] PVC protection should keep a PVC in use", &bad, &good, msg),
                agg_entry("[Jira:\"Test Framework\"] there should not be mass test failures", &bad, &good, msg),
                agg_entry("[sig-network] informing test", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[], "*** NON-BLOCKING FAILURE: This test failure is not considered terminal because its lifecycle is 'informing'"),
            ])
            .to_string(),
        );
    }
    let an = run(root, &b);
    assert!(
        an.root_causes.iter().all(|r| r.class.class == FailureClass::Infrastructure && r.class.temporary),
        "{:?}",
        an.root_causes.iter().map(|r| &r.class).collect::<Vec<_>>()
    );
    assert!(an.root_causes[0].class.reason.contains("same 3 of 10"), "{}", an.root_causes[0].class.reason);
    assert!(an.suspects.is_empty());
    assert!(an.decision.force_accept.recommended, "{:?}", an.decision.force_accept.reasons);
    assert!(an.decision.summary.contains("temporary infrastructure"));
}

/// An external service answering HTTP 500 makes four jobs fail: infrastructure,
/// and the upgrade that could not complete because of it is its consequence. The
/// lone PR of the payload is not a suspect.
#[test]
fn external_service_and_its_consequence() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (a, b) = (tag(1, 8), tag(2, 8));
    let jobs = ["e2e-aws-ovn-upgrade", "e2e-gcp-ovn-upgrade", "e2e-aws-ovn-serial"];
    payload(
        root,
        &a,
        "Accepted",
        &jobs.iter().enumerate().map(|(i, j)| (*j, "Succeeded", i as u64)).collect::<Vec<_>>(),
    );
    payload(
        root,
        &b,
        "Rejected",
        &jobs.iter().enumerate().map(|(i, j)| (*j, "Failed", 10 + i as u64)).collect::<Vec<_>>(),
    );
    changelog(
        root,
        &b,
        &a,
        &[(
            "openshift/cluster-network-operator",
            "cluster-network-operator",
            3006,
            "Remove a duplicated openssl parameter",
        )],
    );
    diff(root, &b, "cluster-network-operator", 3006, "diff --git a/bindata/network/x.yaml b/bindata/network/x.yaml\n--- a/bindata/network/x.yaml\n+++ b/bindata/network/x.yaml\n@@ -1 +1 @@\n-openssl -a\n+openssl\n");
    let insights = (
        "[bz-Insights Operator] clusteroperator/insights should not change condition/Available",
        Some("1 unexpected clusteroperator state transitions during e2e test run\nMay 14 13:46:17.250 E clusteroperator/insights condition/Available reason/UploadFailed status/False Unable to report: gateway server reported unexpected error code: 500 (request=): {\"errors\":[{\"status\":500}]}"),
    );
    for j in jobs {
        let mut cases = vec![insights];
        if j.contains("upgrade") {
            cases.push((
                "[sig-arch][Feature:ClusterUpgrade] Cluster should remain functional during upgrade [Disruptive] [Serial]",
                Some("fail [github.com/openshift/origin/test/e2e/upgrade/upgrade.go:187]: during upgrade to registry/release@sha256:5766: Cluster did not complete upgrade: timed out waiting for the condition: Cluster operator insights is not available"),
            ));
        }
        file(root, &b, j, "junit/e2e-monitor-tests.xml", junit(&cases));
    }
    let an = run(root, &b);
    assert_eq!(an.root_causes.len(), 2, "{:?}", an.root_causes.iter().map(|r| &r.title).collect::<Vec<_>>());
    let ext = an.root_causes.iter().find(|r| r.jobs.len() == 3).unwrap();
    assert_eq!(ext.class.class, FailureClass::Infrastructure);
    assert!(ext.class.reason.contains("HTTP 5xx"), "{}", ext.class.reason);
    let cons = an.root_causes.iter().find(|r| r.jobs.len() == 2).unwrap();
    assert_eq!(cons.class.class, FailureClass::Infrastructure, "{:?}", cons.class);
    assert!(cons.class.reason.contains("consequence of"), "{}", cons.class.reason);
    assert!(an.suspects.is_empty());
    assert!(!an.decision.force_accept.recommended, "three jobs failed");
    assert!(an.decision.summary.contains("infrastructure"), "{}", an.decision.summary);
}

/// A CI step that fails with a bare exit status is insufficient evidence; the
/// report names the step's registry files, and a local `openshift/release`
/// checkout ranks the commit that touched them (a bisect, never a revert).
#[test]
fn ci_step_paths_and_a_release_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("snap");
    let (a, b) = (tag(1, 8), tag(2, 8));
    let j = "install-analysis-all";
    payload(&root, &a, "Accepted", &[(j, "Succeeded", 1)]);
    payload(&root, &b, "Rejected", &[(j, "Failed", 2)]);
    changelog(&root, &b, &a, &[("openshift/console", "console", 7, "Tweak CSS")]);
    diff(&root, &b, "console", 7, "diff --git a/a.css b/a.css\n--- a/a.css\n+++ b/a.css\n@@ -1 +1 @@\n-a\n+b\n");
    file(&root, &b, j, "junit/junit_operator.xml", step_junit("release-payload-install-analysis - release-payload-install-analysis-openshift-release-analysis-test-case-analysis", "[Fri Apr 2 04:56:34 UTC 2026] 91 finished with ret=1\nExiting with ret=1"));
    file(
        &root,
        &b,
        j,
        "build_log.json",
        build_log(
            &[(168, "error: failed to execute wrapped command: exit status 1")],
            &[
                "Link to step on registry info site: https://steps.ci.openshift.org/reference/openshift-release-analysis-test-case-analysis",
                "Link to job on registry info site: https://steps.ci.openshift.org/job?org=openshift&repo=release&branch=main&test=install-analysis&variant=nightly-4.22",
            ],
        ),
    );
    let an = run(&root, &b);
    let rc = &an.root_causes[0];
    assert_eq!(rc.class.class, FailureClass::Unknown);
    assert!(rc.class.reason.contains("insufficient evidence"), "{}", rc.class.reason);
    assert!(
        rc.ci_look_at.iter().any(|p| p.contains("openshift-release-analysis-test-case-analysis-commands.sh")),
        "{:?}",
        rc.ci_look_at
    );
    assert!(rc
        .ci_look_at
        .iter()
        .any(|p| p == "ci-operator/config/openshift/release/openshift-release-main__nightly-4.22.yaml"));
    let rec = an.recommendations.iter().map(|r| r.text.clone()).collect::<Vec<_>>().join("\n");
    assert!(rec.contains("--ci-config"), "{rec}");
    assert!(an.suspects.is_empty());

    // A checkout of the configuration repository with one commit on that step
    // and one on another, both inside the window.
    let repo = dir.path().join("release");
    let git = |args: &[&str], date: &str| {
        let out = std::process::Command::new("git")
            .current_dir(&repo)
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    std::fs::create_dir_all(&repo).unwrap();
    git(&["init", "-q", "-b", "main"], "2026-03-30T00:00:00Z");
    let step = "ci-operator/step-registry/openshift/release-analysis/test-case-analysis/openshift-release-analysis-test-case-analysis-commands.sh";
    let other = "ci-operator/step-registry/gather/extra/gather-extra-commands.sh";
    w(&repo.join(step), "job-run-aggregator analyze-test-case --minimum-successful-count=1\n");
    w(&repo.join(other), "echo gather\n");
    git(&["add", "."], "2026-03-30T00:00:00Z");
    git(&["commit", "-q", "-m", "init"], "2026-03-30T00:00:00Z");
    w(&repo.join(step), "job-run-aggregator analyze-test-case --minimum-successful-count=2\n");
    git(&["commit", "-q", "-am", "test-case-analysis: require two successes (#76852)"], "2026-04-01T20:00:00Z");
    w(&repo.join(other), "echo gathering\n");
    git(&["commit", "-q", "-am", "gather-extra: print progress (#76853)"], "2026-04-01T21:00:00Z");
    let snap = SnapshotDir::open(&root).unwrap();
    let mut opts = AnalyzeOptions::new(&b);
    opts.ci_config_changes = Some(repo.clone());
    let an = analyze(&snap, &snap, &opts).unwrap();
    let s = an.suspects.iter().find(|s| s.candidate.starts_with("ci:")).expect("the step's commit is a suspect");
    let c = an.candidate(&s.candidate).unwrap();
    assert_eq!(c.number, Some(76852));
    assert_eq!(s.rank, 1);
    assert!(s.score.items.iter().any(|i| i.signal == Signal::CiStep));
    assert_eq!(s.action, CandidateAction::Bisect, "{:?}", s.score);
    assert!(an.suspects.iter().all(|s| an.candidate(&s.candidate).unwrap().number != Some(76853)));
}

/// The eval: a truth file in the table's shape (TOML or YAML) over a folder of
/// snapshots laid out as `<tag>/<version>/<stream>/`.
#[test]
fn truth_file_eval_over_a_snapshot_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (tag(1, 8), tag(2, 8));
    let root = dir.path().join(&b).join("4.22/nightly");
    let j = "e2e-aws-ovn";
    payload(&root, &a, "Accepted", &[(j, "Succeeded", 1)]);
    payload(&root, &b, "Rejected", &[(j, "Failed", 2)]);
    changelog(
        &root,
        &b,
        &a,
        &[
            ("openshift/widget-operator", "widget-operator", 42, "Validate widget reasons"),
            ("openshift/console", "console", 43, "Fix labels"),
        ],
    );
    diff(&root, &b, "widget-operator", 42, "diff --git a/pkg/widget/status.go b/pkg/widget/status.go\n--- a/pkg/widget/status.go\n+++ b/pkg/widget/status.go\n@@ -1,1 +1,2 @@\n package widget\n+\treturn fmt.Errorf(\"reconcileWidgetStatus: reason %q is not allowed\", r)\n");
    diff(&root, &b, "console", 43, "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-a\n+b\n");
    file(
        &root,
        &b,
        j,
        "junit/junit_e2e.xml",
        junit(&[(
            "[bz-Widget Operator] clusteroperator/widget should reconcile",
            Some("E0402 1 widget.go:9] reconcileWidgetStatus: reason \"Stale\" is not allowed"),
        )]),
    );
    w(&root.join("summary.json"), json!({"payload_tag": b}).to_string());
    let toml = dir.path().join("truth.toml");
    w(&toml, format!("[[payload]]\ntag = \"{b}\"\nculprits = [\"openshift/widget-operator#42\"]\n\n[[payload]]\ntag = \"{a}\"\ntruth = \"none: it passed\"\nforce_accept = false\n"));
    let t = citriage_payload::eval::read_truth(&toml).unwrap();
    assert_eq!(t[0].culprits, vec!["openshift/widget-operator#42"]);
    assert!(t[1].culprits.is_empty() && t[1].force_accept == Some(false));
    let yaml = dir.path().join("truth.yaml");
    w(&yaml, format!("payloads:\n  - tag: {b}\n    truth: openshift/widget-operator#42 (product)\n"));
    assert_eq!(citriage_payload::eval::read_truth(&yaml).unwrap()[0].culprits, vec!["openshift/widget-operator#42"]);
    let bad = dir.path().join("bad.toml");
    w(&bad, "[[payload]]\ntag = \"x\"\nculprits = [\"not a ref\"]\n");
    let e = citriage_payload::eval::read_truth(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("org/repo#number"), "{e}");

    let r = citriage_payload::eval::eval_snapshots(dir.path(), Some(&t[..1]), None).unwrap();
    assert_eq!((r.payloads, r.errors, r.contradictions), (1, 0, 0));
    assert_eq!((r.culprits_present, r.culprit_top1, r.false_reverts), (1, 1, 0));
    let text = citriage_payload::eval::render_eval(&r);
    assert!(text.contains("widget-operator#42: 1/"), "{text}");
    assert!(text.contains("culprit@1: 1/1 present"), "{text}");
    // Without a truth: every snapshot found, only crashes and contradictions.
    let r = citriage_payload::eval::eval_snapshots(dir.path(), None, None).unwrap();
    assert_eq!((r.payloads, r.errors, r.false_reverts), (1, 0, 0));
    // Deterministic.
    let again = citriage_payload::eval::eval_snapshots(dir.path(), Some(&t[..1]), None).unwrap();
    assert_eq!(citriage_payload::eval::render_eval(&again), text);
}

/// A broken `results.json` is a problem of that run's evidence: the analysis
/// goes on, says so, and classifies nothing it cannot see.
#[test]
fn malformed_results_json_is_a_data_gap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (a, b) = (tag(1, 8), tag(2, 8));
    let j = "e2e-aws-ovn";
    payload(root, &a, "Accepted", &[(j, "Succeeded", 1)]);
    payload(root, &b, "Rejected", &[(j, "Failed", 2)]);
    changelog(root, &b, &a, &[("openshift/console", "console", 7, "Tweak CSS")]);
    file(root, &b, j, "junit/results.json", "[{\"name\": \"x\", \"status\": ");
    let an = run(root, &b);
    assert!(
        an.data_gaps.iter().any(|g| g.contains("results.json") && g.contains("malformed JSON")),
        "{:?}",
        an.data_gaps
    );
    assert_eq!(an.root_causes[0].class.class, FailureClass::Unknown);
    assert_eq!(an.decision.verdict, Verdict::ReportOnly);
}
