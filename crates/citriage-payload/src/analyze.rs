//! The analysis pipeline: chain and history, changelogs, job history, failure
//! modes and their onsets, root causes and systemic context, candidates and their
//! scores, the decision and the recommendations. Pure given its inputs: the
//! source, the evidence provider and the options (`as_of` included).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use regex::Regex;

use crate::action::{self, Band, CandidateAction, Verdict};
use crate::analysis::*;
use crate::ciconfig::{self, CiConfigChange};
use crate::classify::{Classification, Classifier, FailureClass, ModeFacts};
use crate::diff;
use crate::error::PayloadError;
use crate::evidence::{EvidenceProvider, LogLine, RunEvidence, SignatureHint, TestKind};
use crate::history::{self, Chain};
use crate::jobhistory::{self, JobRun, Outcome, RunState, Streak};
use crate::model::{self, ChangeLogState, JobResult, JobState, PullRequest, ReleaseInfo, TagList};
use crate::scoring::{
    self, Candidate, CandidateKind, CandidateScore, Correlation, CorrelationResult, Matcher, RpmChange, ScoreContext,
};
use crate::signature::{MaskingSigner, Signature, Signer};
use crate::source::PayloadSource;
use citriage_model::time::{self, Epoch};

/// Options of [`analyze`].
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// The payload tag.
    pub tag: String,
    /// Release-controller stream name; derived from the tag when `None`.
    pub stream: Option<String>,
    /// RFC 3339 cutoff: later events are ignored.
    pub as_of: Option<String>,
    /// Pass-rate window in days (7).
    pub window_days: u32,
    /// Most payloads walked back looking for the baseline (20).
    pub max_chain: usize,
    /// Extra older payloads read for job history when the source has no job-run
    /// records (0 disables; the chain is always used).
    pub history_payloads: usize,
    /// Base URL of the release-controller pages for links; default
    /// `https://<arch>.ocp.releases.ci.openshift.org`.
    pub release_controller_url: Option<String>,
    /// CI-configuration changes: a recorded JSON list, or a git checkout of an
    /// `openshift/release`-like repository. `None` uses the source's own list, if any.
    pub ci_config_changes: Option<PathBuf>,
    /// Path inside the checkout whose history is read.
    pub ci_config_subpath: String,
    /// Repository name used in CI-configuration URLs.
    pub ci_config_repo: String,
    /// Read evidence of failed informing / async jobs for the broader context.
    pub systemic_context: bool,
}

impl AnalyzeOptions {
    /// Defaults for a tag.
    pub fn new(tag: &str) -> AnalyzeOptions {
        AnalyzeOptions {
            tag: tag.to_string(),
            stream: None,
            as_of: None,
            window_days: 7,
            max_chain: 20,
            history_payloads: 40,
            release_controller_url: None,
            ci_config_changes: None,
            ci_config_subpath: "ci-operator/step-registry".to_string(),
            ci_config_repo: "openshift/release".to_string(),
            systemic_context: true,
        }
    }
}

/// Evidence lookups, cached, with the `as_of` filter and gap recording.
struct Evidence<'a> {
    provider: &'a dyn EvidenceProvider,
    as_of: Option<Epoch>,
    cache: RefCell<BTreeMap<String, Option<RunEvidence>>>,
    gaps: RefCell<BTreeSet<String>>,
}

impl Evidence<'_> {
    fn get(&self, url: &str) -> Option<RunEvidence> {
        if let Some(e) = self.cache.borrow().get(url) {
            return e.clone();
        }
        let v = match self.provider.run_evidence(url) {
            Ok(Some(e)) if self.as_of.is_some_and(|cut| e.finished.is_some_and(|f| f > cut)) => {
                self.gaps.borrow_mut().insert(format!("{url}: finished after the as-of time; its evidence is ignored"));
                None
            }
            Ok(v) => v,
            Err(e) => {
                self.gaps.borrow_mut().insert(format!("evidence unreadable: {e}"));
                None
            }
        };
        self.cache.borrow_mut().insert(url.to_string(), v.clone());
        v
    }
}

/// A failure mode before classification.
#[derive(Debug, Clone)]
struct Draft {
    sig: Signature,
    summary: String,
    tests: Vec<String>,
    lines: Vec<LogLine>,
    has_gating_tests: bool,
    in_ci_step: bool,
    informing_only: bool,
    no_evidence: bool,
    failed_step: Option<String>,
    hint: Option<SignatureHint>,
}

fn dedup_lines(lines: Vec<LogLine>, limit: usize) -> Vec<LogLine> {
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

fn text_lines(text: &str, at: &crate::evidence::Location, limit: usize) -> Vec<LogLine> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .take(limit)
        .map(|l| LogLine { text: l.chars().take(1000).collect(), at: at.clone() })
        .collect()
}

/// Splits a run's evidence into failure modes.
fn build_modes(
    ev: Option<&RunEvidence>,
    job: &str,
    signer: &dyn Signer,
    classifier_text: &Regex,
    classifier: &Classifier,
) -> Vec<Draft> {
    let Some(ev) = ev else {
        return vec![no_evidence_draft(job, "no evidence was found for the run")];
    };
    let sig_of = |text: &str, hint: Option<&SignatureHint>| -> Option<Signature> {
        match hint {
            Some(h) if !h.id.is_empty() => {
                Some(Signature { id: h.id.clone(), text: h.label.clone().unwrap_or_else(|| h.id.clone()) })
            }
            _ => signer.signature(text),
        }
    };
    let log_sig: Vec<Option<Signature>> = ev.log_lines.iter().map(|l| signer.signature(&l.text)).collect();
    let gating: Vec<_> = ev.gating().filter(|f| !f.is_step).collect();
    let steps: Vec<_> = ev.gating().filter(|f| f.is_step).collect();
    let mut drafts: Vec<Draft> = Vec::new();
    if !gating.is_empty() {
        let mut groups: BTreeMap<String, Draft> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for f in &gating {
            let basis = if f.text.trim().is_empty() { f.message.clone() } else { f.text.clone() };
            let basis = if basis.trim().is_empty() { f.name.clone() } else { basis };
            let Some(sig) = sig_of(&basis, f.hint.as_ref().or(ev.hint.as_ref())) else { continue };
            let d = groups.entry(sig.id.clone()).or_insert_with(|| {
                order.push(sig.id.clone());
                Draft {
                    summary: MaskingSigner::default().significant_line(&basis).unwrap_or(&f.name).to_string(),
                    sig: sig.clone(),
                    tests: Vec::new(),
                    lines: Vec::new(),
                    has_gating_tests: true,
                    in_ci_step: false,
                    informing_only: false,
                    no_evidence: false,
                    failed_step: ev.failed_step.clone(),
                    hint: f.hint.clone().or(ev.hint.clone()),
                }
            });
            d.tests.push(f.name.clone());
            if d.tests.len() <= 3 {
                d.lines.extend(text_lines(&basis, &f.at, 8));
            }
        }
        let single = order.len() == 1;
        for id in &order {
            let d = groups.get_mut(id).unwrap();
            let mut extra: Vec<LogLine> = ev
                .log_lines
                .iter()
                .zip(&log_sig)
                .filter(|(_, s)| s.as_ref().is_some_and(|s| s.id == *id))
                .map(|(l, _)| l.clone())
                .take(5)
                .collect();
            if single {
                extra.extend(ev.log_lines.iter().take(20).cloned());
            }
            let mut lines = std::mem::take(&mut d.lines);
            lines.extend(extra);
            d.lines = dedup_lines(lines, 40);
            drafts.push(d.clone());
        }
        return drafts;
    }
    // No product test failed: a CI step, an aggregated verdict or the log.
    // The decisive line: a known cause first, then an explicit error line, then
    // anything error-looking (background noise often precedes the real cause).
    let explicit = Regex::new(r"^\s*(Error|ERROR|error|FATAL|fatal)(:| )|level=(error|fatal)").unwrap();
    let decisive = ev
        .log_lines
        .iter()
        .position(|l| classifier.is_cause_line(&l.text))
        .or_else(|| ev.log_lines.iter().position(|l| explicit.is_match(&l.text)))
        .or_else(|| ev.log_lines.iter().position(|l| classifier_text.is_match(&l.text)))
        .or_else(|| (!ev.log_lines.is_empty()).then_some(0));
    if !steps.is_empty() || (ev.aggregated.iter().all(|a| !a.failed) && decisive.is_some()) {
        let step_text = steps.first().map(|s| s.text.clone()).unwrap_or_default();
        let (basis, basis_line) = match decisive {
            Some(i) => (ev.log_lines[i].text.clone(), Some(ev.log_lines[i].clone())),
            None => (step_text.clone(), None),
        };
        let Some(sig) = sig_of(&basis, ev.hint.as_ref()) else {
            return vec![no_evidence_draft(job, "the failed step left no text")];
        };
        let mut lines = Vec::new();
        if let Some(l) = basis_line {
            lines.push(l);
        }
        for s in steps.iter().take(2) {
            lines.extend(text_lines(&s.text, &s.at, 6));
        }
        lines.extend(ev.log_lines.iter().take(30).cloned());
        return vec![Draft {
            summary: MaskingSigner::default().significant_line(&basis).unwrap_or(&basis).to_string(),
            sig,
            tests: steps.iter().map(|s| s.name.clone()).collect(),
            lines: dedup_lines(lines, 40),
            has_gating_tests: false,
            in_ci_step: !steps.is_empty() || ev.failed_step.is_some(),
            informing_only: false,
            no_evidence: false,
            failed_step: ev.failed_step.clone(),
            hint: ev.hint.clone(),
        }];
    }
    let failed_agg: Vec<_> = ev.aggregated.iter().filter(|a| a.failed).collect();
    if !failed_agg.is_empty() {
        let mut out = Vec::new();
        for a in failed_agg {
            let sig = Signature::of_text(&format!("aggregated test failed: {}", a.name));
            let sentence =
                a.verdict.as_ref().map(|v| v.sentence.clone()).unwrap_or_else(|| "aggregated test failed".into());
            let at = crate::evidence::Location { file: "junit-aggregated.xml".into(), url: None, line: Some(a.line) };
            let mut lines = vec![LogLine { text: format!("{}: {sentence}", a.name), at }];
            lines.extend(ev.log_lines.iter().take(10).cloned());
            out.push(Draft {
                summary: format!("{}: {sentence}", a.name),
                sig,
                tests: vec![a.name.clone()],
                lines: dedup_lines(lines, 20),
                has_gating_tests: true,
                in_ci_step: false,
                informing_only: false,
                no_evidence: false,
                failed_step: None,
                hint: ev.hint.clone(),
            });
        }
        return out;
    }
    let informing: Vec<_> = ev.failures.iter().filter(|f| f.kind == TestKind::Informing).collect();
    if !informing.is_empty() {
        let f = informing[0];
        let basis = if f.text.trim().is_empty() { f.name.clone() } else { f.text.clone() };
        if let Some(sig) = sig_of(&basis, f.hint.as_ref()) {
            return vec![Draft {
                summary: MaskingSigner::default().significant_line(&basis).unwrap_or(&f.name).to_string(),
                sig,
                tests: informing.iter().map(|f| f.name.clone()).collect(),
                lines: dedup_lines(text_lines(&basis, &f.at, 8), 20),
                has_gating_tests: false,
                in_ci_step: false,
                informing_only: true,
                no_evidence: false,
                failed_step: None,
                hint: f.hint.clone(),
            }];
        }
    }
    let why = if ev.junit.readable() {
        "JUnit shows no failing test and the build log no error line"
    } else {
        "no JUnit and no build-log error line"
    };
    vec![no_evidence_draft(job, why)]
}

