//! Splitting a failed run into failure modes, each with the lines that explain
//! it. A mode is a group of failing tests (or aggregated tests, or a failed CI
//! step) sharing one signature; its evidence lines are the failing tests'
//! messages and error lines and the build log's error lines of the same
//! signature — never info lines, never the wrapper lines of a failed step.
//!
//! Special shapes recognized here:
//! - **test binaries** that could not be listed or extracted (the names of the
//!   binaries concerned are kept, from the error line or the step's output);
//! - **run-level failures** of aggregated jobs: when the same subset of
//!   underlying runs failed several unrelated tests that the other runs passed,
//!   the runs broke, not the tests;
//! - **CI steps**: the step-registry references and job configuration named by
//!   the build log, so CI-configuration changes can be matched and named;
//! - **no evidence**: a mode that says what is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;

use crate::aggregated::AggregatedTest;
use crate::classify::Classifier;
use crate::evidence::{Location, LogLine, RunEvidence, SignatureHint, TestFailure, TestKind};
use crate::lines;
use crate::signature::{MaskingSigner, Signature, Signer};

/// A failure mode before classification.
#[derive(Debug, Clone)]
pub struct Draft {
    pub sig: Signature,
    pub summary: String,
    pub tests: Vec<String>,
    /// The lines that explain the failure (cited evidence).
    pub lines: Vec<LogLine>,
    pub has_gating_tests: bool,
    pub in_ci_step: bool,
    pub informing_only: bool,
    pub no_evidence: bool,
    pub failed_step: Option<String>,
    pub hint: Option<SignatureHint>,
    /// Test binaries could not be listed or extracted.
    pub test_binary: bool,
    /// Test binaries named (true: by the error line itself).
    pub binaries: Vec<(String, bool)>,
    /// Step-registry references of the failing step.
    pub step_refs: Vec<String>,
    /// CI configuration files of the job.
    pub ci_paths: Vec<String>,
    /// Run-level failure of an aggregated job (sentence, line).
    pub run_level: Option<(String, Option<LogLine>)>,
    /// A payload command (`oc`, `openshift-install`) failed inside the CI step.
    pub product_error: bool,
}

