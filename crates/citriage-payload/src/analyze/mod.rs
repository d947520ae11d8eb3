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
mod options;
mod reader;
mod root_causes;
mod suspects;

use crate::error::PayloadError;
use crate::evidence::EvidenceProvider;
use crate::result::PayloadAnalysis;
use crate::signature::{MaskingSigner, Signer};
use crate::source::ci_config::{CiConfigOrigin, WithCiConfig};
use crate::source::PayloadSource;

pub use failure_modes::{platform_of, rhcos_variant};
use options::{release_url, Target};
pub use options::{AnalyzeOptions, Tuning};

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
    let failure_texts = root_causes::texts(&failures, &roots);
    let candidates = candidates::gather(source, &reader, &target, &chain, &changelogs, &failure_texts, &mut gaps)?;
    let inputs = suspects::Inputs {
        reader: &reader,
        target: &target,
        view: &chain,
        failures: &failures,
        roots: &roots,
        candidates: &candidates,
    };
    let scores = suspects::score_all(&inputs);
    let scores = suspects::reclassify_flakes(scores, &mut roots.list);
    let baseline = chain.chain.baseline.as_deref();
    let suspects = suspects::rank(&mut roots.list, &scores, &candidates.all, baseline, opts.tuning.tie_bisect_max);
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

/// The release page URL of any tag, with the analysis' base.
pub fn page_url(a: &PayloadAnalysis, tag: &str) -> String {
    let base = a.payload.release_url.split("/releasestream/").next().unwrap_or("");
    release_url(base, &a.payload.stream_name, tag)
}