fn no_evidence_draft(job: &str, why: &str) -> Draft {
    Draft {
        sig: Signature { id: format!("no-evidence/{job}"), text: format!("no failure evidence ({why})") },
        summary: format!("no failure evidence: {why}"),
        tests: Vec::new(),
        lines: Vec::new(),
        has_gating_tests: false,
        in_ci_step: false,
        informing_only: false,
        no_evidence: true,
        failed_step: None,
        hint: None,
    }
}

const PLATFORMS: &[&str] = &[
    "aws",
    "gcp",
    "azure",
    "metal",
    "vsphere",
    "openstack",
    "ibmcloud",
    "nutanix",
    "ovirt",
    "powervs",
    "alibaba",
    "libvirt",
    "kubevirt",
];

/// The platform word of a job name.
pub fn platform_of(job: &str) -> Option<String> {
    let lower = job.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(['-', '_', '.']).collect();
    PLATFORMS.iter().find(|p| words.contains(p)).map(|p| p.to_string())
}

/// The RHCOS variant a job runs, from its name and the OCP version.
pub fn rhcos_variant(job: &str, version: &str) -> String {
    if job.contains("rhcos9_10") {
        return "rhcos9_10".into();
    }
    if job.contains("rhcos10") {
        return "rhcos10".into();
    }
    if job.contains("rhcos9") {
        return "rhcos9".into();
    }
    let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(4);
    let install_major = if job.contains("upgrade") && job.contains("major") && major >= 5 { major - 1 } else { major };
    if install_major >= 5 {
        "rhcos10-default".into()
    } else {
        "rhcos9-default".into()
    }
}

fn variant_applies(job_variant: &str, stream_tag: &str) -> bool {
    let ten = stream_tag.contains("coreos-10");
    match job_variant {
        "rhcos9_10" => true,
        "rhcos10" | "rhcos10-default" => ten,
        _ => !ten,
    }
}

struct Ctx<'a> {
    source: &'a dyn PayloadSource,
    stream: String,
    ev: Evidence<'a>,
    signer: &'a dyn Signer,
    classifier: Classifier,
    decisive: Regex,
    matcher: Matcher,
    gaps: Vec<String>,
    modes_cache: RefCell<BTreeMap<String, Vec<Draft>>>,
}

impl Ctx<'_> {
    fn modes_of(&self, url: &str, job: &str) -> Option<Vec<Draft>> {
        if let Some(m) = self.modes_cache.borrow().get(url) {
            return Some(m.clone());
        }
        let ev = self.ev.get(url)?;
        let m = build_modes(Some(&ev), job, self.signer, &self.decisive, &self.classifier);
        self.modes_cache.borrow_mut().insert(url.to_string(), m.clone());
        Some(m)
    }
}

fn job_in<'a>(info: &'a ReleaseInfo, job: &str) -> Option<&'a JobResult> {
    info.results
        .blocking
        .get(job)
        .or_else(|| info.results.informing.get(job))
        .or_else(|| info.results.async_jobs.get(job))
}

/// Walks the chain older than the target while the job keeps failing with `pred`.
/// Decides whether an older run shows the same failure (`None`: cannot tell).
type SameFailure<'a> = &'a dyn Fn(&[Draft], Option<&RunEvidence>) -> Option<bool>;

fn onset_walk(ctx: &Ctx, chain: &Chain, job: &str, pred: SameFailure) -> (String, u32, OnsetBefore) {
    let tags = chain.tags();
    let mut first = tags[0].clone();
    let mut count = 1u32;
    for tag in tags.iter().skip(1) {
        let Some(info) = chain.infos.get(tag) else {
            return (first, count, OnsetBefore::Unknown(tag.clone(), "release info not available".into()));
        };
        let Some(jr) = job_in(info, job) else {
            return (first, count, OnsetBefore::Unknown(tag.clone(), "the job did not run on that payload".into()));
        };
        match jr.state {
            JobState::Succeeded => return (first, count, OnsetBefore::Passed(tag.clone())),
            JobState::Failed => {
                let Some(url) = jr.url.as_deref() else {
                    return (first, count, OnsetBefore::Unknown(tag.clone(), "failed run without a URL".into()));
                };
                let Some(modes) = ctx.modes_of(url, job) else {
                    return (first, count, OnsetBefore::Unknown(tag.clone(), "no evidence for that run".into()));
                };
                let ev = ctx.ev.get(url);
                match pred(&modes, ev.as_ref()) {
                    Some(true) => {
                        first = tag.clone();
                        count += 1;
                    }
                    Some(false) => {
                        let other = modes.first().map(|m| m.sig.id.clone()).unwrap_or_default();
                        return (first, count, OnsetBefore::DifferentFailure(tag.clone(), other));
                    }
                    None => {
                        return (first, count, OnsetBefore::Unknown(tag.clone(), "no evidence for that run".into()))
                    }
                }
            }
            _ => return (first, count, OnsetBefore::Unknown(tag.clone(), "no final result on that payload".into())),
        }
    }
    (first, count, OnsetBefore::ChainEnd)
}

