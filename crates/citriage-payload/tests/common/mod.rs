//! A small recorded world for the tests: six `4.22.0-0.nightly` payloads with
//! release-controller responses (quirks included), a GCS mirror of the job runs,
//! PR diffs and CI-configuration changes.
//!
//! T0 green (baseline) ← T1 force-accepted with azure-ovn failed ← T2 aws-ovn
//! infrastructure (vCPU quota) ← T3 culprit PR #101 breaks aws-ovn and gcp-ovn, a
//! systemd RPM bump breaks aws-ovn-upgrade ← T4 target (same failures, metal-ipi
//! without any evidence, a CI step-registry change breaks aws-ovn-fips, the
//! informing vsphere-ovn shows the culprit's signature) ← T5 still pending.

#![allow(dead_code)]

pub mod server;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

pub const STREAM: &str = "4.22.0-0.nightly";
pub const T0: &str = "4.22.0-0.nightly-2026-03-02-080000";
pub const T1: &str = "4.22.0-0.nightly-2026-03-02-200000";
pub const T2: &str = "4.22.0-0.nightly-2026-03-03-080000";
pub const T3: &str = "4.22.0-0.nightly-2026-03-03-200000";
pub const T4: &str = "4.22.0-0.nightly-2026-03-04-080000";
pub const T5: &str = "4.22.0-0.nightly-2026-03-04-200000";
pub const BUCKET: &str = "test-platform-results";

pub const CULPRIT_LOG: &str =
    "E0304 08:12:33.123456       1 widget_controller.go:214] reconcileWidgetStatus: status.conditions[0].reason \"StaleGeneration\" is not allowed";
pub const CULPRIT_DIFF_LINE: &str = "\tallowedReasons = []string{\"Ready\", \"StaleGeneration\"}";

