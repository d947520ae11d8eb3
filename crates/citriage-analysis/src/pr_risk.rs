//! "Did my PR break this?": each failure of a pull request's latest presubmit runs
//! sorted into one class from the facts gathered about it elsewhere in the window —
//! a known flake, failing elsewhere, the environment's, or new with this PR — and the
//! PR's verdict. Pure: the caller gathers the facts (flake signals, the same pattern on
//! other runs, signatures, the PR's diff) and this module decides.
//!
//! The rules, in order (the first that applies):
//!
//! 1. **infrastructure**: the build's setup step failed, or the failure carries a
//!    known signature of the `infra` class. (A build failing many tests is not enough:
//!    a pull request can break many tests at once.)
//! 2. **new with this PR** (strong): the failure names a file the PR changes (its stack
//!    or text cites the path) or the failing test lives in a changed file, and its
//!    pattern is not on the base branch: a change named by its own failure outweighs
//!    other PRs' runs and flake signals.
//! 3. **known flake**: the test's flake signals fired in the window (on runs other
//!    than this PR's).
//! 4. **failing elsewhere**: the same pattern failed on the base branch's periodic or
//!    postsubmit runs, or on at least `min_other_prs` other pull requests' runs that do
//!    not carry this PR.
//! 5. **new with this PR**: seen nowhere else in the window.
//!
//! The verdict is "safe to /retest" only when no failure is new with this PR.

use citriage_model::build::{BuildRecord, StoredTest};
use citriage_patterns::signatures::{Catalogue, FailureClass};
use serde::Serialize;
use std::collections::BTreeSet;

/// The class of one failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    KnownFlake,
    FailingElsewhere,
    Infrastructure,
    NewWithPr,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 4] = [Class::NewWithPr, Class::Infrastructure, Class::FailingElsewhere, Class::KnownFlake];

    /// `known-flake`, `failing-elsewhere`, `infrastructure`, `new-with-pr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::KnownFlake => "known-flake",
            Class::FailingElsewhere => "failing-elsewhere",
            Class::Infrastructure => "infrastructure",
            Class::NewWithPr => "new-with-pr",
        }
    }

    /// Reads [`Class::as_str`] back.
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// How a person reads it.
    pub fn label(self) -> &'static str {
        match self {
            Class::KnownFlake => "known flake",
            Class::FailingElsewhere => "failing elsewhere",
            Class::Infrastructure => "infrastructure / environment",
            Class::NewWithPr => "new with this PR",
        }
    }
}

/// Settings of the classification.
#[derive(Debug, Clone)]
pub struct Rules {
    /// A pattern seen only on other pull requests' runs must be on at least this many
    /// of them to count as failing elsewhere (one other PR may share the same mistake).
    pub min_other_prs: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules { min_other_prs: 2 }
    }
}

/// One failed test or failed build step of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedItem {
    /// The test's name, or `build` for a failed build without a failed test.
    pub name: String,
    pub classname: String,
    /// A build step rather than a test (a setup step, or the build itself).
    pub step: bool,
    /// The failure text (the JUnit message, or the build log's failure lines).
    pub text: String,
}

/// A flake signal that fired for the test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlakeFact {
    /// The job whose figures fired it.
    pub job: String,
    /// `same-commit`, `in-run-retry`, `flip-rate`, `across-prs`, `bayesian-pfs`.
    pub signal: String,
    pub runs: u64,
    /// Build paths the signal rests on, newest first.
    pub builds: Vec<String>,
}

/// The same failure pattern on other runs than this PR's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Elsewhere {
    /// The pattern's stable id (`profile/id`), or `text:<hash>` for a failure the
    /// latest clustering run did not see, matched by its normalized text.
    pub pattern: String,
    /// The oldest start of a matching run in the window (Unix seconds).
    pub since: Option<i64>,
    /// Matching periodic and postsubmit runs.
    pub base_runs: u64,
    /// Other pull requests whose runs (without this PR) match, sorted.
    pub other_prs: Vec<u64>,
    /// Build paths of matching runs, newest first (at most 5).
    pub builds: Vec<String>,
    /// The pattern's triage record (`pattern:PROFILE/ID`) and its state, when one exists.
    pub record: Option<(String, String)>,
}

