//! End to end on the recorded test world (see `common`).

mod common;

use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, RecordedDir};
use common::*;

fn run(tag: &str, as_of: Option<&str>) -> (tempfile::TempDir, citriage_payload::PayloadAnalysis) {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let src = RecordedDir::open(&world);
    let ev = GcsMirror::new(world.join("gcs"));
    let mut opts = AnalyzeOptions::new(tag);
    opts.as_of = as_of.map(str::to_string);
    let a = analyze(&src, &ev, &opts).unwrap();
    (dir, a)
}

#[test]
fn explore() {
    let (_d, a) = run(T4, None);
    println!("{}", citriage_payload::render_json(&a));
}