impl Draft {
    fn new(sig: Signature, summary: String) -> Draft {
        Draft {
            sig,
            summary,
            tests: Vec::new(),
            lines: Vec::new(),
            has_gating_tests: false,
            in_ci_step: false,
            informing_only: false,
            no_evidence: false,
            failed_step: None,
            hint: None,
            test_binary: false,
            binaries: Vec::new(),
            step_refs: Vec::new(),
            ci_paths: Vec::new(),
            run_level: None,
            product_error: false,
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern"))
}

/// Keeps distinct, non-empty lines, at most `limit`.
pub fn dedup_lines(lines: Vec<LogLine>, limit: usize) -> Vec<LogLine> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for l in lines {
        if l.text.trim().is_empty() {
            continue;
        }
        if seen.insert((l.at.file.clone(), l.at.line, l.text.clone())) {
            out.push(l);
        }
        if out.len() >= limit {
            break;
        }
    }
    out
}

fn explaining(text: &str, at: &Location, limit: usize) -> Vec<LogLine> {
    lines::explaining_lines(text, limit).into_iter().map(|(_, t)| LogLine { text: t, at: at.clone() }).collect()
}

/// The CI context of a run: step-registry references, the job's configuration
/// file, and the test binaries named in the log's tail.
#[derive(Debug, Clone, Default)]
pub struct StepContext {
    pub refs: Vec<String>,
    pub ci_paths: Vec<String>,
    pub binaries: Vec<String>,
}

impl StepContext {
    /// Reads the context lines (and error lines) of a run.
    pub fn of(ev: &RunEvidence) -> StepContext {
        static STEP_LINK: OnceLock<Regex> = OnceLock::new();
        static JOB_LINK: OnceLock<Regex> = OnceLock::new();
        let step_link = re(&STEP_LINK, r"registry info site: https?://[^\s/]+/reference/([A-Za-z0-9][\w.-]*)");
        let job_link = re(
            &JOB_LINK,
            r"registry info site: https?://[^\s]+/job\?org=([\w.-]*)&repo=([\w.-]*)&branch=([\w.-]*)&test=([\w.-]*)(?:&variant=([\w.-]*))?",
        );
        let mut c = StepContext::default();
        let texts =
            ev.context.iter().chain(ev.log_lines.iter()).map(|l| l.text.as_str()).chain(
                ev.failures.iter().filter(|f| f.is_step && f.kind == TestKind::Failure).map(|f| f.text.as_str()),
            );
        for t in texts {
            for l in t.lines() {
                if let Some(m) = step_link.captures(l) {
                    let r = m[1].to_string();
                    if !c.refs.contains(&r) {
                        c.refs.push(r);
                    }
                }
                if let Some(m) = job_link.captures(l) {
                    let (org, repo, branch) = (&m[1], &m[2], &m[3]);
                    if !org.is_empty() && !repo.is_empty() && !branch.is_empty() {
                        let variant = m.get(5).map(|v| format!("__{}", v.as_str())).unwrap_or_default();
                        let p = format!("ci-operator/config/{org}/{repo}/{org}-{repo}-{branch}{variant}.yaml");
                        if !c.ci_paths.contains(&p) {
                            c.ci_paths.push(p);
                        }
                    }
                }
                for b in lines::test_binaries(l) {
                    if !c.binaries.contains(&b) {
                        c.binaries.push(b);
                    }
                }
            }
        }
        c
    }
}

/// Go tests report a parent as failed when a subtest fails: the parent adds
/// nothing when one of its subtests is among the failures.
fn is_failing_parent(name: &str, all: &BTreeSet<&str>) -> bool {
    let prefix = format!("{name}/");
    all.iter().any(|n| n.starts_with(&prefix))
}

/// A run-level failure of an aggregated job, when its failed tests show one.
pub fn run_level(failed: &[&AggregatedTest]) -> Option<(String, u32, u32)> {
    static TAG: OnceLock<Regex> = OnceLock::new();
    let tag = re(&TAG, r"\[(sig-[a-z-]+|bz-[^\]]+|Jira:[^\]]+)\]");
    let with_failures: Vec<&&AggregatedTest> = failed.iter().filter(|t| !t.failures.is_empty()).collect();
    if with_failures.len() < 3 {
        return None;
    }
    let set = |t: &AggregatedTest| t.failures.iter().map(|r| r.job_run_id.clone()).collect::<BTreeSet<String>>();
    let first = set(with_failures[0]);
    if first.is_empty() || !with_failures.iter().all(|t| set(t) == first && !t.passes.is_empty()) {
        return None;
    }
    let areas: BTreeSet<String> =
        with_failures.iter().filter_map(|t| tag.captures(&t.name).map(|c| c[1].to_string())).collect();
    if areas.len() < 2 {
        return None;
    }
    let reliable =
        with_failures.iter().all(|t| t.verdict.as_ref().and_then(|v| v.historical_pass_rate).is_none_or(|r| r >= 90));
    if !reliable {
        return None;
    }
    let total = with_failures[0].passes.len() + with_failures[0].failures.len();
    Some((
        format!(
            "run-level failure: the same {} of {} underlying runs failed {} unrelated tests ({}) that the other runs passed",
            first.len(),
            total,
            with_failures.len(),
            areas.into_iter().collect::<Vec<_>>().join(", ")
        ),
        first.len() as u32,
        total as u32,
    ))
}

/// A mode that says what evidence is missing.
pub fn no_evidence_draft(job: &str, why: &str) -> Draft {
    let mut d = Draft::new(
        Signature { id: format!("no-evidence/{job}"), text: format!("insufficient evidence ({why})") },
        format!("insufficient evidence: {why}"),
    );
    d.no_evidence = true;
    d
}

/// Splits a run's evidence into failure modes: the product tests' modes (unless
/// a setup step failed), the aggregated tests'; else the informing tests' mode;
/// else the failed CI step's (or the build log's) mode; else what is missing.
pub fn build_modes(ev: Option<&RunEvidence>, job: &str, signer: &dyn Signer, classifier: &Classifier) -> Vec<Draft> {
    let Some(ev) = ev else {
        return vec![no_evidence_draft(job, "no artifacts were found for the run")];
    };
    let run = Run::new(ev, signer);
    let aggregated: BTreeSet<&str> = ev.aggregated.iter().map(|a| a.name.as_str()).collect();
    let all_failing: BTreeSet<&str> = ev.gating().filter(|f| !f.is_step).map(|f| f.name.as_str()).collect();
    let gating_all: Vec<&TestFailure> = ev
        .gating()
        .filter(|f| !f.is_step && !aggregated.contains(f.name.as_str()) && !is_failing_parent(&f.name, &all_failing))
        .collect();
    // An aggregator that lacked finished underlying runs judged nothing.
    let (too_few, gating): (Vec<&TestFailure>, Vec<&TestFailure>) =
        gating_all.into_iter().partition(|f| too_few_runs(&f.text));
    let steps: Vec<&TestFailure> = ev.gating().filter(|f| f.is_step).collect();
    // A setup step failed (ci-operator's pre phase): the product tests that
    // "failed" only summarize it (`install should succeed`); its output is the evidence.
    let setup_failed = steps.iter().any(|s| s.name.ends_with(" pre phase"));
    let mut drafts: Vec<Draft> = Vec::new();
    if !gating.is_empty() && !setup_failed {
        drafts.extend(run.product_test_modes(&gating));
    }
    drafts.extend(aggregated_modes(ev));
    if drafts.is_empty() && !too_few.is_empty() {
        drafts.push(too_few_runs_mode(&too_few));
    }
    if !drafts.is_empty() {
        return drafts;
    }
    // Only informing tests failed: they cannot fail the job.
    if steps.is_empty() {
        if let Some(d) = run.informing_mode() {
            return vec![d];
        }
    }
    // No product test failed: a CI step, or the build log alone.
    let summarized = if setup_failed { gating.as_slice() } else { &[] };
    vec![run.step_mode(job, &steps, summarized, classifier)]
}

/// A run's evidence with what every mode is drawn from: its CI context and the
/// build log's explaining lines with their signatures.
struct Run<'a> {
    ev: &'a RunEvidence,
    signer: &'a dyn Signer,
    context: StepContext,
    /// Build-log lines, wrapper and info lines aside.
    log: Vec<&'a LogLine>,
    log_signatures: Vec<Option<Signature>>,
}

