//! `citriage bench suspects-history` end to end on a real git repository made here: a
//! culprit that adds the failure's message to product code, decoys that add it to
//! vendored code and documentation or touch the same file, bystanders, a revert of the
//! culprit whose message quotes the failure (the engine must rank the culprit first),
//! and a revert that quotes nothing (skipped and counted); then bad input: a folder
//! that is no repository, a repository with no commit, a malformed `--repo`.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod common;

use common::{bin, stderr};

const MESSAGE: &str = "quota reconciler stalled on tenant";

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

fn date(n: u32) -> String {
    format!("2026-05-{:02}T10:00:00Z", n)
}

fn commit(root: &Path, files: &[(&str, &str)], subject: &str, n: u32) -> String {
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(root, &["add", "-A"], &date(n));
    git(root, &["commit", "-q", "-m", subject], &date(n));
    git(root, &["rev-parse", "HEAD"], &date(n))
}

/// Reverts `sha` with the given message (git's own message when `None`).
fn revert(root: &Path, sha: &str, message: Option<&str>, n: u32) -> String {
    match message {
        None => git(root, &["revert", "--no-edit", sha], &date(n)),
        Some(m) => {
            git(root, &["revert", "--no-commit", sha], &date(n));
            git(root, &["commit", "-q", "-m", m], &date(n))
        }
    };
    git(root, &["rev-parse", "HEAD"], &date(n))
}

const RECONCILE: &str =
    "package quota\n\nfunc reconcile(t string) error {\n\tif stalled(t) {\n\t\treturn retry(t)\n\t}\n\treturn nil\n}\n";
const RECONCILE_TEST: &str = "package quota\n\nfunc TestQuotaReconcile(t *testing.T) {\n\tcheck(t, reconcile)\n}\n";

/// The history; returns (culprit, the quoting revert, the bare revert).
fn history(root: &Path) -> (String, String, String) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q"], &date(1));
    commit(
        root,
        &[
            ("pkg/quota/reconcile.go", RECONCILE),
            ("pkg/quota/reconcile_test.go", RECONCILE_TEST),
            ("pkg/sched/bind.go", "package sched\n\nfunc bind() {}\n"),
        ],
        "Initial import",
        1,
    );
    let vendored = format!("package x\n\nvar msg = \"{MESSAGE}\"\n");
    commit(root, &[("vendor/example.com/x/reconcile.go", &vendored)], "Bump vendored libraries (#41)", 2);
    let bystander = commit(
        root,
        &[("pkg/sched/bind.go", "package sched\n\nfunc bind() { wait() }\n")],
        "sched: wait before binding (#42)",
        3,
    );
    let stalled = RECONCILE.replace("return retry(t)", &format!("return fmt.Errorf(\"{MESSAGE}: %s\", t)"));
    let culprit = commit(root, &[("pkg/quota/reconcile.go", &stalled)], "quota: report stalled tenants (#43)", 4);
    let docs = format!("# Tenants\n\nWhen the log says `{MESSAGE}`, look at the tenant.\n");
    commit(root, &[("docs/tenants.md", &docs)], "docs: tenants (#44)", 5);
    let touched = stalled.replace("package quota\n", "package quota\n\n// Reconcile loops.\n");
    commit(root, &[("pkg/quota/reconcile.go", &touched)], "quota: a comment (#45)", 6);
    commit(root, &[("pkg/api/types_v2.go", "package api\n\ntype V2 struct{}\n")], "api: v2 types (#46)", 7);
    let message = format!(
        "Revert \"quota: report stalled tenants (#43)\"\n\nThis reverts commit {culprit}.\n\n\
         TestQuotaReconcile fails on every run since:\n\n    reconcile.go:6: {MESSAGE}: t1\n"
    );
    let quoting = revert(root, &culprit, Some(&message), 8);
    let bare = revert(root, &bystander, None, 9);
    (culprit, quoting, bare)
}

fn run_json(args: &[&str]) -> (Option<i32>, Value, String) {
    let o = bin().args(["--quiet", "--format", "json", "bench", "suspects-history"]).args(args).output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, stderr(&o))
}

#[test]
fn the_reverted_culprit_ranks_first_and_a_bare_revert_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("widgets");
    let (culprit, quoting, bare) = history(&root);
    let spec = format!("widgets={}", root.display());
    let (code, v, err) = run_json(&["--repo", &spec, "--cases", "--held-in", "widgets"]);
    assert_eq!(code, Some(0), "{err}");
    let r = &v["repos"][0];
    assert_eq!(r["name"], "widgets");
    assert_eq!(r["held_in"], true);
    assert_eq!(r["reverts"], 2);
    assert_eq!(r["skipped"]["no quotable failure text"], 1, "{r}");
    assert_eq!(r["quotable"], 1, "{r}");
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    assert_eq!(c["revert"], quoting.as_str());
    assert_ne!(c["revert"], bare.as_str());
    assert_eq!(c["culprit"], culprit.as_str());
    // The engine saw the quoted failure, never the reverted title.
    let text = c["text"]["lines"].as_array().unwrap();
    assert!(text.iter().any(|l| l.as_str().unwrap().contains(MESSAGE)), "{text:?}");
    assert!(text.iter().all(|l| !l.as_str().unwrap().contains("report stalled tenants")), "{text:?}");
    assert_eq!(c["text"]["tests"][0], "TestQuotaReconcile");
    // The window is the 7 commits before the revert; the culprit alone at rank 1.
    assert_eq!(c["window"], 7);
    assert_eq!(c["ranked"]["rank"], 1, "{c}");
    assert_eq!(c["ranked"]["tied_with"], 1, "{c}");
    assert_ne!(c["ranked"]["band"], "WindowOnly", "{c}");
    let f = &r["figures"];
    assert_eq!((f["cases"].as_u64(), f["at1"].as_u64(), f["top3"].as_u64()), (Some(1), Some(1), Some(1)));
    assert_eq!(v["totals"]["held_in"]["at1"], 1);
    assert_eq!(v["totals"]["held_out"]["cases"], 0);

    // A window of 2 commits no longer holds the culprit: a miss, said.
    let (_, v, _) = run_json(&["--repo", &spec, "--window", "2", "--cases"]);
    let r = &v["repos"][0];
    assert_eq!(r["held_in"], false);
    assert!(r["cases"][0]["ranked"].is_null());
    assert_eq!(r["figures"]["outside_window"], 1);
    assert_eq!(r["figures"]["at1"], 0);

    // The text table names the repository and its set.
    let o = bin().args(["--quiet", "bench", "suspects-history", "--repo", &spec, "--cases"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("widgets") && l.contains("held-out")), "{out}");
    assert!(out.contains(&format!("culprit {} rank 1,", &culprit[..12])), "{out}");
}

#[test]
fn bad_repositories_are_named_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("not-a-repo");
    std::fs::create_dir_all(&plain).unwrap();
    let (code, _, err) = run_json(&["--repo", &plain.display().to_string()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not-a-repo") && err.contains("not a git repository"), "{err}");

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"], &date(1));
    let (code, _, err) = run_json(&["--repo", &format!("e={}", empty.display())]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("e=") && err.contains("no history"), "{err}");

    let (code, _, err) = run_json(&["--repo", "=nowhere"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("\"=nowhere\"") && err.contains("NAME=PATH"), "{err}");
    let (code, _, err) = run_json(&["--repo", &plain.display().to_string(), "--window", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--window 0"), "{err}");
}
