//! The rules' hysteresis, turn by turn: every state change alerts once, nothing alerts
//! while a state holds, a withdrawal is said once, flaky tests never make a pattern
//! alert.

use citriage_alerts::observe::FailingRun;
use citriage_alerts::*;
use citriage_model::time::DAY;
use citriage_model::{Day, Evidence, EvidenceKind};
use std::collections::{BTreeMap, BTreeSet};

const T0: i64 = 1_795_000_000 - 1_795_000_000 % DAY;

fn run(job: &str, i: i64, r: RunResult) -> Run {
    let id = format!("{}", 1_795_000_000_000_000_000i64 + i);
    let url = format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{job}/{id}");
    Run {
        build_id: id,
        url: url.clone(),
        started: T0 + i * 3600,
        result: r,
        evidence: Evidence::new(EvidenceKind::BuildResult, format!("{url}/finished.json"), format!("{r:?}"), "", "d"),
    }
}

fn job(name: &str, results: &str) -> JobRuns {
    let runs = results
        .chars()
        .enumerate()
        .map(|(i, c)| {
            run(
                name,
                i as i64,
                match c {
                    'P' => RunResult::Pass,
                    'F' => RunResult::Fail,
                    _ => RunResult::Other,
                },
            )
        })
        .collect();
    JobRuns { job: name.into(), owner: "sig-node".into(), runs }
}

/// Runs turns one after the other, remembering states as the store does.
#[derive(Default)]
struct Turns {
    rules: Rules,
    states: BTreeMap<StateKey, State>,
    said: Vec<Alert>,
}

impl Turns {
    fn turn(&mut self, obs: &Observation) -> Vec<Alert> {
        let out = evaluate(&self.rules, &self.states, obs);
        // Same inputs, same answer.
        assert_eq!(evaluate(&self.rules, &self.states, obs), out);
        self.states.extend(out.states);
        self.said.extend(out.alerts.iter().cloned());
        out.alerts
    }

    fn kinds(alerts: &[Alert]) -> Vec<(AlertKind, Change)> {
        alerts.iter().map(|a| (a.kind, a.change)).collect()
    }
}

fn jobs(j: JobRuns) -> Observation {
    Observation { as_of: T0 + 40 * 3600, jobs: vec![j], ..Default::default() }
}

#[test]
fn a_job_turns_red_after_n_failures_and_green_after_m_passes_once_each() {
    let mut t = Turns::default();
    assert!(t.turn(&jobs(job("ci-a", "PPFF"))).is_empty(), "two failures are not red");
    let red = t.turn(&jobs(job("ci-a", "PPFFF")));
    assert_eq!(Turns::kinds(&red), [(AlertKind::JobRed, Change::Raised)]);
    assert_eq!(red[0].evidence.len(), 3);
    assert_eq!(red[0].owner, "sig-node");
    assert!(text::markdown(&red[0]).contains("failed its last 3 runs"), "{}", text::markdown(&red[0]));
    // The state holds: more failures, an aborted run, nothing new.
    assert!(t.turn(&jobs(job("ci-a", "PPFFFF"))).is_empty());
    assert!(t.turn(&jobs(job("ci-a", "PPFFFFA"))).is_empty());
    let green = t.turn(&jobs(job("ci-a", "PPFFFFAP")));
    assert_eq!(Turns::kinds(&green), [(AlertKind::JobRed, Change::Withdrawn)]);
    assert_eq!(green[0].withdraws.as_deref(), Some(red[0].key.as_str()));
    assert!(t.turn(&jobs(job("ci-a", "PPFFFFAPP"))).is_empty(), "a withdrawal is said once");
    assert!(t.turn(&jobs(job("ci-a", "PPFFFFAPPFF"))).is_empty());
    let again = t.turn(&jobs(job("ci-a", "PPFFFFAPPFFF")));
    assert_eq!(Turns::kinds(&again), [(AlertKind::JobRed, Change::Raised)]);
    assert_ne!(again[0].key, red[0].key, "a new streak is a new alert");
}