/// Everything known about one failure when it is classified.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Flake signals fired for the test in the window.
    pub flake: Vec<FlakeFact>,
    /// The pattern on other runs (base branch, other PRs), when matched anywhere.
    pub elsewhere: Option<Elsewhere>,
    /// Why the environment is to blame (setup step, infra signature), empty when not.
    pub infra: Vec<String>,
    /// Files of the PR's diff the failure names or that hold the failing test.
    pub changed_files_named: Vec<String>,
}

/// A failure's class and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classified {
    pub class: Class,
    /// True when the evidence is direct (a changed file named, a fired signal on
    /// several runs, a base-branch pattern).
    pub strong: bool,
    pub reason: String,
}

/// Classifies one failure by the rules of the module's documentation.
pub fn classify(f: &Facts, rules: &Rules) -> Classified {
    if !f.infra.is_empty() {
        return Classified { class: Class::Infrastructure, strong: true, reason: f.infra.join("; ") };
    }
    let on_base = f.elsewhere.as_ref().is_some_and(|e| e.base_runs > 0);
    if !f.changed_files_named.is_empty() && !on_base {
        return Classified {
            class: Class::NewWithPr,
            strong: true,
            reason: format!("the failure names files this PR changes: {}", f.changed_files_named.join(", ")),
        };
    }
    if !f.flake.is_empty() {
        let runs: u64 = f.flake.iter().map(|s| s.runs).max().unwrap_or(0);
        let kinds: BTreeSet<&str> = f.flake.iter().map(|s| s.signal.as_str()).collect();
        return Classified {
            class: Class::KnownFlake,
            strong: runs >= 3,
            reason: format!(
                "flake signal(s) {} fired on up to {runs} run(s) without this PR",
                kinds.into_iter().collect::<Vec<_>>().join(", ")
            ),
        };
    }
    if let Some(e) = &f.elsewhere {
        if on_base || e.other_prs.len() >= rules.min_other_prs {
            let mut parts = Vec::new();
            if e.base_runs > 0 {
                parts.push(format!("{} base-branch run(s)", e.base_runs));
            }
            if !e.other_prs.is_empty() {
                parts.push(format!("{} other PR(s)", e.other_prs.len()));
            }
            return Classified {
                class: Class::FailingElsewhere,
                strong: on_base,
                reason: format!("pattern {} also fails on {}", e.pattern, parts.join(" and ")),
            };
        }
    }
    let seen = match &f.elsewhere {
        Some(e) if !e.other_prs.is_empty() => {
            format!(" (its pattern is on {} other PR(s) only, fewer than {})", e.other_prs.len(), rules.min_other_prs)
        }
        _ => String::new(),
    };
    Classified { class: Class::NewWithPr, strong: false, reason: format!("seen nowhere else in the window{seen}") }
}

/// A pull request's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// True when no failure is new with this PR (and something failed).
    pub safe_to_retest: bool,
    /// Failures new with this PR.
    pub new_failures: usize,
    pub line: String,
}

/// The verdict over the classes of the PR's failures; `pending` runs not finished.
pub fn verdict(classes: &[Class], pending: usize) -> Verdict {
    let new = classes.iter().filter(|c| **c == Class::NewWithPr).count();
    let wait = if pending > 0 { format!(" ({pending} run(s) still pending)") } else { String::new() };
    if new > 0 {
        let s = if new == 1 { "failure is" } else { "failures are" };
        return Verdict {
            safe_to_retest: false,
            new_failures: new,
            line: format!("look at your change: {new} {s} new with this PR{wait}"),
        };
    }
    if classes.is_empty() {
        return Verdict {
            safe_to_retest: false,
            new_failures: 0,
            line: format!("nothing failed in the latest runs{wait}"),
        };
    }
    Verdict {
        safe_to_retest: true,
        new_failures: 0,
        line: format!("safe to /retest: every failure is a known flake, failing elsewhere or the environment's{wait}"),
    }
}

fn is_failure(status: &str) -> bool {
    status == "failed" || status == "error"
}

