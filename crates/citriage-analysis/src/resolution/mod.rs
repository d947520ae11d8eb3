//! Triage records' states, decided from the evidence alone. Pure: the caller hands
//! in the record's stored state and history, its links with what GitHub said about
//! them, and the runs of the jobs the pattern touched; [`evaluate`] answers the
//! transitions the evidence calls for (each with its time, evidence and reason), the
//! fix it rests on and, while a fix awaits confirmation, how many more clean runs
//! that takes and about when ([`stats`]).
//!
//! ```text
//!  new ──link──► triaged ──linked PR merged──► fix merged ──enough clean runs──► fix confirmed
//!   ▲              │  ▲                          │      │                              │
//!   └──unlinked────┘  └──────fix unlinked────────┘      └─pattern fails in a build     │
//!                     ▲                                   that contains the fix        │
//!                     │                                        ▼                       │
//!                     │                                 failed after fix ──newer fix──►│(fix merged)
//!                     └──────────── the pattern returns (re-opened) ◄──────────────────┘
//! ```
//!
//! - *triaged*: an issue or pull request is linked (a reference GitHub answered 404
//!   for is kept on the record but does not count).
//! - *fix merged*: a linked pull request merged (from the time it merged, or was
//!   linked if later). Which builds contain the fix: from each build's tested commit
//!   when an [`Ancestry`] can tell (is the merge commit an ancestor of it?), else
//!   from time (the build started after the merge); [`Fix::containment`] says which.
//! - *failed after fix*: the pattern failed in a build that contains the fix, or in a
//!   build of another branch's job after the fix merged when ancestry shows the fix is
//!   not on that branch (an incomplete fix: it needs a cherry-pick).
//! - *fix confirmed*: the affected jobs ran clean after the fix long enough that luck
//!   is under 5% ([`stats`]).
//! - A confirmed record whose pattern fails again re-opens (to *triaged*, or *new*
//!   without links); the history stays, and only fixes merged after that count.

pub mod digest;
pub mod stats;

use citriage_model::time::utc;
use citriage_model::Evidence;
use serde::{Deserialize, Serialize};
use stats::{Confirmation, JobConfirmation};
use std::collections::BTreeMap;

/// A record's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    New,
    Triaged,
    FixMerged,
    FixConfirmed,
    FailedAfterFix,
}

impl State {
    /// Every state, loudest first (the order lists are shown in).
    pub const LOUDEST_FIRST: [State; 5] =
        [State::FailedAfterFix, State::FixMerged, State::New, State::Triaged, State::FixConfirmed];

    /// As stored: `new`, `triaged`, `fix-merged`, `fix-confirmed`, `failed-after-fix`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::New => "new",
            State::Triaged => "triaged",
            State::FixMerged => "fix-merged",
            State::FixConfirmed => "fix-confirmed",
            State::FailedAfterFix => "failed-after-fix",
        }
    }

    /// In words: `fix merged`, `failed after fix`.
    pub fn label(self) -> &'static str {
        match self {
            State::New => "new",
            State::Triaged => "triaged",
            State::FixMerged => "fix merged",
            State::FixConfirmed => "fix confirmed",
            State::FailedAfterFix => "failed after fix",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        [State::New, State::Triaged, State::FixMerged, State::FixConfirmed, State::FailedAfterFix]
            .into_iter()
            .find(|x| x.as_str() == s)
    }

    /// Open: anything but a confirmed fix.
    pub fn is_open(self) -> bool {
        self != State::FixConfirmed
    }
}

/// What a linked reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefKind {
    Pr,
    Issue,
    /// Not read (offline, or GitHub could not say).
    Unknown,
}

/// What GitHub said about a linked reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RefStatus {
    Open,
    /// A pull request merged at `at` (Unix seconds).
    Merged {
        at: i64,
        commit: Option<String>,
        base: Option<String>,
    },
    /// A pull request closed without merging: a fix attempt that did not land.
    ClosedUnmerged,
    /// An issue closed.
    Closed,
    /// GitHub answered 404: kept on the record, not counted.
    NotFound,
    /// Not read.
    Unknown,
}

/// A link and what is known about its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkFact {
    /// `owner/repo#N`.
    pub reference: String,
    pub kind: RefKind,
    pub status: RefStatus,
    pub linked_at: i64,
    pub unlinked_at: Option<i64>,
    /// What a transition caused by this link cites (the reference's state as read,
    /// or the link itself).
    pub evidence: Vec<Evidence>,
}