#[test]
fn with_two_passes_to_clear_one_pass_between_failures_keeps_the_job_red() {
    let mut t = Turns { rules: Rules { passes_to_clear: 2, ..Rules::default() }, ..Default::default() };
    assert_eq!(t.turn(&jobs(job("ci-a", "FFF"))).len(), 1);
    assert!(t.turn(&jobs(job("ci-a", "FFFP"))).is_empty());
    assert!(t.turn(&jobs(job("ci-a", "FFFPFFF"))).is_empty(), "still the same red");
    assert_eq!(Turns::kinds(&t.turn(&jobs(job("ci-a", "FFFPFFFPP")))), [(AlertKind::JobRed, Change::Withdrawn)]);
}

#[test]
fn two_evaluators_of_the_same_data_give_the_same_keys() {
    let obs = jobs(job("ci-a", "PFFF"));
    let a = evaluate(&Rules::default(), &BTreeMap::new(), &obs);
    // Later data of the same streak: the same alert.
    let b = evaluate(&Rules::default(), &BTreeMap::new(), &jobs(job("ci-a", "PFFFF")));
    assert_eq!(a.alerts[0].key, b.alerts[0].key);
}

fn pattern(id: &str, first_seen: i64, daily: &[(i64, &str, &str, u64)]) -> PatternSeries {
    PatternSeries {
        id: id.into(),
        owner: "storage".into(),
        text: "timed out waiting for the condition".into(),
        first_seen,
        daily: daily
            .iter()
            .map(|(d, j, t, n)| PatternDay { day: Day(d / DAY), job: j.to_string(), test: t.to_string(), failures: *n })
            .collect(),
        recent: vec![FailingRun { job: "ci-a".into(), test: "t1".into(), run: run("ci-a", 1, RunResult::Fail) }],
    }
}

fn pats(as_of: i64, p: Vec<PatternSeries>, flaky: &[(&str, &str)]) -> Observation {
    Observation {
        as_of,
        history_start: Some(T0 - 10 * DAY),
        patterns: p,
        flaky: flaky.iter().map(|(j, t)| (j.to_string(), t.to_string())).collect::<BTreeSet<_>>(),
        ..Default::default()
    }
}

#[test]
fn a_new_pattern_alerts_once_and_is_withdrawn_once_when_quiet() {
    let mut t = Turns::default();
    let seen = T0 + 3600;
    let few = pattern("c1", seen, &[(T0, "ci-a", "t1", 4)]);
    assert!(t.turn(&pats(T0 + 5 * 3600, vec![few], &[])).is_empty(), "under the threshold");
    let many = pattern("c1", seen, &[(T0, "ci-a", "t1", 8), (T0 + DAY, "ci-b", "t1", 4)]);
    let new = t.turn(&pats(T0 + DAY + 3600, vec![many.clone()], &[]));
    assert_eq!(Turns::kinds(&new), [(AlertKind::PatternNew, Change::Raised)]);
    assert!(text::plain(&new[0]).contains("12 times on 2 jobs"), "{}", text::plain(&new[0]));
    assert!(t.turn(&pats(T0 + DAY + 7200, vec![many.clone()], &[])).is_empty());
    // Two quiet days are not enough, three are.
    assert!(t.turn(&pats(T0 + 3 * DAY + 7200, vec![many.clone()], &[])).is_empty());
    let gone = t.turn(&pats(T0 + 4 * DAY + 7200, vec![many.clone()], &[]));
    assert_eq!(Turns::kinds(&gone), [(AlertKind::PatternNew, Change::Withdrawn)]);
    assert_eq!(gone[0].owner, "storage");
    assert!(t.turn(&pats(T0 + 5 * DAY, vec![many.clone()], &[])).is_empty());
    // It comes back: no longer new.
    let back = pattern("c1", seen, &[(T0 + 6 * DAY, "ci-a", "t1", 30)]);
    assert!(t.turn(&pats(T0 + 6 * DAY + 60, vec![back], &[])).is_empty());
}

#[test]
fn a_pattern_is_not_new_when_the_store_only_just_began() {
    let mut t = Turns::default();
    let p = pattern("c1", T0 + 60, &[(T0, "ci-a", "t1", 50)]);
    let mut obs = pats(T0 + 3600, vec![p], &[]);
    obs.history_start = Some(T0);
    assert!(t.turn(&obs).is_empty());
}

