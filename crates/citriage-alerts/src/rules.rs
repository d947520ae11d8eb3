//! The events and their hysteresis. Each subject (a job, a pattern, a release stream, a
//! triage record) has a remembered [`State`] per kind of alert; an alert fires when the
//! state changes, never again while it holds, and its withdrawal is said once.
//!
//! - **job red** (TestGrid's rule): a job whose last `failures_to_alert` finished runs
//!   failed turns red; it is green again after `passes_to_clear` passes in a row
//!   (Kubernetes' TestGrid defaults: 3 and 1). Between the two the state holds: a pass
//!   and new failures of the same red job say nothing.
//! - **new pattern**: a pattern first seen within `new_within_days`, at least
//!   `baseline_days` after the store's first data (else it is only new to the store),
//!   with `new_min_failures` failures. Said once per pattern; withdrawn after
//!   `quiet_days` without a failure.
//! - **pattern growing**: over the last `growth_days` complete days a known pattern
//!   failed at least `growth_min_failures` times and `growth_factor` times the days
//!   before; withdrawn when it falls back to `growth_exit_ratio` times that earlier level
//!   (or half the minimum). Complete days only, so every turn of a day agrees.
//! - **payload rejected**: a stream's newest decided payload is rejected while the
//!   stream was accepting; withdrawn when the stream accepts a payload again.
//! - **failed after fix** and **fix confirmed**: each transition of a triage record into
//!   these states, once; a confirmation closes the record's failed-after-fix alert.
//!   Transitions older than `record_backlog_days` when first seen are remembered
//!   without alerting (a store that starts keeping records does not replay history).
//!
//! Failures on (job, test) pairs the flake signals flag never count toward a pattern
//! alert: a flaky test alerts only through its job turning red by TestGrid's rule.

use crate::alert::{key, link, name, t, Alert, AlertKind, Change, Line};
use crate::observe::{
    FailingRun, JobRuns, Observation, PatternSeries, PayloadOutcome, PayloadPhase, RecordState, RecordTransition, Run,
    RunResult,
};
use citriage_model::time::{self, DAY};
use citriage_model::Day;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The rules' settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Consecutive failed runs that turn a job red (TestGrid's `num_failures_to_alert`).
    pub failures_to_alert: u32,
    /// Consecutive passes that turn it green again (`num_passes_to_disable_alert`).
    pub passes_to_clear: u32,
    /// Failures (flaky tests' left out) that make a new pattern worth an alert.
    pub new_min_failures: u64,
    /// A pattern is new for this many days after it was first seen.
    pub new_within_days: i64,
    /// Days of data the store must hold before a pattern's first sighting for it to be
    /// called new.
    pub baseline_days: i64,
    /// Days without a failure that withdraw a new-pattern alert.
    pub quiet_days: i64,
    /// The growth window, in complete days.
    pub growth_days: i64,
    pub growth_factor: f64,
    pub growth_min_failures: u64,
    pub growth_exit_ratio: f64,
    /// Record transitions older than this when first seen do not alert.
    pub record_backlog_days: i64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            failures_to_alert: 3,
            passes_to_clear: 1,
            new_min_failures: 10,
            new_within_days: 2,
            baseline_days: 3,
            quiet_days: 3,
            growth_days: 2,
            growth_factor: 3.0,
            growth_min_failures: 20,
            growth_exit_ratio: 1.5,
            record_backlog_days: 2,
        }
    }
}

