use super::*;
use citriage_model::time::{DAY, HOUR};
use citriage_model::EvidenceKind;

const T0: i64 = 1_790_000_000;

fn ev(what: &str) -> Evidence {
    Evidence::new(EvidenceKind::BuildResult, what, what, "", "2026-09-21")
}

fn run(job: &str, n: i64, started: i64, outcome: Outcome, branch: &str) -> Run {
    Run {
        job: job.into(),
        build: format!("{job}/{n}"),
        started,
        outcome,
        tested: Some(format!("{n:040x}")),
        branch: Some(branch.into()),
        evidence: ev(&format!("{job}/{n}")),
    }
}

/// A job every `every` seconds from T0 for `days`, failing with the pattern on the
/// runs `fails` says (by index), on `branch`.
fn job_runs(job: &str, every: i64, until: i64, branch: &str, fails: impl Fn(usize, i64) -> bool) -> Vec<Run> {
    (0..)
        .map(|i| (i, T0 + i as i64 * every))
        .take_while(|(_, t)| *t < until)
        .map(|(i, t)| run(job, i as i64, t, if fails(i, t) { Outcome::Pattern } else { Outcome::Clean }, branch))
        .collect()
}

fn link(reference: &str, at: i64, kind: RefKind, status: RefStatus) -> LinkFact {
    LinkFact {
        reference: reference.into(),
        kind,
        status,
        linked_at: at,
        unlinked_at: None,
        evidence: vec![ev(reference)],
    }
}

fn merged(at: i64, base: &str) -> RefStatus {
    RefStatus::Merged { at, commit: Some("f1".repeat(20)), base: Some(base.into()) }
}

/// Evaluates once at `now` from a fresh record.
fn once(links: &[LinkFact], runs: &[Run], now: i64, a: &dyn Ancestry) -> Evaluation {
    evaluate(&Facts { state: State::New, since: T0, history: &[], links, runs, now }, a)
}

/// Evaluates at the end of each day, feeding back the state and history as a store
/// would, with the links and runs known by then: the steps of every day.
fn daily(links: &[LinkFact], runs: &[Run], days: i64, a: &dyn Ancestry) -> Vec<Step> {
    let (mut state, mut since) = (State::New, T0);
    let mut history: Vec<(State, State, i64)> = Vec::new();
    let mut all = Vec::new();
    for d in 0..days {
        let now = T0 + (d + 1) * DAY;
        let known_links: Vec<LinkFact> = links.iter().filter(|l| l.linked_at <= now).cloned().collect();
        let known_runs: Vec<Run> = runs.iter().filter(|r| r.started <= now).cloned().collect();
        let e = evaluate(&Facts { state, since, history: &history, links: &known_links, runs: &known_runs, now }, a);
        for s in &e.steps {
            history.push((s.from, s.to, s.at));
        }
        state = e.state;
        since = e.since;
        all.extend(e.steps);
    }
    all
}

fn path(steps: &[Step]) -> Vec<(State, i64)> {
    steps.iter().map(|s| (s.to, s.at)).collect()
}

#[test]
fn a_link_triages_a_missing_reference_does_not_and_unlinking_goes_back() {
    let mut gone = link("o/r#404", T0 + HOUR, RefKind::Unknown, RefStatus::NotFound);
    let e = once(std::slice::from_ref(&gone), &[], T0 + DAY, &ByTime);
    assert!(e.steps.is_empty(), "{e:?}");
    let issue = link("o/r#7", T0 + 2 * HOUR, RefKind::Issue, RefStatus::Open);
    let e = once(&[gone.clone(), issue.clone()], &[], T0 + DAY, &ByTime);
    assert_eq!(path(&e.steps), [(State::Triaged, T0 + 2 * HOUR)]);
    assert_eq!(e.steps[0].evidence, vec![ev("o/r#7")]);
    assert!(e.steps[0].reason.contains("issue o/r#7 linked"), "{}", e.steps[0].reason);
    // Unlinked later: back to new at the unlink time.
    let mut unlinked = issue.clone();
    unlinked.unlinked_at = Some(T0 + 5 * HOUR);
    gone.unlinked_at = None;
    let e = evaluate(
        &Facts {
            state: State::Triaged,
            since: T0 + 2 * HOUR,
            history: &[(State::New, State::Triaged, T0 + 2 * HOUR)],
            links: &[gone, unlinked],
            runs: &[],
            now: T0 + DAY,
        },
        &ByTime,
    );
    assert_eq!(path(&e.steps), [(State::New, T0 + 5 * HOUR)]);
}

#[test]
fn a_closed_unmerged_pull_request_triages_but_never_fixes() {
    let l = link("o/r#9", T0, RefKind::Pr, RefStatus::ClosedUnmerged);
    let runs = job_runs("ci-a", 4 * HOUR, T0 + 10 * DAY, "master", |i, _| i % 2 == 0);
    let e = once(&[l], &runs, T0 + 10 * DAY, &ByTime);
    assert_eq!(path(&e.steps), [(State::Triaged, T0)]);
    assert_eq!((e.fix, e.confirmation), (None, None));
}