/// Harness steps that prepare the environment (shared with the flake figures).
pub use crate::metrics::corrected::is_setup_step;

/// The failed tests and failed build steps of a run: every failed or errored test
/// (harness names other than setup steps left out, the last attempt of a test that
/// passed on retry left out), and the build itself when it failed without a failed
/// test (its text from the log's failure lines).
pub fn failed_items(b: &BuildRecord, harness: &BTreeSet<&str>) -> Vec<FailedItem> {
    let passed: BTreeSet<(&str, &str)> =
        b.tests.iter().filter(|t| t.status == "passed").map(|t| (t.classname.as_str(), t.name.as_str())).collect();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut out = Vec::new();
    for t in &b.tests {
        let key = (t.classname.as_str(), t.name.as_str());
        if !is_failure(&t.status) || passed.contains(&key) || !seen.insert(key) {
            continue;
        }
        let setup = is_setup_step(&t.name);
        if harness.contains(t.name.as_str()) && !setup {
            continue;
        }
        out.push(item_of(t, setup));
    }
    let failed_build = matches!(b.result.as_deref(), Some("FAILURE") | Some("ERROR"));
    if out.is_empty() && failed_build {
        let text = b.excerpts.iter().map(|e| e.text.as_str()).collect::<Vec<_>>().join("\n");
        let text = if text.is_empty() { format!("result {}", b.result.as_deref().unwrap_or("")) } else { text };
        out.push(FailedItem { name: "build".into(), classname: String::new(), step: true, text });
    }
    out.sort_by(|x, y| (x.classname.as_str(), x.name.as_str()).cmp(&(y.classname.as_str(), y.name.as_str())));
    out
}

fn item_of(t: &StoredTest, setup: bool) -> FailedItem {
    FailedItem {
        name: t.name.clone(),
        classname: t.classname.clone(),
        step: setup,
        text: t.failure_text.clone().unwrap_or_default(),
    }
}

/// Why the environment is to blame for one failure of `b`: a setup step of the build
/// failed, or the failure's text carries an `infra` signature.
pub fn infra_reasons(b: &BuildRecord, item: &FailedItem, signatures: &Catalogue) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = b.tests.iter().find(|t| is_setup_step(&t.name) && is_failure(&t.status)) {
        out.push(format!("setup step {:?} failed", t.name));
    }
    for m in signatures.match_text(&item.text) {
        if m.class == FailureClass::Infra {
            out.push(format!("known signature {} ({})", m.id, m.name));
        }
    }
    out.dedup();
    out
}

/// Files of the PR's diff (`changed`, repository paths) that the failure names: the
/// path (or its last two components) cited in the text, or a changed test file whose
/// folder is the failing test's package (the classname ends with it) or whose stem
/// the test's name carries. Sorted.
pub fn files_named(item: &FailedItem, changed: &[String]) -> Vec<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    for f in changed {
        let f = f.trim_matches('/');
        if f.is_empty() {
            continue;
        }
        let parts: Vec<&str> = f.split('/').collect();
        let tail = if parts.len() >= 2 { parts[parts.len() - 2..].join("/") } else { f.to_string() };
        if item.text.contains(f) || (tail.contains('/') && item.text.contains(&tail)) {
            out.insert(f.to_string());
            continue;
        }
        let file = parts.last().copied().unwrap_or("");
        let is_test_file = file.contains("_test.") || file.contains(".test.") || file.starts_with("test_");
        if !is_test_file || item.step {
            continue;
        }
        let dir = parts[..parts.len() - 1].join("/");
        let stem = file.split('.').next().unwrap_or("").trim_end_matches("_test");
        let package_holds = !dir.is_empty() && (item.classname == dir || item.classname.ends_with(&format!("/{dir}")));
        let name_holds = stem.len() >= 4 && item.name.to_lowercase().contains(&stem.to_lowercase().replace('_', ""));
        if package_holds || name_holds {
            out.insert(f.to_string());
        }
    }
    out.into_iter().collect()
}

