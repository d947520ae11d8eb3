//! The payload-snapshot directory layout as an offline source and evidence
//! provider, with files missing on purpose.

use std::path::Path;

use citriage_payload::action::CandidateAction;
use citriage_payload::classify::FailureClass;
use citriage_payload::evidence::JunitState;
use citriage_payload::{analyze, AnalyzeOptions, PayloadSource, SnapshotDir};
use serde_json::json;

const A: &str = "4.22.0-0.nightly-2026-02-25-080000"; // baseline, all green
const B: &str = "4.22.0-0.nightly-2026-02-25-200000"; // green job states, payload.json missing
const C: &str = "4.22.0-0.nightly-2026-02-26-080000"; // target

fn w(p: &Path, body: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn url(job: &str, id: u64) -> String {
    format!("https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-{job}/{id}")
}

fn job_json(dir: &Path, name: &str, state: &str, id: u64) {
    w(
        &dir.join("job.json"),
        json!({"name": name, "state": state, "lifecycle": "blocking", "url": url(name, id),
               "gcs_url": format!("https://gcsweb-ci.example/gcs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-{name}/{id}/"),
               "retries": 0, "previousAttemptURLs": [], "is_aggregated": name.starts_with("aggregated-")})
        .to_string(),
    );
}

const AGG_XML: &str = r#"<?xml version="1.0"?>
<testsuites>
<testsuite name="aggregated">
<testcase name="[sig-network] services should survive the upgrade">
<failure message="Failed: Passed 5 times, failed 5 times.  The historical pass rate is 98%.  The required number of passes is 8.">aggregated failure</failure>
<system-out>name: '[sig-network] services should survive the upgrade'
testsuitename: openshift-tests-upgrade
summary: 'Failed: Passed 5 times, failed 5 times.  The historical pass rate is 98%.  The
  required number of passes is 8.'
passes:
- jobrunid: "9001"
  humanurl: https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-upgrade-from-stable-4.21-e2e-aws-ovn-upgrade/9001
  gcsartifacturl: https://gcsweb-ci.example/9001
failures:
- jobrunid: "9002"
  humanurl: https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-upgrade-from-stable-4.21-e2e-aws-ovn-upgrade/9002
  gcsartifacturl: https://gcsweb-ci.example/9002
skips: []
</system-out>
</testcase>
<testcase name="[sig-arch] passes"><system-out>name: '[sig-arch] passes'
summary: 'Passed: Passed 10 times, failed 0 times.  The historical pass rate is 99%.  The required number of passes is 8.'
passes:
- jobrunid: "9001"
  humanurl: https://prow.ci.openshift.org/view/gs/test-platform-results/logs/periodic-ci-openshift-release-main-ci-4.22-upgrade-from-stable-4.21-e2e-aws-ovn-upgrade/9001
failures: []
</system-out></testcase>
</testsuite>
</testsuites>
"#;

fn build(root: &Path) {
    let jobs = ["e2e-aws-ovn", "e2e-gcp-ovn", "aggregated-aws-ovn-upgrade-4.22-micro"];
    // A: green payload.json.
    let blocking: serde_json::Map<String, serde_json::Value> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.to_string(), json!({"state": "Succeeded", "url": url(j, 100 + i as u64)})))
        .collect();
    w(&root.join(A).join("payload.json"), json!({"name": A, "phase": "Accepted", "results": {"blockingJobs": blocking}, "_release_url": "x", "_source": "rc"}).to_string());
    // B: no payload.json, only job.json files (all green).
    for (i, j) in jobs.iter().enumerate() {
        job_json(&root.join(B).join("jobs/blocking").join(j), j, "Succeeded", 200 + i as u64);
    }
    w(
        &root.join(B).join("changelog.json"),
        json!({"changeLogJson": {"from": {"name": A}, "to": {"name": B}, "updatedImages": []}}).to_string(),
    );
    // C: target.
    let c = root.join(C);
    let mut blocking = serde_json::Map::new();
    for (i, j) in jobs.iter().enumerate() {
        blocking.insert(j.to_string(), json!({"state": "Failed", "url": url(j, 300 + i as u64)}));
        job_json(&c.join("jobs/blocking").join(j), j, "Failed", 300 + i as u64);
    }
    w(&c.join("payload.json"), json!({"name": C, "phase": "Rejected", "results": {"blockingJobs": blocking}, "_release_url": "x", "_source": "rc"}).to_string());
    w(
        &c.join("changelog.json"),
        json!({"changeLogJson": {"from": {"name": B}, "to": {"name": C}, "updatedImages": [
            {"name": "cluster-network-operator", "path": "https://github.com/openshift/cluster-network-operator/tree/abc",
             "commits": [{"subject": "Mirror MTU probes", "pullID": 2500, "pullURL": "https://github.com/openshift/cluster-network-operator/pull/2500"}]},
            {"name": "console", "path": "https://github.com/openshift/console/tree/def",
             "commits": [{"subject": "Tweak labels", "pullID": 900, "pullURL": "https://github.com/openshift/console/pull/900"}]}]},
            "nodeImageStreams": []})
        .to_string(),
    );
    // e2e-aws-ovn: JUnit XML + build log.
    let aws = c.join("jobs/blocking/e2e-aws-ovn");
    w(
        &aws.join("junit/junit_e2e.xml"),
        "<testsuite name=\"openshift-tests\"><testcase name=\"[sig-network] MTU probes should succeed\"><failure message=\"probe failed: validateClusterNetworkMTU: MTU 8901 exceeds the underlay\">stack</failure></testcase><testcase name=\"[sig-x] ok\"/></testsuite>",
    );
    w(
        &aws.join("build_log.json"),
        json!({"total_lines": 900, "error_warning_count": 1, "error_warning_lines": [
            {"line_number": 812, "text": "E0226 09:00:00.000000 1 mtu.go:77] validateClusterNetworkMTU: MTU 8901 exceeds the underlay"}],
            "tail_start_line": 720, "tail_lines": []})
        .to_string(),
    );
    // e2e-gcp-ovn: no JUnit, no build log (collection failed).
    // The aggregated job: junit-aggregated.xml.
    w(&c.join("jobs/blocking/aggregated-aws-ovn-upgrade-4.22-micro/junit/junit-aggregated.xml"), AGG_XML);
    // PR diffs where the snapshot puts them.
    w(
        &c.join("cluster-network-operator/prs/2500/code.diff"),
        "diff --git a/pkg/network/mtu.go b/pkg/network/mtu.go\n--- a/pkg/network/mtu.go\n+++ b/pkg/network/mtu.go\n@@ -70,2 +70,4 @@\n func x() {\n+func validateClusterNetworkMTU(mtu int) error {\n+\treturn fmt.Errorf(\"MTU %d exceeds the underlay\", mtu)\n }\n",
    );
    w(&c.join("console/prs/900/code.diff"), "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-a\n+b\n");
    w(
        &root.join("summary.json"),
        json!({"payload_tag": C, "phase": "Rejected", "version": "4.22", "stream": "nightly", "architecture": "amd64",
               "payloads": [{"tag": C, "phase": "Rejected", "prs": [{"url": "https://github.com/openshift/cluster-network-operator/pull/2500",
                 "component": "cluster-network-operator", "number": 2500, "description": "Mirror MTU probes",
                 "diff": format!("{C}/cluster-network-operator/prs/2500/code.diff")}]},
                 {"tag": B, "phase": "Accepted"}, {"tag": A, "phase": "Accepted"}]})
        .to_string(),
    );
}

