//! MCP answers where the data is, and answers an agent can hold.
//!
//! - A store filled only by `fetch` (builds, no dashboard snapshot) and one filled only
//!   by `import` (snapshots, no builds): every tool answers what the store knows, and
//!   `list_failing_jobs` says which source its answer rests on.
//! - Every tool's default answer over the full synthetic store is at most 16 KiB; the
//!   list tools walk their whole list with cursors, page after page, each item once,
//!   and a bad or stale cursor is a clear tool error.
//!
//! Sizes are bytes of the answer's text, not times.

mod common;
#[path = "common/mcp.rs"]
mod mcp;
#[path = "common/world.rs"]
mod world;

use mcp::Client;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use world::ok;

/// The most bytes a default answer may take.
const BUDGET: usize = 16 * 1024;

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A fresh tiny world's tree and two stores: one filled by `fetch` only, one by `import` only.
fn partial_stores(dir: &Path) -> (PathBuf, PathBuf) {
    let root = dir.join("world");
    let p = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
    citriage_synth::generate(&p, &root, &mut |_| {}).expect("generate");
    let fetched = dir.join("fetched.db");
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let prowjobs = root.join("prow/prowjobs.js");
    ok(&fetched, &["fetch", "--mirror", s(&mirror), "--all", "--prowjobs", s(&prowjobs)]);
    let imported = dir.join("imported.db");
    for ds in ["failures", "flakes"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("k8s-metrics").join(ds))
            .expect("dashboards")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for f in files {
            ok(&imported, &["import", s(&f), "--dataset", ds]);
        }
    }
    (fetched, imported)
}

/// The answer's text size (what an agent reads).
fn size(c: &mut Client, tool: &str, args: Value) -> (usize, Value) {
    let v = c.answer(tool, args);
    (serde_json::to_string(&v).expect("json").len(), v)
}

#[test]
fn every_tool_answers_on_a_store_of_builds_only_and_of_snapshots_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (fetched, imported) = partial_stores(dir.path());

    // Builds only: the failing jobs come from the builds, and say so.
    let mut c = Client::stdio(&fetched, &[], &[]);
    c.initialize();
    let v = c.answer("list_failing_jobs", json!({}));
    let r = &v["result"];
    assert_eq!(r["source_kind"], "builds", "{r}");
    assert!(r["source"].as_str().is_some_and(|t| t.starts_with("builds from ")), "{r}");
    let jobs = r["jobs"].as_array().expect("jobs");
    assert!(!jobs.is_empty(), "the fetched builds show failing jobs: {r}");
    for j in jobs {
        assert_eq!(j["stats"]["last_outcome"].as_str().map(|o| o != "pass"), Some(true), "{j}");
        assert_eq!(j["evidence"].as_array().map(Vec::len), Some(1), "each job cites its newest failed build: {j}");
    }
    let job = jobs[0]["job"].as_str().expect("job").to_string();
    let v = c.answer("list_failing_jobs", json!({"dataset": "flakes"}));
    assert_eq!(v["result"]["source_kind"], "builds");
    let v = c.answer("job_history", json!({"job": job, "builds": 200}));
    let b = v["result"]["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .find(|b| b["result"] == "FAILURE" || b["result"] == "ERROR")
        .cloned()
        .unwrap_or_else(|| panic!("{job} is failing: a failed build: {v}"));
    let v = c.answer("extract_failure", json!({"job": job, "build_id": b["build_id"]}));
    let failed = v["result"]["failed_tests"].as_array().expect("failed tests").clone();
    if let Some(t) = failed.first() {
        c.answer("test_history", json!({"name": t["test"]}));
    }
    c.answer("search_failures", json!({"q": "fail"}));
    let v = c.answer("list_patterns", json!({}));
    assert_eq!(v["result"]["clusters"], json!([]), "no clustering run: an empty list, said why");
    assert!(v["result"]["source"].as_str().is_some_and(|t| t.contains("citriage cluster")), "{v}");
    c.answer("analyze_payload", json!({}));
    c.answer("pr_state", json!({"refs": ["kubernetes/kubernetes#1"]}));
    c.answer("verify_report", json!({"text": "# Report\n\nNothing.\n"}));
    c.answer("lookup_evidence", json!({"ids": ["ev-000000000000"]}));

    // Snapshots only: the failing jobs come from the newest snapshot, and say so.
    let mut c = Client::stdio(&imported, &[], &[]);
    c.initialize();
    for ds in ["failures", "flakes"] {
        let v = c.answer("list_failing_jobs", json!({"dataset": ds}));
        let r = &v["result"];
        assert_eq!(r["source_kind"], "snapshot", "{r}");
        assert!(r["source"].as_str().is_some_and(|t| t.starts_with(&format!("{ds} snapshot of "))), "{r}");
        assert!(r["jobs"].as_array().is_some_and(|j| !j.is_empty()), "{r}");
    }
    let v = c.answer("search_failures", json!({"q": "fail"}));
    assert_eq!(v["result"]["found"], 0, "no builds, nothing to find: {v}");
    c.answer("list_patterns", json!({}));
    c.answer("analyze_payload", json!({}));
    c.answer("lookup_evidence", json!({"ids": ["ev-000000000000"]}));
    // A job's history needs its builds: a clear refusal naming the job.
    let (err, msg) = c.call("job_history", json!({"job": "no-builds-here"}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("no-builds-here")), "{msg}");
}

