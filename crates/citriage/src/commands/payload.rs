//! `citriage payload`: analyze an OpenShift release payload (online against a release
//! controller, or offline from recorded responses or a payload-snapshot directory),
//! write its reports and record the analysis in the store; `payload eval` scores the
//! verdicts against a truth over a synthetic world or a folder of payload snapshots.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::payload::PayloadRequest;
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

/// Runs `citriage payload`.
pub fn exec(ctx: &Context, a: &PayloadArgs) -> Result<(), Failure> {
    if a.tag == "eval" && a.cross_validate {
        let cv = citriage_app::payload::cross_validate(a.from.as_deref(), a.truth.as_deref(), a.ci_config.as_deref())?;
        if ctx.json() {
            print_json(&serde_json::to_value(&cv).unwrap_or_default());
        } else {
            outln!("{}", citriage_payload::crossval::render(&cv));
        }
        return Ok(());
    }
    if a.tag == "eval" {
        let r = citriage_app::payload::eval(a.from.as_deref(), a.truth.as_deref(), a.ci_config.as_deref())?;
        if ctx.json() {
            print_json(&serde_json::to_value(&r).unwrap_or_default());
        } else {
            outln!("{}", citriage_payload::eval::render_eval(&r));
        }
        return Ok(citriage_app::payload::eval_outcome(&r)?);
    }
    let req = PayloadRequest {
        tag: a.tag.clone(),
        from: a.from.clone(),
        url: a.url.clone(),
        mirror: a.mirror.clone(),
        gcs: a.gcs.clone(),
        github: a.github.clone(),
        sippy: a.sippy.clone(),
        stream: a.stream.clone(),
        as_of: a.as_of.clone(),
        ci_config: a.ci_config.clone(),
        out: a.out.clone(),
    };
    let (analysis, files) = citriage_app::payload::analyze_payload(&req)?;
    let recorded = if a.no_store {
        None
    } else {
        let mut store = ctx.open_store()?;
        citriage_app::documents::record_payload(&mut store, &analysis)?;
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