impl<'a> Run<'a> {
    fn new(ev: &'a RunEvidence, signer: &'a dyn Signer) -> Run<'a> {
        let log: Vec<&LogLine> =
            ev.log_lines.iter().filter(|l| !lines::is_wrapper_line(&l.text) && !lines::is_info_line(&l.text)).collect();
        let log_signatures = log.iter().map(|l| signer.signature(&l.text)).collect();
        Run { ev, signer, context: StepContext::of(ev), log, log_signatures }
    }

    /// The signature a hint names, else the signer's.
    fn signature(&self, text: &str, hint: Option<&SignatureHint>) -> Option<Signature> {
        match hint {
            Some(h) if !h.id.is_empty() => {
                Some(Signature { id: h.id.clone(), text: h.label.clone().unwrap_or_else(|| h.id.clone()) })
            }
            _ => self.signer.signature(text),
        }
    }

    /// Marks a mode whose lines say test binaries could not be listed or extracted.
    fn test_binaries(&self, d: &mut Draft) {
        if d.lines.iter().any(|l| lines::is_test_binary_failure(&l.text)) {
            d.test_binary = true;
            d.binaries = binaries_of(&d.lines, &self.context);
            retitle_test_binary(d);
        }
    }

    /// Product tests grouped by the signature of their explaining line, each
    /// group with the build log's lines of the same failure.
    fn product_test_modes(&self, gating: &[&TestFailure]) -> Vec<Draft> {
        let ev = self.ev;
        let mut groups: BTreeMap<String, Draft> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for f in gating {
            let expl = explaining(&f.text, &f.at, 8);
            // A bare header line ("fail [x.go:12]: Unexpected error:") is completed by the next one.
            let basis = match (expl.first(), expl.get(1)) {
                (Some(a), Some(b)) if is_bare_header(&a.text) => format!("{} {}", a.text.trim(), b.text.trim()),
                (Some(a), _) => a.text.clone(),
                _ => f.name.clone(),
            };
            let Some(sig) = self.signature(&basis, f.hint.as_ref().or(ev.hint.as_ref())) else { continue };
            let d = groups.entry(sig.id.clone()).or_insert_with(|| {
                order.push(sig.id.clone());
                let mut d =
                    Draft::new(sig.clone(), MaskingSigner.significant_line(&basis).unwrap_or(&f.name).to_string());
                d.has_gating_tests = true;
                d.failed_step = ev.failed_step.clone();
                d.hint = f.hint.clone().or(ev.hint.clone());
                d
            });
            d.tests.push(f.name.clone());
            if d.tests.len() <= 3 {
                d.lines.extend(expl);
            }
        }
        let mut drafts = Vec::new();
        for id in &order {
            let mut d = groups.remove(id).unwrap_or_else(|| Draft::new(Signature::of_text(id), String::new()));
            let mut lines = std::mem::take(&mut d.lines);
            lines.extend(self.log_lines_of(id, &lines));
            d.lines = dedup_lines(lines, 40);
            self.test_binaries(&mut d);
            drafts.push(d);
        }
        drafts
    }

    /// Build-log error lines of the same failure: the same signature, or one of
    /// the failing tests' distinctive strings; at most 5.
    fn log_lines_of(&self, signature: &str, test_lines: &[LogLine]) -> Vec<LogLine> {
        let tokens: Vec<String> = citriage_suspects::tokens::Matcher
            .tokens(test_lines)
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.len() >= 8)
            .collect();
        self.log
            .iter()
            .zip(&self.log_signatures)
            .filter(|(l, s)| {
                s.as_ref().is_some_and(|s| s.id == signature)
                    || (lines::explains_failure(&l.text) && tokens.iter().any(|t| l.text.contains(t.as_str())))
            })
            .map(|(l, _)| (*l).clone())
            .take(5)
            .collect()
    }

    /// The informing tests' mode, when only informing tests failed.
    fn informing_mode(&self) -> Option<Draft> {
        let informing: Vec<&TestFailure> = self.ev.failures.iter().filter(|f| f.kind == TestKind::Informing).collect();
        let f = informing.first()?;
        let expl = explaining(&f.text, &f.at, 8);
        let basis = expl.first().map(|l| l.text.clone()).unwrap_or_else(|| f.name.clone());
        let sig = self.signature(&basis, f.hint.as_ref())?;
        let mut d = Draft::new(sig, MaskingSigner.significant_line(&basis).unwrap_or(&f.name).to_string());
        d.tests = informing.iter().map(|f| f.name.clone()).collect();
        d.lines = dedup_lines(expl, 20);
        d.informing_only = true;
        d.hint = f.hint.clone();
        Some(d)
    }

    /// The failed CI step's mode (or the build log's), from its decisive line:
    /// a known cause, a test-binary failure, an explicit error, else the first.
    /// `summarized` are product tests that only summarize a failed setup step.
    fn step_mode(
        &self,
        job: &str,
        steps: &[&TestFailure],
        summarized: &[&TestFailure],
        classifier: &Classifier,
    ) -> Draft {
        let ev = self.ev;
        let mut expl: Vec<LogLine> = Vec::new();
        for s in steps {
            expl.extend(explaining(&s.text, &s.at, 12));
        }
        expl.extend(self.log.iter().filter(|l| lines::explains_failure(&l.text)).map(|l| (*l).clone()));
        let expl = dedup_lines(expl, 40);
        let decisive = expl
            .iter()
            .position(|l| classifier.is_cause_line(&l.text))
            .or_else(|| expl.iter().position(|l| lines::is_test_binary_failure(&l.text)))
            .or_else(|| {
                let explicit = re_explicit();
                expl.iter().position(|l| explicit.is_match(&l.text))
            })
            .or_else(|| (!expl.is_empty()).then_some(0));
        let in_step = !steps.is_empty() || ev.failed_step.is_some();
        let Some(i) = decisive else {
            let mut d = no_evidence_draft(job, &self.nothing_explains(steps));
            d.in_ci_step = in_step;
            d.failed_step = ev.failed_step.clone();
            d.step_refs = self.context.refs.clone();
            d.ci_paths = self.context.ci_paths.clone();
            return d;
        };
        let basis = expl[i].text.clone();
        let Some(sig) = self.signature(&basis, ev.hint.as_ref()) else {
            return no_evidence_draft(job, "the failed step left no text");
        };
        let mut lines = vec![expl[i].clone()];
        lines.extend(expl.iter().cloned());
        let mut d = Draft::new(sig, MaskingSigner.significant_line(&basis).unwrap_or(&basis).to_string());
        d.tests = steps.iter().map(|s| s.name.clone()).collect();
        d.tests.extend(summarized.iter().map(|f| f.name.clone()));
        d.lines = dedup_lines(lines, 40);
        d.product_error = d.lines.iter().take(12).any(|l| payload_command_failed(&l.text));
        d.in_ci_step = in_step;
        d.failed_step = ev.failed_step.clone();
        d.hint = ev.hint.clone();
        d.step_refs = self.context.refs.clone();
        d.ci_paths = self.context.ci_paths.clone();
        self.test_binaries(&mut d);
        d
    }

    /// Why nothing explains the failure.
    fn nothing_explains(&self, steps: &[&TestFailure]) -> String {
        let ev = self.ev;
        if !steps.is_empty() || ev.failed_step.is_some() {
            format!(
                "the CI step {} failed and its output explains nothing beyond an exit status",
                ev.failed_step.clone().unwrap_or_else(|| steps[0].name.clone())
            )
        } else if !ev.junit.readable() && ev.log_lines.is_empty() && ev.context.is_empty() {
            match &ev.junit {
                crate::evidence::JunitState::Empty { .. } => {
                    "the JUnit export (results.json) is empty and there is no build log".to_string()
                }
                _ => "no JUnit and no build log".to_string(),
            }
        } else if ev.junit.readable() {
            "JUnit shows no failing test and the build log no error line".to_string()
        } else {
            "no JUnit and no build-log error line".to_string()
        }
    }
}