/// Walks a list tool's pages, returning every item's key once in order.
fn walk(c: &mut Client, tool: &str, args: Value, list: &str, key: &dyn Fn(&Value) -> String) -> Vec<String> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let mut a = args.clone();
        if let Some(cur) = &cursor {
            a["cursor"] = json!(cur);
        }
        let v = c.answer(tool, a);
        let r = &v["result"];
        let items = r[list].as_array().unwrap_or_else(|| panic!("{tool}: {list} in {r}"));
        out.extend(items.iter().map(key));
        match r["next_cursor"].as_str() {
            Some(next) => {
                assert!(r["remaining"].as_u64().is_some_and(|n| n > 0), "{r}");
                assert!(r["more"].as_str().is_some_and(|m| m.contains(next)), "the hint names the cursor: {r}");
                cursor = Some(next.to_string());
            }
            None => {
                assert_eq!(r["remaining"], 0, "{r}");
                return out;
            }
        }
    }
    panic!("{tool}: no last page");
}

#[test]
fn default_answers_fit_an_agent_and_cursors_walk_every_list() {
    let w = world::world();
    let mut c = Client::stdio(&w.db, &[], &[]);
    c.initialize();
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let mut measure = |c: &mut Client, tool: &str, args: Value| -> Value {
        let (n, v) = size(c, tool, args.clone());
        let parts = || -> String {
            let mut p: Vec<String> = v["result"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, x)| format!("{k} {}", x.to_string().len()))
                .collect();
            p.push(format!("evidence {}", v["evidence"].to_string().len()));
            p.join(", ")
        };
        assert!(n <= BUDGET, "{tool} {args}: {n} bytes by default, over {BUDGET}: {}", parts());
        sizes.push((format!("{tool} {args}"), n));
        v
    };
    let jobs = measure(&mut c, "list_failing_jobs", json!({}));
    let job = jobs["result"]["jobs"][0]["job"].as_str().expect("a failing job").to_string();
    measure(&mut c, "list_failing_jobs", json!({"dataset": "flakes"}));
    let h = measure(&mut c, "job_history", json!({"job": job}));
    let build = h["result"]["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .find(|b| b["result"] == "FAILURE")
        .and_then(|b| b["build_id"].as_str())
        .map(str::to_string);
    if let Some(b) = build {
        let x = measure(&mut c, "extract_failure", json!({"job": job, "build_id": b}));
        if let Some(t) = x["result"]["failed_tests"][0]["test"].as_str() {
            measure(&mut c, "test_history", json!({"name": t}));
        }
    }
    measure(&mut c, "search_failures", json!({"q": "error|fail"}));
    let pats = measure(&mut c, "list_patterns", json!({}));
    let id = pats["result"]["clusters"][0]["stable_id"].as_str().expect("a pattern").to_string();
    measure(&mut c, "get_pattern", json!({"id": id}));
    measure(&mut c, "analyze_payload", json!({}));
    for tag in &w.tags {
        measure(&mut c, "analyze_payload", json!({"tag": tag}));
    }
    for (t, n) in &sizes {
        eprintln!("{n:>7}  {t}");
    }

    // Cursors: every item once, in the order of one long page.
    let key_job = |j: &Value| j["job"].as_str().unwrap_or("").to_string();
    let all = c.answer("list_failing_jobs", json!({"limit": 1000}));
    let whole: Vec<String> = all["result"]["jobs"].as_array().expect("jobs").iter().map(key_job).collect();
    assert!(whole.len() > 3, "enough jobs to page: {}", whole.len());
    let paged = walk(&mut c, "list_failing_jobs", json!({"limit": 3}), "jobs", &key_job);
    assert_eq!(paged, whole, "pages of 3 give the long page's jobs, each once");
    let key_pat = |p: &Value| p["stable_id"].as_str().unwrap_or("").to_string();
    let all = c.answer("list_patterns", json!({"limit": 100}));
    let whole: Vec<String> = all["result"]["clusters"].as_array().expect("clusters").iter().map(key_pat).collect();
    assert_eq!(walk(&mut c, "list_patterns", json!({"limit": 2}), "clusters", &key_pat), whole);
    let key_m = |m: &Value| format!("{} {} {} {}", m["job"], m["build_id"], m["name"], m["line"]);
    let all = c.answer("search_failures", json!({"q": "fail", "max": 1000}));
    let whole: Vec<String> = all["result"]["matches"].as_array().expect("matches").iter().map(key_m).collect();
    assert_eq!(walk(&mut c, "search_failures", json!({"q": "fail", "max": 7}), "matches", &key_m), whole);
    let set: BTreeSet<&String> = whole.iter().collect();
    assert_eq!(set.len(), whole.len(), "no match twice");

    // The same call gives the same cursor; a cursor of other arguments or a made-up
    // one is refused, saying why.
    let a = c.answer("list_failing_jobs", json!({"limit": 2}));
    let b = c.answer("list_failing_jobs", json!({"limit": 2}));
    let cur = a["result"]["next_cursor"].as_str().expect("a cursor").to_string();
    assert_eq!(b["result"]["next_cursor"], json!(cur), "deterministic cursors");
    let (err, msg) = c.call("list_patterns", json!({"cursor": cur}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("no longer fits")), "{msg}");
    let (err, msg) = c.call("list_failing_jobs", json!({"cursor": "nonsense"}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("not a cursor")), "{msg}");

    // Detail on request: the long form holds what the compact one leaves out.
    let d = c.answer("list_patterns", json!({"detail": true, "limit": 1}));
    assert!(d["result"]["clusters"][0]["per_day"].is_array(), "{d}");
    let short = c.answer("list_patterns", json!({"limit": 1}));
    assert!(short["result"]["clusters"][0].get("per_day").is_none());
    assert_eq!(d["result"]["clusters"][0]["total"], short["result"]["clusters"][0]["total"], "one figure, one truth");
}

