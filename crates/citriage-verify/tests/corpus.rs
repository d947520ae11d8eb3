//! The verifier against a corpus of reports: planted-fault reports whose every fault is
//! tagged on its line (`«fault:RULE»`, stripped before verification) and clean reports
//! written the way people write them. Every fault must be caught on its line by its
//! rule, and nothing else may be flagged, in the planted reports or the clean ones.
//!
//! The outside world is real: a GitHub-shaped REST API served on 127.0.0.1 from
//! `corpus/github.json` (issues, pulls, paginated timelines, commits, 404s and 422s),
//! git repositories built from `corpus/checkouts/` (a base commit, then a later one
//! that moves some lines), and a build ledger from `corpus/builds.txt`.
//!
//! A report may start with option lines: `%% repo: owner/name` (bare `#N`),
//! `%% prior: yes` (a prior report was given), `%% as-of: YYYY-MM-DD`. `@@name.base@@`
//! stands for the base commit of a checkout (SHAs of repositories the test builds).
//!
//! Run `cargo test -p citriage-verify --test corpus -- --nocapture` for the catch rate
//! per rule.

use citriage_github::{ClientConfig, GithubClient, MemoryCache, RefContext, RepoRef};
use citriage_verify::rules::{verify, KnownBuilds, Resolvers, Verification, VerifyOptions};
use citriage_verify::{render_json, render_markdown, Checkout, Checkouts, GitProgram};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

// ---- the GitHub API ------------------------------------------------------------------------

