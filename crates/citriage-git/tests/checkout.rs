//! The git runner against real repositories built here with git: ranges with merges,
//! squashes and reverts, files at revisions, shallow clones, ambiguous and unknown
//! ids, `git log -S`, `git grep`, the revert pre-check, and arguments that try to
//! be options. Tests print why they skip when git is absent.

use citriage_git::{Detail, Git, GitError, GitProgram, LogQuery, PrMerge, PrRef};
use std::path::Path;
use std::process::Command;

fn have_git(test: &str) -> bool {
    match GitProgram::locate() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipping {test}: {e}");
            false
        }
    }
}

/// Runs git in `root` as a fixed author at a fixed date; returns stdout.
fn sh(root: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=Test Author", "-c", "user.email=author@example.com", "-c", "commit.gpgsign=false"])
        .args(["-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"])
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

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn commit(root: &Path, msg: &str, date: &str) -> String {
    sh(root, &["add", "-A"], date);
    sh(root, &["commit", "-q", "--allow-empty", "-m", msg], date);
    sh(root, &["rev-parse", "HEAD"], date)
}

/// The history every test reads:
///
/// ```text
/// c1 base ── c2 timeout=10 ──────── M merge of PR #12 (feature: f1 adds b.go) ── s1 squash (#34) ── r1 revert of s1 ── c3 timeout back
/// ```
struct World {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    c1: String,
    c2: String,
    f1: String,
    merge: String,
    squash: String,
    revert: String,
    c3: String,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    sh(&root, &["init", "-q"], "2026-01-01T00:00:00Z");
    write(&root, "pkg/a.go", "package a\n\nfunc A() {}\n");
    write(&root, "test/e2e/net_test.go", "It(\"should handle MTU changes\", func() {})\n");
    let c1 = commit(&root, "Initial layout", "2026-01-01T10:00:00Z");
    write(&root, "pkg/a.go", "package a\n\nconst timeout = 10\n\nfunc A() {}\n");
    let c2 = commit(&root, "Add the timeout", "2026-01-02T10:00:00Z");
    sh(&root, &["checkout", "-q", "-b", "feature", &c1], "2026-01-03T09:00:00Z");
    write(&root, "pkg/b.go", "package b\n");
    let f1 = commit(&root, "Add b", "2026-01-03T09:00:00Z");
    sh(&root, &["checkout", "-q", "main"], "2026-01-03T10:00:00Z");
    sh(
        &root,
        &["merge", "-q", "--no-ff", "-m", "Merge pull request #12 from alice/feature\n\nAdd b", "feature"],
        "2026-01-03T10:00:00Z",
    );
    let merge = sh(&root, &["rev-parse", "HEAD"], "");
    write(&root, "pkg/we\"ird\tname.go", "package w\n");
    write(&root, "pkg/été.go", "package e // timeout\n");
    let squash = commit(
        &root,
        "Fix the MTU check (#34)\n\nBody with \u{1e}record\u{1f}unit separators\nand a fake header:\nHdeadbeef",
        "2026-01-04T10:00:00Z",
    );
    sh(&root, &["revert", "--no-edit", &squash], "2026-01-05T10:00:00Z");
    let revert = sh(&root, &["rev-parse", "HEAD"], "");
    write(&root, "pkg/a.go", "package a\n\nconst timeout = 10\nconst timeout2 = 1\n\nfunc A() {}\n");
    let c3 = commit(&root, "Second timeout", "2026-01-06T10:00:00Z");
    World { _dir: dir, root, c1, c2, f1, merge, squash, revert, c3 }
}

#[test]
fn a_range_is_one_log_with_files_parents_and_pull_requests() {
    if !have_git("a_range_is_one_log_with_files_parents_and_pull_requests") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let commits = git.log(&LogQuery::range(&w.c1, "HEAD").with_files()).unwrap();
    let shas: Vec<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    assert_eq!(shas, vec![&w.c3, &w.revert, &w.squash, &w.merge, &w.f1, &w.c2], "newest first, the branch included");
    let by = |sha: &str| commits.iter().find(|c| c.sha == sha).unwrap();
    let m = by(&w.merge);
    assert!(m.is_merge());
    assert_eq!(m.parents, vec![w.c2.clone(), w.f1.clone()]);
    assert_eq!(m.pr, Some(PrRef { number: 12, kind: PrMerge::Merge }));
    assert_eq!(m.files, vec!["pkg/b.go"], "a merge's files are its changes against its first parent");
    assert_eq!(m.body, "Add b");
    let s = by(&w.squash);
    assert_eq!(s.pr, Some(PrRef { number: 34, kind: PrMerge::Squash }));
    assert_eq!(s.files, vec!["pkg/we\"ird\tname.go", "pkg/été.go"], "paths as written, unquoted");
    assert!(s.body.contains("\u{1e}record\u{1f}unit") && s.body.ends_with("Hdeadbeef"), "{:?}", s.body);
    assert_eq!(s.author, "Test Author");
    assert_eq!(s.author_email, "author@example.com");
    assert_eq!(s.author_time, 1_767_520_800);
    assert_eq!(s.author_date, "2026-01-04T10:00:00Z");
    let r = by(&w.revert);
    assert_eq!(r.pr, None, "a revert's subject ends in a quote: {}", r.subject);
    assert_eq!(r.subject, "Revert \"Fix the MTU check (#34)\"");
    // The branch's own history only, and the paths filter.
    let first: Vec<String> = git
        .log(&LogQuery { first_parent: true, ..LogQuery::range(&w.c1, "HEAD") })
        .unwrap()
        .into_iter()
        .map(|c| c.sha)
        .collect();
    assert!(!first.contains(&w.f1));
    let only_a = git.log(&LogQuery::range(&w.c1, "HEAD").paths(&["pkg/a.go"])).unwrap();
    assert_eq!(only_a.iter().map(|c| c.sha.as_str()).collect::<Vec<_>>(), vec![&w.c3, &w.c2]);
    assert!(only_a.iter().all(|c| c.files.is_empty()), "no files unless asked for");
    // Dates bound the range.
    let since =
        git.log(&LogQuery { since: Some(1_767_520_800), detail: Detail::None, ..LogQuery::of("HEAD") }).unwrap();
    assert_eq!(since.len(), 3, "the squash, its revert and the last commit");
}

#[test]
fn unknown_revisions_are_reported_never_guessed() {
    if !have_git("unknown_revisions_are_reported_never_guessed") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let e = git.rev_parse(unknown).unwrap_err();
    assert!(matches!(&e, GitError::UnknownRevision { revision, .. } if revision == unknown), "{e}");
    assert!(e.to_string().contains(&w.root.display().to_string()), "the error names the checkout: {e}");
    assert_eq!(git.find_commit(unknown).unwrap(), None);
    assert_eq!(git.find_commit(&w.c2[..10]).unwrap().unwrap().sha, w.c2, "a unique prefix resolves");
    let e = git.log(&LogQuery::range(unknown, "HEAD")).unwrap_err();
    assert!(matches!(&e, GitError::UnknownRevision { revision, .. } if revision == unknown), "{e}");
    let e = git.read_file("no-such-branch", "pkg/a.go").unwrap_err();
    assert!(matches!(e, GitError::UnknownRevision { .. }), "{e}");
    assert!(!git.is_shallow().unwrap());
}

#[test]
fn a_shallow_clone_says_it_cannot_tell() {
    if !have_git("a_shallow_clone_says_it_cannot_tell") {
        return;
    }
    let w = world();
    let shallow = w.root.parent().unwrap().join("shallow");
    let url = format!("file://{}", w.root.display());
    sh(w.root.parent().unwrap(), &["clone", "-q", "--depth", "1", &url, shallow.to_str().unwrap()], "");
    let git = Git::open(&shallow).unwrap();
    assert!(git.is_shallow().unwrap());
    assert_eq!(git.head().unwrap().sha, w.c3);
    let e = git.find_commit(&w.c1).unwrap_err();
    assert!(matches!(&e, GitError::ShallowClone { revision, .. } if *revision == w.c1), "{e}");
    assert!(e.to_string().contains("shallow clone"), "{e}");
}

#[test]
fn folders_that_are_not_repositories() {
    if !have_git("folders_that_are_not_repositories") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    // A folder outside any repository: the test's temporary folder has none above it.
    let e = Git::open(&plain).unwrap_err();
    assert!(matches!(&e, GitError::NotARepository { checkout, .. } if checkout.ends_with("plain")), "{e}");
    assert!(e.to_string().contains("not a git repository"), "{e}");
    let e = Git::open(dir.path().join("nope")).unwrap_err();
    assert!(matches!(e, GitError::NotARepository { .. }), "{e}");
    let e = GitProgram::with_program("/nonexistent/bin/git-not-here").unwrap_err();
    assert!(matches!(e, GitError::Missing { .. }) && e.to_string().contains("git is not available"), "{e}");
}

#[test]
fn ambiguous_short_ids_are_refused() {
    if !have_git("ambiguous_short_ids_are_refused") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sh(root, &["init", "-q"], "");
    // Many commits in one process, until two share their first four hex digits.
    let mut stream = String::new();
    for i in 0..600 {
        let from = if i == 0 { String::new() } else { "from :0\n".replace('0', &i.to_string()) };
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{}\ncommitter T <t@example.com> {} +0000\ndata {}\nc{i}\n{from}\n",
            i + 1,
            1_700_000_000 + i,
            format!("c{i}\n").len()
        ));
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(stream.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let all = sh(root, &["rev-list", "main"], "");
    let mut seen = std::collections::BTreeMap::new();
    let mut shared = None;
    for sha in all.lines() {
        if let Some(prev) = seen.insert(&sha[..4], sha) {
            shared = Some((sha[..4].to_string(), prev.to_string(), sha.to_string()));
            break;
        }
    }
    let (prefix, a, b) = shared.expect("600 commits share a 4-digit prefix somewhere");
    let git = Git::open(root).unwrap();
    let e = git.rev_parse(&prefix).unwrap_err();
    assert!(matches!(&e, GitError::AmbiguousRevision { revision, .. } if *revision == prefix), "{e}");
    assert_eq!(git.rev_parse(&a[..12]).unwrap(), a);
    assert_eq!(git.rev_parse(&b[..12]).unwrap(), b);
}

#[test]
fn files_and_lines_at_a_revision_in_one_process() {
    if !have_git("files_and_lines_at_a_revision_in_one_process") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let files = git.read_files(&w.c1, &["pkg/a.go", "pkg/b.go", "pkg", "./test/e2e/net_test.go"]).unwrap();
    assert_eq!(files[0].as_deref(), Some(&b"package a\n\nfunc A() {}\n"[..]));
    assert_eq!(files[1], None, "not there yet");
    assert_eq!(files[2], None, "a folder is not a file");
    assert!(files[3].is_some());
    assert_eq!(
        git.file_lines("HEAD", "pkg/a.go").unwrap().unwrap(),
        vec!["package a", "", "const timeout = 10", "const timeout2 = 1", "", "func A() {}"]
    );
    assert_eq!(git.read_file(&w.revert, "pkg/été.go").unwrap(), None, "the revert removed it");
    assert_eq!(git.file_history("pkg/a.go", 10).unwrap(), vec![w.c3.clone(), w.c2.clone(), w.c1.clone()]);
    assert_eq!(git.last_commit_before("HEAD", 1_767_362_400).unwrap(), Some(w.c2.clone()), "2026-01-02T14:00Z");
    assert_eq!(git.last_commit_before("HEAD", 1_000).unwrap(), None);
}

#[test]
fn the_history_of_a_string() {
    if !have_git("the_history_of_a_string") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let hits = git.pickaxe("timeout", None, 500).unwrap();
    let seen: Vec<(&str, usize, usize)> = hits.iter().map(|h| (h.commit.sha.as_str(), h.added, h.removed)).collect();
    assert_eq!(
        seen,
        vec![(w.c2.as_str(), 1, 0), (w.squash.as_str(), 1, 0), (w.revert.as_str(), 0, 1), (w.c3.as_str(), 1, 0)],
        "oldest first, occurrences on added and removed lines"
    );
    assert!(hits.iter().all(|h| h.commit.patch.is_empty()));
    let in_pkg_a = git.pickaxe("timeout", Some("pkg/a.go"), 500).unwrap();
    assert_eq!(in_pkg_a.len(), 2);
}

#[test]
fn grep_and_tracked_files() {
    if !have_git("grep_and_tracked_files") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let hits = git.grep("should handle MTU", Some("HEAD"), &[], 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].path.as_str(), hits[0].line), ("test/e2e/net_test.go", 1));
    assert!(hits[0].text.contains("It(\"should handle MTU changes\""));
    let timeouts = git.grep("timeout", None, &["pkg"], 10).unwrap();
    assert_eq!(timeouts.iter().map(|h| h.line).collect::<Vec<_>>(), vec![3, 4]);
    assert!(git.contains_text("timeout", Some(&w.squash), &["pkg/été.go"]).unwrap());
    assert!(!git.contains_text("timeout", Some(&w.revert), &["pkg/été.go"]).unwrap());
    assert!(git.grep("nothing like this", Some("HEAD"), &[], 10).unwrap().is_empty());
    assert_eq!(git.ls_files(&["pkg"]).unwrap(), vec!["pkg/a.go", "pkg/b.go"]);
}

