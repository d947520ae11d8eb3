//! `bench flakes`: precision and recall of the flaky tests `citriage metrics`
//! flags, against a synthetic world's truth. For each preset and seed it generates a
//! world, ingests its mirror into an in-memory store, computes the corrected figures
//! as `citriage metrics` does (7-day window ending at the newest build's day), and
//! compares the flagged tests with the planted ones.
//!
//! - A flag is right when the (job, test) is a planted flaky test of that job.
//! - A planted flaky test counts for recall when it failed in at least 3 builds of the
//!   window (from `truth/builds.jsonl`: builds whose causes include its `flake/…`
//!   pattern with a JUnit failure). Harness steps (`Up`, `Node Tests`, …) are not tests
//!   and are left out of both sides.

use crate::{json_line, put, Lines};
use citriage_analysis::metrics::corrected::{job_figures, JobFigures, Settings};
use citriage_analysis::AnalysisConfig;
use citriage_app::{Error, Result};
use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_model::time::DAY;
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Failures in the window from which a planted flaky test must be found.
pub const MIN_FAILURES: u64 = 3;

/// The figures of one world.
#[derive(Debug, Clone, Serialize)]
pub struct WorldScore {
    pub preset: String,
    pub seed: u64,
    pub jobs: usize,
    pub builds: usize,
    pub flagged: usize,
    pub true_flags: usize,
    pub positives: usize,
    pub found: usize,
    pub precision: f64,
    pub recall: f64,
    /// False flags: (job, test, signals that fired, runs, failed runs).
    pub false_flags: Vec<(String, String, Vec<String>, u64, u64)>,
    /// Missed positives: (job, test, failures in the window).
    pub missed: Vec<(String, String, u64, String)>,
}

/// Scores the flagged tests of `figs` against a world's truth folder.
pub fn score(world: &Path, figs: &[JobFigures], as_of: i64, harness: &[String]) -> Result<Scored> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::failed(format!("{}: {e}", p.display())));
    let truth: serde_json::Value = serde_json::from_slice(&read(&world.join("truth.json"))?)
        .map_err(|e| Error::failed(format!("truth.json: {e}")))?;
    let mut planted: BTreeSet<(String, String)> = BTreeSet::new();
    for f in truth["flaky_tests"].as_array().into_iter().flatten() {
        let (Some(job), Some(test)) = (f["kettle_job"].as_str(), f["test"].as_str()) else { continue };
        if !harness.iter().any(|h| h == test) {
            planted.insert((job.to_string(), test.to_string()));
        }
    }
    let from = as_of - 7 * DAY;
    let mut failures: BTreeMap<(String, String), u64> = BTreeMap::new();
    let lines = read(&world.join("truth/builds.jsonl"))?;
    for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let b: serde_json::Value =
            serde_json::from_slice(line).map_err(|e| Error::failed(format!("truth/builds.jsonl: {e}")))?;
        let started = b["started"].as_i64().unwrap_or(0);
        let finished = b["finished"].as_i64();
        if started <= from || started > as_of || finished.is_none_or(|f| f > as_of) {
            continue;
        }
        let job = b["kettle_job"].as_str().unwrap_or_default();
        let mut tests: BTreeSet<&str> = BTreeSet::new();
        for c in b["causes"].as_array().into_iter().flatten() {
            if !c["pattern"].as_str().is_some_and(|p| p.starts_with("flake/")) {
                continue;
            }
            for j in c["junit"].as_array().into_iter().flatten() {
                if let Some(t) = j["test"].as_str() {
                    tests.insert(t);
                }
            }
        }
        for t in tests {
            *failures.entry((job.to_string(), t.to_string())).or_insert(0) += 1;
        }
    }
    let positives: BTreeMap<(String, String), u64> =
        failures.into_iter().filter(|(k, n)| *n >= MIN_FAILURES && planted.contains(k)).collect();
    let mut flagged: BTreeMap<(String, String), (Vec<String>, u64, u64)> = BTreeMap::new();
    for f in figs {
        for t in f.tests.iter().filter(|t| t.is_flaky()) {
            let fired = t.signals.iter().filter(|s| s.fired).map(|s| s.kind.to_string()).collect();
            flagged.insert((f.job.clone(), t.name.clone()), (fired, t.runs, t.failed_runs));
        }
    }
    let true_flags = flagged.keys().filter(|k| planted.contains(*k)).count();
    let found = positives.keys().filter(|k| flagged.contains_key(*k)).count();
    Ok(Scored {
        flagged: flagged.len(),
        true_flags,
        positives: positives.len(),
        found,
        false_flags: flagged
            .iter()
            .filter(|(k, _)| !planted.contains(*k))
            .map(|((j, t), (s, r, fr))| (j.clone(), t.clone(), s.clone(), *r, *fr))
            .collect(),
        missed: positives
            .iter()
            .filter(|(k, _)| !flagged.contains_key(*k))
            .map(|((j, t), n)| {
                let seen = figs
                    .iter()
                    .filter(|f| &f.job == j)
                    .flat_map(|f| f.tests.iter().filter(|x| &x.name == t))
                    .map(|x| {
                        let sig: Vec<String> = x.signals.iter().map(|s| format!("{}: {}", s.kind, s.detail)).collect();
                        format!(
                            "{} of {} runs failed, {} environment failures; {}",
                            x.failed_runs,
                            x.runs,
                            x.environment_failures,
                            sig.join("; ")
                        )
                    })
                    .next()
                    .unwrap_or_else(|| "no failure of it in the window".into());
                (j.clone(), t.clone(), *n, seen)
            })
            .collect(),
    })
}

