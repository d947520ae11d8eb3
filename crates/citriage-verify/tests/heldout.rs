//! A held-out evaluation of the verifier: reports written from the runbook, the
//! README and `citriage verify --help` alone, without reading the rules or the corpus
//! in `tests/corpus/`. Each planted report (`heldout/planted/NAME.md`) has a clean twin
//! (`heldout/clean/NAME.md`) that says the same things truthfully, so every false
//! claim has a true sentence of the same shape next to it.
//!
//! Faults are tagged on their line as `«fault:RULE/label»` (removed before checking).
//! A fault about the whole document (no TL;DR) is tagged `…@doc` and is caught by a
//! finding of its rule on any line; a fault about a section (a pattern with no causal
//! chain) is tagged `…@section` and is caught by a finding of its rule anywhere in that
//! section. A fault whose target the sentence leaves open (a status cell of a row
//! whose reference is the object of its action: `re-do #5 | merged`) is tagged
//! `…@ambiguous`: flagged on its line, or listed there as not checked, both count;
//! passing it in silence does not. Everything else must be caught on its own line by
//! its rule. A line may
//! also carry `«also:RULE»`: a finding of RULE there is right too (a false sentence
//! that is false in a second way) but not required.
//!
//! The world is real: a GitHub-shaped REST API on 127.0.0.1 serving
//! `heldout/github.json` (issues, pulls, paginated timelines, commits, 404s, 422s),
//! git repositories built from `heldout/checkouts/NAME` (committed 2026-04-20), then
//! `NAME.mid` (2026-05-05, before the reports) and `NAME.next` (2026-05-20, after
//! them), and a build ledger (`heldout/builds.txt`) covering `kubernetes-ci-logs/logs`.
//! `@@NAME.base@@` / `@@NAME.mid@@` stand for those commits' short SHAs.
//!
//! Run `cargo test -p citriage-verify --test heldout -- --nocapture` for the figures:
//! faults caught per kind and false findings on the clean twins.

use citriage_github::{ClientConfig, GithubClient, MemoryCache, RefContext, RepoRef};
use citriage_verify::rules::{verify, KnownBuilds, Resolvers, Verification, VerifyOptions};
use citriage_verify::{Checkout, Checkouts, GitProgram};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/heldout")
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

