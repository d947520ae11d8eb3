//! MCP conformance: the `citriage` binary's MCP server over a synthetic store, spoken
//! to on the wire as any MCP client would (JSON-RPC 2.0 written by hand here, not
//! through the SDK the server is built with, so the test checks the protocol rather
//! than one library against itself).
//!
//! Twice, the same checks: `citriage mcp` over stdio, and `citriage serve`'s
//! streamable-HTTP endpoint at `/mcp` on 127.0.0.1 (a random port). Each run
//! `initialize`s, lists the tools (every one with an input schema), calls every tool
//! and checks its result against the store, reads the resources and the prompt, and
//! looks up every evidence id any answer cited: each must resolve in the store's
//! ledger. The write tool is neither listed nor callable on a read-only server (its
//! gate and what it sends: `act_github.rs`).

mod common;
#[path = "common/mcp.rs"]
mod mcp;
#[path = "common/world.rs"]
mod world;

use citriage_store::Store;
use mcp::{Client, PROTOCOL};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use world::World;

/// The tools the issue asks for, and the draft tool; `apply_action` only with writes.
const TOOLS: &[&str] = &[
    "analyze_payload",
    "draft_action",
    "extract_failure",
    "find_suspects",
    "get_pattern",
    "job_history",
    "list_failing_jobs",
    "list_patterns",
    "list_records",
    "lookup_evidence",
    "pr_risk",
    "pr_state",
    "search_failures",
    "test_history",
    "verify_report",
];

// ---------------------------------------------------------------- helpers

/// Every evidence id anywhere in a value.
fn ids_in(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            for w in s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if w.len() == 15 && w.starts_with("ev-") && w[3..].chars().all(|c| c.is_ascii_hexdigit()) {
                    out.insert(w.to_string());
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| ids_in(x, out)),
        Value::Object(o) => o.values().for_each(|x| ids_in(x, out)),
        _ => {}
    }
}

