//! Links between a candidate and a failure mode. The suspect engine
//! (`citriage_suspects::links`) draws what the diff, the title and the
//! candidate's component share with the failure; the payload analysis adds its
//! own kinds: test binaries that could not be listed or extracted, the failing
//! CI step, an RHCOS RPM's changelog. Each is quoted with what makes it specific.

use citriage_suspects::failure::Failure;
use citriage_suspects::links::{self as engine, Change, LinkKind, VerbatimMatch, Weights};
use citriage_suspects::window::{CandidateIndex, WindowIndex};

use crate::candidate::{Candidate, CandidateKind};
use crate::components;
use crate::evidence::LogLine;
use crate::scoring::{Correlation, CorrelationResult, Link, Signal};

/// Everything about one failure mode the links are drawn from.
#[derive(Debug, Clone, Default)]
pub struct ModeEvidence {
    /// The failure as the engine sees it: lines, tests, tokens, files, commands, words, components.
    pub failure: Failure,
    /// Test binaries a test-binary failure names (true: named by the error line itself).
    pub binaries: Vec<(String, bool)>,
    /// Test binaries could not be listed or extracted.
    pub test_binary_failure: bool,
    /// Step-registry references of the failing CI step.
    pub step_refs: Vec<String>,
    /// CI configuration files of the failing job.
    pub ci_paths: Vec<String>,
    /// The failing CI step (`e2e-aws-ovn-fips-ipi-install-install`).
    pub failed_step: Option<String>,
    /// The Prow job name of the failed run.
    pub prow_job: String,
}

impl ModeEvidence {
    /// Builds the evidence of a mode from its explaining lines, failing tests and
    /// (for test-binary failures) the binaries named; the CI-step fields
    /// (`step_refs`, `ci_paths`, `failed_step`, `prow_job`) are set by the caller.
    pub fn new(
        lines: Vec<LogLine>,
        tests: Vec<String>,
        binaries: Vec<(String, bool)>,
        test_binary_failure: bool,
    ) -> ModeEvidence {
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        let components = components::failure_components(&tests, &texts, &binaries, test_binary_failure);
        ModeEvidence {
            failure: Failure::new(lines, tests, components),
            binaries,
            test_binary_failure,
            ..Default::default()
        }
    }

    /// True when this job runs the tests of `org/repo`: the job is the
    /// repository's own, or the failure cites the repository's code.
    pub fn runs_tests_of(&self, repo: &str) -> bool {
        let Some((org, name)) = repo.split_once('/') else { return false };
        self.prow_job.contains(&format!("-{org}-{name}-"))
            || self.failure.lines.iter().any(|l| l.text.contains(&format!("github.com/{org}/{name}/")))
    }
}

/// True for test code that ships nowhere: unit tests, e2e suites and test
/// utilities of a repository. Test-extension binaries (`*-tests-ext`,
/// `tests-extension/`) run in payload jobs and are not counted here.
pub fn is_test_path(path: &str) -> bool {
    let l = path.to_ascii_lowercase();
    if l.contains("tests-ext") || l.contains("test-ext") || l.contains("tests-extension") {
        return false;
    }
    let base = l.rsplit('/').next().unwrap_or(&l);
    base.ends_with("_test.go")
        || base.ends_with(".test.ts")
        || base.ends_with(".spec.ts")
        || base.ends_with(".test.tsx")
        || base.ends_with("_test.py")
        || l.split('/').any(|s| {
            matches!(
                s,
                "test"
                    | "tests"
                    | "e2e"
                    | "testing"
                    | "testutil"
                    | "testutils"
                    | "integration"
                    | "cypress"
                    | "__tests__"
            )
        })
}

/// The rubric's signal and correlation level of an engine link.
fn signal_of(kind: LinkKind) -> (Signal, Correlation) {
    match kind {
        LinkKind::Verbatim => (Signal::ErrorMessageMatch, Correlation::Direct),
        LinkKind::StackFile | LinkKind::Command | LinkKind::Removed => (Signal::CodePath, Correlation::CodePath),
        LinkKind::Subject => (Signal::TestSubject, Correlation::CodePath),
        LinkKind::Title => (Signal::TitleMatch, Correlation::Subsystem),
        LinkKind::Component | LinkKind::Owners => (Signal::Component, Correlation::Subsystem),
    }
}

/// The candidate as the engine sees it.
fn change_of(c: &Candidate) -> Change<'_> {
    Change {
        id: &c.id,
        title: &c.title,
        body: None,
        author: None,
        label: c.short(),
        ships: if c.images.is_empty() { c.component.clone() } else { c.images.join(", ") },
        owns: components::candidate_keys(c.repo.as_deref(), &c.images),
    }
}

