//! Which builds contain a fix, read from a real git repository this test makes (a fix
//! merged into master from its branch; a release branch cut before it; a pull request
//! based before it) and the builds' tested commits, through the checkouts a refresh is
//! given (`--checkout OWNER/REPO=PATH`):
//!
//! - a master build that started after the merge but tested a commit from before it,
//!   and a pull request's build based before the fix, both failing with the pattern,
//!   make time call the fix failed; git ancestry does not count them, and the fix is
//!   confirmed by the builds that contain it, the reason saying ancestry decided;
//! - the release branch's job failing after the merge is still *failed after fix*
//!   (the incomplete fix: the cherry-pick is missing), by ancestry as by time;
//! - a checkout that lacks the merge commit leaves the fix to time and says so.

use citriage_analysis::resolution::{
    evaluate, Ancestry, ByTime, Containment, Evaluation, Facts, LinkFact, RefKind, RefStatus, State,
};
use citriage_app::containment::{Checkouts, FixCommit};
use citriage_app::records::run_of;
use citriage_model::time::{DAY, HOUR};
use citriage_store::PatternRun;
use std::path::Path;
use std::process::Command;

/// 2026-11-01 00:00:00 UTC.
const T0: i64 = 1_793_491_200;
const MERGE: i64 = T0 + 4 * DAY;
const REPO: &str = "kubernetes/kubernetes";

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .env_remove("GIT_DIR")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn commit(root: &Path, msg: &str) -> String {
    git(root, &["commit", "-q", "--allow-empty", "-m", msg]);
    git(root, &["rev-parse", "HEAD"])
}

/// The history:
///
/// ```text
/// master:       a ── b ─────────── M (merge of the fix) ── c
///                \    \         /
/// fix:            \    \── f ──/
/// release-1.35:    \── r
/// pull #77:             └── p
/// ```
struct History {
    a: String,
    b: String,
    merge: String,
    c: String,
    r: String,
    p: String,
}

fn history(root: &Path) -> History {
    git(root, &["init", "-q", "-b", "master"]);
    let a = commit(root, "a");
    let b = commit(root, "b");
    git(root, &["checkout", "-q", "-b", "fix"]);
    commit(root, "the fix");
    git(root, &["checkout", "-q", "-b", "pull-77", &b]);
    let p = commit(root, "a pull request based before the fix");
    git(root, &["checkout", "-q", "-b", "release-1.35", &a]);
    let r = commit(root, "r");
    git(root, &["checkout", "-q", "master"]);
    git(root, &["merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #100 from someone/fix"]);
    let merge = git(root, &["rev-parse", "HEAD"]);
    let c = commit(root, "c");
    History { a, b, merge, c, r, p }
}

fn run(job: &str, id: u64, started: i64, hit: bool, repos: &str) -> PatternRun {
    PatternRun {
        job: job.into(),
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{id}"),
        build_id: id.to_string(),
        started,
        result: Some(if hit { "FAILURE" } else { "SUCCESS" }.into()),
        complete: true,
        failed_tests: i64::from(hit),
        repo_commit: None,
        repos: Some(repos.to_string()),
        hit,
    }
}

