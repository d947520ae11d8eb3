//! Code evidence against small git repositories built here: `path:line`, OWNERS with
//! aliases and `no_parent_owners`, Prow job configs with testgrid annotations, and
//! `git log -S` history including a string removed and re-added. Tests that need git
//! print why they skip when it is absent.

use citriage_verify::code::{CodeAnswer, CodeError, CodeResolver, LineLookup};
use citriage_verify::{Checkout, Checkouts, GitProgram};
use std::path::Path;
use std::process::Command;

fn git_or_skip(test: &str) -> Option<GitProgram> {
    match GitProgram::locate() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("skipping {test}: {e}");
            None
        }
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn git(root: &Path, args: &[&str], date: &str) {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=Test Author", "-c", "user.email=author@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn commit(root: &Path, msg: &str, date: &str) {
    git(root, &["add", "-A"], date);
    git(root, &["commit", "-q", "-m", msg], date);
}

const NODE_YAML: &str = "\
periodics:
- name: ci-node-e2e
  interval: 2h
  decorate: true
  annotations:
    testgrid-dashboards: sig-node-release-blocking
    testgrid-tab-name: node-e2e
    testgrid-alert-email: \"node-alerts@example.com\"
    description: >
      Runs the node e2e suite
      every two hours.
  spec:
    containers:
    - name: ci-node-e2e-helper
      image: example/img
presubmits:
  kubernetes/kubernetes:
  - name: pull-node-unit
    always_run: true
    annotations:
      testgrid-dashboards: presubmits-kubernetes
";

const FLAKY_V1: &str =
    "package e2e\n\nimport \"time\"\n\nfunc legacySkip() {}\n\nfunc TestFlaky(t *testing.T) {\n\t_ = time.Second\n}\n";

/// A small test-infra-like repository with five dated commits.
fn build_repo(root: &Path) {
    git(root, &["init", "-q", "-b", "main"], "2026-01-01T00:00:00Z");
    write(root, "OWNERS", "approvers:\n- root-approver\nlabels:\n- sig/testing\n");
    write(root, "OWNERS_ALIASES", "aliases:\n  sig-node-approvers:\n  - alice\n  - bob # lead\n");
    write(
        root,
        "config/jobs/kubernetes/sig-node/OWNERS",
        "# sig-node jobs\napprovers:\n- sig-node-approvers\nreviewers: [carol]\nlabels:\n- sig/node\n",
    );
    write(root, "config/jobs/kubernetes/sig-node/node.yaml", NODE_YAML);
    write(root, "config/jobs/other/OWNERS", "options:\n  no_parent_owners: true\napprovers:\n- solo\n");
    write(root, "config/jobs/other/misc.yml", "periodics:\n- name: ci-unalerted\n  interval: 24h\n");
    write(root, "test/e2e/flaky_test.go", FLAKY_V1);
    commit(root, "Initial layout", "2026-01-01T00:00:00Z");
    let with = FLAKY_V1.replace("import \"time\"\n", "import \"time\"\n\nconst pollTimeout = 10 * time.Second\n");
    write(root, "test/e2e/flaky_test.go", &with);
    commit(root, "Add a poll timeout", "2026-02-01T00:00:00Z");
    write(root, "test/e2e/flaky_test.go", FLAKY_V1);
    commit(root, "Drop the poll timeout", "2026-03-01T00:00:00Z");
    write(root, "test/e2e/flaky_test.go", &with);
    commit(root, "Bring back the poll timeout", "2026-04-01T00:00:00Z");
    write(root, "test/e2e/flaky_test.go", &with.replace("func legacySkip() {}\n\n", ""));
    write(root, "README.md", "docs\n");
    commit(root, "Remove legacySkip and add docs", "2026-05-01T12:00:00Z");
}

#[test]
fn path_line_resolution_with_evidence() {
    let Some(g) = git_or_skip("path_line_resolution_with_evidence") else { return };
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path());
    let c = Checkout::open("test-infra", dir.path(), Some(g)).unwrap();
    let head = c.head().unwrap().clone();
    assert_eq!(head.day, "2026-05-01");
    match c.resolve("test/e2e/flaky_test.go", 5).unwrap() {
        LineLookup::Found(h) => {
            assert_eq!(h.text, "const pollTimeout = 10 * time.Second");
            assert_eq!(h.total_lines, 9);
            assert_eq!(h.evidence.locator, format!("source:test-infra@{}:test/e2e/flaky_test.go#L5", &head.sha[..12]));
            assert_eq!(h.evidence.as_of, "2026-05-01");
            assert!(h.evidence.id.starts_with("ev-"));
        }
        other => panic!("{other:?}"),
    }
    match c.resolve_range("./test/e2e/flaky_test.go", 3, 5).unwrap() {
        LineLookup::Found(h) => assert_eq!(h.text, "import \"time\"\n\nconst pollTimeout = 10 * time.Second"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.resolve("test/e2e/flaky_test.go", 10).unwrap(), LineLookup::PastEnd { total_lines: 9 });
    assert_eq!(c.resolve("test/e2e/nope.go", 1).unwrap(), LineLookup::NoSuchFile);
    assert!(matches!(c.resolve("../etc/passwd", 1), Err(CodeError::BadPath { .. })));
    assert!(matches!(c.resolve("/etc/passwd", 1), Err(CodeError::BadPath { .. })));
}

#[test]
fn job_configs_with_testgrid_annotations() {
    let dir = tempfile::tempdir().unwrap();
    // No git needed to read configs.
    std::fs::create_dir_all(dir.path()).unwrap();
    write(dir.path(), "config/jobs/kubernetes/sig-node/node.yaml", NODE_YAML);
    write(dir.path(), "config/jobs/other/misc.yml", "periodics:\n- name: ci-unalerted\n  interval: 24h\n");
    let c = Checkout::open("test-infra", dir.path(), None).unwrap();
    let found = c.find_job_config("ci-node-e2e").unwrap();
    assert_eq!(found.len(), 1, "the container named like the job is not a job: {found:?}");
    let j = &found[0];
    assert_eq!((j.file.as_str(), j.line), ("config/jobs/kubernetes/sig-node/node.yaml", 2));
    assert_eq!(j.kind.as_deref(), Some("periodic"));
    assert_eq!(j.repo, None);
    assert_eq!(j.alert_email(), Some("node-alerts@example.com"));
    assert_eq!(j.dashboards(), Some("sig-node-release-blocking"));
    assert_eq!(j.tab_name(), Some("node-e2e"));
    assert_eq!(j.annotations.get("description").map(String::as_str), Some("Runs the node e2e suite every two hours."));
    assert!(j.evidence.locator.starts_with("job-config:test-infra:config/jobs/kubernetes/sig-node/node.yaml#L2"));
    assert!(j.evidence.excerpt.contains("testgrid-alert-email: node-alerts@example.com"));
    // Presubmits carry their repository; the dashboard's `pr:` prefix is accepted.
    let p = c.find_job_config("pr:pull-node-unit").unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].kind.as_deref(), p[0].repo.as_deref(), p[0].line),
        (Some("presubmit"), Some("kubernetes/kubernetes"), 18)
    );
    assert_eq!(p[0].alert_email(), None);
    let u = c.find_job_config("ci-unalerted").unwrap();
    assert_eq!((u[0].file.as_str(), u[0].alert_email()), ("config/jobs/other/misc.yml", None));
    assert!(c.find_job_config("ci-does-not-exist").unwrap().is_empty());
}