impl LinkFact {
    fn active_at(&self, t: i64) -> bool {
        self.linked_at <= t && self.unlinked_at.is_none_or(|u| u > t)
    }

    /// Counts for *triaged*: anything but a reference that does not exist.
    fn counts(&self) -> bool {
        self.status != RefStatus::NotFound
    }

    /// A merged pull request: (effective time: merged, or linked if later; merge time;
    /// merge commit; base branch).
    fn merged(&self) -> Option<(i64, i64, Option<&str>, Option<&str>)> {
        match &self.status {
            RefStatus::Merged { at, commit, base } if self.kind != RefKind::Issue => {
                Some(((*at).max(self.linked_at), *at, commit.as_deref(), base.as_deref()))
            }
            _ => None,
        }
    }
}

/// How a run of an affected job went as far as the pattern is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Failed with the pattern.
    Pattern,
    /// Passed, or failed without the pattern where the pattern would have shown.
    Clean,
    /// Failed for another reason before the pattern could show (not counted).
    Other,
}

/// One run of a job the pattern touched.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub job: String,
    /// The build as shown (`ci-kubernetes-e2e-gce/1234`).
    pub build: String,
    pub started: i64,
    pub outcome: Outcome,
    /// The commit the build tested, when known.
    pub tested: Option<String>,
    /// The branch the job tests, when known.
    pub branch: Option<String>,
    /// The build's result as evidence.
    pub evidence: Evidence,
}

/// Whether a build's tested commit contains a merge commit: `Some` when a checkout
/// can tell, `None` when it cannot (then time decides).
pub trait Ancestry {
    fn contains(&self, merge_commit: &str, run: &Run) -> Option<bool>;
}

/// No checkout: time decides for every build.
pub struct ByTime;

impl Ancestry for ByTime {
    fn contains(&self, _: &str, _: &Run) -> Option<bool> {
        None
    }
}

/// How the builds containing a fix were told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Containment {
    /// From the builds' tested commits (the merge commit is their ancestor).
    Ancestry,
    /// From time: builds started after the merge.
    Time,
}

impl Containment {
    /// How the builds containing the fix were told apart, in words.
    pub fn told(self) -> &'static str {
        match self {
            Containment::Ancestry => "builds containing the fix told by git ancestry of their tested commits",
            Containment::Time => "builds containing the fix told by time (no checkout: started after the merge)",
        }
    }
}

/// What a record knows and how it stands.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub state: State,
    /// When the record entered its state.
    pub since: i64,
    /// The stored transitions, oldest first: (from, to, at).
    pub history: &'a [(State, State, i64)],
    pub links: &'a [LinkFact],
    /// Runs of the jobs the pattern touched (any order).
    pub runs: &'a [Run],
    pub now: i64,
}

/// A transition the evidence calls for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub from: State,
    pub to: State,
    pub at: i64,
    pub evidence: Vec<Evidence>,
    pub reason: String,
}

/// The fix a record rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    pub reference: String,
    pub merged_at: i64,
    /// When it counts from: merged, or linked if later.
    pub effective: i64,
    pub commit: Option<String>,
    pub base: Option<String>,
    pub containment: Containment,
}

/// What [`evaluate`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    pub state: State,
    pub since: i64,
    /// The transitions to record, in order (empty when the state holds).
    pub steps: Vec<Step>,
    /// The fix of a record in *fix merged*, *fix confirmed* or *failed after fix*.
    pub fix: Option<Fix>,
    /// Where confirmation stands (with *fix merged* and *fix confirmed*).
    pub confirmation: Option<Confirmation>,
}

/// The most transitions one evaluation makes (a safeguard; the machine has no cycle
/// without new evidence).
const MAX_STEPS: usize = 16;

/// Most clean runs cited as evidence of a confirmation.
const CITED_RUNS: usize = 20;

struct Machine<'a> {
    f: &'a Facts<'a>,
    runs: Vec<&'a Run>,
    ancestry: &'a dyn Ancestry,
    /// Fixes merged before this count no more (the last re-opening).
    epoch: i64,
    /// When the current fix took effect (the last entry into *fix merged*).
    fix_at: Option<i64>,
}