/// An object's timeline: its listed events, or its labels added at creation, then its
/// merge and close.
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
                out.push(ev);
            }
        }
        None => {
            for l in o["labels"].as_array().into_iter().flatten() {
                out.push(json!({"event": "labeled", "created_at": o["created"], "actor": actor, "label": label(l.as_str().unwrap_or(""))}));
            }
        }
    }
    if let Some(m) = s(o, "merged") {
        out.push(json!({"event": "merged", "created_at": m, "actor": actor, "commit_id": "89abcdef0123456789abcdef0123456789abcdef"}));
        out.push(json!({"event": "closed", "created_at": m, "actor": actor, "commit_id": null}));
    } else if let Some(c) = s(o, "closed") {
        out.push(json!({"event": "closed", "created_at": c, "actor": actor, "commit_id": null, "state_reason": o.get("reason")}));
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
        "comments": 5,
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
    v["head"] = json!({"sha": "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00", "ref": "topic"});
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
        objects.iter().find(|o| {
            o["repo"].as_str().is_some_and(|r| r.eq_ignore_ascii_case(repo)) && o["number"].as_u64() == Some(n)
        })
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
                // Two events a page, linked like GitHub's pagination.
                let page: usize =
                    query.split('&').find_map(|kv| kv.strip_prefix("page=")).and_then(|p| p.parse().ok()).unwrap_or(1);
                let evs = events_of(obj);
                let chunk: Vec<Value> = evs.iter().skip((page - 1) * 2).take(2).cloned().collect();
                let mut headers = vec![];
                if evs.len() > page * 2 {
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
            let hit = world["commits"].as_array().unwrap().iter().find(|c| {
                c["repo"].as_str().is_some_and(|x| x.eq_ignore_ascii_case(&repo))
                    && sha.len() >= 7
                    && c["sha"].as_str().unwrap().starts_with(sha)
            });
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
            "user.name=Heldout",
            "-c",
            "user.email=heldout@example.com",
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

/// A repository from `checkouts/NAME` (2026-04-20), then `NAME.mid` (2026-05-05) and
/// `NAME.next` (2026-05-20) on top when present. Returns (stage, short SHA) pairs.
fn make_checkout(dir: &Path, name: &str) -> Vec<(&'static str, String)> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"], "2026-04-20T12:00:00Z");
    let mut out = Vec::new();
    for (stage, suffix, date, msg) in [
        ("base", "", "2026-04-20T12:00:00+00:00", "Import the tree"),
        ("mid", ".mid", "2026-05-05T12:00:00+00:00", "Fix: Use Get-Volume for Windows snapshot size verification"),
        ("next", ".next", "2026-05-20T12:00:00+00:00", "Reorder imports and job stanzas"),
    ] {
        let src = root().join("checkouts").join(format!("{name}{suffix}"));
        if !src.is_dir() {
            continue;
        }
        copy_tree(&src, dir);
        git(dir, &["add", "-A"], date);
        git(dir, &["commit", "-q", "-m", msg], date);
        out.push((stage, git(dir, &["rev-parse", "--short=11", "HEAD"], date)));
    }
    out
}

// ---- reports -----------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scope {
    Line,
    Section,
    Doc,
    Ambiguous,
}

struct Fault {
    line: usize,
    rule: String,
    label: String,
    scope: Scope,
}

struct Case {
    name: String,
    planted: bool,
    text: String,
    faults: Vec<Fault>,
    /// (line, rule) findings that are right but not required.
    also: BTreeSet<(usize, String)>,
    opts: VerifyOptions,
}

fn load_case(path: &Path, planted: bool, subs: &BTreeMap<String, String>) -> Case {
    let raw = std::fs::read_to_string(path).unwrap();
    let mut opts = VerifyOptions::default();
    let mut lines: Vec<String> = Vec::new();
    let mut faults = Vec::new();
    let mut also = BTreeSet::new();
    let mut header = true;
    for l in raw.lines() {
        if header {
            if let Some(o) = l.strip_prefix("%% ") {
                let (k, v) = o.split_once(':').unwrap();
                match (k.trim(), v.trim()) {
                    ("repo", r) => opts.refs = RefContext::kubernetes().with_default(RepoRef::parse(r).unwrap()),
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
        assert!(!line.contains("@@"), "{}: unknown substitution in {line:?}", path.display());
        while let Some(a) = line.find("«fault:") {
            let b = line[a..].find('»').map(|b| a + b).expect("closed tag");
            let tag = line[a + "«fault:".len()..b].to_string();
            let (rule, rest) = tag.split_once('/').expect("«fault:RULE/label»");
            let (label, scope) = match rest.rsplit_once('@') {
                Some((l, "doc")) => (l, Scope::Doc),
                Some((l, "section")) => (l, Scope::Section),
                Some((l, "ambiguous")) => (l, Scope::Ambiguous),
                Some((_, other)) => panic!("{}: unknown scope @{other}", path.display()),
                None => (rest, Scope::Line),
            };
            faults.push(Fault { line: lines.len() + 1, rule: rule.into(), label: label.into(), scope });
            line.replace_range(a..b + '»'.len_utf8(), "");
        }
        while let Some(a) = line.find("«also:") {
            let b = line[a..].find('»').map(|b| a + b).expect("closed tag");
            also.insert((lines.len() + 1, line[a + "«also:".len()..b].to_string()));
            line.replace_range(a..b + '»'.len_utf8(), "");
        }
        lines.push(line.trim_end().to_string());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    assert_eq!(planted, !faults.is_empty(), "{}: planted reports carry faults, clean ones none", path.display());
    Case { name: path.file_name().unwrap().to_string_lossy().into_owned(), planted, text, faults, also, opts }
}

/// The lines (1-based, inclusive) of the section holding `line`: from the heading
/// before it to the line before the next heading. A heading is a Markdown heading, or
/// in text copied from a rendered page a `Pattern X — …` line or a numbered title.
fn section_of(text: &str, line: usize) -> (usize, usize) {
    let heading = |l: &str| {
        let t = l.trim_start();
        t.starts_with('#')
            || t.starts_with("Pattern ")
            || (t.split_once(". ").is_some_and(|(n, rest)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && rest.starts_with(char::is_uppercase)
            }) && !l.starts_with(' '))
    };
    let lines: Vec<&str> = text.lines().collect();
    let start = (1..=line).rev().find(|&n| heading(lines[n - 1])).unwrap_or(1);
    let end = (line + 1..=lines.len()).find(|&n| heading(lines[n - 1])).map(|n| n - 1).unwrap_or(lines.len());
    (start, end)
}

fn cases(subs: &BTreeMap<String, String>) -> Vec<Case> {
    let mut out = Vec::new();
    for (dir, planted) in [("planted", true), ("clean", false)] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            out.push(load_case(&f, planted, subs));
        }
    }
    out
}

fn ledger() -> KnownBuilds {
    let text = std::fs::read_to_string(root().join("builds.txt")).unwrap();
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
    let world: Value = serde_json::from_str(&std::fs::read_to_string(root().join("github.json")).unwrap()).unwrap();
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
        let dir = tmp.path().join(name);
        for (stage, sha) in make_checkout(&dir, name) {
            subs.insert(format!("@@{name}.{stage}@@"), sha);
        }
        checkouts.add(Checkout::open(name, dir, Some(git_bin.clone())).unwrap(), repo, extra);
    }
    Some(World { _tmp: tmp, _api: api, client, checkouts, builds: ledger(), subs })
}

fn run(w: &World, c: &Case) -> Verification {
    verify(&c.text, &Resolvers { refs: &w.client, code: &w.checkouts, builds: &w.builds }, &c.opts)
}

#[derive(Default)]
struct Tally {
    planted: usize,
    caught: usize,
    /// Flagged on its line (or in its scope), but by another rule.
    other_rule: usize,
    /// Ambiguous, and listed as not checked on its line.
    unchecked: usize,
}

#[test]
fn held_out_reports_every_fault_caught_and_no_true_sentence_accused() {
    let Some(w) = world() else { return };
    let cases = cases(&w.subs);
    let mut per_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut false_clean = Vec::new();
    let mut false_planted = Vec::new();
    for c in &cases {
        let v = run(&w, c);
        let mut explained: BTreeSet<usize> = BTreeSet::new();
        for f in &c.faults {
            let (lo, hi) = match f.scope {
                Scope::Line | Scope::Ambiguous => (f.line, f.line),
                Scope::Section => section_of(&c.text, f.line),
                Scope::Doc => (0, usize::MAX),
            };
            let t = per_kind.entry(f.rule.clone()).or_default();
            t.planted += 1;
            let hit = v.findings.iter().position(|x| x.rule_id == f.rule && (lo..=hi).contains(&x.line));
            let listed =
                f.scope == Scope::Ambiguous && v.unchecked.iter().any(|u| u.line == f.line && u.kind == "claim");
            match hit {
                Some(k) => {
                    t.caught += 1;
                    explained.insert(k);
                }
                None if listed => t.unchecked += 1,
                None => {
                    if v.findings.iter().any(|x| (lo..=hi).contains(&x.line)) {
                        t.other_rule += 1;
                    }
                    let found: Vec<String> =
                        v.findings.iter().filter(|x| (lo..=hi).contains(&x.line)).map(|x| x.rule_id.clone()).collect();
                    missed.push(format!(
                        "{}:{} {} ({}){} — {}",
                        c.name,
                        f.line,
                        f.rule,
                        f.label,
                        if found.is_empty() { String::new() } else { format!(" [flagged as {}]", found.join(", ")) },
                        c.text.lines().nth(f.line - 1).unwrap_or("").trim()
                    ));
                }
            }
        }
        // A finding no fault explains: on a line-scoped fault's line by its rule counts
        // as explained too (one fault may be reported more than once).
        for (k, x) in v.findings.iter().enumerate() {
            let tagged = c.faults.iter().any(|f| {
                f.rule == x.rule_id
                    && match f.scope {
                        Scope::Line | Scope::Ambiguous => f.line == x.line,
                        Scope::Section => {
                            let (lo, hi) = section_of(&c.text, f.line);
                            (lo..=hi).contains(&x.line)
                        }
                        Scope::Doc => true,
                    }
            });
            if explained.contains(&k) || tagged || c.also.contains(&(x.line, x.rule_id.clone())) {
                continue;
            }
            let msg = format!(
                "{}:{} {} — {} — line: {}",
                c.name,
                x.line,
                x.rule_id,
                x.message,
                c.text.lines().nth(x.line.saturating_sub(1)).unwrap_or("").trim()
            );
            if c.planted {
                false_planted.push(msg);
            } else {
                false_clean.push(msg);
            }
        }
        eprintln!(
            "{:<8} {:<24} {:>3} fault(s), {:>3} finding(s), claims: {} verified / {} false / {} unchecked, {} not checked",
            if c.planted { "planted" } else { "clean" },
            c.name,
            c.faults.len(),
            v.findings.len(),
            v.stats.claims_verified,
            v.stats.claims_false,
            v.stats.claims_unchecked,
            v.unchecked.len()
        );
    }
    let planted_total: usize = per_kind.values().map(|t| t.planted).sum();
    let caught: usize = per_kind.values().map(|t| t.caught).sum();
    let listed: usize = per_kind.values().map(|t| t.unchecked).sum();
    eprintln!("\nheld-out faults caught on their line, per kind:");
    for (k, t) in &per_kind {
        eprintln!(
            "  {k:<16} {:>3}/{:<3} {:>5.1}%{}{}",
            t.caught,
            t.planted,
            100.0 * t.caught as f64 / t.planted.max(1) as f64,
            if t.other_rule > 0 {
                format!("   ({} more flagged by another rule)", t.other_rule)
            } else {
                String::new()
            },
            if t.unchecked > 0 {
                format!("   ({} ambiguous, listed as not checked)", t.unchecked)
            } else {
                String::new()
            }
        );
    }
    eprintln!(
        "  {:<16} {caught:>3}/{planted_total:<3} {:>5.1}%   ({listed} ambiguous, listed as not checked)",
        "all",
        100.0 * caught as f64 / planted_total.max(1) as f64
    );
    let clean_reports = cases.iter().filter(|c| !c.planted).count();
    eprintln!("false findings on the {clean_reports} clean twins: {}", false_clean.len());
    eprintln!("findings on untagged lines of the planted reports: {}", false_planted.len());
    for m in &missed {
        eprintln!("  missed: {m}");
    }
    for m in &false_clean {
        eprintln!("  false (clean): {m}");
    }
    for m in &false_planted {
        eprintln!("  false (planted): {m}");
    }
    if let Some(name) = std::env::var_os("HELDOUT_CLAIMS") {
        for c in cases.iter().filter(|c| std::ffi::OsStr::new(&c.name) == name) {
            for x in run(&w, c).claims {
                eprintln!(
                    "{} {}:{} [{}] {} {} ({:?}) — {:?} {}",
                    if c.planted { "planted" } else { "clean" },
                    c.name,
                    x.line,
                    x.kind,
                    x.subject,
                    x.claim,
                    x.words,
                    x.verdict,
                    x.detail
                );
            }
        }
    }

    // Every planted report has its clean twin.
    let names = |p: bool| cases.iter().filter(|c| c.planted == p).map(|c| c.name.clone()).collect::<BTreeSet<_>>();
    assert_eq!(names(true), names(false), "every planted report has a clean twin");
    assert!(names(true).len() >= 4, "at least 4 planted reports");
    assert!(planted_total >= 30, "at least 30 planted faults, got {planted_total}");
    assert!(missed.is_empty(), "{} of {planted_total} held-out faults missed", missed.len());
    assert!(false_clean.is_empty(), "{} false findings on the clean twins", false_clean.len());
    assert!(false_planted.is_empty(), "{} findings on untagged lines of planted reports", false_planted.len());
}

#[test]
fn section_scopes_follow_headings_in_markdown_and_rendered_text() {
    let md = "# T\n\n## A\nx\ny\n### B\nz\n";
    assert_eq!(section_of(md, 4), (3, 5));
    assert_eq!(section_of(md, 7), (6, 7));
    let rendered = "Title\n\n1. The Patterns\n\nPattern A — x\n  • Root: y\n  • Build: z\n\nPattern B — w\n";
    assert_eq!(section_of(rendered, 6), (5, 8));
    assert_eq!(section_of(rendered, 9), (9, 9));
}