#[test]
fn owners_walk_up_with_aliases_and_stop() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "OWNERS", "approvers:\n- root-approver\nlabels:\n- sig/testing\n");
    write(root, "OWNERS_ALIASES", "aliases:\n  sig-node-approvers:\n  - alice\n  - bob # lead\n");
    write(
        root,
        "config/jobs/kubernetes/sig-node/OWNERS",
        "approvers:\n- sig-node-approvers\nreviewers: [carol]\nlabels:\n- sig/node\n",
    );
    write(root, "config/jobs/kubernetes/sig-node/node.yaml", NODE_YAML);
    write(root, "config/jobs/other/OWNERS", "options:\n  no_parent_owners: true\napprovers:\n- solo\n");
    write(root, "config/jobs/other/misc.yml", "x\n");
    let c = Checkout::open("test-infra", root, None).unwrap();
    let o = c.owners("config/jobs/kubernetes/sig-node/node.yaml").unwrap();
    let files: Vec<&str> = o.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, vec!["config/jobs/kubernetes/sig-node/OWNERS", "OWNERS"]);
    assert_eq!(o.approvers, vec!["alice", "bob", "root-approver"]);
    assert_eq!(o.reviewers, vec!["carol"]);
    assert_eq!(o.labels, vec!["sig/node", "sig/testing"]);
    assert_eq!(o.sig_labels, vec!["sig/node", "sig/testing"]);
    assert_eq!(o.aliases_used, vec!["sig-node-approvers"]);
    assert!(o.files[0].evidence.locator.starts_with("owners:test-infra:config/jobs/kubernetes/sig-node/OWNERS"));
    let other = c.owners("config/jobs/other/misc.yml").unwrap();
    assert_eq!(other.files.len(), 1, "no_parent_owners stops the walk");
    assert_eq!(other.approvers, vec!["solo"]);
    assert!(other.labels.is_empty());
    // A directory works as well as a file.
    assert_eq!(c.owners("config/jobs/kubernetes").unwrap().approvers, vec!["root-approver"]);
}

