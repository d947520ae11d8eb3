//! `citriage pr`, `fetch --pr` and `act comment` on a synthetic world's planted pull
//! requests, against a GitHub-shaped server on 127.0.0.1 (`GET /repos/{o}/{r}`,
//! `GET /repos/{o}/{r}/pulls/{n}` and `/pulls/{n}/files` from the world's recorded
//! answers, `GET`/`POST /repos/{o}/{r}/issues/{n}/comments`, `PATCH
//! /repos/{o}/{r}/issues/comments/{id}`):
//!
//! - a PR that broke a test is told to look at its change, with the changed file the
//!   failure names, and every evidence id resolves in the ledger;
//! - bad input is said clearly with exit 2: no stored runs (the exact `fetch --pr`
//!   command), a PR GitHub does not know (404), a fork;
//! - `fetch --pr` stores only that PR's runs, a run without `finished.json` is pending;
//! - `act comment --apply` posts once, then updates its own comment (found by its
//!   marker) instead of adding another; without a token nothing is sent; the draft
//!   passes `verify`.

mod common;
#[path = "common/mcp.rs"]
mod mcp;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    db: PathBuf,
    truth: Value,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").expect("preset");
    p.seed = 5;
    p.jobs = 3;
    p.payloads = 0;
    p.pr_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).expect("world");
    let db = dir.path().join("s.db");
    let mirror = root.join("gcs/kubernetes-ci-logs");
    ok(&db, &["fetch", "--mirror", mirror.to_str().expect("path"), "--all"], None);
    ok(&db, &["cluster", "--window", "14"], None);
    let truth = serde_json::from_slice(&std::fs::read(root.join("truth/prs.json")).expect("truth")).expect("json");
    World { _dir: dir, root, db, truth }
}

fn run(db: &Path, args: &[&str], token: Option<&str>) -> Output {
    let mut c = common::bin();
    c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    if let Some(t) = token {
        c.env("GITHUB_TOKEN", t);
    }
    c.arg("--db").arg(db).arg("--quiet").args(args).output().expect("runs")
}