/// Stems of step-registry files (`ipi-install-install-commands.sh` → `ipi-install-install`).
pub fn step_stem(path: &str) -> Option<&str> {
    let base = path.rsplit('/').next().unwrap_or(path);
    ["-commands.sh", "-ref.yaml", "-chain.yaml", "-workflow.yaml", "-ref.metadata.json", "-chain.metadata.json"]
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .filter(|s| s.len() >= 4)
}

/// Correlates a candidate with a failure mode's evidence: the engine's links
/// (verbatim, code path, title, component), then the payload's own (test
/// binaries, CI step, RPM changelog).
pub fn correlate(
    ev: &ModeEvidence,
    c: &Candidate,
    ix: &CandidateIndex,
    w: &WindowIndex,
    weights: &Weights,
) -> CorrelationResult {
    let mut r = CorrelationResult::default();
    if let Some(why) = only_its_own_tests(ev, c, ix) {
        r.excluded = Some(why);
        return r;
    }
    if c.kind != CandidateKind::RhcosRpm {
        let found = engine::link(&ev.failure, &change_of(c), ix, w, weights);
        for l in found.links {
            let (signal, level) = signal_of(l.kind);
            r.add(Link { signal, points: l.points, specific: l.specific, evidence: l.evidence }, level);
        }
        r.error_match = found.verbatim;
    }
    if let Some(l) = test_binary_link(ev, ix, w) {
        r.add(l, Correlation::CodePath);
    }
    if let Some(l) = ci_step_link(ev, c) {
        r.add(l, Correlation::CodePath);
    }
    if c.rpm.is_some() {
        rpm_links(ev, c, &mut r);
    }
    r
}

/// A change confined to a repository's own tests breaks only jobs that run
/// them; the test framework itself (listing or extracting test binaries) is the
/// exception. Why the candidate is ruled out, when it is.
fn only_its_own_tests(ev: &ModeEvidence, c: &Candidate, ix: &CandidateIndex) -> Option<String> {
    let ruled_out =
        c.kind == CandidateKind::Pr
            && ix.has_product()
            && ix.files.iter().all(|p| is_test_path(p))
            && !c.repo.as_deref().is_some_and(|repo| ev.runs_tests_of(repo))
            && !(ev.test_binary_failure
                && ev.failure.components.iter().any(|cr| {
                    cr.subject && components::candidate_keys(c.repo.as_deref(), &c.images).contains(&cr.key)
                }));
    ruled_out.then(|| "the change touches only its repository's own tests, which this job does not run".into())
}

/// How many of the window's candidates do it, in words.
fn others(df: u32, alone: &str, several: &str) -> String {
    if df == 1 {
        alone.to_string()
    } else {
        format!("{df} candidates {several}")
    }
}

/// Test binaries could not be listed or extracted and the diff modifies one of
/// them (+20 when no other candidate does), or test-extension code (+10).
fn test_binary_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    if !(ev.test_binary_failure && ix.has_product()) {
        return None;
    }
    for (b, _) in &ev.binaries {
        let direct =
            ix.files.iter().find(|p| p.split('/').any(|s| s == b || s.strip_suffix(".go") == Some(b.as_str())));
        if let Some(p) = direct {
            let df =
                w.docs.values().filter(|d| d.files.iter().any(|p| p.split('/').any(|s| s == b))).count().max(1) as u32;
            return Some(Link {
                signal: Signal::TestBinary,
                points: if df == 1 { 20 } else { 10 },
                specific: df == 1,
                evidence: format!(
                    "test binaries could not be listed or extracted, and the diff modifies the test binary `{b}` ({p}); {}",
                    others(df, "no other candidate of the window does", "do")
                ),
            });
        }
    }
    let p =
        ix.files.iter().find(|p| p.contains("tests-ext") || p.contains("test-ext") || p.contains("tests-extension"))?;
    Some(Link {
        signal: Signal::TestBinary,
        points: 10,
        specific: false,
        evidence: format!(
            "test binaries could not be listed or extracted, and the diff modifies test-extension code ({p})"
        ),
    })
}

/// A CI-configuration change modifies the failing step or the job's configuration.
fn ci_step_link(ev: &ModeEvidence, c: &Candidate) -> Option<Link> {
    if c.kind != CandidateKind::CiConfig {
        return None;
    }
    for p in c.diff.as_ref()?.paths() {
        let hit = step_stem(p).and_then(|stem| {
            if ev.step_refs.iter().any(|r| r == stem) {
                return Some(format!("the failing step runs `{stem}`, which the change modifies ({p})"));
            }
            ev.failed_step
                .as_deref()
                .filter(|s| *s == stem || s.ends_with(&format!("-{stem}")))
                .map(|step| format!("the failing step `{step}` runs `{stem}`, which the change modifies ({p})"))
        });
        let hit = hit.or_else(|| {
            ev.ci_paths
                .iter()
                .any(|cp| cp == p)
                .then(|| format!("the change modifies the failing job's configuration ({p})"))
        });
        if let Some(e) = hit {
            return Some(Link { signal: Signal::CiStep, points: 20, specific: true, evidence: e });
        }
    }
    None
}

