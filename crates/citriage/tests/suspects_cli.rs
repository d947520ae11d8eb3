//! `citriage suspects` end to end: a real git repository made here (a culprit that
//! adds the failure's message to product code, decoys that add it to vendored code and
//! documentation, and bystanders), a SQLite store of builds whose tested commits are
//! that history (two jobs narrowing the window together, a flaky job, a job testing a
//! repository the checkout lacks, a job whose builds name no commit), the patterns
//! made by `citriage cluster`, then the command's JSON and text checked.

use citriage_store::{BuildRecord, Store, StoredTest};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{run, stderr};

const MESSAGE: &str = "quota reconciler stalled on tenant";
const FLAKY: &str = "scheduler ledger dropped pending binding";
/// Start times: a day in the clustering window.
const T0: i64 = 1_778_300_000;

/// Runs git in `root` as a fixed author at a fixed date; returns stdout.
fn git(root: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=Test Author", "-c", "user.email=author@example.com", "-c", "commit.gpgsign=false"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn commit(root: &Path, files: &[(&str, &str)], subject: &str, n: u32) -> String {
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let date = format!("2026-05-0{n}T10:00:00Z");
    git(root, &["add", "-A"], &date);
    git(root, &["commit", "-q", "-m", subject], &date);
    git(root, &["rev-parse", "HEAD"], &date)
}

const RECONCILE_V1: &str =
    "package quota\n\nfunc reconcile(t string) error {\n\tif stalled(t) {\n\t\treturn retry(t)\n\t}\n\treturn nil\n}\n";
const BIND_SPEC: &str = "package sched\n\nvar _ = Describe(\"bindings\", func() {\n\tIt(\"bindings should not be dropped\", func() {})\n})\n";
const SCHED_V1: &str = "package sched\n\nfunc bind(p string) error {\n\treturn nil\n}\n";

/// The history: c0 the base, c1 OWNERS (`pkg/quota` labelled sig/quota), c2 a vendored copy of the message, c3 the
/// culprit, c4 the message in documentation, c5 the message of the flaky job.
fn history(root: &Path) -> Vec<String> {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q"], "2026-05-01T09:00:00Z");
    let culprit = RECONCILE_V1.replace("return retry(t)", &format!("return fmt.Errorf(\"{MESSAGE}: %s\", t)"));
    let sched = SCHED_V1.replace("return nil", &format!("return fmt.Errorf(\"{FLAKY}: %s\", p)"));
    let vendored = format!("package x\n\nvar msg = \"{MESSAGE}\"\n");
    let docs = format!("# Tenants\n\nWhen the log says `{MESSAGE}`, look at the tenant.\n");
    vec![
        commit(
            root,
            &[
                ("pkg/quota/reconcile.go", RECONCILE_V1),
                ("pkg/sched/bind.go", SCHED_V1),
                ("test/e2e/sched/bind.go", BIND_SPEC),
            ],
            "Initial import",
            1,
        ),
        commit(
            root,
            &[("OWNERS", "approvers:\n- alice\n"), ("pkg/quota/OWNERS", "approvers:\n- alice\nlabels:\n- sig/quota\n")],
            "Update OWNERS (#4240)",
            2,
        ),
        commit(root, &[("vendor/example.com/x/reconcile.go", &vendored)], "Bump vendored libraries (#4241)", 3),
        commit(root, &[("pkg/quota/reconcile.go", &culprit)], "Stop retrying stalled tenants (#4242)", 4),
        commit(root, &[("docs/tenants.md", &docs)], "Document tenants (#4243)", 5),
        commit(root, &[("pkg/sched/bind.go", &sched)], "Report dropped bindings (#4244)", 6),
    ]
}