#[test]
fn flaky_tests_never_make_a_pattern_alert() {
    let mut t = Turns::default();
    let p = pattern("c1", T0 + 60, &[(T0, "ci-a", "flaky", 40), (T0, "ci-b", "flaky", 40), (T0, "ci-a", "t1", 3)]);
    assert!(t.turn(&pats(T0 + 3600, vec![p.clone()], &[("ci-a", "flaky"), ("ci-b", "flaky")])).is_empty());
    // The same failures when nothing flags the test: an alert.
    let mut u = Turns::default();
    assert_eq!(u.turn(&pats(T0 + 3600, vec![p], &[])).len(), 1);
    // Growth made of flaky failures: nothing.
    let mut g = Turns::default();
    let p = pattern("c2", T0 - 9 * DAY, &[(T0 - DAY, "ci-a", "flaky", 90), (T0 - 3 * DAY, "ci-a", "flaky", 1)]);
    assert!(g.turn(&pats(T0 + 60, vec![p], &[("ci-a", "flaky")])).is_empty());
}

#[test]
fn growth_alerts_on_complete_days_and_falls_back_once() {
    let mut t = Turns::default();
    let old = T0 - 9 * DAY;
    let d = |n: i64| T0 + n * DAY;
    let steady =
        vec![(d(-4), "ci-a", "t1", 5), (d(-3), "ci-a", "t1", 5), (d(-2), "ci-a", "t1", 5), (d(-1), "ci-a", "t1", 5)];
    assert!(t.turn(&pats(d(0) + 60, vec![pattern("c1", old, &steady)], &[])).is_empty());
    // Today's failures do not count until the day is over.
    let mut today = steady.clone();
    today.push((d(0), "ci-a", "t1", 80));
    assert!(t.turn(&pats(d(0) + 80_000, vec![pattern("c1", old, &today)], &[])).is_empty());
    let grown = t.turn(&pats(d(1) + 60, vec![pattern("c1", old, &today)], &[]));
    assert_eq!(Turns::kinds(&grown), [(AlertKind::PatternGrowing, Change::Raised)]);
    assert!(text::plain(&grown[0]).contains("failed 85 times over the 2 days"), "{}", text::plain(&grown[0]));
    let mut high = today.clone();
    high.push((d(1), "ci-a", "t1", 40));
    assert!(t.turn(&pats(d(2) + 60, vec![pattern("c1", old, &high)], &[])).is_empty(), "still high");
    // Falls back to its earlier level (10 per 2 days, ×1.5 = 15).
    let mut low = high.clone();
    low.extend([(d(2), "ci-a", "t1", 6), (d(3), "ci-a", "t1", 6)]);
    let back = t.turn(&pats(d(4) + 60, vec![pattern("c1", old, &low)], &[]));
    assert_eq!(Turns::kinds(&back), [(AlertKind::PatternGrowing, Change::Withdrawn)]);
    assert!(t.turn(&pats(d(4) + 120, vec![pattern("c1", old, &low)], &[])).is_empty());
}

#[test]
fn a_pattern_that_leaves_the_clustering_window_is_withdrawn() {
    let mut t = Turns::default();
    let p = pattern("c1", T0 + 60, &[(T0, "ci-a", "t1", 50)]);
    assert_eq!(t.turn(&pats(T0 + 3600, vec![p], &[])).len(), 1);
    let w = t.turn(&pats(T0 + 7200, vec![], &[]));
    assert_eq!(Turns::kinds(&w), [(AlertKind::PatternNew, Change::Withdrawn)]);
    assert_eq!(w[0].owner, "storage", "the withdrawal goes where the alert went");
    assert!(t.turn(&pats(T0 + 9000, vec![], &[])).is_empty());
}

fn payload(tag: &str, hour: i64, phase: PayloadPhase) -> PayloadOutcome {
    PayloadOutcome {
        stream: "4.22.0-0.nightly".into(),
        tag: tag.into(),
        created: T0 + hour * 3600,
        phase,
        verdict: format!("{tag}: {phase:?}"),
        root_causes: vec!["install failed: bootstrap timed out".into()],
        suspect: Some("openshift/installer#42".into()),
        owner: "installer".into(),
        url: format!("https://amd64.ocp.releases.ci.openshift.org/releasestream/4.22.0-0.nightly/release/{tag}"),
        evidence: vec![],
    }
}