/// The line of an aggregated test: its name and the aggregator's sentence.
fn aggregated_line(a: &AggregatedTest) -> LogLine {
    let sentence = a.verdict.as_ref().map(|v| v.sentence.clone()).unwrap_or_else(|| "aggregated test failed".into());
    LogLine {
        text: format!("{}: {sentence}", a.name),
        at: Location {
            file: if a.line > 0 { "junit-aggregated.xml".into() } else { "junit/results.json".into() },
            url: None,
            line: (a.line > 0).then_some(a.line),
        },
    }
}

const TOO_FEW_RUNS: &str = "the aggregator had too few finished underlying runs to judge (not enough data to aggregate); the underlying jobs hold the evidence";

/// The modes of the failed (gating) aggregated tests: insufficient evidence when
/// the aggregator could judge none; one run-level mode when the same runs
/// failed them together; else one mode per test.
fn aggregated_modes(ev: &RunEvidence) -> Vec<Draft> {
    let failed: Vec<&AggregatedTest> = ev.aggregated.iter().filter(|a| a.failed && !a.informing).collect();
    if failed.is_empty() {
        return Vec::new();
    }
    let too_few = |a: &AggregatedTest| {
        a.failures.is_empty()
            && a.verdict.as_ref().is_none_or(|v| v.failures == 0 && v.required_passes.is_none_or(|r| v.passes < r))
    };
    if failed.iter().all(|a| too_few(a)) {
        let mut d = no_evidence_draft("aggregated", TOO_FEW_RUNS);
        d.sig = Signature::of_text("aggregated: not enough underlying runs");
        d.tests = failed.iter().map(|a| a.name.clone()).collect();
        d.lines = failed.iter().take(3).map(|a| aggregated_line(a)).collect();
        return vec![d];
    }
    if let Some((why, k, n)) = run_level(&failed) {
        let mut d =
            Draft::new(Signature::of_text(&format!("aggregated runs failed together: {k} of {n}")), why.clone());
        d.tests = failed.iter().map(|a| a.name.clone()).collect();
        d.lines = failed.iter().take(5).map(|a| aggregated_line(a)).collect();
        d.has_gating_tests = true;
        d.run_level = Some((why, d.lines.first().cloned()));
        d.hint = ev.hint.clone();
        return vec![d];
    }
    failed
        .into_iter()
        .map(|a| {
            let mut d =
                Draft::new(Signature::of_text(&format!("aggregated test failed: {}", a.name)), aggregated_line(a).text);
            d.tests = vec![a.name.clone()];
            d.lines = vec![aggregated_line(a)];
            d.has_gating_tests = true;
            d.hint = ev.hint.clone();
            d
        })
        .collect()
}