fn build(
    job: &str,
    n: u32,
    at: i64,
    result: &str,
    repos: Option<String>,
    failing: Option<(&str, String)>,
) -> BuildRecord {
    let id = format!("20530000000000{n:05}");
    let tests = failing
        .map(|(name, text)| {
            vec![StoredTest {
                file: "artifacts/junit_01.xml".into(),
                suite: "e2e".into(),
                classname: String::new(),
                name: name.into(),
                status: "failed".into(),
                duration: Some(1.0),
                failure_text: Some(text),
                attempt: 0,
                informing: false,
                kettle_name: Some(name.into()),
            }]
        })
        .unwrap_or_default();
    BuildRecord {
        kettle: None,
        testgrid: None,
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{id}"),
        job: job.into(),
        build_id: id,
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos,
        started: Some(T0 + at),
        finished: Some(T0 + at + 600),
        duration: Some(600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests,
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        versions: Vec::new(),
    }
}

fn widgets(sha: &str) -> Option<String> {
    Some(format!(r#"{{"example/widgets": "main:{sha}"}}"#))
}

fn quota_failure() -> Option<(&'static str, String)> {
    Some((
        "[sig-quota] the quota reconciler should converge",
        format!(
            "test/e2e/quota_test.go:57: sync failed: {MESSAGE}: acme\nreconcile.go:214: giving up after 3 attempts"
        ),
    ))
}

fn flaky_failure() -> Option<(&'static str, String)> {
    Some(("[sig-scheduling] bindings should not be dropped", format!("bind_test.go:31: {FLAKY}: pod-7")))
}

struct World {
    _dir: tempfile::TempDir,
    db: PathBuf,
    repo: PathBuf,
    shas: Vec<String>,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("widgets");
    let shas = history(&repo);
    let db = dir.path().join("citriage.db");
    let mut store = Store::open(&db).unwrap();
    let mut n = 0;
    let mut put = |job: &str, at: i64, result: &str, repos: Option<String>, f: Option<(&str, String)>| {
        n += 1;
        store.put_build(&build(job, n, at, result, repos, f)).unwrap();
    };
    // ci-a passed at c1 and failed from c5: its window is c1..c5.
    put("ci-a", 0, "SUCCESS", widgets(&shas[0]), None);
    put("ci-a", 2000, "SUCCESS", widgets(&shas[1]), None);
    put("ci-a", 6000, "FAILURE", widgets(&shas[5]), quota_failure());
    put("ci-a", 7000, "FAILURE", widgets(&shas[5]), quota_failure());
    // ci-b passed at c0 and failed from c4: together, c1..c4.
    put("ci-b", 1000, "SUCCESS", widgets(&shas[0]), None);
    put("ci-b", 5000, "FAILURE", widgets(&shas[4]), quota_failure());
    // ci-flaky failed before its last pass: flaky before the onset.
    put("ci-flaky", 1100, "FAILURE", widgets(&shas[0]), flaky_failure());
    put("ci-flaky", 2100, "SUCCESS", widgets(&shas[1]), None);
    put("ci-flaky", 6100, "FAILURE", widgets(&shas[5]), flaky_failure());
    // ci-gadgets tests a repository whose commits the checkout lacks.
    let gadgets = |s: char| Some(format!(r#"{{"example/gadgets": "main:{}"}}"#, s.to_string().repeat(40)));
    put("ci-gadgets", 1200, "SUCCESS", gadgets('e'), None);
    put("ci-gadgets", 6200, "FAILURE", gadgets('f'), quota_failure());
    // ci-bare's builds name no commit.
    put("ci-bare", 1300, "SUCCESS", None, None);
    put("ci-bare", 6300, "FAILURE", None, quota_failure());
    drop(store);
    let o = run(&db, &["cluster", "--window", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    World { _dir: dir, db, repo, shas }
}

/// The stable id of the pattern whose text holds `needle`.
fn pattern(db: &Path, needle: &str) -> String {
    let store = Store::open(db).unwrap();
    let found: Vec<String> = store
        .clusters("default")
        .unwrap()
        .into_iter()
        .filter(|c| c.text.contains(needle))
        .map(|c| c.stable_id)
        .collect();
    assert_eq!(found.len(), 1, "{needle}: {found:?}");
    found[0].clone()
}

fn json(db: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let mut all = vec!["--format", "json", "suspects"];
    all.extend_from_slice(args);
    let o = run(db, &all);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    (o.status.code(), v, stderr(&o))
}

fn window<'a>(v: &'a Value, repo: &str) -> &'a Value {
    v["windows"].as_array().unwrap().iter().find(|w| w["window"]["repo"] == repo).unwrap()
}

#[test]
fn two_jobs_narrow_the_window_and_the_culprit_ranks_first() {
    let w = world();
    let id = pattern(&w.db, MESSAGE);
    let checkout = format!("example/widgets={}", w.repo.display());
    let (code, v, err) = json(&w.db, &[&id, "--checkout", &checkout]);
    assert_eq!(code, Some(0), "{err}\n{v:#}");
    assert_eq!(v["kind"], "pattern");
    assert_eq!(v["flaky_before"], false);
    let win = window(&v, "example/widgets");
    // The newest pass (ci-a at c1) and the oldest failure (ci-b at c4) bound it.
    let good = &win["window"]["good"];
    assert_eq!((good["sha"].as_str(), good["by"][0][0].as_str()), (Some(w.shas[1].as_str()), Some("ci-a")));
    let bad = &win["window"]["bad"];
    assert_eq!((bad["sha"].as_str(), bad["by"][0][0].as_str()), (Some(w.shas[4].as_str()), Some("ci-b")));
    assert_eq!(
        win["window"]["compare_url"],
        format!("https://github.com/example/widgets/compare/{}...{}", w.shas[1], w.shas[4])
    );
    let commits = win["commits"].as_array().unwrap();
    let listed: Vec<&str> = commits.iter().map(|c| c["sha"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), 3, "c2, c3, c4: {listed:?}");
    assert!(listed.contains(&w.shas[2].as_str()) && listed.contains(&w.shas[4].as_str()));
    let top = &commits[0];
    assert_eq!(top["sha"], w.shas[3].as_str());
    assert_eq!((top["rank"].as_u64(), top["tied"].as_bool()), (Some(1), Some(false)));
    assert_eq!(top["band"], "LikelyIntroducing", "{v:#}");
    assert_eq!(top["pr"], 4242);
    let evidence: Vec<&str> =
        top["links"].as_array().unwrap().iter().map(|l| l["evidence"].as_str().unwrap()).collect();
    assert!(evidence.iter().any(|e| e.contains("pkg/quota/reconcile.go:5") && e.contains(MESSAGE)), "{evidence:#?}");
    // The failing `[sig-quota]` test's SIG owns the folder the culprit touches.
    let owners = top["links"].as_array().unwrap().iter().find(|l| l["kind"] == "Owners").expect("an owners link");
    assert_eq!((owners["points"].as_u64(), owners["specific"].as_bool()), (Some(10), Some(true)), "{owners:#}");
    assert!(owners["evidence"].as_str().unwrap().contains("pkg/quota/OWNERS:4 labels sig/quota"), "{owners:#}");
    // The vendored and documentation copies are never the likely introducing change.
    for c in &commits[1..] {
        assert_ne!(c["band"], "LikelyIntroducing", "{c:#}");
        assert!(c["links"].as_array().unwrap().is_empty(), "{c:#}");
    }
    assert!(v["verdict"].as_str().unwrap().starts_with("likely introducing change"), "{}", v["verdict"]);
    // Without a checkout of the other repository, its window is printed and said unread.
    let gadgets = window(&v, "example/gadgets");
    assert!(
        gadgets["commits"].is_null() && gadgets["window"]["compare_url"].as_str().unwrap().contains("example/gadgets")
    );
    // The job whose builds name no commit says so.
    let bare = v["jobs"].as_array().unwrap().iter().find(|j| j["job"] == "ci-bare").unwrap();
    assert!(bare["notes"][0].as_str().unwrap().contains("names no tested commit"), "{bare:#}");

    // The text: the same ranking, the window's ends and their jobs.
    let o = run(&w.db, &["suspects", &id, "--checkout", &checkout]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().find(|l| l.trim_start().starts_with("1. ")).unwrap();
    assert!(first.contains(&w.shas[3][..12]) && first.contains("likely introducing change"), "{text}");
    assert!(text.contains("bounded by ci-a") && text.contains("bounded by ci-b"), "{text}");

    // Byte-identical on a second run.
    let again = run(&w.db, &["suspects", &id, "--checkout", &checkout]);
    assert_eq!(again.stdout, o.stdout);
}

#[test]
fn a_flaky_pattern_gets_no_introducing_change() {
    let w = world();
    let id = pattern(&w.db, FLAKY);
    let checkout = format!("example/widgets={}", w.repo.display());
    let (code, v, err) = json(&w.db, &[&id, "--checkout", &checkout]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["flaky_before"], true);
    assert!(v["verdict"].as_str().unwrap().starts_with("flaky before the onset: no single introducing change"));
    let commits = window(&v, "example/widgets")["commits"].as_array().unwrap().clone();
    // The commit adding the message links to it, and is still no likely introducing change.
    let top = &commits[0];
    assert_eq!(top["sha"], w.shas[5].as_str());
    assert!(!top["links"].as_array().unwrap().is_empty(), "{top:#}");
    assert!(commits.iter().all(|c| c["band"] != "LikelyIntroducing"), "{commits:#?}");
    // The failing test's own source, found by its name at the failing commit.
    let sources = &window(&v, "example/widgets")["test_sources"];
    assert_eq!(sources[0]["at"]["file"], "test/e2e/sched/bind.go", "{sources:#}");
    assert_eq!(sources[0]["at"]["line"], 4);
}

#[test]
fn every_pattern_at_once_answers_as_each_alone() {
    let w = world();
    let checkout = format!("example/widgets={}", w.repo.display());
    let (code, v, err) = json(&w.db, &["--all", "--checkout", &checkout]);
    assert_eq!(code, Some(0), "{err}");
    let all = v["patterns"].as_array().unwrap();
    let store = Store::open(&w.db).unwrap();
    let mut ids: Vec<(u64, String)> =
        store.clusters("default").unwrap().into_iter().map(|c| (c.size, c.stable_id)).collect();
    ids.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let listed: Vec<&str> = all.iter().map(|p| p["target"].as_str().unwrap()).collect();
    assert_eq!(listed, ids.iter().map(|(_, id)| id.as_str()).collect::<Vec<_>>(), "the largest first");
    // Each pattern's answer is the one the single command gives.
    for id in [pattern(&w.db, MESSAGE), pattern(&w.db, FLAKY)] {
        let (_, alone, _) = json(&w.db, &[&id, "--checkout", &checkout]);
        let within = all.iter().find(|p| p["target"] == id.as_str()).unwrap();
        assert_eq!(within, &alone, "{id}");
    }
    // The text: one line per pattern with its verdict, and its windows under it.
    let o = run(&w.db, &["suspects", "--all", "--checkout", &checkout]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let quota = pattern(&w.db, MESSAGE);
    let line = text.lines().find(|l| l.starts_with(&quota)).unwrap();
    assert!(line.contains("likely introducing change"), "{text}");
    assert!(text.contains("  window of example/widgets"), "{text}");
    // A target and --all together, or neither, are refused.
    let o = run(&w.db, &["suspects", "--all", &quota]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(&w.db, &["suspects"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_job_gets_its_own_window() {
    let w = world();
    let checkout = format!("example/widgets={}", w.repo.display());
    let (code, v, err) = json(&w.db, &["ci-a", "--checkout", &checkout]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["kind"], "job");
    let win = window(&v, "example/widgets");
    assert_eq!(win["window"]["good"]["sha"], w.shas[1].as_str());
    assert_eq!(win["window"]["bad"]["sha"], w.shas[5].as_str());
    assert_eq!(win["commits"].as_array().unwrap().len(), 4);
    assert_eq!(win["commits"][0]["sha"], w.shas[3].as_str());
}

#[test]
fn bad_checkouts_and_unknown_commits_are_named_and_the_rest_analysed() {
    let w = world();
    let id = pattern(&w.db, MESSAGE);
    let not_repo = w.db.parent().unwrap().join("not-a-repo");
    std::fs::create_dir_all(&not_repo).unwrap();
    let (code, v, _) = json(
        &w.db,
        &[
            &id,
            "--checkout",
            &format!("example/widgets={}", w.repo.display()),
            "--checkout",
            &format!("example/gadgets={}", w.repo.display()),
            "--checkout",
            &format!("example/other={}", not_repo.display()),
        ],
    );
    assert_eq!(code, Some(2));
    let problems: Vec<&str> = v["problems"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert!(problems.iter().any(|p| p.contains("not-a-repo") && p.contains("not a git repository")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains(&"e".repeat(40)) && p.contains("unknown revision")), "{problems:?}");
    // The gadgets window is not guessed; the widgets window is still ranked.
    let gadgets = window(&v, "example/gadgets");
    assert!(gadgets["commits"].is_null() && gadgets["notes"][0].as_str().unwrap().contains("never guessed"));
    assert_eq!(window(&v, "example/widgets")["commits"][0]["sha"], w.shas[3].as_str());

    // A malformed spelling, a target that is neither: exit 2, the value named.
    let o = run(&w.db, &["suspects", &id, "--checkout", "widgets"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"widgets\": expected name=path"), "{}", stderr(&o));
    let o = run(&w.db, &["suspects", "no-such-thing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-thing") && stderr(&o).contains("cluster"), "{}", stderr(&o));
}