#[test]
fn pickaxe_finds_the_introducing_commit() {
    let Some(g) = git_or_skip("pickaxe_finds_the_introducing_commit") else { return };
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path());
    let c = Checkout::open("test-infra", dir.path(), Some(g)).unwrap();
    let h = c.history("pollTimeout = 10", None).unwrap();
    let subjects: Vec<&str> = h.hits.iter().map(|x| x.subject.as_str()).collect();
    assert_eq!(subjects, vec!["Add a poll timeout", "Drop the poll timeout", "Bring back the poll timeout"]);
    assert_eq!(h.hits.iter().map(|x| (x.added, x.removed)).collect::<Vec<_>>(), vec![(1, 0), (0, 1), (1, 0)]);
    assert!(h.present_now);
    let intro = h.introduced.as_ref().unwrap();
    assert_eq!(
        intro.subject, "Bring back the poll timeout",
        "the string as it exists now came back in the third commit"
    );
    assert_eq!(intro.author, "Test Author");
    assert!(intro.date.starts_with("2026-04-01"));
    assert_eq!(h.evidence.len(), 1);
    assert_eq!(h.evidence[0].as_of, "2026-04-01");
    assert!(h.evidence[0].locator.starts_with("commit:test-infra:"));
    // A string that is gone names the commit that removed it.
    let gone = c.history("legacySkip", Some("test/e2e")).unwrap();
    assert!(!gone.present_now);
    assert_eq!(gone.introduced, None);
    assert_eq!(gone.removed_by.as_ref().map(|x| x.subject.as_str()), Some("Remove legacySkip and add docs"));
    assert_eq!(gone.hits[0].subject, "Initial layout");
    // Never present: no hits. A pathspec limits the search.
    let none = c.history("no such string anywhere", None).unwrap();
    assert!(none.hits.is_empty() && none.introduced.is_none() && !none.present_now);
    assert!(c.history("pollTimeout", Some("README.md")).unwrap().hits.is_empty());
    assert_eq!(
        c.introduced("pollTimeout = 10", Some("test/e2e/flaky_test.go")).unwrap().unwrap().subject,
        "Bring back the poll timeout"
    );
}

#[test]
fn a_commit_parent_is_the_code_just_before_it() {
    let Some(g) = git_or_skip("a_commit_parent_is_the_code_just_before_it") else { return };
    let dir = tempfile::tempdir().unwrap();
    build_repo(dir.path());
    let c = Checkout::open("test-infra", dir.path(), Some(g)).unwrap();
    let history = c.file_history("test/e2e/flaky_test.go", 10);
    assert_eq!(history.len(), 5, "five commits touched the file");
    // The parent of the commit that removed legacySkip still has it.
    let removal = &history[0];
    let parent = c.parent(&removal[..12]).expect("a parent");
    assert_eq!(parent, history[1]);
    let before = c.file_text("test/e2e/flaky_test.go", Some(&parent)).unwrap().unwrap();
    assert!(before.lines.iter().any(|l| l.contains("legacySkip")));
    // Through the resolver, by path.
    let mut all = Checkouts::new();
    all.add(c, "kubernetes/test-infra", &[]);
    assert_eq!(all.parent_commit(None, "test/e2e/flaky_test.go", &removal[..12]), Some(parent));
    // The first commit has none; a SHA that is not in the repository has none.
    let root = history.last().unwrap();
    assert_eq!(all.parent_commit(None, "test/e2e/flaky_test.go", root), None);
    assert_eq!(all.parent_commit(None, "test/e2e/flaky_test.go", "0123456789ab"), None);
    assert_eq!(all.parent_commit(None, "test/e2e/flaky_test.go", "HEAD"), None, "only SHAs");
}

