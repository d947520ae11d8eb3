//! Payload analyses for `payload` and `demo`: offline from a folder (recorded
//! release-controller responses or a payload-snapshot directory), and every payload of
//! a synthetic world's stream.

use crate::context::Failure;
use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, PayloadAnalysis, PayloadSource, RecordedDir, SnapshotDir};
use std::path::Path;

/// A payload error as a command failure (bad input or not).
pub fn fail(e: citriage_payload::PayloadError) -> Failure {
    if e.is_bad_input() {
        Failure::input(e.to_string())
    } else {
        Failure::other(e.to_string())
    }
}

/// Analyzes a payload offline from a folder: recorded release-controller responses
/// (with `gcs/` beside them, or `mirror`) or a payload-snapshot directory.
pub fn analyze_from_dir(dir: &Path, mirror: Option<&Path>, opts: &AnalyzeOptions) -> Result<PayloadAnalysis, Failure> {
    if !dir.is_dir() {
        return Err(Failure::input(format!("{}: not a folder", dir.display())));
    }
    if dir.join("release-controller").is_dir() || dir.join("api").is_dir() {
        let src = RecordedDir::open(dir);
        let ev = GcsMirror::new(mirror.map(Path::to_path_buf).unwrap_or_else(|| dir.join("gcs")));
        analyze(&src, &ev, opts).map_err(fail)
    } else {
        // Whatever folder of a snapshot is named (the repository, `<tag>/`, the inner
        // `<version>/<stream>/`), the payload is found as `payload eval` finds it; the
        // analysis names the folder it read (`payload.source`).
        let located = citriage_payload::snapshot::locate(dir, &opts.tag).map_err(fail)?;
        let snap = SnapshotDir::open(&located.root).map_err(fail)?;
        let opts = AnalyzeOptions { tag: located.tag, ..opts.clone() };
        analyze(&snap, &snap, &opts).map_err(fail)
    }
}

/// Analyzes every payload of a world's recorded release-controller streams (as
/// `payload TAG --from WORLD` would, one by one), streams and tags in name order.
/// A world without a payload stream has none.
pub fn analyze_world_payloads(world: &Path) -> Result<Vec<PayloadAnalysis>, Failure> {
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
