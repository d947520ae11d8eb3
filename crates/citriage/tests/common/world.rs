//! A synthetic CI world (the `tiny` preset) and its store, built through the
//! `citriage` binary as a user would: builds fetched from the world's mirror, its
//! dashboards imported and triaged, every payload of its stream analysed, its failures
//! clustered. Built once per test binary.

#![allow(dead_code)]

use crate::common::{bin, run, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

pub struct World {
    _dir: tempfile::TempDir,
    /// The generated tree (`truth.json`, the mirror, the payload stream).
    pub root: PathBuf,
    pub db: PathBuf,
    /// `truth.json`.
    pub truth: Value,
    /// The payload tags analysed (every tag of the stream), oldest first.
    pub tags: Vec<String>,
    /// The folder the triage reports were written to, per dataset.
    pub triage_out: PathBuf,
}

/// `citriage --db DB --quiet ARGS...`, which must succeed.
pub fn ok(db: &Path, args: &[&str]) -> Output {
    let o = run(db, args);
    assert!(o.status.success(), "citriage {args:?}: {}", stderr(&o));
    o
}

pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

pub fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("world");
        let p = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
        citriage_synth::generate(&p, &root, &mut |_| {}).expect("generate");
        let truth: Value =
            serde_json::from_slice(&std::fs::read(root.join("truth.json")).expect("truth.json")).expect("truth");
        let db = dir.path().join("world.db");
        let mirror = root.join("gcs/kubernetes-ci-logs");
        let prowjobs = root.join("prow/prowjobs.js");
        ok(&db, &["fetch", "--mirror", s(&mirror), "--all", "--prowjobs", s(&prowjobs)]);
        let triage_out = dir.path().join("triage");
        for ds in ["failures", "flakes"] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("k8s-metrics").join(ds))
                .expect("dashboards")
                .map(|e| e.expect("entry").path())
                .collect();
            files.sort();
            for f in files {
                ok(&db, &["import", s(&f), "--dataset", ds]);
            }
            let out = triage_out.join(ds);
            ok(&db, &["triage", "--dataset", ds, "--out", s(&out)]);
        }
        let tags: Vec<String> = truth["payloads"]["tags"]
            .as_array()
            .expect("payload tags in the truth")
            .iter()
            .map(|t| t["tag"].as_str().expect("tag").to_string())
            .collect();
        for tag in &tags {
            let o = bin()
                .arg("--db")
                .arg(&db)
                .args(["--quiet", "payload", tag, "--from", s(&root)])
                .output()
                .expect("runs");
            // A payload whose verdict is a rejection exits 0 too; only bad input fails.
            assert!(o.status.code() != Some(2), "payload {tag}: {}", stderr(&o));
        }
        ok(&db, &["cluster", "--out", s(&dir.path().join("clusters"))]);
        World { _dir: dir, root, db, truth, tags, triage_out }
    })
}

/// The truth's tags whose planted cause is a change — a culprit PR, or a CI
/// configuration change — with the failing runs' evidence present: (tag, `org/repo#n`
/// of the change, its truth: `repo`, `pr`, `diff_file`, `diff_line` and, for a culprit,
/// `symbol`).
pub fn culprit_tags(w: &World) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for t in w.truth["payloads"]["tags"].as_array().expect("tags") {
        if t["evidence_missing"] == true {
            continue;
        }
        let c = match t["cause"].as_str() {
            Some("culprit-pr") => &t["culprit"],
            Some("ci-config") => &t["ci_config_change"],
            _ => continue,
        };
        if c.is_null() {
            continue;
        }
        let who = format!("{}#{}", c["repo"].as_str().expect("repo"), c["pr"].as_u64().expect("pr"));
        out.push((t["tag"].as_str().expect("tag").to_string(), who, c.clone()));
    }
    out
}

/// The truth's tags whose failing runs lost their evidence.
pub fn evidence_missing_tags(w: &World) -> Vec<String> {
    w.truth["payloads"]["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter(|t| t["evidence_missing"] == true)
        .map(|t| t["tag"].as_str().expect("tag").to_string())
        .collect()
}