#[test]
fn ancestry_and_pull_request_commits() {
    if !have_git("ancestry_and_pull_request_commits") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    assert!(git.is_ancestor(&w.f1, "HEAD").unwrap());
    assert!(!git.is_ancestor("HEAD", &w.f1).unwrap());
    assert_eq!(git.merge_base(&w.f1, &w.c2).unwrap(), Some(w.c1.clone()));
    let pr12 = git.find_pr_commit("HEAD", 12).unwrap().unwrap();
    assert_eq!((pr12.sha.as_str(), pr12.kind), (w.merge.as_str(), PrMerge::Merge));
    let pr34 = git.find_pr_commit("HEAD", 34).unwrap().unwrap();
    assert_eq!((pr34.sha.as_str(), pr34.kind), (w.squash.as_str(), PrMerge::Squash), "not its revert");
    assert_eq!(git.find_pr_commit("HEAD", 3).unwrap(), None, "#3 is not #34");
    assert_eq!(git.current_branch().unwrap().as_deref(), Some("main"));
    // An unrelated history shares nothing.
    sh(&w.root, &["checkout", "-q", "--orphan", "other"], "");
    let other = commit(&w.root, "Unrelated", "2026-01-07T10:00:00Z");
    assert_eq!(git.merge_base(&other, &w.c1).unwrap(), None);
    sh(&w.root, &["checkout", "-q", "--detach", &w.c2], "");
    assert_eq!(git.current_branch().unwrap(), None, "detached");
}