#[test]
fn bench_mcp_measures_every_tool_an_agent_calls_first() {
    let w = world::world();
    let v = world::json(&ok(&w.db, &["bench", "mcp", "--format", "json"]));
    let rows = v["answers"].as_array().expect("answers");
    let calls: Vec<&str> = rows.iter().filter_map(|r| r["call"].as_str()).collect();
    for tool in ["list_failing_jobs", "job_history", "list_patterns", "get_pattern", "find_suspects", "analyze_payload"]
    {
        assert!(calls.iter().any(|c| c.starts_with(tool)), "{tool} measured: {calls:?}");
    }
    let largest = calls.iter().find(|c| c.starts_with("analyze_payload {tag}")).expect("the payloads measured");
    assert!(largest.contains(&format!("largest of {}", w.tags.len())), "{largest}");
    for r in rows {
        let n = r["bytes"].as_u64().expect("bytes") as usize;
        assert!(n > 0 && n <= BUDGET, "{r}");
        assert_eq!(r["over_budget"], false, "{r}");
        assert_eq!(r["error"], false, "every call answers: {r}");
    }
    // The figures are the answers' sizes: the same store gives the same table.
    let again = world::json(&ok(&w.db, &["bench", "mcp", "--format", "json"]));
    assert_eq!(v, again);
    let missing = w.root.join("no-such.db");
    let o = common::run(&missing, &["bench", "mcp"]);
    assert_eq!(o.status.code(), Some(2), "a store that does not exist is the input's fault");
}