#[test]
fn a_stream_that_rejects_alerts_once_until_it_accepts_again() {
    use PayloadPhase::*;
    let mut t = Turns::default();
    let mut ps = vec![payload("p1", 0, Accepted), payload("p2", 1, Rejected)];
    let obs = |ps: &Vec<PayloadOutcome>| Observation { as_of: T0 + DAY, payloads: ps.clone(), ..Default::default() };
    let r = t.turn(&obs(&ps));
    assert_eq!(Turns::kinds(&r), [(AlertKind::PayloadRejected, Change::Raised)]);
    assert!(text::plain(&r[0]).contains("install failed: bootstrap timed out"), "{}", text::plain(&r[0]));
    ps.push(payload("p3", 2, Rejected));
    ps.push(payload("p4", 3, Pending));
    assert!(t.turn(&obs(&ps)).is_empty());
    ps.push(payload("p5", 4, Accepted));
    let w = t.turn(&obs(&ps));
    assert_eq!(Turns::kinds(&w), [(AlertKind::PayloadRejected, Change::Withdrawn)]);
    assert_eq!(w[0].withdraws.as_deref(), Some(r[0].key.as_str()));
    assert!(t.turn(&obs(&ps)).is_empty());
}

fn transition(state: RecordState, at: i64) -> RecordTransition {
    RecordTransition {
        record: "r-1".into(),
        subject: "c1".into(),
        owner: "node".into(),
        state,
        at,
        summary: "the fix merged".into(),
        fix: Some("kubernetes/kubernetes#100".into()),
        runs: vec![run("ci-a", 5, RunResult::Fail)],
        evidence: vec![],
    }
}

#[test]
fn record_transitions_alert_once_and_a_confirmation_closes_failed_after_fix() {
    let mut t = Turns::default();
    let as_of = T0 + 10 * DAY;
    let mut tr = vec![transition(RecordState::FailedAfterFix, T0 + 3 * DAY)];
    let obs = |tr: &Vec<RecordTransition>, as_of: i64| Observation { as_of, records: tr.clone(), ..Default::default() };
    assert!(t.turn(&obs(&tr, as_of)).is_empty(), "history older than the backlog is not replayed");
    tr.push(transition(RecordState::FailedAfterFix, as_of - 3600));
    let f = t.turn(&obs(&tr, as_of));
    assert_eq!(Turns::kinds(&f), [(AlertKind::FailedAfterFix, Change::Raised)]);
    tr.push(transition(RecordState::FailedAfterFix, as_of - 60));
    assert!(t.turn(&obs(&tr, as_of)).is_empty(), "still failed after fix");
    tr.push(transition(RecordState::FixConfirmed, as_of + DAY));
    let c = t.turn(&obs(&tr, as_of + DAY));
    assert_eq!(Turns::kinds(&c), [(AlertKind::FixConfirmed, Change::Raised)]);
    assert_eq!(c[0].withdraws.as_deref(), Some(f[0].key.as_str()));
    assert!(t.turn(&obs(&tr, as_of + DAY)).is_empty());
}

#[test]
fn every_alert_says_what_would_withdraw_it_and_names_resolvable_ids() {
    let mut t = Turns::default();
    t.turn(&jobs(job("ci-a", "FFF")));
    t.turn(&pats(T0 + 3600, vec![pattern("c1", T0 + 60, &[(T0, "ci-a", "t1", 50)])], &[]));
    t.turn(&Observation { as_of: T0, payloads: vec![payload("p2", 1, PayloadPhase::Rejected)], ..Default::default() });
    // The last turn has no pattern: the pattern's alert is withdrawn.
    assert_eq!(Turns::kinds(&t.said).iter().filter(|k| k.1 == Change::Withdrawn).count(), 1);
    let raised: Vec<&Alert> = t.said.iter().filter(|a| a.change == Change::Raised).collect();
    assert_eq!(raised.len(), 3);
    for a in raised {
        assert!(!a.withdraw_when.is_empty(), "{a:?}");
        assert!(!a.cited_ids().is_empty(), "{a:?}");
        assert!(text::markdown(a).contains("Withdrawn when: "));
    }
}

#[test]
fn settings_are_checked_by_name() {
    assert!(Rules::default().check().is_ok());
    let e = Rules { failures_to_alert: 0, ..Rules::default() }.check().unwrap_err();
    assert!(e.starts_with("failures_to_alert:"), "{e}");
    let e = Rules { growth_exit_ratio: 5.0, ..Rules::default() }.check().unwrap_err();
    assert!(e.starts_with("growth_exit_ratio:"), "{e}");
}
