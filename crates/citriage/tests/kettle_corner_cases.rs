//! Kettle's corner cases, one job each, in a mirror laid out like the GCS bucket of
//! Prow builds: `citriage fetch --mirror` then `citriage metrics --emit kettle` must
//! write what kettle's code (kubernetes/test-infra `kettle/make_db.py`, `stream.py`,
//! `make_json.py`) and the dashboards' SQL (`metrics/configs/flakes-config.yaml`,
//! `failures-config.yaml`) give for each. The expected figures are worked out by hand
//! from that code; each case says which line of it decides.

mod common;

use common::{run, stderr};
use serde_json::{json, Value};
use std::path::Path;

const BUCKET: &str = "kubernetes-ci-logs";
/// The as-of time: 2026-11-20T12:00:00Z.
const AS_OF: i64 = 1_795_176_000;
const HOUR: i64 = 3_600;

/// One build of a corner-case job.
struct B {
    /// Hours before the as-of time it started.
    ago: i64,
    /// `started.json` (its `timestamp` is filled in).
    started: Value,
    /// `finished.json` (its `timestamp` is filled in unless `no_timestamp`), or none.
    finished: Option<Value>,
    no_finished_timestamp: bool,
    /// Files under the build folder: (relative path, bytes).
    files: Vec<(&'static str, Vec<u8>)>,
}

fn ci(ago: i64, commit: &str, result: Option<&str>) -> B {
    B {
        ago,
        started: json!({"repo-commit": commit, "repo-version": commit, "repos": {"kubernetes/kubernetes": "master"}}),
        finished: result.map(|r| json!({"result": r, "passed": r == "SUCCESS"})),
        no_finished_timestamp: false,
        files: Vec::new(),
    }
}

fn with(mut b: B, rel: &'static str, xml: &[u8]) -> B {
    b.files.push((rel, xml.to_vec()));
    b
}

/// A root `<testsuite>` with cases (name, failed).
fn suite(cases: &[(&str, bool)]) -> Vec<u8> {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<testsuite name=\"s\">\n");
    for (n, f) in cases {
        if *f {
            s.push_str(&format!(
                "  <testcase classname=\"c\" name=\"{n}\"><failure message=\"boom\">x</failure></testcase>\n"
            ));
        } else {
            s.push_str(&format!("  <testcase classname=\"c\" name=\"{n}\" time=\"1.5\"/>\n"));
        }
    }
    s.push_str("</testsuite>\n");
    s.into_bytes()
}

fn write_build(root: &Path, folder: &str, b: &B) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let start = AS_OF - b.ago * HOUR;
    let mut started = b.started.clone();
    started["timestamp"] = json!(start);
    std::fs::write(dir.join("started.json"), started.to_string()).unwrap();
    if let Some(f) = &b.finished {
        let mut f = f.clone();
        if !b.no_finished_timestamp {
            f["timestamp"] = json!(start + 1_800);
        }
        std::fs::write(dir.join("finished.json"), f.to_string()).unwrap();
    }
    for (rel, bytes) in &b.files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn periodic(root: &Path, job: &str, builds: Vec<B>) {
    for (i, b) in builds.iter().enumerate() {
        write_build(root, &format!("logs/{job}/{}", 1000 + i), b);
    }
}

fn presubmit(root: &Path, job: &str, pr: u64, builds: Vec<B>) {
    for (i, b) in builds.iter().enumerate() {
        let id = 2000 + i;
        let folder = format!("pr-logs/pull/kubernetes_kubernetes/{pr}/{job}/{id}");
        write_build(root, &folder, b);
        let ptr = root.join(format!("pr-logs/directory/{job}/{id}.txt"));
        std::fs::create_dir_all(ptr.parent().unwrap()).unwrap();
        std::fs::write(ptr, format!("gs://{BUCKET}/{folder}")).unwrap();
    }
}