#[test]
fn which_tips_contain_a_commit_in_one_batch() {
    if !have_git("which_tips_contain_a_commit_in_one_batch") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let tips = [w.c1.as_str(), w.c2.as_str(), w.f1.as_str(), w.merge.as_str(), w.c3.as_str(), missing, "main"];
    let got = git.contained_in(&w.merge, &tips).unwrap();
    assert_eq!(got, [Some(false), Some(false), Some(false), Some(true), Some(true), None, Some(true)]);
    // The feature branch's own commit is in the merge's history, and so in every later tip.
    assert_eq!(git.contained_in(&w.f1, &tips).unwrap()[2..5], [Some(true), Some(true), Some(true)]);
    assert_eq!(git.contained_in(&w.merge, &[missing]).unwrap(), [None]);
    assert!(git.contained_in(&w.merge, &[]).unwrap().is_empty());
    assert!(matches!(git.contained_in(missing, &tips), Err(GitError::UnknownRevision { .. })));
    assert!(matches!(git.contained_in(&w.merge, &["--all"]), Err(GitError::BadArgument { .. })));
}

#[test]
fn the_revert_pre_check_leaves_the_checkout_as_it_was() {
    if !have_git("the_revert_pre_check_leaves_the_checkout_as_it_was") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    let clean = git.revert_check(&w.c3).unwrap();
    assert!(clean.clean && clean.conflicts.is_empty() && clean.refused.is_none(), "{clean:?}");
    assert_eq!(clean.base, w.c3);
    // Reverting c2 conflicts with c3, which changed the same lines since.
    let conflicting = git.revert_check(&w.c2).unwrap();
    assert!(!conflicting.clean);
    assert_eq!(conflicting.conflicts, vec!["pkg/a.go"]);
    // A merge is reverted against its first parent.
    let merged = git.revert_check(&w.merge).unwrap();
    assert!(merged.clean, "{merged:?}");
    assert_eq!(sh(&w.root, &["status", "--porcelain"], ""), "", "the checkout is untouched");
    assert_eq!(sh(&w.root, &["worktree", "list"], "").lines().count(), 1, "the scratch worktree is gone");
    assert!(matches!(git.revert_check("0123456789abcdef"), Err(GitError::UnknownRevision { .. })));
}

