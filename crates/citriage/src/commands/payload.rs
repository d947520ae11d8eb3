//! `citriage payload`: analyze an OpenShift release payload (online against a release
//! controller, or offline from recorded responses or a payload-snapshot directory),
//! write its reports and record the analysis in the store; `payload eval` scores the
//! verdicts against a truth over a synthetic world or a folder of payload snapshots.

use crate::context::{print_json, Context, Failure};
use crate::gcs_evidence::GcsEvidence;
use crate::outln;
use crate::payloads::{analyze_from_dir, fail};
use citriage_payload::{analyze, AnalyzeOptions, EvidenceProvider, GcsMirror, HttpConfig, HttpSource, NoEvidence};
use clap::Args;
use std::path::PathBuf;

/// Analyze an OpenShift release payload: chain back to the last all-green payload,
/// failed blocking jobs with evidence, root causes, scored suspect PRs and the
/// action. `citriage payload eval --from DIR [--truth FILE]` scores the verdicts over a
/// synthetic world or a folder of payload snapshots.
#[derive(Args, Debug)]
pub struct PayloadArgs {
    /// The payload tag, e.g. 4.22.0-0.nightly-2026-11-20-041530, or `eval` to score the
    /// verdicts of every payload under --from against a truth.
    pub tag: String,
    /// Offline: a folder of recorded release-controller responses (with `gcs/` and
    /// `github/` beside them) or a payload-snapshot directory. For `eval`: a synthetic
    /// world, or a folder of payload snapshots (one per payload, as the snapshot
    /// repositories lay them out).
    /// Default: none (give --from or --url).
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Online: the release controller, e.g. https://amd64.ocp.releases.ci.openshift.org.
    /// Default: none (give --from or --url).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A local GCS mirror of the jobs' artifacts (JUnit, build logs) for evidence.
    /// Default: none (no artifacts read).
    #[arg(long, value_name = "DIR", conflicts_with = "gcs")]
    pub mirror: Option<PathBuf>,
    /// Online: read the jobs' artifacts (JUnit, build logs) for evidence from GCS over
    /// HTTP at this base URL, e.g. https://storage.googleapis.com (as `fetch --gcs`
    /// reads builds; that host is then contacted too). Not with --mirror or --from.
    /// Default: none (no artifacts read).
    #[arg(long, value_name = "URL")]
    pub gcs: Option<String>,
    /// Online: where PR diffs are read from (e.g. https://github.com); that host is then allowed too.
    /// Default: none (no diffs read).
    #[arg(long, value_name = "URL")]
    pub github: Option<String>,
    /// Online: a Sippy instance for pass-rate enrichment; that host is then allowed too.
    /// Default: none.
    #[arg(long, value_name = "URL")]
    pub sippy: Option<String>,
    /// The release stream (default: derived from the tag).
    #[arg(long)]
    pub stream: Option<String>,
    /// Ignore everything after this time (RFC 3339).
    /// Default: now (everything recorded).
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// CI-configuration changes: a recorded JSON list, or a local openshift/release
    /// checkout whose commits to ci-operator/step-registry and ci-operator/config since
    /// the last all-green payload become candidates (default: the source's own list, if any).
    #[arg(long, value_name = "FILE|DIR")]
    pub ci_config: Option<PathBuf>,
    /// Write payload-analysis-<tag>-summary.html, payload-analysis-<tag>.md,
    /// payload-analysis-<tag>.json and payload-results-<tag>.yaml here (default: write no files).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the whole Markdown report on stdout instead of a summary.
    #[arg(long)]
    pub markdown: bool,
    /// Do not record the analysis (JSON, HTML, Markdown) in the store's documents.
    #[arg(long)]
    pub no_store: bool,
    /// For `eval`: the truth, a TOML ([[payload]] tag, culprits = ["org/repo#n"],
    /// optional force_accept) or YAML (payloads:) file. Default: a synthetic world's own
    /// truth.json; for snapshots without a truth only crashes and contradictions are checked.
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// For `eval` with --truth: choose the analysis' tunable weights over a small grid
    /// and report held-in figures (chosen on every payload) apart from leave-one-payload-out
    /// figures (each payload with the weights chosen on the others).
    #[arg(long)]
    pub cross_validate: bool,
}

/// `payload eval`: every payload of a synthetic world or a folder of payload
/// snapshots, against a truth; fails (exit 1) on a false revert, a contradiction or
/// an analysis error.
fn eval(ctx: &Context, a: &PayloadArgs) -> Result<(), Failure> {
    use citriage_payload::eval;
    let dir = a.from.as_ref().ok_or_else(|| {
        Failure::input("payload eval needs --from DIR (a synthetic world or a folder of payload snapshots)")
    })?;
    if !dir.is_dir() {
        return Err(Failure::input(format!("{}: not a folder", dir.display())));
    }
    let truth = match &a.truth {
        Some(p) => Some(eval::read_truth(p).map_err(fail)?),
        None => None,
    };
    if a.cross_validate {
        let t = truth.as_deref().ok_or_else(|| Failure::input("payload eval --cross-validate needs --truth FILE"))?;
        let cv = citriage_payload::crossval::cross_validate(dir, t, a.ci_config.as_deref()).map_err(fail)?;
        if ctx.json() {
            print_json(&serde_json::to_value(&cv).unwrap_or_default());
        } else {
            outln!("{}", citriage_payload::crossval::render(&cv));
        }
        return Ok(());
    }
    let r = if eval::is_world(dir) {
        eval::eval_world_with(dir, truth.as_deref()).map_err(fail)?
    } else {
        eval::eval_snapshots(dir, truth.as_deref(), a.ci_config.as_deref()).map_err(fail)?
    };
    if r.payloads == 0 {
        return Err(Failure::input(format!(
            "{}: no payload found (neither a synthetic world nor payload snapshots)",
            dir.display()
        )));
    }
    if ctx.json() {
        print_json(&serde_json::to_value(&r).unwrap_or_default());
    } else {
        outln!("{}", eval::render_eval(&r));
    }
    if r.false_reverts > 0 || r.errors > 0 || r.contradictions > 0 {
        return Err(Failure::other(eval::summary_line(&r)));
    }
    Ok(())
}