/// Master every 3 hours for 8 days (pattern on every other run before the fix, testing
/// `a` then `b`; clean after it, testing `c`), a stale master build and a pull request's
/// build after the merge testing commits without the fix, both failing with the
/// pattern; and with `release`, the release branch's job failing every other run
/// throughout.
fn runs(h: &History, release: bool) -> Vec<PatternRun> {
    let mut v = Vec::new();
    for i in 0..64u64 {
        let t = T0 + (i as i64) * 3 * HOUR;
        let (sha, hit) = if t < MERGE { (if i < 16 { &h.a } else { &h.b }, i % 2 == 0) } else { (&h.c, false) };
        if (MERGE..MERGE + 3 * HOUR).contains(&t) {
            continue;
        }
        v.push(run("ci-master", 1000 + i, t, hit, &format!(r#"{{"{REPO}": "master:{sha}"}}"#)));
        if release {
            v.push(run(
                "ci-release-1-35",
                5000 + i,
                t + 60,
                i % 2 == 1,
                &format!(r#"{{"{REPO}": "release-1.35:{}"}}"#, h.r),
            ));
        }
    }
    v.push(run("ci-master", 2000, MERGE + HOUR, true, &format!(r#"{{"{REPO}": "master:{}"}}"#, h.b)));
    v.push(run("pull-e2e", 3000, MERGE + 2 * HOUR, true, &format!(r#"{{"{REPO}": "master:{},77:{}"}}"#, h.b, h.p)));
    v
}

fn fix_link(h: &History) -> LinkFact {
    LinkFact {
        reference: format!("{REPO}#100"),
        kind: RefKind::Pr,
        status: RefStatus::Merged { at: MERGE, commit: Some(h.merge.clone()), base: Some("master".into()) },
        linked_at: T0 + DAY,
        unlinked_at: None,
        evidence: Vec::new(),
    }
}

fn eval(h: &History, pattern_runs: &[PatternRun], ancestry: &dyn Ancestry) -> Evaluation {
    let links = [fix_link(h)];
    let runs: Vec<_> = pattern_runs.iter().map(run_of).collect();
    evaluate(
        &Facts { state: State::New, since: T0, history: &[], links: &links, runs: &runs, now: T0 + 8 * DAY },
        ancestry,
    )
}

fn have_git() -> bool {
    let ok = Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: no git program");
    }
    ok
}

#[test]
fn git_ancestry_of_the_tested_commits_decides_which_builds_contain_the_fix() {
    if !have_git() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kubernetes");
    std::fs::create_dir_all(&root).unwrap();
    let h = history(&root);
    let checkouts = Checkouts::open(&[format!("{REPO}={}", root.display())]).unwrap();
    let fixes = [FixCommit { repo: REPO.into(), commit: h.merge.clone() }];

    // Master and the stale builds only.
    let only_master = runs(&h, false);
    let by_time = eval(&h, &only_master, &ByTime);
    assert_eq!(by_time.state, State::FailedAfterFix, "{by_time:?}");
    let wrong = by_time.steps.last().unwrap();
    assert!(wrong.reason.starts_with("ci-master/2000 "), "time blames the stale build: {}", wrong.reason);
    let answers = checkouts.answers(&fixes, &only_master);
    let by_git = eval(&h, &only_master, &answers);
    let states: Vec<State> = by_git.steps.iter().map(|s| s.to).collect();
    assert_eq!(states, [State::Triaged, State::FixMerged, State::FixConfirmed], "{:#?}", by_git.steps);
    let confirmed = by_git.steps.last().unwrap();
    assert!(confirmed.reason.contains("told by git ancestry of their tested commits"), "{}", confirmed.reason);
    assert_eq!(by_git.fix.as_ref().unwrap().containment, Containment::Ancestry);
    assert!(by_time.fix.as_ref().unwrap().containment == Containment::Time);
    for s in &by_git.steps {
        assert!(!s.reason.contains("ci-master/2000") && !s.reason.contains("pull-e2e/3000"), "{}", s.reason);
    }
    // The confirming run is a master build that contains the fix, after the merge.
    assert!(confirmed.at > MERGE + 2 * HOUR, "{}", confirmed.at);

    // With the release branch's job: the incomplete fix still fails after fix, by
    // ancestry as by time, at the release job's first failure after the merge.
    let with_release = runs(&h, true);
    let first_release = with_release
        .iter()
        .filter(|r| r.job == "ci-release-1-35" && r.hit && r.started >= MERGE)
        .map(|r| r.started)
        .min()
        .unwrap();
    let answers = checkouts.answers(&fixes, &with_release);
    let by_git = eval(&h, &with_release, &answers);
    assert_eq!(by_git.state, State::FailedAfterFix, "{:#?}", by_git.steps);
    assert_eq!(by_git.since, first_release);
    let why = &by_git.steps.last().unwrap().reason;
    assert!(why.starts_with("ci-release-1-35/"), "{why}");
    assert!(why.contains("a cherry-pick to release-1.35 is missing"), "{why}");
    let by_time = eval(&h, &with_release, &ByTime);
    assert_eq!(by_time.state, State::FailedAfterFix);
    assert!(by_time.steps.last().unwrap().reason.starts_with("ci-master/2000 "), "time still blames the stale build");

    // A checkout without the merge commit: time decides, and it is said.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q", "-b", "master"]);
    commit(&other, "unrelated");
    let lacking = Checkouts::open(&[format!("{REPO}={}", other.display())]).unwrap();
    let answers = lacking.answers(&fixes, &only_master);
    let e = eval(&h, &only_master, &answers);
    assert_eq!(e.state, State::FailedAfterFix);
    assert_eq!(e.fix.as_ref().unwrap().containment, Containment::Time);
    assert!(e.steps.last().unwrap().reason.contains("no checkout to read its tested commit"));
    let u = lacking.unanswered();
    assert_eq!(u.len(), 1, "{u:?}");
    assert!(u[0].contains(&h.merge) && u[0].contains("time decides"), "{u:?}");

    // A checkout of another repository is not asked about this one's fix.
    let unrelated = Checkouts::open(&[format!("kubernetes/test-infra={}", root.display())]).unwrap();
    assert_eq!(eval(&h, &only_master, &unrelated.answers(&fixes, &only_master)).state, State::FailedAfterFix);
    // Bad checkouts are bad input naming the value.
    let e = Checkouts::open(&["kubernetes/kubernetes".into()]).unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("expected name=path"), "{e}");
    let e = Checkouts::open(&[format!("{REPO}={}", dir.path().join("nowhere").display())]).unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("nowhere"), "{e}");
    let _ = (&h.a, &h.p);
}
