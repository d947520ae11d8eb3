//! OpenShift payload analyses (`payload`, `demo`, `watch`'s release streams, `act`):
//! online against a release controller, offline from a folder (recorded
//! release-controller responses or a payload-snapshot directory), every payload of a
//! synthetic world's stream; the analyses stored in the store; and `payload eval`,
//! the verdicts scored against a truth.

use crate::error::{Error, Result};
use crate::gcs_evidence::GcsEvidence;
use citriage_payload::eval::EvalReport;
use citriage_payload::{
    analyze, AnalyzeOptions, EvidenceProvider, GcsMirror, HttpConfig, HttpSource, NoEvidence, PayloadAnalysis,
    PayloadSource, RecordedDir, SnapshotDir,
};
use citriage_store::Store;
use std::path::{Path, PathBuf};

/// Analyzes a payload offline from a folder: recorded release-controller responses
/// (with `gcs/` beside them, or `mirror`) or a payload-snapshot directory.
pub fn analyze_from_dir(dir: &Path, mirror: Option<&Path>, opts: &AnalyzeOptions) -> Result<PayloadAnalysis> {
    if !dir.is_dir() {
        return Err(Error::input(format!("{}: not a folder", dir.display())));
    }
    if dir.join("release-controller").is_dir() || dir.join("api").is_dir() {
        let src = RecordedDir::open(dir);
        let ev = GcsMirror::new(mirror.map(Path::to_path_buf).unwrap_or_else(|| dir.join("gcs")));
        Ok(analyze(&src, &ev, opts)?)
    } else {
        // Whatever folder of a snapshot is named (the repository, `<tag>/`, the inner
        // `<version>/<stream>/`), the payload is found as `payload eval` finds it; the
        // analysis names the folder it read (`payload.source`).
        let located = citriage_payload::snapshot::locate(dir, &opts.tag)?;
        let snap = SnapshotDir::open(&located.root)?;
        let opts = AnalyzeOptions { tag: located.tag, ..opts.clone() };
        Ok(analyze(&snap, &snap, &opts)?)
    }
}

/// Analyzes every payload of a world's recorded release-controller streams (as
/// `payload TAG --from WORLD` would, one by one), streams and tags in name order.
/// A world without a payload stream has none.
pub fn analyze_world_payloads(world: &Path) -> Result<Vec<PayloadAnalysis>> {
    let streams_dir = world.join("release-controller/api/v1/releasestream");
    if !streams_dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut streams: Vec<String> = std::fs::read_dir(&streams_dir)
        .map_err(|e| Error::failed(format!("{}: {e}", streams_dir.display())))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    streams.sort();
    let src = RecordedDir::open(world);
    let mut tags = Vec::new();
    for stream in streams {
        let mut names: Vec<String> = src.tags(&stream)?.tags.into_iter().map(|t| t.name).collect();
        names.sort();
        tags.extend(names);
    }
    // Independent analyses, in parallel; `collect` keeps the tags' order.
    use rayon::prelude::*;
    tags.par_iter().map(|tag| analyze_from_dir(world, None, &AnalyzeOptions::new(tag))).collect()
}

/// A stored payload analysis (kind `payload`, the JSON `payload` recorded). A tag with
/// none, or one that does not read, is bad input.
pub fn stored_analysis(store: &Store, tag: &str) -> Result<PayloadAnalysis> {
    let doc = store.document("payload", tag, crate::documents::JSON)?.ok_or_else(|| {
        let mut known: Vec<String> =
            store.documents(Some("payload")).map(|v| v.into_iter().map(|d| d.key).collect()).unwrap_or_default();
        known.sort();
        known.dedup();
        Error::input(format!(
            "no stored analysis of payload {tag:?} (run `citriage payload {tag} --from DIR` or `--url URL`); stored: {}",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ))
    })?;
    serde_json::from_str(&doc.body)
        .map_err(|e| Error::input(format!("the stored analysis of {tag} does not read: {e}")))
}

/// What `payload TAG` is asked: where the payload comes from and what is written.
#[derive(Debug, Clone, Default)]
pub struct PayloadRequest {
    pub tag: String,
    /// Offline: recorded release-controller responses or a payload-snapshot directory.
    pub from: Option<PathBuf>,
    /// Online: the release controller.
    pub url: Option<String>,
    /// A local GCS mirror of the jobs' artifacts.
    pub mirror: Option<PathBuf>,
    /// Online: the jobs' artifacts from GCS over HTTP at this base URL.
    pub gcs: Option<String>,
    /// Online: where PR diffs are read from.
    pub github: Option<String>,
    /// Online: a Sippy instance for pass-rate enrichment.
    pub sippy: Option<String>,
    /// The release stream (default: derived from the tag).
    pub stream: Option<String>,
    /// Ignore everything after this time (RFC 3339).
    pub as_of: Option<String>,
    /// CI-configuration changes: a recorded JSON list or an openshift/release checkout.
    pub ci_config: Option<PathBuf>,
    /// Where the reports are written (none: no files).
    pub out: Option<PathBuf>,
}