impl Rules {
    /// The settings' own errors, naming the setting.
    pub fn check(&self) -> Result<(), String> {
        let positive = [
            ("failures_to_alert", self.failures_to_alert as i64),
            ("passes_to_clear", self.passes_to_clear as i64),
            ("new_min_failures", self.new_min_failures as i64),
            ("new_within_days", self.new_within_days),
            ("quiet_days", self.quiet_days),
            ("growth_days", self.growth_days),
            ("growth_min_failures", self.growth_min_failures as i64),
        ];
        for (k, v) in positive {
            if v < 1 {
                return Err(format!("{k}: must be at least 1, not {v}"));
            }
        }
        for (k, v) in [("baseline_days", self.baseline_days), ("record_backlog_days", self.record_backlog_days)] {
            if v < 0 {
                return Err(format!("{k}: must not be negative, not {v}"));
            }
        }
        if !(self.growth_factor.is_finite() && self.growth_factor > 1.0) {
            return Err(format!("growth_factor: must be a number above 1, not {}", self.growth_factor));
        }
        if !(self.growth_exit_ratio.is_finite()
            && self.growth_exit_ratio >= 1.0
            && self.growth_exit_ratio < self.growth_factor)
        {
            return Err(format!(
                "growth_exit_ratio: must be at least 1 and below growth_factor ({}), not {}",
                self.growth_factor, self.growth_exit_ratio
            ));
        }
        Ok(())
    }
}

/// A subject's state for one kind of alert: (kind, subject).
pub type StateKey = (AlertKind, String);

/// What is remembered of a subject between turns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The open alert (raised, not withdrawn), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<String>,
    /// When the state last changed (the data's time).
    #[serde(default)]
    pub since: i64,
    /// Raised once already (a pattern is new only once).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
    /// A growth alert's earlier level; the newest record transition seen.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub level: i64,
    /// What anchored the open alert (a streak's first build, the growth's day).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mark: String,
    /// The open alert's owner: its withdrawal goes where it went.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub owner: String,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// A turn's result: the alerts of the state changes, in order, and the states that
/// changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub alerts: Vec<Alert>,
    pub states: BTreeMap<StateKey, State>,
}

struct Cx<'a> {
    rules: &'a Rules,
    prev: &'a BTreeMap<StateKey, State>,
    obs: &'a Observation,
    out: Outcome,
}

impl Cx<'_> {
    fn state(&self, k: &StateKey) -> State {
        self.out.states.get(k).or_else(|| self.prev.get(k)).cloned().unwrap_or_default()
    }

    fn set(&mut self, k: StateKey, s: State) {
        if self.prev.get(&k) == Some(&s) {
            self.out.states.remove(&k);
        } else {
            self.out.states.insert(k, s);
        }
    }

    fn as_of_day(&self) -> Day {
        Day::from_unix_seconds(self.obs.as_of)
    }
}

/// Evaluates every rule over one observation, given the states remembered so far.
pub fn evaluate(rules: &Rules, prev: &BTreeMap<StateKey, State>, obs: &Observation) -> Outcome {
    let mut cx = Cx { rules, prev, obs, out: Outcome::default() };
    let mut jobs: Vec<&JobRuns> = obs.jobs.iter().collect();
    jobs.sort_by(|a, b| a.job.cmp(&b.job));
    for j in jobs {
        job_rule(&mut cx, j);
    }
    let mut patterns: Vec<&PatternSeries> = obs.patterns.iter().collect();
    patterns.sort_by(|a, b| a.id.cmp(&b.id));
    for p in &patterns {
        let counted = Counted::of(p, &obs.flaky);
        new_pattern_rule(&mut cx, p, &counted);
        growth_rule(&mut cx, p, &counted);
    }
    let present: BTreeSet<&str> = patterns.iter().map(|p| p.id.as_str()).collect();
    gone_patterns(&mut cx, &present);
    let mut streams: BTreeMap<&str, Vec<&PayloadOutcome>> = BTreeMap::new();
    for p in &obs.payloads {
        streams.entry(p.stream.as_str()).or_default().push(p);
    }
    for (stream, mut payloads) in streams {
        payloads.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.tag.cmp(&b.tag)));
        payload_rule(&mut cx, stream, &payloads);
    }
    let mut records: BTreeMap<&str, Vec<&RecordTransition>> = BTreeMap::new();
    for r in &obs.records {
        records.entry(r.record.as_str()).or_default().push(r);
    }
    for (record, mut transitions) in records {
        transitions.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.state.cmp(&b.state)));
        record_rule(&mut cx, record, &transitions);
    }
    let mut out = cx.out;
    out.alerts.sort_by(|a, b| {
        (a.at, a.kind, &a.subject, a.change, &a.key).cmp(&(b.at, b.kind, &b.subject, b.change, &b.key))
    });
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn run_line(verb: &str, r: &Run) -> Line {
    vec![
        t(format!("{verb} build ")),
        link(&r.url),
        t(format!(" (started {}, evidence ", time::date_hm(r.started))),
        name(&r.evidence.id),
        t(")"),
    ]
}