/// The transitions the evidence calls for, from the record's stored state.
pub fn evaluate(f: &Facts<'_>, ancestry: &dyn Ancestry) -> Evaluation {
    let mut runs: Vec<&Run> = f.runs.iter().collect();
    runs.sort_by(|a, b| (a.started, &a.job, &a.build).cmp(&(b.started, &b.job, &b.build)));
    let epoch = f
        .history
        .iter()
        .rev()
        .find(|(from, to, _)| *from == State::FixConfirmed && matches!(to, State::New | State::Triaged))
        .map_or(i64::MIN, |t| t.2);
    let fix_at = f.history.iter().rev().find(|t| t.1 == State::FixMerged).map(|t| t.2);
    let mut m = Machine { f, runs, ancestry, epoch, fix_at };
    let (mut state, mut since) = (f.state, f.since);
    let mut steps = Vec::new();
    while steps.len() < MAX_STEPS {
        let Some(step) = m.step(state, since) else { break };
        if step.from == State::FixConfirmed {
            m.epoch = step.at;
        }
        if step.to == State::FixMerged {
            m.fix_at = Some(step.at);
        }
        state = step.to;
        since = step.at;
        steps.push(step);
    }
    let fix = matches!(state, State::FixMerged | State::FixConfirmed | State::FailedAfterFix)
        .then(|| m.current_fix(since))
        .flatten();
    let confirmation = match (state, &fix) {
        (State::FixMerged | State::FixConfirmed, Some(fx)) => Some(m.confirmation(fx, None).0),
        _ => None,
    };
    Evaluation { state, since, steps, fix, confirmation }
}

fn step(from: State, to: State, at: i64, evidence: Vec<Evidence>, reason: String) -> Option<Step> {
    Some(Step { from, to, at, evidence, reason })
}

