//! A world fetched day slice by day slice (each slice generated into the same folder,
//! fetched, removed) leaves the same store as the whole world fetched at once; a slice
//! fetched again adds nothing.

mod common;

use common::{bin, run, stderr};
use serde_json::Value;
use std::path::Path;

fn synth(out: &Path, slice: Option<&str>) {
    let mut c = bin();
    c.args(["--quiet", "synth", "--preset", "tiny", "--out"]).arg(out);
    if let Some(s) = slice {
        c.args(["--day-slice", s]);
    }
    let o = c.output().expect("runs");
    assert!(o.status.success(), "synth {slice:?}: {}", stderr(&o));
}

fn fetch(db: &Path, world: &Path) -> String {
    let mirror = world.join("gcs/kubernetes-ci-logs");
    let o = run(db, &["fetch", "--all", "--mirror", mirror.to_str().expect("utf-8 path")]);
    assert!(o.status.success(), "fetch: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn info(db: &Path) -> Value {
    let o = run(db, &["store", "info", "--digest", "--format", "json"]);
    assert!(o.status.success(), "store info: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("store info json")
}

#[test]
fn fetching_slice_by_slice_equals_fetching_the_whole_world() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The same folder each time: stored problems name the file they are about.
    let world = dir.path().join("world");
    let whole = dir.path().join("whole.db");
    synth(&world, None);
    fetch(&whole, &world);
    std::fs::remove_dir_all(&world).expect("remove the world");

    let sliced = dir.path().join("sliced.db");
    let last = citriage_synth::SynthParams::preset("tiny").expect("tiny").days;
    let slices = ["1..20".to_string(), format!("21..{}", last - 1), last.to_string()];
    for s in &slices {
        synth(&world, Some(s));
        fetch(&sliced, &world);
        if s == &slices[2] {
            // The last slice again: the complete builds are skipped (a pending one is
            // read again, as any fetch does), and the store is unchanged.
            let before = info(&sliced);
            let out = fetch(&sliced, &world);
            let complete = out
                .split(", ")
                .find_map(|part| part.strip_suffix(" already complete"))
                .and_then(|n| n.parse::<u64>().ok());
            assert!(complete.is_some_and(|n| n > 0), "{out}");
            assert_eq!(info(&sliced)["digest"], before["digest"]);
        }
        std::fs::remove_dir_all(&world).expect("remove the slice");
    }
    let (a, b) = (info(&whole), info(&sliced));
    let builds = |v: &Value| {
        v["tables"].as_array().expect("tables").iter().find(|t| t["table"] == "builds").map(|t| t["rows"].clone())
    };
    assert!(builds(&a).and_then(|n| n.as_u64()).is_some_and(|n| n > 0), "{a}");
    assert_eq!(builds(&a), builds(&b));
    assert_eq!(a["table_digests"], b["table_digests"], "per-table digests differ");
    assert_eq!(a["digest"], b["digest"]);
}