// ---- jobs -------------------------------------------------------------------------------

fn job_rule(cx: &mut Cx<'_>, j: &JobRuns) {
    let runs: Vec<&Run> = j.runs.iter().filter(|r| r.result != RunResult::Other).collect();
    let trailing = |res: RunResult| runs.iter().rev().take_while(|r| r.result == res).count();
    let (fails, passes) = (trailing(RunResult::Fail), trailing(RunResult::Pass));
    let k = (AlertKind::JobRed, j.job.clone());
    let st = cx.state(&k);
    let (n, m) = (cx.rules.failures_to_alert as usize, cx.rules.passes_to_clear as usize);
    match &st.open {
        None if fails >= n => {
            let streak = &runs[runs.len() - fails..];
            let first = streak[0];
            let newest = streak[streak.len() - 1];
            let key = key(AlertKind::JobRed, Change::Raised, &j.job, &first.build_id);
            let mut lines = vec![vec![
                name(&j.job),
                t(format!(
                    " failed its last {} ({} in a row turn a job red, TestGrid's rule); the first of them started {}.",
                    plural(fails as u64, "run", "runs"),
                    n,
                    time::date_hm(first.started)
                )),
            ]];
            let shown: Vec<&&Run> = streak.iter().rev().take(5).collect();
            lines.extend(shown.iter().map(|r| run_line("Failed", r)));
            let alert = Alert {
                key: key.clone(),
                kind: AlertKind::JobRed,
                change: Change::Raised,
                subject: j.job.clone(),
                owner: j.owner.clone(),
                at: newest.started,
                title: vec![
                    name(&j.job),
                    t(format!(" is red: {} failed in a row", plural(fails as u64, "run", "runs"))),
                ],
                lines,
                evidence: shown.iter().map(|r| r.evidence.clone()).collect(),
                refs: shown.iter().map(|r| r.url.clone()).collect(),
                withdraw_when: vec![name(&j.job), t(format!(" passes {} in a row.", plural(m as u64, "run", "runs")))],
                withdraws: None,
            };
            cx.out.alerts.push(alert);
            cx.set(
                k,
                State {
                    open: Some(key),
                    since: newest.started,
                    mark: first.build_id.clone(),
                    owner: j.owner.clone(),
                    ..st
                },
            );
        }
        Some(open) if passes >= m => {
            let streak = &runs[runs.len() - passes..];
            let first = streak[0];
            let newest = streak[streak.len() - 1];
            let key = key(AlertKind::JobRed, Change::Withdrawn, &j.job, &first.build_id);
            let shown: Vec<&&Run> = streak.iter().rev().take(3).collect();
            let mut lines = vec![vec![
                name(&j.job),
                t(format!(
                    " passed its last {} after it turned red at {}; the red alert ",
                    plural(passes as u64, "run", "runs"),
                    time::date_hm(st.since)
                )),
                name(open),
                t(" is withdrawn."),
            ]];
            lines.extend(shown.iter().map(|r| run_line("Passed", r)));
            let alert = Alert {
                key,
                kind: AlertKind::JobRed,
                change: Change::Withdrawn,
                subject: j.job.clone(),
                owner: st.owner.clone(),
                at: newest.started,
                title: vec![
                    name(&j.job),
                    t(format!(" is green again: {} passed", plural(passes as u64, "run", "runs"))),
                ],
                lines,
                evidence: shown.iter().map(|r| r.evidence.clone()).collect(),
                refs: shown.iter().map(|r| r.url.clone()).collect(),
                withdraw_when: Vec::new(),
                withdraws: Some(open.clone()),
            };
            cx.out.alerts.push(alert);
            cx.set(k, State { open: None, since: newest.started, mark: String::new(), owner: String::new(), ..st });
        }
        _ => {}
    }
}