pub fn b64(data: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn job_prow(short: &str) -> String {
    format!("periodic-ci-openshift-release-main-nightly-4.22-e2e-{short}")
}

fn build_id(tag_idx: usize, job_idx: usize, attempt: usize) -> String {
    format!("20290000{tag_idx}{job_idx:02}{attempt}000000")
}

pub fn prow_url(short: &str, tag_idx: usize, attempt: usize) -> String {
    let jobs = ["aws-ovn", "gcp-ovn", "metal-ipi", "aws-ovn-upgrade", "aws-ovn-fips", "azure-ovn", "vsphere-ovn"];
    let j = jobs.iter().position(|x| *x == short).unwrap();
    format!("https://prow.ci.openshift.org/view/gs/{BUCKET}/logs/{}/{}", job_prow(short), build_id(tag_idx, j, attempt))
}

#[derive(Clone, Copy, PartialEq)]
pub enum Run {
    Pass,
    Culprit,
    Infra,
    Systemd,
    CiFlag,
    NoEvidence,
    Etcd,
}

fn write(p: &Path, body: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn junit(cases: &[(&str, Option<&str>)]) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"openshift-tests\" tests=\"3\">\n");
    for (name, fail) in cases {
        match fail {
            None => s.push_str(&format!("    <testcase name=\"{name}\" time=\"1\"/>\n")),
            Some(m) => s.push_str(&format!(
                "    <testcase name=\"{name}\" time=\"2\">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                m.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;"),
                m.replace('&', "&amp;").replace('<', "&lt;")
            )),
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// Writes the artifacts of one run into the GCS mirror.
pub fn write_run(world: &Path, url: &str, run: Run, finished: i64) {
    let rel = url.split("/view/gs/").nth(1).unwrap();
    let dir = rel.split('/').fold(world.join("gcs"), |a, s| a.join(s));
    if run == Run::NoEvidence {
        std::fs::create_dir_all(&dir).unwrap();
        return;
    }
    let result = if run == Run::Pass { "SUCCESS" } else { "FAILURE" };
    write(
        &dir.join("finished.json"),
        json!({"timestamp": finished, "passed": run == Run::Pass, "result": result}).to_string(),
    );
    let (log, cases): (Vec<String>, Vec<(&str, Option<String>)>) = match run {
        Run::Pass => (vec!["INFO[0000] all tests passed".into()], vec![("[sig-apps][bz-Widget Operator] widget controller should reconcile widgets", None)]),
        Run::Culprit => (
            vec!["INFO[0000] running e2e".into(), CULPRIT_LOG.into(), "error: 1 test failed".into()],
            vec![
                ("[sig-apps][bz-Widget Operator] widget controller should reconcile widgets", Some(format!("widget \"w-7f9c2\" never became ready: {}", CULPRIT_LOG.split("] ").nth(1).unwrap()))),
                ("[sig-network] pods should be reachable", None),
            ],
        ),
        Run::Infra => (
            vec![
                "level=info msg=\"Creating infrastructure resources...\"".into(),
                "level=error msg=\"Error: creating EC2 Instance: VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 64 allows for the instance bucket\"".into(),
            ],
            vec![("[sig-installer] install should succeed: infrastructure", Some("install failed: VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 64 allows".into()))],
        ),
        Run::Systemd => (
            vec!["E0304 09:01:02.000000 1 node.go:88] systemd-logind: Failed to start unit: boot ordering race with local-fs-pre.target".into()],
            vec![("[sig-node] nodes should reboot cleanly during upgrade", Some("node worker-0 did not come back: systemd-logind: Failed to start unit: boot ordering race with local-fs-pre.target".into()))],
        ),
        Run::CiFlag => (
            vec![
                "INFO[2026-03-04T09:00:00Z] Running step e2e-aws-ovn-fips-ipi-install-install.".into(),
                "Error: unknown flag: --log-level-v2".into(),
                "INFO[2026-03-04T09:01:00Z] Step e2e-aws-ovn-fips-ipi-install-install failed after 1m0s.".into(),
            ],
            vec![("Run multi-stage test e2e-aws-ovn-fips - e2e-aws-ovn-fips-ipi-install-install container test", Some("Step e2e-aws-ovn-fips-ipi-install-install failed after 1m0s".into()))],
        ),
        Run::Etcd => (
            vec!["E0302 21:00:00.000000 1 etcd.go:12] etcdserver: leader changed while applying the defragmentation request".into()],
            vec![("[sig-etcd] etcd should survive defragmentation", Some("etcdserver: leader changed while applying the defragmentation request".into()))],
        ),
        Run::NoEvidence => unreachable!(),
    };
    write(&dir.join("build-log.txt"), log.join("\n") + "\n");
    let cases: Vec<(&str, Option<&str>)> = cases.iter().map(|(n, m)| (*n, m.as_deref())).collect();
    let file = if run == Run::CiFlag { "artifacts/junit_operator.xml" } else { "artifacts/e2e/junit/junit_e2e.xml" };
    write(&dir.join(file), junit(&cases));
}

fn tag_epoch(tag: &str) -> i64 {
    citriage_model::time::tag_timestamp(tag).unwrap()
}

struct Job {
    short: &'static str,
    run: Run,
    informing: bool,
    offset_min: i64,
    retries: u32,
}

fn jobs_for(idx: usize) -> Vec<Job> {
    use Run::*;
    let j = |short, run, offset_min| Job { short, run, informing: false, offset_min, retries: 0 };
    let mut v = match idx {
        0 => vec![
            j("aws-ovn", Pass, 60),
            j("gcp-ovn", Pass, 180),
            j("metal-ipi", Pass, 150),
            j("aws-ovn-upgrade", Pass, 90),
            j("aws-ovn-fips", Pass, 70),
            j("azure-ovn", Pass, 50),
        ],
        1 => vec![
            j("aws-ovn", Pass, 60),
            j("gcp-ovn", Pass, 180),
            j("metal-ipi", Pass, 150),
            j("aws-ovn-upgrade", Pass, 90),
            j("aws-ovn-fips", Pass, 70),
            j("azure-ovn", Etcd, 50),
        ],
        2 => vec![
            j("aws-ovn", Infra, 60),
            j("gcp-ovn", Pass, 180),
            j("metal-ipi", Pass, 150),
            j("aws-ovn-upgrade", Pass, 90),
            j("aws-ovn-fips", Pass, 70),
            j("azure-ovn", Pass, 50),
        ],
        3 => vec![
            j("aws-ovn", Culprit, 60),
            j("gcp-ovn", Culprit, 180),
            j("metal-ipi", Pass, 150),
            j("aws-ovn-upgrade", Systemd, 90),
            j("aws-ovn-fips", Pass, 70),
            j("azure-ovn", Pass, 50),
        ],
        4 => vec![
            Job { short: "aws-ovn", run: Culprit, informing: false, offset_min: 60, retries: 1 },
            j("gcp-ovn", Culprit, 180),
            j("metal-ipi", NoEvidence, 150),
            j("aws-ovn-upgrade", Systemd, 90),
            j("aws-ovn-fips", CiFlag, 70),
            j("azure-ovn", Pass, 50),
        ],
        _ => vec![],
    };
    if idx == 4 {
        v.push(Job { short: "vsphere-ovn", run: Culprit, informing: true, offset_min: 200, retries: 0 });
    } else if idx < 4 {
        v.push(Job { short: "vsphere-ovn", run: Pass, informing: true, offset_min: 200, retries: 0 });
    }
    v
}

fn pr(org: &str, repo: &str, n: u64, subject: &str) -> Value {
    json!({"subject": subject, "pullID": n, "pullURL": format!("https://github.com/{org}/{repo}/pull/{n}"), "issues": {}})
}

fn hop_prs(idx: usize) -> Vec<(&'static str, &'static str, Value)> {
    match idx {
        1 => vec![("etcd", "etcd", pr("openshift", "etcd", 50, "Bump etcd to 3.5.21"))],
        2 => vec![(
            "installer",
            "installer, baremetal-installer",
            pr("openshift", "installer", 200, "Tidy up install-config validation messages"),
        )],
        3 => vec![
            (
                "widget-operator",
                "widget-operator",
                pr("openshift", "widget-operator", 101, "Validate widget status reasons"),
            ),
            (
                "cluster-widget-api",
                "widget-api",
                pr("openshift", "cluster-widget-api", 102, "Document widget status handling"),
            ),
            ("console", "console", pr("openshift", "console", 103, "Fix topology labels")),
        ],
        4 => vec![(
            "machine-config-operator",
            "machine-config-operator",
            pr("openshift", "machine-config-operator", 104, "Render kubelet config from the new template"),
        )],
        5 => vec![("console", "console", pr("openshift", "console", 105, "Tweak CSS"))],
        _ => vec![],
    }
}

fn changelog_json(from: &str, to: &str, hops: &[usize]) -> Value {
    let mut images = Vec::new();
    for &h in hops {
        for (repo, name, c) in hop_prs(h) {
            images.push(json!({"name": name, "path": format!("https://github.com/openshift/{repo}/tree/abcdef{h}"), "commits": [c], "fullChangeLog": ""}));
        }
    }
    json!({"from": {"name": from, "created": "2026-03-01T00:00:00Z"}, "to": {"name": to}, "components": [{"name": "Kubernetes", "version": "1.35.1"}], "updatedImages": images})
}

fn node_streams(hops: &[usize]) -> Value {
    if hops.contains(&3) {
        json!([{"name": "Red Hat Enterprise Linux CoreOS 9.6", "tag": "rhel-coreos", "rpmDiff": {"changed": {"systemd": {"old": "252-51.el9", "new": "252-52.el9"}, "systemd-udev": {"old": "252-51.el9", "new": "252-52.el9"}}}}])
    } else {
        json!([])
    }
}

pub const TAGS: [&str; 6] = [T0, T1, T2, T3, T4, T5];

fn release_info(idx: usize) -> Value {
    let tag = TAGS[idx];
    let t = tag_epoch(tag);
    let mut blocking = serde_json::Map::new();
    let mut informing = serde_json::Map::new();
    let jobs = jobs_for(idx);
    let shorts = ["aws-ovn", "gcp-ovn", "metal-ipi", "aws-ovn-upgrade", "aws-ovn-fips", "azure-ovn"];
    if idx == 5 {
        for s in shorts {
            blocking.insert(s.into(), json!({"state": "Pending", "url": ""}));
        }
    }
    for j in &jobs {
        let url = prow_url(j.short, idx, j.retries as usize);
        let state = if j.run == Run::Pass { "Succeeded" } else { "Failed" };
        let when = citriage_model::time::rfc3339(t + j.offset_min * 60);
        let mut v = json!({"state": state, "url": url, "transitionTime": when});
        if j.retries > 0 {
            v["retries"] = json!(j.retries);
            v["previousAttemptURLs"] =
                json!((0..j.retries as usize).map(|a| prow_url(j.short, idx, a)).collect::<Vec<_>>());
        }
        if j.informing {
            informing.insert(j.short.into(), v);
        } else {
            blocking.insert(j.short.into(), v);
        }
    }
    let phase = match idx {
        0 | 1 => "Accepted",
        5 => "Ready",
        _ => "Rejected",
    };
    let mut info = json!({
        "name": tag,
        "phase": phase,
        "results": {"blockingJobs": blocking, "informingJobs": informing},
        "upgradesTo": [{"From": TAGS[idx.saturating_sub(1)], "To": tag, "Success": 1, "Failure": 0, "Total": 1, "History": {}}],
        "changeLog": b64(format!("<h2>Changes from {}</h2>", TAGS[idx.saturating_sub(1)]).as_bytes()),
    });
    if idx > 0 {
        info["changeLogJson"] = changelog_json(TAGS[idx - 1], tag, &[idx]);
        info["nodeImageStreams"] = node_streams(&[idx]);
    }
    if idx == 2 {
        // Quirk: no informing jobs at all, results present but informingJobs omitted.
        info["results"].as_object_mut().unwrap().remove("informingJobs");
    }
    info
}

const DIFF_101: &str = "diff --git a/pkg/widget/status.go b/pkg/widget/status.go
index 1111111..2222222 100644
--- a/pkg/widget/status.go
+++ b/pkg/widget/status.go
@@ -10,6 +10,11 @@ import (
 
 var (
-\tallowedReasons = []string{\"Ready\"}
+\tallowedReasons = []string{\"Ready\", \"StaleGeneration\"}
 )
 
+// validateReason rejects reasons outside allowedReasons.
+func validateReason(reason string) error {
+\treturn fmt.Errorf(\"reconcileWidgetStatus: status.conditions[0].reason %q is not allowed\", reason)
+}
+
 func reconcile() {}
";

const DIFF_102: &str = "diff --git a/docs/status.md b/docs/status.md
--- a/docs/status.md
+++ b/docs/status.md
@@ -1,2 +1,3 @@
 # Widget status
+The controller's reconcileWidgetStatuses loop reports when a widget status reason is not allowed.
 end
";

const DIFF_103: &str = "diff --git a/frontend/topology.tsx b/frontend/topology.tsx
--- a/frontend/topology.tsx
+++ b/frontend/topology.tsx
@@ -5,1 +5,1 @@
-const labels = node.labels;
+const labels = node.metadata.labels ?? {};
";

const DIFF_104: &str = "diff --git a/templates/kubelet.yaml b/templates/kubelet.yaml
--- a/templates/kubelet.yaml
+++ b/templates/kubelet.yaml
@@ -1,1 +1,2 @@
 kind: KubeletConfiguration
+maxPods: 300
";

/// Builds the world under `root`; returns it.
pub fn build_world(root: &Path) -> PathBuf {
    let rc = root.join("release-controller/api/v1/releasestream").join(STREAM);
    let tags: Vec<Value> = TAGS
        .iter()
        .rev()
        .enumerate()
        .map(|(i, t)| {
            let phase = match 5 - i {
                0 | 1 => "Accepted",
                5 => "Ready",
                _ => "Rejected",
            };
            json!({"name": t, "phase": phase, "pullSpec": format!("registry.ci.openshift.org/ocp/release:{t}"), "downloadURL": ""})
        })
        .collect();
    // Quirk: the server's order is not trusted; write it oldest first.
    let mut tags_oldest_first = tags.clone();
    tags_oldest_first.reverse();
    write(&rc.join("tags.json"), json!({"name": STREAM, "tags": tags_oldest_first}).to_string());
    for idx in 0..TAGS.len() {
        let info = release_info(idx);
        write(&rc.join("release").join(format!("{}.json", TAGS[idx])), serde_json::to_string_pretty(&info).unwrap());
        if idx > 0 {
            let mut hop = info.clone();
            hop["changeLogJson"] = changelog_json(TAGS[idx - 1], TAGS[idx], &[idx]);
            write(&rc.join("release").join(format!("{}?from={}.json", TAGS[idx], TAGS[idx - 1])), hop.to_string());
        }
        let t = tag_epoch(TAGS[idx]);
        for j in jobs_for(idx) {
            for a in 0..=j.retries as usize {
                write_run(
                    root,
                    &prow_url(j.short, idx, a),
                    j.run,
                    t + j.offset_min * 60 - if a < j.retries as usize { 1800 } else { 0 },
                );
            }
        }
    }
    // Cumulative changelog of T4 since T0.
    let mut cum = release_info(4);
    cum["changeLogJson"] = changelog_json(T0, T4, &[1, 2, 3, 4]);
    cum["nodeImageStreams"] = node_streams(&[1, 2, 3, 4]);
    write(&rc.join("release").join(format!("{T4}?from={T0}.json")), cum.to_string());
    // PR diffs.
    let gh = root.join("github/openshift");
    write(&gh.join("widget-operator/pull/101.diff"), DIFF_101);
    write(&gh.join("cluster-widget-api/pull/102.diff"), DIFF_102);
    write(&gh.join("console/pull/103.diff"), DIFF_103);
    write(&gh.join("machine-config-operator/pull/104.diff"), DIFF_104);
    write(
        &gh.join("widget-operator/pull/101.jobs.json"),
        json!([
            "pull-ci-openshift-widget-operator-main-e2e-aws-ovn-serial",
            "pull-ci-openshift-widget-operator-main-unit"
        ])
        .to_string(),
    );
    // CI configuration: the culprit change before T4's run, an unrelated one, and one after the run.
    let changes = json!([
        {"sha": "1a2b3c4d5e6f77889900", "date": "2026-03-04T02:00:00Z", "message": "ipi-install: pass the new log level flag (#7001)",
         "files": [{"filename": "ci-operator/step-registry/ipi/install/install/ipi-install-install-commands.sh",
                    "patch": "@@ -10,2 +10,2 @@\n echo installing\n-openshift-install create cluster --dir \"$DIR\"\n+openshift-install create cluster --dir \"$DIR\" --log-level-v2=debug"}]},
        {"sha": "99aa88bb77cc66dd55ee", "date": "2026-03-04T03:00:00Z", "message": "Onboard a new repository (#7002)",
         "files": [{"filename": "ci-operator/config/acme/widgets/acme-widgets-main.yaml", "patch": "@@ -0,0 +1 @@\n+build_root: {}"}]},
        {"sha": "feedfacecafebeef0000", "date": "2026-03-04T12:00:00Z", "message": "ipi-install: tune retries (#7003)",
         "files": [{"filename": "ci-operator/step-registry/ipi/install/install/ipi-install-install-commands.sh",
                    "patch": "@@ -20,1 +20,1 @@\n-RETRIES=3\n+RETRIES=5 # --log-level-v2 was reverted upstream"}]}
    ]);
    write(&root.join("ci-config/changes.json"), serde_json::to_string_pretty(&changes).unwrap());
    root.to_path_buf()
}
