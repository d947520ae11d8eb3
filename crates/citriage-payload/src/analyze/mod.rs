//! The analysis pipeline, one stage per module, each a function from typed
//! inputs to a typed output:
//!
//! 1. `chain`: the stream's tags, the chain back to the last all-green payload,
//!    the history table, and the changelogs of each hop (new and cumulative PRs);
//! 2. `job_history`: job runs, pass rates and their window;
//! 3. `failure_modes`: the failed blocking jobs, their failure modes and the
//!    onset of each along the chain (`onset`);
//! 4. `root_causes`: modes grouped by signature, classified, consequences of
//!    infrastructure failures, and the same signatures in informing / async jobs;
//! 5. `candidates`: the changes of every payload since the last all-green one
//!    and the CI-configuration changes of the window, indexed for specificity;
//! 6. `suspects`: every (job, mode, candidate) correlated and scored, then the
//!    suspects of each root cause ranked;
//! 7. `decision`: the verdict, the summary, force-accept and the recommendations;
//! 8. `assembly`: the result.
//!
//! The stages read through the source and the evidence provider only (cached by
//! `reader::RunReader`); the analysis itself touches no file, no process and
//! no clock. Onset: each failure mode is followed back along the chain by
//! signature; a run without evidence is taken as the same failure when the job
//! kept failing (its streak), so a culprit that came in one or two payloads
//! before the target is still found. Candidates come from every payload since
//! the last all-green one; those of the onset payload earn the onset points.

mod assembly;
mod candidates;
mod chain;
mod decision;
mod failure_modes;
mod job_history;
mod onset;
mod reader;
mod root_causes;
mod suspects;

use std::path::PathBuf;

use citriage_model::time::{self, Epoch};

use crate::error::PayloadError;
use crate::evidence::EvidenceProvider;
use crate::release::{self, TagParts};
use crate::result::PayloadAnalysis;
use crate::signature::{MaskingSigner, Signer};
use crate::source::ci_config::{CiConfigOrigin, WithCiConfig};
use crate::source::PayloadSource;

pub use failure_modes::{platform_of, rhcos_variant};

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

/// What every stage needs to know of the target: its tag and stream, the
/// cutoff, where its pages are.
pub(crate) struct Target {
    pub tag: String,
    pub stream: String,
    /// The tag's parts, when it parses.
    pub parts: Option<TagParts>,
    pub as_of: Option<Epoch>,
    /// Creation time from the tag.
    pub created: Option<Epoch>,
    /// `4.22`, empty when the tag does not say.
    pub version: String,
    pub architecture: String,
    /// Base URL of the release-controller pages.
    pub pages_base: String,
}

impl Target {
    /// The target of the options, or why the options cannot be analysed.
    fn of(opts: &AnalyzeOptions) -> Result<Target, PayloadError> {
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
        let created = time::tag_timestamp(&opts.tag);
        if let (Some(cut), Some(t)) = (as_of, created) {
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
        let pages_base = opts
            .release_controller_url
            .clone()
            .unwrap_or_else(|| format!("https://{architecture}.ocp.releases.ci.openshift.org"));
        Ok(Target {
            tag: opts.tag.clone(),
            stream,
            version: parts.as_ref().map(|p| p.version.clone()).unwrap_or_default(),
            parts,
            as_of,
            created,
            architecture,
            pages_base,
        })
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

/// Runs the analysis with a custom [`Signer`] (the shared signature code). The
/// CI-configuration changes the options name are read through the source.
pub fn analyze_with(
    source: &dyn PayloadSource,
    evidence: &dyn EvidenceProvider,
    opts: &AnalyzeOptions,
    signer: &dyn Signer,
) -> Result<PayloadAnalysis, PayloadError> {
    match &opts.ci_config_changes {
        Some(path) => {
            let origin = CiConfigOrigin::of(path, &opts.ci_config_paths, &opts.ci_config_repo);
            run(&WithCiConfig { inner: source, origin }, evidence, opts, signer)
        }
        None => run(source, evidence, opts, signer),
    }
}

/// The stages, in order.
fn run(
    source: &dyn PayloadSource,
    evidence: &dyn EvidenceProvider,
    opts: &AnalyzeOptions,
    signer: &dyn Signer,
) -> Result<PayloadAnalysis, PayloadError> {
    let target = Target::of(opts)?;
    let reader = reader::RunReader::new(evidence, target.as_of, signer);
    let mut gaps = Vec::new();
    let chain = chain::walk(source, &target, opts.max_chain, &mut gaps)?;
    let changelogs = chain::changelogs(source, &target, &chain, &mut gaps);
    let history = job_history::read(source, &target, &chain, opts, &mut gaps)?;
    let failures = failure_modes::collect(&reader, &target, &chain, &history, &mut gaps);
    let mut roots = root_causes::group(&reader, &chain.chain, &failures);
    let context = root_causes::broader_context(&reader, &chain.target, &mut roots.list, opts.systemic_context);
    let candidates = candidates::gather(source, &reader, &target, &chain, &changelogs, &mut gaps)?;
    let scores = suspects::score_all(&reader, &target, &chain, &failures, &roots, &candidates);
    let scores = suspects::reclassify_flakes(scores, &mut roots.list);
    let suspects = suspects::rank(&mut roots.list, &scores, &candidates.all, chain.chain.baseline.as_deref());
    let decision = decision::decide(&chain, &failures, &roots.list, &suspects, &candidates);
    gaps.extend(reader.gaps());
    Ok(assembly::assemble(assembly::Parts {
        target,
        source: source.describe(),
        chain,
        changelogs,
        history,
        failures,
        roots,
        context,
        candidates,
        scores,
        suspects,
        decision,
        gaps,
    }))
}

/// The release page URL of `tag` under `base`.
fn release_url(base: &str, stream: &str, tag: &str) -> String {
    format!("{}/releasestream/{stream}/release/{tag}", base.trim_end_matches('/'))
}

/// The release page URL of any tag, with the analysis' base.
pub fn page_url(a: &PayloadAnalysis, tag: &str) -> String {
    let base = a.payload.release_url.split("/releasestream/").next().unwrap_or("");
    release_url(base, &a.payload.stream_name, tag)
}