// ---- patterns ---------------------------------------------------------------------------

/// A pattern's failures by day, flaky (job, test) pairs left out.
struct Counted {
    by_day: BTreeMap<Day, u64>,
    total: u64,
    flaky: u64,
    jobs: BTreeSet<String>,
}

impl Counted {
    fn of(p: &PatternSeries, flaky: &BTreeSet<(String, String)>) -> Counted {
        let mut c = Counted { by_day: BTreeMap::new(), total: 0, flaky: 0, jobs: BTreeSet::new() };
        for d in &p.daily {
            if flaky.contains(&(d.job.clone(), d.test.clone())) {
                c.flaky += d.failures;
                continue;
            }
            if d.failures > 0 {
                *c.by_day.entry(d.day).or_default() += d.failures;
                c.total += d.failures;
                c.jobs.insert(d.job.clone());
            }
        }
        c
    }

    /// Failures over the days `from..=to`.
    fn between(&self, from: Day, to: Day) -> u64 {
        self.by_day.range(from..=to).map(|(_, n)| n).sum()
    }

    fn last_day(&self) -> Option<Day> {
        self.by_day.keys().next_back().copied()
    }
}

/// The pattern's newest failing runs outside flaky (job, test) pairs, to cite.
fn cited_runs<'a>(p: &'a PatternSeries, flaky: &BTreeSet<(String, String)>) -> Vec<&'a FailingRun> {
    p.recent.iter().filter(|f| !flaky.contains(&(f.job.clone(), f.test.clone()))).take(3).collect()
}

fn pattern_lines(p: &PatternSeries, runs: &[&FailingRun]) -> Vec<Line> {
    let mut lines = vec![vec![t("Failure text: "), crate::alert::quote(&p.text)]];
    for f in runs {
        let mut l = run_line("Failed", &f.run);
        l.extend([t(" in "), name(&f.job), t(", test "), name(&f.test)]);
        lines.push(l);
    }
    lines
}

fn new_pattern_rule(cx: &mut Cx<'_>, p: &PatternSeries, c: &Counted) {
    let k = (AlertKind::PatternNew, p.id.clone());
    let st = cx.state(&k);
    let r = cx.rules;
    if let Some(open) = &st.open {
        let quiet = c.last_day().is_none_or(|d| cx.as_of_day().days_since(d) >= r.quiet_days);
        if quiet {
            let last = c.last_day().map(|d| d.to_string()).unwrap_or_else(|| "before the window".into());
            withdraw_pattern(
                cx,
                k,
                &st,
                open,
                vec![t(format!(
                    "No failure counted since {last}: {} without one.",
                    plural(r.quiet_days as u64, "day", "days")
                ))],
            );
        }
        return;
    }
    if st.done {
        return;
    }
    let history_ok = cx.obs.history_start.is_some_and(|h| p.first_seen >= h + r.baseline_days * DAY);
    let recent = cx.obs.as_of - p.first_seen <= r.new_within_days * DAY;
    if !(history_ok && recent && c.total >= r.new_min_failures) {
        return;
    }
    let key = key(AlertKind::PatternNew, Change::Raised, &p.id, "");
    let runs = cited_runs(p, &cx.obs.flaky);
    let mut lines = vec![vec![
        t("Failure pattern "),
        name(&p.id),
        t(format!(
            " was first seen {} and has failed {} on {} since.",
            time::date_hm(p.first_seen),
            plural(c.total, "time", "times"),
            plural(c.jobs.len() as u64, "job", "jobs")
        )),
    ]];
    lines.extend(pattern_lines(p, &runs));
    if c.flaky > 0 {
        lines.push(vec![t(format!(
            "{} more on tests the flake signals flag are not counted.",
            plural(c.flaky, "failure", "failures")
        ))]);
    }
    cx.out.alerts.push(Alert {
        key: key.clone(),
        kind: AlertKind::PatternNew,
        change: Change::Raised,
        subject: p.id.clone(),
        owner: p.owner.clone(),
        at: cx.obs.as_of,
        title: vec![t("New failure pattern "), name(&p.id), t(format!(": {}", plural(c.total, "failure", "failures")))],
        lines,
        evidence: runs.iter().map(|f| f.run.evidence.clone()).collect(),
        refs: std::iter::once(p.id.clone()).chain(runs.iter().map(|f| f.run.url.clone())).collect(),
        withdraw_when: vec![t(format!(
            "No failure of this pattern for {}.",
            plural(r.quiet_days as u64, "day", "days")
        ))],
        withdraws: None,
    });
    cx.set(k, State { open: Some(key), since: cx.obs.as_of, done: true, owner: p.owner.clone(), ..st });
}

