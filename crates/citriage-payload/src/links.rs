//! Links between a candidate and a failure mode: what the diff, the title and
//! the candidate's component share with the failure's evidence, each quoted
//! with what makes it specific in the window.

use std::collections::BTreeMap;

use crate::candidate::{Candidate, CandidateKind};
use crate::components::{self, ComponentRef};
use crate::evidence::LogLine;
use crate::scoring::{Correlation, ErrorMatch, Signal};
use crate::specificity::{describe_df, CandidateIndex, WindowIndex};
use crate::tokens::{Matcher, Token, TokenKind};

/// Everything about one failure mode the links are drawn from.
#[derive(Debug, Clone, Default)]
pub struct ModeEvidence {
    /// The lines that explain the failure.
    pub lines: Vec<LogLine>,
    /// The failing tests.
    pub tests: Vec<String>,
    pub tokens: Vec<Token>,
    /// Source files the evidence names → line index.
    pub files: BTreeMap<String, usize>,
    /// Failing `oc` sub-command paths.
    pub commands: Vec<(Vec<String>, usize)>,
    /// Subject words → where they came from, and whether an error line (not
    /// only a test name) names them.
    pub words: BTreeMap<String, (String, bool)>,
    pub components: Vec<ComponentRef>,
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
        m: &Matcher,
        lines: Vec<LogLine>,
        tests: Vec<String>,
        binaries: Vec<(String, bool)>,
        test_binary_failure: bool,
    ) -> ModeEvidence {
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        let components = components::failure_components(&tests, &texts, &binaries, test_binary_failure);
        ModeEvidence {
            tokens: m.tokens(&lines),
            files: m.evidence_files(&lines),
            commands: m.commands(&lines),
            words: m.subject_words(&tests, &lines),
            components,
            lines,
            tests,
            binaries,
            test_binary_failure,
            step_refs: Vec::new(),
            ci_paths: Vec::new(),
            failed_step: None,
            prow_job: String::new(),
        }
    }

    /// True when this job runs the tests of `org/repo`: the job is the
    /// repository's own, or the failure cites the repository's code.
    pub fn runs_tests_of(&self, repo: &str) -> bool {
        let Some((org, name)) = repo.split_once('/') else { return false };
        self.prow_job.contains(&format!("-{org}-{name}-"))
            || self.lines.iter().any(|l| l.text.contains(&format!("github.com/{org}/{name}/")))
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

/// A link between a candidate and a failure mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub signal: Signal,
    pub points: u32,
    /// The link is specific (rare in the window, or structural).
    pub specific: bool,
    /// What was found, quoted, and why it is specific.
    pub evidence: String,
}

/// What correlating one candidate with one failure mode found.
#[derive(Debug, Clone, Default)]
pub struct CorrelationResult {
    pub level: Option<Correlation>,
    pub error_match: Option<ErrorMatch>,
    pub links: Vec<Link>,
    /// Why the candidate was ruled out before looking for links.
    pub excluded: Option<String>,
}

impl CorrelationResult {
    /// The strongest correlation.
    pub fn level(&self) -> Correlation {
        self.level.unwrap_or(Correlation::None)
    }

    fn add(&mut self, l: Link, level: Correlation) {
        if self.level.is_none_or(|x| x < level) {
            self.level = Some(level);
        }
        self.links.push(l);
    }

