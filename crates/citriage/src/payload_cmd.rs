//! The `payload` command: analyze an OpenShift release payload (online against a
//! release controller, or offline from recorded responses or a payload-snapshot
//! directory), write the HTML, Markdown, JSON and results-YAML reports and record the
//! analysis in the store's documents; and `payload eval` over a synthetic world's
//! payload stream.

use crate::cli::{open_store, print_json, Cli, Format, PayloadArgs};
use crate::outln;
use crate::pipeline::Failure;
use citriage_payload::{
    analyze, AnalyzeOptions, GcsMirror, HttpConfig, HttpSource, NoEvidence, PayloadAnalysis, PayloadSource,
    RecordedDir, SnapshotDir,
};
use std::path::Path;

fn fail(e: citriage_payload::PayloadError) -> Failure {
    if e.is_bad_input() {
        Failure::input(e.to_string())
    } else {
        Failure::other(e.to_string())
    }
}

pub(crate) fn payload(cli: &Cli, a: &PayloadArgs) -> Result<(), Failure> {
    if a.tag == "eval" {
        return eval(cli, a);
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
        let mut store = open_store(cli)?;
        crate::documents::record_payload(&mut store, &analysis)?;
        Some(store.path().to_string())
    };
    if cli.format == Format::Json {
        // Exactly the recorded JSON document.
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(citriage_payload::render_json(&analysis).as_bytes());
    } else {
        outln!("{}", citriage_payload::render_markdown(&analysis));
        if !cli.quiet {
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

/// `payload eval`: every payload of a synthetic world or a folder of payload
/// snapshots, against a truth; exits 1 on a false revert, a contradiction or
/// an analysis error.
fn eval(cli: &Cli, a: &PayloadArgs) -> Result<(), Failure> {
    use citriage_payload::eval;
    let dir = a
        .from
        .as_ref()
        .ok_or_else(|| Failure::input("payload eval needs --from DIR (a synthetic world or a folder of payload snapshots)"))?;
    if !dir.is_dir() {
        return Err(Failure::input(format!("{}: not a folder", dir.display())));
    }
    let truth = match &a.truth {
        Some(p) => Some(eval::read_truth(p).map_err(fail)?),
        None => None,
    };
    let r = if eval::is_world(dir) {
        eval::eval_world_with(dir, truth.as_deref()).map_err(fail)?
    } else {
        eval::eval_snapshots(dir, truth.as_deref(), a.ci_config.as_deref()).map_err(fail)?
    };
    if r.payloads == 0 {
        return Err(Failure::input(format!("{}: no payload found (neither a synthetic world nor payload snapshots)", dir.display())));
    }
    if cli.format == Format::Json {
        print_json(&serde_json::to_value(&r).unwrap_or_default());
    } else {
        outln!("{}", eval::render_eval(&r));
    }
    if r.false_reverts > 0 || r.errors > 0 || r.contradictions > 0 {
        return Err(Failure::other(eval::summary_line(&r)));
    }
    Ok(())
}

/// Analyzes a payload offline from a folder: recorded release-controller responses
/// (with `gcs/` beside them, or `mirror`) or a payload-snapshot directory.
pub(crate) fn analyze_from_dir(
    dir: &Path,
    mirror: Option<&Path>,
    opts: &AnalyzeOptions,
) -> Result<PayloadAnalysis, Failure> {
    if !dir.is_dir() {
        return Err(Failure::input(format!("{}: not a folder", dir.display())));
    }
    if dir.join("release-controller").is_dir() || dir.join("api").is_dir() {
        let src = RecordedDir::open(dir);
        let ev = GcsMirror::new(mirror.map(Path::to_path_buf).unwrap_or_else(|| dir.join("gcs")));
        analyze(&src, &ev, opts).map_err(fail)
    } else {
        let snap = SnapshotDir::open(dir).map_err(fail)?;
        analyze(&snap, &snap, opts).map_err(fail)
    }
}

/// Analyzes every payload of a world's recorded release-controller streams (as
/// `payload TAG --from WORLD` would, one by one), streams and tags in name order.
/// A world without a payload stream has none.
pub(crate) fn analyze_world_payloads(world: &Path) -> Result<Vec<PayloadAnalysis>, Failure> {
    let streams_dir = world.join("release-controller/api/v1/releasestream");
    if !streams_dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut streams: Vec<String> = std::fs::read_dir(&streams_dir)
        .map_err(|e| Failure::other(format!("{}: {e}", streams_dir.display())))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    streams.sort();
    let src = RecordedDir::open(world);
    let mut tags = Vec::new();
    for stream in streams {
        let mut names: Vec<String> = src.tags(&stream).map_err(fail)?.tags.into_iter().map(|t| t.name).collect();
        names.sort();
        tags.extend(names);
    }
    // Independent analyses, in parallel; `collect` keeps the tags' order.
    use rayon::prelude::*;
    tags.par_iter().map(|tag| analyze_from_dir(world, None, &AnalyzeOptions::new(tag))).collect()
}
