//! `failure_data.json` export checked against go.k8s.io/triage's integration case (read from
//! the shared reference directory next to the checkout; skipped when absent), plus the owner
//! annotation cases and the rich export.

use std::collections::BTreeMap;
use std::path::PathBuf;

use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::export::{
    builds_to_columns, failure_data, render_slice, rich_export, BuildRecord, ExportOptions, JobCollection,
};
use citriage_patterns::normalize::Profile;
use citriage_patterns::signatures::Catalogue;
use serde_json::Value;

fn shared(rel: &str) -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(rel);
    if d.exists() {
        Some(d)
    } else {
        eprintln!("skipping: shared data not found at {}", d.display());
        None
    }
}

fn num(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

fn string(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

#[test]
fn summarize_integration_matches_reference() {
    let Some(dir) = shared("data/k8s/test-infra/triage/summarize_integration") else {
        return;
    };
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("read fixture");
    let builds_json: Value = serde_json::from_str(&read("builds.json")).expect("builds");
    let builds: Vec<BuildRecord> = builds_json
        .as_array()
        .expect("array")
        .iter()
        .map(|b| BuildRecord {
            path: string(&b["path"]),
            job: string(&b["job"]),
            number: num(&b["number"]) as u64,
            started: num(&b["started"]),
            elapsed: num(&b["elapsed"]),
            tests_run: num(&b["tests_run"]),
            tests_failed: num(&b["tests_failed"]),
            result: string(&b["result"]),
            executor: string(&b["executor"]),
            pr: string(&b["pr"]),
        })
        .collect();
    let rows: Vec<(String, String, String)> = read("tests.json")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("test row");
            (string(&v["name"]), string(&v["build"]), string(&v["failure_text"]))
        })
        .collect();
    let owners: BTreeMap<String, Vec<String>> = serde_json::from_str(&read("owners.json")).expect("owners");
    let job_of = |path: &str| builds.iter().find(|b| b.path == path).map(|b| b.job.clone()).unwrap_or_default();
    let jobs: Vec<String> = rows.iter().map(|r| job_of(&r.1)).collect();
    let fs: Vec<FailureRef> =
        rows.iter().zip(&jobs).map(|((name, build, text), job)| FailureRef { test: name, text, job, build }).collect();
    let c = cluster(&fs, &ClusterConfig::new(Profile::K8sTriage));
    let data = failure_data(&c, &fs, &builds, &ExportOptions::k8s_triage(owners));
    let mut got = serde_json::to_value(&data).expect("json");
    let expected: Value = serde_json::from_str(&read("expected_failure_data.json")).expect("expected");
    // ids are not asserted by the reference; check they are 20 hex chars, then blank them
    for cl in got["clustered"].as_array_mut().expect("clustered") {
        let id = cl["id"].as_str().expect("id");
        assert_eq!(id.len(), 20);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        cl["id"] = Value::String("<any>".into());
    }
    assert_eq!(got["clustered"], expected["clustered"]);
    assert_eq!(got["builds"], expected["builds"]);

    // the per-prefix slice of the first cluster
    let prefix = &data.clustered[0].id[..2];
    let slice = render_slice(&data, &builds, Some(prefix), None);
    assert_eq!(slice.clustered[0], data.clustered[0]);
    let want_started: Vec<i64> = expected["slice_failure_data_<first two hex of clustered[0].id>.json"]
        ["builds.cols.started"]
        .as_array()
        .expect("started")
        .iter()
        .map(num)
        .collect();
    assert_eq!(slice.builds.cols.started, want_started);
}

fn one_build(job: &str, number: u64, started: i64) -> BuildRecord {
    BuildRecord {
        path: format!("gs://logs/{job}/{number}"),
        job: job.to_string(),
        number,
        started,
        elapsed: 1,
        tests_run: 1,
        tests_failed: 1,
        result: "FAILURE".into(),
        executor: String::new(),
        pr: String::new(),
    }
}

#[test]
fn owner_annotation_cases() {
    let Some(p) = shared("data/k8s/test-infra/triage/golden_misc.json") else {
        return;
    };
    let g: Value = serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json");
    for case in g["annotateOwners"].as_array().expect("cases") {
        let name = case["test_name"].as_str().expect("name");
        let owners: BTreeMap<String, Vec<String>> = serde_json::from_value(case["owners"].clone()).expect("owners");
        let builds = vec![one_build("job", 1, 1000), one_build("job", 2, 1000)];
        let fs = [
            FailureRef { test: name, text: "boom", job: "job", build: "gs://logs/job/1" },
            FailureRef { test: name, text: "boom", job: "job", build: "gs://logs/job/2" },
        ];
        let c = cluster(&fs, &ClusterConfig::new(Profile::K8sTriage));
        let data = failure_data(&c, &fs, &builds, &ExportOptions::k8s_triage(owners));
        assert_eq!(data.clustered[0].owner, case["expected_owner"].as_str().expect("owner"), "{}", case["test"]);
    }
}

#[test]
fn columns_dense_and_sparse() {
    let b = [
        one_build("a", 3, 10),
        one_build("a", 4, 11),
        one_build("b", 5, 12),
        one_build("b", 9, 13),
        one_build("c", 0, 14),
    ];
    let cols = builds_to_columns(b.iter());
    assert_eq!(cols.jobs["a"], JobCollection::Dense([3, 2, 0]));
    match &cols.jobs["b"] {
        JobCollection::Sparse(m) => {
            assert_eq!(m["5"], 2);
            assert_eq!(m["9"], 3);
        }
        other => panic!("{other:?}"),
    }
    assert!(!cols.jobs.contains_key("c"));
    assert_eq!(cols.job_paths["a"], "gs://logs/a");
    assert_eq!(cols.cols.started, vec![10, 11, 12, 13]);
}

#[test]
fn singletons_hidden_only_on_request_and_rich_export_has_evidence() {
    let builds = vec![one_build("j", 1, 5), one_build("j", 2, 5)];
    let fs = [
        FailureRef { test: "[sig-node] a", text: "pod web-1 ImagePullBackOff", job: "j", build: "gs://logs/j/1" },
        FailureRef { test: "[sig-node] a", text: "pod web-1 ImagePullBackOff", job: "j", build: "gs://logs/j/2" },
        FailureRef { test: "[sig-apps] b", text: "exit 1", job: "j", build: "gs://logs/j/2" },
    ];
    let c = cluster(&fs, &ClusterConfig::new(Profile::Default));
    let shown = failure_data(&c, &fs, &builds, &ExportOptions::default());
    assert_eq!(shown.clustered.len(), 2);
    let hidden = failure_data(&c, &fs, &builds, &ExportOptions::k8s_triage(BTreeMap::new()));
    assert_eq!(hidden.clustered.len(), 1);
    assert_eq!(hidden.clustered[0].owner, "node");
    let rich = rich_export(&c, &fs, None, Some(&Catalogue::builtin()), &BTreeMap::new());
    assert_eq!(rich.clusters.len(), 2);
    assert_eq!(rich.clusters[0].size, 2);
    assert_eq!(rich.clusters[0].signatures[0].id, "image-pull-backoff");
    assert_eq!(rich.accounting.input, 3);
    let json = serde_json::to_string(&rich).expect("json");
    assert!(json.contains("\"schema\":\"citriage.clusters/v1\""));
}