/// After the onset boundary, the same failure again on an older payload of the
/// chain with a pass in between: intermittent, i.e. flake evidence.
fn flake_scan(ctx: &Ctx, chain: &Chain, job: &str, sig: &str, onset: &str) -> Option<(String, Option<LogLine>)> {
    let tags = chain.tags();
    let start = tags.iter().position(|t| t == onset)? + 1;
    let mut passed_between: Option<String> = None;
    for tag in tags.iter().skip(start) {
        let info = chain.infos.get(tag)?;
        let jr = job_in(info, job)?;
        match jr.state {
            JobState::Succeeded => {
                passed_between.get_or_insert(tag.clone());
            }
            JobState::Failed => {
                let pb = passed_between.clone()?;
                let url = jr.url.as_deref()?;
                let modes = ctx.modes_of(url, job)?;
                if let Some(m) = modes.iter().find(|m| m.sig.id == sig) {
                    return Some((
                        format!(
                            "intermittent: the same failure occurred on {tag} and the job passed on {pb} in between"
                        ),
                        m.lines.first().cloned(),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

fn kubelet_skew(lines: &[LogLine]) -> bool {
    let re = Regex::new(r"(?i)(kubelet.*version skew|version skew.*kubelet|kubelet version .* (older|behind|does not match)|skew.*kubelet)").unwrap();
    lines.iter().any(|l| re.is_match(&l.text))
}

fn release_url(base: &str, stream: &str, tag: &str) -> String {
    format!("{}/releasestream/{stream}/release/{tag}", base.trim_end_matches('/'))
}

/// Reads the changelog of `tag` from `from`, falling back to the release info's
/// own changelog when it declares that `from`.
fn changelog_between(
    ctx: &mut Ctx,
    infos: &BTreeMap<String, ReleaseInfo>,
    tag: &str,
    from: &str,
) -> (Option<model::ChangeLogJson>, Vec<model::NodeImageStream>, String, Option<String>) {
    match ctx.source.changelog(&ctx.stream, tag, from) {
        Ok(c) => match c.state {
            ChangeLogState::Ready(j) => {
                (Some(*j), c.node_image_streams, format!("changelog of {tag} from {from} ({})", c.origin), None)
            }
            ChangeLogState::Loading(m) => {
                ctx.gaps.push(format!("changelog of {tag} from {from}: {m}"));
                fallback_changelog(infos, tag, from, Some(format!("the release controller said: {m}")))
            }
            ChangeLogState::Absent => {
                fallback_changelog(infos, tag, from, Some(format!("{} had no changelog", c.origin)))
            }
        },
        Err(e) => {
            if !e.is_not_found() {
                ctx.gaps.push(format!("changelog of {tag} from {from}: {e}"));
            }
            fallback_changelog(infos, tag, from, Some(e.to_string()))
        }
    }
}

fn fallback_changelog(
    infos: &BTreeMap<String, ReleaseInfo>,
    tag: &str,
    from: &str,
    why: Option<String>,
) -> (Option<model::ChangeLogJson>, Vec<model::NodeImageStream>, String, Option<String>) {
    if let Some(info) = infos.get(tag) {
        if let Some(j) = info.change_log.json() {
            if j.from.name == from {
                return (
                    Some(j.clone()),
                    info.node_image_streams.clone(),
                    format!("changelog embedded in the release info of {tag}"),
                    None,
                );
            }
        }
    }
    (None, Vec::new(), String::new(), why)
}

fn pr_candidate(source: &dyn PayloadSource, pr: &PullRequest, payload: &str, gaps: &mut Vec<String>) -> Candidate {
    let diff = match source.pr_diff(pr) {
        Ok(Some(d)) => Some(diff::parse_unified(&d)),
        Ok(None) => None,
        Err(e) => {
            gaps.push(format!("diff of {}: {e}", pr.url));
            None
        }
    };
    let presubmits = source.pr_presubmits(pr).unwrap_or_else(|e| {
        gaps.push(format!("presubmits of {}: {e}", pr.url));
        None
    });
    let title_l = pr.title.to_ascii_lowercase();
    Candidate {
        id: format!("pr:{}", pr.key()),
        kind: CandidateKind::Pr,
        title: pr.title.clone(),
        url: Some(pr.url.clone()),
        component: pr.repo.clone(),
        repo: Some(format!("{}/{}", pr.org, pr.repo)),
        number: Some(pr.number),
        images: pr.images.clone(),
        payload: Some(payload.to_string()),
        date: None,
        rpm: None,
        diff_available: diff.is_some(),
        diff,
        presubmits,
        is_rebase: pr.repo == "kubernetes"
            && (title_l.contains("rebase") || (title_l.contains("bump") && title_l.contains("1."))),
    }
}

fn rpm_candidates(
    source: &dyn PayloadSource,
    nis: &[model::NodeImageStream],
    payload: &str,
    from: &str,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in nis {
        let changelog_text = source.rpm_changelog(payload, &s.tag, from).ok().flatten();
        let mut seen_versions: BTreeSet<(String, String)> = BTreeSet::new();
        for (pkg, (old, new)) in &s.changed {
            // Subpackages of one source package share the version bump: keep the first.
            if !seen_versions.insert((old.clone(), new.clone())) && pkg.contains('-') {
                continue;
            }
            let cl = changelog_text.as_ref().and_then(|t| package_section(t, pkg));
            out.push(Candidate {
                id: format!("rpm:{}/{pkg}", s.tag),
                kind: CandidateKind::RhcosRpm,
                title: format!("{pkg} {old} → {new} ({})", if s.name.is_empty() { &s.tag } else { &s.name }),
                url: None,
                component: s.tag.clone(),
                repo: None,
                number: None,
                images: Vec::new(),
                payload: Some(payload.to_string()),
                date: None,
                rpm: Some(RpmChange {
                    variant_tag: s.tag.clone(),
                    variant_name: s.name.clone(),
                    package: pkg.clone(),
                    old_version: old.clone(),
                    new_version: new.clone(),
                    changelog: cl,
                }),
                diff: None,
                diff_available: false,
                presubmits: None,
                is_rebase: false,
            });
        }
    }
    out
}

fn package_section(text: &str, pkg: &str) -> Option<String> {
    let mut out = String::new();
    let mut inside = false;
    for l in text.lines() {
        if l.starts_with('#') {
            inside = l.contains(pkg);
            continue;
        }
        if inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    (!out.trim().is_empty()).then_some(out)
}

fn ci_candidate(c: &CiConfigChange, payload: &str) -> Candidate {
    Candidate {
        id: format!("ci:{}@{}", c.repo, c.id.chars().take(12).collect::<String>()),
        kind: CandidateKind::CiConfig,
        title: c.title.clone(),
        url: c.url.clone(),
        component: "CI configuration".into(),
        repo: Some(c.repo.clone()),
        number: c.pr_number,
        images: Vec::new(),
        payload: Some(payload.to_string()),
        date: Some(c.date.clone()),
        rpm: None,
        diff_available: !c.diff.files.is_empty(),
        diff: Some(c.diff.clone()),
        presubmits: None,
        is_rebase: false,
    }
}

fn class_rank(c: FailureClass) -> u8 {
    match c {
        FailureClass::Infrastructure => 0,
        FailureClass::CiConfiguration => 1,
        FailureClass::ProductRegression => 2,
        FailureClass::Flake => 3,
        FailureClass::InformingOnly => 4,
        FailureClass::Unknown => 5,
    }
}

/// Runs the analysis with the built-in signer.
pub fn analyze(
    source: &dyn PayloadSource,
    evidence: &dyn EvidenceProvider,
    opts: &AnalyzeOptions,
) -> Result<PayloadAnalysis, PayloadError> {
    analyze_with(source, evidence, opts, &MaskingSigner::default())
}

/// Runs the analysis with a custom [`Signer`] (the shared signature code).
pub fn analyze_with(
    source: &dyn PayloadSource,
    evidence: &dyn EvidenceProvider,
    opts: &AnalyzeOptions,
    signer: &dyn Signer,
) -> Result<PayloadAnalysis, PayloadError> {
    let parts = model::parse_tag(&opts.tag);
    let stream = match (&opts.stream, &parts) {
        (Some(s), _) => s.clone(),
        (None, Some(p)) => p.stream_name.clone(),
        (None, None) => {
            return Err(PayloadError::Options(format!(
                "cannot derive the stream from tag {:?}: pass the stream",
                opts.tag
            )))
        }
    };
    let as_of = match &opts.as_of {
        Some(s) => Some(
            time::parse_rfc3339(s)
                .ok_or_else(|| PayloadError::Options(format!("--as-of {s:?} is not an RFC 3339 time")))?,
        ),
        None => None,
    };
    if let (Some(cut), Some(t)) = (as_of, time::tag_timestamp(&opts.tag)) {
        if t > cut {
            return Err(PayloadError::Options(format!(
                "{} was created at {}, after the as-of time {}",
                opts.tag,
                time::rfc3339(t),
                time::rfc3339(cut)
            )));
        }
    }
    let architecture = parts.as_ref().map(|p| p.architecture.clone()).unwrap_or_else(|| "amd64".into());
    let rc_base = opts
        .release_controller_url
        .clone()
        .unwrap_or_else(|| format!("https://{architecture}.ocp.releases.ci.openshift.org"));
    let mut ctx = Ctx {
        source,
        stream: stream.clone(),
        ev: Evidence { provider: evidence, as_of, cache: RefCell::new(BTreeMap::new()), gaps: RefCell::new(BTreeSet::new()) },
        signer,
        classifier: Classifier::default(),
        decisive: Regex::new(r"(?i)(error|fail|forbidden|panic|timed out|exceeded|unable|refused|denied|invalid|unknown flag|not found|cannot|could not)").unwrap(),
        matcher: Matcher::default(),
        gaps: Vec::new(),
        modes_cache: RefCell::new(BTreeMap::new()),
    };

    // 1. Tags, chain, history.
    let all_tags: TagList = history::tags_as_of(source.tags(&stream)?, as_of);
    let chain = history::walk_chain(source, &stream, &all_tags, &opts.tag, opts.max_chain, as_of)?;
    let target_info = chain.infos.get(&opts.tag).cloned().ok_or_else(|| PayloadError::not_found(opts.tag.clone()))?;
    let chain_tags = chain.tags();
    let last_accepted = history::last_accepted(&all_tags, &opts.tag);
    let target_time = time::tag_timestamp(&opts.tag);
    let hours_since_baseline = chain.baseline.as_deref().and_then(time::tag_timestamp).and_then(|b| {
        let reference = as_of.or(target_time)?;
        Some(((reference - b) as f64 / 360.0).round() / 10.0)
    });
    if chain.truncated {
        ctx.gaps.push(format!(
            "no payload with every blocking job green within {} payloads: the chain is incomplete",
            chain.rows.len()
        ));
    }

    // 2. Changelogs: each hop, new vs the previous payload, cumulative since the baseline.
    let pos = all_tags.position(&opts.tag).unwrap_or(0);
    let predecessor = all_tags.tags.get(pos + 1).map(|t| t.name.clone());
    let mut hops: BTreeMap<String, (Vec<PullRequest>, Vec<model::NodeImageStream>, String)> = BTreeMap::new();
    let mut hop_notes: BTreeMap<String, String> = BTreeMap::new();
    for (i, tag) in chain_tags.iter().enumerate() {
        let Some(from) = chain_tags.get(i + 1).cloned().or_else(|| if i == 0 { predecessor.clone() } else { None })
        else {
            continue;
        };
        if Some(tag) == chain.baseline.as_ref() {
            continue;
        }
        let (json, nis, how, note) = changelog_between(&mut ctx, &chain.infos, tag, &from);
        match json {
            Some(j) => {
                hops.insert(tag.clone(), (j.pull_requests(), nis, from.clone()));
            }
            None => {
                hop_notes.insert(tag.clone(), note.clone().unwrap_or_default());
                ctx.gaps.push(format!("no changelog for {tag} from {from}: {}", note.unwrap_or_default()));
            }
        }
        let _ = how;
    }
    let new_prs = PrSet {
        from: predecessor.clone(),
        prs: hops.get(&opts.tag).map(|h| h.0.clone()).unwrap_or_default(),
        how: if hops.contains_key(&opts.tag) {
            "changelog from the previous payload".into()
        } else {
            "unavailable".into()
        },
        note: hop_notes.get(&opts.tag).cloned(),
    };
    let cumulative_prs = match &chain.baseline {
        Some(b) if chain_tags.len() > 2 => {
            let (json, _, how, note) = changelog_between(&mut ctx, &chain.infos, &opts.tag, b);
            match json {
                Some(j) => PrSet { from: Some(b.clone()), prs: j.pull_requests(), how, note: None },
                None => {
                    let mut set: BTreeMap<String, PullRequest> = BTreeMap::new();
                    for (prs, _, _) in hops.values() {
                        for p in prs {
                            set.entry(p.url.clone()).or_insert_with(|| p.clone());
                        }
                    }
                    let mut prs: Vec<PullRequest> = set.into_values().collect();
                    prs.sort();
                    let complete =
                        chain_tags.iter().filter(|t| Some(*t) != chain.baseline.as_ref()).all(|t| hops.contains_key(t));
                    PrSet {
                        from: Some(b.clone()),
                        prs,
                        how: "union of the changelogs of each hop of the chain".into(),
                        note: (!complete)
                            .then(|| format!("some hops have no changelog ({})", note.unwrap_or_default())),
                    }
                }
            }
        }
        Some(b) => PrSet {
            from: Some(b.clone()),
            prs: new_prs.prs.clone(),
            how: new_prs.how.clone(),
            note: new_prs.note.clone(),
        },
        None => PrSet { from: None, prs: Vec::new(), how: "no all-green payload in the chain".into(), note: None },
    };

    // 3. Job history.
    let recorded_runs = source.job_runs(&stream)?;
    let runs_recorded = recorded_runs.is_some();
    let runs: Vec<JobRun> = match recorded_runs {
        Some(r) => jobhistory::filter_as_of(r, as_of),
        None => {
            let mut runs = Vec::new();
            let mut infos: Vec<(String, ReleaseInfo)> =
                chain.infos.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let oldest = pos + chain.rows.len();
            for t in all_tags.tags.iter().skip(oldest).take(opts.history_payloads) {
                if let Ok(mut info) = source.release(&stream, &t.name) {
                    history::apply_as_of(&mut info, as_of);
                    infos.push((t.name.clone(), info));
                }
            }
            for (tag, info) in &infos {
                let started = time::tag_timestamp(tag);
                for jr in info.results.blocking.values().chain(info.results.informing.values()) {
                    let Some(job) = jr.prow_job() else { continue };
                    for u in &jr.previous_attempt_urls {
                        runs.push(JobRun {
                            tag: tag.clone(),
                            job: job.clone(),
                            state: RunState::Failure,
                            url: u.clone(),
                            started,
                            completed: None,
                        });
                    }
                    let state = match jr.state {
                        JobState::Succeeded => RunState::Success,
                        JobState::Failed => RunState::Failure,
                        _ => RunState::Pending,
                    };
                    runs.push(JobRun {
                        tag: tag.clone(),
                        job,
                        state,
                        url: jr.url.clone().unwrap_or_default(),
                        started,
                        completed: None,
                    });
                }
            }
            runs
        }
    };
    let anchor = as_of.or_else(|| jobhistory::default_anchor(&runs));
    let window = anchor.map(|a| jobhistory::window_spec(a, opts.window_days));
    let mut rates = anchor.map(|a| jobhistory::pass_rates(&runs, a, opts.window_days)).unwrap_or_default();
    if !runs_recorded {
        for t in rates.values_mut() {
            t.source = "release controller".into();
        }
    }
    // Sippy fills in jobs the runs do not cover (its windows are its own; not
    // used under as_of, whose cutoff Sippy cannot honour).
    if as_of.is_none() {
        let release = parts.as_ref().map(|p| p.version.clone()).unwrap_or_default();
        match source.sippy_jobs(&release) {
            Ok(Some(jobs)) => {
                for j in jobs {
                    let covered = rates.get(&j.name).is_some_and(|t| t.current.runs > 0);
                    if !covered {
                        rates.insert(j.name.clone(), j.trend());
                    }
                }
            }
            Ok(None) => {}
            Err(e) => ctx.gaps.push(format!("Sippy job pass rates: {e}")),
        }
    }

    // 4. Failed blocking jobs and their failure modes.
    let version = parts.as_ref().map(|p| p.version.clone()).unwrap_or_default();
    let mut failed_jobs: Vec<FailedJob> = Vec::new();
    let mut drafts_by_job: BTreeMap<String, Vec<(Draft, String, u32, OnsetBefore)>> = BTreeMap::new();
    for (name, jr) in &target_info.results.blocking {
        if jr.state != JobState::Failed {
            continue;
        }
        let prow_job = jr.prow_job();
        let ev = jr.url.as_deref().and_then(|u| ctx.ev.get(u));
        if ev.is_none() {
            ctx.gaps.push(format!("{name}: no evidence for {}", jr.url.as_deref().unwrap_or("(no URL)")));
        }
        let drafts = match (jr.url.as_deref(), &ev) {
            (Some(u), Some(_)) => ctx.modes_of(u, name).unwrap_or_default(),
            _ => build_modes(None, name, signer, &ctx.decisive, &ctx.classifier),
        };
        let mut modes_here = Vec::new();
        for d in drafts {
            let sig = d.sig.id.clone();
            let (first, count, before) = if d.no_evidence {
                (
                    opts.tag.clone(),
                    1,
                    OnsetBefore::Unknown(
                        chain_tags.get(1).cloned().unwrap_or_default(),
                        "no evidence for the target run".into(),
                    ),
                )
            } else {
                onset_walk(&ctx, &chain, name, &|modes: &[Draft], _| Some(modes.iter().any(|m| m.sig.id == sig)))
            };
            modes_here.push((d, first, count, before));
        }
        // Per-test onsets.
        let mut tests = Vec::new();
        if let Some(e) = &ev {
            for f in e.gating().filter(|f| !f.is_step) {
                let tname = f.name.clone();
                let (first, count, before) = onset_walk(&ctx, &chain, name, &|_, ev: Option<&RunEvidence>| {
                    ev.map(|e| e.gating().any(|g| g.name == tname))
                });
                tests.push(TestOnset {
                    name: f.name.clone(),
                    message: f.message.clone(),
                    at: f.at.clone(),
                    first_failed_in: first,
                    payloads_failing: count,
                    onset_certain: before.established(),
                });
            }
        }
        // Previous attempts.
        let final_sig = modes_here.first().map(|m| m.0.sig.id.clone());
        let previous_attempts = jr
            .previous_attempt_urls
            .iter()
            .map(|u| {
                let m = ctx.modes_of(u, name);
                let sig = m.as_ref().and_then(|m| m.first()).filter(|d| !d.no_evidence).map(|d| d.sig.clone());
                Attempt {
                    url: u.clone(),
                    same_failure: sig.as_ref().map(|s| Some(&s.id) == final_sig.as_ref()),
                    signature: sig,
                }
            })
            .collect();
        // Streak over the chain, then the job history beyond it.
        let mut outcomes: Vec<(String, Outcome)> = chain
            .rows
            .iter()
            .map(|r| {
                let o = chain.infos.get(&r.tag).and_then(|i| i.results.blocking.get(name)).map(|j| match j.state {
                    JobState::Succeeded => Outcome::S,
                    JobState::Failed => Outcome::F,
                    _ => Outcome::Unknown,
                });
                (r.tag.clone(), o.unwrap_or(Outcome::Unknown))
            })
            .collect();
        if let Some(pj) = &prow_job {
            let oldest_time = chain_tags.last().and_then(|t| time::tag_timestamp(t));
            for (t, o) in jobhistory::outcomes_by_payload(&runs, pj) {
                if !outcomes.iter().any(|(x, _)| *x == t)
                    && time::tag_timestamp(&t) < oldest_time
                    && outcomes.len() < 30
                {
                    outcomes.push((t, o));
                }
            }
        }
        let streak = Streak::from_outcomes(&outcomes);
        let aggregated = ev.as_ref().filter(|e| !e.aggregated.is_empty()).map(|e| AggregatedSummary {
            underlying_jobs: crate::aggregated::underlying_jobs(&e.aggregated).into_iter().collect(),
            failed_tests: e.aggregated.iter().filter(|a| a.failed).cloned().collect(),
            tests_total: e.aggregated.len() as u32,
        });
        let (informing_tests, flaky_tests) = match &ev {
            Some(e) => (
                e.failures.iter().filter(|f| f.kind == TestKind::Informing).map(|f| f.name.clone()).collect(),
                e.failures.iter().filter(|f| f.kind == TestKind::Flake).map(|f| f.name.clone()).collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        if let Some(e) = &ev {
            if !e.junit.readable() {
                ctx.gaps.push(format!(
                    "{name}: JUnit {}",
                    match &e.junit {
                        crate::evidence::JunitState::Missing =>
                            "missing: the job's tests may never have run (unknown, not green)".to_string(),
                        crate::evidence::JunitState::Unparseable { problems } =>
                            format!("unparseable: {}", problems.join("; ")),
                        _ => String::new(),
                    }
                ));
            }
        }
        failed_jobs.push(FailedJob {
            name: name.clone(),
            prow_job: prow_job.clone(),
            url: jr.url.clone(),
            state: jr.state.clone(),
            retries: jr.retries,
            previous_attempts,
            junit: ev.as_ref().map(|e| e.junit.clone()),
            tests_total: ev.as_ref().map(|e| e.tests_total).unwrap_or(0),
            tests,
            informing_tests,
            flaky_tests,
            modes: Vec::new(),
            streak,
            pass_rate: prow_job.as_ref().and_then(|p| rates.get(p).cloned()),
            aggregated,
            platform: platform_of(prow_job.as_deref().unwrap_or(name)),
            rhcos: rhcos_variant(prow_job.as_deref().unwrap_or(name), &version),
        });
        drafts_by_job.insert(name.clone(), modes_here);
    }
    let pending_jobs: Vec<String> = target_info
        .results
        .blocking
        .iter()
        .filter(|(_, j)| !matches!(j.state, JobState::Succeeded | JobState::Failed))
        .map(|(k, _)| k.clone())
        .collect();

    // 5. Root causes: modes grouped by signature.
    let mut by_sig: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
    for (job, modes) in &drafts_by_job {
        for (i, m) in modes.iter().enumerate() {
            by_sig.entry(m.0.sig.id.clone()).or_default().push((job.clone(), i));
        }
    }
    let mut groups: Vec<(String, Vec<(String, usize)>)> = by_sig.into_iter().collect();
    groups.sort_by(|a, b| {
        let ta = &drafts_by_job[&a.1[0].0][a.1[0].1].0.sig.text;
        let tb = &drafts_by_job[&b.1[0].0][b.1[0].1].0.sig.text;
        b.1.len().cmp(&a.1.len()).then(ta.cmp(tb)).then(a.0.cmp(&b.0))
    });
    let mut rc_of: BTreeMap<(String, usize), String> = BTreeMap::new();
    let mut mode_class: BTreeMap<(String, usize), Classification> = BTreeMap::new();
    let mut root_causes: Vec<RootCause> = Vec::new();
    for (n, (sig_id, members)) in groups.iter().enumerate() {
        let id = format!("RC{}", n + 1);
        let mut classes: Vec<Classification> = Vec::new();
        for (job, i) in members {
            let (d, first, _, _) = &drafts_by_job[job][*i];
            let flake = if d.no_evidence { None } else { flake_scan(&ctx, &chain, job, sig_id, first) };
            let facts = ModeFacts {
                lines: &d.lines,
                has_gating_tests: d.has_gating_tests,
                in_ci_step: d.in_ci_step,
                informing_only: d.informing_only,
                no_evidence: d.no_evidence,
                flake_evidence: flake,
                hint: d.hint.as_ref(),
            };
            let c = ctx.classifier.classify(&facts);
            mode_class.insert((job.clone(), *i), c.clone());
            classes.push(c);
            rc_of.insert((job.clone(), *i), id.clone());
        }
        // Majority class; ties by precedence (infrastructure first).
        let mut counts: BTreeMap<(usize, std::cmp::Reverse<u8>), Classification> = BTreeMap::new();
        for c in &classes {
            let k = classes.iter().filter(|x| x.class == c.class).count();
            counts.entry((k, std::cmp::Reverse(class_rank(c.class)))).or_insert_with(|| c.clone());
        }
        let class = counts.into_iter().next_back().map(|(_, c)| c).unwrap();
        for (job, i) in members {
            let mc = mode_class.get_mut(&(job.clone(), *i)).unwrap();
            if mc.class != class.class {
                *mc = class.clone();
            }
        }
        let first = members
            .iter()
            .map(|(j, i)| drafts_by_job[j][*i].1.clone())
            .min_by_key(|t| (time::tag_timestamp(t), t.clone()))
            .unwrap_or_default();
        let rep = &drafts_by_job[&members[0].0][members[0].1].0;
        let mut jobs: Vec<String> = members.iter().map(|(j, _)| j.clone()).collect();
        jobs.dedup();
        let evidence: Vec<(String, LogLine)> = members
            .iter()
            .filter_map(|(j, i)| drafts_by_job[j][*i].0.lines.first().map(|l| (j.clone(), l.clone())))
            .collect();
        let mut platforms: BTreeSet<String> = BTreeSet::new();
        for j in &jobs {
            if let Some(fj) = failed_jobs.iter().find(|f| f.name == *j) {
                if let Some(p) = &fj.platform {
                    platforms.insert(p.clone());
                }
            }
        }
        let all_lines: Vec<LogLine> = members.iter().flat_map(|(j, i)| drafts_by_job[j][*i].0.lines.clone()).collect();
        root_causes.push(RootCause {
            id: id.clone(),
            signature: rep.sig.clone(),
            title: rep.summary.clone(),
            class,
            jobs,
            evidence,
            first_failed_in: first,
            platforms: platforms.into_iter().collect(),
            systemic: Vec::new(),
            is_systemic: false,
            kubelet_skew: kubelet_skew(&all_lines),
            no_candidate_reason: None,
        });
    }

    // 6. Broader context: the same signatures in failed informing / async jobs.
    let mut informing_failures = Vec::new();
    let sig_to_rc: BTreeMap<String, String> =
        root_causes.iter().map(|r| (r.signature.id.clone(), r.id.clone())).collect();
    for (lifecycle, map) in [("informing", &target_info.results.informing), ("async", &target_info.results.async_jobs)]
    {
        for (name, jr) in map {
            if jr.state != JobState::Failed {
                continue;
            }
            let modes =
                if opts.systemic_context { jr.url.as_deref().and_then(|u| ctx.modes_of(u, name)) } else { None };
            let hit = modes.as_ref().and_then(|ms| ms.iter().find(|m| sig_to_rc.contains_key(&m.sig.id)).cloned());
            let first_sig = modes.as_ref().and_then(|m| m.first()).filter(|d| !d.no_evidence).map(|d| d.sig.clone());
            let rc = hit.as_ref().map(|m| sig_to_rc[&m.sig.id].clone());
            if let (Some(m), Some(rcid)) = (&hit, &rc) {
                let prow = jr.prow_job().unwrap_or_else(|| name.clone());
                if let Some(r) = root_causes.iter_mut().find(|r| r.id == *rcid) {
                    r.systemic.push(SystemicHit {
                        job: name.clone(),
                        lifecycle: lifecycle.into(),
                        url: jr.url.clone(),
                        platform: platform_of(&prow),
                        line: m.lines.first().cloned(),
                    });
                }
            }
            informing_failures.push(InformingFailure {
                name: name.clone(),
                lifecycle: lifecycle.into(),
                url: jr.url.clone(),
                signature: hit.map(|m| m.sig).or(first_sig),
                root_cause: rc,
            });
        }
    }
    let mut passed_on_retry = Vec::new();
    for (name, jr) in &target_info.results.blocking {
        if jr.state == JobState::Succeeded && !jr.previous_attempt_urls.is_empty() {
            let failed_attempts = jr
                .previous_attempt_urls
                .iter()
                .map(|u| {
                    let sig = ctx
                        .modes_of(u, name)
                        .and_then(|m| m.into_iter().next())
                        .filter(|d| !d.no_evidence)
                        .map(|d| d.sig);
                    let same = sig.as_ref().map(|s| sig_to_rc.contains_key(&s.id));
                    Attempt { url: u.clone(), signature: sig, same_failure: same }
                })
                .collect();
            passed_on_retry.push(RetriedJob {
                name: name.clone(),
                url: jr.url.clone(),
                retries: jr.retries,
                failed_attempts,
            });
        }
    }
    for r in &mut root_causes {
        let mut plats: BTreeSet<String> = r.platforms.iter().cloned().collect();
        plats.extend(r.systemic.iter().filter_map(|h| h.platform.clone()));
        r.is_systemic = !r.systemic.is_empty() || plats.len() >= 2;
    }

    // 7. Candidates of each onset payload.
    let ci_changes: Option<Vec<CiConfigChange>> = match &opts.ci_config_changes {
        Some(p) if p.is_dir() => {
            let until = as_of.or(target_time).unwrap_or(0) + 86400;
            let since =
                chain_tags.last().and_then(|t| time::tag_timestamp(t)).unwrap_or(until - 14 * 86400) - 2 * 86400;
            match ciconfig::from_checkout(p, &opts.ci_config_subpath, since, until, &opts.ci_config_repo) {
                Ok(c) => Some(c),
                Err(e) => {
                    ctx.gaps.push(format!("CI-configuration changes: {e}"));
                    None
                }
            }
        }
        Some(p) => {
            let b = crate::error::read_file(p)?;
            Some(ciconfig::parse_recorded(&b, &p.display().to_string())?)
        }
        None => source.ci_config_changes()?,
    };
    let ci_changes: Vec<CiConfigChange> = ci_changes
        .unwrap_or_default()
        .into_iter()
        .filter(|c| match (as_of, c.epoch()) {
            (Some(cut), Some(t)) => t <= cut,
            (_, None) => false,
            _ => true,
        })
        .collect();
    let mut candidates_by_payload: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    let mut all_candidates: BTreeMap<String, Candidate> = BTreeMap::new();
    let mut payloads_needed: BTreeSet<String> = BTreeSet::new();
    for modes in drafts_by_job.values() {
        for (_, first, _, _) in modes {
            payloads_needed.insert(first.clone());
        }
    }
    for p in &payloads_needed {
        let Some((prs, nis, from)) = hops.get(p) else { continue };
        let mut v: Vec<Candidate> = prs.iter().map(|pr| pr_candidate(source, pr, p, &mut ctx.gaps)).collect();
        v.extend(rpm_candidates(source, nis, p, from));
        for c in &v {
            all_candidates.entry(c.id.clone()).or_insert_with(|| c.clone());
        }
        candidates_by_payload.insert(p.clone(), v);
    }
    let missing_diffs: Vec<String> = all_candidates
        .values()
        .filter(|c| c.kind == CandidateKind::Pr && !c.diff_available)
        .map(|c| c.short())
        .collect();
    if !missing_diffs.is_empty() {
        ctx.gaps.push(format!(
            "no diff for {} PR(s): error-message matching was impossible for {}",
            missing_diffs.len(),
            missing_diffs.join(", ")
        ));
    }

    // 8. Correlate, then score.
    struct Tuple {
        job: String,
        mode_idx: usize,
        cand: Candidate,
        corr: CorrelationResult,
        payload: String,
        onset_here: Option<String>,
        same_component: usize,
    }
    let mut tuples: Vec<Tuple> = Vec::new();
    let sig_tags = Regex::new(
        r"\[(sig|Suite|Feature|Serial|Slow|Disruptive|Conformance|Skipped|apigroup|OCPFeatureGate|Jira)[^\]]*\]",
    )
    .unwrap();
    for (job, modes) in &drafts_by_job {
        let fj = failed_jobs.iter().find(|f| f.name == *job).unwrap();
        for (i, (d, first, _, before)) in modes.iter().enumerate() {
            let class = mode_class[&(job.clone(), i)].class;
            let mut cands: Vec<Candidate> = candidates_by_payload
                .get(first)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|c| {
                    c.kind != CandidateKind::RhcosRpm
                        || c.rpm.as_ref().is_some_and(|r| variant_applies(&fj.rhcos, &r.variant_tag))
                })
                .collect();
            if d.in_ci_step || class == FailureClass::CiConfiguration {
                let onset_t = time::tag_timestamp(first);
                let prev_t = match before {
                    OnsetBefore::Passed(t) | OnsetBefore::DifferentFailure(t, _) | OnsetBefore::Unknown(t, _) => {
                        time::tag_timestamp(t)
                    }
                    OnsetBefore::ChainEnd => None,
                };
                if let Some(ot) = onset_t {
                    // A change can only break runs that started after it landed: bound
                    // the window by the failing run's end in the onset payload.
                    // The earliest failing attempt in the onset payload bounds it: its
                    // start when known (the step registry is resolved then), else its end.
                    let run = chain.infos.get(first).and_then(|i| job_in(i, job));
                    let mut bound = run.and_then(|j| j.transition_epoch());
                    let urls: Vec<&String> =
                        run.map(|j| j.previous_attempt_urls.iter().chain(j.url.iter()).collect()).unwrap_or_default();
                    for u in urls {
                        if let Some(t) = ctx.ev.get(u).and_then(|e| e.started.or(e.finished)) {
                            bound = Some(bound.map_or(t, |b| b.min(t)));
                        }
                    }
                    let run_end = bound;
                    let lo = prev_t.unwrap_or(ot - 86400) - 86400;
                    let hi = (ot + 86400).min(as_of.unwrap_or(i64::MAX)).min(run_end.unwrap_or(i64::MAX));
                    for c in ci_changes.iter().filter(|c| c.epoch().is_some_and(|t| t > lo && t <= hi)) {
                        let cand = ci_candidate(c, first);
                        all_candidates.entry(cand.id.clone()).or_insert_with(|| cand.clone());
                        cands.push(cand);
                    }
                }
            }
            let tokens = ctx.matcher.tokens(&d.lines);
            // Test-name tags like `[sig-installer]` say who owns a test, not what broke.
            let lower: String = d
                .lines
                .iter()
                .map(|l| sig_tags.replace_all(&l.text, " ").to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join("\n");
            let mut comp_count: BTreeMap<String, usize> = BTreeMap::new();
            for c in &cands {
                *comp_count.entry(c.component_key()).or_default() += 1;
            }
            for c in cands.iter() {
                let corr = scoring::correlate(&ctx.matcher, &d.lines, &tokens, &lower, d.failed_step.as_deref(), c);
                let onset_here = match (c.kind, before.established()) {
                    (CandidateKind::CiConfig, true) => Some(format!(
                        "the failure began in {first} ({}); the change landed {} just before",
                        before.describe(),
                        c.date.clone().unwrap_or_default()
                    )),
                    (_, true) if c.payload.as_deref() == Some(first.as_str()) => {
                        Some(format!("first failed in {first}, the payload that contains it; {}", before.describe()))
                    }
                    _ => None,
                };
                tuples.push(Tuple {
                    job: job.clone(),
                    mode_idx: i,
                    same_component: comp_count[&c.component_key()],
                    cand: c.clone(),
                    corr,
                    payload: first.clone(),
                    onset_here,
                });
            }
        }
    }
    let mut scores: Vec<CandidateScore> = Vec::new();
    for t in &tuples {
        let rc = rc_of[&(t.job.clone(), t.mode_idx)].clone();
        let other_jobs: Vec<String> = {
            let mut v: Vec<String> = tuples
                .iter()
                .filter(|o| {
                    o.job != t.job
                        && o.cand.id == t.cand.id
                        && o.corr.level >= Correlation::CodePath
                        && rc_of[&(o.job.clone(), o.mode_idx)] == rc
                })
                .map(|o| o.job.clone())
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let prow_job = failed_jobs
            .iter()
            .find(|f| f.name == t.job)
            .and_then(|f| f.prow_job.clone())
            .unwrap_or_else(|| t.job.clone());
        let gap = t.cand.presubmits.as_ref().and_then(|p| scoring::presubmit_gap(&prow_job, p));
        let d = &drafts_by_job[&t.job][t.mode_idx].0;
        let sctx = ScoreContext {
            job: &t.job,
            mode: &d.sig.id,
            root_cause: &rc,
            class: mode_class[&(t.job.clone(), t.mode_idx)].class,
            onset_here: t.onset_here.clone(),
            same_component: t.same_component,
            payload: &t.payload,
            other_jobs,
            presubmit_gap: gap,
        };
        scores.push(scoring::score(&sctx, &t.cand, &t.corr));
    }
    // A "flake" with a verbatim, new-in-this-payload match is a regression after all.
    let mut reclassified: BTreeSet<String> = BTreeSet::new();
    for s in &scores {
        let rc = root_causes.iter().find(|r| r.id == s.root_cause).unwrap();
        if rc.class.class == FailureClass::Flake
            && s.error_match.is_some()
            && s.items.iter().any(|i| i.signal == scoring::Signal::NewFailureMode)
        {
            reclassified.insert(rc.id.clone());
        }
    }
    for r in root_causes.iter_mut().filter(|r| reclassified.contains(&r.id)) {
        r.class = Classification {
            class: FailureClass::ProductRegression,
            reason: format!("looked intermittent ({}), but a candidate's diff carries the failure verbatim and the failure is new in its payload", r.class.reason),
            evidence: r.class.evidence.clone(),
            temporary: false,
        };
    }
    scores.sort_by(|a, b| {
        (&a.root_cause, &a.job, &a.mode, std::cmp::Reverse(a.total), &a.candidate).cmp(&(
            &b.root_cause,
            &b.job,
            &b.mode,
            std::cmp::Reverse(b.total),
            &b.candidate,
        ))
    });

    // 9. Suspects per root cause.
    let mut suspects: Vec<Suspect> = Vec::new();
    for r in &root_causes {
        let mut best: BTreeMap<String, (CandidateScore, BTreeSet<String>)> = BTreeMap::new();
        for s in scores.iter().filter(|s| s.root_cause == r.id && s.total > 0) {
            let e = best.entry(s.candidate.clone()).or_insert_with(|| (s.clone(), BTreeSet::new()));
            e.1.insert(s.job.clone());
            if (s.total, s.correlation) > (e.0.total, e.0.correlation) {
                e.0 = s.clone();
            }
        }
        let mut v: Vec<(CandidateScore, BTreeSet<String>)> = best.into_values().collect();
        v.sort_by(|a, b| {
            b.0.total
                .cmp(&a.0.total)
                .then(b.0.correlation.cmp(&a.0.correlation))
                .then(a.0.candidate.cmp(&b.0.candidate))
        });
        let mut revert_found = false;
        for (rank, (s, jobs)) in v.into_iter().enumerate() {
            let cand = &all_candidates[&s.candidate];
            let (mut action, mut reason) = action::candidate_action(s.total, cand, r.class.class, r.kubelet_skew);
            if action == CandidateAction::StageRevert {
                revert_found = true;
            } else if action == CandidateAction::Bisect && revert_found {
                action = CandidateAction::ReportOnly;
                reason = format!(
                    "score {}, but a revert candidate with a verbatim match already explains {}",
                    s.total, r.id
                );
            }
            suspects.push(Suspect {
                rank: rank as u32 + 1,
                candidate: s.candidate.clone(),
                root_cause: r.id.clone(),
                band: Band::of(s.total),
                jobs: jobs.into_iter().collect(),
                score: s,
                action,
                action_reason: reason,
            });
        }
    }
    for r in &mut root_causes {
        if !suspects.iter().any(|s| s.root_cause == r.id) {
            let n = scores.iter().filter(|s| s.root_cause == r.id).map(|s| &s.candidate).collect::<BTreeSet<_>>().len();
            r.no_candidate_reason = Some(match r.class.class {
                FailureClass::Infrastructure => format!("infrastructure cause ({}); none of the {n} candidate(s) of {} touches it", r.class.reason, r.first_failed_in),
                FailureClass::Flake => format!("flake ({}); it predates the candidates", r.class.reason),
                FailureClass::Unknown => format!("no failure evidence to correlate ({})", r.class.reason),
                _ if n == 0 => format!("no candidate change in {} (changelog unavailable or empty)", r.first_failed_in),
                _ => format!("none of the {n} candidate(s) of {} has an error-message, code-path or component link to the failure", r.first_failed_in),
            });
        }
    }

    // 10. Decision and recommendations.
    let all_temp_infra = !root_causes.is_empty()
        && root_causes.iter().all(|r| r.class.class == FailureClass::Infrastructure && r.class.temporary);
    let skew = root_causes.iter().any(|r| r.kubelet_skew);
    let fa = action::force_accept(
        &target_info.phase,
        failed_jobs.len(),
        all_temp_infra,
        if chain.baseline.is_some() { hours_since_baseline } else { None },
        skew,
    );
    let verdict = suspects
        .iter()
        .map(|s| match s.action {
            CandidateAction::StageRevert => Verdict::StageRevert,
            CandidateAction::Bisect => Verdict::Bisect,
            _ => Verdict::ReportOnly,
        })
        .max()
        .unwrap_or(Verdict::ReportOnly);
    let summary = match verdict {
        Verdict::StageRevert => {
            let list: Vec<String> = suspects
                .iter()
                .filter(|s| s.action == CandidateAction::StageRevert)
                .map(|s| format!("{} ({})", all_candidates[&s.candidate].short(), s.score.total))
                .collect();
            format!(
                "Stage a revert of {}: the failure evidence appears verbatim in the change and began with its payload.",
                list.join(", ")
            )
        }
        Verdict::Bisect => {
            let list: Vec<String> = suspects
                .iter()
                .filter(|s| s.action == CandidateAction::Bisect)
                .map(|s| format!("{} ({})", all_candidates[&s.candidate].short(), s.score.total))
                .collect();
            format!("Bisect {}: linked to the failure, but below the revert threshold.", list.join(", "))
        }
        Verdict::ReportOnly if failed_jobs.is_empty() => "No blocking job failed: nothing to act on.".to_string(),
        Verdict::ReportOnly => "Report only: no candidate reaches 60.".to_string(),
    };
    let mut recommendations = Vec::new();
    for s in suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        let c = &all_candidates[&s.candidate];
        let mut ev = Vec::new();
        if let Some(m) = &s.score.error_match {
            ev.push(format!("log {}: {}", m.log.at.cite(), m.log.text));
            ev.push(format!("diff {}:{}: {}", m.diff_file, m.diff_line, m.diff_text));
        }
        let text = match s.action {
            CandidateAction::StageRevert => format!("Revert {} ({}) — {}; policy requires reverting a change that breaks payloads.", c.short(), c.title, s.action_reason),
            CandidateAction::Bisect => format!("Bisect {} ({}): draft a revert and run the failing payload jobs ({}) against it.", c.short(), c.title, s.jobs.join(", ")),
            CandidateAction::EscalateRhcos => format!("Escalate {} to the RHCOS team: RPM changes cannot be reverted through a PR.", c.title),
            CandidateAction::WaitForKubeletRebuild => format!("Do not revert {}: wait for the RHCOS carrying the kubelet rebuilt from the rebase (kubelet version skew).", c.short()),
            CandidateAction::ReportOnly => continue,
        };
        recommendations.push(Recommendation { text, evidence: ev });
    }
    for r in &root_causes {
        let jobs = r.jobs.join(", ");
        let line =
            r.evidence.first().map(|(j, l)| format!("{j} {}: {}", l.at.cite(), l.text)).into_iter().collect::<Vec<_>>();
        let text = match r.class.class {
            FailureClass::Infrastructure if r.class.temporary => Some(format!(
                "{}: temporary infrastructure ({}) — retry {jobs}; no change is implicated.",
                r.id, r.class.reason
            )),
            FailureClass::Infrastructure => Some(format!(
                "{}: persistent infrastructure problem ({}) — needs a human fix before {jobs} can pass.",
                r.id, r.class.reason
            )),
            FailureClass::CiConfiguration
                if !suspects.iter().any(|s| s.root_cause == r.id && s.action != CandidateAction::ReportOnly) =>
            {
                Some(format!(
                    "{}: CI-configuration failure ({}) — check the step-registry changes around {} for {jobs}.",
                    r.id, r.class.reason, r.first_failed_in
                ))
            }
            FailureClass::Flake => Some(format!("{}: flake ({}) — track it, do not revert.", r.id, r.class.reason)),
            FailureClass::Unknown => Some(format!(
                "{}: collect the missing evidence for {jobs} before drawing a conclusion ({}).",
                r.id, r.class.reason
            )),
            FailureClass::ProductRegression
                if !suspects.iter().any(|s| s.root_cause == r.id && s.action != CandidateAction::ReportOnly) =>
            {
                Some(format!(
                    "{}: product failure without a candidate above 60 — file a bug with the evidence below; {}.",
                    r.id,
                    if r.is_systemic {
                        "it is systemic (seen in other jobs / platforms)"
                    } else {
                        "it is confined to the listed jobs"
                    }
                ))
            }
            _ => None,
        };
        if let Some(text) = text {
            recommendations.push(Recommendation { text, evidence: line });
        }
    }
    if fa.recommended {
        recommendations.push(Recommendation {
            text: "Force-accept the payload: every failure is temporary infrastructure.".into(),
            evidence: fa.reasons.clone(),
        });
    }
    if !pending_jobs.is_empty() {
        recommendations.push(Recommendation {
            text: format!(
                "{} blocking job(s) still pending: re-run the analysis when they finish.",
                pending_jobs.len()
            ),
            evidence: pending_jobs.clone(),
        });
    }

    // 11. Assemble.
    for fj in &mut failed_jobs {
        let modes = &drafts_by_job[&fj.name];
        fj.modes = modes
            .iter()
            .enumerate()
            .map(|(i, (d, first, count, before))| FailureMode {
                signature: d.sig.clone(),
                summary: d.summary.clone(),
                tests: d.tests.clone(),
                lines: d.lines.iter().take(12).cloned().collect(),
                class: mode_class[&(fj.name.clone(), i)].clone(),
                in_ci_step: d.in_ci_step,
                failed_step: d.failed_step.clone(),
                first_failed_in: first.clone(),
                payloads_failing: *count,
                before: before.clone(),
                root_cause: rc_of[&(fj.name.clone(), i)].clone(),
            })
            .collect();
    }
    for fj in &mut failed_jobs {
        for m in &mut fj.modes {
            if let Some(r) = root_causes.iter().find(|r| r.id == m.root_cause) {
                if m.class.class != r.class.class {
                    m.class = r.class.clone();
                }
            }
        }
    }
    let mut data_gaps = ctx.gaps.clone();
    data_gaps.extend(ctx.ev.gaps.borrow().iter().cloned());
    data_gaps.sort();
    data_gaps.dedup();
    let phase = target_info.phase.clone();
    let analysis = PayloadAnalysis {
        format_version: FORMAT_VERSION,
        payload: PayloadMeta {
            tag: opts.tag.clone(),
            stream_name: stream.clone(),
            version,
            stream: parts.as_ref().map(|p| p.stream.clone()).unwrap_or_default(),
            architecture,
            phase,
            created: target_time.map(time::rfc3339),
            release_url: release_url(&rc_base, &stream, &opts.tag),
            as_of: as_of.map(time::rfc3339),
            source: source.describe(),
        },
        blocking: target_info.blocking_counts(),
        informing: model::JobCounts::of(target_info.results.informing.values()),
        history: chain.rows.clone(),
        baseline: chain.baseline.clone(),
        chain_complete: !chain.truncated,
        last_accepted,
        hours_since_baseline,
        new_prs,
        cumulative_prs,
        window,
        failed_jobs,
        pending_jobs,
        root_causes,
        candidates: all_candidates.into_values().collect(),
        scores,
        suspects,
        informing_failures,
        passed_on_retry,
        decision: Decision { verdict, summary, force_accept: fa },
        recommendations,
        data_gaps,
    };
    Ok(analysis)
}

/// The release page URL of any tag, with the analysis' base.
pub fn page_url(a: &PayloadAnalysis, tag: &str) -> String {
    let base = a.payload.release_url.split("/releasestream/").next().unwrap_or("");
    release_url(base, &a.payload.stream_name, tag)
}
