//! `citriage payload`: analyze an OpenShift release payload (online against a release
//! controller, or offline from recorded responses or a payload-snapshot directory),
//! write its reports and record the analysis in the store; `payload eval` scores the
//! analysis over a synthetic world's payload stream.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use crate::payloads::{analyze_from_dir, fail};
use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, HttpConfig, HttpSource, NoEvidence};
use clap::Args;
use std::path::PathBuf;

/// Analyze an OpenShift release payload: chain back to the last all-green payload,
/// failed blocking jobs with evidence, root causes, scored suspect PRs and the
/// action. `citriage payload eval --from WORLD` scores it over a synthetic world.
#[derive(Args, Debug)]
pub struct PayloadArgs {
    /// The payload tag, e.g. 4.22.0-0.nightly-2026-11-20-041530 (or `eval`).
    pub tag: String,
    /// Offline: a folder of recorded release-controller responses (with `gcs/` and
    /// `github/` beside them) or a payload-snapshot directory.
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Online: the release controller, e.g. https://amd64.ocp.releases.ci.openshift.org.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A local GCS mirror of the jobs' artifacts (JUnit, build logs) for evidence.
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// Online: where PR diffs are read from (e.g. https://github.com); that host is then allowed too.
    #[arg(long, value_name = "URL")]
    pub github: Option<String>,
    /// Online: a Sippy instance for pass-rate enrichment; that host is then allowed too.
    #[arg(long, value_name = "URL")]
    pub sippy: Option<String>,
    /// The release stream (default: derived from the tag).
    #[arg(long)]
    pub stream: Option<String>,
    /// Ignore everything after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// CI-configuration changes: a recorded JSON list or an openshift/release checkout.
    #[arg(long, value_name = "FILE|DIR")]
    pub ci_config: Option<PathBuf>,
    /// Write payload-<tag>.html, .md, .json and payload-results-<tag>.yaml here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not record the analysis (JSON, HTML, Markdown) in the store's documents.
    #[arg(long)]
    pub no_store: bool,
}

/// Runs `citriage payload`.
pub fn exec(ctx: &Context, a: &PayloadArgs) -> Result<(), Failure> {
    if a.tag == "eval" {
        let world =
            a.from.as_ref().ok_or_else(|| Failure::input("payload eval needs --from WORLD (a synthetic world)"))?;
        let r = citriage_payload::eval::eval_world(world).map_err(fail)?;
        if ctx.json() {
            print_json(&serde_json::to_value(&r).unwrap_or_default());
        } else {
            outln!("{}", citriage_payload::eval::render_eval(&r));
        }
        return Ok(());
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
            match &a.mirror {
                Some(m) => analyze(&src, &GcsMirror::new(m.clone()), &opts).map_err(fail)?,
                None => analyze(&src, &NoEvidence, &opts).map_err(fail)?,
            }
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
    } else {
        outln!("{}", citriage_payload::render_markdown(&analysis));
        if !ctx.quiet {
            for f in files {
                eprintln!("wrote {}", f.display());
            }
            if let Some(db) = recorded {
                eprintln!("recorded as payload {} in {db}", analysis.payload.tag);
            }
        }
    }
    Ok(())
}