struct Api {
    server: Arc<tiny_http::Server>,
    base: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Api {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

/// The timeline of an object: its events, or labels added at creation plus its merge
/// and close.
fn events_of(o: &Value) -> Vec<Value> {
    let label = |name: &str| json!({"name": name, "color": "ededed", "description": null});
    let actor = json!({"login": "k8s-ci-robot", "type": "Bot"});
    let mut out = Vec::new();
    match o.get("events").and_then(Value::as_array) {
        Some(evs) => {
            for e in evs {
                let mut ev = json!({"event": e["event"], "created_at": e["at"], "actor": actor});
                if let Some(l) = e.get("label").and_then(Value::as_str) {
                    ev["label"] = label(l);
                }
                if e["event"] == "merged" || e["event"] == "closed" {
                    ev["commit_id"] = Value::Null;
                }
                out.push(ev);
            }
        }
        None => {
            let created = o["created"].clone();
            for l in o["labels"].as_array().into_iter().flatten() {
                out.push(json!({"event": "labeled", "created_at": created, "actor": actor, "label": label(l.as_str().unwrap_or(""))}));
            }
            if let Some(m) = s(o, "merged") {
                out.push(json!({"event": "merged", "created_at": m, "actor": actor, "commit_id": "0123456789abcdef0123456789abcdef01234567"}));
                out.push(json!({"event": "closed", "created_at": m, "actor": actor, "commit_id": null}));
            } else if let Some(c) = s(o, "closed") {
                out.push(json!({"event": "closed", "created_at": c, "actor": actor, "commit_id": null, "state_reason": o.get("reason")}));
            }
        }
    }
    out
}

fn updated_at(o: &Value) -> String {
    let mut times: Vec<String> = ["created", "merged", "closed"].iter().filter_map(|k| s(o, k)).collect();
    times.extend(events_of(o).iter().filter_map(|e| s(e, "created_at")));
    times.into_iter().max().unwrap_or_default()
}

fn issue_json(o: &Value) -> Value {
    let (owner, name) = o["repo"].as_str().unwrap().split_once('/').unwrap();
    let n = o["number"].as_u64().unwrap();
    let pr = o["kind"] == "pr";
    let closed = s(o, "merged").or_else(|| s(o, "closed"));
    let labels: Vec<Value> =
        o["labels"].as_array().into_iter().flatten().map(|l| json!({"name": l, "color": "ededed"})).collect();
    let mut v = json!({
        "url": format!("https://api.github.com/repos/{owner}/{name}/issues/{n}"),
        "repository_url": format!("https://api.github.com/repos/{owner}/{name}"),
        "html_url": format!("https://github.com/{owner}/{name}/{}/{n}", if pr { "pull" } else { "issues" }),
        "number": n,
        "title": o["title"],
        "user": {"login": "someone"},
        "labels": labels,
        "state": if closed.is_some() { "closed" } else { "open" },
        "state_reason": if closed.is_some() { o.get("reason").cloned().unwrap_or(json!("completed")) } else { Value::Null },
        "locked": false,
        "comments": 3,
        "created_at": o["created"],
        "updated_at": updated_at(o),
        "closed_at": closed,
    });
    if pr {
        v["draft"] = json!(o.get("draft").and_then(Value::as_bool).unwrap_or(false));
        v["pull_request"] = json!({
            "url": format!("https://api.github.com/repos/{owner}/{name}/pulls/{n}"),
            "html_url": format!("https://github.com/{owner}/{name}/pull/{n}"),
            "merged_at": o.get("merged"),
        });
    }
    v
}

fn pull_json(o: &Value) -> Value {
    let mut v = issue_json(o);
    let merged = o.get("merged").is_some_and(|m| !m.is_null());
    v["merged"] = json!(merged);
    v["merged_at"] = o.get("merged").cloned().unwrap_or(Value::Null);
    v["mergeable"] =
        if merged || v["state"] == "closed" { Value::Null } else { o.get("mergeable").cloned().unwrap_or(Value::Null) };
    v["head"] = json!({"sha": "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed", "ref": "topic"});
    v.as_object_mut().map(|m| m.remove("pull_request"));
    v
}

fn route(world: &Value, base: &str, url: &str) -> (u16, Vec<(String, String)>, String) {
    let not_found =
        (404, vec![], json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}).to_string());
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let objects = world["objects"].as_array().unwrap();
    let find = |repo: &str, n: &str| {
        let n: u64 = n.parse().ok()?;
        objects.iter().find(|o| o["repo"] == repo && o["number"].as_u64() == Some(n))
    };
    match parts.as_slice() {
        ["repos", o, r, "issues", n] => match find(&format!("{o}/{r}"), n) {
            Some(obj) => (200, vec![("ETag".into(), format!("\"{o}-{r}-{n}\""))], issue_json(obj).to_string()),
            None => not_found,
        },
        ["repos", o, r, "pulls", n] => match find(&format!("{o}/{r}"), n).filter(|x| x["kind"] == "pr") {
            Some(obj) => (200, vec![], pull_json(obj).to_string()),
            None => not_found,
        },
        ["repos", o, r, "issues", n, "timeline"] => match find(&format!("{o}/{r}"), n) {
            Some(obj) => {
                // Three events a page, linked like GitHub's pagination.
                let page: usize =
                    query.split('&').find_map(|kv| kv.strip_prefix("page=")).and_then(|p| p.parse().ok()).unwrap_or(1);
                let evs = events_of(obj);
                let chunk: Vec<Value> = evs.iter().skip((page - 1) * 3).take(3).cloned().collect();
                let mut headers = vec![];
                if evs.len() > page * 3 {
                    headers.push((
                        "Link".to_string(),
                        format!(
                            "<{base}/repos/{o}/{r}/issues/{n}/timeline?per_page=100&page={}>; rel=\"next\"",
                            page + 1
                        ),
                    ));
                }
                (200, headers, Value::Array(chunk).to_string())
            }
            None => not_found,
        },
        ["repos", o, r, "commits", sha] => {
            let repo = format!("{o}/{r}");
            if world["commits_unavailable"].as_array().unwrap().iter().any(|x| x == &repo) {
                return (503, vec![], json!({"message": "Service Unavailable"}).to_string());
            }
            let hit = world["commits"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["repo"] == repo && sha.len() >= 7 && c["sha"].as_str().unwrap().starts_with(sha));
            match hit {
                Some(c) => (
                    200,
                    vec![],
                    json!({
                        "sha": c["sha"],
                        "html_url": format!("https://github.com/{repo}/commit/{}", c["sha"].as_str().unwrap()),
                        "commit": {"author": {"name": c["author"], "date": c["date"]}, "committer": {"name": c["author"], "date": c["date"]}, "message": c["message"]},
                    })
                    .to_string(),
                ),
                None => (
                    422,
                    vec![],
                    json!({"message": format!("No commit found for SHA: {sha}"), "documentation_url": "https://docs.github.com/rest/commits/commits#get-a-commit"}).to_string(),
                ),
            }
        }
        _ => not_found,
    }
}

