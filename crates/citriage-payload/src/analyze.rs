//! The analysis pipeline: chain and history, changelogs, job history, failure
//! modes and their onsets, root causes and systemic context, candidates and their
//! scores, the decision and the recommendations. Pure given its inputs: the
//! source, the evidence provider and the options (`as_of` included).
//!
//! Onset: each failure mode is followed back along the chain by signature; a
//! run without evidence is taken as the same failure when the job kept failing
//! (its streak), so a culprit that came in one or two payloads before the
//! target is still found. Candidates come from every payload since the last
//! all-green one; those of the onset payload earn the onset points.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::action::{self, Band, CandidateAction, Verdict};
use crate::result::*;
use crate::ciconfig::{self, CiConfigChange};
use crate::classify::{Classification, Classifier, FailureClass, ModeFacts};
use crate::diff;
use crate::error::PayloadError;
use crate::evidence::{EvidenceProvider, JunitState, LogLine, RunEvidence, TestKind};
use crate::history::{self, Chain};
use crate::jobhistory::{self, JobRun, Outcome, RunState, Streak};
use crate::release::{self, ChangeLogState, JobResult, JobState, PullRequest, ReleaseInfo, TagList};
use crate::modes::{build_modes, Draft};
use crate::scoring::{
    self, Candidate, CandidateKind, CandidateScore, Correlation, CorrelationResult, Matcher, ModeEvidence, RpmChange,
    ScoreContext, Signal,
};
use crate::signature::{MaskingSigner, Signer};
use crate::source::PayloadSource;
use crate::specificity::{CandidateIndex, WindowIndex};
use citriage_model::time::{self, Epoch, DAY};
use regex::Regex;

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
    /// Paths inside the checkout whose history is read.
    pub ci_config_paths: Vec<String>,
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
            ci_config_paths: vec!["ci-operator/step-registry".to_string(), "ci-operator/config".to_string()],
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
            Ok(v) => {
                // What could not be read of the run (names refused, limits) is a gap.
                for p in v.iter().flat_map(|e| &e.problems) {
                    self.gaps.borrow_mut().insert(format!("{url}: {p}"));
                }
                v
            }
            Err(e) => {
                self.gaps.borrow_mut().insert(format!("evidence unreadable: {e}"));
                None
            }
        };
        self.cache.borrow_mut().insert(url.to_string(), v.clone());
        v
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
    gaps: Vec<String>,
    modes_cache: RefCell<BTreeMap<String, Vec<Draft>>>,
}

