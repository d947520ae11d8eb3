//! `citriage triage link|unlink|records|refresh` over a synthetic world with planted
//! fixes and a GitHub-shaped server on 127.0.0.1: linking the fix of the pattern that
//! works by its stable id makes a record that reaches *fix confirmed*, listed as text
//! and as JSON, with its timeline; `triage` with its options still triages, and its
//! report's Tier 0 shows the confirmed fix; bad input exits 2 with a clear message.

mod common;

use common::{run, stderr};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// `/repos/o/r/{issues,pulls}/N` from the world's `github/api/repos/...` (everything
/// as it is at the world's end).
fn serve(root: &Path) -> (Arc<tiny_http::Server>, String, std::thread::JoinHandle<()>) {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().unwrap().port());
    let (srv, root) = (server.clone(), root.to_path_buf());
    let t = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            let path = rq.url().split('?').next().unwrap_or("").to_string();
            let file = path.strip_prefix("/repos/").map(|rest| root.join("github/api/repos").join(rest));
            let (status, body) = match file.filter(|f| f.is_file() && !path.contains("..")) {
                Some(f) => (200, std::fs::read(f).unwrap()),
                None => (404, br#"{"message":"Not Found"}"#.to_vec()),
            };
            let _ = rq.respond(tiny_http::Response::from_data(body).with_status_code(status));
        }
    });
    (server, base, t)
}