#[test]
fn arguments_that_try_to_be_options_are_refused() {
    if !have_git("arguments_that_try_to_be_options_are_refused") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap();
    for rev in ["--output=/tmp/x", "-p", "HEAD..main", "a b", "x\ny", ""] {
        let e = git.rev_parse(rev).unwrap_err();
        assert!(matches!(e, GitError::BadArgument { what: "revision", .. }), "{rev:?}: {e}");
    }
    let e = git.log(&LogQuery::range("--all", "HEAD")).unwrap_err();
    assert!(matches!(e, GitError::BadArgument { .. }), "{e}");
    let e = git.read_file("HEAD", "pkg/a.go\nHEAD:pkg/b.go").unwrap_err();
    assert!(matches!(e, GitError::BadArgument { what: "path", .. }), "{e}");
    let e = git.grep("a\nb", None, &[], 1).unwrap_err();
    assert!(matches!(e, GitError::BadArgument { .. }), "{e}");
    // A pathspec is a path, never an option: it comes after `--`.
    assert!(git.file_history("--all", 5).unwrap().is_empty());
}

#[test]
fn output_is_bounded() {
    if !have_git("output_is_bounded") {
        return;
    }
    let w = world();
    let git = Git::open(&w.root).unwrap().with_output_limit(200);
    let e = git.log(&LogQuery::of("HEAD").with_patches()).unwrap_err();
    assert!(matches!(e, GitError::OutputTooLarge { limit: 200, .. }), "{e}");
    assert!(e.to_string().contains("more than 200 bytes"), "{e}");
}