/// Runs `citriage payload`.
pub fn exec(ctx: &Context, a: &PayloadArgs) -> Result<(), Failure> {
    if a.tag == "eval" {
        return eval(ctx, a);
    }
    if let (Some(g), Some(dir)) = (&a.gcs, &a.from) {
        return Err(Failure::input(format!(
            "--gcs {g} reads the jobs' artifacts online, with --url; offline, --from {} reads them from the folder (or --mirror)",
            dir.display()
        )));
    }
    let mut opts = AnalyzeOptions::new(&a.tag);
    opts.as_of = a.as_of.clone();
    if let Some(s) = &a.stream {
        opts.stream = Some(s.clone());
    }
    opts.ci_config_changes = a.ci_config.clone();
    let analysis = match (&a.from, &a.url) {
        (Some(dir), _) => analyze_from_dir(dir, a.mirror.as_deref(), &opts)?,
        (None, Some(url)) => {
            let mut src = HttpSource::new(url, HttpConfig::default()).map_err(fail)?;
            if let Some(g) = &a.github {
                src = src.with_github_diffs(g).map_err(fail)?;
            }
            if let Some(sp) = &a.sippy {
                src = src.with_sippy(sp).map_err(fail)?;
            }
            let evidence: Box<dyn EvidenceProvider> = match (&a.mirror, &a.gcs) {
                (Some(m), _) => Box::new(GcsMirror::new(m.clone())),
                (None, Some(g)) => Box::new(
                    GcsEvidence::new(g, HttpConfig::default().options())
                        .map_err(|e| Failure::input(format!("--gcs {e}")))?,
                ),
                (None, None) => Box::new(NoEvidence),
            };
            analyze(&src, evidence.as_ref(), &opts).map_err(fail)?
        }
        (None, None) => {
            return Err(Failure::input(
                "say where the payload comes from: --from DIR (recorded responses or a payload snapshot) or --url RELEASE_CONTROLLER",
            ))
        }
    };
    let files = match &a.out {
        Some(out) => citriage_payload::write_reports(&analysis, out).map_err(fail)?,
        None => Vec::new(),
    };
    let recorded = if a.no_store {
        None
    } else {
        let mut store = ctx.open_store()?;
        crate::documents::record_payload(&mut store, &analysis)?;
        Some(store.path().to_string())
    };
    if ctx.json() {
        // Exactly the recorded JSON document.
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(citriage_payload::render_json(&analysis).as_bytes());
    } else if a.markdown {
        outln!("{}", citriage_payload::render_markdown(&analysis));
    } else {
        for line in summary(&analysis, &files, recorded.as_deref()) {
            outln!("{line}");
        }
    }
    Ok(())
}

/// What `payload` prints without `--markdown`: the verdict in a few lines, and where
/// the full report is (the files written, the store).
fn summary(a: &citriage_payload::PayloadAnalysis, files: &[PathBuf], recorded: Option<&str>) -> Vec<String> {
    let tag = &a.payload.tag;
    let mut out = vec![
        format!("payload {tag} ({}): {}", a.payload.phase.as_str(), a.decision.verdict.as_str()),
        format!("  read from the {}", a.payload.source),
        format!("  {}", a.decision.summary),
        format!(
            "  blocking jobs: {} of {} failed, {} pending; informing jobs: {} of {} failed",
            a.blocking.failed, a.blocking.total, a.blocking.pending, a.informing.failed, a.informing.total
        ),
    ];
    if let Some(b) = &a.baseline {
        out.push(format!("  last payload with every blocking job green: {b}"));
    }
    for s in a.suspects.iter().take(3) {
        out.push(format!("  suspect: {}", suspect_line(s)));
    }
    if a.decision.force_accept.recommended {
        out.push("  force-accept recommended".to_string());
    }
    if files.is_empty() && recorded.is_none() {
        out.push("The full report: run again with --out DIR (files) or --markdown (on stdout).".to_string());
    }
    for f in files {
        out.push(format!("wrote {}", f.display()));
    }
    if let Some(db) = recorded {
        out.push(format!(
            "recorded as payload {tag} in {db}: `{} reports show payload {tag} --db {db}` prints the Markdown report",
            crate::context::invocation()
        ));
    }
    out
}

fn suspect_line(s: &citriage_payload::result::Suspect) -> String {
    format!("#{} {} (score {}, {}): {}", s.rank, s.candidate, s.score.total, s.action.as_str(), s.action_reason)
}