fn ok(db: &Path, args: &[&str]) -> String {
    let o = run(db, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// A tiny world with fix stories, and a store holding the builds of the "works"
/// story's jobs: (its folder, the world's root, the story's truth, the store).
fn works_world() -> (tempfile::TempDir, std::path::PathBuf, Value, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 3;
    p.payloads = 0;
    p.fix_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let truth = json(&root.join("truth.json"));
    let story = truth["fixes"].as_array().unwrap().iter().find(|s| s["story"] == "works").unwrap().clone();
    let db = dir.path().join("s.db");
    let mirror = root.join("gcs/kubernetes-ci-logs");
    let mut fetch = vec!["fetch", "--mirror", mirror.to_str().unwrap()];
    let jobs: Vec<String> =
        story["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().into()).collect();
    for j in &jobs {
        fetch.extend(["--job", j.as_str()]);
    }
    ok(&db, &fetch);
    (dir, root, story, db)
}

#[test]
fn a_linked_fix_is_recorded_listed_and_reported_and_bad_links_exit_2() {
    let (dir, root, story, db) = works_world();
    // Before clustering, no pattern id is known.
    let o = run(&db, &["triage", "link", "0123456789abc", "kubernetes/kubernetes#1", "--by", "lead"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pattern 0123456789abc is not stored") && stderr(&o).contains("cluster"),
        "{}",
        stderr(&o)
    );
    let out = dir.path().join("clusters");
    ok(&db, &["cluster", "--window", "40", "--out", out.to_str().unwrap()]);
    let clusters = json(&out.join("clusters.json"));
    let signature = story["signature"].as_str().unwrap();
    let c = clusters["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c.to_string().contains(signature))
        .unwrap_or_else(|| panic!("no cluster carries {signature}"));
    let id = c["stable_id"].as_str().or(c["id"].as_str()).unwrap_or_else(|| panic!("{c}")).to_string();
    let (server, api, thread) = serve(&root);
    let pr = story["pull_request"]["reference"].as_str().unwrap();
    let out = ok(&db, &["triage", "link", &id, pr, "--by", "lead", "--api", &api]);
    assert!(out.contains(&format!("linked {pr} to pattern:default/{id}")), "{out}");
    // Linked after the fact, the fix counts from its link: merged, awaiting confirmation.
    assert!(out.contains("state: fix merged since"), "{out}");
    // 404 and bad references: exit 2, the 404 kept on the record.
    let o = run(&db, &["triage", "link", &id, "kubernetes/kubernetes#999999", "--by", "lead", "--api", &api]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("GitHub answered 404"), "{}", stderr(&o));
    let o = run(&db, &["triage", "link", &id, "not-a-ref", "--by", "lead", "--api", &api]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"not-a-ref\" is not a GitHub reference"), "{}", stderr(&o));
    let o = run(&db, &["triage", "records", "--state", "fixed"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--state \"fixed\": expected one of"), "{}", stderr(&o));
    server.unblock();
    thread.join().unwrap();
    // Listed as text and JSON; the timeline names the fix.
    let listed = ok(&db, &["triage", "records"]);
    assert!(listed.starts_with("fix merged"), "{listed}");
    assert!(listed.contains(&format!("fix {pr}; ")) && listed.contains("more run"), "the runs still needed: {listed}");
    let v: Value = serde_json::from_str(&ok(&db, &["--format", "json", "triage", "records"])).unwrap();
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["state"], "fix-merged");
    assert_eq!(recs[0]["links"].as_array().unwrap().len(), 2, "the fix and the 404, kept");
    let t = ok(&db, &["triage", "records", &id]);
    assert!(t.contains("kubernetes/kubernetes#999999 (unknown not-found)") || t.contains("not-found"), "{t}");
    assert!(t.contains("→ fix-merged") && t.contains("awaiting confirmation: chance of luck so far"), "{t}");
    // Offline refresh answers from the cache.
    let r: Value = serde_json::from_str(&ok(&db, &["--format", "json", "triage", "refresh", "--offline"])).unwrap();
    assert_eq!(r["records"], 1);
    assert!(r["unread"].as_array().unwrap().is_empty(), "{r}");
    // Offline, the search for mentions answers from the cache and says what it could not.
    let t =
        ok(&db, &["triage", "refresh", "--offline", "--mentions-in", "kubernetes/kubernetes", "--mentions-top", "2"]);
    assert!(t.contains("GitHub cross-references, offline, from the store's cache: "), "{t}");
    assert!(t.contains("  not looked at: \"") && t.contains("offline: no cached answer"), "{t}");
    let o = run(&db, &["triage", "refresh", "--offline", "--mentions-in", "not a repo"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("\"not a repo\" is not a GitHub repository"), "{}", stderr(&o));
    // Unlink, then the old invocation of `triage` still works and reports the records.
    let out = ok(&db, &["triage", "unlink", &id, "kubernetes/kubernetes#999999", "--by", "lead"]);
    assert!(out.starts_with("unlinked kubernetes/kubernetes#999999 from"), "{out}");
    let report = dir.path().join("report");
    let snapshot = root.join("k8s-metrics/failures-latest.json");
    ok(&db, &["triage", "--snapshot", snapshot.to_str().unwrap(), "--out", report.to_str().unwrap()]);
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("1 fix merged, awaiting confirmation."), "{}", &md[..md.len().min(3000)]);
    let row = md.lines().find(|l| l.starts_with("| 0.1 | ")).unwrap_or_default();
    assert!(row.contains(&format!("pattern:default/{id}")) && row.contains("⏳ MERGED"), "{row}");
}

/// `serve --api URL`: the dashboard's link form reads the reference from that GitHub
/// API (here a GitHub-shaped server on 127.0.0.1; GitHub Enterprise in a team), with
/// the token from the environment only; a configuration's `server.github_api` that is
/// not a URL is refused naming the key.
#[test]
fn the_dashboards_link_form_reads_references_from_the_api_serve_is_given() {
    use std::io::BufRead;
    let (dir, root, story, db) = works_world();
    let out = dir.path().join("clusters");
    ok(&db, &["cluster", "--window", "40", "--out", out.to_str().unwrap()]);
    let signature = story["signature"].as_str().unwrap();
    let clusters = json(&out.join("clusters.json"));
    let c = clusters["clusters"].as_array().unwrap().iter().find(|c| c.to_string().contains(signature)).unwrap();
    let id = c["stable_id"].as_str().or(c["id"].as_str()).unwrap().to_string();
    let (server, api, thread) = serve(&root);
    let mut child = common::bin()
        .args(["--db", db.to_str().unwrap(), "serve", "--addr", "127.0.0.1:0", "--no-mcp", "--api", &api])
        .env("CITRIAGE_WRITE_TOKEN", "form-token")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("serving on http://").and_then(|r| r.split_whitespace().next()).unwrap();
    let base = format!("http://{addr}");
    let pr = story["pull_request"]["reference"].as_str().unwrap();
    let body = format!("subject={id}&reference={}&by=alice", pr.replace('/', "%2F").replace('#', "%23"));
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut res = agent
        .post(format!("{base}/records/link"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", &base)
        .header("authorization", "Bearer form-token")
        .send(&body)
        .unwrap();
    let status = res.status().as_u16();
    let page = res.body_mut().read_to_string().unwrap_or_default();
    let _ = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let _ = child.wait();
    server.unblock();
    thread.join().unwrap();
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&format!("linked {pr}")), "{page}");
    let v: Value = serde_json::from_str(&ok(&db, &["--format", "json", "triage", "records", &id])).unwrap();
    let link = v["links"].as_array().unwrap().iter().find(|l| l["reference"] == pr).cloned().unwrap();
    assert_eq!((&link["ref_kind"], &link["ref_state"]), (&Value::from("pr"), &Value::from("merged")), "{link}");
    assert_eq!(link["merge_commit"], story["merge_commit"], "read from the API serve was given: {link}");
    assert_eq!(link["linked_by"], "alice");
    // A configuration whose server.github_api is not a URL: exit 2 naming the key.
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "[server]\ngithub_api = \"github.example.org\"\n").unwrap();
    let o = run(&db, &["config", "check", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("server.github_api"), "{}", stderr(&o));
}