#[test]
fn missing_git_is_reported_clearly() {
    let err = GitProgram::with_program("/nonexistent/bin/git-not-here").unwrap_err();
    assert!(matches!(err, citriage_git::GitError::Missing { .. }));
    assert!(err.to_string().contains("git is not available"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\ntwo\n");
    let c = Checkout::open("plain", dir.path(), None).unwrap();
    assert!(matches!(c.history("one", None), Err(CodeError::GitMissing { .. })));
    assert!(c.head().is_none());
    match c.resolve("a.txt", 2).unwrap() {
        LineLookup::Found(h) => {
            assert_eq!(h.text, "two");
            assert_eq!(h.evidence.locator, "source:plain:a.txt#L2");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(Checkout::open("x", dir.path().join("nope"), None), Err(CodeError::NoCheckout { .. })));
}

#[test]
fn path_line_claims_across_named_checkouts() {
    let k = tempfile::tempdir().unwrap();
    let t = tempfile::tempdir().unwrap();
    write(k.path(), "test/e2e/network/networking.go", &"line\n".repeat(400));
    write(k.path(), "pkg/kubelet/kubelet_test.go", &"x\n".repeat(3500));
    write(t.path(), "config/jobs/kubernetes/sig-node/node.yaml", NODE_YAML);
    write(t.path(), "experiment/dumplogs.go", "a\nb\n");
    write(k.path(), "hack/dumplogs.go", "a\nb\n");
    let mut cs = Checkouts::new();
    cs.add(Checkout::open("kubernetes", k.path(), None).unwrap(), "kubernetes/kubernetes", &["k/k"]);
    cs.add(Checkout::open("test-infra", t.path(), None).unwrap(), "kubernetes/test-infra", &[]);
    let found = |a: CodeAnswer| matches!(a, CodeAnswer::Found { .. });
    assert!(found(cs.check(None, "test/e2e/network/networking.go", 325, 340)));
    assert!(found(cs.check(Some("kubernetes/test-infra"), "config/jobs/kubernetes/sig-node/node.yaml", 2, 2)));
    assert!(found(cs.check(Some("test-infra"), "config/jobs/kubernetes/sig-node/node.yaml", 2, 2)));
    // A partial path resolves when exactly one file ends with it.
    assert!(found(cs.check(None, "kubelet_test.go", 3306, 3306)));
    match cs.check(None, "network/networking.go", 401, 401) {
        CodeAnswer::Missing { why } => assert!(why.contains("has 400 lines"), "{why}"),
        other => panic!("{other:?}"),
    }
    match cs.check(None, "test/e2e/network/missing.go", 3, 3) {
        CodeAnswer::Missing { why } => assert_eq!(why, "no file test/e2e/network/missing.go in kubernetes"),
        other => panic!("{other:?}"),
    }
    // A path of another project that only shares the top of the tree (`test/e2e/`)
    // with a checkout is not that checkout's missing file.
    assert!(matches!(cs.check(None, "test/e2e/data/e2e_conf.yaml", 112, 112), CodeAnswer::Unchecked { .. }));
    // Not checkable: two files end with the name, a repository nobody mapped, a tree
    // none of the checkouts has.
    assert!(matches!(cs.check(None, "dumplogs.go", 1, 1), CodeAnswer::Unchecked { .. }));
    assert!(matches!(cs.check(Some("kubernetes/kops"), "upup/x.go", 1, 1), CodeAnswer::Unchecked { .. }));
    assert!(matches!(cs.check(None, "upup/pkg/fi/cloudup/new_cluster.go", 514, 514), CodeAnswer::Unchecked { .. }));
    assert!(matches!(Checkouts::new().check(None, "a.go", 1, 1), CodeAnswer::Unchecked { .. }));
}