/// RHCOS RPM changes: an evidence token in the package's changelog, else the package named.
fn rpm_links(ev: &ModeEvidence, c: &Candidate, r: &mut CorrelationResult) {
    let Some(rpm) = &c.rpm else { return };
    if let Some(cl) = &rpm.changelog {
        for t in &ev.failure.tokens {
            let Some(line) = cl.lines().find(|l| l.contains(&t.text)) else { continue };
            let em = VerbatimMatch {
                token: t.text.clone(),
                token_kind: t.kind.name().to_string(),
                log: ev.failure.lines[t.line].clone(),
                diff_file: format!("{} changelog", rpm.package),
                diff_line: cl.lines().position(|l| l.contains(&t.text)).map(|p| p as u32 + 1).unwrap_or(0),
                diff_text: line.to_string(),
                df: 1,
                why_specific: format!("the RPM changelog of {} carries it", rpm.package),
            };
            let evidence = format!(
                "{} `{}` from {} appears in the {} changelog",
                em.token_kind,
                em.token,
                em.log.at.cite(),
                rpm.package
            );
            r.add(
                Link { signal: Signal::ErrorMessageMatch, points: 40, specific: true, evidence },
                Correlation::Direct,
            );
            r.error_match = Some(em);
            break;
        }
    }
    if r.error_match.is_some() {
        return;
    }
    let package = rpm.package.to_ascii_lowercase();
    if package.len() < 4 {
        return;
    }
    let named = ev.failure.lines.iter().find(|l| {
        citriage_suspects::window::words(&l.text).contains(&package)
            || l.text.to_ascii_lowercase().contains(&format!("{package}:"))
            || l.text.to_ascii_lowercase().contains(&format!("{package}-"))
    });
    if let Some(l) = named {
        r.add(
            Link {
                signal: Signal::Component,
                points: 20,
                specific: true,
                evidence: format!(
                    "the evidence names `{}` ({}), the changed package of {}",
                    rpm.package,
                    l.at.cite(),
                    rpm.variant_tag
                ),
            },
            Correlation::Subsystem,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{cand, evidence, ll, window};

    #[test]
    fn specific_match_beats_common_symbol() {
        let lines = vec![ll("E0510 1 x.go:2] failed: reconcileNodeLabels returned clusterNetworkConfig error", 3)];
        let culprit = cand(
            "pr:a/op#1",
            "a/op",
            "Label nodes",
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let common = "--- a/pkg/y.go\n+++ b/pkg/y.go\n@@ -1,0 +1,1 @@\n+var clusterNetworkConfig = 1\n";
        let others: Vec<Candidate> =
            (2..7).map(|i| cand(&format!("pr:a/o{i}#{i}"), &format!("a/o{i}"), "Tidy", common)).collect();
        let vendored = cand(
            "pr:a/v#9",
            "a/v",
            "Bump deps",
            "--- a/vendor/k/x.go\n+++ b/vendor/k/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let mut all: Vec<&Candidate> = others.iter().collect();
        all.push(&culprit);
        all.push(&vendored);
        let w = window(&all);
        let ev = evidence(lines, vec![]);
        let r = correlate(&ev, &culprit, &w.docs["pr:a/op#1"], &w, &Weights::default());
        let em = r.error_match.unwrap();
        assert_eq!((em.token.as_str(), em.df), ("reconcileNodeLabels", 1));
        let r = correlate(&ev, &others[0], &w.docs[&others[0].id], &w, &Weights::default());
        assert!(r.error_match.is_none(), "a token in 5 candidates earns nothing");
        let r = correlate(&ev, &vendored, &w.docs[&vendored.id], &w, &Weights::default());
        assert!(r.links.is_empty(), "vendored lines are ignored: {:?}", r.links);
    }

    #[test]
    fn title_and_component() {
        let c = cand(
            "pr:openshift/cluster-ingress-operator#1354",
            "openshift/cluster-ingress-operator",
            "Replace OLM-based Istio install with Sail Library",
            "",
        );
        let o = cand("pr:openshift/console#1", "openshift/console", "Fix topology labels", "");
        let w = window(&[&c, &o]);
        let ev = evidence(
            vec![ll(
                r#"Error running oc get -n openshift-ingress istio/openshift-gateway: error: the server doesn't have a resource type "istio""#,
                9,
            )],
            vec!["[sig-network-edge][Feature:Router] Ensure istiod deployment and the istio could be deleted".into()],
        );
        let r = correlate(&ev, &c, &w.docs[&c.id], &w, &Weights::default());
        assert!(r.has(Signal::TitleMatch) && r.has(Signal::Component), "{:?}", r.links);
        assert!(correlate(&ev, &o, &w.docs[&o.id], &w, &Weights::default()).links.is_empty());
    }
}
