//! Reads a generated `tiny` world back with independent parsers and checks it
//! against `truth.json`: build folders, evidence line numbers, dashboards
//! recomputed from the raw builds with kettle's rules, job history,
//! `prowjobs.js`, payload culprits, and byte-for-byte determinism.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use citriage_synth::{generate, Summary, SynthParams};
use quick_xml::events::Event;
use serde_json::Value;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    summary: Summary,
}

fn tiny() -> SynthParams {
    let mut p = SynthParams::preset("tiny").expect("tiny preset exists");
    // Lets CI sweep seeds: CITRIAGE_SYNTH_TEST_SEED=7 cargo test -p citriage-synth
    if let Some(seed) = std::env::var("CITRIAGE_SYNTH_TEST_SEED").ok().and_then(|s| s.parse().ok()) {
        p.seed = seed;
    }
    p
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("world");
        let summary = generate(&tiny(), &root, &mut |_| {}).expect("generate tiny");
        World { _dir: dir, root, summary }
    })
}

fn read(p: &Path) -> Vec<u8> {
    fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&read(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn truth() -> Value {
    json(&world().root.join("truth.json"))
}

fn builds_truth() -> Vec<Value> {
    let text = String::from_utf8(read(&world().root.join("truth/builds.jsonl"))).expect("utf8");
    text.lines().map(|l| serde_json::from_str(l).expect("jsonl line")).collect()
}

/// Splits at `\r\n`, lone `\r` and `\n` (the truth's line convention).
fn split_lines(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' => {
                out.push(String::from_utf8_lossy(&cur).into_owned());
                cur.clear();
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => {
                out.push(String::from_utf8_lossy(&cur).into_owned());
                cur.clear();
            }
            b => cur.push(b),
        }
        i += 1;
    }
    if !cur.is_empty() {
        out.push(String::from_utf8_lossy(&cur).into_owned());
    }
    out
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' && it.peek() == Some(&'[') {
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn xml_unescape(s: &str) -> String {
    s.replace("&#xA;", "\n")
        .replace("&#x9;", "\t")
        .replace("&#xD;", "\r")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn signatures() -> BTreeMap<String, String> {
    truth()["patterns"]
        .as_array()
        .expect("patterns")
        .iter()
        .map(|p| (p["id"].as_str().unwrap_or("").to_string(), p["signature"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    walk(root, &mut files);
    files
        .into_iter()
        .map(|f| {
            let data = read(&f);
            (f.strip_prefix(root).expect("prefix").to_path_buf(), data)
        })
        .collect()
}

#[test]
fn same_seed_gives_identical_trees() {
    let w = world();
    let b = tempfile::tempdir().expect("tempdir");
    let mut p1 = tiny();
    p1.threads = 1; // the thread count must not matter
    let sb = generate(&p1, b.path(), &mut |_| {}).expect("b");
    assert_eq!(w.summary, sb);
    let ta = tree(&w.root);
    let tb = tree(b.path());
    let na: Vec<&PathBuf> = ta.iter().map(|x| &x.0).collect();
    let nb: Vec<&PathBuf> = tb.iter().map(|x| &x.0).collect();
    assert_eq!(na, nb, "same file list");
    assert_eq!(ta.len() as u64, sb.files, "summary counts every file");
    let total: u64 = ta.iter().map(|x| x.1.len() as u64).sum();
    assert_eq!(total, sb.bytes, "summary counts every byte");
    for ((pa, da), (_, db)) in ta.iter().zip(&tb) {
        assert!(da == db, "{} differs", pa.display());
    }
}

#[test]
fn another_seed_gives_another_world() {
    let mut p = tiny();
    p.jobs = 6;
    p.builds_per_job = 4;
    p.payloads = 3;
    let a = tempfile::tempdir().expect("tempdir");
    let c = tempfile::tempdir().expect("tempdir");
    generate(&p, a.path(), &mut |_| {}).expect("a");
    p.seed += 1;
    generate(&p, c.path(), &mut |_| {}).expect("c");
    let ta = tree(a.path());
    let tc = tree(c.path());
    let differs = ta.len() != tc.len() || ta.iter().zip(&tc).any(|(x, y)| x != y);
    assert!(differs, "another seed gives another world");
    assert_ne!(read(&a.path().join("truth.json")), read(&c.path().join("truth.json")));
}

#[test]
fn refuses_non_empty_output_and_bad_params() {
    let d = tempfile::tempdir().expect("tempdir");
    fs::write(d.path().join("x"), b"x").expect("write");
    let e = generate(&tiny(), d.path(), &mut |_| {});
    assert!(matches!(e, Err(citriage_synth::SynthError::NotEmpty(_))));
    let mut p = tiny();
    p.end_date = "2026-13-01".into();
    let e = generate(&p, &d.path().join("new"), &mut |_| {});
    assert!(matches!(e, Err(citriage_synth::SynthError::Params(_))));
    assert!(SynthParams::preset("nope").is_none());
    for name in citriage_synth::PRESETS {
        let p = SynthParams::preset(name).expect("preset");
        assert!(p.validate().is_ok(), "{name}");
    }
}

#[test]
fn every_failed_build_has_failure_artifacts() {
    let w = world();
    let builds = builds_truth();
    assert!(!builds.is_empty());
    let mut failures = 0;
    for b in &builds {
        let state = b["state"].as_str().unwrap_or("");
        match state {
            "failure" => {
                failures += 1;
                let dir = w.root.join(b["path"].as_str().expect("path"));
                let fin = json(&dir.join("finished.json"));
                assert_eq!(fin["result"], "FAILURE", "{}", dir.display());
                assert_eq!(fin["passed"], false);
                let pj = json(&dir.join("prowjob.json"));
                assert_eq!(pj["status"]["state"], "failure");
                assert_eq!(pj["status"]["build_id"], b["id"]);
                let started = json(&dir.join("started.json"));
                assert_eq!(started["timestamp"], b["started"]);
                assert!(dir.join("build-log.txt").is_file());
                assert!(!b["causes"].as_array().expect("causes").is_empty(), "a failure has a cause");
            }
            "error" => {
                assert!(b["path"].is_null());
            }
            "pending" => {
                let dir = w.root.join(b["path"].as_str().expect("path"));
                assert!(dir.join("started.json").is_file());
                assert!(!dir.join("finished.json").exists(), "running builds have no finished.json");
            }
            _ => {}
        }
    }
    assert_eq!(failures as u64, w.summary.failed_builds);
    // Every build folder in GCS with FAILURE is in the truth.
    let listed: BTreeSet<String> = builds.iter().filter_map(|b| b["path"].as_str().map(String::from)).collect();
    let mut files = Vec::new();
    walk(&w.root.join("gcs/kubernetes-ci-logs"), &mut files);
    let mut seen = 0;
    for f in files.iter().filter(|f| f.ends_with("finished.json")) {
        let fin = json(f);
        if fin["result"] == "FAILURE" {
            seen += 1;
            let rel = f.parent().expect("parent").strip_prefix(&w.root).expect("rel").to_string_lossy().to_string();
            assert!(listed.contains(&rel), "{rel} failed but is not in truth");
        }
    }
    assert_eq!(seen, failures);
}

#[test]
fn truth_lines_point_at_planted_text() {
    let w = world();
    let sigs = signatures();
    let mut checked_log = 0;
    let mut checked_junit = 0;
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for b in builds_truth() {
        for c in b["causes"].as_array().expect("causes") {
            let pat = c["pattern"].as_str().expect("pattern");
            let sig = sigs.get(pat).unwrap_or_else(|| panic!("pattern {pat} in catalogue"));
            if let Some(log) = c.get("log").filter(|l| !l.is_null()) {
                let file = log["file"].as_str().expect("file").to_string();
                let lines = files.entry(file.clone()).or_insert_with(|| split_lines(&read(&w.root.join(&file))));
                for n in log["error_lines"].as_array().expect("error_lines") {
                    let n = n.as_u64().expect("line") as usize;
                    let line = strip_ansi(&lines[n - 1]);
                    assert!(!sig.is_empty());
                    assert!(line.contains(sig.as_str()), "{file}:{n} `{line}` lacks `{sig}`");
                    checked_log += 1;
                }
                for n in log["context_lines"].as_array().expect("context_lines") {
                    let n = n.as_u64().expect("line") as usize;
                    assert!(n >= 1 && n <= lines.len(), "{file}:{n} out of range");
                }
            }
            for j in c["junit"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
                let file = j["file"].as_str().expect("file").to_string();
                let lines = files.entry(file.clone()).or_insert_with(|| split_lines(&read(&w.root.join(&file))));
                let n = j["line"].as_u64().expect("line") as usize;
                let line = xml_unescape(&lines[n - 1]);
                assert!(line.contains("<failure"), "{file}:{n} is not a failure");
                assert!(line.contains(sig.as_str()), "{file}:{n} `{line}` lacks `{sig}`");
                checked_junit += 1;
            }
        }
    }
    assert!(checked_log > 50, "checked {checked_log} log lines");
    assert!(checked_junit > 20, "checked {checked_junit} junit lines");
}

#[test]
fn logs_are_realistic() {
    let w = world();
    let mut files = Vec::new();
    walk(&w.root.join("gcs/kubernetes-ci-logs/logs"), &mut files);
    let logs: Vec<Vec<u8>> = files.iter().filter(|f| f.ends_with("build-log.txt")).map(|f| read(f)).collect();
    assert!(logs.len() > 50);
    let all: Vec<u8> = logs.concat();
    let has = |needle: &[u8]| all.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"\x1b[38;5;9m"), "ANSI colour");
    assert!(all.windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n'), "lone carriage returns");
    assert!(has(b"E1"), "klog error prefixes");
    assert!(has(b"--- FAIL: ") || has(b"[FAILED]"), "test failure markers");
    assert!(has(b"Full Stack Trace"), "stack traces");
}

/// Kettle's ingestion of one JUnit file (None when malformed).
fn kettle_junit(bytes: &[u8]) -> Option<Vec<(String, bool)>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut r = quick_xml::Reader::from_str(text);
    // Element stack: (name, name attr).
    let mut stack: Vec<(String, Option<String>)> = Vec::new();
    let mut out = Vec::new();
    // Current testcase at its depth: (kettle name, failed, skipped).
    let mut cur: Option<(Option<String>, bool, bool, usize)> = None;
    let mut root: Option<String> = None;
    let attr_name = |e: &quick_xml::events::BytesStart| -> Option<String> {
        e.attributes()
            .flatten()
            .find(|a| a.key.as_ref() == b"name")
            .map(|a| xml_unescape(&String::from_utf8_lossy(&a.value)))
    };
    loop {
        let ev = r.read_event().ok()?;
        let (start, empty) = match &ev {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            let tag = String::from_utf8_lossy(e.name().as_ref()).to_string();
            let name = attr_name(&e);
            if root.is_none() {
                root = Some(tag.clone());
            }
            let depth = stack.len();
            let visible_case = tag == "testcase"
                && ((root.as_deref() == Some("testsuite") && depth == 1)
                    || (root.as_deref() == Some("testsuites") && depth == 2));
            if visible_case {
                // make_json.py: attrib.get('name', '<unspecified>') for cases and suites.
                let unspecified = || "<unspecified>".to_string();
                let case = name.clone().unwrap_or_else(unspecified);
                let n = if depth == 2 {
                    format!("{} {case}", stack[1].1.clone().unwrap_or_else(unspecified))
                } else {
                    case
                };
                cur = Some((Some(n), false, false, depth));
            }
            if let Some(c) = cur.as_mut() {
                if depth == c.3 + 1 && tag == "failure" {
                    c.1 = true;
                }
                if depth == c.3 + 1 && tag == "skipped" {
                    c.2 = true;
                }
            }
            if empty {
                if let Some(c) = cur.take_if(|c| c.3 == depth) {
                    if let (Some(n), false) = (c.0, c.2) {
                        if !n.contains('#') || c.1 {
                            out.push((n, c.1));
                        }
                    }
                }
            } else {
                stack.push((tag, name));
            }
            continue;
        }
        match ev {
            Event::End(_) => {
                stack.pop()?;
                let depth = stack.len();
                if let Some(c) = cur.take_if(|c| c.3 == depth) {
                    if let (Some(n), false) = (c.0, c.2) {
                        if !n.contains('#') || c.1 {
                            out.push((n, c.1));
                        }
                    }
                }
            }
            Event::Eof => {
                if !stack.is_empty() || root.is_none() {
                    return None;
                }
                return Some(out);
            }
            _ => {}
        }
    }
}

struct KRow {
    job: String,
    started: i64,
    finished: i64,
    success: bool,
    commit: String,
    single_pull: bool,
    tests: Vec<(String, bool)>,
}

/// The JUnit files kettle reads: directly in `artifacts/` (it lists the folder with a
/// delimiter, never its sub-folders).
fn junit_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut all: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    all.sort();
    for f in all {
        let base = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if base.starts_with("junit") && base.ends_with(".xml") {
            out.push(f);
        }
    }
}

fn kettle_rows(root: &Path) -> Vec<KRow> {
    let mut files = Vec::new();
    walk(&root.join("gcs/kubernetes-ci-logs"), &mut files);
    let mut rows = Vec::new();
    for f in files.iter().filter(|f| f.ends_with("finished.json")) {
        let dir = f.parent().expect("parent");
        let rel = dir.strip_prefix(root.join("gcs/kubernetes-ci-logs")).expect("rel").to_string_lossy().to_string();
        let parts: Vec<&str> = rel.split('/').collect();
        let job = if parts[0] == "pr-logs" { format!("pr:{}", parts[parts.len() - 2]) } else { parts[1].to_string() };
        let started = json(&dir.join("started.json"));
        let fin = json(f);
        let repos = started["repos"].as_object().expect("repos");
        // json.dumps(repos) as kettle stores it.
        let repo_str = format!(
            "{{{}}}",
            repos
                .iter()
                .map(|(k, v)| format!("\"{k}\": \"{}\"", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let elements = repo_str.replace(", ", "").split(',').count();
        let commit = if job.starts_with("pr:") {
            // regexp_extract(repo, r'[^,]+,\d+:([a-f0-9]+)"')
            let v = repos.values().filter_map(Value::as_str).find(|v| v.contains(',')).unwrap_or("");
            v.split(',').nth(1).and_then(|p| p.split(':').nth(1)).unwrap_or("").to_string()
        } else {
            started["repo-commit"].as_str().unwrap_or("").to_string()
        };
        let mut jf = Vec::new();
        junit_files(&dir.join("artifacts"), &mut jf);
        let mut tests = Vec::new();
        for j in jf {
            if let Some(t) = kettle_junit(&read(&j)) {
                tests.extend(t);
            }
        }
        rows.push(KRow {
            job,
            started: started["timestamp"].as_i64().expect("ts"),
            finished: fin["timestamp"].as_i64().expect("ts"),
            success: fin["result"] == "SUCCESS",
            commit,
            single_pull: elements == 2,
            tests,
        });
    }
    rows
}

fn recompute(rows: &[KRow], day: i64, at: i64) -> (BTreeMap<String, i64>, BTreeMap<String, Value>) {
    let mut by_job: BTreeMap<&str, Vec<&KRow>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.finished <= at) {
        by_job.entry(&r.job).or_default().push(r);
    }
    let mut failures = BTreeMap::new();
    let mut flakes = BTreeMap::new();
    for (job, rs) in by_job {
        let week = at - 7 * 86_400;
        if rs.iter().any(|r| r.started > week) {
            let first = rs.iter().map(|r| r.started).min().unwrap_or(0);
            let pass = rs.iter().filter(|r| r.success).map(|r| r.started).max();
            let days = day - pass.unwrap_or(first).div_euclid(86_400);
            if pass.is_none() || days > 30 {
                failures.insert(job.to_string(), days);
            }
        }
        // No job is excluded: kettle's stream applies its exclude_jobs regexes as literal text.
        let mut per: BTreeMap<&str, (u64, u64, BTreeMap<&str, u64>)> = BTreeMap::new();
        for r in rs.iter().filter(|r| r.started > week && (job.starts_with("ci-") || r.single_pull)) {
            let e = per.entry(&r.commit).or_default();
            e.1 += 1;
            if r.success {
                e.0 += 1;
            }
            for (n, f) in &r.tests {
                *e.2.entry(n).or_insert(0) += u64::from(*f);
            }
        }
        if per.is_empty() {
            continue;
        }
        let commits = per.len() as f64;
        let mut flaked = 0u64;
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for (p, n, t) in per.values() {
            if !(p == n || *p == 0) {
                flaked += 1;
            }
            for (name, f) in t {
                if *f > 0 && f < n {
                    *counts.entry(name).or_insert(0) += 1;
                }
            }
        }
        let mut tf: Vec<(&str, u64)> = counts
            .into_iter()
            .filter(|(n, _)| !["Test", "DiffResources", "DumpClusterLogs", "DumpFederationLogs"].contains(n))
            .collect();
        tf.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        tf.truncate(10);
        // BigQuery's ROUND on the exact binary value, halves away from zero.
        let x = 1.0 - flaked as f64 / commits;
        let exact = format!("{x:.1100}");
        let (int, frac) = exact.split_once('.').expect("a fraction");
        let up = i64::from(frac.as_bytes()[3] >= b'5');
        let c = (format!("{int}{}", &frac[..3]).parse::<i64>().expect("digits") + up) as f64 / 1000.0;
        let tfv = if tf.is_empty() {
            Value::Null
        } else {
            Value::Object(tf.into_iter().map(|(k, v)| (k.to_string(), Value::from(v))).collect())
        };
        flakes.insert(job.to_string(), serde_json::json!({"consistency": c, "flakes": flaked, "test_flakes": tfv}));
    }
    (failures, flakes)
}

#[test]
fn dashboards_match_a_recomputation_from_the_builds() {
    let w = world();
    let rows = kettle_rows(&w.root);
    assert!(rows.len() > 100);
    let t = truth();
    let dashes = t["dashboards"].as_array().expect("dashboards");
    assert_eq!(dashes.len() as u64, tiny().dashboard_days as u64);
    let mut drift = false;
    let mut prev: Option<BTreeMap<String, i64>> = None;
    for d in dashes {
        let at_s = d["snapshot_time"].as_str().expect("time");
        let date = d["date"].as_str().expect("date");
        let (y, m, dd): (i64, u32, u32) =
            (date[0..4].parse().expect("y"), date[5..7].parse().expect("m"), date[8..10].parse().expect("d"));
        let day = days_from_civil(y, m, dd);
        assert!(at_s.ends_with("T12:00:00Z"));
        let at = day * 86_400 + 43_200;
        let (want_fail, want_flakes) = recompute(&rows, day, at);
        let got_fail: BTreeMap<String, i64> = json(&w.root.join(d["failures"].as_str().expect("f")))
            .as_object()
            .expect("failures object")
            .iter()
            .map(|(k, v)| (k.clone(), v["failing_days"].as_i64().expect("days")))
            .collect();
        assert_eq!(got_fail, want_fail, "failures {date}");
        let got_flakes = json(&w.root.join(d["flakes"].as_str().expect("k")));
        let got_flakes: BTreeMap<String, Value> =
            got_flakes.as_object().expect("flakes object").iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(got_flakes.len(), want_flakes.len(), "flakes {date} job count");
        for (job, v) in &want_flakes {
            let g = &got_flakes[job];
            assert_eq!(g["flakes"], v["flakes"], "{job}");
            assert_eq!(g["consistency"].as_f64(), v["consistency"].as_f64(), "{job}");
            assert_eq!(g["test_flakes"], v["test_flakes"], "{job} {date}");
        }
        if let Some(p) = &prev {
            if p != &got_fail {
                drift = true;
            }
        }
        prev = Some(got_fail);
    }
    assert!(drift, "the dated failures dashboards differ between days");
    let latest = json(&w.root.join("k8s-metrics/failures-latest.json"));
    let last = dashes.last().expect("last");
    assert_eq!(latest, json(&w.root.join(last["failures"].as_str().expect("f"))));
    // Consistency is printed the way jq prints numbers.
    let raw = String::from_utf8(read(&w.root.join("k8s-metrics/flakes-latest.json"))).expect("utf8");
    assert!(raw.contains("\"consistency\": 1,"), "integral consistency printed as 1");
    assert!(!raw.contains("1.0,"));
    // Flaky-named jobs are in both dashboards (kettle's stream excludes no job), and the
    // by-design lane fails.
    let flakes = json(&w.root.join("k8s-metrics/flakes-latest.json"));
    assert!(flakes.as_object().expect("obj").keys().any(|k| k.contains("flaky")));
    let fails = json(&w.root.join("k8s-metrics/failures-latest.json"));
    assert!(fails.get("ci-kubernetes-e2e-gci-gce-flaky").is_some());
    // Truth's per-job dashboard expectations agree with the files.
    for j in t["jobs"].as_array().expect("jobs") {
        let k = j["kettle_name"].as_str().expect("name");
        let exp = j["dashboards"]["failures"].get(last["date"].as_str().expect("date"));
        assert_eq!(exp.and_then(Value::as_i64), fails.get(k).map(|v| v["failing_days"].as_i64().unwrap_or(-1)), "{k}");
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

#[test]
fn scenarios_show_up_where_the_truth_says() {
    let t = truth();
    let jobs = t["jobs"].as_array().expect("jobs");
    let by: BTreeMap<&str, &Value> = jobs.iter().map(|j| (j["scenario"].as_str().unwrap_or(""), j)).collect();
    let end = t["world"]["end_date"].as_str().expect("end");
    // Long-broken jobs are in the latest failures dashboard with > 30 days.
    let long = jobs.iter().filter(|j| j["scenario"] == "long-broken").collect::<Vec<_>>();
    assert!(!long.is_empty());
    for j in &long {
        let d = j["dashboards"]["failures"][end].as_i64();
        assert!(d.is_some_and(|d| d > 30), "{} not listed: {:?}", j["name"], d);
    }
    // Recently broken jobs are not.
    for j in jobs.iter().filter(|j| j["scenario"] == "recently-broken") {
        assert!(j["dashboards"]["failures"].get(end).is_none(), "{}", j["name"]);
    }
    // Error cascades: no GCS builds lately, so absent; their errors exist.
    let cascade = by.get("error-cascade").expect("cascade job");
    assert!(cascade["dashboards"]["failures"].get(end).is_none());
    assert!(cascade["stats"]["error"].as_u64().unwrap_or(0) >= 3);
    // The always-failing job looks perfectly consistent to kettle.
    let paradox = by.get("always-failing-consistent").expect("paradox job");
    assert_eq!(paradox["dashboards"]["flakes"][end].as_f64(), Some(1.0));
    // The job fixed after the snapshot is listed although its latest build passed.
    let fixed = by.get("fixed-after-snapshot").expect("fixed job");
    assert!(fixed["dashboards"]["failures"].get(end).is_some());
    // Flaky tests really flake.
    let flaky = t["flaky_tests"].as_array().expect("flaky");
    assert!(flaky.iter().any(|f| f["failed_attempts"].as_u64().unwrap_or(0) > 0
        && f["runs"].as_u64().unwrap_or(0) > f["failed_attempts"].as_u64().unwrap_or(0)));
    assert!(flaky.iter().any(|f| f["recovered_in_run"].as_u64().unwrap_or(0) > 0), "some in-run retries recovered");
}

#[test]
fn error_builds_are_only_in_prowjobs_js() {
    let w = world();
    let raw = String::from_utf8(read(&w.root.join("prow/prowjobs.js"))).expect("utf8");
    let body = raw.strip_prefix("var allBuilds = ").and_then(|s| s.strip_suffix(';')).expect("var allBuilds = ...;");
    let v: Value = serde_json::from_str(body).expect("prowjobs json");
    let items = v["items"].as_array().expect("items");
    assert!(!items.is_empty());
    let mut errors = 0;
    let mut others = 0;
    for it in items {
        let url = it["status"]["url"].as_str().expect("url");
        let path = url.split("/view/gs/").nth(1).expect("gs path");
        let dir = w.root.join("gcs").join(path);
        if it["status"]["state"] == "error" {
            errors += 1;
            assert!(!dir.exists(), "error build {path} has a GCS folder");
            assert!(it["status"]["description"].as_str().unwrap_or("").contains("Pod can not be created"));
        } else {
            others += 1;
            assert!(dir.join("prowjob.json").is_file(), "{path} missing");
        }
    }
    assert!(errors > 0, "prowjobs.js lists state=error builds");
    assert!(others > 0);
    // Truth agrees.
    let in_js = builds_truth().iter().filter(|b| b["state"] == "error" && b["in_prowjobs_js"] == true).count();
    assert_eq!(in_js, errors);
}

#[test]
fn job_history_pages_and_pointers() {
    let w = world();
    let t = truth();
    let mut checked = 0;
    for j in t["jobs"].as_array().expect("jobs") {
        let prefix = j["gcs_prefix"].as_str().expect("prefix");
        let page = w.root.join(format!("prow/job-history/gs/kubernetes-ci-logs/{prefix}/index.html"));
        let html = String::from_utf8(read(&page)).expect("utf8");
        let start = html.find("var allBuilds = ").expect("allBuilds") + "var allBuilds = ".len();
        let end = html[start..].find(";\n").expect("end") + start;
        let builds: Vec<Value> = serde_json::from_str(&html[start..end]).expect("json");
        assert!(builds.len() <= 20);
        let ids: Vec<u64> = builds.iter().map(|b| b["ID"].as_str().and_then(|s| s.parse().ok()).expect("id")).collect();
        assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first");
        if let Some(first) = ids.first() {
            let latest =
                String::from_utf8(read(&w.root.join(format!("gcs/kubernetes-ci-logs/{prefix}/latest-build.txt"))))
                    .expect("utf8");
            assert_eq!(latest.trim(), first.to_string());
            for b in &builds {
                let link = b["SpyglassLink"].as_str().expect("link");
                let dir = w.root.join("gcs").join(link.trim_start_matches("/view/gs/"));
                assert!(dir.join("started.json").is_file(), "{link}");
                assert!(b["Duration"].is_i64());
            }
            checked += 1;
        }
        let total = j["stats"]["gcs_builds"].as_u64().unwrap_or(0);
        if total > 20 {
            let older =
                html.split("Older Runs").next().and_then(|s| s.rsplit("href=\"?buildId=").next()).expect("older link");
            let id = older.split('"').next().expect("id");
            assert!(w
                .root
                .join(format!("prow/job-history/gs/kubernetes-ci-logs/{prefix}/buildId={id}.html"))
                .is_file());
        }
        if prefix.starts_with("pr-logs/directory/") {
            let dir = w.root.join(format!("gcs/kubernetes-ci-logs/{prefix}"));
            for e in fs::read_dir(&dir).expect("dir").flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name.ends_with(".txt") && name != "latest-build.txt" {
                    let target = String::from_utf8(read(&e.path())).expect("utf8");
                    let rel = target.strip_prefix("gs://").expect("gs url");
                    assert!(w.root.join("gcs").join(rel).join("started.json").is_file(), "{target}");
                }
            }
        }
    }
    assert!(checked > 10);
}

#[test]
fn payload_stream_plants_culprit_infra_and_ci_config() {
    let w = world();
    let t = truth();
    let p = &t["payloads"];
    let tags_doc = json(&w.root.join(p["tags_file"].as_str().expect("tags file")));
    let tags: Vec<&str> =
        tags_doc["tags"].as_array().expect("tags").iter().map(|x| x["name"].as_str().expect("name")).collect();
    let mut sorted = tags.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(tags, sorted, "tags newest first");
    let truths = p["tags"].as_array().expect("truth tags");
    assert_eq!(truths.len(), tags.len());
    let base = w.root.join("release-controller/api/v1/releasestream/4.22.0-0.nightly/release");
    let mut seen = BTreeSet::new();
    for tt in truths {
        let tag = tt["tag"].as_str().expect("tag");
        let info = json(&base.join(tag));
        assert_eq!(info["phase"], tt["phase"]);
        let event = tt["event"].as_str().expect("event");
        seen.insert(event.to_string());
        for job in tt["failed_blocking_jobs"].as_array().expect("failed") {
            let r = &info["results"]["blockingJobs"][job.as_str().expect("job")];
            assert_eq!(r["state"], "Failed");
            let url = r["url"].as_str().expect("url");
            let dir = w.root.join("gcs").join(url.split("/view/gs/").nth(1).expect("path"));
            assert_eq!(json(&dir.join("finished.json"))["result"], "FAILURE");
        }
        if tt["changelog_loading"] == true {
            assert!(info.get("changeLogJson").is_none());
        } else {
            assert!(info["changeLogJson"]["updatedImages"].as_array().is_some_and(|a| !a.is_empty()));
        }
        match event {
            "culprit-introduced" => {
                let c = &tt["culprit"];
                let sym = c["symbol"].as_str().expect("symbol");
                let diff = split_lines(&read(&w.root.join(c["diff_file"].as_str().expect("diff"))));
                assert!(diff[c["diff_line"].as_u64().expect("line") as usize - 1].contains(sym));
                let log = split_lines(&read(&w.root.join(c["log_file"].as_str().expect("log"))));
                assert!(strip_ansi(&log[c["log_line"].as_u64().expect("line") as usize - 1]).contains(sym));
                // The culprit PR is in this payload's changelog.
                let prs: Vec<u64> = info["changeLogJson"]["updatedImages"]
                    .as_array()
                    .expect("images")
                    .iter()
                    .flat_map(|i| i["commits"].as_array().cloned().unwrap_or_default())
                    .filter_map(|c| c["pullID"].as_u64())
                    .collect();
                assert!(prs.contains(&c["pr"].as_u64().expect("pr")));
                assert!(!tt["failed_blocking_jobs"].as_array().expect("f").is_empty());
                // The traps beside it: the symbol in another repository's vendored,
                // generated and documentation files; a symbol only an info line of the
                // failing logs names; the failing command's flag.
                let repo_prs = |repo: &str| -> Vec<String> {
                    tt["new_prs"]
                        .as_array()
                        .expect("new prs")
                        .iter()
                        .filter_map(|p| p.as_str())
                        .filter(|p| p.starts_with(&format!("{repo}#")))
                        .map(|p| p.split('#').nth(1).unwrap_or("").to_string())
                        .collect()
                };
                let diff_of = |repo: &str, n: &str| {
                    String::from_utf8_lossy(&read(&w.root.join(format!("github/{repo}/pull/{n}.diff")))).into_owned()
                };
                let vendored = repo_prs("openshift/installer")
                    .into_iter()
                    .map(|n| diff_of("openshift/installer", &n))
                    .find(|d| d.contains("+++ b/vendor/"))
                    .expect("a vendoring decoy");
                assert!(
                    vendored.contains(sym) && vendored.contains("zz_generated") && vendored.contains("+++ b/docs/")
                );
                assert!(repo_prs("openshift/cluster-version-operator").iter().any(|n| diff_of(
                    "openshift/cluster-version-operator",
                    n
                )
                .contains("func reconcileProxyStatus(")));
                assert!(repo_prs("openshift/machine-config-operator").iter().any(|n| diff_of(
                    "openshift/machine-config-operator",
                    n
                )
                .contains("--kubeconfig=")));
                assert!(log.iter().any(|l| l.contains("level=info") && l.contains("reconcileProxyStatus")));
                // The aggregated job has only the snapshot's results.json.
                let agg = &info["results"]["blockingJobs"]["aggregated-aws-ovn-upgrade-4.22-micro"];
                assert_eq!(agg["state"], "Failed");
                let dir =
                    w.root.join("gcs").join(agg["url"].as_str().expect("url").split("/view/gs/").nth(1).expect("path"));
                assert!(dir.join("artifacts/junit/results.json").is_file());
                assert!(!read(&dir.join("artifacts/junit/results.json")).is_empty());
            }
            "culprit-gap" => {
                // The culprit's failure goes on, but its runs lost their log and JUnit.
                assert_eq!(tt["evidence_missing"], true);
                assert!(tt["culprit"].is_object());
                let job = tt["failed_blocking_jobs"].as_array().expect("f")[0].as_str().expect("job");
                let r = &info["results"]["blockingJobs"][job];
                let dir =
                    w.root.join("gcs").join(r["url"].as_str().expect("url").split("/view/gs/").nth(1).expect("path"));
                assert!(!dir.join("build-log.txt").exists() && !dir.join("artifacts/junit_operator.xml").exists());
            }
            "infra" => {
                assert!(tt["culprit"].is_null());
                assert!(!tt["failed_blocking_jobs"].as_array().expect("f").is_empty());
                for j in tt["failed_blocking_jobs"].as_array().expect("f") {
                    assert_eq!(tt["patterns"][j.as_str().expect("job")], "cloud-vcpu-quota");
                }
            }
            "ci-config" => {
                let c = &tt["ci_config_change"];
                let flag = c["flag"].as_str().expect("flag");
                let diff = split_lines(&read(&w.root.join(c["diff_file"].as_str().expect("diff"))));
                assert!(diff[c["diff_line"].as_u64().expect("line") as usize - 1].contains(flag));
                let log = split_lines(&read(&w.root.join(c["log_file"].as_str().expect("log"))));
                assert!(log[c["log_line"].as_u64().expect("line") as usize - 1].contains(flag));
                let changes = json(&w.root.join("openshift/ci-config-changes.json"));
                assert!(changes.as_array().expect("changes").iter().any(|x| x["pr"] == c["pr"]));
                assert!(tt["culprit"].is_null());
            }
            "flake-retry" => {
                let r = &info["results"]["blockingJobs"]["aws-ovn-serial-1of2"];
                assert_eq!(r["state"], "Succeeded");
                assert_eq!(r["retries"], 1);
                assert_eq!(r["previousAttemptURLs"].as_array().map(Vec::len), Some(1));
            }
            "ready" => {
                assert_eq!(info["phase"], "Ready");
            }
            _ => {}
        }
    }
    for e in ["culprit-introduced", "culprit-gap", "culprit-carried", "infra", "ci-config", "revert", "ready"] {
        assert!(seen.contains(e), "event {e} planted");
    }
    assert!(truths.iter().any(|t| t["changelog_loading"] == true));
    // changeLog is base64 HTML.
    let first = json(&base.join(truths[0]["tag"].as_str().expect("tag")));
    assert!(first["changeLog"].as_str().is_some_and(
        |s| s.len() > 20 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
    ));
    assert!(first["upgradesTo"].is_null() || first["upgradesTo"].is_array());
}

#[test]
fn junit_variants_are_present() {
    let w = world();
    let mut files = Vec::new();
    walk(&w.root.join("gcs"), &mut files);
    let junits: Vec<&PathBuf> = files.iter().filter(|f| f.extension().is_some_and(|e| e == "xml")).collect();
    let texts: Vec<String> = junits.iter().map(|f| String::from_utf8_lossy(&read(f)).into_owned()).collect();
    assert!(texts.iter().any(|t| t.contains("status=\"failed\"")), "Ginkgo v2");
    assert!(texts.iter().any(|t| t.contains("go.version")), "go-junit-report");
    assert!(texts.iter().any(|t| t.contains("name=\"Up\"")), "kubetest steps");
    assert!(texts.iter().any(|t| t.contains("<skipped")), "skipped tests");
    assert!(junits.iter().any(|f| f.components().count() > w.root.components().count() + 8), "nested junit folders");
    assert!(
        texts.iter().any(|t| t.matches("<testsuite ").count() > 1 && t.contains("openshift-tests")),
        "nested suites"
    );
    let truncated =
        builds_truth().iter().flat_map(|b| b["junit_truncated"].as_array().cloned().unwrap_or_default()).count();
    let malformed = junits.iter().filter(|f| kettle_junit(&read(f)).is_none()).count();
    assert_eq!(truncated, malformed, "every malformed file is a planted truncation");
}

/// Every TestGrid table lists its job's build folders (newest first, started.json's
/// time), its Overall row says what finished.json says (`passed`; RUNNING without
/// one), its run-length encoding covers every column, and each dashboard's summary
/// names the tabs written for it.
#[test]
fn testgrid_tables_show_the_builds_of_their_job() {
    let root = &world().root;
    let tg = root.join("testgrid");
    let mut dashboards: Vec<PathBuf> = fs::read_dir(&tg).expect("testgrid/").flatten().map(|e| e.path()).collect();
    dashboards.sort();
    assert!(dashboards.len() >= 3, "{dashboards:?}");
    let mut tables = 0;
    for d in &dashboards {
        let summary = json(&d.join("summary"));
        let mut tabs: Vec<String> = fs::read_dir(d.join("table"))
            .expect("table/")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        tabs.sort();
        let listed: Vec<String> = summary.as_object().expect("summary").keys().cloned().collect();
        assert_eq!(listed, tabs, "{}", d.display());
        for tab in tabs {
            tables += 1;
            let t = json(&d.join("table").join(&tab));
            let query = t["query"].as_str().expect("query");
            let folder = root.join("gcs").join(query);
            let ids: Vec<&str> = t["changelists"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            let columns = ids.len();
            // Every build folder of the job (a presubmit's through its pointers) is a column.
            let folders = fs::read_dir(&folder)
                .unwrap()
                .flatten()
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().to_string();
                    n != "latest-build.txt" && (e.path().is_dir() || n.ends_with(".txt"))
                })
                .count();
            assert_eq!(folders, columns, "{tab}: every build folder is a column");
            for row in t["tests"].as_array().unwrap() {
                let n: u64 = row["statuses"].as_array().unwrap().iter().map(|r| r["count"].as_u64().unwrap()).sum();
                assert_eq!(n as usize, columns, "{tab} {}", row["name"]);
            }
            let overall = &t["tests"][0];
            assert_eq!(overall["name"], "Overall");
            let mut cells = Vec::new();
            for r in overall["statuses"].as_array().unwrap() {
                for _ in 0..r["count"].as_u64().unwrap() {
                    cells.push(r["value"].as_u64().unwrap());
                }
            }
            let mut last = i64::MAX;
            for (i, id) in ids.iter().enumerate() {
                // The build folder: logs/<job>/<id>, or where a presubmit's pointer leads.
                let dir = if query.contains("/pr-logs/directory/") {
                    let target = String::from_utf8(read(&folder.join(format!("{id}.txt")))).unwrap();
                    let rel = target.trim().strip_prefix("gs://").unwrap().to_string();
                    root.join("gcs").join(rel)
                } else {
                    folder.join(id)
                };
                let started = json(&dir.join("started.json"))["timestamp"].as_i64().unwrap();
                assert_eq!(t["timestamps"][i].as_i64(), Some(started * 1000), "{tab} {id}");
                assert!(started <= last, "{tab}: newest first");
                last = started;
                let fin = dir.join("finished.json");
                let want = if fin.exists() {
                    if json(&fin)["passed"] == true {
                        1
                    } else {
                        12
                    }
                } else {
                    4
                };
                // A truncated JUnit upload makes TestGrid fail the build whatever finished.json says.
                let malformed = overall["messages"]
                    .as_array()
                    .and_then(|m| {
                        let filled: Vec<usize> = (0..columns).filter(|c| cells[*c] != 0).collect();
                        filled.iter().position(|c| *c == i).and_then(|k| m.get(k)).and_then(Value::as_str)
                    })
                    .is_some_and(|m| m.starts_with("Malformed artifacts"));
                if !malformed {
                    assert_eq!(cells[i], want, "{tab} build {id}");
                } else {
                    assert_eq!(cells[i], 12, "{tab} build {id}");
                }
            }
        }
    }
    assert!(tables >= 20, "{tables} tables");
}