impl Ctx<'_> {
    fn modes_of(&self, url: &str, job: &str) -> Option<Vec<Draft>> {
        if let Some(m) = self.modes_cache.borrow().get(url) {
            return Some(m.clone());
        }
        let ev = self.ev.get(url)?;
        let m = build_modes(Some(&ev), job, self.signer, &self.classifier);
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

/// Decides whether an older run shows the same failure (`None`: cannot tell).
type SameFailure<'a> = &'a dyn Fn(&[Draft], Option<&RunEvidence>) -> Option<bool>;

/// Where a failure mode began.
struct Onset {
    first: String,
    count: u32,
    before: OnsetBefore,
    /// Payloads where the same failure was assumed from the job's state alone.
    assumed: Vec<String>,
}

/// Walks the chain older than the target while the job keeps failing the same
/// way. A failed run that cannot be compared (no evidence, or the target's own
/// failure is unknown) is taken as the same failure: the job kept failing.
fn onset_walk(ctx: &Ctx, chain: &Chain, job: &str, pred: SameFailure) -> Onset {
    let tags = chain.tags();
    let mut o = Onset { first: tags[0].clone(), count: 1, before: OnsetBefore::ChainEnd, assumed: Vec::new() };
    for tag in tags.iter().skip(1) {
        let Some(info) = chain.infos.get(tag) else {
            o.before = OnsetBefore::Unknown(tag.clone(), "release info not available".into());
            return o;
        };
        let Some(jr) = job_in(info, job) else {
            o.before = OnsetBefore::Unknown(tag.clone(), "the job did not run on that payload".into());
            return o;
        };
        match jr.state {
            JobState::Succeeded => {
                o.before = OnsetBefore::Passed(tag.clone());
                return o;
            }
            JobState::Failed => {
                let modes = jr.url.as_deref().and_then(|u| ctx.modes_of(u, job));
                let ev = jr.url.as_deref().and_then(|u| ctx.ev.get(u));
                let same = match &modes {
                    Some(m) if m.iter().all(|d| d.no_evidence) => None,
                    Some(m) => pred(m, ev.as_ref()),
                    None => None,
                };
                match same {
                    Some(true) => {}
                    Some(false) => {
                        let other =
                            modes.as_ref().and_then(|m| m.first()).map(|m| m.sig.id.clone()).unwrap_or_default();
                        o.before = OnsetBefore::DifferentFailure(tag.clone(), other);
                        return o;
                    }
                    None => o.assumed.push(tag.clone()),
                }
                o.first = tag.clone();
                o.count += 1;
            }
            _ => {
                o.before = OnsetBefore::Unknown(tag.clone(), "no final result on that payload".into());
                return o;
            }
        }
    }
    o
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
                if let Some(m) = modes.iter().find(|m| m.sig.id == sig && !m.no_evidence) {
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
) -> (Option<release::ChangeLogJson>, Vec<release::NodeImageStream>, String, Option<String>) {
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
) -> (Option<release::ChangeLogJson>, Vec<release::NodeImageStream>, String, Option<String>) {
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
    nis: &[release::NodeImageStream],
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
    analyze_with(source, evidence, opts, &MaskingSigner)
}

/// A mode of a failed job with its onset.
struct ModeOnset {
    draft: Draft,
    onset: Onset,
}

/// A mode's candidates: ids, and the onset window they were taken from.
struct ModeWindow {
    /// Payloads whose PRs are candidates (the onset payload when established,
    /// else every payload from it back to the baseline).
    payloads: Vec<String>,
    /// CI-configuration changes count when they landed in (lo, hi].
    lo: Option<Epoch>,
    hi: Option<Epoch>,
    /// CI changes landing in (onset_lo, hi] get the onset points.
    onset_lo: Option<Epoch>,
}

/// Runs the analysis with a custom [`Signer`] (the shared signature code).
pub fn analyze_with(
    source: &dyn PayloadSource,
    evidence: &dyn EvidenceProvider,
    opts: &AnalyzeOptions,
    signer: &dyn Signer,
) -> Result<PayloadAnalysis, PayloadError> {
    let parts = release::parse_tag(&opts.tag);
    let stream = match (&opts.stream, &parts) {
        (Some(s), _) => s.clone(),
        (None, Some(p)) => p.stream_name.clone(),
        (None, None) => {
            return Err(PayloadError::Options(format!(
                "cannot derive the stream from tag {:?}: pass the stream with --stream NAME (e.g. --stream 4.22.0-0.nightly)",
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
        ev: Evidence {
            provider: evidence,
            as_of,
            cache: RefCell::new(BTreeMap::new()),
            gaps: RefCell::new(BTreeSet::new()),
        },
        signer,
        classifier: Classifier::default(),
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
    let mut hops: BTreeMap<String, (Vec<PullRequest>, Vec<release::NodeImageStream>, String)> = BTreeMap::new();
    let mut hop_notes: BTreeMap<String, String> = BTreeMap::new();
    for (i, tag) in chain_tags.iter().enumerate() {
        let Some(from) = chain_tags.get(i + 1).cloned().or_else(|| if i == 0 { predecessor.clone() } else { None })
        else {
            continue;
        };
        if Some(tag) == chain.baseline.as_ref() {
            continue;
        }
        let (json, nis, _how, note) = changelog_between(&mut ctx, &chain.infos, tag, &from);
        match json {
            Some(j) => {
                hops.insert(tag.clone(), (j.pull_requests(), nis, from.clone()));
            }
            None => {
                hop_notes.insert(tag.clone(), note.clone().unwrap_or_default());
                ctx.gaps.push(format!("no changelog for {tag} from {from}: {}", note.unwrap_or_default()));
            }
        }
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
            let (json, _, how, _note) = changelog_between(&mut ctx, &chain.infos, &opts.tag, b);
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
                    let missing: Vec<&String> = chain_tags
                        .iter()
                        .filter(|t| Some(*t) != chain.baseline.as_ref() && !hops.contains_key(*t))
                        .collect();
                    PrSet {
                        from: Some(b.clone()),
                        prs,
                        how: "union of the changelogs of each hop of the chain".into(),
                        note: (!missing.is_empty()).then(|| {
                            format!(
                                "no changelog for {}",
                                missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                            )
                        }),
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
    let mut drafts_by_job: BTreeMap<String, Vec<ModeOnset>> = BTreeMap::new();
    for (name, jr) in &target_info.results.blocking {
        if jr.state != JobState::Failed {
            continue;
        }
        let prow_job = jr.prow_job();
        let ev = jr.url.as_deref().and_then(|u| ctx.ev.get(u));
        if ev.is_none() {
            ctx.gaps.push(format!(
                "{name}: no artifacts for {}: insufficient evidence",
                jr.url.as_deref().unwrap_or("(no URL)")
            ));
        }
        let drafts = match (jr.url.as_deref(), &ev) {
            (Some(u), Some(_)) => ctx.modes_of(u, name).unwrap_or_default(),
            _ => build_modes(None, name, signer, &ctx.classifier),
        };
        let mut modes_here = Vec::new();
        for d in drafts {
            let sig = d.sig.id.clone();
            let onset = if d.no_evidence {
                onset_walk(&ctx, &chain, name, &|_, _| None)
            } else {
                onset_walk(&ctx, &chain, name, &|modes: &[Draft], _| Some(modes.iter().any(|m| m.sig.id == sig)))
            };
            modes_here.push(ModeOnset { draft: d, onset });
        }
        // Per-test onsets.
        let mut tests = Vec::new();
        if let Some(e) = &ev {
            for f in e.gating().filter(|f| !f.is_step) {
                let tname = f.name.clone();
                let o = onset_walk(&ctx, &chain, name, &|_, ev: Option<&RunEvidence>| {
                    ev.filter(|e| e.junit.readable()).map(|e| e.gating().any(|g| g.name == tname))
                });
                tests.push(TestOnset {
                    name: f.name.clone(),
                    message: f.message.clone(),
                    at: f.at.clone(),
                    first_failed_in: o.first,
                    payloads_failing: o.count,
                    onset_certain: o.before.established() && o.assumed.is_empty(),
                });
            }
        }
        // Previous attempts.
        let final_sig = modes_here.first().map(|m| m.draft.sig.id.clone());
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
            let problem = match &e.junit {
                JunitState::Missing => {
                    Some("JUnit missing: the job's tests may never have run (unknown, not green)".to_string())
                }
                JunitState::Unparseable { problems } => Some(format!("JUnit unparseable: {}", problems.join("; "))),
                JunitState::Empty { .. } => {
                    Some("JUnit export (results.json) is empty: nothing is known of the tests".to_string())
                }
                _ => None,
            };
            if let Some(p) = problem {
                let log = if e.log_lines.is_empty() && e.context.is_empty() { "; no build log" } else { "" };
                ctx.gaps.push(format!("{name}: {p}{log}"));
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
    let with_evidence = drafts_by_job.values().filter(|m| m.iter().any(|x| !x.draft.no_evidence)).count();
    if !failed_jobs.is_empty() && with_evidence == 0 {
        ctx.gaps.push(format!(
            "none of the {} failed blocking job(s) has failure evidence: insufficient evidence for any conclusion",
            failed_jobs.len()
        ));
    }

    // 5. Root causes: modes grouped by signature.
    let mut by_sig: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
    for (job, modes) in &drafts_by_job {
        for (i, m) in modes.iter().enumerate() {
            by_sig.entry(m.draft.sig.id.clone()).or_default().push((job.clone(), i));
        }
    }
    let mut groups: Vec<(String, Vec<(String, usize)>)> = by_sig.into_iter().collect();
    groups.sort_by(|a, b| {
        let ta = &drafts_by_job[&a.1[0].0][a.1[0].1].draft.sig.text;
        let tb = &drafts_by_job[&b.1[0].0][b.1[0].1].draft.sig.text;
        b.1.len().cmp(&a.1.len()).then(ta.cmp(tb)).then(a.0.cmp(&b.0))
    });
    let mut rc_of: BTreeMap<(String, usize), String> = BTreeMap::new();
    let mut mode_class: BTreeMap<(String, usize), Classification> = BTreeMap::new();
    let mut root_causes: Vec<RootCause> = Vec::new();
    for (n, (sig_id, members)) in groups.iter().enumerate() {
        let id = format!("RC{}", n + 1);
        let mut classes: Vec<Classification> = Vec::new();
        for (job, i) in members {
            let mo = &drafts_by_job[job][*i];
            let d = &mo.draft;
            let flake = if d.no_evidence { None } else { flake_scan(&ctx, &chain, job, sig_id, &mo.onset.first) };
            let facts = ModeFacts {
                lines: &d.lines,
                has_gating_tests: d.has_gating_tests,
                in_ci_step: d.in_ci_step,
                informing_only: d.informing_only,
                no_evidence: d.no_evidence,
                flake_evidence: flake,
                hint: d.hint.as_ref(),
                run_level: d.run_level.clone(),
                test_binary: d.test_binary,
                product_error: d.product_error,
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
        let class = counts.into_iter().next_back().map(|(_, c)| c).unwrap_or_else(|| classes[0].clone());
        for (job, i) in members {
            if let Some(mc) = mode_class.get_mut(&(job.clone(), *i)) {
                if mc.class != class.class {
                    *mc = class.clone();
                }
            }
        }
        let first = members
            .iter()
            .map(|(j, i)| drafts_by_job[j][*i].onset.first.clone())
            .min_by_key(|t| (time::tag_timestamp(t), t.clone()))
            .unwrap_or_default();
        let rep = &drafts_by_job[&members[0].0][members[0].1].draft;
        let mut jobs: Vec<String> = members.iter().map(|(j, _)| j.clone()).collect();
        jobs.dedup();
        let evidence: Vec<(String, LogLine)> = members
            .iter()
            .filter_map(|(j, i)| drafts_by_job[j][*i].draft.lines.first().map(|l| (j.clone(), l.clone())))
            .collect();
        let mut platforms: BTreeSet<String> = BTreeSet::new();
        for j in &jobs {
            if let Some(p) = failed_jobs.iter().find(|f| f.name == *j).and_then(|f| f.platform.clone()) {
                platforms.insert(p);
            }
        }
        let all_lines: Vec<LogLine> =
            members.iter().flat_map(|(j, i)| drafts_by_job[j][*i].draft.lines.clone()).collect();
        let mut look_at: Vec<String> = Vec::new();
        for (j, i) in members {
            let d = &drafts_by_job[j][*i].draft;
            if d.in_ci_step || class.class == FailureClass::CiConfiguration {
                for r in &d.step_refs {
                    let p = format!("ci-operator/step-registry/**/{r}-ref.yaml and {r}-commands.sh");
                    if !look_at.contains(&p) {
                        look_at.push(p);
                    }
                }
                for p in &d.ci_paths {
                    if !look_at.contains(p) {
                        look_at.push(p.clone());
                    }
                }
                if d.step_refs.is_empty() {
                    if let Some(s) = &d.failed_step {
                        let p = format!("ci-operator/step-registry/**/*-commands.sh run by step {s}");
                        if !look_at.contains(&p) {
                            look_at.push(p);
                        }
                    }
                }
            }
        }
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
            ci_look_at: look_at,
        });
    }

    // Consequences: a failure that names a component whose own failure in the
    // same jobs is infrastructure (an upgrade that did not complete because
    // clusteroperator/insights stayed unavailable, which an external service caused).
    {
        let comps_of = |r: &RootCause| -> Vec<crate::components::ComponentRef> {
            let mut out = Vec::new();
            for (j, i) in groups
                .iter()
                .find(|g| rc_of.get(&(g.1[0].0.clone(), g.1[0].1)) == Some(&r.id))
                .map(|g| g.1.clone())
                .unwrap_or_default()
            {
                let d = &drafts_by_job[&j][i].draft;
                let texts: Vec<String> = d.lines.iter().map(|l| l.text.clone()).collect();
                out.extend(crate::components::failure_components(&d.tests, &texts, &d.binaries, d.test_binary));
            }
            out
        };
        let infra: Vec<(String, bool, Vec<String>, BTreeSet<String>)> = root_causes
            .iter()
            .filter(|r| r.class.class == FailureClass::Infrastructure)
            .map(|r| {
                let subj: BTreeSet<String> = comps_of(r).into_iter().filter(|c| c.subject).map(|c| c.key).collect();
                (r.id.clone(), r.class.temporary, r.jobs.clone(), subj)
            })
            .collect();
        let mut changed: Vec<(String, Classification)> = Vec::new();
        for r in root_causes.iter().filter(|r| r.class.class == FailureClass::ProductRegression) {
            let named: Vec<crate::components::ComponentRef> = comps_of(r);
            for c in named.iter().filter(|c| !c.subject) {
                let causes: Vec<&(String, bool, Vec<String>, BTreeSet<String>)> =
                    infra.iter().filter(|(_, _, _, subj)| subj.contains(&c.key)).collect();
                let covered =
                    !causes.is_empty() && r.jobs.iter().all(|j| causes.iter().any(|(_, _, jobs, _)| jobs.contains(j)));
                if covered {
                    let ids: Vec<&str> = causes.iter().map(|(id, _, _, _)| id.as_str()).collect();
                    changed.push((
                        r.id.clone(),
                        Classification {
                            class: FailureClass::Infrastructure,
                            reason: format!(
                                "a consequence of {}: {}, and {} failed in the same job(s) for an infrastructure reason",
                                ids.join(", "),
                                c.how,
                                c.key
                            ),
                            evidence: r.class.evidence.clone(),
                            temporary: causes.iter().all(|(_, t, _, _)| *t),
                        },
                    ));
                    break;
                }
            }
        }
        for (id, c) in changed {
            if let Some(r) = root_causes.iter_mut().find(|r| r.id == id) {
                r.class = c.clone();
            }
            for (k, v) in rc_of.iter() {
                if *v == id {
                    mode_class.insert(k.clone(), c.clone());
                }
            }
        }
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
            let hit = modes
                .as_ref()
                .and_then(|ms| ms.iter().find(|m| !m.no_evidence && sig_to_rc.contains_key(&m.sig.id)).cloned());
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
        r.is_systemic = r.class.class != FailureClass::Unknown && (!r.systemic.is_empty() || plats.len() >= 2);
    }

    // 7. Candidates: every payload since the last all-green one, and the
    //    CI-configuration changes of the window.
    let window_lo = chain
        .baseline
        .as_deref()
        .or(chain_tags.last().map(String::as_str))
        .and_then(time::tag_timestamp)
        .or(target_time.map(|t| t - 14 * DAY));
    let ci_changes: Option<Vec<CiConfigChange>> = match &opts.ci_config_changes {
        Some(p) if p.is_dir() => {
            let until = as_of.or(target_time).unwrap_or(0) + DAY;
            let since = window_lo.unwrap_or(until - 14 * DAY) - 2 * DAY;
            match ciconfig::from_checkout(p, &opts.ci_config_paths, since, until, &opts.ci_config_repo) {
                Ok(c) => Some(c),
                Err(e) => {
                    ctx.gaps.push(format!("CI-configuration changes: {e}"));
                    None
                }
            }
        }
        Some(p) => Some(ciconfig::read_recorded_file(p)?),
        None => source.ci_config_changes()?,
    };
    let ci_known = ci_changes.is_some();
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
    for p in &chain_tags {
        let Some((prs, nis, from)) = hops.get(p) else { continue };
        let mut v: Vec<Candidate> = prs.iter().map(|pr| pr_candidate(source, pr, p, &mut ctx.gaps)).collect();
        v.extend(rpm_candidates(source, nis, p, from));
        for c in &v {
            all_candidates.entry(c.id.clone()).or_insert_with(|| c.clone());
        }
        candidates_by_payload.insert(p.clone(), v);
    }
    // A change can only break runs that started after it: the window ends with
    // the latest start of the target's failed blocking runs.
    let mut latest_start: Option<Epoch> = None;
    for jr in target_info.results.blocking.values().filter(|j| j.state == JobState::Failed) {
        let mut first: Option<Epoch> = jr.transition_epoch();
        for u in jr.previous_attempt_urls.iter().chain(jr.url.iter()) {
            if let Some(t) = ctx.ev.get(u).and_then(|e| e.started.or(e.finished)) {
                first = Some(first.map_or(t, |b| b.min(t)));
            }
        }
        if let Some(t) = first {
            latest_start = Some(latest_start.map_or(t, |l| l.max(t)));
        }
    }
    let hi_all = [latest_start.or(target_time.map(|t| t + DAY)), as_of].into_iter().flatten().min();
    for c in &ci_changes {
        let t = c.epoch();
        if t.is_some_and(|t| window_lo.is_none_or(|lo| t > lo - DAY) && hi_all.is_none_or(|hi| t <= hi)) {
            let cand = ci_candidate(c, &opts.tag);
            all_candidates.entry(cand.id.clone()).or_insert(cand);
        }
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
    let index = WindowIndex::new(
        all_candidates
            .values()
            .filter(|c| c.kind != CandidateKind::RhcosRpm)
            .map(|c| (c.id.clone(), CandidateIndex::new(c.diff.as_ref(), &c.title)))
            .collect(),
    );
    let empty_ix = CandidateIndex::default();

    // 8. Correlate, then score.
    struct Tuple {
        job: String,
        mode_idx: usize,
        cand: String,
        corr: CorrelationResult,
        onset_here: Option<String>,
        payload: String,
    }
    let matcher = Matcher;
    let mut tuples: Vec<Tuple> = Vec::new();
    for (job, modes) in &drafts_by_job {
        let fj = failed_jobs.iter().find(|f| f.name == *job);
        for (i, mo) in modes.iter().enumerate() {
            let d = &mo.draft;
            let first = &mo.onset.first;
            let established = mo.onset.before.established();
            let idx = chain_tags.iter().position(|t| t == first).unwrap_or(0);
            // Every payload from the onset back to the last all-green one: a change
            // that came later cannot have started the failure.
            let payloads: Vec<String> =
                chain_tags.iter().skip(idx).filter(|t| Some(*t) != chain.baseline.as_ref()).cloned().collect();
            // The failing run's start bounds the CI window: the step registry is read then.
            let run = chain.infos.get(first).and_then(|i| job_in(i, job));
            let mut bound = run.and_then(|j| j.transition_epoch());
            let urls: Vec<&String> =
                run.map(|j| j.previous_attempt_urls.iter().chain(j.url.iter()).collect()).unwrap_or_default();
            for u in urls {
                if let Some(t) = ctx.ev.get(u).and_then(|e| e.started.or(e.finished)) {
                    bound = Some(bound.map_or(t, |b| b.min(t)));
                }
            }
            let onset_t = time::tag_timestamp(first);
            let hi = [bound, onset_t.map(|t| t + DAY), as_of].into_iter().flatten().min();
            let before_t = match &mo.onset.before {
                OnsetBefore::Passed(t) | OnsetBefore::DifferentFailure(t, _) => time::tag_timestamp(t),
                _ => None,
            };
            let lo = if established { before_t } else { window_lo };
            let w = ModeWindow { payloads, lo, hi, onset_lo: if established { before_t } else { None } };
            let mut ev =
                ModeEvidence::new(&matcher, d.lines.clone(), d.tests.clone(), d.binaries.clone(), d.test_binary);
            ev.step_refs = d.step_refs.clone();
            ev.ci_paths = d.ci_paths.clone();
            ev.failed_step = d.failed_step.clone();
            ev.prow_job = fj.and_then(|f| f.prow_job.clone()).unwrap_or_default();
            let mut cands: Vec<&Candidate> = Vec::new();
            for p in &w.payloads {
                for c in candidates_by_payload.get(p).into_iter().flatten() {
                    if c.kind == CandidateKind::RhcosRpm
                        && !fj
                            .is_some_and(|f| c.rpm.as_ref().is_some_and(|r| variant_applies(&f.rhcos, &r.variant_tag)))
                    {
                        continue;
                    }
                    if let Some(c) = all_candidates.get(&c.id) {
                        cands.push(c);
                    }
                }
            }
            for c in all_candidates.values().filter(|c| c.kind == CandidateKind::CiConfig) {
                let t = c.date.as_deref().and_then(time::parse_rfc3339);
                if t.is_some_and(|t| w.lo.is_none_or(|lo| t > lo) && w.hi.is_none_or(|hi| t <= hi)) {
                    cands.push(c);
                }
            }
            for c in cands {
                let ix = index.docs.get(&c.id).unwrap_or(&empty_ix);
                let corr = scoring::correlate(&ev, c, ix, &index);
                let onset_here = if !established || corr.links.is_empty() {
                    None
                } else {
                    match c.kind {
                        CandidateKind::CiConfig => {
                            let t = c.date.as_deref().and_then(time::parse_rfc3339);
                            t.filter(|t| w.onset_lo.is_some_and(|lo| *t > lo)).map(|_| {
                                format!(
                                    "the failure began in {first} ({}); the change landed {} in between",
                                    mo.onset.before.describe(),
                                    c.date.as_deref().map(time::shown).unwrap_or_default()
                                )
                            })
                        }
                        _ if c.payload.as_deref() == Some(first.as_str()) => Some(format!(
                            "first failed in {first}, the payload that contains it; {}{}",
                            mo.onset.before.describe(),
                            if mo.onset.assumed.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    " (the same failure assumed on {} from the job's state: no evidence there)",
                                    mo.onset.assumed.join(", ")
                                )
                            }
                        )),
                        _ => None,
                    }
                };
                tuples.push(Tuple {
                    job: job.clone(),
                    mode_idx: i,
                    cand: c.id.clone(),
                    corr,
                    onset_here,
                    payload: c.payload.clone().unwrap_or_else(|| first.clone()),
                });
            }
        }
    }
    let linked_per_mode: BTreeMap<(String, usize), usize> = {
        let mut m: BTreeMap<(String, usize), usize> = BTreeMap::new();
        for t in &tuples {
            if !t.corr.links.is_empty() {
                *m.entry((t.job.clone(), t.mode_idx)).or_default() += 1;
            }
        }
        m
    };
    let mut scores: Vec<CandidateScore> = Vec::new();
    for t in &tuples {
        let rc = rc_of[&(t.job.clone(), t.mode_idx)].clone();
        let mut other_jobs: Vec<String> = tuples
            .iter()
            .filter(|o| {
                o.job != t.job
                    && o.cand == t.cand
                    && o.corr.level() >= Correlation::CodePath
                    && rc_of[&(o.job.clone(), o.mode_idx)] == rc
            })
            .map(|o| o.job.clone())
            .collect();
        other_jobs.sort();
        other_jobs.dedup();
        let fj = failed_jobs.iter().find(|f| f.name == t.job);
        let prow_job = fj.and_then(|f| f.prow_job.clone()).unwrap_or_else(|| t.job.clone());
        let cand = &all_candidates[&t.cand];
        let gap = if t.corr.links.is_empty() {
            None
        } else {
            cand.presubmits.as_ref().and_then(|p| scoring::presubmit_gap(&prow_job, p))
        };
        let mo = &drafts_by_job[&t.job][t.mode_idx];
        let sctx = ScoreContext {
            job: &t.job,
            mode: &mo.draft.sig.id,
            root_cause: &rc,
            class: mode_class[&(t.job.clone(), t.mode_idx)].class,
            onset_here: t.onset_here.clone(),
            sole_linked: !t.corr.links.is_empty()
                && linked_per_mode.get(&(t.job.clone(), t.mode_idx)).copied().unwrap_or(0) == 1,
            payload: &t.payload,
            other_jobs,
            presubmit_gap: gap,
            in_ci_step: mo.draft.in_ci_step,
        };
        scores.push(scoring::score(&sctx, cand, &t.corr));
    }
    // A "flake" with a specific verbatim, new-in-this-payload match is a regression after all.
    let mut reclassified: BTreeSet<String> = BTreeSet::new();
    for s in &scores {
        let Some(rc) = root_causes.iter().find(|r| r.id == s.root_cause) else { continue };
        if rc.class.class == FailureClass::Flake
            && s.error_match.as_ref().is_some_and(|m| m.df == 1)
            && s.items.iter().any(|i| i.signal == Signal::NewFailureMode)
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
            if let (Some(cap), CandidateAction::ReportOnly | CandidateAction::Bisect) = (&s.cap, action) {
                reason = format!("{reason}; {cap}");
            }
            if action == CandidateAction::StageRevert {
                revert_found = true;
            } else if action == CandidateAction::Bisect && revert_found {
                action = CandidateAction::ReportOnly;
                reason = format!(
                    "score {}, but a revert candidate with a specific verbatim match already explains {}",
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
                FailureClass::Infrastructure => format!("infrastructure cause ({}); none of the {n} candidate(s) of the window is implicated", r.class.reason),
                FailureClass::Flake => format!("flake ({}); it predates the candidates", r.class.reason),
                FailureClass::Unknown => format!("{}; nothing can be correlated", r.class.reason),
                FailureClass::InformingOnly => "only informing tests failed".to_string(),
                _ if n == 0 => format!("no candidate change since {} (changelog unavailable or empty)", chain.baseline.clone().unwrap_or_else(|| r.first_failed_in.clone())),
                _ => format!("none of the {n} candidate(s) has an error-message, code-path, title or component link to the failure"),
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
    let insufficient: Vec<&RootCause> = root_causes.iter().filter(|r| r.class.class == FailureClass::Unknown).collect();
    let summary = match verdict {
        Verdict::StageRevert => {
            let mut list: Vec<String> = suspects
                .iter()
                .filter(|s| s.action == CandidateAction::StageRevert)
                .map(|s| format!("{} ({})", all_candidates[&s.candidate].short(), s.score.total))
                .collect();
            list.dedup();
            format!(
                "Stage a revert of {}: a specific string of the failure appears in the change, the failure began with its payload, and a second link corroborates it.",
                list.join(", ")
            )
        }
        Verdict::Bisect => {
            let mut list: Vec<String> = Vec::new();
            for s in suspects.iter().filter(|s| s.action == CandidateAction::Bisect) {
                let item = format!("{} ({})", all_candidates[&s.candidate].short(), s.score.total);
                if !list.contains(&item) {
                    list.push(item);
                }
            }
            format!(
                "Bisect {}: linked to the failure by specific, corroborated evidence, but short of a revert.",
                list.join(", ")
            )
        }
        Verdict::ReportOnly if failed_jobs.is_empty() => "No blocking job failed: nothing to act on.".to_string(),
        Verdict::ReportOnly => {
            let best = suspects.iter().max_by_key(|s| (s.score.total, std::cmp::Reverse(s.candidate.clone())));
            let mut why = Vec::new();
            let infra: Vec<&RootCause> =
                root_causes.iter().filter(|r| r.class.class == FailureClass::Infrastructure).collect();
            if all_temp_infra {
                why.push("every failure is temporary infrastructure".to_string());
            } else if !infra.is_empty() {
                let mut reasons: Vec<String> = infra
                    .iter()
                    .map(|r| r.class.reason.split(" (").next().unwrap_or(&r.class.reason).to_string())
                    .collect();
                reasons.sort();
                reasons.dedup();
                why.push(format!(
                    "{} of the {} root cause(s) {} infrastructure ({})",
                    infra.len(),
                    root_causes.len(),
                    if infra.len() == 1 { "is" } else { "are" },
                    reasons.join("; ")
                ));
            }
            if !insufficient.is_empty() {
                why.push(format!(
                    "insufficient evidence for {} of the {} root cause(s) ({})",
                    insufficient.len(),
                    root_causes.len(),
                    insufficient.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            match best {
                Some(b) if b.score.total >= 60 => why.push(format!(
                    "the best-linked candidate, {} ({}), explains a failure classified as {}, which a revert cannot fix",
                    all_candidates[&b.candidate].short(),
                    b.score.total,
                    root_causes.iter().find(|r| r.id == b.root_cause).map(|r| r.class.class.as_str()).unwrap_or("unknown")
                )),
                Some(b) => why.push(format!(
                    "no candidate reaches 60 (best: {} at {}{})",
                    all_candidates[&b.candidate].short(),
                    b.score.total,
                    b.score.cap.as_ref().map(|c| format!(", {c}")).unwrap_or_default()
                )),
                None if infra.len() + insufficient.len() < root_causes.len() => {
                    why.push("no candidate is linked to the other failures".to_string())
                }
                None => {}
            }
            format!("Report only: {}.", why.join("; "))
        }
    };
    let mut recommendations = Vec::new();
    let mut recommended: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        recommended.entry(s.candidate.clone()).or_default().push(s.root_cause.clone());
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    for s in suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        if !done.insert(s.candidate.clone()) {
            continue;
        }
        let rcs = recommended.get(&s.candidate).map(|v| v.join(", ")).unwrap_or_default();
        let c = &all_candidates[&s.candidate];
        let mut ev = Vec::new();
        if let Some(m) = &s.score.error_match {
            ev.push(format!("log {}: {}", m.log.at.cite(), m.log.text));
            ev.push(format!("diff {}:{}: {}", m.diff_file, m.diff_line, m.diff_text));
            if !m.why_specific.is_empty() {
                ev.push(format!("why specific: {}", m.why_specific));
            }
        }
        for i in &s.score.items {
            ev.push(format!("{} +{}: {}", i.signal.name(), i.points, i.evidence));
        }
        let text = match s.action {
            CandidateAction::StageRevert => format!("Revert {} ({}) for {rcs} — {}; policy requires reverting a change that breaks payloads.", c.short(), c.title, s.action_reason),
            CandidateAction::Bisect => format!("Bisect {} ({}) for {rcs}: draft a revert and run the failing payload jobs ({}) against it — {}.", c.short(), c.title, s.jobs.join(", "), s.action_reason),
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
        let acted = suspects.iter().any(|s| s.root_cause == r.id && s.action != CandidateAction::ReportOnly);
        let ci_hint = |r: &RootCause| -> String {
            if r.ci_look_at.is_empty() {
                String::new()
            } else if ci_known {
                format!(" Look at {}.", r.ci_look_at.join("; "))
            } else {
                format!(
                    " Look at {}; pass --ci-config with an openshift/release checkout to rank the commits that touched them since {}.",
                    r.ci_look_at.join("; "),
                    chain.baseline.clone().unwrap_or_else(|| r.first_failed_in.clone())
                )
            }
        };
        let text = match r.class.class {
            FailureClass::Infrastructure if r.class.temporary => Some(format!(
                "{}: temporary infrastructure ({}) — retry {jobs}; no change is implicated.",
                r.id, r.class.reason
            )),
            FailureClass::Infrastructure => Some(format!(
                "{}: persistent infrastructure or external problem ({}) — needs a human fix before {jobs} can pass; no change is implicated.",
                r.id, r.class.reason
            )),
            FailureClass::CiConfiguration if !acted => Some(format!(
                "{}: CI-configuration failure ({}) — check the CI-configuration changes since {} for {jobs}.{}",
                r.id,
                r.class.reason,
                r.first_failed_in,
                ci_hint(r)
            )),
            FailureClass::Flake => Some(format!("{}: flake ({}) — track it, do not revert.", r.id, r.class.reason)),
            FailureClass::Unknown if !acted => Some(format!(
                "{}: {} for {jobs} — no action; collect the job's JUnit and build log. The job has failed since {}.{}",
                r.id,
                r.title,
                r.first_failed_in,
                ci_hint(r)
            )),
            FailureClass::ProductRegression if !acted => {
                let best = suspects.iter().filter(|s| s.root_cause == r.id).max_by_key(|s| s.score.total);
                Some(format!(
                    "{}: product failure without a candidate strong enough to act on — file a bug with the evidence below; {}{}.",
                    r.id,
                    if r.is_systemic {
                        "it is systemic (seen in other jobs / platforms)"
                    } else {
                        "it is confined to the listed jobs"
                    },
                    best.map(|b| format!(
                        "; best suspect {} ({}){}",
                        all_candidates[&b.candidate].short(),
                        b.score.total,
                        b.score.cap.as_ref().map(|c| format!(", {c}")).unwrap_or_default()
                    ))
                    .unwrap_or_default()
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
            .map(|(i, mo)| {
                let d = &mo.draft;
                let rc = rc_of[&(fj.name.clone(), i)].clone();
                let class = root_causes
                    .iter()
                    .find(|r| r.id == rc)
                    .map(|r| r.class.clone())
                    .unwrap_or_else(|| mode_class[&(fj.name.clone(), i)].clone());
                FailureMode {
                    signature: d.sig.clone(),
                    summary: d.summary.clone(),
                    tests: d.tests.clone(),
                    lines: d.lines.iter().take(12).cloned().collect(),
                    class,
                    in_ci_step: d.in_ci_step,
                    failed_step: d.failed_step.clone(),
                    first_failed_in: mo.onset.first.clone(),
                    payloads_failing: mo.onset.count,
                    before: mo.onset.before.clone(),
                    root_cause: rc,
                    onset_assumed_on: mo.onset.assumed.clone(),
                    step_refs: d.step_refs.clone(),
                }
            })
            .collect();
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
        informing: release::JobCounts::of(target_info.results.informing.values()),
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