/// Says once that a pattern alert no longer holds.
fn withdraw_pattern(cx: &mut Cx<'_>, k: StateKey, st: &State, open: &str, why: Line) {
    let (kind, id) = (k.0, k.1.clone());
    let key = key(kind, Change::Withdrawn, &id, &st.mark);
    let what = if kind == AlertKind::PatternNew { "new-pattern" } else { "growth" };
    let mut first =
        vec![t(format!("The {what} alert ")), name(open), t(" on pattern "), name(&id), t(" is withdrawn. ")];
    first.extend(why);
    cx.out.alerts.push(Alert {
        key,
        kind,
        change: Change::Withdrawn,
        subject: id.clone(),
        owner: st.owner.clone(),
        at: cx.obs.as_of,
        title: vec![
            t("Pattern "),
            name(&id),
            t(if kind == AlertKind::PatternNew { " is quiet" } else { " fell back" }),
        ],
        lines: vec![first],
        evidence: Vec::new(),
        refs: vec![id],
        withdraw_when: Vec::new(),
        withdraws: Some(open.to_string()),
    });
    cx.set(k, State { open: None, since: cx.obs.as_of, owner: String::new(), ..st.clone() });
}

fn growth_rule(cx: &mut Cx<'_>, p: &PatternSeries, c: &Counted) {
    let r = cx.rules;
    let d = r.growth_days;
    let end = cx.as_of_day().plus(-1);
    let recent = c.between(end.plus(1 - d), end);
    let before = c.between(end.plus(1 - 2 * d), end.plus(-d));
    let k = (AlertKind::PatternGrowing, p.id.clone());
    let st = cx.state(&k);
    if let Some(open) = &st.open {
        let exit = ((st.level as f64 * r.growth_exit_ratio).ceil() as u64).max(r.growth_min_failures / 2);
        if recent <= exit {
            withdraw_pattern(
                cx,
                k,
                &st,
                open,
                vec![t(format!(
                    "It failed {} over the {} days to {end}, back to at most {exit} (it grew from {}).",
                    plural(recent, "time", "times"),
                    d,
                    st.level
                ))],
            );
        }
        return;
    }
    // A pattern younger than both windows is the new-pattern rule's.
    if p.first_seen > end.plus(1 - 2 * d).start_seconds() {
        return;
    }
    if recent < r.growth_min_failures || (recent as f64) < r.growth_factor * (before.max(1) as f64) {
        return;
    }
    let mark = end.to_string();
    let key = key(AlertKind::PatternGrowing, Change::Raised, &p.id, &mark);
    let runs = cited_runs(p, &cx.obs.flaky);
    let factor = recent as f64 / before.max(1) as f64;
    let mut lines = vec![vec![
        t("Failure pattern "),
        name(&p.id),
        t(format!(
            " failed {} over the {d} days to {end}, against {} the {d} days before ({factor:.1} times as many).",
            plural(recent, "time", "times"),
            before
        )),
    ]];
    lines.extend(pattern_lines(p, &runs));
    let exit = ((before as f64 * r.growth_exit_ratio).ceil() as u64).max(r.growth_min_failures / 2);
    cx.out.alerts.push(Alert {
        key: key.clone(),
        kind: AlertKind::PatternGrowing,
        change: Change::Raised,
        subject: p.id.clone(),
        owner: p.owner.clone(),
        at: cx.obs.as_of,
        title: vec![
            t("Pattern "),
            name(&p.id),
            t(format!(" is growing: {recent} failures in {d} days, {before} before")),
        ],
        lines,
        evidence: runs.iter().map(|f| f.run.evidence.clone()).collect(),
        refs: std::iter::once(p.id.clone()).chain(runs.iter().map(|f| f.run.url.clone())).collect(),
        withdraw_when: vec![t(format!("At most {exit} failures over {d} complete days."))],
        withdraws: None,
    });
    cx.set(k, State { open: Some(key), since: cx.obs.as_of, level: before as i64, mark, owner: p.owner.clone(), ..st });
}