/// Builds the mirror; returns the expected `flakes-latest.json` entries (job →
/// entry) and `failures-latest.json`.
fn corner_cases(root: &Path) -> (Value, Value) {
    let pass_fail = |t: &str| (suite(&[(t, false)]), suite(&[(t, true)]));

    // 1. JUnit only directly in artifacts/: `_ls_junit_paths` lists `artifacts/` with a
    // delimiter, so `artifacts/node/junit_02.xml` is never read. `b` fails only there.
    let (ok, bad) = pass_fail("b");
    periodic(
        root,
        "ci-case-subfolder",
        vec![
            with(
                with(ci(30, "c1", Some("SUCCESS")), "artifacts/junit_01.xml", &suite(&[("a", false)])),
                "artifacts/node/junit_02.xml",
                &ok,
            ),
            with(
                with(ci(20, "c1", Some("FAILURE")), "artifacts/junit_01.xml", &suite(&[("a", false)])),
                "artifacts/node/junit_02.xml",
                &bad,
            ),
        ],
    );

    // 2. Builds without finished.json are not counted: `stream.py` only handles
    // `finished.json` events and `make_json.get_builds` selects `finished_time >= ?`
    // (NULL for a running build, or a finished.json without a timestamp).
    let mut no_ts = ci(5, "c4", Some("FAILURE"));
    no_ts.no_finished_timestamp = true;
    periodic(
        root,
        "ci-case-running",
        vec![ci(40, "c1", Some("SUCCESS")), ci(30, "c2", Some("SUCCESS")), ci(10, "c3", None), no_ts],
    );
    // ... and a job whose only build is running has no kettle row at all.
    periodic(root, "ci-case-only-running", vec![ci(3, "c1", None)]);

    // 3. ROUND on the binary value: 80 commits, 7 flaked: 1 - 7/80 = 0.91249999… → 0.912.
    let mut many = Vec::new();
    for i in 0..80 {
        let c = format!("{i:040x}");
        many.push(ci(5 + 2 * i, &c, Some("SUCCESS")));
        if i < 7 {
            many.push(ci(6 + 2 * i, &c, Some("FAILURE")));
        }
    }
    periodic(root, "ci-case-round", many);

    // 4. Names: `child.attrib.get('name', '<unspecified>')`, suites likewise; an empty
    // name stays empty; parsing goes on after an unnamed case.
    let unnamed = |fail: bool| {
        let f = if fail { "<failure>x</failure>" } else { "" };
        format!(
            "<testsuite><testcase classname=\"c\">{f}</testcase><testcase classname=\"c\" name=\"\">{f}</testcase>\
             <testcase classname=\"c\" name=\"after\">{f}</testcase></testsuite>"
        )
        .into_bytes()
    };
    let nameless_suite = |fail: bool| {
        let f = if fail { "<failure>x</failure>" } else { "" };
        format!("<testsuites><testsuite><testcase classname=\"c\" name=\"t\">{f}</testcase></testsuite></testsuites>")
            .into_bytes()
    };
    periodic(
        root,
        "ci-case-unnamed",
        vec![
            with(
                with(ci(30, "c1", Some("SUCCESS")), "artifacts/junit_01.xml", &unnamed(false)),
                "artifacts/junit_02.xml",
                &nameless_suite(false),
            ),
            with(
                with(ci(20, "c1", Some("FAILURE")), "artifacts/junit_01.xml", &unnamed(true)),
                "artifacts/junit_02.xml",
                &nameless_suite(true),
            ),
        ],
    );

    // 5a. <failure> and <skipped> in one case: `if skipped: continue` drops it.
    let both = b"<testsuite><testcase name=\"fs\"><failure>x</failure><skipped/></testcase>\
                 <testcase name=\"x\"><failure>y</failure></testcase></testsuite>";
    periodic(
        root,
        "ci-case-failure-skipped",
        vec![
            with(ci(30, "c1", Some("SUCCESS")), "artifacts/junit_01.xml", &suite(&[("fs", false), ("x", false)])),
            with(ci(20, "c1", Some("FAILURE")), "artifacts/junit_01.xml", both),
        ],
    );
    // 5b. Files expat refuses (`ET.ParseError` → `[]`) and an unexpected root (no tests).
    for (job, xml) in [
        (
            "ci-case-xml-entity",
            &b"<testsuite><testcase name=\"y\"><failure>a&nbsp;b</failure></testcase></testsuite>"[..],
        ),
        ("ci-case-xml-control", b"<testsuite><testcase name=\"y\"><failure>a\x01b</failure></testcase></testsuite>"),
        (
            "ci-case-xml-root",
            b"<results><testsuite><testcase name=\"y\"><failure>z</failure></testcase></testsuite></results>",
        ),
    ] {
        periodic(
            root,
            job,
            vec![
                with(ci(30, "c1", Some("SUCCESS")), "artifacts/junit_01.xml", &suite(&[("y", false)])),
                with(ci(20, "c1", Some("FAILURE")), "artifacts/junit_01.xml", xml),
            ],
        );
    }
    // 5c. A finished.json without result or passed: kettle's `result` is NULL, which
    // `count(result)` leaves out of the runs (citriage calls the build ERROR).
    let mut no_result = ci(20, "c1", None);
    no_result.finished = Some(json!({"metadata": {}}));
    periodic(root, "ci-case-no-result", vec![ci(30, "c1", Some("SUCCESS")), no_result]);
    // 5d. "success" in lower case: kettle keeps the text, and `result = 'SUCCESS'` is false.
    periodic(root, "ci-case-lower-success", vec![ci(50, "c1", Some("success")), ci(40, "c2", Some("success"))]);
    // 5e. A non-numeric time: `float(...)` raises inside `row_for_build`, `make_rows`
    // logs the error and writes no row for the build.
    periodic(
        root,
        "ci-case-bad-time",
        vec![
            with(ci(30, "c1", Some("SUCCESS")), "artifacts/junit_01.xml", &suite(&[("t", false)])),
            with(
                ci(20, "c1", Some("FAILURE")),
                "artifacts/junit_01.xml",
                b"<testsuite><testcase name=\"t\" time=\"1.5s\"><failure>x</failure></testcase></testsuite>",
            ),
        ],
    );

    // 6. Commit and repos: `repo_commit = started.get('repo-commit', started.get('repo-version'))`
    // (never the metadata's), `version = finished.get('version')`; repos from
    // started.json, else the metadata kettle reads (finished.json's when it has one).
    let meta_build = |ago: i64, meta_commit: &str, result: &str| B {
        ago,
        started: json!({"metadata": {"repo-commit": meta_commit}, "repos": {"kubernetes/kubernetes": "master"}}),
        finished: Some(json!({"result": result, "version": "v1.36.0-alpha.1"})),
        no_finished_timestamp: false,
        files: Vec::new(),
    };
    periodic(root, "ci-case-commit", vec![meta_build(30, "aaa", "SUCCESS"), meta_build(20, "bbb", "FAILURE")]);
    let pr_build = |ago: i64, result: &str| B {
        ago,
        started: json!({"pull": "7", "repo-version": "30f64c5b1fc5"}),
        finished: Some(
            json!({"result": result, "metadata": {"repos": {"kubernetes/kubernetes": "master:0a1b,7:beef01"}}}),
        ),
        no_finished_timestamp: false,
        files: Vec::new(),
    };
    presubmit(root, "pull-case-finished-repos", 7, vec![pr_build(30, "SUCCESS"), pr_build(20, "FAILURE")]);

    // 7. `*flaky*` jobs: `stream.should_exclude` tests `'/' + pattern + '/'` as text in
    // the object path, so `.*(flaky|flake).*` never matches and the build is streamed
    // to the week table like any other.
    periodic(root, "ci-case-e2e-flaky", vec![ci(30, "c1", Some("SUCCESS")), ci(20, "c1", Some("FAILURE"))]);

    let flaked_one = json!({"consistency": 0, "flakes": 1, "test_flakes": null});
    let flakes = json!({
        // a never fails where kettle looks; b (sub-folder) is not read.
        "ci-case-subfolder": flaked_one,
        // 2 commits of finished builds, none flaked.
        "ci-case-running": {"consistency": 1, "flakes": 0, "test_flakes": null},
        "ci-case-round": {"consistency": 0.912, "flakes": 7, "test_flakes": null},
        "ci-case-unnamed": {"consistency": 0, "flakes": 1,
            "test_flakes": {"": 1, "<unspecified>": 1, "<unspecified> t": 1, "after": 1}},
        "ci-case-failure-skipped": {"consistency": 0, "flakes": 1, "test_flakes": {"x": 1}},
        "ci-case-xml-entity": flaked_one,
        "ci-case-xml-control": flaked_one,
        "ci-case-xml-root": flaked_one,
        // one run with a result, passed: consistent.
        "ci-case-no-result": {"consistency": 1, "flakes": 0, "test_flakes": null},
        // never SUCCESS: consistently failing.
        "ci-case-lower-success": {"consistency": 1, "flakes": 0, "test_flakes": null},
        // the failing build has no row: one passing run.
        "ci-case-bad-time": {"consistency": 1, "flakes": 0, "test_flakes": null},
        // both builds on version v1.36.0-alpha.1: one commit that flaked.
        "ci-case-commit": flaked_one,
        "pr:pull-case-finished-repos": flaked_one,
        "ci-case-e2e-flaky": flaked_one,
    });
    // Only the lower-case job never passed (`result = 'SUCCESS'`); the running-only job
    // has no row in the week.
    let failures = json!({"ci-case-lower-success": {"failing_days": 2}});
    (flakes, failures)
}

#[test]
fn kettle_mode_follows_kettle_on_every_corner_case() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let (want_flakes, want_failures) = corner_cases(&mirror);
    let db = dir.path().join("s.db");
    let o = run(&db, &["fetch", "--mirror", mirror.to_str().unwrap(), "--bucket", BUCKET, "--all"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("out");
    let o = run(&db, &["metrics", "--emit", "kettle", "--as-of", &AS_OF.to_string(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |f: &str| -> Value { serde_json::from_slice(&std::fs::read(out.join(f)).unwrap()).unwrap() };
    let flakes = read("flakes-latest.json");
    let want = want_flakes.as_object().unwrap();
    for (job, entry) in want {
        assert_eq!(flakes.get(job), Some(entry), "flakes-latest.json entry of {job}");
    }
    let got: Vec<&String> = flakes.as_object().unwrap().keys().collect();
    let expected: Vec<&String> = want.keys().collect();
    assert_eq!(got, expected, "jobs in flakes-latest.json (the running-only job has no finished build)");
    assert_eq!(read("failures-latest.json"), want_failures);
}
