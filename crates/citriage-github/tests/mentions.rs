//! Cross-references of triage records against a GitHub-shaped server on 127.0.0.1
//! that answers from a synthetic world's GitHub files as of a settable instant (an
//! issue does not exist before it was opened; a pull request is open until it
//! merged): the issues and pull requests naming each planted pattern are found by its
//! test, failure text or job, and only those; a pull request reads merged with its
//! merge time, commit and base branch once merged; a closed unmerged pull request and
//! a number that does not exist read as such; offline, the same answers come from the
//! cache without a request, and what was never read is said.

use citriage_github::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn time(v: &Value) -> Option<i64> {
    v.as_str().and_then(citriage_model::time::parse_rfc3339)
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An issue or pull request object as it was at `now`; `None` before it was opened.
fn as_of(mut v: Value, now: i64) -> Option<Value> {
    if time(&v["created_at"])? > now {
        return None;
    }
    if time(&v["merged_at"]).is_some_and(|t| t > now) {
        v["merged"] = Value::Bool(false);
        v["merged_at"] = Value::Null;
        v["merge_commit_sha"] = Value::Null;
    }
    if time(&v["pull_request"]["merged_at"]).is_some_and(|t| t > now) {
        v["pull_request"]["merged_at"] = Value::Null;
    }
    if time(&v["closed_at"]).is_some_and(|t| t > now) {
        v["state"] = "open".into();
        v["state_reason"] = Value::Null;
        v["closed_at"] = Value::Null;
    }
    Some(v)
}

struct Server {
    server: Arc<tiny_http::Server>,
    base: String,
    now: Arc<AtomicI64>,
    requests: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `/repos/o/r/{issues,pulls}/N` from `github/api/repos/o/r/...`, and
/// `/search/issues?q="phrase" repo:o/r` matching the phrase in titles and bodies.
fn route(root: &Path, url: &str, now: i64) -> (u16, String) {
    let not_found = (404, r#"{"message":"Not Found"}"#.to_string());
    if let Some(q) = url.strip_prefix("/search/issues?q=") {
        let q = decode(q.split('&').next().unwrap_or(""));
        let phrase = q.split('"').nth(1).unwrap_or("").to_lowercase();
        let repos: Vec<&str> = q.split_whitespace().filter_map(|w| w.strip_prefix("repo:")).collect();
        let mut items = Vec::new();
        for repo in &repos {
            let dir = root.join("github/api/repos").join(repo).join("issues");
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
            files.sort();
            for f in files {
                let Some(mut v) = as_of(json(&f), now) else { continue };
                let text = format!("{} {}", v["title"].as_str().unwrap_or(""), v["body"].as_str().unwrap_or(""));
                if !phrase.is_empty() && text.to_lowercase().contains(&phrase) {
                    v["repository_url"] = format!("https://api.github.com/repos/{repo}").into();
                    items.push(v);
                }
            }
        }
        let body = serde_json::json!({"total_count": items.len(), "incomplete_results": false, "items": items});
        return (200, body.to_string());
    }
    let path = url.split('?').next().unwrap_or(url);
    let Some(rest) = path.strip_prefix("/repos/") else { return not_found };
    let file = root.join("github/api/repos").join(rest);
    if !file.is_file() {
        return not_found;
    }
    match as_of(json(&file), now) {
        Some(v) => (200, v.to_string()),
        None => not_found,
    }
}

fn start(root: &Path) -> Server {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().unwrap().port());
    let now = Arc::new(AtomicI64::new(0));
    let requests = Arc::new(AtomicUsize::new(0));
    let (srv, root, clock, count) = (server.clone(), root.to_path_buf(), now.clone(), requests.clone());
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            count.fetch_add(1, Ordering::SeqCst);
            let (status, body) = route(&root, rq.url(), clock.load(Ordering::SeqCst));
            let resp = tiny_http::Response::from_data(body.into_bytes()).with_status_code(status);
            let _ = rq.respond(resp);
        }
    });
    Server { server, base, now, requests, thread: Some(thread) }
}

fn client(base: &str, cache: Arc<MemoryCache>, offline: bool) -> GithubClient {
    let cfg = ClientConfig { api_base: base.into(), offline, timeout: Duration::from_secs(10), ..Default::default() };
    GithubClient::new(cfg, Box::new(cache))
}

fn k8s() -> Vec<RepoRef> {
    vec![RepoRef::new("kubernetes", "kubernetes")]
}

fn refs(m: &Mentions) -> Vec<String> {
    m.found.iter().map(|f| f.reference.to_string()).collect()
}