/// Open pattern alerts whose pattern the latest clustering run no longer has: its
/// failures left the window, so it is quiet (and no longer growing).
fn gone_patterns(cx: &mut Cx<'_>, present: &BTreeSet<&str>) {
    let open: Vec<(StateKey, State)> = cx
        .prev
        .iter()
        .filter(|((kind, id), s)| {
            matches!(kind, AlertKind::PatternNew | AlertKind::PatternGrowing)
                && s.open.is_some()
                && !present.contains(id.as_str())
        })
        .map(|(k, s)| (k.clone(), s.clone()))
        .collect();
    for (k, st) in open {
        let Some(open) = st.open.clone() else { continue };
        withdraw_pattern(cx, k, &st, &open, vec![t("The latest clustering run has no failure of it in its window.")]);
    }
}

// ---- payloads ---------------------------------------------------------------------------

fn payload_rule(cx: &mut Cx<'_>, stream: &str, payloads: &[&PayloadOutcome]) {
    let decided: Vec<&&PayloadOutcome> = payloads.iter().filter(|p| p.phase != PayloadPhase::Pending).collect();
    let Some(newest) = decided.last() else { return };
    let k = (AlertKind::PayloadRejected, stream.to_string());
    let st = cx.state(&k);
    match (&st.open, newest.phase) {
        (None, PayloadPhase::Rejected) => {
            let streak = decided.iter().rev().take_while(|p| p.phase == PayloadPhase::Rejected).count();
            let first = decided[decided.len() - streak];
            let key = key(AlertKind::PayloadRejected, Change::Raised, stream, &first.tag);
            let mut lines = vec![
                vec![
                    t("Payload "),
                    name(&newest.tag),
                    t(" of "),
                    name(stream),
                    t(format!(
                        " was rejected ({} rejected in a row since ",
                        plural(streak as u64, "payload", "payloads")
                    )),
                    name(&first.tag),
                    t("). Verdict: "),
                    crate::alert::quote(&newest.verdict),
                ],
                vec![t("Release page: "), link(&newest.url)],
            ];
            for rc in newest.root_causes.iter().take(3) {
                lines.push(vec![t("Root cause: "), crate::alert::quote(rc)]);
            }
            if let Some(s) = &newest.suspect {
                lines.push(vec![t("Leading suspect: "), name(s)]);
            }
            cx.out.alerts.push(Alert {
                key: key.clone(),
                kind: AlertKind::PayloadRejected,
                change: Change::Raised,
                subject: stream.to_string(),
                owner: newest.owner.clone(),
                at: newest.created,
                title: vec![t("Payload "), name(&newest.tag), t(" rejected")],
                lines,
                evidence: newest.evidence.clone(),
                refs: vec![newest.tag.clone(), newest.url.clone()],
                withdraw_when: vec![name(stream), t(" accepts a payload again.")],
                withdraws: None,
            });
            cx.set(
                k,
                State {
                    open: Some(key),
                    since: newest.created,
                    mark: first.tag.clone(),
                    owner: newest.owner.clone(),
                    ..st
                },
            );
        }
        (Some(open), PayloadPhase::Accepted) => {
            let key = key(AlertKind::PayloadRejected, Change::Withdrawn, stream, &newest.tag);
            cx.out.alerts.push(Alert {
                key,
                kind: AlertKind::PayloadRejected,
                change: Change::Withdrawn,
                subject: stream.to_string(),
                owner: st.owner.clone(),
                at: newest.created,
                title: vec![name(stream), t(" accepts payloads again")],
                lines: vec![
                    vec![
                        t("Payload "),
                        name(&newest.tag),
                        t(" was accepted; the rejection alert "),
                        name(open),
                        t(" is withdrawn."),
                    ],
                    vec![t("Release page: "), link(&newest.url)],
                ],
                evidence: newest.evidence.clone(),
                refs: vec![newest.tag.clone(), newest.url.clone()],
                withdraw_when: Vec::new(),
                withdraws: Some(open.clone()),
            });
            cx.set(k, State { open: None, since: newest.created, mark: String::new(), owner: String::new(), ..st });
        }
        _ => {}
    }
}