impl Machine<'_> {
    fn now(&self) -> i64 {
        self.f.now
    }

    fn active_links(&self) -> impl Iterator<Item = &LinkFact> {
        let now = self.now();
        self.f.links.iter().filter(move |l| l.counts() && l.active_at(now))
    }

    /// Where a record without a fix goes: *triaged* with an active link, else *new*.
    fn fallback(&self) -> State {
        if self.active_links().next().is_some() {
            State::Triaged
        } else {
            State::New
        }
    }

    /// Merged pull requests among the active links whose effective time is after the
    /// epoch, earliest first (ties by reference).
    fn fixes(&self) -> Vec<(&LinkFact, i64)> {
        let mut v: Vec<(&LinkFact, i64)> =
            self.active_links().filter_map(|l| l.merged().map(|m| (l, m.0))).filter(|(_, e)| *e > self.epoch).collect();
        v.sort_by(|a, b| (a.1, &a.0.reference).cmp(&(b.1, &b.0.reference)));
        v
    }

    fn step(&self, state: State, since: i64) -> Option<Step> {
        match state {
            State::New => self.triage(since),
            State::Triaged => self.untriage(since).or_else(|| self.merge_after(State::Triaged, self.epoch, since)),
            State::FixMerged => self.fix_gone(state, since).or_else(|| self.watch_fix(since)),
            State::FailedAfterFix => self.fix_gone(state, since).or_else(|| self.merge_after(state, since, since)),
            State::FixConfirmed => self.reopen(since),
        }
    }

    fn triage(&self, since: i64) -> Option<Step> {
        let l = self.active_links().min_by(|a, b| (a.linked_at, &a.reference).cmp(&(b.linked_at, &b.reference)))?;
        let what = match l.kind {
            RefKind::Pr => "pull request",
            RefKind::Issue => "issue",
            RefKind::Unknown => "reference (state not read)",
        };
        step(
            State::New,
            State::Triaged,
            l.linked_at.max(since),
            l.evidence.clone(),
            format!("{what} {} linked {}", l.reference, utc(l.linked_at)),
        )
    }

    fn untriage(&self, since: i64) -> Option<Step> {
        if self.active_links().next().is_some() {
            return None;
        }
        let last = self
            .f
            .links
            .iter()
            .filter(|l| l.counts())
            .filter_map(|l| l.unlinked_at.map(|u| (u, l)))
            .max_by(|a, b| (a.0, &a.1.reference).cmp(&(b.0, &b.1.reference)));
        let (at, ev, why) = match last {
            Some((u, l)) => (
                u.max(since),
                l.evidence.clone(),
                format!("{} unlinked; no issue or pull request is linked", l.reference),
            ),
            None => (since, Vec::new(), "no issue or pull request is linked".to_string()),
        };
        step(State::Triaged, State::New, at, ev, why)
    }

    /// A linked pull request merged after `after` (and after the epoch).
    fn merge_after(&self, from: State, after: i64, since: i64) -> Option<Step> {
        let (l, e) = self.fixes().into_iter().find(|(_, e)| *e > after)?;
        let (_, merged, commit, base) = l.merged()?;
        let mut why = format!("pull request {} merged {}", l.reference, utc(merged));
        if let Some(b) = base {
            why.push_str(&format!(" into {b}"));
        }
        if let Some(c) = commit {
            why.push_str(&format!(" (merge commit {})", &c[..c.len().min(12)]));
        }
        if e > merged {
            why.push_str(&format!("; linked {}", utc(e)));
        }
        step(from, State::FixMerged, e.max(since), l.evidence.clone(), why)
    }

    /// The fix behind *fix merged* / *failed after fix* was unlinked.
    fn fix_gone(&self, state: State, since: i64) -> Option<Step> {
        let horizon = since.max(self.fix_at?);
        if self.fixes().iter().any(|(_, e)| *e <= horizon) {
            return None;
        }
        let gone = self
            .f
            .links
            .iter()
            .filter(|l| l.merged().is_some_and(|m| m.0 > self.epoch && m.0 <= horizon))
            .filter_map(|l| l.unlinked_at.map(|u| (u, l)))
            .max_by(|a, b| (a.0, &a.1.reference).cmp(&(b.0, &b.1.reference)));
        let (at, evidence, why) = match gone {
            Some((u, l)) => {
                (u.max(since), l.evidence.clone(), format!("{} unlinked: no merged fix is linked", l.reference))
            }
            None => (since, Vec::new(), "no merged fix is linked".to_string()),
        };
        step(state, self.fallback(), at, evidence, why)
    }

    /// The fix in force at `at`: the latest merged link that took effect by then.
    fn current_fix(&self, at: i64) -> Option<Fix> {
        let fixes = self.fixes();
        let (l, e) = fixes.iter().rev().find(|(_, e)| *e <= at.max(self.fix_at.unwrap_or(at))).or(fixes.first())?;
        let (_, merged, commit, base) = l.merged()?;
        let containment = match commit {
            Some(c) if self.runs.iter().any(|r| self.ancestry.contains(c, r).is_some()) => Containment::Ancestry,
            _ => Containment::Time,
        };
        Some(Fix {
            reference: l.reference.clone(),
            merged_at: merged,
            effective: *e,
            commit: commit.map(str::to_string),
            base: base.map(str::to_string),
            containment,
        })
    }

    /// Whether a run counts as after the fix, and why: `Some(false)` contains the fix,
    /// `Some(true)` is of another branch the fix did not reach; `None` does not count.
    fn after_fix(&self, fix: &Fix, run: &Run) -> Option<(bool, String)> {
        let answer = fix.commit.as_deref().and_then(|c| self.ancestry.contains(c, run));
        match answer {
            Some(true) => Some((false, "its tested commit contains the merge commit".into())),
            Some(false) => match (&run.branch, &fix.base) {
                (Some(b), Some(base)) if b != base && run.started >= fix.merged_at => Some((
                    true,
                    format!("the fix merged into {base} and this job tests {b}: the fix is incomplete (a cherry-pick to {b} is missing)"),
                )),
                _ => None,
            },
            None if run.started >= fix.merged_at => {
                let mut why = format!(
                    "it started {} after the merge (no checkout to read its tested commit: builds started after a merge count as containing it)",
                    citriage_model::time::age(run.started - fix.merged_at)
                );
                let other = match (&run.branch, &fix.base) {
                    (Some(b), Some(base)) if b != base => {
                        why.push_str(&format!(
                            "; this job tests {b} and the fix merged into {base}: incomplete, a cherry-pick to {b} is needed"
                        ));
                        true
                    }
                    _ => false,
                };
                Some((other, why))
            }
            None => None,
        }
    }

    /// *fix merged*: the first run after the fix that fails with the pattern, or the
    /// clean run that makes luck unlikely enough.
    fn watch_fix(&self, since: i64) -> Option<Step> {
        let fix = self.current_fix(since)?;
        self.confirmation(&fix, Some(since)).1
    }

    /// Confirmation of `fix` from the runs; with `from`, also the transition the runs
    /// after `from` call for (the first failure after the fix, or the confirming run).
    fn confirmation(&self, fix: &Fix, from: Option<i64>) -> (Confirmation, Option<Step>) {
        let mut jobs: BTreeMap<&str, JobConfirmation> = BTreeMap::new();
        let mut starts: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
        for r in &self.runs {
            starts.entry(r.job.as_str()).or_default().push(r.started);
            if r.started >= fix.merged_at - stats::WINDOW && r.started < fix.merged_at && r.outcome != Outcome::Other {
                let j = jobs.entry(r.job.as_str()).or_insert_with(|| JobConfirmation {
                    job: r.job.clone(),
                    runs_before: 0,
                    failures_before: 0,
                    rate: 0.0,
                    clean_after: 0,
                    cadence: None,
                    last_run: None,
                    more_runs: 0,
                });
                j.runs_before += 1;
                j.failures_before += u64::from(r.outcome == Outcome::Pattern);
            }
        }
        jobs.retain(|_, j| j.failures_before > 0);
        for (name, j) in jobs.iter_mut() {
            j.rate = stats::rate(j.runs_before, j.failures_before);
            j.cadence = stats::cadence(&starts[name]);
            j.last_run = starts[name].last().copied();
        }
        let mut cited = Vec::new();
        let mut decisive = None;
        for r in self.runs.iter().filter(|r| r.started >= fix.effective) {
            let Some((incomplete, why)) = self.after_fix(fix, r) else { continue };
            match r.outcome {
                Outcome::Pattern if decisive.is_none() && from.is_some() => {
                    let what = match (incomplete, fix.containment) {
                        (true, _) => "failed again after the fix",
                        (false, Containment::Ancestry) => "failed with the pattern in a build that contains the fix",
                        (false, Containment::Time) => "failed with the pattern after the fix merged",
                    };
                    decisive = step(
                        State::FixMerged,
                        State::FailedAfterFix,
                        r.started.max(from.unwrap_or(i64::MIN)),
                        vec![r.evidence.clone()],
                        format!("{} {what} ({} merged {}): {why}", r.build, fix.reference, utc(fix.merged_at)),
                    );
                    break;
                }
                Outcome::Clean => {
                    let Some(j) = jobs.get_mut(r.job.as_str()) else { continue };
                    j.clean_after += 1;
                    if cited.len() < CITED_RUNS {
                        cited.push(r.evidence.clone());
                    }
                    let vals: Vec<JobConfirmation> = jobs.values().cloned().collect();
                    let c = stats::chance(&vals);
                    if from.is_some() && c < stats::ALPHA && decisive.is_none() {
                        let clean: u64 = vals.iter().map(|j| j.clean_after).sum();
                        let rates: Vec<String> = vals.iter().map(|j| format!("{} {:.2}", j.job, j.rate)).collect();
                        decisive = step(
                            State::FixMerged,
                            State::FixConfirmed,
                            r.started.max(from.unwrap_or(i64::MIN)),
                            cited.clone(),
                            format!(
                                "{clean} clean runs after {} across {} job(s); at the failure rates before the fix ({}) that many clean runs by chance: {:.2}% < 5%; {}",
                                fix.reference,
                                vals.len(),
                                rates.join(", "),
                                c * 100.0,
                                fix.containment.told()
                            ),
                        );
                        break;
                    }
                }
                _ => {}
            }
        }
        (stats::confirmation(jobs.into_values().collect(), self.now()), decisive)
    }

    /// *fix confirmed*: the pattern fails again.
    fn reopen(&self, since: i64) -> Option<Step> {
        let r = self.runs.iter().find(|r| r.started > since && r.outcome == Outcome::Pattern)?;
        step(
            State::FixConfirmed,
            self.fallback(),
            r.started,
            vec![r.evidence.clone()],
            format!("re-opened: the pattern failed again in {} after the fix was confirmed", r.build),
        )
    }
}

#[cfg(test)]
mod tests;