/// Aggregated verdicts that judged nothing (too few finished runs).
fn too_few_runs_mode(too_few: &[&TestFailure]) -> Draft {
    let mut d = no_evidence_draft("aggregated", TOO_FEW_RUNS);
    d.sig = Signature::of_text("aggregated: not enough underlying runs");
    d.tests = too_few.iter().map(|f| f.name.clone()).collect();
    d.lines = too_few
        .iter()
        .take(3)
        .map(|f| LogLine { text: format!("{}: {}", f.name, f.message), at: f.at.clone() })
        .collect();
    d
}

/// An aggregated verdict saying the aggregator could not judge.
fn too_few_runs(text: &str) -> bool {
    static FEW: OnceLock<Regex> = OnceLock::new();
    re(
        &FEW,
        r"(?i)not enough data to aggregate|we require at least \d+ attempts|too few (finished )?(underlying )?runs",
    )
    .is_match(text)
}

/// A line that only announces an error ("fail [x.go:12]: Unexpected error:").
fn is_bare_header(text: &str) -> bool {
    let t = text.trim_end();
    if !t.ends_with(':') {
        return false;
    }
    let body = match t.find("]: ") {
        Some(i) if t.trim_start().starts_with("fail [") => &t[i + 3..],
        _ => t,
    };
    body.split_whitespace().count() <= 4
}

