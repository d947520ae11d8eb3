//! Clustering and failure-line extraction evaluated against a synthetic world's
//! truth: every failed JUnit case the truth labels with a planted pattern is
//! clustered, and cluster purity and completeness are measured; every failed build's
//! log is run through extraction and the truth's error lines must be found.

use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
use citriage_patterns::extract::{extract_log, ExtractConfig};
use citriage_patterns::normalize::Profile;
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn clusters_and_excerpts_match_the_planted_truth() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &world, &mut |_| {}).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let src = LocalMirror::new(world.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
    let jobs = discover_jobs(&src).unwrap();
    ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    let builds = citriage_app::builds::load_builds(&mut store).unwrap();

    // Truth: (build folder, test name) → pattern, and the log's error lines per build.
    let mut label: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut log_truth: Vec<(String, BTreeSet<usize>)> = Vec::new();
    let text = std::fs::read_to_string(world.join("truth/builds.jsonl")).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        // Builds that never reached GCS (state=error) have no path.
        let Some(path) = v["path"].as_str() else { continue };
        let path = path.trim_start_matches("gcs/kubernetes-ci-logs/").to_string();
        let mut errors = BTreeSet::new();
        for c in v["causes"].as_array().into_iter().flatten() {
            let pat = c["pattern"].as_str().unwrap_or_default().to_string();
            for j in c["junit"].as_array().into_iter().flatten() {
                label.insert((path.clone(), j["test"].as_str().unwrap_or_default().to_string()), pat.clone());
            }
            if let Some(ls) = c["log"]["error_lines"].as_array() {
                errors.extend(ls.iter().filter_map(|l| l.as_u64()).map(|l| l as usize));
            }
        }
        if !errors.is_empty() {
            log_truth.push((path, errors));
        }
    }

    // Clustering of the labelled failures.
    let mut failures: Vec<(String, String, String, String)> = Vec::new();
    let mut truth: Vec<String> = Vec::new();
    for b in &builds {
        for t in &b.tests {
            if t.status != "failed" {
                continue;
            }
            if let Some(pat) = label.get(&(b.path.clone(), t.name.clone())) {
                failures.push((
                    t.name.clone(),
                    t.failure_text.clone().unwrap_or_default(),
                    b.job.clone(),
                    b.path.clone(),
                ));
                truth.push(pat.clone());
            }
        }
    }
    assert!(failures.len() > 100, "{} labelled failures", failures.len());
    let refs: Vec<FailureRef<'_>> =
        failures.iter().map(|(t, x, j, b)| FailureRef { test: t, text: x, job: j, build: b }).collect();
    let c = cluster(&refs, &ClusterConfig::new(Profile::Default));
    assert!(c.accounting.is_complete());
    let n = truth.len() as f64;
    let mut purity = 0usize;
    for cl in &c.clusters {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for &m in &cl.members {
            *counts.entry(truth[m as usize].as_str()).or_default() += 1;
        }
        purity += counts.values().max().copied().unwrap_or(0);
    }
    let mut by_pattern: BTreeMap<&str, BTreeMap<u32, usize>> = BTreeMap::new();
    for (i, &cl) in c.assignment.iter().enumerate() {
        *by_pattern.entry(truth[i].as_str()).or_default().entry(cl).or_default() += 1;
    }
    let completeness: usize = by_pattern.values().map(|m| m.values().max().copied().unwrap_or(0)).sum();
    let purity = purity as f64 / n;
    let completeness = completeness as f64 / n;
    eprintln!(
        "clustering vs truth: {} failures, {} planted patterns, {} clusters; purity {purity:.3}, completeness {completeness:.3}",
        truth.len(),
        by_pattern.len(),
        c.clusters.len()
    );
    assert!(purity >= 0.95, "purity {purity:.3}");
    assert!(completeness >= 0.5, "completeness {completeness:.3}");

    // Extraction: the truth's error lines are among the selected lines.
    // The newest passing build of the same job started before each failed build.
    let passing = |path: &str| -> Option<Vec<u8>> {
        let b = builds.iter().find(|b| b.path == path)?;
        let p = builds
            .iter()
            .filter(|o| o.job == b.job && o.result.as_deref() == Some("SUCCESS") && o.started < b.started)
            .max_by_key(|o| o.started)?;
        src_get(&src, &format!("{}/build-log.txt", p.path))
    };
    for with_pass in [false, true] {
        let (mut hit, mut total, mut predicted) = (0usize, 0usize, 0usize);
        for (path, errors) in &log_truth {
            let Some(bytes) = src_get(&src, &format!("{path}/build-log.txt")) else { continue };
            let pass = if with_pass { passing(path) } else { None };
            let x = extract_log(&bytes, pass.as_deref(), path, &ExtractConfig::default());
            let got: BTreeSet<usize> = x.lines.iter().copied().collect();
            hit += errors.intersection(&got).count();
            total += errors.len();
            predicted += got.len();
        }
        let recall = hit as f64 / total as f64;
        let precision = hit as f64 / predicted.max(1) as f64;
        eprintln!(
            "extraction vs truth ({}): {total} error lines, recall {recall:.3}, precision {precision:.3}",
            if with_pass { "with the previous passing log" } else { "no passing log" }
        );
        assert!(total > 100);
        assert!(recall >= 0.75, "recall {recall:.3}");
    }
}

fn src_get(src: &LocalMirror, path: &str) -> Option<Vec<u8>> {
    use citriage_sources::artifacts::ArtifactSource;
    src.get(path).ok().flatten().map(citriage_sources::Body::into_vec)
}