fn ok(db: &Path, args: &[&str], token: Option<&str>) -> Output {
    let o = run(db, args, token);
    assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
    o
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[derive(Default)]
struct State {
    comments: Vec<(u64, String)>,
    sent: Vec<(String, String)>,
}

struct Github {
    base: String,
    state: Arc<Mutex<State>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Github {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn respond(rq: tiny_http::Request, status: u16, body: Value) {
    let _ = rq.respond(tiny_http::Response::from_data(body.to_string().into_bytes()).with_status_code(status));
}

fn serve(root: &Path) -> Github {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().expect("ip").port());
    let state = Arc::new(Mutex::new(State::default()));
    let (srv, api, st) = (server.clone(), root.join("github/api/repos"), state.clone());
    let thread = std::thread::spawn(move || {
        for mut rq in srv.incoming_requests() {
            let path = rq.url().split('?').next().unwrap_or("").to_string();
            let method = rq.method().to_string();
            let mut body = String::new();
            let _ = std::io::Read::read_to_string(rq.as_reader(), &mut body);
            let parts: Vec<String> = path.trim_start_matches('/').split('/').map(str::to_string).collect();
            let p: Vec<&str> = parts.iter().map(String::as_str).collect();
            let mut s = st.lock().expect("state");
            if method != "GET" {
                s.sent.push((method.clone(), path.clone()));
            }
            let file = |rel: String| std::fs::read(api.join(rel)).ok().and_then(|b| serde_json::from_slice(&b).ok());
            let answer: Option<(u16, Value)> = match (method.as_str(), p.as_slice()) {
                ("GET", ["repos", "forker", r]) => Some((
                    200,
                    json!({"full_name": format!("forker/{r}"), "fork": true, "parent": {"full_name": format!("kubernetes/{r}")}}),
                )),
                ("GET", ["repos", o, r]) => Some((200, json!({"full_name": format!("{o}/{r}"), "fork": false}))),
                ("GET", ["repos", o, r, "pulls", n]) => file(format!("{o}/{r}/pulls/{n}")).map(|v| (200, v)),
                ("GET", ["repos", o, r, "pulls", n, "files"]) => {
                    file(format!("{o}/{r}/pulls-files/{n}")).map(|v| (200, v))
                }
                ("GET", ["repos", _, _, "issues", _, "comments"]) => Some((
                    200,
                    Value::Array(
                        s.comments
                            .iter()
                            .map(|(id, b)| json!({"id": id, "body": b, "user": {"login": "bot"}}))
                            .collect(),
                    ),
                )),
                ("POST", ["repos", _, _, "issues", _, "comments"]) => {
                    let b: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let id = 1000 + s.comments.len() as u64;
                    s.comments.push((id, b["body"].as_str().unwrap_or("").to_string()));
                    Some((201, json!({"id": id, "html_url": format!("https://github.com/c/{id}")})))
                }
                ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
                    let b: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let id: u64 = id.parse().unwrap_or(0);
                    let found = s.comments.iter_mut().find(|c| c.0 == id).map(|c| {
                        c.1 = b["body"].as_str().unwrap_or("").to_string();
                    });
                    found.map(|_| (200, json!({"id": id, "html_url": format!("https://github.com/c/{id}")})))
                }
                _ => None,
            };
            drop(s);
            let (status, v) = answer.unwrap_or((404, json!({"message": "Not Found"})));
            respond(rq, status, v);
        }
    });
    Github { base, state, server, thread: Some(thread) }
}

/// The planted PRs of a story.
fn planted(w: &World, story: &str) -> Vec<Value> {
    w.truth["prs"].as_array().expect("prs").iter().filter(|p| p["story"] == story).cloned().collect()
}

#[test]
fn pr_classifies_fetches_comments_and_refuses_bad_input() {
    let w = world();
    let gh = serve(&w.root);
    let db = w.db.to_str().expect("db");
    let _ = db;

    // A PR that broke a test: look at your change, the changed file named, evidence resolving.
    let broke = planted(&w, "breaks-test").into_iter().next().expect("a breaking PR");
    let name = broke["pr"].as_str().expect("pr").to_string();
    let r = json_of(&ok(&w.db, &["--format", "json", "pr", &name, "--api", &gh.base], None));
    assert_eq!(r["verdict"]["safe_to_retest"], json!(false), "{r}");
    assert!(r["verdict"]["line"].as_str().expect("line").starts_with("look at your change: 1 failure is new"));
    let new: Vec<&Value> =
        r["failures"].as_array().expect("failures").iter().filter(|f| f["class"] == "new-with-pr").collect();
    assert_eq!(new.len(), 1);
    assert!(new[0]["strong"].as_bool().expect("strong"), "{}", new[0]);
    let changed: Vec<&str> =
        broke["changed_files"].as_array().expect("files").iter().filter_map(Value::as_str).collect();
    let named = new[0]["facts"]["changed_files_named"][0].as_str().expect("named");
    assert!(changed.contains(&named), "{named} not in {changed:?}");
    for f in r["failures"].as_array().expect("failures") {
        for id in f["evidence"].as_array().expect("ids") {
            ok(&w.db, &["evidence", id.as_str().expect("id")], None);
        }
    }
    // Text: the verdict is the last line.
    let text = String::from_utf8_lossy(&ok(&w.db, &["pr", &name, "--api", &gh.base], None).stdout).into_owned();
    assert!(text.trim_end().ends_with("new with this PR"), "{text}");

    // The MCP tool answers the same, compact, every cited id among its evidence.
    let mut c = mcp::Client::stdio(&w.db, &[], &[]);
    c.initialize();
    let v = c.answer("pr_risk", json!({"pr": name}));
    assert!(v.to_string().len() <= 16 * 1024, "{} bytes", v.to_string().len());
    assert_eq!(v["result"]["verdict"], r["verdict"]);
    assert_eq!(v["result"]["failures"].as_array().map(Vec::len), r["failures"].as_array().map(Vec::len));
    let listed: Vec<&str> =
        v["evidence"].as_array().expect("evidence").iter().filter_map(|e| e["id"].as_str()).collect();
    for f in v["result"]["failures"].as_array().expect("failures") {
        for id in f["evidence"].as_array().expect("ids") {
            assert!(listed.contains(&id.as_str().expect("id")), "{id} cited but not in the answer's evidence");
        }
    }
    drop(c);

    // A PR hit only by flakes is safe to retest.
    let flaky = planted(&w, "flaky-only").into_iter().next().expect("flaky PR");
    let r =
        json_of(&ok(&w.db, &["--format", "json", "pr", flaky["pr"].as_str().expect("pr"), "--api", &gh.base], None));
    assert_eq!(r["verdict"]["safe_to_retest"], json!(true), "{r}");

    // Bad input: no stored runs (the exact fetch command), unknown PR (404), a fork, garbage.
    let o = run(&w.db, &["pr", "kubernetes/kubernetes#1", "--no-github"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("fetch --pr kubernetes/kubernetes#1 --gcs"), "{}", common::stderr(&o));
    let o = run(&w.db, &["pr", "kubernetes/kubernetes#2", "--api", &gh.base], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("no such pull request on GitHub (404)"), "{}", common::stderr(&o));
    let o = run(&w.db, &["pr", "forker/kubernetes#3", "--api", &gh.base], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("is a fork of kubernetes/kubernetes"), "{}", common::stderr(&o));
    let o = run(&w.db, &["pr", "not a pr"], None);
    assert_eq!(o.status.code(), Some(2));

    // act comment: no token, nothing sent; then posted once and updated in place.
    let out = tempfile::tempdir().expect("tmp");
    let dir = out.path().to_str().expect("path");
    let args = ["act", "comment", name.as_str(), "--api", gh.base.as_str(), "--out", dir, "--apply"];
    let o = run(&w.db, &args, None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(gh.state.lock().expect("state").sent.is_empty());
    ok(&w.db, &args, Some("tok"));
    ok(&w.db, &args, Some("tok"));
    let s = gh.state.lock().expect("state");
    assert_eq!(s.sent.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), vec!["POST", "PATCH"], "{:?}", s.sent);
    assert_eq!(s.comments.len(), 1, "one comment, updated in place");
    assert!(s.comments[0].1.starts_with("<!-- citriage:pr-risk "), "{}", s.comments[0].1);
    assert!(s.comments[0].1.contains("look at your change"));
    drop(s);
    // The draft passes the report checks (the claim rules an alert passes too).
    let d = json_of(&ok(&w.db, &["--format", "json", "act", "comment", &name, "--api", &gh.base, "--out", dir], None));
    assert_eq!(d["checks"]["findings"], json!([]), "{}", d["checks"]);
    assert!(d["checks"]["verified"].as_u64().expect("verified") >= 2, "{}", d["checks"]);
}

#[test]
fn fetch_pr_stores_only_that_pr_and_a_run_without_finished_json_is_pending() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").expect("preset");
    p.seed = 6;
    p.jobs = 2;
    p.payloads = 0;
    p.pr_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).expect("world");
    let truth: Value = serde_json::from_slice(&std::fs::read(root.join("truth/prs.json")).expect("t")).expect("j");
    let n = truth["prs"][0]["number"].as_u64().expect("n");
    let folder = root.join(format!("gcs/kubernetes-ci-logs/pr-logs/pull/{n}"));
    // The newest run of one job is still running: no finished.json yet.
    let job = std::fs::read_dir(&folder).expect("jobs").flatten().map(|e| e.path()).min().expect("a job");
    let newest = std::fs::read_dir(&job).expect("runs").flatten().map(|e| e.path()).max().expect("a run");
    std::fs::remove_file(newest.join("finished.json")).expect("rm");
    let db = dir.path().join("s.db");
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let pr = format!("kubernetes/kubernetes#{n}");
    ok(&db, &["fetch", "--pr", &pr, "--mirror", mirror.to_str().expect("m")], None);
    let runs: usize = std::fs::read_dir(&folder)
        .expect("jobs")
        .flatten()
        .map(|j| std::fs::read_dir(j.path()).expect("r").count())
        .sum();
    let conn = rusqlite::Connection::open(&db).expect("db");
    let stored: (i64, i64) = conn
        .query_row("SELECT COUNT(*), COUNT(DISTINCT pr) FROM builds", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("count");
    assert_eq!(stored, (runs as i64, 1), "only the PR's runs are stored");
    let r = json_of(&ok(&db, &["--format", "json", "pr", &pr, "--no-github"], None));
    let pending: Vec<&str> = r["pending"].as_array().expect("pending").iter().filter_map(Value::as_str).collect();
    let name = job.file_name().expect("name").to_str().expect("utf8");
    assert_eq!(pending, vec![name]);
    assert!(r["verdict"]["line"].as_str().expect("line").contains("1 run(s) still pending"), "{r}");
    // A PR with no job folder is bad input.
    let o = run(&db, &["fetch", "--pr", "kubernetes/kubernetes#7", "--mirror", mirror.to_str().expect("m")], None);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
}

#[test]
fn watch_analyses_the_configured_prs_each_turn_and_posts_nothing_without_apply() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").expect("preset");
    p.seed = 8;
    p.jobs = 2;
    p.payloads = 0;
    p.pr_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).expect("world");
    let truth: Value = serde_json::from_slice(&std::fs::read(root.join("truth/prs.json")).expect("t")).expect("j");
    let broke = truth["prs"].as_array().expect("prs").iter().find(|p| p["broke_test"] == true).expect("one").clone();
    let name = broke["pr"].as_str().expect("pr");
    let gh = serve(&root);
    let cfg = dir.path().join("citriage.toml");
    let text = format!(
        "prs = [{name:?}, \"kubernetes/kubernetes#1\"]\n\n[schedule]\ninterval = \"1h\"\n\n[retention]\nwindow_days = 3650\nlog_days = 3650\n\n[[sources.buckets]]\nname = \"k8s\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njob_regex = \"canary\"\n\n[sources]\ngithub = [{{ repo = \"kubernetes/kubernetes\", api = {:?} }}]\n",
        root.join("gcs/kubernetes-ci-logs").display().to_string(),
        gh.base
    );
    std::fs::write(&cfg, text).expect("config");
    let db = dir.path().join("s.db");
    let c = cfg.to_str().expect("cfg");
    let tick =
        json_of(&ok(&db, &["--format", "json", "watch", "--once", "--worker", "w1", "--config", c], Some("tok")));
    let prs = tick["prs"].as_array().unwrap_or_else(|| panic!("{tick}"));
    assert_eq!(prs.len(), 2, "{tick}");
    assert_eq!(prs[0]["pr"], json!(name));
    assert!(prs[0]["verdict"].as_str().expect("v").starts_with("look at your change"), "{tick}");
    assert!(prs[0].get("comment").is_none(), "nothing posted without --apply: {tick}");
    assert!(prs[1]["verdict"].as_str().expect("v").starts_with("not analysed: no stored runs"), "{tick}");
    assert!(gh.state.lock().expect("state").sent.is_empty());
    // With --apply (and the token): posted.
    let tick = json_of(&ok(
        &db,
        &["--format", "json", "watch", "--once", "--worker", "w1", "--config", c, "--apply"],
        Some("tok"),
    ));
    assert_eq!(tick["prs"][0]["comment"], json!("posted"), "{tick}");
    assert_eq!(gh.state.lock().expect("state").comments.len(), 1);
}