/// The pull request numbers of `repo` a build's `repos` text names (`{"org/repo":
/// "branch:base,N:sha,M:sha"}`), sorted; empty for a periodic or malformed text.
pub fn pulls_of(repos: Option<&str>, repo: &str) -> Vec<u64> {
    let Some(text) = repos else { return Vec::new() };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(refs) = map.get(repo).and_then(|v| v.as_str()) else { return Vec::new() };
    let mut out: Vec<u64> =
        refs.split(',').skip(1).filter_map(|p| p.split(':').next()?.trim().parse::<u64>().ok()).collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elsewhere(base: u64, prs: &[u64]) -> Elsewhere {
        Elsewhere { pattern: "default/abc".into(), base_runs: base, other_prs: prs.to_vec(), ..Elsewhere::default() }
    }

    #[test]
    fn the_rules_apply_in_order() {
        let r = Rules::default();
        let mut f = Facts { infra: vec!["setup step \"Up\" failed".into()], ..Facts::default() };
        f.changed_files_named = vec!["pkg/a.go".into()];
        assert_eq!(classify(&f, &r).class, Class::Infrastructure);
        f.infra.clear();
        f.elsewhere = Some(elsewhere(0, &[1, 2, 3]));
        f.flake = vec![FlakeFact { job: "j".into(), signal: "flip-rate".into(), runs: 4, builds: vec![] }];
        assert_eq!(classify(&f, &r).class, Class::NewWithPr, "a named change beats other PRs and flakes");
        f.elsewhere = Some(elsewhere(2, &[]));
        assert_eq!(classify(&f, &r).class, Class::KnownFlake, "on the base branch: not the change's");
        f.flake.clear();
        assert_eq!(classify(&f, &r).class, Class::FailingElsewhere);
        f.changed_files_named.clear();
        f.elsewhere = Some(elsewhere(0, &[7]));
        let c = classify(&f, &r);
        assert_eq!(c.class, Class::NewWithPr, "one other PR is not enough");
        assert!(c.reason.contains("1 other PR"), "{}", c.reason);
        f.elsewhere = Some(elsewhere(0, &[7, 9]));
        assert_eq!(classify(&f, &r).class, Class::FailingElsewhere);
        assert_eq!(classify(&Facts::default(), &r).class, Class::NewWithPr);
    }

    #[test]
    fn never_safe_when_a_failure_is_new() {
        let v = verdict(&[Class::KnownFlake, Class::NewWithPr, Class::NewWithPr], 0);
        assert!(!v.safe_to_retest);
        assert_eq!(v.line, "look at your change: 2 failures are new with this PR");
        let v = verdict(&[Class::KnownFlake, Class::Infrastructure], 1);
        assert!(v.safe_to_retest);
        assert!(v.line.starts_with("safe to /retest:") && v.line.ends_with("(1 run(s) still pending)"));
        assert!(!verdict(&[], 0).safe_to_retest);
    }

    #[test]
    fn changed_files_named_by_text_or_holding_the_test() {
        let item = FailedItem {
            name: "TestQuotaAdmission".into(),
            classname: "k8s.io/kubernetes/pkg/quota/v1".into(),
            step: false,
            text: "panic: nil map\n\tk8s.io/kubernetes/pkg/controller/resource.go:88 +0x1f".into(),
        };
        let changed = vec![
            "pkg/controller/resource.go".into(),
            "pkg/quota/v1/evaluator_test.go".into(),
            "docs/README.md".into(),
            "staging/quota_admission_test.go".into(),
        ];
        assert_eq!(
            files_named(&item, &changed),
            vec!["pkg/controller/resource.go", "pkg/quota/v1/evaluator_test.go", "staging/quota_admission_test.go"]
        );
        assert!(files_named(&item, &["README.md".into()]).is_empty());
    }

    #[test]
    fn pulls_are_read_from_the_repos_text() {
        let t = r#"{"kubernetes/kubernetes":"master:abc,123:def,45:0a1"}"#;
        assert_eq!(pulls_of(Some(t), "kubernetes/kubernetes"), vec![45, 123]);
        assert!(pulls_of(Some(t), "kubernetes/test-infra").is_empty());
        assert!(pulls_of(Some("not json"), "kubernetes/kubernetes").is_empty());
        assert!(pulls_of(None, "x/y").is_empty());
    }
}