#[test]
fn snapshot_directory_with_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let snap = SnapshotDir::open(dir.path()).unwrap();
    assert_eq!(snap.target_tag().as_deref(), Some(C));
    assert_eq!(snap.stream_name().as_deref(), Some("4.22.0-0.nightly"));
    let tags = snap.tags("4.22.0-0.nightly").unwrap();
    assert_eq!(tags.tags.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), vec![C, B, A]);
    // B has no payload.json: rebuilt from its job.json files.
    let b = snap.release("4.22.0-0.nightly", B).unwrap();
    assert!(b.all_blocking_succeeded());
    assert!(b.provenance.unwrap().contains("rebuilt"));
    // changelog.json answers only "from the previous payload".
    assert!(snap.changelog("4.22.0-0.nightly", C, B).is_ok());
    assert!(snap.changelog("4.22.0-0.nightly", C, A).unwrap_err().is_not_found());

    let a = analyze(&snap, &snap, &AnalyzeOptions::new(C)).unwrap();
    assert_eq!(a.baseline.as_deref(), Some(B));
    // The culprit: verbatim symbol in the snapshot's code.diff.
    let s = a.suspects.iter().find(|s| s.candidate == "pr:openshift/cluster-network-operator#2500").unwrap();
    assert_eq!(s.rank, 1);
    assert!(s.score.total >= 85, "{}", s.score.total);
    assert_eq!(s.action, CandidateAction::StageRevert);
    let em = s.score.error_match.as_ref().unwrap();
    assert_eq!(em.diff_file, "pkg/network/mtu.go");
    // The format string that renders the failure's message (`MTU %d exceeds the
    // underlay`, line 72) is the error match, ahead of the function's name (line 71).
    assert_eq!(em.diff_line, 72);
    // The console PR has a diff too but nothing in common.
    assert!(a.suspects.iter().all(|s| s.candidate != "pr:openshift/console#900"));
    // The job without JUnit is unknown, not green.
    let gcp = a.failed_jobs.iter().find(|j| j.name == "e2e-gcp-ovn").unwrap();
    assert_eq!(gcp.junit, Some(JunitState::Missing));
    assert_eq!(gcp.modes[0].class.class, FailureClass::Unknown);
    // The aggregated job: underlying job and verdict from junit-aggregated.xml.
    let agg = a.failed_jobs.iter().find(|j| j.name.starts_with("aggregated-")).unwrap();
    let summary = agg.aggregated.as_ref().unwrap();
    assert_eq!(
        summary.underlying_jobs,
        vec!["periodic-ci-openshift-release-main-ci-4.22-upgrade-from-stable-4.21-e2e-aws-ovn-upgrade"]
    );
    assert_eq!(summary.tests_total, 2);
    assert_eq!(summary.failed_tests.len(), 1);
    let v = summary.failed_tests[0].verdict.as_ref().unwrap();
    assert_eq!((v.passed, v.passes, v.failures, v.required_passes), (false, 5, 5, Some(8)));
    assert_eq!(summary.failed_tests[0].failures[0].job_run_id, "9002");
    assert!(agg.modes[0].tests.iter().any(|t| t == "[sig-network] services should survive the upgrade"));
    // Evidence lines cite the build log with its line number and the gcsweb URL.
    let aws = a.failed_jobs.iter().find(|j| j.name == "e2e-aws-ovn").unwrap();
    let logl = aws.modes[0].lines.iter().find(|l| l.at.file == "build-log.txt").unwrap();
    assert_eq!(logl.at.line, Some(812));
    assert!(logl.at.url.as_deref().unwrap().ends_with("/300/build-log.txt"));
}