/// The first clean run after `merge` at which the product rule falls under 5%,
/// computed here from scratch.
fn expected_confirmation(runs: &[Run], merge: i64) -> i64 {
    let mut before: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.started < merge && r.started >= merge - 14 * DAY) {
        let e = before.entry(&r.job).or_default();
        e.0 += 1.0;
        e.1 += f64::from(u8::from(r.outcome == Outcome::Pattern));
    }
    let mut sorted: Vec<&Run> = runs.iter().filter(|r| r.started >= merge).collect();
    sorted.sort_by_key(|r| (r.started, r.job.clone()));
    let mut log = 0.0;
    for r in sorted {
        let (n, f) = before[r.job.as_str()];
        log += (1.0 - f / (n + 1.0)).ln();
        if log < 0.05f64.ln() {
            return r.started;
        }
    }
    panic!("never confirmed");
}

#[test]
fn a_working_fix_is_merged_then_confirmed_when_the_statistics_allow_and_not_before() {
    let merge = T0 + 10 * DAY + 5 * HOUR;
    // Two jobs: one fails every other run, one every third; both clean after the fix.
    let mut runs = job_runs("ci-a", 4 * HOUR, T0 + 14 * DAY, "master", |i, t| t < merge && i % 2 == 0);
    runs.extend(job_runs("ci-b", 6 * HOUR, T0 + 14 * DAY, "master", |i, t| t < merge && i % 3 == 0));
    let links = [
        link("o/r#1", T0 + 2 * DAY, RefKind::Issue, RefStatus::Open),
        link("o/r#2", T0 + 3 * DAY, RefKind::Pr, merged(merge, "master")),
    ];
    let want = expected_confirmation(&runs, merge);
    let e = once(&links, &runs, T0 + 14 * DAY, &ByTime);
    assert_eq!(
        path(&e.steps),
        [(State::Triaged, T0 + 2 * DAY), (State::FixMerged, merge), (State::FixConfirmed, want)]
    );
    assert!(e.steps[2].reason.contains("by chance"), "{}", e.steps[2].reason);
    assert_eq!(e.fix.as_ref().map(|f| f.containment), Some(Containment::Time));
    // The day by day evaluation reaches the same states at the same times.
    assert_eq!(path(&daily(&links, &runs, 14, &ByTime)), path(&e.steps));
    // Just before the confirming run: fix merged, with the runs still needed.
    let early: Vec<Run> = runs.iter().filter(|r| r.started < want).cloned().collect();
    let e = once(&links, &early, want - 1, &ByTime);
    assert_eq!(e.state, State::FixMerged);
    let c = e.confirmation.unwrap();
    assert!(!c.confirmed && c.chance >= stats::ALPHA, "{c:?}");
    assert_eq!(c.jobs.iter().map(|j| j.more_runs).sum::<u64>(), 1, "{c:?}");
    assert!(c.plan.starts_with("1 more run of "), "{}", c.plan);
    assert_eq!(c.eta, Some(want));
}

#[test]
fn a_fix_that_does_not_work_fails_after_fix_at_the_first_failure_in_a_build_with_it() {
    let merge = T0 + 5 * DAY + 30;
    let runs = job_runs("ci-a", 4 * HOUR, T0 + 9 * DAY, "master", |i, _| i % 3 == 0);
    let links = [link("o/r#2", T0 + DAY, RefKind::Pr, merged(merge, "master"))];
    let first = runs.iter().find(|r| r.started >= merge && r.outcome == Outcome::Pattern).unwrap().started;
    let e = once(&links, &runs, T0 + 9 * DAY, &ByTime);
    assert_eq!(path(&e.steps), [(State::Triaged, T0 + DAY), (State::FixMerged, merge), (State::FailedAfterFix, first)]);
    assert!(e.steps[2].reason.contains("failed with the pattern after the fix merged"), "{}", e.steps[2].reason);
    assert!(e.steps[2].reason.contains("after the merge (no checkout"), "{}", e.steps[2].reason);
    assert_eq!(path(&daily(&links, &runs, 9, &ByTime)), path(&e.steps));
    // A newer fix that works: fix merged again, then confirmed.
    let merge2 = T0 + 9 * DAY + 10;
    let mut runs = runs;
    runs.extend(
        job_runs("ci-a", 4 * HOUR, T0 + 13 * DAY, "master", |_, _| false)
            .into_iter()
            .filter(|r| r.started >= T0 + 9 * DAY)
            .map(|mut r| {
                r.build.push('b');
                r
            }),
    );
    let mut links = links.to_vec();
    links.push(link("o/r#3", T0 + 8 * DAY, RefKind::Pr, merged(merge2, "master")));
    let e = once(&links, &runs, T0 + 13 * DAY, &ByTime);
    let states: Vec<State> = e.steps.iter().map(|s| s.to).collect();
    assert_eq!(
        states,
        [State::Triaged, State::FixMerged, State::FailedAfterFix, State::FixMerged, State::FixConfirmed]
    );
    assert_eq!(e.steps[3].at, merge2);
}