/// `payload TAG`: the analysis, and the report files written when `out` is given.
pub fn analyze_payload(req: &PayloadRequest) -> Result<(PayloadAnalysis, Vec<PathBuf>)> {
    if let (Some(g), Some(dir)) = (&req.gcs, &req.from) {
        return Err(Error::input(format!(
            "--gcs {g} reads the jobs' artifacts online, with --url; offline, --from {} reads them from the folder (or --mirror)",
            dir.display()
        )));
    }
    let mut opts = AnalyzeOptions::new(&req.tag);
    opts.as_of = req.as_of.clone();
    if let Some(s) = &req.stream {
        opts.stream = Some(s.clone());
    }
    opts.ci_config_changes = req.ci_config.clone();
    let analysis = match (&req.from, &req.url) {
        (Some(dir), _) => analyze_from_dir(dir, req.mirror.as_deref(), &opts)?,
        (None, Some(url)) => analyze_online(url, req, &opts)?,
        (None, None) => {
            return Err(Error::input(
                "say where the payload comes from: --from DIR (recorded responses or a payload snapshot) or --url RELEASE_CONTROLLER",
            ))
        }
    };
    let files = match &req.out {
        Some(out) => citriage_payload::write_reports(&analysis, out)?,
        None => Vec::new(),
    };
    Ok((analysis, files))
}

fn analyze_online(url: &str, req: &PayloadRequest, opts: &AnalyzeOptions) -> Result<PayloadAnalysis> {
    let mut src = HttpSource::new(url, HttpConfig::default())?;
    if let Some(g) = &req.github {
        src = src.with_github_diffs(g)?;
    }
    if let Some(sp) = &req.sippy {
        src = src.with_sippy(sp)?;
    }
    let evidence: Box<dyn EvidenceProvider> = match (&req.mirror, &req.gcs) {
        (Some(m), _) => Box::new(GcsMirror::new(m.clone())),
        (None, Some(g)) => Box::new(
            GcsEvidence::new(g, HttpConfig::default().options()).map_err(|e| Error::input(format!("--gcs {e}")))?,
        ),
        (None, None) => Box::new(NoEvidence),
    };
    Ok(analyze(&src, evidence.as_ref(), opts)?)
}

/// `payload eval`: every payload of a synthetic world or a folder of payload snapshots,
/// against a truth (a file, a world's own `truth.json`, or none for snapshots).
pub fn eval(from: Option<&Path>, truth: Option<&Path>, ci_config: Option<&Path>) -> Result<EvalReport> {
    use citriage_payload::eval;
    let dir = from.ok_or_else(|| {
        Error::input("payload eval needs --from DIR (a synthetic world or a folder of payload snapshots)")
    })?;
    if !dir.is_dir() {
        return Err(Error::input(format!("{}: not a folder", dir.display())));
    }
    let truth = match truth {
        Some(p) => Some(eval::read_truth(p)?),
        None => None,
    };
    let r = if eval::is_world(dir) {
        eval::eval_world_with(dir, truth.as_deref())?
    } else {
        eval::eval_snapshots(dir, truth.as_deref(), ci_config)?
    };
    if r.payloads == 0 {
        return Err(Error::input(format!(
            "{}: no payload found (neither a synthetic world nor payload snapshots)",
            dir.display()
        )));
    }
    Ok(r)
}

/// `payload eval --cross-validate`: the analysis' tunable weights chosen over a small
/// grid, held-in figures (chosen on every payload) apart from leave-one-payload-out
/// figures (each payload with the weights chosen on the others).
pub fn cross_validate(
    from: Option<&Path>,
    truth: Option<&Path>,
    ci_config: Option<&Path>,
) -> Result<citriage_payload::crossval::CrossValidation> {
    let dir = from.ok_or_else(|| Error::input("payload eval --cross-validate needs --from DIR"))?;
    if !dir.is_dir() {
        return Err(Error::input(format!("{}: not a folder", dir.display())));
    }
    let truth = truth.ok_or_else(|| Error::input("payload eval --cross-validate needs --truth FILE"))?;
    let t = citriage_payload::eval::read_truth(truth)?;
    Ok(citriage_payload::crossval::cross_validate(dir, &t, ci_config)?)
}

/// An evaluation fails on a false revert, a contradiction or an analysis error.
pub fn eval_outcome(r: &EvalReport) -> Result<()> {
    if r.false_reverts > 0 || r.errors > 0 || r.contradictions > 0 {
        return Err(Error::failed(citriage_payload::eval::summary_line(r)));
    }
    Ok(())
}