/// What [`score`] counts.
#[derive(Debug, Clone)]
pub struct Scored {
    pub flagged: usize,
    pub true_flags: usize,
    pub positives: usize,
    pub found: usize,
    pub false_flags: Vec<(String, String, Vec<String>, u64, u64)>,
    pub missed: Vec<(String, String, u64, String)>,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Generates, ingests and scores one world.
pub fn world(preset: &str, seed: u64, jobs: Option<usize>) -> Result<WorldScore> {
    let Some(mut params) = citriage_synth::SynthParams::preset(preset) else {
        return Err(Error::input(format!("unknown preset {preset:?} (tiny, demo, k8s)")));
    };
    params.seed = seed;
    params.payloads = 0;
    if let Some(j) = jobs {
        params.jobs = j.max(1);
    }
    let dir = std::env::temp_dir().join(format!("citriage-bench-flakes-{}-{preset}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = (|| {
        citriage_synth::generate(&params, &dir, &mut |_| {}).map_err(|e| Error::failed(e.to_string()))?;
        let mut store = Store::open_in_memory()?;
        let src = LocalMirror::new(dir.join("gcs/kubernetes-ci-logs"), "kubernetes-ci-logs");
        let names = discover_jobs(&src).map_err(|e| Error::failed(e.to_string()))?;
        let s = ingest_jobs(&src, &mut store, &names, &IngestOptions::default(), &|_| {})?;
        let all = store.builds(None)?;
        let as_of = citriage_app::builds::default_as_of(&all);
        drop(all);
        let harness = AnalysisConfig::default().harness_test_names;
        let settings = Settings::new(as_of, harness.clone());
        let mut figs = Vec::new();
        for job in store.build_jobs()? {
            let builds = store.job_builds_with_tests_opts(&job, Some(as_of - 8 * DAY), true)?;
            figs.extend(job_figures(&builds, &settings));
        }
        let sc = score(&dir, &figs, as_of, &harness)?;
        Ok(WorldScore {
            preset: preset.to_string(),
            seed,
            jobs: names.len(),
            builds: s.builds_stored,
            flagged: sc.flagged,
            true_flags: sc.true_flags,
            positives: sc.positives,
            found: sc.found,
            precision: ratio(sc.true_flags, sc.flagged),
            recall: ratio(sc.found, sc.positives),
            false_flags: sc.false_flags,
            missed: sc.missed,
        })
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Runs the benchmark over presets × seeds; `show` gets each world's lines as it is
/// scored (none when `json`); returns the closing lines (the JSON document when `json`).
pub fn run(
    presets: &[String],
    seeds: &[u64],
    jobs: Option<usize>,
    verbose: bool,
    json: bool,
    show: &mut dyn FnMut(Lines),
) -> Result<Lines> {
    let mut all = Vec::new();
    for p in presets {
        for &seed in seeds {
            let w = world(p, seed, jobs)?;
            if !json {
                show(world_lines(&w, verbose));
            }
            all.push(w);
        }
    }
    let flagged: usize = all.iter().map(|w| w.flagged).sum();
    let right: usize = all.iter().map(|w| w.true_flags).sum();
    let pos: usize = all.iter().map(|w| w.positives).sum();
    let found: usize = all.iter().map(|w| w.found).sum();
    let (p, r) = (ratio(right, flagged), ratio(found, pos));
    let mut out = Lines::new();
    if json {
        put!(
            out,
            "{}",
            json_line(&serde_json::json!({
                "min_failures": MIN_FAILURES, "worlds": all, "precision": p, "recall": r,
                "flagged": flagged, "true_flags": right, "positives": pos, "found": found
            }))
        );
    } else {
        put!(out, "all worlds: flagged {flagged}, right {right} → precision {p:.3}; planted {pos}, found {found} → recall {r:.3}");
    }
    Ok(out)
}

/// One world's figures (and with `verbose` every false flag and missed test).
fn world_lines(w: &WorldScore, verbose: bool) -> Lines {
    let mut out = Lines::new();
    put!(
        out,
        "{:<6} seed {:<3} {:>5} jobs {:>7} builds: flagged {:>4}, right {:>4} → precision {:.3}; planted with ≥{MIN_FAILURES} failures {:>4}, found {:>4} → recall {:.3}",
        w.preset, w.seed, w.jobs, w.builds, w.flagged, w.true_flags, w.precision, w.positives, w.found, w.recall
    );
    if verbose {
        for (j, t, s, r, fr) in &w.false_flags {
            put!(out, "    false flag  {j} :: {t}  [{}] {fr}/{r} runs failed", s.join(", "));
        }
        for (j, t, n, seen) in &w.missed {
            put!(out, "    missed      {j} :: {t}  ({n} failures): {seen}");
        }
    }
    out
}
