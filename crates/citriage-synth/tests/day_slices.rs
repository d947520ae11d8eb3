//! Day slices of a world: slices covering every day once, laid over each other, are
//! the whole world byte for byte; a slice before the last day holds build folders
//! only, each of a build started on its days.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use citriage_synth::{generate, generate_days, DaySlice, SynthParams};

fn tiny() -> SynthParams {
    SynthParams::preset("tiny").expect("tiny preset exists")
}

/// Every file under `root`, by its path relative to `root`, with its bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root").to_path_buf();
                out.insert(rel, fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn slices_covering_every_day_make_up_the_whole_world() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = tiny();
    let whole = files(&{
        let w = dir.path().join("whole");
        generate(&p, &w, &mut |_| {}).expect("whole world");
        w
    });
    let days = p.days;
    let slices = [
        DaySlice { first: 1, last: 20 },
        DaySlice { first: 21, last: days - 1 },
        DaySlice::parse(&days.to_string()).unwrap(),
    ];
    let mut union: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    let mut written = 0u64;
    for (i, s) in slices.iter().enumerate() {
        let out = dir.path().join(format!("slice-{i}"));
        let summary = generate_days(&p, *s, &out, &mut |_| {}).expect("slice");
        written += summary.slice_builds.expect("a slice counts its builds");
        let mine = files(&out);
        assert_eq!(summary.files, mine.len() as u64, "slice {s}: files counted as written");
        assert_eq!(summary.bytes, mine.values().map(|b| b.len() as u64).sum::<u64>(), "slice {s}: bytes");
        if i + 1 < slices.len() {
            // Before the last day: build folders only, no world file.
            assert!(!mine.is_empty(), "slice {s} wrote nothing");
            for rel in mine.keys() {
                assert!(rel.starts_with("gcs/kubernetes-ci-logs"), "slice {s} wrote {}", rel.display());
                let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                assert!(name != "latest-build.txt", "slice {s} wrote a job's latest build");
            }
            assert!(!out.join("truth.json").exists() && !out.join("k8s-metrics").exists());
        }
        for (rel, bytes) in mine {
            assert!(union.insert(rel.clone(), bytes).is_none(), "{} written by two slices", rel.display());
        }
    }
    // The Kubernetes jobs' build folders (the payload stream's are the last slice's world files).
    let whole_builds = whole
        .keys()
        .filter(|r| r.starts_with("gcs/kubernetes-ci-logs") && r.file_name().is_some_and(|n| n == "started.json"))
        .count() as u64;
    assert_eq!(written, whole_builds, "every build folder written once");
    assert_eq!(union.len(), whole.len(), "the slices' files are the whole world's");
    for (rel, bytes) in &whole {
        assert!(union.get(rel) == Some(bytes), "{} differs between the whole world and its slices", rel.display());
    }
}

#[test]
fn a_slice_writes_only_the_builds_started_on_its_days() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = tiny();
    let s = DaySlice { first: 30, last: 31 };
    let out = dir.path().join("slice");
    generate_days(&p, s, &out, &mut |_| {}).expect("slice");
    let end = citriage_model::Day::parse(&p.end_date).expect("end date").0;
    let start_day = end - i64::from(p.days) + 1;
    let (from, to) = ((start_day + 29) * 86_400, (start_day + 31) * 86_400);
    let mut n = 0;
    for (rel, bytes) in files(&out) {
        if rel.file_name().is_some_and(|f| f == "started.json") {
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("started.json");
            let t = v["timestamp"].as_i64().expect("timestamp");
            assert!(t >= from && t < to, "{}: started at {t}, outside [{from}, {to})", rel.display());
            n += 1;
        }
    }
    assert!(n > 0, "no build in days 30..31 of the tiny world");
    // A slice beyond the world, or with the whole-world-only stories, is refused.
    let e = generate_days(&p, DaySlice { first: 1, last: p.days + 1 }, &dir.path().join("x"), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("days"), "{e}");
    let mut stories = p.clone();
    stories.suspect_stories = true;
    let e = generate_days(&stories, s, &dir.path().join("y"), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("suspect stories"), "{e}");
}