#[test]
fn results_json_without_xml() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let agg_dir = dir.path().join(C).join("jobs/blocking/aggregated-aws-ovn-upgrade-4.22-micro/junit");
    std::fs::remove_file(agg_dir.join("junit-aggregated.xml")).unwrap();
    w(
        &agg_dir.join("results.json"),
        json!([{"name": "[sig-network] services should survive the upgrade", "status": "failed", "suite_name": "aggregated",
                "failure_message": "Failed: Passed 5 times, failed 5 times.  The historical pass rate is 98%.  The required number of passes is 8.",
                "aggregated": {"passes": [{"jobrunid": "9001", "humanurl": url("upgrade-from-stable-4.21-e2e-aws-ovn-upgrade", 9001)}],
                               "failures": [{"jobrunid": "9002", "humanurl": url("upgrade-from-stable-4.21-e2e-aws-ovn-upgrade", 9002)}], "skips": []}}])
        .to_string(),
    );
    let snap = SnapshotDir::open(dir.path()).unwrap();
    let a = analyze(&snap, &snap, &AnalyzeOptions::new(C)).unwrap();
    let agg = a.failed_jobs.iter().find(|j| j.name.starts_with("aggregated-")).unwrap();
    let s = agg.aggregated.as_ref().unwrap();
    assert_eq!(
        s.underlying_jobs,
        vec!["periodic-ci-openshift-release-main-ci-4.22-upgrade-from-stable-4.21-e2e-aws-ovn-upgrade"]
    );
    assert_eq!(s.failed_tests[0].verdict.as_ref().unwrap().required_passes, Some(8));
    assert_eq!(agg.modes[0].tests, vec!["[sig-network] services should survive the upgrade"]);
}

#[test]
fn snapshot_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    w(&dir.path().join(C).join("payload.json"), "{ not json");
    let snap = SnapshotDir::open(dir.path()).unwrap();
    let e = analyze(&snap, &snap, &AnalyzeOptions::new(C)).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("payload.json") && m.contains("malformed JSON"), "{m}");
    assert!(SnapshotDir::open(dir.path().join("nope")).is_err());
}

#[test]
fn a_snapshot_is_found_from_whatever_folder_is_named() {
    use citriage_payload::snapshot::locate;
    let repo = tempfile::tempdir().unwrap();
    let tag = "5.0.0-0.ci-2026-07-11-223154";
    let older = "5.0.0-0.ci-2026-07-10-071205";
    for top in [tag.to_string(), format!("{tag}-backfilled")] {
        for inner in ["5.0/ci", "ci"] {
            for t in [tag, older] {
                let d = repo.path().join(&top).join(inner).join(t);
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("payload.json"), "{}").unwrap();
            }
        }
    }
    let own = repo.path().join(tag);
    // The repository, the payload's own folder, the inner folder: the same folder read.
    for named in [repo.path().to_path_buf(), own.clone(), own.join("5.0/ci")] {
        let l = locate(&named, tag).unwrap();
        assert_eq!((l.root.clone(), l.tag.as_str()), (own.join("5.0/ci"), tag), "from {}", named.display());
    }
    // The backfilled snapshot, named by its folder (not a payload tag).
    let back = repo.path().join(format!("{tag}-backfilled"));
    let l = locate(&back, &format!("{tag}-backfilled")).unwrap();
    assert_eq!((l.root, l.tag.as_str()), (back.join("5.0/ci"), tag));
    // An older payload of the chain is found in the folder that holds it.
    assert_eq!(locate(&own, older).unwrap().tag, tag);
    // Nothing there: the error names the folder and what it holds.
    let e = locate(&own, "4.22.0-0.nightly-2026-01-01-000000").unwrap_err().to_string();
    assert!(e.contains(&own.display().to_string()) && e.contains(tag), "{e}");
}