// ---- triage records ---------------------------------------------------------------------

fn record_rule(cx: &mut Cx<'_>, record: &str, transitions: &[&RecordTransition]) {
    let k = (AlertKind::FailedAfterFix, record.to_string());
    let mut st = cx.state(&k);
    let backlog = cx.obs.as_of - cx.rules.record_backlog_days * DAY;
    let seen = st.level;
    for tr in transitions.iter().filter(|tr| tr.at > seen) {
        st.level = tr.at;
        if tr.at < backlog {
            // History from before alerts followed records: remembered, not said.
            st.open = None;
            continue;
        }
        match tr.state {
            RecordState::FailedAfterFix if st.open.is_none() => {
                let key = key(AlertKind::FailedAfterFix, Change::Raised, record, &tr.at.to_string());
                cx.out.alerts.push(record_alert(tr, key.clone(), AlertKind::FailedAfterFix, None));
                st.open = Some(key);
                st.since = tr.at;
            }
            RecordState::FailedAfterFix => {}
            RecordState::FixConfirmed => {
                let key = key(AlertKind::FixConfirmed, Change::Raised, record, &tr.at.to_string());
                cx.out.alerts.push(record_alert(tr, key, AlertKind::FixConfirmed, st.open.take()));
                st.since = tr.at;
            }
        }
    }
    cx.set(k, st);
}

fn record_alert(tr: &RecordTransition, key: String, kind: AlertKind, withdraws: Option<String>) -> Alert {
    let failed = kind == AlertKind::FailedAfterFix;
    let mut head = vec![t("Triage record "), name(&tr.record), t(" on "), name(&tr.subject)];
    head.push(t(if failed { " failed after its fix" } else { ": fix confirmed" }));
    if let Some(fix) = &tr.fix {
        head.extend([t(" ("), name(fix), t(")")]);
    }
    head.push(t(". "));
    head.push(crate::alert::quote(&tr.summary));
    let mut lines = vec![head];
    lines.extend(
        tr.runs.iter().take(5).map(|r| run_line(if r.result == RunResult::Pass { "Passed" } else { "Failed" }, r)),
    );
    if let Some(w) = &withdraws {
        lines.push(vec![t("The failed-after-fix alert "), name(w), t(" is closed.")]);
    }
    let mut title = vec![if failed { t("Failed after fix: ") } else { t("Fix confirmed: ") }, name(&tr.subject)];
    if let Some(fix) = &tr.fix {
        title.extend([t(" ("), name(fix), t(")")]);
    }
    Alert {
        key,
        kind,
        change: Change::Raised,
        subject: tr.record.clone(),
        owner: tr.owner.clone(),
        at: tr.at,
        title,
        lines,
        evidence: tr.evidence.iter().cloned().chain(tr.runs.iter().take(5).map(|r| r.evidence.clone())).collect(),
        refs: std::iter::once(tr.record.clone()).chain(tr.runs.iter().take(5).map(|r| r.url.clone())).collect(),
        withdraw_when: if failed {
            vec![t("The record's fix is confirmed (clean runs of its jobs after the fix).")]
        } else {
            vec![t("A failure of the pattern in a build that contains the fix (the record re-opens).")]
        },
        withdraws,
    }
}