fn start_api(world: Value) -> Api {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let port = server.server_addr().to_ip().expect("ip").port();
    let base = format!("http://127.0.0.1:{port}");
    let (srv, b) = (server.clone(), base.clone());
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            let (status, headers, body) = route(&world, &b, rq.url());
            let mut resp = tiny_http::Response::from_data(body.into_bytes()).with_status_code(status);
            resp = resp.with_header(tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap());
            for (k, v) in headers {
                resp = resp.with_header(tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).unwrap());
            }
            let _ = rq.respond(resp);
        }
    });
    Api { server, base, thread: Some(thread) }
}

// ---- checkouts ---------------------------------------------------------------------------

fn git(dir: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "user.name=Corpus",
            "-c",
            "user.email=corpus@example.com",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A repository from `checkouts/NAME` committed on 2026-04-20, then `checkouts/NAME.next`
/// on top on 2026-05-11 (after the reports' date). Returns the base commit.
fn make_checkout(root: &Path, name: &str) -> String {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"], "2026-04-20T12:00:00Z");
    copy_tree(&corpus().join("checkouts").join(name), &dir);
    git(&dir, &["add", "-A"], "2026-04-20T12:00:00Z");
    git(&dir, &["commit", "-q", "-m", "base"], "2026-04-20T12:00:00+00:00");
    let base = git(&dir, &["rev-parse", "HEAD"], "2026-04-20T12:00:00Z");
    let next = corpus().join("checkouts").join(format!("{name}.next"));
    if next.is_dir() {
        copy_tree(&next, &dir);
        git(&dir, &["add", "-A"], "2026-05-11T12:00:00Z");
        git(&dir, &["commit", "-q", "-m", "next"], "2026-05-11T12:00:00+00:00");
    }
    base
}

// ---- reports -----------------------------------------------------------------------------

struct Case {
    name: String,
    planted: bool,
    text: String,
    /// (line, rule, label) of every planted fault.
    faults: Vec<(usize, String, String)>,
    opts: VerifyOptions,
}

fn load_case(path: &Path, planted: bool, subs: &BTreeMap<String, String>) -> Case {
    let raw = std::fs::read_to_string(path).unwrap();
    let mut opts = VerifyOptions::default();
    let mut lines: Vec<String> = Vec::new();
    let mut faults = Vec::new();
    let mut header = true;
    for l in raw.lines() {
        if header {
            if let Some(o) = l.strip_prefix("%% ") {
                let (k, v) = o.split_once(':').unwrap();
                match (k.trim(), v.trim()) {
                    ("repo", r) => opts.refs = RefContext::kubernetes().with_default(RepoRef::parse(r).unwrap()),
                    ("prior", "yes") => opts.prior_report = true,
                    ("as-of", d) => opts.as_of = citriage_model::Day::parse(d),
                    other => panic!("{}: unknown option {other:?}", path.display()),
                }
                continue;
            }
            header = false;
        }
        let mut line = l.to_string();
        for (k, v) in subs {
            line = line.replace(k, v);
        }
        while let Some(a) = line.find("«fault:") {
            let b = line[a..].find('»').map(|b| a + b).expect("closed tag");
            let tag = line[a + "«fault:".len()..b].to_string();
            let (rule, label) =
                tag.split_once('/').map(|(r, l)| (r.to_string(), l.to_string())).unwrap_or((tag.clone(), tag.clone()));
            faults.push((lines.len() + 1, rule, label));
            line.replace_range(a..b + '»'.len_utf8(), "");
        }
        lines.push(line.trim_end().to_string());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    assert_eq!(planted, !faults.is_empty(), "{}: planted reports carry faults, clean ones none", path.display());
    Case { name: path.file_name().unwrap().to_string_lossy().into_owned(), planted, text, faults, opts }
}

fn cases(subs: &BTreeMap<String, String>) -> Vec<Case> {
    let mut out = Vec::new();
    for (dir, planted) in [("planted", true), ("clean", false)] {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(corpus().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            out.push(load_case(&f, planted, subs));
        }
    }
    out
}

fn ledger() -> KnownBuilds {
    let text = std::fs::read_to_string(corpus().join("builds.txt")).unwrap();
    let mut k = KnownBuilds::default();
    k.covered.insert("kubernetes-ci-logs/logs".into());
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let f: Vec<&str> = l.split_whitespace().collect();
        k = k.with(f[0], f[1], f.get(2).copied());
    }
    k
}

struct World {
    _tmp: tempfile::TempDir,
    _api: Api,
    client: GithubClient,
    checkouts: Checkouts,
    builds: KnownBuilds,
    subs: BTreeMap<String, String>,
}

fn world() -> Option<World> {
    let Ok(git_bin) = GitProgram::locate() else {
        eprintln!("skipping: git is not available");
        return None;
    };
    let world: Value = serde_json::from_str(&std::fs::read_to_string(corpus().join("github.json")).unwrap()).unwrap();
    let api = start_api(world);
    let client = GithubClient::new(
        ClientConfig {
            api_base: api.base.clone(),
            max_retries: 0,
            timeout: Duration::from_secs(10),
            ..Default::default()
        },
        Box::new(MemoryCache::new()),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut checkouts = Checkouts::new();
    let mut subs = BTreeMap::new();
    for (name, repo, extra) in
        [("kubernetes", "kubernetes/kubernetes", &["k8s", "k/k"][..]), ("test-infra", "kubernetes/test-infra", &[][..])]
    {
        let base = make_checkout(tmp.path(), name);
        subs.insert(format!("@@{name}.base@@"), base[..11].to_string());
        checkouts.add(Checkout::open(name, tmp.path().join(name), Some(git_bin.clone())).unwrap(), repo, extra);
    }
    Some(World { _tmp: tmp, _api: api, client, checkouts, builds: ledger(), subs })
}

fn run(w: &World, c: &Case) -> Verification {
    verify(&c.text, &Resolvers { refs: &w.client, code: &w.checkouts, builds: &w.builds }, &c.opts)
}

#[test]
fn every_planted_fault_is_caught_on_its_line_and_clean_reports_have_no_findings() {
    let Some(w) = world() else { return };
    let cases = cases(&w.subs);
    let planted_total: usize = cases.iter().map(|c| c.faults.len()).sum();
    // rule → (planted, caught); false findings by rule.
    let mut per_rule: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut false_findings: Vec<String> = Vec::new();
    let mut missed: Vec<String> = Vec::new();
    let mut labels: BTreeSet<String> = BTreeSet::new();
    for c in &cases {
        let v = run(&w, c);
        let got: BTreeSet<(usize, String)> = v.findings.iter().map(|f| (f.line, f.rule_id.clone())).collect();
        let want: BTreeSet<(usize, String)> = c.faults.iter().map(|(l, r, _)| (*l, r.clone())).collect();
        for (l, r, label) in &c.faults {
            labels.insert(format!("{r}/{label}"));
            let e = per_rule.entry(r.clone()).or_default();
            e.0 += 1;
            if got.contains(&(*l, r.clone())) {
                e.1 += 1;
            } else {
                missed.push(format!(
                    "{}:{l} {r} ({label}) — line: {}",
                    c.name,
                    c.text.lines().nth(l - 1).unwrap_or("")
                ));
            }
        }
        for f in &v.findings {
            if !want.contains(&(f.line, f.rule_id.clone())) {
                false_findings.push(format!("{}:{} {} — {}", c.name, f.line, f.rule_id, f.message));
            }
        }
        eprintln!(
            "{:<40} {:>3} fault(s), {:>3} finding(s), claims: {} verified / {} false / {} unchecked, {} not checked",
            c.name,
            c.faults.len(),
            v.findings.len(),
            v.stats.claims_verified,
            v.stats.claims_false,
            v.stats.claims_unchecked,
            v.unchecked.len()
        );
    }
    eprintln!("\ncatch rate per rule:");
    for (r, (n, k)) in &per_rule {
        eprintln!("  {r:<22} {k:>3}/{n:<3} {:>5.1}%", 100.0 * *k as f64 / (*n).max(1) as f64);
    }
    let caught: usize = per_rule.values().map(|x| x.1).sum();
    eprintln!(
        "  {:<22} {caught:>3}/{planted_total:<3} {:>5.1}%   ({} kinds of fault)",
        "all",
        100.0 * caught as f64 / planted_total as f64,
        labels.len()
    );
    eprintln!("false findings: {} (planted and clean reports)", false_findings.len());
    // `CORPUS_CLAIMS=name.md` prints the claims read in one report (for writing reports).
    if let Some(name) = std::env::var_os("CORPUS_CLAIMS") {
        for c in cases.iter().filter(|c| std::ffi::OsStr::new(&c.name) == name) {
            for x in run(&w, c).claims {
                eprintln!(
                    "{}:{} [{}] {} {} ({:?}) — {:?} {}",
                    c.name, x.line, x.kind, x.subject, x.claim, x.words, x.verdict, x.detail
                );
            }
        }
    }
    if std::env::var_os("CORPUS_UNCHECKED").is_some() {
        for c in &cases {
            for u in run(&w, c).unchecked {
                eprintln!("{}:{} {} {} — {}", c.name, u.line, u.kind, u.what, u.why);
            }
        }
    }
    assert!(missed.is_empty(), "missed faults:\n{}", missed.join("\n"));
    assert!(false_findings.is_empty(), "false findings:\n{}", false_findings.join("\n"));
    assert!(cases.iter().filter(|c| !c.planted).count() >= 6, "at least 6 clean reports");
    assert!(planted_total >= 60, "at least 60 planted faults, got {planted_total}");
}

#[test]
fn json_lists_every_claim_with_its_verdict_and_evidence() {
    let Some(w) = world() else { return };
    let cases = cases(&w.subs);
    let c = cases.iter().find(|c| c.name == "state-claims.md").expect("state-claims.md");
    let v = run(&w, c);
    let js = render_json(&v, &c.name, false);
    let claims = js["claims"].as_array().unwrap();
    for verdict in ["verified", "false", "unchecked"] {
        assert!(claims.iter().any(|x| x["verdict"] == verdict), "no {verdict} claim");
    }
    // Every false claim cites its evidence and is a finding on its line.
    for x in claims.iter().filter(|x| x["verdict"] == "false" && x["kind"].as_str().unwrap().starts_with("ref-")) {
        assert!(!x["evidence"].as_array().unwrap().is_empty(), "{x}");
        let line = x["line"].as_u64().unwrap();
        assert!(js["findings"].as_array().unwrap().iter().any(|f| f["line"].as_u64() == Some(line)), "{x}");
    }
    assert_eq!(
        js["severity_counts"]["error"].as_u64().unwrap() as usize,
        v.findings.iter().filter(|f| f.severity == citriage_verify::Severity::Error).count()
    );
    // The text output groups findings by severity, errors first.
    let md = render_markdown(&v, &c.name);
    let errors = md.find("## Errors").expect("errors section");
    if let Some(warnings) = md.find("## Warnings") {
        assert!(errors < warnings);
    }
    // Deterministic.
    assert_eq!(render_json(&run(&w, c), &c.name, false), js);
}