    /// True when a link of this signal exists.
    pub fn has(&self, s: Signal) -> bool {
        self.links.iter().any(|l| l.signal == s)
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

/// Correlates a candidate with a failure mode's evidence: every kind of link
/// the candidate has, the verbatim match first.
pub fn correlate(ev: &ModeEvidence, c: &Candidate, ix: &CandidateIndex, w: &WindowIndex) -> CorrelationResult {
    let mut r = CorrelationResult::default();
    if let Some(why) = only_its_own_tests(ev, c, ix) {
        r.excluded = Some(why);
        return r;
    }
    if let Some((link, em)) = verbatim_link(ev, ix, w) {
        r.add(link, Correlation::Direct);
        r.error_match = Some(em);
    }
    if let Some(l) = code_path_link(ev, ix, w) {
        r.add(l, Correlation::CodePath);
    }
    if let Some(l) = test_binary_link(ev, ix, w) {
        r.add(l, Correlation::CodePath);
    }
    if let Some(l) = ci_step_link(ev, c) {
        r.add(l, Correlation::CodePath);
    }
    if c.kind != CandidateKind::RhcosRpm {
        if let Some(l) = title_link(ev, c, ix, w) {
            r.add(l, Correlation::Subsystem);
        }
        if let Some(l) = component_link(ev, c) {
            r.add(l, Correlation::Subsystem);
        }
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
    let ruled_out = c.kind == CandidateKind::Pr
        && ix.has_product()
        && ix.files.iter().all(|p| is_test_path(p))
        && !c.repo.as_deref().is_some_and(|repo| ev.runs_tests_of(repo))
        && !(ev.test_binary_failure
            && ev
                .components
                .iter()
                .any(|cr| cr.subject && components::candidate_keys(c.repo.as_deref(), &c.images).contains(&cr.key)));
    ruled_out.then(|| "the change touches only its repository's own tests, which this job does not run".into())
}

/// The best token of the evidence found in an added product line, when it is
/// carried by at most 3 candidates: specific (+40) in one, +20 in 2-3.
fn verbatim_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex) -> Option<(Link, ErrorMatch)> {
    let n = w.len().max(1);
    let mut best: Option<((bool, u8, usize, usize), ErrorMatch)> = None;
    for t in &ev.tokens {
        let Some(hit) = ix.added_hit(&t.text) else { continue };
        let df = w.df(&t.text).max(1);
        if df > 3 {
            continue;
        }
        let key = (df == 1, t.kind.rank(), t.text.len(), usize::MAX - t.line);
        if best.as_ref().is_some_and(|(k, _)| *k >= key) {
            continue;
        }
        let why = format!("{} `{}` is {}", t.kind.name(), t.text, describe_df(df, n));
        let em = ErrorMatch {
            token: t.text.clone(),
            token_kind: t.kind.name().to_string(),
            log: ev.lines[t.line].clone(),
            diff_file: hit.file,
            diff_line: hit.line,
            diff_text: hit.text,
            df,
            why_specific: why,
        };
        best = Some((key, em));
    }
    let ((specific, ..), em) = best?;
    let evidence = format!(
        "{} `{}` from {} appears in the added line {}:{}; {}",
        em.token_kind,
        em.token,
        em.log.at.cite(),
        em.diff_file,
        em.diff_line,
        em.why_specific
    );
    let link = Link { signal: Signal::ErrorMessageMatch, points: if specific { 40 } else { 20 }, specific, evidence };
    Some((link, em))
}

/// How many of the window's candidates do it, in words.
fn others(df: u32, alone: &str, several: &str) -> String {
    if df == 1 {
        alone.to_string()
    } else {
        format!("{df} candidates {several}")
    }
}

/// Code path: a file the evidence names, the failing command's source (the
/// best of those), else a removed line carrying an evidence token.
fn code_path_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let mut code: Option<Link> = None;
    let named = ev.files.iter().filter_map(|(f, li)| named_file_link(ev, ix, w, f, *li));
    let commands = ev.commands.iter().filter_map(|(comps, li)| command_link(ev, ix, w, comps, *li));
    for l in named.chain(commands) {
        if code.as_ref().is_none_or(|c| c.points < l.points) {
            code = Some(l);
        }
    }
    code.or_else(|| removed_token_link(ev, ix, w))
}

/// The evidence names a file the diff modifies.
fn named_file_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex, f: &str, li: usize) -> Option<Link> {
    if !ix.basenames.contains(f) {
        return None;
    }
    let df = w.basename_df(f).max(1);
    if df > 3 {
        return None;
    }
    let path = ix.files.iter().find(|p| p.ends_with(&format!("/{f}")) || *p == f).cloned().unwrap_or_default();
    Some(Link {
        signal: Signal::CodePath,
        points: if df == 1 { 20 } else { 10 },
        specific: df == 1,
        evidence: format!(
            "the evidence names `{f}` ({}), which the diff modifies ({path}); {} modify a file of that name",
            ev.lines[li].at.cite(),
            if df == 1 { "no other candidate of the window does".to_string() } else { format!("{df} candidates") }
        ),
    })
}

/// The failing `oc` command is implemented in a file the diff modifies.
fn command_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex, comps: &[String], li: usize) -> Option<Link> {
    let files = ix.files_with_components(comps);
    let path = files.first()?;
    let df = w.components_df(comps).max(1);
    if df > 3 {
        return None;
    }
    Some(Link {
        signal: Signal::CodePath,
        points: if df == 1 { 20 } else { 10 },
        specific: df == 1,
        evidence: format!(
            "the failing command `oc … {}` ({}) is implemented in {path}, which the diff modifies; {}",
            comps.join(" "),
            ev.lines[li].at.cite(),
            others(df, "no other candidate of the window modifies it", "do")
        ),
    })
}

/// The diff removes a line carrying a specific evidence token.
fn removed_token_link(ev: &ModeEvidence, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let t = ev
        .tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Symbol || t.text.len() >= 8)
        .find(|t| ix.removed_has(&t.text) && w.df(&t.text) == 1)?;
    Some(Link {
        signal: Signal::CodePath,
        points: 20,
        specific: true,
        evidence: format!(
            "the diff removes `{}` (from {}); no other candidate of the window carries it",
            t.text,
            ev.lines[t.line].at.cite()
        ),
    })
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