/// Ancestry as a checkout would answer it: master builds started after the merge
/// contain the merge commit; release-branch builds never do.
struct Checkout {
    merge: i64,
}

impl Ancestry for Checkout {
    fn contains(&self, _: &str, run: &Run) -> Option<bool> {
        Some(run.branch.as_deref() == Some("master") && run.started >= self.merge)
    }
}

#[test]
fn a_fix_of_one_branch_fails_after_fix_on_the_other_branchs_jobs_by_time_and_by_ancestry() {
    let merge = T0 + 4 * DAY + 100;
    let mut runs = job_runs("ci-master", 6 * HOUR, T0 + 8 * DAY, "master", |i, t| t < merge && i % 2 == 0);
    runs.extend(job_runs("ci-release-1-35", 6 * HOUR + 60, T0 + 8 * DAY, "release-1.35", |i, _| i % 2 == 1));
    let links = [link("o/r#5", T0 + DAY, RefKind::Pr, merged(merge, "master"))];
    let first =
        runs.iter().filter(|r| r.started >= merge && r.outcome == Outcome::Pattern).map(|r| r.started).min().unwrap();
    for (name, a) in [("time", &ByTime as &dyn Ancestry), ("ancestry", &Checkout { merge })] {
        let e = once(&links, &runs, T0 + 8 * DAY, a);
        assert_eq!(e.state, State::FailedAfterFix, "{name}: {e:?}");
        assert_eq!(e.since, first, "{name}");
        let why = &e.steps.last().unwrap().reason;
        assert!(why.starts_with("ci-release-1-35/"), "{name}: {why}");
        assert!(why.contains("failed again after the fix"), "{name}: {why}");
        if name == "time" {
            assert!(why.contains("incomplete, a cherry-pick to release-1.35 is needed"), "{why}");
        } else {
            assert!(why.contains("a cherry-pick to release-1.35 is missing"), "{why}");
            assert_eq!(e.fix.as_ref().unwrap().containment, Containment::Ancestry);
        }
        assert_eq!(path(&daily(&links, &runs, 8, a)), path(&e.steps), "{name}");
    }
}

#[test]
fn a_confirmed_fix_reopens_when_the_pattern_returns_and_only_a_newer_fix_counts() {
    let merge = T0 + 3 * DAY;
    let back = T0 + 9 * DAY + 7;
    let mut runs = job_runs("ci-a", 3 * HOUR, T0 + 12 * DAY, "master", |i, t| t < merge && i % 2 == 0);
    runs.push(run("ci-a", 999, back, Outcome::Pattern, "master"));
    let links = [link("o/r#2", T0, RefKind::Pr, merged(merge, "master"))];
    let e = once(&links, &runs, T0 + 12 * DAY, &ByTime);
    let states: Vec<State> = e.steps.iter().map(|s| s.to).collect();
    assert_eq!(states, [State::Triaged, State::FixMerged, State::FixConfirmed, State::Triaged]);
    assert_eq!(e.steps[3].at, back);
    assert!(e.steps[3].reason.starts_with("re-opened"), "{}", e.steps[3].reason);
    assert_eq!(path(&daily(&links, &runs, 12, &ByTime)), path(&e.steps));
    // The stored history keeps the old fix out.
    let history: Vec<(State, State, i64)> = e.steps.iter().map(|s| (s.from, s.to, s.at)).collect();
    let later = evaluate(
        &Facts {
            state: State::Triaged,
            since: back,
            history: &history,
            links: &links,
            runs: &runs,
            now: T0 + 20 * DAY,
        },
        &ByTime,
    );
    assert!(later.steps.is_empty(), "{later:?}");
}

#[test]
fn the_order_of_the_facts_does_not_matter() {
    let merge = T0 + 5 * DAY;
    let mut runs = job_runs("ci-a", 4 * HOUR, T0 + 9 * DAY, "master", |i, t| t < merge && i % 2 == 0);
    runs.extend(job_runs("ci-b", 4 * HOUR, T0 + 9 * DAY, "master", |i, t| t < merge && i % 2 == 1));
    let links = [
        link("o/r#2", T0 + DAY, RefKind::Pr, merged(merge, "master")),
        link("o/r#1", T0 + DAY, RefKind::Issue, RefStatus::Open),
    ];
    let a = once(&links, &runs, T0 + 9 * DAY, &ByTime);
    runs.reverse();
    let mut l2 = links.to_vec();
    l2.reverse();
    let b = once(&l2, &runs, T0 + 9 * DAY, &ByTime);
    assert_eq!(a, b);
    // Ties between links: the reference decides.
    assert!(a.steps[0].reason.contains("o/r#1"), "{}", a.steps[0].reason);
}