#[test]
fn mentions_of_planted_patterns_are_found_linked_states_read_and_answered_offline() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 3;
    p.payloads = 0;
    p.fix_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    // A pull request closed without merging, beside the world's.
    std::fs::write(
        root.join("github/api/repos/kubernetes/kubernetes/issues/999001"),
        serde_json::json!({"number": 999001, "title": "Try to fix the rollover", "state": "closed", "body": "",
            "created_at": "2026-01-01T00:00:00Z", "closed_at": "2026-01-02T00:00:00Z", "labels": [],
            "pull_request": {"url": "x", "merged_at": null}})
        .to_string(),
    )
    .unwrap();
    let truth = json(&root.join("truth.json"));
    let srv = start(&root);
    let cache = Arc::new(MemoryCache::new());
    let gh = client(&srv.base, cache.clone(), false);
    let end = time(&truth["world"]["world_end"]).unwrap();
    for story in truth["fixes"].as_array().unwrap() {
        let kind = story["story"].as_str().unwrap();
        let issue = story["issue"]["reference"].as_str().unwrap().to_string();
        let pr = story["pull_request"]["reference"].as_str().unwrap().to_string();
        let opened = time(&story["issue"]["opened"]).unwrap();
        let pr_opened = time(&story["pull_request"]["opened"]).unwrap();
        let merged = time(&story["merged_at"]).unwrap();
        let terms = Terms {
            stable_id: None,
            tests: vec![story["test"].as_str().unwrap().into()],
            failure_text: Some(story["signature"].as_str().unwrap().into()),
            jobs: story["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().into()).collect(),
        };
        // Before the issue opened: nothing names the pattern.
        srv.now.store(opened - 60, Ordering::SeqCst);
        let m = search_mentions(&gh, &k8s(), &terms, 50);
        assert!(m.found.is_empty() && m.unanswered.is_empty(), "{kind}: {m:?}");
        // After the pull request opened: the issue (test, failure text, jobs) and the
        // pull request (test and failure text), nothing of the other stories.
        srv.now.store(pr_opened + 60, Ordering::SeqCst);
        let m = search_mentions(&gh, &k8s(), &terms, 50);
        let mut want = vec![issue.clone(), pr.clone()];
        want.sort();
        assert_eq!(refs(&m), want, "{kind}");
        for f in &m.found {
            assert!(f.links(), "{kind}: {f:?}");
            let kinds: Vec<TermKind> = f.matched.iter().map(|(k, _)| *k).collect();
            assert!(kinds.contains(&TermKind::Test) && kinds.contains(&TermKind::FailureText), "{kind}: {f:?}");
            assert_eq!(f.is_pr, f.reference.to_string() == pr, "{kind}");
        }
        let issue_hit = m.found.iter().find(|f| f.reference.to_string() == issue).unwrap();
        assert!(issue_hit.matched.iter().any(|(k, _)| *k == TermKind::Job), "{kind}: the issue names the jobs");
        // The pull request's state before and after it merged.
        let r = IssueRef::parse(&pr).unwrap();
        let s = summarize(&gh, &r);
        assert_eq!((s.kind, s.state, s.merged_at), ("pr", "open", None), "{kind}");
        srv.now.store(merged + 60, Ordering::SeqCst);
        let s = summarize(&gh, &r);
        assert_eq!((s.kind, s.state, s.merged_at), ("pr", "merged", Some(merged)), "{kind}");
        assert_eq!(s.merge_commit.as_deref(), story["merge_commit"].as_str(), "{kind}");
        assert_eq!(s.base.as_deref(), Some("master"), "{kind}");
        assert!(s.evidence.is_some() && s.describe().contains("into master"), "{kind}: {}", s.describe());
        let i = summarize(&gh, &IssueRef::parse(&issue).unwrap());
        assert_eq!((i.kind, i.state), ("issue", "closed"), "{kind}: closed by the merge");
    }
    // A number that does not exist, a pull request closed without merging.
    srv.now.store(end, Ordering::SeqCst);
    let gone = summarize(&gh, &IssueRef::parse("kubernetes/kubernetes#999999").unwrap());
    assert_eq!(gone.state, "not-found");
    assert!(gone.describe().contains("404") && gone.evidence.is_some(), "{}", gone.describe());
    let closed = summarize(&gh, &IssueRef::parse("kubernetes/kubernetes#999001").unwrap());
    assert_eq!((closed.kind, closed.state, closed.merged_at), ("pr", "closed-unmerged", None));

    // Offline with the same cache: the same answers, no request; what was never read
    // is said, not guessed.
    let before = srv.requests.load(Ordering::SeqCst);
    let off = client("https://api.github.com", cache.clone(), true);
    let story = &truth["fixes"][0];
    let terms = Terms {
        stable_id: None,
        tests: vec![story["test"].as_str().unwrap().into()],
        failure_text: Some(story["signature"].as_str().unwrap().into()),
        jobs: Vec::new(),
    };
    let m = search_mentions(&off, &k8s(), &terms, 50);
    assert_eq!(m.found.len(), 2, "{m:?}");
    assert!(m.unanswered.is_empty(), "{m:?}");
    let s = summarize(&off, &IssueRef::parse(story["pull_request"]["reference"].as_str().unwrap()).unwrap());
    assert_eq!(s.state, "merged");
    let never = Terms { stable_id: Some("0123456789abcdef".into()), ..Terms::default() };
    let m = search_mentions(&off, &k8s(), &never, 50);
    assert!(m.found.is_empty());
    assert_eq!(m.unanswered.len(), 1);
    assert!(m.unanswered[0].1.contains("offline"), "{m:?}");
    let unknown = summarize(&off, &IssueRef::parse("kubernetes/kubernetes#424242").unwrap());
    assert_eq!(unknown.state, "unknown");
    assert!(unknown.why.as_deref().unwrap_or("").contains("offline"), "{unknown:?}");
    assert_eq!(srv.requests.load(Ordering::SeqCst), before, "offline sends nothing");
}