/// A word of the failure's subject in this candidate's title and no other title of the window.
fn title_link(ev: &ModeEvidence, c: &Candidate, ix: &CandidateIndex, w: &WindowIndex) -> Option<Link> {
    let n = w.len().max(1);
    let mut hits: Vec<(&String, &(String, bool))> =
        ev.words.iter().filter(|(word, _)| ix.title_words.contains(*word) && w.title_df(word) == 1).collect();
    hits.sort_by_key(|(word, (_, strong))| (!*strong, (*word).clone()));
    let (word, (from, strong)) = hits.first()?;
    Some(Link {
        signal: Signal::TitleMatch,
        points: if *strong { 15 } else { 10 },
        specific: *strong,
        evidence: format!(
            "the title \"{}\" names `{word}`, which the failure's {} names ({}); no other title of the window's {n} candidates does",
            c.title,
            if *strong { "error" } else { "test name" },
            from.chars().take(200).collect::<String>()
        ),
    })
}

/// The candidate's repository or images own a component the failure is about (+20) or names (+10).
fn component_link(ev: &ModeEvidence, c: &Candidate) -> Option<Link> {
    let keys = components::candidate_keys(c.repo.as_deref(), &c.images);
    let mut best: Option<&ComponentRef> = None;
    for cr in &ev.components {
        if keys.contains(&cr.key) && best.is_none_or(|b| !b.subject && cr.subject) {
            best = Some(cr);
        }
    }
    let cr = best?;
    Some(Link {
        signal: Signal::Component,
        points: if cr.subject { 20 } else { 10 },
        specific: cr.subject,
        evidence: format!(
            "{} ({}) belongs to component `{}`: {}",
            c.short(),
            if c.images.is_empty() { c.component.clone() } else { c.images.join(", ") },
            cr.key,
            cr.how
        ),
    })
}

/// RHCOS RPM changes: an evidence token in the package's changelog, else the package named.
fn rpm_links(ev: &ModeEvidence, c: &Candidate, r: &mut CorrelationResult) {
    let Some(rpm) = &c.rpm else { return };
    if let Some(cl) = &rpm.changelog {
        for t in &ev.tokens {
            let Some(line) = cl.lines().find(|l| l.contains(&t.text)) else { continue };
            let em = ErrorMatch {
                token: t.text.clone(),
                token_kind: t.kind.name().to_string(),
                log: ev.lines[t.line].clone(),
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
    let named = ev.lines.iter().find(|l| {
        crate::specificity::words(&l.text).contains(&package)
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
    use crate::diff::parse_unified;
    use crate::evidence::Location;

    fn ll(t: &str, line: u32) -> LogLine {
        LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(line) } }
    }

    fn cand(id: &str, repo: &str, title: &str, diff: &str) -> Candidate {
        Candidate {
            id: id.into(),
            kind: CandidateKind::Pr,
            title: title.into(),
            url: None,
            component: repo.rsplit('/').next().unwrap().into(),
            repo: Some(repo.into()),
            number: Some(1),
            images: vec![repo.rsplit('/').next().unwrap().into()],
            payload: Some("p".into()),
            date: None,
            rpm: None,
            diff_available: true,
            diff: Some(parse_unified(diff)),
            presubmits: None,
            is_rebase: false,
        }
    }

    fn window(cs: &[&Candidate]) -> WindowIndex {
        WindowIndex::new(cs.iter().map(|c| (c.id.clone(), CandidateIndex::new(c.diff.as_ref(), &c.title))).collect())
    }

    fn evidence(lines: Vec<LogLine>, tests: Vec<String>) -> ModeEvidence {
        ModeEvidence::new(&Matcher, lines, tests, vec![], false)
    }

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
        let r = correlate(&ev, &culprit, &w.docs["pr:a/op#1"], &w);
        let em = r.error_match.unwrap();
        assert_eq!((em.token.as_str(), em.df), ("reconcileNodeLabels", 1));
        let r = correlate(&ev, &others[0], &w.docs[&others[0].id], &w);
        assert!(r.error_match.is_none(), "a token in 5 candidates earns nothing");
        let r = correlate(&ev, &vendored, &w.docs[&vendored.id], &w);
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
        let r = correlate(&ev, &c, &w.docs[&c.id], &w);
        assert!(r.has(Signal::TitleMatch) && r.has(Signal::Component), "{:?}", r.links);
        assert!(correlate(&ev, &o, &w.docs[&o.id], &w).links.is_empty());
    }
}