/// A payload binary (`oc`, `openshift-install`, `openshift-tests`) ran and
/// failed: the line is its command or its error.
fn payload_command_failed(text: &str) -> bool {
    static CMD: OnceLock<Regex> = OnceLock::new();
    re(&CMD, r"(?:^|[\s:>+])(oc|openshift-install|openshift-tests|kubectl) (adm |--?\S+ )*[a-z][a-z-]+ ").is_match(text)
}

fn re_explicit() -> &'static Regex {
    static EXPLICIT: OnceLock<Regex> = OnceLock::new();
    re(&EXPLICIT, r"^\s*(Error|ERROR|error|FATAL|fatal)(:| )|level=(error|fatal)")
}

/// Test-binary failures naming the same binaries are one failure, whatever
/// wrapper printed them (`couldn't retrieve test suites: …` or not).
fn retitle_test_binary(d: &mut Draft) {
    let mut named: Vec<&str> = d.binaries.iter().filter(|(_, s)| *s).map(|(b, _)| b.as_str()).collect();
    if named.is_empty() {
        return;
    }
    named.sort();
    named.dedup();
    d.sig = Signature::of_text(&format!("test binaries could not be extracted: {}", named.join(", ")));
}

/// Test binaries of a test-binary failure: those its error lines name (the
/// subject), else those the step's output lists.
fn binaries_of(lines: &[LogLine], ctx: &StepContext) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for l in lines.iter().filter(|l| lines::is_test_binary_failure(&l.text)) {
        for b in lines::test_binaries(&l.text) {
            if !out.iter().any(|(x, _)| *x == b) {
                out.push((b, true));
            }
        }
    }
    if out.is_empty() {
        out.extend(ctx.binaries.iter().map(|b| (b.clone(), false)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregated::{PassTally, UnderlyingRun};

    fn run(id: &str) -> UnderlyingRun {
        UnderlyingRun { job_run_id: id.into(), human_url: String::new(), gcs_artifact_url: String::new(), job: None }
    }

    fn agg(name: &str, fails: &[&str], passes: usize) -> AggregatedTest {
        AggregatedTest {
            name: name.into(),
            suite: String::new(),
            failed: true,
            informing: false,
            verdict: Some(PassTally {
                passed: false,
                passes: passes as u32,
                failures: fails.len() as u32,
                historical_pass_rate: Some(100),
                required_passes: Some(8),
                sentence: String::new(),
            }),
            passes: (0..passes).map(|i| run(&format!("p{i}"))).collect(),
            failures: fails.iter().map(|f| run(f)).collect(),
            skips: vec![],
            incomplete: vec![],
            line: 0,
            problem: None,
        }
    }

    #[test]
    fn run_level_needs_the_same_runs_and_unrelated_tests() {
        let a = agg("[sig-apps] StatefulSet works", &["r1", "r2", "r3"], 7);
        let b = agg("[sig-storage] PVC protection", &["r1", "r2", "r3"], 7);
        let c = agg("[Jira:\"Test Framework\"] there should not be mass test failures", &["r1", "r2", "r3"], 7);
        assert!(run_level(&[&a, &b, &c]).is_some());
        let d = agg("[sig-apps] other", &["r1", "r4"], 8);
        assert!(run_level(&[&a, &b, &d]).is_none(), "different runs");
        let e = agg("[sig-apps] again", &["r1", "r2", "r3"], 7);
        assert!(run_level(&[&a, &e, &e]).is_none(), "one area");
    }

    #[test]
    fn parents_of_failing_subtests_add_nothing() {
        let all: BTreeSet<&str> = ["TestA", "TestA/Main", "TestA/Main/Check", "TestB"].into_iter().collect();
        assert!(is_failing_parent("TestA", &all) && is_failing_parent("TestA/Main", &all));
        assert!(!is_failing_parent("TestA/Main/Check", &all) && !is_failing_parent("TestB", &all));
    }
}