/// The evidence items an answer lists, by id; each id cited inside the result is one of them.
fn listed(tool: &str, v: &Value) -> BTreeMap<String, Value> {
    let items: BTreeMap<String, Value> = v["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .map(|e| (e["id"].as_str().expect("id").to_string(), e.clone()))
        .collect();
    let mut cited = BTreeSet::new();
    ids_in(&v["result"], &mut cited);
    for id in &cited {
        assert!(items.contains_key(id), "{tool}: the result cites {id}, which its evidence list lacks");
    }
    items
}

fn store(w: &World) -> Store {
    Store::open(&w.db).expect("the store opens")
}

// ---------------------------------------------------------------- the checks

fn conformance(c: &mut Client, w: &World, transport: &str) {
    // initialize
    let init = c.ok(
        "initialize",
        json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "citriage-conformance", "version": "1"},
        }),
    );
    assert_eq!(init["serverInfo"]["name"], "citriage", "{init}");
    assert!(init["protocolVersion"].is_string(), "{init}");
    for cap in ["tools", "resources", "prompts"] {
        assert!(init["capabilities"][cap].is_object(), "{transport}: capability {cap}: {init}");
    }
    assert!(init["instructions"].as_str().is_some_and(|s| s.contains("evidence")), "{init}");
    c.notify("notifications/initialized");

    // tools/list: every tool, each with an object schema that forbids unknown arguments
    let tools = c.ok("tools/list", json!({}));
    let list = tools["tools"].as_array().expect("tools");
    let names: BTreeSet<&str> = list.iter().map(|t| t["name"].as_str().expect("name")).collect();
    assert_eq!(names, TOOLS.iter().copied().collect::<BTreeSet<_>>(), "{transport}: read-only tool set");
    for t in list {
        let s = &t["inputSchema"];
        assert_eq!(s["type"], "object", "{}: {s}", t["name"]);
        assert!(s["properties"].is_object(), "{}: {s}", t["name"]);
        assert!(t["description"].as_str().is_some_and(|d| d.len() > 40), "{}", t["name"]);
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{}", t["name"]);
    }
    let required = |name: &str| -> Vec<String> {
        let t = list.iter().find(|t| t["name"] == name).expect("tool");
        let mut r: Vec<String> = t["inputSchema"]["required"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().expect("name").to_string()).collect())
            .unwrap_or_default();
        r.sort();
        r
    };
    assert_eq!(required("job_history"), ["job"]);
    assert_eq!(required("extract_failure"), ["build_id", "job"]);
    assert_eq!(required("lookup_evidence"), ["ids"]);
    assert_eq!(required("search_failures"), ["q"]);

    // Refusals: a tool that is not there, an argument that is not in the schema.
    let r = c.request("tools/call", json!({"name": "apply_action", "arguments": {"action": "bug"}}));
    assert!(r.get("error").is_some(), "{transport}: a read-only server has no write tool: {r}");
    let (err, msg) = c.call("job_history", json!({"job": "x", "bogus": 1}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("bogus")), "{msg}");
    let (err, msg) = c.call("job_history", json!({"job": "no-such-job"}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("no-such-job")), "{msg}");

    let mut st = store(w);
    let mut every: BTreeMap<String, Value> = BTreeMap::new();
    let mut keep = |tool: &str, v: &Value| every.extend(listed(tool, v));

    // list_failing_jobs: the newest failures snapshot, entry for entry
    let latest = st.latest(citriage_model::Dataset::Failures).expect("read").expect("a failures snapshot");
    let snap = st.load_snapshot(latest.id).expect("snapshot");
    let v = c.answer("list_failing_jobs", json!({"limit": 1000, "detail": true}));
    keep("list_failing_jobs", &v);
    let r = &v["result"];
    assert_eq!(r["date"], json!(snap.meta.date.to_string()), "{r}");
    assert_eq!(r["jobs_in_snapshot"], json!(snap.jobs.len()));
    let rows = r["jobs"].as_array().expect("jobs");
    assert_eq!(rows.len(), snap.jobs.len(), "every job of the snapshot is listed once, in its category");
    for row in rows {
        let e = snap.jobs.iter().find(|e| row["job"] == json!(e.job)).unwrap_or_else(|| panic!("{row}"));
        assert_eq!(row["stats"], serde_json::to_value(&e.stats).expect("stats"), "{}", e.job);
        assert_eq!(row["evidence"].as_array().map(Vec::len), Some(1), "{row}");
    }
    let cat = rows[0]["category"].as_str().expect("category").to_string();
    let v = c.answer("list_failing_jobs", json!({"category": cat}));
    keep("list_failing_jobs", &v);
    let in_cat = rows.iter().filter(|x| x["category"] == json!(cat)).count();
    assert_eq!(v["result"]["matching"], json!(in_cat));
    assert!(v["result"]["jobs"].as_array().expect("jobs").iter().all(|x| x["category"] == json!(cat)));
    let v = c.answer("list_failing_jobs", json!({"dataset": "flakes", "window_days": 7}));
    keep("list_failing_jobs", &v);
    assert_eq!(v["result"]["dataset"], "flakes");

    // job_history: the job with the most failed builds, build for build
    let builds = st.builds(None).expect("builds");
    let mut failed_by_job: BTreeMap<&str, usize> = BTreeMap::new();
    for b in &builds {
        if b.result.as_deref() == Some("FAILURE") {
            *failed_by_job.entry(b.job.as_str()).or_default() += 1;
        }
    }
    let job = failed_by_job.iter().max_by_key(|(j, n)| (**n, std::cmp::Reverse(**j))).map(|(j, _)| *j).expect("a job");
    let v = c.answer("job_history", json!({"job": job, "builds": 200}));
    keep("job_history", &v);
    let stored: BTreeMap<&str, &citriage_model::build::BuildRecord> =
        builds.iter().filter(|b| b.job == job).map(|b| (b.build_id.as_str(), b)).collect();
    let listed_builds = v["result"]["builds"].as_array().expect("builds");
    assert_eq!(listed_builds.len(), stored.len().min(200), "{job}: every stored build");
    for b in listed_builds {
        let s = stored.get(b["build_id"].as_str().expect("id")).unwrap_or_else(|| panic!("{b}"));
        assert_eq!(b["result"], json!(s.result), "{job} {}", s.build_id);
        assert_eq!(b["started"], json!(s.started));
        assert_eq!(b["evidence"].as_array().map(Vec::len), Some(1), "each build cites its result: {b}");
    }
    let starts: Vec<i64> = listed_builds.iter().filter_map(|b| b["started"].as_i64()).collect();
    assert!(starts.windows(2).all(|p| p[0] >= p[1]), "newest first");

    // extract_failure: the newest failed build of that job (within every window), line for line
    let with_tests = st.job_builds_with_tests(job, None).expect("builds with tests");
    let b = with_tests
        .iter()
        .filter(|b| b.result.as_deref() == Some("FAILURE"))
        .max_by_key(|b| (b.started, b.build_id.clone()))
        .expect("a failed build");
    let v = c.answer("extract_failure", json!({"job": job, "build_id": b.build_id, "detail": true}));
    keep("extract_failure", &v);
    let logs = v["result"]["log_excerpts"].as_array().expect("logs");
    assert_eq!(logs.len(), b.excerpts.len(), "every stored excerpt");
    for (l, e) in logs.iter().zip(&b.excerpts) {
        assert_eq!(
            (l["line_start"].as_u64(), l["line_end"].as_u64()),
            (Some(e.line_start.into()), Some(e.line_end.into()))
        );
        assert_eq!(l["text"], json!(e.text));
    }
    let failed: Vec<&citriage_model::build::StoredTest> =
        b.tests.iter().filter(|t| t.status == "failed" || t.status == "error").collect();
    assert_eq!(v["result"]["failed_tests"].as_array().map(Vec::len), Some(failed.len()));
    assert!(!logs.is_empty() || !failed.is_empty(), "a failed build of the world explains itself");
    // A failed test's failure lines are lines of its failure text, at their numbers.
    let mut lines_checked = 0;
    for (ft, t) in v["result"]["failed_tests"].as_array().expect("failed tests").iter().zip(&failed) {
        assert_eq!(ft["test"], json!(t.name));
        let raw: Vec<&str> = t.failure_text.as_deref().unwrap_or("").lines().collect();
        for x in ft["failure_lines"].as_array().expect("failure lines") {
            let (a, z) =
                (x["line_start"].as_u64().expect("start") as usize, x["line_end"].as_u64().expect("end") as usize);
            assert!(1 <= a && a <= z && z <= raw.len(), "{x}");
            for (k, line) in x["text"].as_str().expect("text").lines().enumerate() {
                assert!(raw[a - 1 + k].contains(line.trim()), "line {} of {}: {line:?}", a + k, t.name);
                lines_checked += 1;
            }
        }
    }
    assert!(lines_checked > 0, "some failure line is checked");
    // A page at a time: every failed test once, in order; the excerpts with the first page only.
    let mut names: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let v = c.answer("extract_failure", json!({"job": job, "build_id": b.build_id, "limit": 1, "cursor": cursor}));
        assert_eq!(v["result"]["failed_tests_total"], json!(failed.len()));
        let excerpts = v["result"]["log_excerpts"].as_array().expect("logs").len();
        assert_eq!(excerpts, if names.is_empty() { b.excerpts.len().min(4) } else { 0 }, "{v}");
        names.extend(v["result"]["failed_tests"].as_array().expect("failed tests").iter().map(|t| t["test"].clone()));
        cursor = v["result"]["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names, failed.iter().map(|t| json!(t.name)).collect::<Vec<_>>());
    let (err, msg) = c.call("extract_failure", json!({"job": job, "build_id": "0"}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("\"0\"")), "{msg}");

    // test_history: a test that failed in that build
    let t = failed.first().expect("a failed test");
    let v = c.answer("test_history", json!({"name": t.name}));
    keep("test_history", &v);
    let jobs = v["result"]["jobs"].as_array().expect("jobs");
    let here = jobs.iter().find(|j| j["job"] == json!(job)).unwrap_or_else(|| panic!("{job} ran {}", t.name));
    for run in here["history"].as_array().expect("history") {
        let id = run["build_id"].as_str().expect("id");
        let sb = with_tests.iter().find(|x| x.build_id == id).unwrap_or_else(|| panic!("build {id} is stored"));
        let st_status = sb.tests.iter().find(|x| x.name == t.name).map(|x| x.status.as_str());
        let passed = run["status"] == "passed";
        assert_eq!(passed, st_status == Some("passed"), "{} in {id}: {run}", t.name);
        assert_eq!(run["evidence"].as_array().map(Vec::len), Some(usize::from(!passed)), "{run}");
    }

    // search_failures: a word of that failure text, found where it is
    let text = t.failure_text.clone().unwrap_or_default();
    let word = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 8)
        .max_by_key(|w| (w.len(), w.to_string()))
        .unwrap_or_else(|| panic!("a word in {text:?}"))
        .to_string();
    let v = c.answer("search_failures", json!({"q": regex::escape(&word), "max": 1000, "detail": true}));
    keep("search_failures", &v);
    let ms = v["result"]["matches"].as_array().expect("matches");
    assert!(
        ms.iter().any(|m| m["build_id"] == json!(b.build_id)),
        "{word} is found in build {} (started {:?}): {}",
        b.build_id,
        b.started,
        serde_json::to_string(&v["result"]).unwrap_or_default().chars().take(3000).collect::<String>()
    );
    for m in ms {
        let ex = m["excerpt"].as_str().expect("excerpt");
        let (s, e) =
            (m["match_start"].as_u64().expect("start") as usize, m["match_end"].as_u64().expect("end") as usize);
        assert!(ex[s..e].eq_ignore_ascii_case(&word), "{m}");
        assert_eq!(m["evidence"].as_array().map(Vec::len), Some(1));
    }
    // Within build logs: each match's line number is the stored excerpt's line it is on.
    let logged = with_tests
        .iter()
        .filter(|x| !x.excerpts.is_empty())
        .max_by_key(|x| (x.started, x.build_id.clone()))
        .expect("a build with log excerpts");
    let ex = &logged.excerpts[0];
    let log_word = ex
        .text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 6 && w.chars().any(|c| c.is_ascii_alphabetic()))
        .max_by_key(|w| (w.len(), w.to_string()))
        .expect("a word in the excerpt")
        .to_string();
    let v = c.answer("search_failures", json!({"q": regex::escape(&log_word), "within": "logs", "max": 1000, "detail": true, "job": format!("^{}$", regex::escape(job))}));
    keep("search_failures", &v);
    let ms = v["result"]["matches"].as_array().expect("matches");
    let mine: Vec<&Value> = ms.iter().filter(|m| m["build_id"] == json!(logged.build_id)).collect();
    assert!(!mine.is_empty(), "{log_word} is found in the log of {}", logged.build_id);
    for m in ms {
        assert_eq!(m["kind"], "log", "{m}");
        let id = m["build_id"].as_str().expect("id");
        let sb = with_tests.iter().find(|x| x.build_id == id).expect("stored build");
        let line = m["line"].as_u64().expect("a log line number") as u32;
        let e =
            sb.excerpts.iter().find(|e| e.line_start <= line && line <= e.line_end).unwrap_or_else(|| panic!("{m}"));
        let text = e.text.lines().nth((line - e.line_start) as usize).expect("the line");
        assert!(text.to_ascii_lowercase().contains(&log_word.to_ascii_lowercase()), "line {line} of {id}: {text:?}");
    }
    let (err, msg) = c.call("search_failures", json!({"q": "(unclosed"}));
    assert!(err, "a bad regex is refused: {msg}");

    // list_patterns / get_pattern: the stored clusters of the default profile
    let clusters: BTreeMap<String, citriage_store::StoredCluster> =
        st.clusters("default").expect("clusters").into_iter().map(|c| (c.stable_id.clone(), c)).collect();
    let v = c.answer("list_patterns", json!({"limit": 100, "detail": true}));
    keep("list_patterns", &v);
    let pats = v["result"]["clusters"].as_array().expect("clusters");
    assert!(!pats.is_empty());
    assert_eq!(v["result"]["profile"], "default");
    for p in pats {
        let id = p["stable_id"].as_str().expect("id");
        let s = clusters.get(id).unwrap_or_else(|| panic!("pattern {id} is stored"));
        assert_eq!(p["owner"], json!(s.owner));
        assert_eq!(p["key"], json!(s.key));
        let per_day: u64 = p["per_day"].as_array().expect("per day").iter().map(|n| n.as_u64().expect("n")).sum();
        assert_eq!(p["total"].as_u64(), Some(per_day), "{id}: total is the sum of its days");
        assert!(p["sub_patterns"].is_array() && p.get("drift").is_some(), "{p}");
        assert_eq!(p["evidence"].as_array().map(Vec::len), Some(1), "each pattern cites its newest failure");
    }
    let top = &pats[0];
    let id = top["stable_id"].as_str().expect("id");
    let v = c.answer("get_pattern", json!({"id": id}));
    keep("get_pattern", &v);
    assert_eq!(v["result"]["cluster"]["total"], top["total"]);
    let newest: BTreeSet<String> =
        st.cluster_failures("default", id, 1000).expect("failures").into_iter().map(|f| f.build_id).collect();
    for l in v["result"]["latest"].as_array().expect("latest") {
        assert!(newest.contains(l["build_id"].as_str().expect("id")), "{l}");
    }
    let (err, _) = c.call("get_pattern", json!({"id": "no-such-pattern"}));
    assert!(err);
    // find_suspects: the pattern's jobs, each with its failing end cited.
    let v = c.answer("find_suspects", json!({"target": id}));
    keep("find_suspects", &v);
    assert_eq!(v["result"]["kind"], "pattern");
    let windows = v["result"]["jobs"].as_array().expect("jobs");
    assert!(!windows.is_empty(), "{v}");
    for w in windows {
        assert_eq!(w["first_fail"]["evidence"].as_array().map(Vec::len), Some(1), "{w}");
    }
    // Its jobs' windows, a page at a time: every job once, in the detailed answer's order.
    let full = c.answer("find_suspects", json!({"target": id, "detail": true, "limit": 200}));
    let want: Vec<Value> = full["result"]["jobs"].as_array().expect("jobs").iter().map(|j| j["job"].clone()).collect();
    assert_eq!(full["result"]["jobs_total"], json!(want.len()));
    let mut got: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let v = c.answer("find_suspects", json!({"target": id, "limit": 1, "cursor": cursor}));
        got.extend(v["result"]["jobs"].as_array().expect("jobs").iter().map(|j| j["job"].clone()));
        cursor = v["result"]["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(got, want, "find_suspects' pages hold every job once, in order");
    let (err, _) = c.call("find_suspects", json!({"target": "no-such-pattern-or-job"}));
    assert!(err);
    // Owner filters take the SIG as the store names it (`apps`) or as `sig-apps`.
    let owner = top["owner"].as_str().expect("owner").to_string();
    for spelled in [owner.clone(), format!("sig-{owner}")] {
        let v = c.answer("list_patterns", json!({"owner": spelled, "limit": 100}));
        let ps = v["result"]["clusters"].as_array().expect("clusters");
        assert!(ps.iter().any(|p| p["stable_id"] == top["stable_id"]), "{spelled}");
        assert!(ps.iter().all(|p| p["owner"] == json!(owner)), "{spelled}");
        let v = c.answer("list_failing_jobs", json!({"owner": spelled, "limit": 1000}));
        let js = v["result"]["jobs"].as_array().expect("jobs");
        assert!(js.iter().all(|j| j["owners"].as_array().expect("owners").contains(&json!(owner))), "{spelled}");
        assert!(!js.is_empty(), "{spelled}: some failing job has failures of the top pattern");
    }
    // A pattern's bug: routed by its owner, resting on its newest failures.
    let v = c.answer("draft_action", json!({"action": "bug", "pattern": id}));
    keep("draft_action", &v);
    let d = &v["result"]["drafts"][0];
    assert_eq!(d["kind"], "bug");
    assert_eq!(d["target"]["repo"], "kubernetes/kubernetes", "the server's --issue-repo default: {d}");
    let label = if owner.is_empty() { "needs-sig".to_string() } else { format!("sig/{owner}") };
    assert!(d["labels"].as_array().expect("labels").contains(&json!(label)), "{}: {}", label, d["labels"]);
    let cited: BTreeSet<String> = d["earned_by"]
        .as_array()
        .expect("earned")
        .iter()
        .map(|e| e["evidence"]["id"].as_str().expect("id").to_string())
        .collect();
    let latest_cited: BTreeSet<String> = {
        let mut b = BTreeSet::new();
        ids_in(&v["result"]["drafts"][0]["earned_by"], &mut b);
        b
    };
    assert!(!cited.is_empty() && cited == latest_cited, "the bug rests on cited failures");

    // analyze_payload: the stored analyses, verdict for verdict
    let v = c.answer("analyze_payload", json!({}));
    assert!(v["result"]["streams"].as_array().is_some_and(|s| !s.is_empty()), "{v}");
    for tag in &w.tags {
        let doc = st.document("payload", tag, "application/json").expect("read").expect("stored");
        let stored: Value = serde_json::from_str(&doc.body).expect("json");
        let v = c.answer("analyze_payload", json!({"tag": tag, "detail": true}));
        keep("analyze_payload", &v);
        let r = &v["result"];
        // The tool spells the verdict as the reports do (`REPORT ONLY`), the JSON as its variant (`ReportOnly`).
        let spell = |v: &Value| -> String {
            v.as_str()
                .unwrap_or("")
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_uppercase()
        };
        assert_eq!(spell(&r["verdict"]), spell(&stored["decision"]["verdict"]), "{tag}");
        assert!(!spell(&r["verdict"]).is_empty(), "{tag}");
        assert_eq!(
            r["suspects"].as_array().map(Vec::len),
            stored["suspects"].as_array().map(Vec::len),
            "{tag}: every suspect"
        );
        assert_eq!(r["failed_jobs"].as_array().map(Vec::len), stored["failed_jobs"].as_array().map(Vec::len));
    }

    // draft_action: the culprit's draft (revert or bisect) names it and cites its evidence
    let culprits = world::culprit_tags(w);
    assert!(!culprits.is_empty(), "the world plants a culprit");
    let mut drafted = 0;
    for (tag, who, _) in &culprits {
        let a = c.answer("analyze_payload", json!({"tag": tag, "detail": true}));
        for row in a["result"]["rows"].as_array().expect("rows") {
            let (Some(kind), Some(id)) = (row["draft"].as_str(), row["id"].as_str()) else { continue };
            if row["row"] != "suspect" {
                continue;
            }
            let v = c.answer("draft_action", json!({"action": kind, "payload": tag, "suspect": id}));
            keep("draft_action", &v);
            let d = &v["result"]["drafts"][0];
            assert_eq!(
                d["suspect"]["repo"].as_str().map(|r| format!("{r}#{}", d["suspect"]["number"])),
                Some(who.clone()),
                "{tag}: the draft is the culprit's: {}",
                d["subject"]
            );
            assert!(!d["earned_by"].as_array().expect("earned").is_empty(), "never drafted from no evidence");
            assert!(!d["would_change"].as_array().expect("would change").is_empty());
            assert!(v["result"]["applied"].is_null(), "draft_action sends nothing");
            drafted += 1;
        }
    }
    assert!(drafted > 0, "some culprit payload supports a draft");
    let (err, msg) =
        c.call("draft_action", json!({"action": "revert", "payload": w.tags[0], "suspect": "nobody/nothing#1"}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("not found")), "{msg}");

    // pr_state: offline, a reference the cache has never seen is unknown, never a guess
    let v = c
        .answer("pr_state", json!({"refs": ["kubernetes/kubernetes#1", "https://github.com/openshift/origin/pull/2"]}));
    let refs = v["result"]["refs"].as_array().expect("refs");
    assert_eq!(refs.len(), 2);
    assert_eq!(refs[1]["ref"], "openshift/origin#2");
    for r in refs {
        assert_eq!(r["kind"], "unknown", "{r}");
        assert!(r["why_unknown"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    }
    let (err, _) = c.call("pr_state", json!({"refs": ["not a ref"]}));
    assert!(err);

    // list_records: the same records as `citriage triage records --format json`
    let v = c.answer("list_records", json!({"detail": true, "limit": 200}));
    let cli = common::run(&w.db, &["--format", "json", "triage", "records"]);
    let cli: Value = serde_json::from_slice(&cli.stdout).expect("triage records prints JSON");
    assert_eq!(v["result"]["records"], cli["records"], "{transport}: list_records");
    // Compact by default: the same records in the same order, one page at a time.
    let all = cli["records"].as_array().expect("records");
    let v = c.answer("list_records", json!({"limit": 1}));
    assert_eq!(v["result"]["matching"], json!(all.len()), "{transport}: list_records counts every record");
    let mut subjects: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let v = c.answer("list_records", json!({"limit": 1, "cursor": cursor}));
        subjects.extend(v["result"]["records"].as_array().expect("records").iter().map(|r| r["subject"].clone()));
        cursor = v["result"]["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let want: Vec<Value> = all.iter().map(|r| r["subject"].clone()).collect();
    assert_eq!(subjects, want, "{transport}: list_records' pages hold every record once, in order");
    let (err, _) = c.call("list_records", json!({"state": "fixed"}));
    assert!(err, "an unknown state is refused");

    // verify_report: the same findings as `citriage verify --offline --format json`
    let report = w.triage_out.join("failures/report.md");
    let text = std::fs::read_to_string(&report).expect("report.md");
    let v = c.answer("verify_report", json!({"text": text, "name": "report.md"}));
    keep("verify_report", &v);
    let cli = common::run(&w.db, &["--format", "json", "verify", "--offline", report.to_str().expect("path")]);
    let cli: Value = serde_json::from_slice(&cli.stdout).expect("verify prints JSON");
    let findings = |x: &Value| -> Vec<(Value, Value)> {
        let mut f: Vec<(Value, Value)> = x["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| (f["rule"].clone(), f["message"].clone()))
            .collect();
        f.sort_by_key(|p| p.0.to_string() + &p.1.to_string());
        f
    };
    assert_eq!(findings(&v["result"]), findings(&cli), "the tool and the command agree");

    // resources: the latest triage of each dataset is the stored report.md
    let res = c.ok("resources/list", json!({}));
    let uris: BTreeSet<&str> =
        res["resources"].as_array().expect("resources").iter().map(|r| r["uri"].as_str().expect("uri")).collect();
    for u in ["citriage://triage/failures/latest", "citriage://triage/flakes/latest", "citriage://briefs/failures"] {
        assert!(uris.contains(u), "{u} in {uris:?}");
    }
    assert!(uris.iter().any(|u| u.starts_with("citriage://reports/payload/")), "{uris:?}");
    let r = c.ok("resources/read", json!({"uri": "citriage://triage/failures/latest"}));
    assert_eq!(r["contents"][0]["text"], json!(text), "the latest failures triage is the report written last");
    assert_eq!(r["contents"][0]["mimeType"], "text/markdown");
    let mut report_ids = BTreeSet::new();
    ids_in(&r["contents"][0]["text"], &mut report_ids);
    assert!(!report_ids.is_empty(), "the triage report cites evidence");
    let payload_uri = uris.iter().find(|u| u.starts_with("citriage://reports/payload/")).expect("a payload report");
    let r = c.ok("resources/read", json!({"uri": payload_uri}));
    let tag = payload_uri.trim_start_matches("citriage://reports/payload/");
    let stored = st.document("payload", tag, "text/markdown").expect("read").expect("stored");
    assert_eq!(r["contents"][0]["text"], json!(stored.body), "{payload_uri} is the stored Markdown");
    let r = c.ok("resources/read", json!({"uri": "citriage://briefs/failures"}));
    let briefs = r["contents"][0]["text"].as_str().expect("briefs").to_string();
    assert!(briefs.contains("<!-- brief-"), "one brief per selected cluster");
    let mut brief_ids = BTreeSet::new();
    ids_in(&json!(briefs), &mut brief_ids);
    assert!(!brief_ids.is_empty(), "the briefs cite evidence");
    let r = c.request("resources/read", json!({"uri": "citriage://nothing/here"}));
    assert!(r.get("error").is_some(), "{r}");

    // the prompt: the investigation brief
    let p = c.ok("prompts/list", json!({}));
    assert_eq!(p["prompts"][0]["name"], "investigate");
    let p = c.ok("prompts/get", json!({"name": "investigate", "arguments": {"dataset": "failures"}}));
    assert_eq!(p["messages"][0]["role"], "user");
    let prompt = p["messages"][0]["content"]["text"].as_str().expect("text").to_string();
    assert!(prompt.contains("lookup_evidence"), "{prompt}");
    let mut prompt_ids = BTreeSet::new();
    ids_in(&json!(prompt), &mut prompt_ids);

    // lookup_evidence: every id any answer, resource or prompt cited resolves, with
    // the locator and excerpt the answer gave
    let mut ids: BTreeSet<String> = every.keys().cloned().collect();
    ids.extend(brief_ids);
    ids.extend(prompt_ids);
    ids.extend(report_ids);
    assert!(ids.len() > 20, "{transport}: {} evidence ids", ids.len());
    let all: Vec<String> = ids.iter().cloned().collect();
    for chunk in all.chunks(200) {
        let v = c.answer("lookup_evidence", json!({"ids": chunk}));
        assert_eq!(v["result"]["missing"], json!([]), "{transport}: every evidence id resolves");
        for f in v["result"]["found"].as_array().expect("found") {
            let id = f["id"].as_str().expect("id");
            if let Some(e) = every.get(id) {
                assert_eq!(f["locator"], e["locator"], "{id}");
                assert_eq!(f["excerpt"], e["excerpt"], "{id}");
            }
            assert!(st.evidence(id).expect("ledger").is_some(), "{id} is in the store's ledger");
        }
    }
    let v = c.answer("lookup_evidence", json!({"ids": ["ev-000000000000"]}));
    assert_eq!(v["result"]["missing"], json!(["ev-000000000000"]));
    eprintln!("{transport}: {} tools called, {} evidence ids resolved", TOOLS.len(), ids.len());
}

#[test]
fn mcp_over_stdio() {
    let w = world::world();
    let mut c = Client::stdio(&w.db, &[], &[]);
    conformance(&mut c, w, "stdio");
}

#[test]
fn mcp_over_streamable_http_in_serve() {
    let w = world::world();
    let mut c = Client::http(&w.db, &[], &[]);
    conformance(&mut c, w, "http");
    // The endpoint shares the dashboard's Host check (DNS rebinding), and a body that
    // is not JSON-RPC is a client error.
    let url = c.url().expect("an HTTP client").to_string();
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let status = |host: &str, body: &str| -> u16 {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).expect("connect");
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).expect("write");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{answer}"))
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    assert_eq!(status("rebind.example", init), 403, "another host name is refused");
    let bad = status(&addr, "not json");
    assert!((400..500).contains(&bad), "not JSON: HTTP {bad}");
    // A body larger than serve's cap is refused before it is read (413), and the
    // connection closed.
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(&addr).expect("connect");
    s.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n",
    )
    .expect("write");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
}

/// Hostile input: no store, a line that is not JSON, a request for a method that does
/// not exist, a tool call without arguments. Clear errors, and the server goes on.
#[test]
fn bad_input_is_answered_not_fatal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.db");
    let o = common::run(&missing, &["mcp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains(&missing.display().to_string()), "{}", common::stderr(&o));
    assert!(!missing.exists(), "the MCP server never creates a store");

    let w = world::world();
    let mut c = Client::stdio(&w.db, &[], &[]);
    c.send_raw("this is not JSON-RPC\n");
    c.initialize();
    let r = c.request("no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "method not found: {r}");
    let (err, msg) = c.call("job_history", json!({}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("job")), "a missing argument is named: {msg}");
    let (err, msg) = c.call("search_failures", json!({"q": "a".repeat(600)}));
    assert!(err && msg.as_str().is_some_and(|m| m.contains("500")), "the regex size bound: {msg}");
    let v = c.answer("list_failing_jobs", json!({"limit": 1}));
    assert_eq!(v["result"]["jobs"].as_array().map(Vec::len), Some(1), "still answering");
}
